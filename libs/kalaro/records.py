"""A decided hand's record as the engines keep it in Redis and history reads it there.

The engine service writes each finished hand's record under :func:`record_key` and
enters it in every human player's :func:`index_key` (a sorted set scored by when the
hand finished); the history service stores it in SQL, then cuts that copy to an hour
and takes it out of the indexes. Both services need the layout, and both list a
player's hands with :func:`summary`, so it lives here rather than in either service.
"""

from __future__ import annotations

from kalaro.proto.engine import HandRecord, HandSummary

#: How long the engines keep a finished hand's record in Redis (history cuts it to an
#: hour once stored); history also derives an old record's finish time from it.
RECORD_TTL_MS = 7 * 24 * 3600 * 1000


def record_key(namespace: str, hand_id: str) -> str:
    """The Redis key of a hand's record (JSON of :class:`HandRecord`)."""
    return f"{namespace}handrecord:{hand_id}"


def index_key(namespace: str, game: str, user_id: str) -> str:
    """The Redis index of a player's hands of ``game``: hand id -> finished epoch ms."""
    return f"{namespace}handsof:{game}:{user_id}"


def summary(record: HandRecord, user_id: str, finished_ms: int) -> HandSummary:
    """``record`` as one line of ``user_id``'s hand history (they played it). A voided
    hand has no result: its ending is "voided", nobody won or paid."""
    seat = next(i for i, p in enumerate(record.players) if p.user_id == user_id)
    result = record.result if isinstance(record.result, dict) else {}
    winners = result.get("winners")
    won = seat in winners if isinstance(winners, list) else result.get("winner") == seat
    return HandSummary(
        hand_id=record.hand_id,
        table_id=record.table_id,
        game=record.game,
        finished_ms=finished_ms,
        seat=seat,
        players=tuple(p.display_name for p in record.players),
        bet=record.bet,
        credits=record.payments[seat] if seat < len(record.payments) else 0,
        ending="voided" if record.voided else str(result.get("ending", "")),
        won=won and not record.voided,
    )


__all__ = ["RECORD_TTL_MS", "index_key", "record_key", "summary"]
