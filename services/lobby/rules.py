"""The lobby's table rules: pure functions over :class:`TableRecord`.

Each takes a record (and what the request says) and returns the next record, built with
:func:`msgspec.structs.replace` so no field is ever dropped, or the same object when
nothing changes; or it refuses with a :class:`~kalaro.bus.ServiceError`. No I/O and no
clock: the time and any fresh seed come in as arguments, so each rule is tested alone
(``tests/unit/lobby``).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Literal

from msgspec.structs import replace

from kalaro.errors import ServiceError
from kalaro.proto import errors as codes
from kalaro.proto.lobby import NO_SUCH_TABLE, Caller, RemovedPlayer, SeatInfo, TableInfo
from services.lobby.records import (
    BOT_ROLE,
    BOT_SEAT_HOLD_SECONDS,
    CLOSED,
    IN_HAND,
    TableRecord,
)


class DealAborted(Exception):
    """The table moved on (cancelled, or rescued) while a deal was in flight."""


def new_server_seed() -> tuple[str, str]:
    """A fresh server seed (hex) and its commitment: sha256 of the seed's bytes, hex."""
    seed = secrets.token_bytes(32)
    return seed.hex(), hashlib.sha256(seed).hexdigest()


def _error(code: str, message: str) -> ServiceError:
    return ServiceError(code, message)


# --- who is who -------------------------------------------------------------------------


def seat_of(info: TableInfo, user_id: str) -> int | None:
    for index, seat in enumerate(info.seats):
        if seat is not None and seat.user_id == user_id:
            return index
    return None


def require_seat(info: TableInfo, caller: Caller) -> int:
    seat = seat_of(info, caller.user_id)
    if seat is None:
        raise _error(codes.CONFLICT, "you are not sitting at this table")
    return seat


def require_open(info: TableInfo) -> None:
    if info.status in CLOSED:
        raise _error(codes.CONFLICT, f"this table has been {info.status}")


def require_host(info: TableInfo, caller: Caller) -> None:
    # Admins may run any table too: they moderate, and a host can vanish mid-hand.
    if caller.user_id != info.host_id and "admin" not in caller.roles:
        raise _error(codes.FORBIDDEN, "only the host of this table can do that")


def require_between_hands(info: TableInfo, what: str) -> None:
    require_open(info)
    if info.status in IN_HAND:
        raise _error(codes.CONFLICT, f"hand in progress — {what}")


def kept_for_bots(rec: TableRecord, now: float) -> set[int]:
    """Empty seats a bot is on its way to (the hold has not run out)."""
    return {
        seat
        for seat, since in rec.bot_seats
        if now - since < BOT_SEAT_HOLD_SECONDS and rec.info.seats[seat] is None
    }


def names(info: TableInfo, seats: list[int] | tuple[int, ...]) -> str:
    return ", ".join(s.display_name for i in seats if (s := info.seats[i]) is not None)


def with_seat(rec: TableRecord, index: int, seat: SeatInfo | None) -> TableRecord:
    seats = list(rec.info.seats)
    seats[index] = seat
    entropy = list(rec.entropy)
    if seat is None or not seat.ready:
        entropy[index] = ""  # entropy belongs to one Ready, never carried over
    return replace(rec, info=replace(rec.info, seats=tuple(seats)), entropy=tuple(entropy))


def _in_range(info: TableInfo, seat: int) -> None:
    if not 0 <= seat < len(info.seats):
        raise _error(codes.BAD_REQUEST, f"seat must be between 0 and {len(info.seats) - 1}")


# --- seats ------------------------------------------------------------------------------


def _bot_seat(rec: TableRecord, seat: int | None, now: float) -> int:
    """The seat a bot may take, or why not: bots never play for credits."""
    info = rec.info
    if info.bet > 0 or info.max_loss > 0:
        raise _error(
            codes.FORBIDDEN, "bots never play for credits: they sit only at zero-bet tables"
        )
    kept = kept_for_bots(rec, now)
    if seat is None and kept:
        seat = min(kept)
    if seat is None or seat not in kept:
        raise _error(codes.FORBIDDEN, "a bot sits only in a seat the host kept for a bot")
    return seat


def sit_seat(
    rec: TableRecord, caller: Caller, seat: int | None, invite_code: str | None, now: float
) -> int:
    """The seat ``caller`` may take (``seat`` None: the first free one), or why not."""
    info = rec.info
    already = seat_of(info, caller.user_id)
    if info.private and already is None and BOT_ROLE not in caller.roles:
        # Before anything that tells the table exists (closed, full, removed...): without
        # its code the answer is the one an unknown table gets (the store's), word for word.
        given = (invite_code or "").encode()
        host = caller.user_id == info.host_id
        if not host and not hmac.compare_digest(given, (rec.invite_code or "").encode()):
            raise _error(codes.NOT_FOUND, NO_SUCH_TABLE)
    require_open(info)
    if already is not None:
        raise _error(codes.CONFLICT, f"you are already sitting in seat {already}")
    if info.ranked:  # issue 34: the queue seats a ranked table, bots never
        raise _error(
            codes.FORBIDDEN,
            "a ranked table seats only the players its queue matched: join the ranked "
            "queue to play ranked",
        )
    if BOT_ROLE in caller.roles:
        return _bot_seat(rec, seat, now)
    if info.practice and caller.user_id != info.host_id:
        raise _error(codes.FORBIDDEN, "a practice table is for its host and bots only")
    if any(r.user_id == caller.user_id for r in info.removed):
        raise _error(
            codes.REMOVED_FROM_TABLE,
            "the host removed you from this table; you can sit here again only if "
            "the host allows you back",
        )
    kept = kept_for_bots(rec, now)
    if seat is None:
        free = [i for i, s in enumerate(info.seats) if s is None and i not in kept]
        if not free:
            raise _error(codes.CONFLICT, "the table is full")
        return free[0]
    _in_range(info, seat)
    if info.seats[seat] is not None:
        raise _error(codes.CONFLICT, f"seat {seat} is taken")
    if seat in kept:
        raise _error(codes.CONFLICT, f"seat {seat} is kept for a bot")
    return seat


def sit(
    rec: TableRecord, caller: Caller, seat: int | None, invite_code: str | None, now: float
) -> TableRecord:
    index = sit_seat(rec, caller, seat, invite_code, now)
    is_bot = BOT_ROLE in caller.roles
    taken = with_seat(
        rec,
        index,
        SeatInfo(user_id=caller.user_id, display_name=caller.display_name, is_bot=is_bot),
    )
    if not is_bot:
        return taken
    return replace(taken, bot_seats=tuple(k for k in rec.bot_seats if k[0] != index))


def leave(rec: TableRecord, caller: Caller) -> TableRecord:
    seat = require_seat(rec.info, caller)
    require_between_hands(rec.info, "use leave after this hand")
    gone = with_seat(rec, seat, None)
    if rec.info.ranked:
        # Its players were matched together and nobody else may sit: it ends.
        return replace(gone, info=replace(gone.info, status="ended", ready_by=None))
    if rec.info.practice and caller.user_id == rec.info.host_id:
        # A practice table is its host's: without them the bots would play alone.
        return replace(gone, info=replace(gone.info, status="ended"))
    return gone


def leave_after_hand(rec: TableRecord, caller: Caller, leave: bool) -> TableRecord:
    require_open(rec.info)
    index = require_seat(rec.info, caller)
    seat = rec.info.seats[index]
    assert seat is not None
    if seat.leave_after_hand == leave:
        return rec
    return with_seat(rec, index, replace(seat, leave_after_hand=leave))


def set_ready(rec: TableRecord, caller: Caller, ready: bool, entropy: str) -> TableRecord:
    index = require_seat(rec.info, caller)
    require_between_hands(rec.info, "tap Ready for the next one when it ends")
    seat = rec.info.seats[index]
    assert seat is not None
    changed = with_seat(rec, index, replace(seat, ready=ready))
    if ready:
        given = list(changed.entropy)
        given[index] = entropy
        changed = replace(changed, entropy=tuple(given))
    return changed


def all_ready(info: TableInfo) -> bool:
    """Every seat taken and ready, between hands: a practice table deals itself."""
    return info.status == "waiting" and all(s is not None and s.ready for s in info.seats)


def remove_player(rec: TableRecord, caller: Caller, seat: int) -> TableRecord:
    info = rec.info
    require_host(info, caller)
    require_between_hands(info, "remove the player after this hand")
    _in_range(info, seat)
    gone = info.seats[seat]
    if gone is None:
        raise _error(codes.CONFLICT, f"seat {seat} is already empty")
    emptied = with_seat(rec, seat, None)
    if gone.is_bot or gone.user_id == info.host_id:
        # Bot accounts are shared by every table; a host cannot bar themselves.
        return emptied
    barred = (
        *(r for r in info.removed if r.user_id != gone.user_id),
        RemovedPlayer(user_id=gone.user_id, display_name=gone.display_name),
    )
    return replace(emptied, info=replace(emptied.info, removed=barred))


def allow_back(rec: TableRecord, caller: Caller, user_id: str) -> TableRecord:
    info = rec.info
    require_host(info, caller)
    require_open(info)
    if all(r.user_id != user_id for r in info.removed):
        # The table is there and so may the player be: it is their state that is wrong.
        raise _error(
            codes.NOT_REMOVED,
            "that player was not removed from this table (or was already allowed back)",
        )
    kept = tuple(r for r in info.removed if r.user_id != user_id)
    return replace(rec, info=replace(info, removed=kept))


def keep_bot_seat(rec: TableRecord, caller: Caller, seat: int | None, now: float) -> TableRecord:
    """Keep a seat for a bot the host asked for (zero-bet tables only): the seat kept is
    the last of ``bot_seats`` (``seat`` None: the first free one)."""
    info = rec.info
    require_host(info, caller)
    require_open(info)
    if info.ranked:
        raise _error(codes.FORBIDDEN, "a ranked table never has bots")
    if info.bet > 0:
        raise _error(
            codes.FORBIDDEN, "bots never play for credits: only zero-bet tables can have bots"
        )
    kept = kept_for_bots(rec, now)
    if seat is None:
        free = [i for i, s in enumerate(info.seats) if s is None and i not in kept]
        if not free:
            raise _error(codes.CONFLICT, "there is no free seat for a bot")
        seat = free[0]
    else:
        _in_range(info, seat)
        if info.seats[seat] is not None:
            raise _error(codes.CONFLICT, f"seat {seat} is taken")
        if seat in kept:
            raise _error(codes.CONFLICT, f"a bot is already on its way to seat {seat}")
    held = tuple(k for k in rec.bot_seats if k[0] in kept)
    return replace(rec, bot_seats=(*held, (seat, now)))


def release_bot_seat(rec: TableRecord, seat: int) -> TableRecord:
    """A bot that could not be seated: the seat is no longer kept for it."""
    if all(k[0] != seat for k in rec.bot_seats):
        return rec
    return replace(rec, bot_seats=tuple(k for k in rec.bot_seats if k[0] != seat))


# --- closing and settings ---------------------------------------------------------------


def end_table(rec: TableRecord, caller: Caller) -> TableRecord:
    require_host(rec.info, caller)
    require_between_hands(rec.info, "end the table after it, or cancel the table to void the hand")
    return replace(rec, info=replace(rec.info, status="ended"))


def cancel_table(rec: TableRecord, caller: Caller) -> TableRecord:
    """Close now; the hand in progress (if any) is kept as ``cancelled_hand_id``."""
    info = rec.info
    require_host(info, caller)
    if info.status == "ended":
        raise _error(codes.CONFLICT, "this table has already ended")
    if info.status == "cancelled":
        return rec
    return replace(
        rec, info=replace(info, status="cancelled", hand_id=None), cancelled_hand_id=info.hand_id
    )


def cancelled(rec: TableRecord) -> TableRecord:
    if rec.info.status in CLOSED:
        return rec
    return replace(rec, info=replace(rec.info, status="cancelled"))


def ended_if_waiting(rec: TableRecord) -> TableRecord:
    # Only between hands: if the host came back and dealt meanwhile, leave it be.
    if rec.info.status != "waiting":
        return rec
    return replace(rec, info=replace(rec.info, status="ended"))


def set_chat(rec: TableRecord, caller: Caller, enabled: bool) -> TableRecord:
    require_host(rec.info, caller)
    require_open(rec.info)
    if rec.info.chat_enabled == enabled:
        return rec
    return replace(rec, info=replace(rec.info, chat_enabled=enabled))


IdleVerdict = Literal["forget", "wait", "moving", "end", "cancel"]


def practice_idle(
    info: TableInfo | None, hand_version: int | None, seen: int | None
) -> IdleVerdict:
    """What the sweep does with a practice table idle for long enough.

    ``info`` None: the table is gone. ``hand_version`` is its hand's version at the
    engine (None: no hand there), and ``seen`` the version the previous look saw.
    ``forget``: closed or gone, drop it from the sweep; ``wait``: mid-deal, look again;
    ``moving``: the hand moved since the last look, so it is not idle; ``end``: end it
    (between hands); ``cancel``: cancel its idle hand.
    """
    if info is None or info.status in CLOSED:
        return "forget"
    if info.status == "dealing":
        return "wait"
    if info.status == "playing":
        if hand_version is not None and seen != hand_version:
            return "moving"
        return "cancel"
    return "end"
