"""Helpers for the engine worker's tests: replicas, a clock, a table feed, random play.

Everything here talks to real NATS and Redis. ``Replicas`` runs worker "processes"
(each its own NATS connection); ``Feed`` records every frame published for a table,
by subject, as a gateway would receive them; ``play_random`` plays a hand through
``engine.<game>.act`` choosing random legal actions from the seat views it received.
Scenario finders search the pure engines (no I/O) for a deal and a line of play that
reaches a timer window, so timer tests are deterministic.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import msgspec
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.js.api import RawStreamMsg
from nats.js.errors import NotFoundError

from kalaro.bus import Service, request
from kalaro.bus.redislink import RedisLink
from kalaro.bus.runner import connect
from kalaro.games.base import derive_seed
from kalaro.games.registry import GameRules, rules_for
from kalaro.proto import subjects
from kalaro.proto.engine import Act, Acted, HandStarted, Player, StartHand
from kalaro.proto.frames import decode_frames
from services.engine.hand import Slot
from services.engine.slots import SlotStore
from services.engine.worker import EngineWorker

BET = 10
_json = msgspec.json.Encoder()


class FakeClock:
    """Epoch milliseconds that move only when a test says so."""

    def __init__(self) -> None:
        self.now = time.time_ns() // 1_000_000

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int) -> None:
        self.now += ms


def wall_clock() -> int:
    return time.time_ns() // 1_000_000


@dataclass
class Replica:
    worker: EngineWorker
    nc: NATS
    service: Service
    background: bool
    alive: bool = True


class Replicas:
    """Engine worker replicas of one test: own NATS connections, one Redis namespace."""

    def __init__(self, nats_url: str, redis: RedisLink, namespace: str, clock: FakeClock):
        self.nats_url = nats_url
        self.redis = redis
        self.namespace = namespace
        self.clock = clock
        self.running: list[Replica] = []

    async def start(
        self,
        game: str,
        *,
        background: bool = False,
        now_ms: Callable[[], int] | None = None,
        tick_seconds: float = 0.05,
        audience: Literal["watched", "always"] = "always",
    ) -> Replica:
        nc = await connect(self.nats_url, f"test-engine-{game}")
        # These tests read every frame off NATS (the audience view included), with no
        # gateway to mark the table watched: the engine publishes it always by default.
        worker = EngineWorker(
            game,
            nc,
            self.redis,
            now_ms=now_ms or self.clock,
            namespace=self.namespace,
            tick_seconds=tick_seconds,
            audience=audience,
        )
        service = worker.build_service()
        await service.start(nc)
        if background:
            await worker.start()
        else:
            await worker.ensure_streams()
        replica = Replica(worker, nc, service, background)
        self.running.append(replica)
        return replica

    async def kill(self, replica: Replica) -> None:
        """Stop a replica abruptly: its tasks cancelled, its connection cut, no draining."""
        replica.alive = False
        await replica.worker.stop()
        await replica.nc.close()

    async def stop_all(self) -> None:
        for replica in self.running:
            if replica.alive:
                replica.alive = False
                await replica.worker.stop()
                await replica.service.stop()
                with contextlib.suppress(Exception):
                    await replica.nc.drain()

    def store(self, game: str) -> SlotStore:
        return SlotStore(self.redis, game, self.namespace)


def start_message(
    game: str,
    unique: str,
    *,
    table: str = "t",
    hand: str = "h1",
    options: dict[str, Any] | None = None,
    bet: int = BET,
    server_seed: bytes | None = None,
    entropy: tuple[str, ...] | None = None,
    dealer: int | None = 0,
) -> StartHand:
    seats = rules_for(game).seats
    seed = server_seed if server_seed is not None else hashlib.sha256(unique.encode()).digest()
    return StartHand(
        table_id=f"{unique}-{table}",
        hand_id=f"{unique}-{hand}",
        options=options or {},
        bet=bet,
        players=tuple(
            Player(user_id=f"{unique}-u{s}", display_name=f"Player {s}") for s in range(seats)
        ),
        server_seed=seed.hex(),
        entropy=entropy if entropy is not None else tuple(f"e{s}" for s in range(seats)),
        dealer=dealer,
    )


async def start_hand(nc: NATS, game: str, start: StartHand) -> HandStarted:
    started: HandStarted = await request(nc, subjects.engine_start(game), start, HandStarted)
    return started


async def send_act(
    nc: NATS, game: str, table_id: str, user_id: str, version: int, action: Any
) -> Acted:
    message = Act(
        table_id=table_id,
        user_id=user_id,
        version=version,
        action=msgspec.Raw(_json.encode(action)),
    )
    acted: Acted = await request(nc, subjects.engine_act(game), message, Acted)
    return acted


def legal(view: dict[str, Any]) -> list[dict[str, Any]]:
    """A seat's legal actions in its view (every game's view has ``legal``)."""
    found: list[dict[str, Any]] = view.get("legal", [])
    return found


@dataclass
class Frame:
    subject: str
    data: bytes
    body: dict[str, Any]
    seat: int | None = None  # a part of a TableFrames: whose it is (None: the audience's)


@dataclass
class Feed:
    """Every frame published for one table, as a gateway's subscription receives them."""

    table_id: str
    seats: int
    frames: list[Frame] = field(default_factory=list)
    seat_views: dict[int, dict[int, dict[str, Any]]] = field(default_factory=dict)
    public_views: dict[int, dict[str, Any]] = field(default_factory=dict)
    results: list[dict[str, Any]] = field(default_factory=list)
    messages: int = 0  # TableFrames messages received (one per step)
    sub: Any = None

    @classmethod
    async def open(cls, nc: NATS, table_id: str, seats: int) -> Feed:
        feed = cls(table_id, seats)
        feed.sub = await nc.subscribe(subjects.table_all(table_id), cb=feed._on_message)
        await nc.flush()
        return feed

    async def close(self) -> None:
        if self.sub is not None:
            await self.sub.unsubscribe()

    async def _on_message(self, msg: Msg) -> None:
        if msg.subject == subjects.table_frames(self.table_id):
            self.messages += 1
            frames = decode_frames(msg.data)
            parts: list[tuple[int | None, bytes]] = list(enumerate(frames.seats))
            if frames.audience is not None:
                parts.append((None, frames.audience))
            for seat, data in parts:
                body = msgspec.json.decode(data)
                self.frames.append(Frame(msg.subject, data, body, seat))
                if seat is None:
                    self.public_views[body["version"]] = body
                else:
                    self.seat_views.setdefault(seat, {})[body["version"]] = body
            return
        body = msgspec.json.decode(msg.data)
        self.frames.append(Frame(msg.subject, msg.data, body))
        if body.get("type") == "result":
            self.results.append(body)

    def has_version(self, version: int) -> bool:
        return version in self.public_views and all(
            version in self.seat_views.get(s, {}) for s in range(self.seats)
        )

    async def wait_version(self, version: int, timeout: float = 5.0) -> None:
        await eventually(lambda: self.has_version(version), timeout, f"views at version {version}")

    def view(self, seat: int, version: int) -> dict[str, Any]:
        frame: dict[str, Any] = self.seat_views[seat][version]["view"]
        return frame


async def eventually(check: Callable[[], bool], timeout: float = 5.0, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout}s: {what}")
        await asyncio.sleep(0.005)


async def play_random(
    nc: NATS,
    game: str,
    start: StartHand,
    feed: Feed,
    rng: random.Random,
    version: int,
    *,
    on_step: Callable[[int], Awaitable[None]] | None = None,
    max_actions: int = 3000,
) -> int:
    """Play to the end through ``engine.<game>.act``: a random seat with legal actions,
    a random action of its view's; each move must land exactly one version later."""
    users = [p.user_id for p in start.players]
    for _ in range(max_actions):
        await feed.wait_version(version)
        views = [feed.view(s, version) for s in range(len(users))]
        if views[0]["phase"] == "over":
            return version
        movers = [s for s in range(len(users)) if legal(views[s])]
        seat = rng.choice(movers)
        action = rng.choice(legal(views[seat]))
        acted = await send_act(nc, game, start.table_id, users[seat], version, action)
        assert acted.version == version + 1
        version = acted.version
        if on_step is not None:
            await on_step(version)
    raise AssertionError(f"the hand did not end in {max_actions} actions")


async def load_slot(store: SlotStore, table_id: str) -> tuple[int, Slot]:
    version, slot = await store.load(table_id)
    assert slot is not None, f"no slot for {table_id}"
    return version, slot


def decode_state(game: str, slot: Slot) -> Any:
    return msgspec.msgpack.decode(slot.state, type=rules_for(game).state_type)


# --- JetStream -------------------------------------------------------------------------


async def last_seq(nc: NATS, stream: str) -> int:
    info = await nc.jetstream().stream_info(stream)
    seq: int = info.state.last_seq
    return seq


@dataclass
class Stored:
    """One message as a JetStream stream holds it."""

    seq: int
    data: bytes
    headers: dict[str, str]


async def stream_messages(nc: NATS, stream: str, subject: str, after_seq: int = 0) -> list[Stored]:
    """Messages stored on ``subject`` after sequence ``after_seq``, oldest first."""
    js = nc.jetstream()
    out: list[Stored] = []
    seq = after_seq + 1
    while True:
        try:
            msg: RawStreamMsg = await js.get_msg(stream, seq=seq, subject=subject, next=True)
        except NotFoundError:
            return out
        assert msg.seq is not None
        out.append(Stored(msg.seq, msg.data or b"", dict(msg.headers or {})))
        seq = msg.seq + 1


async def hand_finished_events(nc: NATS, hand_id: str, after_seq: int) -> list[dict[str, Any]]:
    messages = await stream_messages(nc, subjects.EVENTS_STREAM, subjects.HAND_FINISHED, after_seq)
    bodies = [msgspec.json.decode(m.data) for m in messages]
    return [b for b in bodies if b["hand_id"] == hand_id]


# --- scenarios from the pure engines -----------------------------------------------------


@dataclass
class Scenario:
    """A deal and a line of play (seat, action as JSON data) reaching a timer window."""

    server_seed: bytes
    entropy: tuple[str, ...]
    dealer: int
    actions: list[tuple[int, dict[str, Any]]]
    state: Any


def _deal(rules: GameRules, options: dict[str, Any], seed: bytes, entropy: tuple[str, ...]) -> Any:
    return rules.new_hand(rules.options(options), derive_seed(seed, entropy), 0)


def tongits_draw_call(options: dict[str, Any], asked: int = 2) -> Scenario:
    """A Tongits line that ends with a Draw call waiting on ``asked`` opponents.

    Everyone melds as soon as they can (so opponents open) and calls Draw at the first
    chance that leaves ``asked`` opponents to answer.
    """
    rules = rules_for("tongits")
    entropy = ("a", "b", "c")
    for i in range(2000):
        seed = hashlib.sha256(f"draw-call-{i}".encode()).digest()
        rng = random.Random(i)
        state = _deal(rules, options, seed, entropy)
        actions: list[tuple[int, dict[str, Any]]] = []
        while not rules.is_over(state):
            seat = rules.to_act(state)[0]
            choices = rules.legal_actions(state, seat)
            kinds = {type(a).__name__: a for a in choices}
            opened = sum(state.opened(s) for s in range(3) if s != seat)
            if "CallDraw" in kinds and opened >= asked:
                action = kinds["CallDraw"]
            else:
                melds = [a for a in choices if type(a).__name__ in ("Meld", "TakeDiscard")]
                plain = [a for a in choices if type(a).__name__ in ("Draw", "Discard")]
                action = rng.choice(melds or plain)
            state, _ = rules.apply(state, seat, action)
            actions.append((seat, msgspec.to_builtins(action)))
            if type(action).__name__ == "CallDraw":
                if state.phase == "answers" and len(rules.to_act(state)) == asked:
                    return Scenario(seed, entropy, 0, actions, state)
                break
    raise AssertionError("no Draw-call scenario found")


def mahjong_call_window(options: dict[str, Any], waiting: int = 2) -> Scenario:
    """A Mahjong line that ends with a call window waiting on ``waiting``+ seats."""
    rules = rules_for("mahjong")
    entropy = ("a", "b", "c", "d")
    for i in range(2000):
        seed = hashlib.sha256(f"call-window-{i}".encode()).digest()
        rng = random.Random(i)
        state = _deal(rules, options, seed, entropy)
        actions: list[tuple[int, dict[str, Any]]] = []
        while not rules.is_over(state):
            if state.phase == "calls":
                if len(rules.to_act(state)) >= waiting:
                    return Scenario(seed, entropy, 0, actions, state)
                # Not the window we want: the first seat passes, and so on.
                seat = rules.to_act(state)[0]
                action = next(
                    a for a in rules.legal_actions(state, seat) if type(a).__name__ == "Pass"
                )
            else:
                seat = rules.to_act(state)[0]
                choices = [
                    a
                    for a in rules.legal_actions(state, seat)
                    if type(a).__name__ in ("Draw", "Discard")
                ]
                action = rng.choice(choices)
            state, _ = rules.apply(state, seat, action)
            actions.append((seat, msgspec.to_builtins(action)))
    raise AssertionError("no call-window scenario found")


async def replay(
    nc: NATS, game: str, start: StartHand, version: int, actions: list[tuple[int, Any]]
) -> int:
    """Send a scenario's actions through the worker; the version after the last one."""
    for seat, action in actions:
        acted = await send_act(
            nc, game, start.table_id, start.players[seat].user_id, version, action
        )
        assert acted.version == version + 1
        version = acted.version
    return version
