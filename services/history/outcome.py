"""A player's outcome of one hand (pure): did they win, and what it paid them.

Computed once per (player, hand) when history stores the hand, in the same transaction,
so the stats are one indexed aggregate over rows that are idempotent like the hands.
Voided hands get rows too ("my hands" lists them), flagged so the stats skip them.
"""

from __future__ import annotations

from typing import Any

from kalaro.proto.engine import HandRecord


def winning_seats(result: Any) -> frozenset[int]:
    """The seats a record's ``result`` says won: Tongits and Ka Wu Xing list ``winners``
    (ties; one discard paying several), Mahjong names one ``winner`` (null: a draw)."""
    if not isinstance(result, dict):
        return frozenset()
    winners = result.get("winners")
    if isinstance(winners, (list, tuple)):  # a decoded record has lists; a fresh one tuples
        return frozenset(w for w in winners if isinstance(w, int))
    winner = result.get("winner")
    return frozenset((winner,)) if isinstance(winner, int) else frozenset()


def outcome(record: HandRecord, user_id: str) -> tuple[bool, int]:
    """(won, net credits) of ``user_id``'s seat; a player in two seats gets the first
    (as "My hands" shows it). Practice hands pay nothing: net 0, ``won`` still counts.
    A voided hand (``result`` null) was won by nobody and paid nothing."""
    seat = next(i for i, p in enumerate(record.players) if p.user_id == user_id)
    if record.voided:
        return False, 0
    net = record.payments[seat] if seat < len(record.payments) else 0
    return seat in winning_seats(record.result), int(net)
