"""The deal and hand rules: pure functions over :class:`TableRecord`.

A deal claims the table (``waiting`` → ``dealing`` with a new hand id, so two racing
Deals cannot both deal), then marks it ``playing`` once the engine started the hand;
a failed deal reverts it. A finished hand brings it back to ``waiting`` with a fresh
seed. Fresh seeds come in as arguments, so every rule here is deterministic.
"""

from __future__ import annotations

from collections.abc import Iterable

from msgspec.structs import replace

from kalaro.bus import ServiceError
from kalaro.proto import errors as codes
from kalaro.proto.lobby import Caller, HandFinished, SeatInfo
from services.lobby.records import IN_HAND, TableRecord
from services.lobby.rules import (
    DealAborted,
    names,
    require_host,
    require_open,
    with_seat,
)


def claim_deal(rec: TableRecord, caller: Caller, hand_id: str, now: float) -> TableRecord:
    """The table claimed for a deal of ``hand_id``, or why it cannot deal yet."""
    info = rec.info
    require_host(info, caller)
    require_open(info)
    if info.status in IN_HAND:
        raise ServiceError(codes.CONFLICT, "a hand is already in progress at this table")
    if info.bet > 0 and any(s is not None and s.is_bot for s in info.seats):
        raise ServiceError(codes.FORBIDDEN, "bots never play for credits")  # sit refuses
    empty = [i for i, s in enumerate(info.seats) if s is None]
    if empty:
        raise ServiceError(
            codes.CONFLICT,
            f"cannot deal yet: {len(empty)} empty seat(s) ({', '.join(map(str, empty))})",
        )
    not_ready = [i for i, s in enumerate(info.seats) if s is not None and not s.ready]
    if not_ready:
        raise ServiceError(codes.CONFLICT, f"cannot deal yet: not ready: {names(info, not_ready)}")
    # (A ranked table's ready clock stops while the hand is dealt and played.)
    dealing = replace(info, status="dealing", hand_id=hand_id, ready_by=None)
    return replace(rec, info=dealing, dealing_since=now)


def start_playing(rec: TableRecord, hand_id: str) -> TableRecord:
    """The engine started ``hand_id``: the table plays it (raises :class:`DealAborted`
    if the table was cancelled or rescued meanwhile)."""
    if rec.info.hand_id == hand_id and rec.info.status == "dealing":
        return replace(rec, info=replace(rec.info, status="playing", hand_no=rec.info.hand_no + 1))
    if rec.last_hand_id == hand_id:
        return rec  # the engine already finished it (a very fast void)
    raise DealAborted(hand_id)


def revert_deal(
    rec: TableRecord,
    hand_id: str,
    *,
    unready: set[int] | None,
    fresh_seed: tuple[str, str] | None = None,
) -> TableRecord:
    """Back to ``waiting`` after a failed deal; ``unready`` None: everyone un-readies.
    ``fresh_seed`` (seed, commitment) replaces a seed that went out in a StartHand."""
    if rec.info.hand_id != hand_id or rec.info.status != "dealing":
        return rec  # cancelled or rescued meanwhile: theirs to handle
    changed = replace(rec, info=replace(rec.info, status="waiting", hand_id=None))
    for index, seat in enumerate(rec.info.seats):
        if seat is not None and (unready is None or index in unready):
            changed = with_seat(changed, index, replace(seat, ready=False))
    if fresh_seed is not None:
        seed, commitment = fresh_seed
        changed = replace(
            changed, server_seed=seed, info=replace(changed.info, seed_commitment=commitment)
        )
    return changed


def stale_deal(rec: TableRecord, now: float, stale_after: float) -> str | None:
    """The hand id of a deal left half-done long enough ago to rescue; None if none."""
    info = rec.info
    if info.status != "dealing" or info.hand_id is None:
        return None
    if now - rec.dealing_since < stale_after:
        return None  # still in flight somewhere; the claim refuses a Deal meanwhile
    return info.hand_id


def short_seats(rec: TableRecord, user_ids: Iterable[str]) -> tuple[int, ...]:
    """The seats of the players the wallet named as short of credits."""
    short = set(user_ids)
    return tuple(i for i, s in enumerate(rec.info.seats) if s is not None and s.user_id in short)


def finish_hand(rec: TableRecord, event: HandFinished, fresh_seed: tuple[str, str]) -> TableRecord:
    """The engine finished (or voided) a hand: back to waiting for the next one.

    Only the hand the table is playing is applied (the same record otherwise), so a
    redelivered or stale event changes nothing. Seats that asked to leave after the
    hand, and seats the engine marked away, are vacated; the rest un-ready.
    """
    info = rec.info
    if info.hand_id != event.hand_id or info.status not in IN_HAND:
        return rec
    away = set(event.away_seats)
    seats: list[SeatInfo | None] = [
        None if s is None or s.leave_after_hand or i in away else replace(s, ready=False)
        for i, s in enumerate(info.seats)
    ]
    seed, commitment = fresh_seed
    # A ranked table plays only with all its matched players: one gone, it ends.
    short = info.ranked and any(s is None for s in seats)
    return replace(
        rec,
        info=replace(
            info,
            status="ended" if short else "waiting",
            hand_id=None,
            seats=tuple(seats),
            dealer=event.next_dealer,
            seed_commitment=commitment,
        ),
        server_seed=seed,
        entropy=("",) * len(seats),
        last_hand_id=event.hand_id,
        dealing_since=0.0,
    )
