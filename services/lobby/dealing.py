"""The deal sequence (flows 3 and 6 in DESIGN.md) and the cancels that undo it.

Claim the table by compare-and-set (``waiting`` → ``dealing`` with a new hand id, so two
racing Deals cannot both deal), hold every player's maximum loss at the wallet (all or
nothing), ask the engine to start the hand, then mark it ``playing``. Every failure on
the way undoes what was done (release the holds, back to ``waiting``). The decisions are
the pure rules of :mod:`services.lobby.hands`; this module does the calls between them.

**One outcome per hand.** Once a StartHand may have reached the engine, the lobby never
voids the hand at the wallet itself: it asks the engine to cancel it, and the engine's
compare-and-set on its hand slot decides between that cancel and the last move. The
engine then sends exactly one of settlement or void to the wallet, under the hand id.
(Voiding here too once let a host's cancel void a hand that had just finished: its
winners were never paid.) The lobby voids directly only holds whose StartHand was never
sent or was refused. A cancel the engine did not answer is kept in a set and retried by
:meth:`Dealer.retry_cancels` until the engine decides; meanwhile the holds stay (the
wallet's reconciler settles or releases any hold left behind for good).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable

from nats.aio.client import Client as NATS

from kalaro.bus import RemoteError, ServiceError, request
from kalaro.proto import endpoints
from kalaro.proto import errors as codes
from kalaro.proto.engine import CancelHand, Player, StartHand
from kalaro.proto.lobby import Deal, TableInfo
from kalaro.proto.wallet import (
    GetBalance,
    HoldRequest,
    PlaceHolds,
    VoidHand,
)
from services.lobby import hands, money
from services.lobby.records import TableRecord
from services.lobby.rules import DealAborted, names, new_server_seed, require_host
from services.lobby.store import TableStore

log = logging.getLogger("kalaro.lobby")

Update = Callable[[str, Callable[[TableRecord], TableRecord]], Awaitable[TableRecord]]


class Dealer:
    """Deals hands at tables and stops them; ``update`` is the lobby's write-and-publish."""

    def __init__(
        self,
        nc: NATS,
        store: TableStore,
        update: Update,
        *,
        clock: Callable[[], float],
        wallet_timeout: float,
        engine_timeout: float,
    ) -> None:
        self._nc = nc
        self._store = store
        self._update = update
        self._clock = clock
        self.wallet_timeout = wallet_timeout
        self.engine_timeout = engine_timeout
        # A deal still "dealing" after both peers' timeouts (plus margin) was interrupted
        # (a lobby replica died mid-deal): the sweep (rescue_stale_deals), or the host's
        # next Deal if that comes first, voids it and sets the table waiting again.
        self.stale_deal_seconds = 2 * (wallet_timeout + engine_timeout) + 5

    async def deal(self, req: Deal) -> TableInfo:
        """Claim the table, hold every player's max loss, start the hand, mark it playing."""
        await self._rescue_stale_deal(req)
        hand_id = f"h_{uuid.uuid4().hex}"
        now = self._clock()
        # Noted before the claim: if this replica dies anywhere after it, the sweep
        # finds the deal (a note without a claim is dropped by the sweep).
        in_flight = f"{req.table_id}|{hand_id}"
        await self._store.redis.zadd(self._store.deals, {in_flight: now})
        try:
            return await self._deal(req, hand_id, now)
        finally:
            await self._store.redis.zrem(self._store.deals, in_flight)

    async def _deal(self, req: Deal, hand_id: str, now: float) -> TableInfo:
        rec = await self._update(
            req.table_id, lambda rec: hands.claim_deal(rec, req.caller, hand_id, now)
        )
        info = rec.info
        seated = [s for s in info.seats if s is not None]
        if money.seat_hold(info) > 0:
            await self._place_holds(rec, hand_id)
        start = StartHand(
            table_id=info.table_id,
            hand_id=hand_id,
            options=info.options,
            bet=info.bet,
            players=tuple(
                Player(user_id=s.user_id, display_name=s.display_name, is_bot=s.is_bot)
                for s in seated
            ),
            server_seed=rec.server_seed,
            entropy=rec.entropy,
            dealer=info.dealer,
            private=info.private,
            ranked=info.ranked,
        )
        try:
            await request(
                self._nc,
                endpoints.to_owner(endpoints.engine_start(info.game), start.table_id),
                start,
                timeout=self.engine_timeout,
            )
        except Exception as exc:
            refused = isinstance(exc, RemoteError) and exc.code != codes.UNAVAILABLE
            if not refused:
                # No answer: the engine may have started the hand anyway. Only its
                # cancel may decide (it also voids the holds).
                await self.stop_hand(info.game, info.table_id, hand_id)
            elif money.seat_hold(info) > 0:
                await self._void(info.table_id, hand_id)  # refused: it never started
            # The seed went out in a StartHand that did not happen; never reuse it, and
            # since players' entropy was given against its commitment, ask them again.
            await self._revert(info.table_id, hand_id, unready=None, fresh_seed=True)
            if isinstance(exc, ServiceError):
                raise ServiceError(
                    exc.code,
                    f"the hand could not start ({exc.message}); any credits held for it "
                    "were released. Everyone please tap Ready again.",
                ) from None
            raise
        try:
            return (
                await self._update(info.table_id, lambda rec: hands.start_playing(rec, hand_id))
            ).info
        except DealAborted:
            # The table was cancelled (or rescued) while we dealt: stop our hand.
            await self.stop_hand(info.game, info.table_id, hand_id)
            raise ServiceError(
                codes.CONFLICT, "the table changed while dealing; the hand was voided"
            ) from None

    async def _place_holds(self, rec: TableRecord, hand_id: str) -> None:
        info = rec.info
        holds = tuple(
            HoldRequest(user_id=s.user_id, amount=money.seat_hold(info))
            for s in info.seats
            if s is not None
        )
        try:
            await request(
                self._nc,
                endpoints.WALLET_PLACE_HOLDS,
                PlaceHolds(table_id=info.table_id, hand_id=hand_id, holds=holds, game=info.game),
                timeout=self.wallet_timeout,
            )
        except RemoteError as exc:
            if exc.code != codes.INSUFFICIENT_FUNDS:
                # Unknown outcome (a time-out may still have placed them): void to be
                # sure. No StartHand was sent, so no engine can ever finish this hand.
                await self._void(info.table_id, hand_id)
                await self._revert(info.table_id, hand_id, unready=set())
                raise ServiceError(
                    exc.code, f"could not hold credits for the hand: {exc.message}"
                ) from None
            # All or nothing: nothing is held. The short players (the wallet names them
            # as data) sit out until they have the credits and tap Ready again.
            short = await self._short_seats(rec, exc.user_ids)
            await self._revert(info.table_id, hand_id, unready=set(short))
            who = names(info, short) or "someone"
            raise ServiceError(
                codes.INSUFFICIENT_FUNDS,
                f"cannot deal: {who} does not have {info.max_loss} credits available "
                "for this hand and was marked not ready",
            ) from None
        except Exception:
            await self._void(info.table_id, hand_id)
            await self._revert(info.table_id, hand_id, unready=set())
            raise

    async def _short_seats(self, rec: TableRecord, named: tuple[str, ...]) -> tuple[int, ...]:
        """Seats the wallet named as short of credits (or, failing that, that are short)."""
        seats = hands.short_seats(rec, named)
        if seats:
            return seats
        short = []
        for i, s in enumerate(rec.info.seats):
            if s is None:
                continue
            try:
                balance = await request(
                    self._nc,
                    endpoints.WALLET_BALANCE,
                    GetBalance(user_id=s.user_id),
                    timeout=self.wallet_timeout,
                )
            except RemoteError:
                continue
            if balance.available < money.seat_hold(rec.info):
                short.append(i)
        return tuple(short)

    async def _revert(
        self, table_id: str, hand_id: str, *, unready: set[int] | None, fresh_seed: bool = False
    ) -> None:
        """Back to ``waiting`` after a failed deal; ``unready`` None: everyone."""
        seed = new_server_seed() if fresh_seed else None
        await self._update(
            table_id, lambda rec: hands.revert_deal(rec, hand_id, unready=unready, fresh_seed=seed)
        )

    async def _rescue_stale_deal(self, req: Deal) -> None:
        """The host deals at a table whose last deal was left half-done: rescue it first
        (the sweep would, a little later) and ask everyone to tap Ready again."""
        _, rec = await self._store.load(req.table_id)
        hand_id = hands.stale_deal(rec, self._clock(), self.stale_deal_seconds)
        if hand_id is None:
            return
        require_host(rec.info, req.caller)
        await self._rescue(rec, hand_id)
        raise ServiceError(
            codes.CONFLICT,
            "the previous deal was interrupted and has been voided; "
            "everyone please tap Ready again",
        )

    async def rescue_stale_deals(self, limit: int = 100) -> int:
        """Rescue every deal a replica died in (noted, and older than
        ``stale_deal_seconds``); the number rescued. Every replica may run this: the
        engine's cancel is idempotent and the revert a compare-and-set."""
        redis, now = self._store.redis, self._clock()
        old = await redis.execute(
            "ZRANGEBYSCORE",
            self._store.deals,
            "-inf",
            now - self.stale_deal_seconds,
            "LIMIT",
            0,
            limit,
        )
        rescued = 0
        for raw in old:
            member = raw.decode()
            table_id, _, hand_id = member.partition("|")
            try:
                _, rec = await self._store.load(table_id)
            except ServiceError as exc:
                if exc.code != codes.NOT_FOUND:
                    raise
                await redis.zrem(self._store.deals, member)
                continue
            if hands.stale_deal(rec, now, self.stale_deal_seconds) == hand_id:
                await self._rescue(rec, hand_id)
                rescued += 1
            # Rescued, or it ended otherwise (this is the dead replica's note).
            await redis.zrem(self._store.deals, member)
        return rescued

    async def _rescue(self, rec: TableRecord, hand_id: str) -> None:
        info = rec.info
        log.warning("table %s: rescuing interrupted deal %s", info.table_id, hand_id)
        # The dead replica may or may not have sent StartHand: the engine decides (its
        # cancel of a hand it never saw blocks a late start and voids the holds).
        await self.stop_hand(info.game, info.table_id, hand_id)
        await self._revert(info.table_id, hand_id, unready=None, fresh_seed=True)

    async def _void(self, table_id: str, hand_id: str) -> bool:
        """Release the holds of a hand no engine has started or ever will (idempotent);
        True when confirmed. Any other hand is stopped with :meth:`stop_hand`."""
        try:
            await request(
                self._nc,
                endpoints.WALLET_VOID,
                VoidHand(hand_id=hand_id, table_id=table_id),
                timeout=self.wallet_timeout,
            )
        except RemoteError as exc:
            if exc.code == codes.CONFLICT:
                return True  # already settled: its holds are gone either way
            log.error("table %s: could not void hand %s: %s", table_id, hand_id, exc)
            return False
        return True

    async def stop_hand(self, game: str, table_id: str, hand_id: str) -> bool:
        """Have the engine cancel the hand unless it finished; True once it decided.

        The engine voids a hand it cancels (and one it never saw, which it also blocks
        from starting late), and settles one it finished. Until it answers, the cancel
        is kept for :meth:`retry_cancels`.
        """
        redis = self._store.redis
        member = f"{game}|{table_id}|{hand_id}"
        if await self._cancel_engine_hand(game, table_id, hand_id):
            await redis.zrem(self._store.cancels, member)
            return True
        await redis.execute("ZADD", self._store.cancels, "NX", self._clock(), member)
        return False

    async def retry_cancels(self, limit: int = 100) -> int:
        """Ask the engines again about every hand whose cancel they did not confirm;
        the number confirmed now. Every replica may run this: a cancel is idempotent."""
        pending = await self._store.redis.execute("ZRANGE", self._store.cancels, 0, limit - 1)
        confirmed = 0
        for raw in pending:
            game, table_id, hand_id = raw.decode().split("|")
            if await self.stop_hand(game, table_id, hand_id):
                log.info("table %s: hand %s cancelled at the engine at last", table_id, hand_id)
                confirmed += 1
        return confirmed

    async def _cancel_engine_hand(self, game: str, table_id: str, hand_id: str) -> bool:
        try:
            answer = await request(
                self._nc,
                endpoints.to_owner(endpoints.engine_cancel(game), table_id),
                CancelHand(table_id=table_id, hand_id=hand_id),
                timeout=self.engine_timeout,
            )
        except Exception as exc:
            # conflict: the engine's table is busy with another hand; ask again later
            # (said once; retry_cancels asks every few seconds).
            retried = await self._store.redis.execute(
                "ZSCORE", self._store.cancels, f"{game}|{table_id}|{hand_id}"
            )
            level = logging.DEBUG if retried is not None else logging.WARNING
            log.log(
                level, "table %s: engine did not cancel hand %s yet: %s", table_id, hand_id, exc
            )
            return False
        if not answer.voided:
            log.info("table %s: hand %s finished before the cancel; settled", table_id, hand_id)
        return True
