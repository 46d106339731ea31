"""Real finished hands for the history stats tests: played by bots through the pure
rules, recorded as the engine records them (payments = units x bet)."""

from __future__ import annotations

import hashlib
import random

import msgspec

from kalaro.bots import legal_actions, policy_for
from kalaro.games.registry import rules_for
from kalaro.proto.engine import HandRecord, Player
from kalaro.proto.history import StoredHand

GAMES = ("tongits", "mahjong", "kawuxing")


def played(
    game: str, seed: int, user_ids: tuple[str, ...], *, bet: int = 10, hand_id: str = ""
) -> HandRecord:
    """One hand of ``game`` between ``smart`` bots seated as ``user_ids`` (a name
    ending in ``-bot`` is marked as a bot)."""
    rules = rules_for(game)
    assert len(user_ids) == rules.seats
    options = rules.options({})
    server_seed = hashlib.sha256(f"stats:{game}:{seed}".encode()).digest()
    state = rules.new_hand(options, server_seed, 0)
    policies = [policy_for(game, "smart") for _ in user_ids]
    rng = random.Random(seed)
    actions: list[tuple[int, object]] = []
    while not rules.is_over(state):
        for chair in rules.to_act(state):
            view = rules.view(state, chair)
            if not legal_actions(game, view):
                continue
            action = policies[chair].choose(view, rng)
            if action is None:
                continue
            state, _ = rules.apply(state, chair, action)
            actions.append((chair, msgspec.to_builtins(action)))
            break
        else:
            timer = rules.pending_timer(state)
            assert timer is not None and timer.seats
            state, _ = rules.apply(state, timer.seats[0], rules.time_out())
            actions.append((timer.seats[0], msgspec.to_builtins(rules.time_out())))
    result = rules.result(state)
    return HandRecord(
        game=game,
        table_id=f"t-{seed}",
        hand_id=hand_id or f"{game}-{seed}",
        options=msgspec.to_builtins(options),
        bet=bet,
        players=tuple(
            Player(user_id=u, display_name=u, is_bot=u.endswith("-bot")) for u in user_ids
        ),
        dealer=0,
        seed_commitment=hashlib.sha256(server_seed).hexdigest(),
        server_seed=server_seed.hex(),
        entropy=(),
        actions=tuple(actions),
        initial_hands=(),
        result=msgspec.json.decode(msgspec.json.encode(result)),  # as a stored record has it
        payments=tuple(units * bet for units in result.payments),
    )


def stored_played(
    game: str, seed: int, user_ids: tuple[str, ...], *, practice: bool = False, prefix: str = ""
) -> StoredHand:
    record = played(
        game, seed, user_ids, bet=0 if practice else 10, hand_id=f"{prefix}{game}-{seed}"
    )
    return StoredHand(record=record, finished_ms=1_000_000 + seed, practice=practice)
