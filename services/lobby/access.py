"""Who may see a table, find it listed, chat there or fetch its invite code (pure).

Private means private: a private table is listed only to its host, seated players and
admins, and shown to anyone else only with its invite code; without it the answer is
the ``not_found`` of a table that does not exist.
"""

from __future__ import annotations

import hmac

from kalaro.bus import ServiceError
from kalaro.proto import errors as codes
from kalaro.proto.lobby import NO_SUCH_TABLE, Caller, InviteCode, TableInfo
from services.lobby.records import BOT_ROLE, TableRecord
from services.lobby.rules import kept_for_bots, require_host, require_open, seat_of


def member(info: TableInfo, caller: Caller) -> bool:
    """The table's host, a player seated there, or an admin."""
    return (
        caller.user_id == info.host_id
        or "admin" in caller.roles
        or seat_of(info, caller.user_id) is not None
    )


def code_matches(rec: TableRecord, given: str | None) -> bool:
    if not given or rec.invite_code is None:
        return False
    return hmac.compare_digest(given.encode(), rec.invite_code.encode())


def may_watch(rec: TableRecord, caller: Caller, invite_code: str | None, now: float) -> bool:
    """Whether ``caller`` may see (get, watch) the table: anyone for a public one; for a
    private one its members, a bot on its way to a seat kept for one, or the code."""
    info = rec.info
    if not info.private or member(info, caller):
        return True
    if BOT_ROLE in caller.roles and kept_for_bots(rec, now):
        return True
    return code_matches(rec, invite_code)


def listed(info: TableInfo, caller: Caller | None, game: str | None, open_seats_only: bool) -> bool:
    """Whether an open table shows in ``caller``'s listing (of ``game``'s tables)."""
    if info.practice:  # never indexed; this only guards against an old index entry
        return False
    if info.private and (caller is None or not member(info, caller)):
        return False  # private means private: its invitees open it by its link
    if game is not None and info.game != game:
        return False
    return not (open_seats_only and None not in info.seats)


def invite_code(rec: TableRecord, caller: Caller, now: float) -> InviteCode:
    """A private table's invite code, for its host (or an admin) while it is open."""
    info = rec.info
    if not may_watch(rec, caller, None, now):
        raise ServiceError(codes.NOT_FOUND, NO_SUCH_TABLE)  # as get_table
    require_host(info, caller)
    require_open(info)
    if rec.invite_code is None:
        raise ServiceError(codes.CONFLICT, "this table is public: it has no invite code")
    return InviteCode(table_id=info.table_id, invite_code=rec.invite_code)


def may_chat(info: TableInfo, caller: Caller) -> None:
    """Refuses unless ``caller`` may post in the table's chat now."""
    require_open(info)
    if not info.chat_enabled:
        raise ServiceError(codes.FORBIDDEN, "chat is off at this table")
    if info.private and not member(info, caller):
        # Spectators who came with the invite code read the chat but do not post.
        raise ServiceError(codes.FORBIDDEN, "at a private table only its players and host may chat")


def require_verified_for_bets(info: TableInfo, caller: Caller) -> None:
    """An account whose email is not verified sits at no table with a bet (its welcome
    grant is paid when it is verified); free tables are open to it."""
    if info.bet > 0 and not caller.email_verified:
        raise ServiceError(
            codes.EMAIL_UNVERIFIED,
            "confirm your email address to sit at a table with a bet: open the link we "
            "mailed you, or ask for a new one in the lobby",
        )
