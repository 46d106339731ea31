"""Helpers for the bots' integration tests: a bot's socket wired straight to the engine.

:class:`EngineSocket` is the SDK's :class:`~kalaro.client.socket.TableSocket` with the
gateway taken out: it receives the frames the engine worker publishes for its seat (and
the table's events) from NATS and sends moves to ``engine.<game>.act``. Frames go
through the SDK's own frame handling, so a :class:`~services.bots.player.BotSeat` sees
exactly the state it would through the gateway. :class:`FakeAccount` stands in for a
signed-in bot account: its REST calls land on a small table the test controls.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import msgspec
from msgspec.structs import replace
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg

from kalaro.bus import RemoteError, request
from kalaro.bus.codec import encode
from kalaro.client.socket import FrameError, TableSocket
from kalaro.proto import subjects
from kalaro.proto import ws as w
from kalaro.proto.engine import Act, Acted, GetView
from kalaro.proto.frames import decode_frames, part_for
from kalaro.proto.lobby import SeatInfo, TableInfo

T = TypeVar("T")

_frames = msgspec.json.Decoder(w.AnyServerFrame)
_json = msgspec.json.Encoder()


def table_info(table_id: str, game: str, players: list[str], status: str = "playing") -> TableInfo:
    ready = status != "waiting"
    seats = tuple(
        SeatInfo(user_id=u, display_name=f"Bot {i}", ready=ready, is_bot=True)
        for i, u in enumerate(players)
    )
    return TableInfo(
        table_id=table_id, game=game, ruleset="kalaro", options={}, bet=0, max_loss=0,  # type: ignore[arg-type]
        private=False, chat_enabled=True, host_id=players[0], host_name="Host", seats=seats,
        status=status, hand_no=0, created_at="", version=1, practice=True,  # type: ignore[arg-type]
    )  # fmt: skip


class Tables:
    """The lobby's part, as far as bots see it: table records and their change frames."""

    def __init__(self, nc: NATS) -> None:
        self.nc = nc
        self.infos: dict[str, TableInfo] = {}
        self.readies: list[tuple[str, str]] = []  # (table, user)

    async def publish(self, info: TableInfo) -> TableInfo:
        info = (
            replace(info, version=self.infos[info.table_id].version + 1)
            if (info.table_id in self.infos)
            else info
        )
        self.infos[info.table_id] = info
        await self.nc.publish(
            subjects.table_events(info.table_id), encode(w.TableChanged(table=info))
        )
        return info

    async def ready(self, table_id: str, user_id: str) -> TableInfo:
        self.readies.append((table_id, user_id))
        info = self.infos[table_id]
        seats = tuple(
            replace(s, ready=True) if s is not None and s.user_id == user_id else s
            for s in info.seats
        )
        return await self.publish(replace(info, seats=seats))


class EngineSocket(TableSocket):
    """A bot's socket whose 'gateway' is the engine worker on NATS (see module doc)."""

    def __init__(self, nc: NATS, game: str, user_id: str, tables: Tables) -> None:
        super().__init__(None, reconnect=False, keep_frames=False)  # type: ignore[arg-type]
        self.nc = nc
        self.game = game
        self.user_id = user_id
        self.directory = tables
        self.subs: dict[str, list[Any]] = {}
        self.acts: list[tuple[int, dict[str, Any], str]] = []  # (version, move, outcome)

    async def subscribe(self, table_id: str) -> w.Subscribed:
        info = self.directory.infos[table_id]
        seat = next(i for i, s in enumerate(info.seats) if s and s.user_id == self.user_id)

        async def on_message(msg: Msg) -> None:
            if msg.subject == subjects.table_frames(table_id):  # keep only this seat's part
                part = part_for(decode_frames(msg.data), seat)
                if part is not None:
                    self._on_frame(_frames.decode(part))
            else:
                self._on_frame(_frames.decode(msg.data))

        self.subs[table_id] = [
            await self.nc.subscribe(subjects.table_all(table_id), cb=on_message),
        ]
        await self.nc.flush()
        subscribed = w.Subscribed(table=info, seat=seat)
        self._on_frame(subscribed)
        await self.resync(table_id)
        return subscribed

    async def unsubscribe(self, table_id: str) -> None:
        for sub in self.subs.pop(table_id, []):
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        self.tables.pop(table_id, None)

    async def act(self, table_id: str, action: dict[str, Any], version: int | None = None) -> w.Ack:
        assert version is not None
        message = Act(
            table_id=table_id,
            user_id=self.user_id,
            version=version,
            action=msgspec.Raw(_json.encode(action)),
        )
        try:
            acted = await request(self.nc, subjects.engine_act(self.game), message, Acted)
        except RemoteError as exc:
            self.acts.append((version, action, exc.code))
            raise FrameError(exc.code, exc.message) from None
        self.acts.append((version, action, "ok"))
        return w.Ack(ref=None, version=acted.version)

    async def resync(self, table_id: str) -> None:
        message = GetView(table_id=table_id, user_id=self.user_id)
        with contextlib.suppress(RemoteError):
            view = await request(self.nc, subjects.engine_view(self.game), message, w.HandView)
            self._on_frame(view)

    async def ping(self) -> None:
        return None

    async def close(self) -> None:
        for table_id in list(self.subs):
            await self.unsubscribe(table_id)


@dataclass
class FakeCreds:
    index: int


@dataclass
class FakeClient:
    """The REST calls a BotSeat makes (only Ready), answered by :class:`Tables`."""

    tables: Tables
    user_id: str

    async def ready(self, table_id: str, ready: bool = True, entropy: str = "") -> TableInfo:
        return await self.tables.ready(table_id, self.user_id)


@dataclass
class FakeAccount:
    """A signed-in bot account whose socket is an :class:`EngineSocket`."""

    user_id: str
    name: str
    sock: EngineSocket
    tables: Tables
    creds: FakeCreds = field(default_factory=lambda: FakeCreds(0))

    async def socket(self) -> EngineSocket:
        return self.sock

    async def rest(self, call: Callable[[FakeClient], Awaitable[T]]) -> T:
        return await call(FakeClient(self.tables, self.user_id))


async def until(check: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while True:
        if check():
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout}s: {what}")
        await asyncio.sleep(0.02)
