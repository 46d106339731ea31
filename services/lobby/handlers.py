"""The lobby's handlers, one shape: ``async def handle(cmd, lobby: Lobby) -> reply``,
where :class:`~services.lobby.tables.Lobby` is the deps (the table store and writer,
the dealer, stakes, practice tables, chat limits, the bus, the clock). Each loads a
table, applies a pure rule, stores it, publishes it; they are bound to their endpoints
in :mod:`services.lobby.bootstrap`.

The rules are pure functions over :class:`~services.lobby.records.TableRecord`
(:mod:`~services.lobby.rules`, :mod:`~services.lobby.hands`, :mod:`~services.lobby.access`,
:mod:`~services.lobby.presence`, :mod:`~services.lobby.setup`), unit-tested without
servers. The record lives in Redis behind the compare-and-set port
:class:`~services.lobby.store.TableStore`; :class:`~services.lobby.writer.TableWriter`
writes through it and publishes. The deal sequence, with its calls to the wallet and
engine, is :class:`~services.lobby.dealing.Dealer`; practice tables and bots are
:class:`~services.lobby.practice.Practice`. Only ``info`` is ever returned or published,
so a secret (invite code, server seed, entropy) cannot leak by accident.

Private means private: a private table is listed only to its host, seated players and
admins, and shown (:func:`get_table`, which the gateway also asks before letting
a socket watch) to anyone else only with its invite code; without it the answer is the
``not_found`` of a table that does not exist. Only its players, host and admins chat
there; spectators who came with the code read. A player the host removes is listed in
``info.removed`` and may not sit there again until the host allows them back. Ending a
table is its ``ended`` status in the usual table frame.

A Sit with a bet must be covered by the caller's balance together with every other table
where they sit with one (:mod:`~services.lobby.stakes`, the amounts from
:func:`~services.lobby.money.seat_hold`).
"""

from __future__ import annotations

import logging
import secrets
from functools import partial
from typing import TYPE_CHECKING

from kalaro.bus import ServiceError
from kalaro.bus.codec import encode
from kalaro.proto import errors as codes
from kalaro.proto import subjects
from kalaro.proto.lobby import (
    NO_SUCH_TABLE,
    AddBot,
    AllowBack,
    CancelTable,
    ChatSent,
    CreatePractice,
    CreateTable,
    Deal,
    EndTable,
    GetInviteCode,
    GetTable,
    HandFinished,
    InviteCode,
    Leave,
    LeaveAfterHand,
    ListTables,
    OpenRankedTable,
    PresenceNoted,
    RankedTableOpened,
    RemovePlayer,
    ReportPresence,
    SendChat,
    SetChat,
    SetMinRating,
    SetReady,
    Sit,
    TableCreated,
    TableInfo,
    TableList,
)
from kalaro.proto.ws import ChatPosted
from services.lobby import access, hands, ranked, rules, setup
from services.lobby.chat import mask
from services.lobby.records import (
    CLOSED,
    MAX_CHAT,
    MAX_ENTROPY,
    MAX_LIST,
)

if TYPE_CHECKING:  # the deps; it binds deal and cancel_table for its practice tables
    from services.lobby.tables import Lobby

log = logging.getLogger("kalaro.lobby")


# --- tables -------------------------------------------------------------------------


async def create_table(req: CreateTable, lobby: Lobby) -> TableCreated:
    invite_code = secrets.token_urlsafe(8) if req.private else None
    rec = setup.new_table(req, created_at=lobby.writer.now_iso(), invite_code=invite_code)
    rec = await lobby.writer.insert(rec, listed=True)
    return TableCreated(table=rec.info, invite_code=invite_code)


async def list_tables(req: ListTables, lobby: Lobby) -> TableList:
    """Open tables, newest first, optionally one game's or those with a free seat."""
    if not 1 <= req.limit <= MAX_LIST:
        raise ServiceError(codes.BAD_REQUEST, f"limit must be between 1 and {MAX_LIST}")
    found: list[TableInfo] = []
    start = 0
    while len(found) < req.limit:
        chunk = await lobby.store.listed(start)
        if not chunk:
            break
        start += len(chunk)
        gone = []
        for table_id, rec in chunk:
            if rec is None or rec.info.status in CLOSED:
                gone.append(table_id)
            elif access.listed(rec.info, req.caller, req.game, req.open_seats_only):
                found.append(rec.info)
                if len(found) == req.limit:
                    break
        if gone:
            # Index entries whose table expired or closed without its zrem landing.
            await lobby.store.unlist(*gone)
            start -= len(gone)
    return TableList(tables=tuple(found))


async def get_table(req: GetTable, lobby: Lobby) -> TableInfo:
    _, rec = await lobby.store.load(req.table_id)
    if req.caller is not None and not access.may_watch(
        rec, req.caller, req.invite_code, lobby.clock()
    ):
        # Exactly what an unknown table answers: a private table's existence is
        # not told to someone without its code.
        raise ServiceError(codes.NOT_FOUND, NO_SUCH_TABLE)
    return rec.info


# --- seats --------------------------------------------------------------------------


async def sit(req: Sit, lobby: Lobby) -> TableInfo:
    caller = req.caller
    now = lobby.clock()
    # Check what needs no I/O first, so a wrong code or a full table never costs a
    # wallet round trip; the same checks run again inside the compare-and-set.
    _, rec = await lobby.store.load(req.table_id)
    rules.sit_seat(rec, caller, req.seat, req.invite_code, now)
    access.require_verified_for_bets(rec.info, caller)
    await lobby.ranked.check_sit(req, rec.info)  # frozen? a minimum rating? (issue 34)
    change = partial(rules.sit, caller=caller, seat=req.seat, invite_code=req.invite_code, now=now)
    # Sitting with a bet: only if the balance covers this table on top of every other
    # table where the caller sits with one (see services.lobby.stakes).
    sat = await lobby.stakes.sit(
        caller, rec.info, lambda: lobby.writer.update(req.table_id, change)
    )
    return sat.info


async def leave(req: Leave, lobby: Lobby) -> TableInfo:
    return (await lobby.writer.update(req.table_id, partial(rules.leave, caller=req.caller))).info


async def leave_after_hand(req: LeaveAfterHand, lobby: Lobby) -> TableInfo:
    change = partial(rules.leave_after_hand, caller=req.caller, leave=req.leave)
    return (await lobby.writer.update(req.table_id, change)).info


async def set_ready(req: SetReady, lobby: Lobby) -> TableInfo:
    if len(req.entropy) > MAX_ENTROPY:
        raise ServiceError(codes.BAD_REQUEST, f"entropy must be at most {MAX_ENTROPY} characters")
    if not req.entropy.isprintable():
        raise ServiceError(codes.BAD_REQUEST, "entropy must be printable text")
    change = partial(rules.set_ready, caller=req.caller, ready=req.ready, entropy=req.entropy)
    info = (await lobby.writer.update(req.table_id, change)).info
    if info.practice and req.ready:
        return await lobby.practice.deal_if_ready(info)
    if info.ranked:  # a ranked table deals by itself too (issue 34)
        return await lobby.ranked.set_ready(req, info)
    return info


async def remove_player(req: RemovePlayer, lobby: Lobby) -> TableInfo:
    change = partial(rules.remove_player, caller=req.caller, seat=req.seat)
    return (await lobby.writer.update(req.table_id, change)).info


async def allow_back(req: AllowBack, lobby: Lobby) -> TableInfo:
    """The host lets a removed player sit at this table again."""
    change = partial(rules.allow_back, caller=req.caller, user_id=req.user_id)
    return (await lobby.writer.update(req.table_id, change)).info


async def invite_code(req: GetInviteCode, lobby: Lobby) -> InviteCode:
    """A private table's invite code, for its host (or an admin) while it is open:
    the host shares the link again whenever they like; nobody else ever sees it."""
    _, rec = await lobby.store.load(req.table_id)
    return access.invite_code(rec, req.caller, lobby.clock())


# --- hands --------------------------------------------------------------------------


async def deal(req: Deal, lobby: Lobby) -> TableInfo:
    """Claim the table, hold every player's max loss, start the hand, mark it playing."""
    return await lobby.dealer.deal(req)


async def hand_finished(event: HandFinished, lobby: Lobby) -> TableInfo | None:
    """The engine finished (or voided) a hand: back to waiting for the next one
    (idempotent: a redelivered or stale event changes nothing)."""
    change = partial(hands.finish_hand, event=event, fresh_seed=rules.new_server_seed())
    try:
        written = await lobby.writer.write(event.table_id, change)
    except ServiceError as exc:
        if exc.code == codes.NOT_FOUND:
            log.warning("hand %s finished at unknown table %s", event.hand_id, event.table_id)
            return None
        raise
    if written.wrote and event.away_seats:
        away = sorted(event.away_seats)
        log.info("table %s: seats %s were away and sit out", event.table_id, away)
    if written.wrote and written.after.info.ranked:
        await lobby.ranked.after_hand(written.after.info)  # its ready clock (issue 34)
    return written.after.info


# --- closing ------------------------------------------------------------------------


async def end_table(req: EndTable, lobby: Lobby) -> TableInfo:
    return (
        await lobby.writer.update(req.table_id, partial(rules.end_table, caller=req.caller))
    ).info


async def cancel_table(req: CancelTable, lobby: Lobby) -> TableInfo:
    """Close now; a hand in progress is cancelled at the engine, which voids it
    (unless its last move came first: then it is settled).

    Repeating it on a cancelled table repeats the engine's cancel (idempotent). If
    the engine does not answer, the table is closed all the same and the cancel is
    retried in the background (:meth:`~services.lobby.dealing.Dealer.retry_cancels`).
    """
    # Close the table first so no new Deal can start while the hand is voided.
    rec = await lobby.writer.update(req.table_id, partial(rules.cancel_table, caller=req.caller))
    hand_id = rec.cancelled_hand_id
    if hand_id is not None:
        await lobby.dealer.stop_hand(rec.info.game, rec.info.table_id, hand_id)
    return rec.info


# --- chat ---------------------------------------------------------------------------


async def set_chat(req: SetChat, lobby: Lobby) -> TableInfo:
    change = partial(rules.set_chat, caller=req.caller, enabled=req.enabled)
    return (await lobby.writer.update(req.table_id, change)).info


async def send_chat(req: SendChat, lobby: Lobby) -> ChatSent:
    text = req.text.strip()
    if not 1 <= len(text) <= MAX_CHAT:
        raise ServiceError(codes.BAD_REQUEST, f"a chat message is 1 to {MAX_CHAT} characters")
    _, rec = await lobby.store.load(req.table_id)
    access.may_chat(rec.info, req.caller)
    wait_ms = await lobby.chat.wait_ms(req.table_id, req.caller.user_id, lobby.clock())
    if wait_ms:
        raise ServiceError(
            codes.THROTTLED,
            f"slow down: at most {lobby.chat.limit} messages every "
            f"{lobby.chat.window_seconds:g} seconds",
            retry_after=-(-wait_ms // 1000),
        )
    masked = mask(text)
    posted = ChatPosted(
        table_id=req.table_id,
        user_id=req.caller.user_id,
        display_name=req.caller.display_name,
        text=masked,
        at=lobby.writer.now_iso(),
    )
    await lobby.nc.publish(subjects.table_events(req.table_id), encode(posted))
    return ChatSent(text=masked)


async def report_presence(req: ReportPresence, lobby: Lobby) -> PresenceNoted:
    return await lobby.writer.report_presence(req)


async def create_practice(req: CreatePractice, lobby: Lobby) -> TableCreated:
    return await lobby.practice.create_practice(req)


async def add_bot(req: AddBot, lobby: Lobby) -> TableInfo:
    return await lobby.practice.add_bot(req)


# --- ranked play (issue 34; services/lobby/ranked.py) ---------------------------------


async def open_ranked(req: OpenRankedTable, lobby: Lobby) -> RankedTableOpened:
    """The ranked service's match: a ranked table with its players seated."""
    return await lobby.ranked.open(req)


async def set_min_rating(req: SetMinRating, lobby: Lobby) -> TableInfo:
    change = partial(ranked.set_min_rating, caller=req.caller, min_rating=req.min_rating)
    return (await lobby.writer.update(req.table_id, change)).info
