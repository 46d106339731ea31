"""A whole hand recorded as the engine worker records it, for the verifier tests (Python
and the browser's verify.js)."""

from __future__ import annotations

import hashlib
import random

import msgspec

from kalaro.games.base import derive_seed
from kalaro.games.registry import rules_for
from kalaro.proto.engine import HandRecord, Player


def play(game: str, rng: random.Random, dealer: int | None = None) -> HandRecord:
    """A whole hand of random legal actions (a time-out where a seat has none)."""
    rules = rules_for(game)
    options = rules.options({})
    server_seed = rng.randbytes(32)
    entropy = tuple(f"tap-{rng.random()}" for _ in range(rules.seats))
    state = rules.new_hand(options, derive_seed(server_seed, entropy), dealer)
    dealt = rules.dealt(state)
    actions: list[tuple[int, object]] = []
    while not rules.is_over(state):
        seat = rng.choice(rules.to_act(state))
        legal = rules.legal_actions(state, seat)
        action = rng.choice(legal) if legal else rules.time_out()
        state, _ = rules.apply(state, seat, action)
        actions.append((seat, msgspec.to_builtins(action)))
    result = rules.result(state)
    bet = 5
    return HandRecord(
        game=game, table_id="t1", hand_id=f"h-{game}", options=rules.options_dict(options),
        bet=bet,
        players=tuple(Player(user_id=f"u{i}", display_name=f"P{i}") for i in range(rules.seats)),
        dealer=dealer, seed_commitment=hashlib.sha256(server_seed).hexdigest(),
        server_seed=server_seed.hex(), entropy=entropy, actions=tuple(actions),
        initial_hands=dealt, result=msgspec.to_builtins(result),
        payments=tuple(p * bet for p in result.payments),
    )  # fmt: skip
