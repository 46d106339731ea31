"""Helpers for the lobby's integration tests: stand-in peers, a client, a frame recorder.

The wallet and the engine workers are other services; here they are played by
:class:`Peers`, a real :class:`kalaro.bus.Service` on the test's nats-server that
answers their subjects the way their contracts say and records every request, so a
test can assert exactly what the lobby asked for (one PlaceHolds, one StartHand, a
void after a failure...). They are peers on real NATS, not mocks of NATS.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import msgspec
import pytest
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg

from kalaro.bus import RemoteError, Service, ServiceError, request
from kalaro.games.registry import game_names, rules_for
from kalaro.proto import endpoints, subjects, ws
from kalaro.proto import errors as codes
from kalaro.proto import lobby as lb
from kalaro.proto.engine import CancelHand, GetView, HandCancelled, HandStarted, StartHand
from kalaro.proto.wallet import (
    Balance,
    GetBalance,
    HoldsPlaced,
    PlaceHolds,
    Settlement,
    VoidHand,
)
from services.lobby.tables import Lobby, TableRecord

T = TypeVar("T")
GAMES = game_names()  # every game the registry deals has an engine subject
RICH = 1_000_000

_frame = msgspec.json.Decoder(ws.AnyServerFrame)


class Clock:
    """Real time plus an offset a test can move forward (chat windows, stale deals)."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset

    def advance(self, seconds: float) -> None:
        self.offset += seconds


@dataclass
class Peers:
    """The wallet's and engines' subjects as the lobby sees them, with a record of calls.

    Knobs: ``balances`` (default :data:`RICH`), ``short`` (PlaceHolds refuses naming
    these users, all or nothing, like the real wallet), ``engine_error`` (StartHand
    answers with this error code), ``delay`` (seconds each hold/start takes),
    ``balance_delay`` (seconds each balance answer takes), ``engine_voids`` (CancelHand
    voids the hand at the wallet, as the real engine's void reaches it through
    JetStream), ``cancel_error`` (CancelHand answers with this code), ``view_error``
    (GetView answers with this code).
    """

    wallet: bool = True
    balances: dict[str, int] = field(default_factory=dict)
    short: set[str] = field(default_factory=set)
    engine_error: str | None = None
    delay: float = 0.0
    engine_voids: bool = False
    balance_delay: float = 0.0  # seconds each GetBalance takes (widens Sit races)
    cancel_error: str | None = None
    view_error: str | None = None  # GetView answers with this error code
    nc: NATS | None = None  # set by the harness: the stand-in engine's connection
    balance_asks: list[GetBalance] = field(default_factory=list)
    holds: list[PlaceHolds] = field(default_factory=list)
    voids: list[VoidHand] = field(default_factory=list)
    starts: list[StartHand] = field(default_factory=list)
    cancels: list[CancelHand] = field(default_factory=list)
    # GetView answers: the latest started hand at the table, at this version (default 1)
    hand_versions: dict[str, int] = field(default_factory=dict)

    def service(self) -> Service:
        service = Service("lobby-test-peers")
        if self.wallet:
            service.add(endpoints.WALLET_BALANCE, self._balance)
            service.add(endpoints.WALLET_PLACE_HOLDS, self._place_holds)
            service.add(endpoints.WALLET_VOID, self._void)
        for game in GAMES:
            # Every partition's subject: the lobby sends to a table's owning replica.
            service.add(endpoints.at_partition(endpoints.engine_start(game), "*"), self._start)
            service.add(endpoints.at_partition(endpoints.engine_cancel(game), "*"), self._cancel)
            service.add(endpoints.at_partition(endpoints.engine_view(game), "*"), self._view)
        return service

    async def _balance(self, req: GetBalance) -> Balance:
        self.balance_asks.append(req)
        await asyncio.sleep(self.balance_delay)
        amount = self.balances.get(req.user_id, RICH)
        return Balance(user_id=req.user_id, balance=amount, held=0, available=amount)

    async def _place_holds(self, req: PlaceHolds) -> HoldsPlaced:
        self.holds.append(req)
        await asyncio.sleep(self.delay)
        short = [h.user_id for h in req.holds if h.user_id in self.short]
        if short:
            named = ", ".join(f"{u} (available 0, needs {req.holds[0].amount})" for u in short)
            # Like the wallet: who is short travels as data (the text is for people).
            raise ServiceError(
                codes.INSUFFICIENT_FUNDS,
                f"not enough available: {named}",
                user_ids=tuple(short),
            )
        return HoldsPlaced(hand_id=req.hand_id, holds=req.holds)

    async def _void(self, req: VoidHand) -> Settlement:
        self.voids.append(req)
        return Settlement(hand_id=req.hand_id, status="voided", payments=())

    async def _start(self, req: StartHand) -> HandStarted:
        self.starts.append(req)
        await asyncio.sleep(self.delay)
        if self.engine_error is not None:
            raise ServiceError(self.engine_error, "engine refused the hand")
        return HandStarted(hand_id=req.hand_id, version=1)

    async def _view(self, req: GetView) -> ws.HandView:
        if self.view_error is not None:
            raise ServiceError(self.view_error, "engine cannot say")
        hands = [s.hand_id for s in self.starts if s.table_id == req.table_id]
        if not hands:
            raise ServiceError(codes.NOT_FOUND, f"no hand at table {req.table_id}")
        version = self.hand_versions.get(req.table_id, 1)
        raw = msgspec.Raw
        return ws.HandView(
            table_id=req.table_id,
            hand_id=hands[-1],
            version=version,
            seat=None,
            view=raw(b"{}"),
            events=raw(b"[]"),
        )

    async def _cancel(self, req: CancelHand) -> HandCancelled:
        self.cancels.append(req)
        if self.cancel_error is not None:
            raise ServiceError(self.cancel_error, "engine refused the cancel")
        if self.engine_voids:
            assert self.nc is not None
            await request(
                self.nc,
                subjects.WALLET_VOID,
                VoidHand(hand_id=req.hand_id, table_id=req.table_id),
                Settlement,
            )
        return HandCancelled(hand_id=req.hand_id, voided=True)


class Frames:
    """Every message published under ``table.>`` while the test runs, decoded on demand."""

    def __init__(self) -> None:
        self.raw: list[tuple[str, bytes]] = []

    async def on_message(self, msg: Msg) -> None:
        self.raw.append((msg.subject, msg.data))

    def of(self, table_id: str) -> list[ws.ServerFrame]:
        subject = subjects.table_events(table_id)
        return [_frame.decode(data) for s, data in self.raw if s == subject]

    def tables(self, table_id: str) -> list[lb.TableInfo]:
        return [f.table for f in self.of(table_id) if isinstance(f, ws.TableChanged)]

    def chats(self, table_id: str) -> list[ws.ChatPosted]:
        return [f for f in self.of(table_id) if isinstance(f, ws.ChatPosted)]


async def eventually(check: Callable[[], Awaitable[bool] | bool], timeout: float = 5.0) -> None:
    """Poll ``check`` (sync or async) until it holds; fail the test after ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        outcome = check()
        if outcome if isinstance(outcome, bool) else await outcome:
            return
        if time.monotonic() > deadline:
            pytest.fail(f"condition not met within {timeout}s")
        await asyncio.sleep(0.02)


async def refused(code: str, call: Awaitable[object]) -> str:
    """Await ``call``, expecting the lobby to refuse it with ``code``; return the message."""
    with pytest.raises(RemoteError) as error:
        await call
    assert error.value.code == code, error.value
    return error.value.message


def clocked(game: str, seconds: int = 30) -> dict[str, Any]:
    """Options giving ``game`` a turn clock if its default has none (else none needed)."""
    rules = rules_for(game)
    if rules.options_dict(rules.options({})).get("turn_seconds", seconds) is None:
        return {"turn_seconds": seconds}
    return {}


def commitment(seed_hex: str) -> str:
    return hashlib.sha256(bytes.fromhex(seed_hex)).hexdigest()


@dataclass
class LobbyHarness:
    """A client for the lobby under test (through NATS), with handles on its state.

    It remembers every secret the test could know (invite codes, server seeds sent to
    the engine, entropy given with Ready) and every TableInfo it was answered, so
    :meth:`assert_no_secret_leaked` can check none of them ever went out.
    """

    nc: NATS
    lobby: Lobby
    peers: Peers
    frames: Frames
    clock: Clock
    unique: str
    prefix: str
    secrets: set[str] = field(default_factory=set)
    answered: list[bytes] = field(default_factory=list)

    def user(self, name: str, *roles: str) -> lb.Caller:
        return lb.Caller(
            user_id=f"{name.lower()}-{self.unique}", display_name=name, roles=("player", *roles)
        )

    @property
    def host(self) -> lb.Caller:
        return self.user("Host", "host")

    async def call(self, subject: str, message: msgspec.Struct, reply_type: type[T]) -> T:
        reply = await request(self.nc, subject, message, reply_type, timeout=10)
        if isinstance(reply, lb.TableCreated):
            if reply.invite_code:
                self.secrets.add(reply.invite_code)
            self.answered.append(msgspec.json.encode(reply.table))
        elif isinstance(reply, lb.TableInfo | lb.TableList):
            self.answered.append(msgspec.json.encode(reply))
        return reply

    async def create(
        self, game: lb.Game = "tongits", bet: int = 10, host: lb.Caller | None = None, **kw: Any
    ) -> lb.TableCreated:
        """A table; without ``options``, one with a turn clock even where the game's
        default has none (the lobby refuses a clockless table unless private and free)."""
        if "options" not in kw:
            kw["options"] = clocked(game)
        message = lb.CreateTable(caller=host or self.host, game=game, bet=bet, **kw)
        return await self.call(subjects.LOBBY_CREATE_TABLE, message, lb.TableCreated)

    async def get(self, table_id: str) -> lb.TableInfo:
        return await self.call(
            subjects.LOBBY_GET_TABLE, lb.GetTable(table_id=table_id), lb.TableInfo
        )

    async def sit(
        self, who: lb.Caller, table_id: str, seat: int | None = None, code: str | None = None
    ) -> lb.TableInfo:
        message = lb.Sit(caller=who, table_id=table_id, seat=seat, invite_code=code)
        return await self.call(subjects.LOBBY_SIT, message, lb.TableInfo)

    async def ready(self, who: lb.Caller, table_id: str, ready: bool = True) -> lb.TableInfo:
        entropy = f"entropy-{who.user_id}-{len(self.secrets)}" if ready else ""
        if entropy:
            self.secrets.add(entropy)
        message = lb.SetReady(caller=who, table_id=table_id, ready=ready, entropy=entropy)
        return await self.call(subjects.LOBBY_SET_READY, message, lb.TableInfo)

    async def deal(self, who: lb.Caller, table_id: str) -> lb.TableInfo:
        return await self.call(
            subjects.LOBBY_DEAL, lb.Deal(caller=who, table_id=table_id), lb.TableInfo
        )

    async def full_table(
        self, game: lb.Game = "tongits", bet: int = 10, ready: bool = True, **kw: Any
    ) -> tuple[lb.TableInfo, list[lb.Caller]]:
        """A table with every seat taken (and everyone ready unless told otherwise)."""
        created = await self.create(game, bet, **kw)
        table = created.table
        players = [self.user(n) for n in ("Ana", "Ben", "Cris", "Dina")[: len(table.seats)]]
        for p in players:
            table = await self.sit(p, table.table_id, code=created.invite_code)
            if ready:
                table = await self.ready(p, table.table_id)
        return table, players

    async def record(self, table_id: str) -> TableRecord:
        """The table's record as stored (secrets included), read straight from Redis."""
        _, data = await self.lobby.store.get(table_id)
        assert data is not None
        rec = msgspec.json.decode(data, type=TableRecord)
        self.secrets.add(rec.server_seed)
        if rec.invite_code:
            self.secrets.add(rec.invite_code)
        return rec

    def assert_no_secret_leaked(self) -> None:
        for start in self.peers.starts:
            self.secrets.add(start.server_seed)
            self.secrets.update(e for e in start.entropy if e)
        published = [data for _, data in self.frames.raw]
        for secret in self.secrets:
            assert len(secret) >= 8, secret  # a short secret could match by chance
            for data in published + self.answered:
                assert secret.encode() not in data, f"secret {secret!r} went out in {data!r}"
