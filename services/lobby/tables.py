"""The lobby's handlers: load a table, apply a rule, store it, publish it.

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
admins, and shown (:meth:`Lobby.get_table`, which the gateway also asks before letting
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
import time
from collections.abc import Callable
from functools import partial

from nats.aio.client import Client as NATS

from kalaro.bus import ServiceError
from kalaro.bus.codec import encode
from kalaro.bus.redislink import RedisLink
from kalaro.proto import errors as codes
from kalaro.proto import subjects
from kalaro.proto.lobby import (
    NO_SUCH_TABLE,
    AllowBack,
    CancelTable,
    ChatSent,
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
    RemovePlayer,
    SendChat,
    SetChat,
    SetReady,
    Sit,
    TableCreated,
    TableInfo,
    TableList,
)
from kalaro.proto.ws import ChatPosted
from services.lobby import access, hands, rules, setup
from services.lobby.chat import ChatLimiter, mask
from services.lobby.dealing import Dealer
from services.lobby.practice import Practice
from services.lobby.records import (
    CLOSED,
    MAX_CHAT,
    MAX_ENTROPY,
    MAX_LIST,
    PRACTICE_IDLE_SECONDS,
    PRACTICE_TABLES_PER_PLAYER,
    PRESENCE_FORGET_PERIODS,
    PRESENCE_GRACE_SECONDS,
    PRESENCE_REFRESH_SECONDS,
    TableRecord,
)
from services.lobby.stakes import Stakes
from services.lobby.store import TableStore
from services.lobby.writer import TableWriter

__all__ = ["PRESENCE_FORGET_PERIODS", "Lobby", "TableRecord"]

log = logging.getLogger("kalaro.lobby")


class Lobby:
    """The lobby's operations over its dependencies (NATS for peers, Redis for tables).

    ``prefix`` namespaces every Redis key (tests give each test its own); ``clock``
    returns epoch seconds and is injected so chat limits and timestamps can be tested.
    """

    def __init__(
        self,
        nc: NATS,
        redis: RedisLink,
        *,
        prefix: str = "lobby:",
        clock: Callable[[], float] = time.time,
        wallet_timeout: float = 5.0,
        engine_timeout: float = 10.0,
        bots_timeout: float = 8.0,
        chat_limit: int = 5,
        chat_window_seconds: float = 10.0,
        practice_idle_seconds: float = PRACTICE_IDLE_SECONDS,
        practice_per_player: int = PRACTICE_TABLES_PER_PLAYER,
        presence_grace_seconds: float = PRESENCE_GRACE_SECONDS,
        presence_refresh_seconds: float = PRESENCE_REFRESH_SECONDS,
    ) -> None:
        self._nc = nc
        self._store = TableStore(redis, prefix)
        self._clock = clock
        self._writer = TableWriter(
            nc,
            self._store,
            clock=clock,
            presence_grace_seconds=presence_grace_seconds,
            presence_forget_seconds=PRESENCE_FORGET_PERIODS * presence_refresh_seconds,
        )
        self._chat = ChatLimiter(
            redis, f"{prefix}chat:", limit=chat_limit, window_seconds=chat_window_seconds
        )
        self._dealer = Dealer(
            nc,
            self._store,
            self._writer.update,
            clock=clock,
            wallet_timeout=wallet_timeout,
            engine_timeout=engine_timeout,
        )
        self._stakes = Stakes(nc, self._store, prefix, clock=clock, wallet_timeout=wallet_timeout)
        self._practice = Practice(
            nc,
            self._store,
            self._writer,
            deal=self.deal,
            cancel=self.cancel_table,
            idle_seconds=practice_idle_seconds,
            per_player=practice_per_player,
            engine_timeout=engine_timeout,
            bots_timeout=bots_timeout,
        )
        self.stale_deal_seconds = self._dealer.stale_deal_seconds
        self.practice_idle_seconds = practice_idle_seconds
        self.presence_grace_seconds = self._writer.presence_grace_seconds
        self.presence_forget_seconds = self._writer.presence_forget_seconds
        # The other parts' endpoints, served as the lobby's own.
        self.report_presence = self._writer.report_presence
        self.sweep_presence = self._writer.sweep_presence
        self.create_practice = self._practice.create_practice
        self.add_bot = self._practice.add_bot
        self.end_idle_practice = self._practice.end_idle_practice
        self.retry_cancels = self._dealer.retry_cancels
        self.rescue_stale_deals = self._dealer.rescue_stale_deals

    async def _load(self, table_id: str) -> tuple[int, TableRecord]:
        return await self._store.load(table_id)

    async def _update(
        self, table_id: str, change: Callable[[TableRecord], TableRecord]
    ) -> TableRecord:
        return await self._writer.update(table_id, change)

    # --- tables -------------------------------------------------------------------------

    async def create_table(self, req: CreateTable) -> TableCreated:
        invite_code = secrets.token_urlsafe(8) if req.private else None
        rec = setup.new_table(req, created_at=self._writer.now_iso(), invite_code=invite_code)
        rec = await self._writer.insert(rec, listed=True)
        return TableCreated(table=rec.info, invite_code=invite_code)

    async def list_tables(self, req: ListTables) -> TableList:
        """Open tables, newest first, optionally one game's or those with a free seat."""
        if not 1 <= req.limit <= MAX_LIST:
            raise ServiceError(codes.BAD_REQUEST, f"limit must be between 1 and {MAX_LIST}")
        found: list[TableInfo] = []
        start = 0
        while len(found) < req.limit:
            chunk = await self._store.listed(start)
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
                await self._store.unlist(*gone)
                start -= len(gone)
        return TableList(tables=tuple(found))

    async def get_table(self, req: GetTable) -> TableInfo:
        _, rec = await self._load(req.table_id)
        if req.caller is not None and not access.may_watch(
            rec, req.caller, req.invite_code, self._clock()
        ):
            # Exactly what an unknown table answers: a private table's existence is
            # not told to someone without its code.
            raise ServiceError(codes.NOT_FOUND, NO_SUCH_TABLE)
        return rec.info

    # --- seats --------------------------------------------------------------------------

    async def sit(self, req: Sit) -> TableInfo:
        caller = req.caller
        now = self._clock()
        # Check what needs no I/O first, so a wrong code or a full table never costs a
        # wallet round trip; the same checks run again inside the compare-and-set.
        _, rec = await self._load(req.table_id)
        rules.sit_seat(rec, caller, req.seat, req.invite_code, now)
        access.require_verified_for_bets(rec.info, caller)
        change = partial(
            rules.sit, caller=caller, seat=req.seat, invite_code=req.invite_code, now=now
        )
        # Sitting with a bet: only if the balance covers this table on top of every other
        # table where the caller sits with one (see services.lobby.stakes).
        sat = await self._stakes.sit(caller, rec.info, lambda: self._update(req.table_id, change))
        return sat.info

    async def leave(self, req: Leave) -> TableInfo:
        return (await self._update(req.table_id, partial(rules.leave, caller=req.caller))).info

    async def leave_after_hand(self, req: LeaveAfterHand) -> TableInfo:
        change = partial(rules.leave_after_hand, caller=req.caller, leave=req.leave)
        return (await self._update(req.table_id, change)).info

    async def set_ready(self, req: SetReady) -> TableInfo:
        if len(req.entropy) > MAX_ENTROPY:
            raise ServiceError(
                codes.BAD_REQUEST, f"entropy must be at most {MAX_ENTROPY} characters"
            )
        if not req.entropy.isprintable():
            raise ServiceError(codes.BAD_REQUEST, "entropy must be printable text")
        change = partial(rules.set_ready, caller=req.caller, ready=req.ready, entropy=req.entropy)
        info = (await self._update(req.table_id, change)).info
        if info.practice and req.ready:
            return await self._practice.deal_if_ready(info)
        return info

    async def remove_player(self, req: RemovePlayer) -> TableInfo:
        change = partial(rules.remove_player, caller=req.caller, seat=req.seat)
        return (await self._update(req.table_id, change)).info

    async def allow_back(self, req: AllowBack) -> TableInfo:
        """The host lets a removed player sit at this table again."""
        change = partial(rules.allow_back, caller=req.caller, user_id=req.user_id)
        return (await self._update(req.table_id, change)).info

    async def invite_code(self, req: GetInviteCode) -> InviteCode:
        """A private table's invite code, for its host (or an admin) while it is open:
        the host shares the link again whenever they like; nobody else ever sees it."""
        _, rec = await self._load(req.table_id)
        return access.invite_code(rec, req.caller, self._clock())

    # --- hands --------------------------------------------------------------------------

    async def deal(self, req: Deal) -> TableInfo:
        """Claim the table, hold every player's max loss, start the hand, mark it playing."""
        return await self._dealer.deal(req)

    async def hand_finished(self, event: HandFinished) -> TableInfo | None:
        """The engine finished (or voided) a hand: back to waiting for the next one
        (idempotent: a redelivered or stale event changes nothing)."""
        change = partial(hands.finish_hand, event=event, fresh_seed=rules.new_server_seed())
        try:
            written = await self._writer.write(event.table_id, change)
        except ServiceError as exc:
            if exc.code == codes.NOT_FOUND:
                log.warning("hand %s finished at unknown table %s", event.hand_id, event.table_id)
                return None
            raise
        if written.wrote and event.away_seats:
            away = sorted(event.away_seats)
            log.info("table %s: seats %s were away and sit out", event.table_id, away)
        return written.after.info

    # --- closing ------------------------------------------------------------------------

    async def end_table(self, req: EndTable) -> TableInfo:
        return (await self._update(req.table_id, partial(rules.end_table, caller=req.caller))).info

    async def cancel_table(self, req: CancelTable) -> TableInfo:
        """Close now; a hand in progress is cancelled at the engine, which voids it
        (unless its last move came first: then it is settled).

        Repeating it on a cancelled table repeats the engine's cancel (idempotent). If
        the engine does not answer, the table is closed all the same and the cancel is
        retried in the background (:meth:`retry_cancels`).
        """
        # Close the table first so no new Deal can start while the hand is voided.
        rec = await self._update(req.table_id, partial(rules.cancel_table, caller=req.caller))
        hand_id = rec.cancelled_hand_id
        if hand_id is not None:
            await self._dealer.stop_hand(rec.info.game, rec.info.table_id, hand_id)
        return rec.info

    # --- chat ---------------------------------------------------------------------------

    async def set_chat(self, req: SetChat) -> TableInfo:
        change = partial(rules.set_chat, caller=req.caller, enabled=req.enabled)
        return (await self._update(req.table_id, change)).info

    async def send_chat(self, req: SendChat) -> ChatSent:
        text = req.text.strip()
        if not 1 <= len(text) <= MAX_CHAT:
            raise ServiceError(codes.BAD_REQUEST, f"a chat message is 1 to {MAX_CHAT} characters")
        _, rec = await self._load(req.table_id)
        access.may_chat(rec.info, req.caller)
        wait_ms = await self._chat.wait_ms(req.table_id, req.caller.user_id, self._clock())
        if wait_ms:
            raise ServiceError(
                codes.THROTTLED,
                f"slow down: at most {self._chat.limit} messages every "
                f"{self._chat.window_seconds:g} seconds",
                retry_after=-(-wait_ms // 1000),
            )
        masked = mask(text)
        posted = ChatPosted(
            table_id=req.table_id,
            user_id=req.caller.user_id,
            display_name=req.caller.display_name,
            text=masked,
            at=self._writer.now_iso(),
        )
        await self._nc.publish(subjects.table_events(req.table_id), encode(posted))
        return ChatSent(text=masked)
