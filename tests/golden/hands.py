"""Golden hands: whole hands recorded once, replayed byte for byte after every change.

A *case* is one game under one ruleset (plus, for a few, house rules that no preset
turns on). For each case :mod:`tests.golden.record` plays ``hands`` hands with a
deterministic policy and writes ``data/<case>.jsonl.gz``: a header line (game, ruleset,
overrides, the full options), then one line per hand::

    {"i": 7, "seed": "<hex>", "dealer": 2 | null,
     "actions": [[seat, <action as the client sends it>], ...],
     "events": "<hash>", "result": "<hash>", "state": "<hash>"}

``events`` hashes, step by step, the engine's events and every seat's (and the
audience's) ``event_for`` copy of them; ``result`` and ``state`` hash the msgspec JSON of
the result and of the final State. ``data/<case>.states.json`` holds a few msgpack-encoded
mid-hand States (what the engine worker keeps in Redis) with the hand and step they come
from, so a test can check that a live hand stored today still decodes and plays on.

The policy only matters when recording: a replay applies the stored actions, so the
bots may change freely. Hands depend only on (case, index), so recording is
deterministic and parallel.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import importlib
import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from kalaro.bots import policy_for
from kalaro.games.registry import GameRules, game_names, rules_for

DATA = Path(__file__).parent / "data"
FORMAT = 1
#: Hands per ruleset preset; house-rule variants get fewer (they add one option each).
HANDS = 2000
VARIANT_HANDS = 500
#: Mid-hand States kept per case for the decode check.
SNAPSHOTS = 6

# Chance that a seat the clock waits on times out instead of moving (covers auto-play and
# the away marks), and that a seat is played by the smart bot for a whole hand (the
# others play uniformly at random, which explores odd corners but rarely wins).
TIMEOUT_RATE = 0.04
SMART_RATE = 0.6
# A random seat still takes a win this often when offered one.
RANDOM_TAKES_WIN = 0.8
# Moves that end a hand early, which a uniform choice would pick far too often (Tongits'
# Draw call is offered at the start of nearly every opened turn): kept at this rate.
RARE = {"CallDraw": 0.1}

_json = msgspec.json.Encoder()


@dataclass(frozen=True)
class Case:
    game: str
    ruleset: str
    overrides: dict[str, Any] = field(default_factory=dict)
    hands: int = HANDS
    label: str = ""  # names a house-rule variant

    @property
    def name(self) -> str:
        return f"{self.game}-{self.ruleset}" + (f"-{self.label}" if self.label else "")

    @property
    def path(self) -> Path:
        return DATA / f"{self.name}.jsonl.gz"

    @property
    def states_path(self) -> Path:
        return DATA / f"{self.name}.states.json"

    def rules(self) -> GameRules:
        return rules_for(self.game)

    def options(self) -> Any:
        return self.rules().options({"ruleset": self.ruleset, **self.overrides})


def rulesets(game: str) -> tuple[str, ...]:
    """The named presets of ``game`` (each game package's ``RULESETS``)."""
    return tuple(importlib.import_module(f"kalaro.games.{game}").RULESETS)


# House rules no preset turns on, so their code paths get golden hands too.
_VARIANTS: tuple[Case, ...] = (
    Case("tongits", "kalaro", {"secret_sets": True, "sapaw_blocks_call": True},
         VARIANT_HANDS, "secret"),
    Case("tongits", "classic", {"turn_seconds": None}, VARIANT_HANDS, "untimed"),
    Case("mahjong", "kalaro", {"robbing_the_kang": True, "cap_units": 3}, VARIANT_HANDS, "rob"),
    Case("kawuxing", "kawuxing", {"kong_on_kong": True, "cap": None}, VARIANT_HANDS, "kongs"),
    Case("kawuxing", "kawuxing", {"loss_limit": 5, "turn_seconds": None}, VARIANT_HANDS,
         "limit"),
)  # fmt: skip


def cases() -> tuple[Case, ...]:
    """Every registered game under every preset, then the house-rule variants."""
    presets = tuple(Case(game, ruleset) for game in game_names() for ruleset in rulesets(game))
    return presets + _VARIANTS


def hand_seed(case: Case, index: int) -> bytes:
    return hashlib.sha256(f"kalaro-golden\x00{case.name}\x00{index}".encode()).digest()[:16]


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=12).hexdigest()


class Hashes:
    """The running hash of a hand's emitted events."""

    def __init__(self, rules: GameRules) -> None:
        self._rules = rules
        self._viewers: tuple[int | None, ...] = (None, *range(rules.seats))
        self._events = hashlib.blake2b(digest_size=12)

    def step(self, events: list[Any]) -> None:
        event_for = self._rules.event_for
        seen = [
            [e for e in (event_for(event, viewer) for event in events) if e is not None]
            for viewer in self._viewers
        ]
        self._events.update(_json.encode([events, seen]))
        self._events.update(b"\n")

    def events(self) -> str:
        return self._events.hexdigest()


def end_hashes(rules: GameRules, state: Any) -> tuple[str, str]:
    """The hashes of the result and of the final State."""
    return digest(_json.encode(rules.result(state))), digest(_json.encode(state))


@dataclass
class Recorded:
    line: dict[str, Any]
    snapshot: dict[str, Any] | None


def play(case: Case, index: int) -> Recorded:
    """Play hand ``index`` of ``case`` with the recording policy."""
    rules = case.rules()
    options = case.options()
    seed = hand_seed(case, index)
    rng = random.Random(seed)
    dealer = None if index % 3 == 0 else rng.randrange(rules.seats)
    policies = [
        policy_for(case.game, "smart") if rng.random() < SMART_RATE else None
        for _ in range(rules.seats)
    ]
    time_out = rules.time_out()
    state = rules.new_hand(options, seed, dealer)
    hashes = Hashes(rules)
    actions: list[tuple[int, Any]] = []
    # One mid-hand State of this hand may become a snapshot; which step is chosen now.
    snap_at = rng.randrange(1, 40)
    snapshot: dict[str, Any] | None = None
    while not rules.is_over(state):
        if len(actions) == snap_at and snapshot is None:
            snapshot = {
                "i": index,
                "step": len(actions),
                "msgpack": base64.b64encode(msgspec.msgpack.encode(state)).decode(),
            }
        seat = rng.choice(rules.to_act(state))
        action = _choose(rules, state, seat, rng, policies[seat], time_out)
        state, events = rules.apply(state, seat, action)
        hashes.step(events)
        actions.append((seat, action))
        if len(actions) > 2000:
            raise RuntimeError(f"{case.name} hand {index} does not end")
    result, final = end_hashes(rules, state)
    line = {
        "i": index,
        "seed": seed.hex(),
        "dealer": dealer,
        "actions": actions,
        "events": hashes.events(),
        "result": result,
        "state": final,
    }
    return Recorded(line, snapshot)


def _choose(
    rules: GameRules, state: Any, seat: int, rng: random.Random, policy: Any, time_out: Any
) -> Any:
    timer = rules.pending_timer(state)
    waits = timer is not None and seat in timer.seats
    if waits and rng.random() < TIMEOUT_RATE:
        return time_out
    legal = rules.legal_actions(state, seat)
    if not legal:
        if waits:
            return time_out
        raise RuntimeError(f"seat {seat} is awaited but has no move and no timer")
    if policy is not None:
        action = policy.choose(rules.view(state, seat), rng)
        if action is not None:
            return action
    wins = [a for a in legal if _is_win(a)]
    if wins and rng.random() < RANDOM_TAKES_WIN:
        return rng.choice(wins)
    action = rng.choice(legal)
    rate = RARE.get(type(action).__name__)
    if rate is not None and rng.random() >= rate:
        others = [a for a in legal if type(a).__name__ not in RARE]
        action = rng.choice(others) if others else action
    return action


def _is_win(action: Any) -> bool:
    # Mahjong/Ka Wu Xing: DeclareWin or a mahjong claim; Tongits has no win action.
    return type(action).__name__ == "DeclareWin" or getattr(action, "kind", None) == "mahjong"


# -- the stored files -----------------------------------------------------------------


class Header(msgspec.Struct, kw_only=True):
    format: int
    game: str
    ruleset: str
    overrides: dict[str, Any]
    options: dict[str, Any]
    hands: int


class Hand(msgspec.Struct, kw_only=True):
    i: int
    seed: str
    dealer: int | None
    # raw JSON, decoded by the game's own action decoder as the gateway does
    actions: list[tuple[int, msgspec.Raw]]
    events: str
    result: str
    state: str


class Snapshot(msgspec.Struct, kw_only=True):
    i: int
    step: int
    msgpack: str

    def encoded(self) -> bytes:
        return base64.b64decode(self.msgpack)


def read_header(case: Case) -> Header:
    with gzip.open(case.path, "rb") as f:
        return msgspec.json.decode(f.readline(), type=Header)


def read_hands(case: Case) -> Iterator[Hand]:
    decode = msgspec.json.Decoder(Hand).decode
    with gzip.open(case.path, "rb") as f:
        f.readline()
        for line in f:
            yield decode(line)


def read_snapshots(case: Case) -> list[Snapshot]:
    return msgspec.json.decode(case.states_path.read_bytes(), type=list[Snapshot])


def replay(case: Case, hand: Hand, *, snapshot: Snapshot | None = None, resume: Any = None) -> Any:
    """Apply ``hand``'s actions and check every hash; returns the final State.

    With ``snapshot`` (of this hand), also check that the State at its step encodes to
    its bytes. With ``resume`` (a State at ``snapshot``'s step), play on from there
    instead of from the deal (the events before it are then not hashed).
    ``AssertionError`` names the first mismatch.
    """
    rules = case.rules()
    where = f"{case.name} hand {hand.i} (seed {hand.seed}, dealer {hand.dealer})"
    start = 0
    if resume is not None:
        assert snapshot is not None
        state, start = resume, snapshot.step
    else:
        state = rules.new_hand(case.options(), bytes.fromhex(hand.seed), hand.dealer)
    hashes = Hashes(rules)
    for step, (seat, raw) in enumerate(hand.actions[start:], start):
        if snapshot is not None and step == snapshot.step and resume is None:
            assert msgspec.msgpack.encode(state) == snapshot.encoded(), (
                f"{where}: the State before step {step} encodes differently"
            )
        action = rules.decode_action(raw)
        assert _json.encode(action) == bytes(raw), (
            f"{where} step {step}: the action {bytes(raw)!r} re-encodes as {_json.encode(action)!r}"
        )
        state, events = rules.apply(state, seat, action)
        hashes.step(events)
    assert rules.is_over(state), f"{where}: not over after its actions"
    result, final = end_hashes(rules, state)
    if resume is None:
        assert hashes.events() == hand.events, f"{where}: the emitted events differ"
    assert result == hand.result, f"{where}: the result differs"
    assert final == hand.state, f"{where}: the final State encodes differently"
    return state
