"""Helpers for live-table tests: players, tables, and driving a hand with the SDK.

Every move goes through the gateway's WebSocket exactly as a client's would; the
players choose among the legal actions their own view lists (randomly, or with the
smart bot policy, which reaches the interesting endings — Draw calls, claims — often).
"""

from __future__ import annotations

import asyncio
import random
import time
from dataclasses import dataclass, field
from typing import Any

import msgspec

from kalaro.bots import policy_for
from kalaro.client import ApiError, KalaroClient
from kalaro.client.socket import FrameError, TableSocket
from kalaro.client.transport import Transport
from kalaro.proto import ws as w
from tests.e2e.stack import ADMIN_EMAIL, ADMIN_PASSWORD, Stack, verify_email

PASSWORD = "correct horse battery staple"


def legal_of(view: dict[str, Any]) -> list[dict[str, Any]]:
    """The legal actions listed in a seat's view (each game names the field its own way)."""
    legal = view.get("legal") or []
    return [a for a in legal if a.get("type") != "time_out"]


async def signed_up(
    stack: Stack, name: str, unique: str, *, base_url: str | None = None, address: str = ""
) -> KalaroClient:
    """A new player whose email is verified (the mailed link followed), so they sit at
    bet tables, with their welcome grant. ``base_url``: another gateway of the stack's;
    ``address``: the client's address as a proxy in front of it says (X-Forwarded-For;
    that gateway must trust the test as its proxy)."""
    headers = {"X-Forwarded-For": address} if address else None
    client = KalaroClient(base_url or stack.base_url, headers=headers)
    email = f"{name.lower()}-{unique}@example.com"
    await client.sign_up(email, PASSWORD, name)
    await asyncio.to_thread(verify_email, stack.root, stack.base_url, email)
    await client.refresh()  # a token that says the email is verified
    await wait_balance(client, 1000)  # the welcome grant arrives through JetStream
    return client


async def admin(stack: Stack) -> KalaroClient:
    client = KalaroClient(stack.base_url)
    await client.sign_in(ADMIN_EMAIL, ADMIN_PASSWORD)
    return client


@dataclass
class LiveTable:
    table_id: str
    host: KalaroClient
    players: list[KalaroClient]  # index = seat
    sockets: list[TableSocket]  # index = seat
    spectators: list[TableSocket] = field(default_factory=list)

    @property
    def everyone(self) -> list[TableSocket]:
        return [*self.sockets, *self.spectators]

    def newest(self) -> tuple[int, dict[str, Any], str] | None:
        views = [s.view(self.table_id) for s in self.sockets]
        present = [v for v in views if v is not None]
        if not present:
            return None
        top = max(present, key=lambda v: v.version)
        return top.version, top.view, top.hand_id

    async def deal(self) -> None:
        """Everyone taps Ready and the host deals, once the lobby has closed the last
        hand (it learns of the end through JetStream, a moment after the result frames)."""
        deadline = time.monotonic() + 10
        while (await self.host.get_table(self.table_id)).status != "waiting":
            assert time.monotonic() < deadline, "the last hand never ended at the lobby"
            await asyncio.sleep(0.1)
        await self.ready_all()
        await self.host.deal(self.table_id)
        await self.wait_for_hand()

    async def ready_all(self) -> None:
        """Every seated player taps Ready, each with their own entropy."""
        for seat, player in enumerate(self.players):
            await player.ready(self.table_id, True, f"entropy-{seat}-{random.random()}")

    async def wait_for_hand(self, timeout: float = 15) -> None:
        table = await self.host.get_table(self.table_id)
        hand_id = table.hand_id
        for socket in self.sockets:
            await socket.wait_for(
                lambda s=socket: (v := s.view(self.table_id)) is not None and v.hand_id == hand_id,
                timeout,
            )

    async def wait_all_at(self, version: int, timeout: float = 10) -> None:
        for socket in self.everyone:
            await socket.wait_for(
                lambda s=socket: (v := s.view(self.table_id)) is not None and v.version >= version,
                timeout,
            )

    async def close(self) -> None:
        for socket in self.everyone:
            await socket.close()


async def open_table(
    stack: Stack,
    host: KalaroClient,
    players: list[KalaroClient],
    game: str,
    bet: int,
    options: dict[str, Any] | None = None,
    spectators: list[KalaroClient] | None = None,
    transport: Transport = "websockets",
) -> LiveTable:
    table = (await host.create_table(game, bet, options=options or {})).table
    sockets: list[TableSocket] = []
    for seat, player in enumerate(players):
        await player.sit(table.table_id, seat)
        socket = player.table_socket(transport=transport)
        await socket.connect()
        subscribed = await socket.subscribe(table.table_id)
        assert subscribed.seat == seat
        sockets.append(socket)
    watchers = []
    for spectator in spectators or []:
        socket = spectator.table_socket(transport=transport)
        await socket.connect()
        assert (await socket.subscribe(table.table_id)).seat is None
        watchers.append(socket)
    return LiveTable(table.table_id, host, players, sockets, watchers)


async def play_hand(
    live: LiveTable,
    game: str,
    *,
    policy: str = "random",
    rng: random.Random | None = None,
    max_actions: int = 600,
    choose: Any = None,
    idle_when: Any = None,
) -> w.HandResult:
    """Play the current hand to its end; return the ``result`` frame.

    ``choose(seat, view, legal) -> action | None`` may override the policy (None: use it).
    ``idle_when(view) -> bool``: while true for the newest view nobody acts, so only the
    server's timers can move the hand on.
    """
    rng = rng or random.Random(1)
    brain = policy_for(game, policy)
    view_type = __import__(f"kalaro.games.{game}", fromlist=["View"]).View
    results_before = len(live.sockets[0].state(live.table_id).results)
    for _ in range(max_actions):
        newest = live.newest()
        assert newest is not None, "no view yet"
        version, view, _hand = newest
        if view.get("result") is not None:
            break
        if idle_when is not None and idle_when(view):
            await live.sockets[0].wait_for(
                lambda at=version: (n := live.newest()) is not None and n[0] > at, timeout=30
            )
            continue
        mover = None
        for seat, socket in enumerate(live.sockets):
            own = socket.view(live.table_id)
            if own is not None and own.version == version and legal_of(own.view):
                mover = (seat, socket, own)
                break
        if mover is None:
            # A view may still be on its way to the seat that must move; once every seat
            # has the newest version and still nobody can act, a timer must move the hand.
            if any(
                (v := sock.view(live.table_id)) is None or v.version < version
                for sock in live.sockets
            ):
                await live.wait_all_at(version)
                continue
            await live.sockets[0].wait_for(
                lambda at=version: (n := live.newest()) is not None and n[0] > at, timeout=30
            )
            continue
        seat, socket, own = mover
        action = choose(seat, own.view, legal_of(own.view)) if choose else None
        if action is None:
            decoded = msgspec.convert(own.view, view_type)
            chosen = brain.choose(decoded, rng)
            action = msgspec.to_builtins(chosen) if chosen is not None else None
        if action is None:
            action = rng.choice(legal_of(own.view))
        try:
            ack = await socket.act(live.table_id, action, version=own.version)
        except FrameError as exc:
            if exc.code == "stale_version":  # a timer fired first: look again
                continue
            raise
        assert ack.version is not None
        await live.wait_all_at(ack.version)
    else:
        raise AssertionError(f"hand did not end within {max_actions} actions")
    for socket in live.everyone:
        await socket.wait_for(
            lambda s=socket: len(s.state(live.table_id).results) > results_before, 15
        )
    return live.sockets[0].state(live.table_id).results[-1]


def views_received(socket: TableSocket, table_id: str) -> list[w.HandView]:
    """Every view the socket received for the table, in arrival order (its raw frames:
    the SDK keeps only the newest view)."""
    frames = (msgspec.json.decode(raw, type=w.AnyServerFrame) for raw in socket.raw_frames)
    return [f for f in frames if isinstance(f, w.HandView) and f.table_id == table_id]


async def wait_balance(client: KalaroClient, expected: int, timeout: float = 15) -> int:
    """Poll until the balance is ``expected`` (settlements arrive via JetStream).

    A wallet that is still starting answers ``unavailable``; keep asking until the deadline.
    """
    deadline = time.monotonic() + timeout
    balance: int | None = None
    while time.monotonic() < deadline:
        try:
            balance = (await client.balance()).balance
        except ApiError as exc:
            if exc.code != "unavailable":
                raise
        if balance == expected:
            break
        await asyncio.sleep(0.1)
    return -1 if balance is None else balance


__all__ = [
    "ApiError",
    "FrameError",
    "LiveTable",
    "admin",
    "legal_of",
    "open_table",
    "play_hand",
    "signed_up",
    "views_received",
    "wait_balance",
]
