"""Replaying a hand from its record: the one replay that the replay page, ``kalaro
verify`` and the tests share.

A record holds what the server revealed at the end (options, dealer, server seed,
the players' entropy) and every action in order, time-outs included. The deal is the
seeded shuffle of (seed, entropy), and each action goes through the same pure rules the
engine applied, so every state the table went through, hidden cards included, comes
back: :func:`replay` yields them one by one.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

import msgspec

from kalaro.games.base import IllegalAction, derive_seed
from kalaro.games.registry import GameRules, rules_for
from kalaro.proto.engine import HandRecord


class ReplayError(Exception):
    """An action of the record that the rules refuse (``index`` counts from 0)."""

    def __init__(self, index: int, seat: int, reason: str) -> None:
        super().__init__(f"action {index} by seat {seat} is refused: {reason}")
        self.index = index
        self.seat = seat


class Step(NamedTuple):
    """One state of the hand: the deal (``actor`` None, no events), then one per action."""

    actor: int | None
    state: Any
    events: tuple[Any, ...]


def rules_of(record: HandRecord) -> tuple[GameRules, Any]:
    """The record's game rules and its parsed options; ``UnknownGame`` or
    ``ValueError`` when the record names a game or options no rules know."""
    rules = rules_for(record.game)
    return rules, rules.options(record.options)


def _seed(record: HandRecord) -> bytes:
    """The deal's seed from the revealed server seed and the entropy; ``ValueError``
    when the seed is not hex."""
    return derive_seed(bytes.fromhex(record.server_seed), record.entropy)


def replay(record: HandRecord) -> Iterator[Step]:
    """Every state of the hand in order: the deal, then the state after each recorded
    action (:func:`kalaro.games.contract.replay_steps`, the one replay). Raises
    :class:`ReplayError` at the first action the rules refuse (what was yielded before
    it stands); ``ValueError`` when the seed is not hex or the options not the game's."""
    rules, options = rules_of(record)
    refused: list[ReplayError] = []

    def moves() -> Iterator[tuple[int, Any]]:
        for index, (seat, action_json) in enumerate(record.actions):
            try:
                yield seat, msgspec.convert(action_json, rules.action_type)
            except msgspec.ValidationError as exc:
                refused.append(ReplayError(index, seat, str(exc)))
                return

    steps = rules.replay_steps(options, _seed(record), moves(), record.dealer)
    yielded = 0  # the deal, then one state per action applied
    while True:
        try:
            seat, state, events = next(steps)
        except StopIteration:
            break
        except IllegalAction as exc:
            index = yielded - 1  # the action being applied
            raise ReplayError(index, record.actions[index][0], str(exc)) from None
        yield Step(seat, state, tuple(events))
        yielded += 1
    if refused:
        raise refused[0]


__all__ = ["ReplayError", "Step", "replay", "rules_of"]
