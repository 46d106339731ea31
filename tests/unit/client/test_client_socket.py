"""The SDK's table socket over both transports, against a pretend gateway on loopback.

The gateway here is ``websockets``' own server answering the ``/ws`` protocol's frames
(welcome, subscribed, ack, pong, error), so every test runs the same socket code over
the ``websockets`` library (the default) and over the fast reader (the load generator's).
No NATS or services: what is under test is the client's side of the connection.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec
import pytest
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from kalaro.client.retry import Backoff
from kalaro.client.socket import FrameError, TableSocket
from kalaro.client.transport import TRANSPORTS, Transport
from kalaro.client.wire import WireClosed
from kalaro.devstack import free_port
from kalaro.proto import ws as w
from kalaro.proto.lobby import TableInfo
from services.bots.accounts import BotAccount, credentials

TOKEN = "secret.access.token-1234"
TABLE = "t-1"


@pytest.fixture(params=TRANSPORTS)
def transport(request: pytest.FixtureRequest) -> Transport:
    return request.param  # type: ignore[no-any-return]


def _table() -> TableInfo:
    return TableInfo(
        table_id=TABLE,
        game="tongits",
        ruleset="kalaro",
        options={},
        bet=0,
        max_loss=0,
        private=False,
        chat_enabled=True,
        host_id="h",
        host_name="Host",
        seats=(None, None, None),
        status="waiting",
        hand_no=0,
        created_at="2026-01-01T00:00:00Z",
    )


def _view(version: int) -> bytes:
    frame = w.HandView(
        table_id=TABLE,
        hand_id="h-1",
        version=version,
        seat=0,
        view=msgspec.Raw(b'{"to_act":0}'),
        events=msgspec.Raw(b"[]"),
        deadline_ms=None,
    )
    return msgspec.json.encode(frame)


@dataclass
class Gateway:
    """Answers the frames a table socket sends; records what it saw."""

    port: int
    server: Server | None = None
    paths: list[str] = field(default_factory=list)
    authorizations: list[str | None] = field(default_factory=list)
    received: list[dict[str, Any]] = field(default_factory=list)
    close_codes: list[int | None] = field(default_factory=list)
    connections: list[ServerConnection] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)  # a frame came in
    welcome: bytes = msgspec.json.encode(w.Welcome(user_id="u-1", heartbeat_seconds=30))

    async def start(self) -> None:
        self.server = await serve(self._handle, "127.0.0.1", self.port, compression=None)

    async def stop(self) -> None:
        assert self.server is not None
        self.server.close()  # closes every connection (1001), as a restarting gateway
        await self.server.wait_closed()

    async def _handle(self, conn: ServerConnection) -> None:
        self.connections.append(conn)
        self.paths.append(conn.request.path if conn.request else "")
        headers = conn.request.headers if conn.request else {}
        self.authorizations.append(headers.get("Authorization"))
        await conn.send(self.welcome.decode())
        try:
            async for message in conn:
                frame = json.loads(message)
                self.received.append(frame)
                self.changed.set()
                await self._answer(conn, frame)
        except ConnectionClosed:
            pass
        finally:
            received = conn.protocol.close_rcvd
            self.close_codes.append(received.code if received else None)

    async def _answer(self, conn: ServerConnection, frame: dict[str, Any]) -> None:
        ref = frame.get("ref")
        match frame["type"]:
            case "subscribe":
                reply: Any = w.Subscribed(table=_table(), seat=0, ref=ref)
                await conn.send(msgspec.json.encode(reply).decode())
                await conn.send(_view(len(self.connections)).decode())
            case "act":
                reply = w.Ack(ref=ref, version=frame["version"] + 1)
                await conn.send(msgspec.json.encode(reply).decode())
            case "ping":
                await conn.send(msgspec.json.encode(w.Pong(ref=ref)).decode())
            case "chat":  # a frame the test gateway never answers
                pass
            case _:
                error = w.Error(code="bad_frame", message="unexpected", ref=ref)
                await conn.send(msgspec.json.encode(error).decode())

    def subscribes(self) -> int:
        return sum(1 for frame in self.received if frame["type"] == "subscribe")


class Client:
    """What a table socket reads of a :class:`~kalaro.client.KalaroClient`."""

    def __init__(self, port: int) -> None:
        self.base_url = f"http://127.0.0.1:{port}"
        self.access_token = TOKEN
        self.retry = Backoff(deadline=0)


@pytest.fixture
async def gateway() -> AsyncIterator[Gateway]:
    gateway = Gateway(free_port())
    await gateway.start()
    yield gateway
    if gateway.server is not None:
        await gateway.stop()


async def until(gateway: Gateway, predicate: Callable[[], bool], timeout: float = 5) -> None:
    """Wait on the gateway's side: a frame it receives wakes no one on the client's."""
    async with asyncio.timeout(timeout):
        while not predicate():
            gateway.changed.clear()
            await gateway.changed.wait()


def _socket(gateway: Gateway, transport: Transport, **options: Any) -> TableSocket:
    return TableSocket(Client(gateway.port), transport=transport, **options)  # type: ignore[arg-type]


async def test_subscribe_act_and_ping(gateway: Gateway, transport: Transport) -> None:
    async with _socket(gateway, transport) as socket:
        subscribed = await socket.subscribe(TABLE)
        assert subscribed.seat == 0 and socket.state(TABLE).seat == 0
        await socket.wait_for(lambda: socket.view(TABLE) is not None, timeout=5)
        view = socket.view(TABLE)
        assert view is not None and view.version == 1 and view.view == {"to_act": 0}
        ack = await socket.act(TABLE, {"type": "draw"})
        assert ack.version == 2
        await socket.ping()
    sent = [(f["type"], f.get("version")) for f in gateway.received]
    assert sent == [("subscribe", None), ("act", 1), ("ping", None)]
    assert gateway.received[1]["action"] == {"type": "draw"}
    await asyncio.sleep(0.05)
    assert gateway.close_codes == [1000]  # a clean closing handshake


async def test_the_token_is_a_header_never_the_url_nor_a_log(
    gateway: Gateway, transport: Transport, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)  # websockets logs every handshake header at DEBUG
    async with _socket(gateway, transport) as socket:
        await socket.subscribe(TABLE)
    assert gateway.paths == ["/ws"]
    assert gateway.authorizations == [f"Bearer {TOKEN}"]
    client_records = [r for r in caplog.records if not r.name.startswith("websockets.server")]
    assert any("Authorization" in r.getMessage() for r in client_records)  # it was logged…
    assert all(TOKEN not in r.getMessage() for r in client_records)  # …without the token
    assert TOKEN not in socket.url


async def test_reconnects_and_subscribes_again_after_the_gateway_restarts(
    gateway: Gateway, transport: Transport
) -> None:
    async with _socket(gateway, transport) as socket:
        await socket.subscribe(TABLE)
        await socket.wait_for(lambda: socket.view(TABLE) is not None, timeout=5)
        await gateway.stop()
        await asyncio.sleep(0.3)  # down for a while: the socket keeps trying
        await gateway.start()
        await socket.wait_for(lambda: gateway.subscribes() == 2, timeout=10)
        # The new connection's view (version 2) replaces the one held.
        await socket.wait_for(lambda: (v := socket.view(TABLE)) is not None and v.version == 2)
        assert socket.connects == 2
        assert gateway.authorizations == [f"Bearer {TOKEN}"] * 2
        await socket.ping()  # and the new connection works


async def test_a_dropped_connection_fails_pending_requests(
    gateway: Gateway, transport: Transport
) -> None:
    async with _socket(gateway, transport, reconnect=False) as socket:
        waiting = asyncio.create_task(socket.chat(TABLE, "hello"))  # never answered
        await until(gateway, lambda: gateway.received != [])
        await gateway.connections[0].close(1001, "going away")
        with pytest.raises(WireClosed):
            await asyncio.wait_for(waiting, 5)
        with pytest.raises(WireClosed):
            await socket.ping()  # closed, and not reconnecting


async def test_a_megabyte_frame_is_rejected_cleanly(gateway: Gateway, transport: Transport) -> None:
    huge = json.dumps({"type": "pong", "padding": "x" * 2**20})
    async with _socket(gateway, transport, reconnect=False, max_size=2**20) as socket:
        waiting = asyncio.create_task(socket.chat(TABLE, "hello"))
        await until(gateway, lambda: gateway.received != [])
        await gateway.connections[0].send(huge)
        with pytest.raises(WireClosed):
            await asyncio.wait_for(waiting, 5)
        assert all(len(frame) < 2**20 for frame in socket.raw_frames)
    await asyncio.sleep(0.05)
    assert gateway.close_codes == [1009]  # "message too big", from the client


async def test_the_default_limit_takes_a_megabyte_view(
    gateway: Gateway, transport: Transport
) -> None:
    big = json.dumps({"type": "pong", "padding": "x" * 2**20})
    async with _socket(gateway, transport, reconnect=False) as socket:
        await gateway.connections[0].send(big)
        await socket.wait_for(lambda: big in socket.raw_frames, timeout=5)
        await socket.ping()  # still open


async def test_server_pings_are_answered(gateway: Gateway, transport: Transport) -> None:
    async with _socket(gateway, transport):
        pong = await gateway.connections[0].ping(b"there?")
        await asyncio.wait_for(pong, 5)


async def test_a_refused_handshake_or_an_error_welcome_raises(
    gateway: Gateway, transport: Transport
) -> None:
    gateway.welcome = msgspec.json.encode(w.Error(code="unauthorized", message="bad token"))
    with pytest.raises(FrameError) as refused:
        await _socket(gateway, transport, reconnect=False).connect()
    assert refused.value.code == "unauthorized"
    closed = Gateway(free_port())  # nothing listens: the handshake cannot even start
    with pytest.raises(OSError):
        await _socket(closed, transport, reconnect=False).connect()


async def test_an_http_refusal_is_an_invalid_handshake(transport: Transport) -> None:
    port = free_port()

    async def refuse(conn: ServerConnection, request: Any) -> Any:
        return conn.respond(403, "no token\n")

    async with serve(lambda conn: asyncio.sleep(0), "127.0.0.1", port, process_request=refuse):
        with pytest.raises(InvalidHandshake):
            await _socket(Gateway(port), transport, reconnect=False).connect()


def test_an_unknown_transport_is_refused() -> None:
    socket = TableSocket(Client(1), transport="carrier pigeon")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown transport"):
        asyncio.run(socket.connect())


async def test_the_bots_use_the_sdk_default_transport(monkeypatch: pytest.MonkeyPatch) -> None:
    async def connected(self: TableSocket) -> None:
        return None

    monkeypatch.setattr(TableSocket, "connect", connected)
    account = BotAccount(credentials(b"secret", 0), None, "http://127.0.0.1:1")  # type: ignore[arg-type]
    socket = await account._open_socket([])
    assert socket.transport == "websockets"
    assert TableSocket(Client(1)).transport == "websockets"  # type: ignore[arg-type]
    await account._client.close()


async def test_a_dropped_socket_reconnects_by_itself(
    gateway: Gateway, transport: Transport
) -> None:
    async with _socket(gateway, transport) as socket:
        await socket.subscribe(TABLE)
        await socket.drop()  # closed with 4000, as a network failure: not by close()
        await socket.wait_for(lambda: socket.connects == 2 and gateway.subscribes() == 2, 10)
        await socket.ping()
    assert gateway.close_codes[0] == 4000


def test_a_table_older_than_the_one_held_is_ignored() -> None:
    # A table frame queued while subscribing may arrive before the (older) snapshot.
    socket = TableSocket(Client(1))  # type: ignore[arg-type]
    newer = msgspec.structs.replace(_table(), version=5, status="playing")
    socket._on_frame(w.TableChanged(table=newer))
    socket._on_frame(w.Subscribed(table=msgspec.structs.replace(_table(), version=4), seat=1))
    state = socket.state(TABLE)
    assert (state.table, state.seat) == (newer, 1)
    newest = msgspec.structs.replace(newer, version=6, status="waiting")
    socket._on_frame(w.TableChanged(table=newest))
    assert state.table == newest
