"""Ratings of ranked hands (services.ranked.ratings): who is rated, the order of finish,
the direction of each change, tiers, and that applying a hand is a pure function."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kalaro.proto.engine import HandRecord, Player
from services.ranked.ratings import (
    TIERS,
    NotRateable,
    Rating,
    finish_places,
    is_rateable,
    rate_hand,
    shown_rating,
    tier,
    unrated_reason,
)
from tests.unit.hand_records import play

ROOT = Path(__file__).resolve().parents[3]


def _record(
    payments: tuple[int, ...], result: Any = None, hand_id: str = "h1", **flags: Any
) -> HandRecord:
    if result is None:  # the best-paid seat won
        result = {"winners": [max(range(len(payments)), key=lambda s: payments[s])]}
    fields: dict[str, Any] = {"ranked": True, **flags}
    return HandRecord(
        game="tongits", table_id="t1", hand_id=hand_id, options={}, bet=10,
        players=tuple(Player(user_id=f"u{i}", display_name=f"P{i}") for i in range(len(payments))),
        dealer=0, seed_commitment="", server_seed="", entropy=(), actions=(),
        initial_hands=(), result=result, payments=payments, **fields,
    )  # fmt: skip


def test_the_winner_rises_and_the_losers_fall() -> None:
    changes = rate_hand({}, _record((20, -10, -10)))
    winner, *losers = changes
    assert winner.place == 1 and winner.change > 0 and winner.after.mu > winner.before.mu
    for loser in losers:
        assert loser.place == 2 and loser.change < 0 and loser.after.mu < loser.before.mu
    assert [c.after.hands for c in changes] == [1, 1, 1]
    assert all(c.after.last_change == c.change for c in changes)
    assert winner.shown == shown_rating(winner.after) and winner.tier == tier(winner.shown)


@pytest.mark.parametrize("game", ["tongits", "mahjong", "kawuxing"])
def test_a_real_ranked_hand_of_each_game_rates_its_winner_up(game: str) -> None:
    rng = random.Random(7)
    record = play(game, rng)
    while not is_rateable(msgspec.structs.replace(record, ranked=True)):  # a drawn hand
        record = play(game, rng)
    record = msgspec.structs.replace(record, ranked=True)
    changes = rate_hand({}, record)
    first = [c for c in changes if c.place == 1]
    assert first and all(c.change > 0 for c in first)
    assert len(changes) == len(record.players)


@pytest.mark.parametrize(
    ("flags", "reason"),
    [
        ({"ranked": False}, "not a ranked table"),
        ({"practice": True}, "a practice hand"),
        ({"private": True}, "a private table"),
        ({"voided": True}, "a voided hand"),
    ],
)
def test_only_ranked_decided_hands_are_rated(flags: dict[str, bool], reason: str) -> None:
    record = _record((20, -10, -10), **flags)
    assert unrated_reason(record) == reason and not is_rateable(record)
    with pytest.raises(NotRateable, match=reason):
        rate_hand({}, record)


def test_a_hand_with_a_bot_is_not_rated() -> None:
    record = _record((20, -10, -10))
    bot = Player(user_id="bot-1", display_name="Bot", is_bot=True)
    record = msgspec.structs.replace(record, players=(*record.players[:2], bot))
    assert unrated_reason(record) == "a bot played"


def test_a_drawn_hand_says_nothing_and_is_not_rated() -> None:
    assert unrated_reason(_record((0, 0, 0, 0), result={"winner": None})) is not None
    assert is_rateable(_record((0, 0, 0, 0), result={"winner": 2}))  # a win paid nothing


def test_ties_share_a_place_and_move_alike() -> None:
    record = _record((30, -15, -15, 0), result={"winners": [0]})
    assert finish_places(record) == (1, 3, 3, 2)
    changes = rate_hand({}, record)
    assert changes[1].after == changes[2].after
    # Tongits lists tied winners: both first, even when paid differently.
    assert finish_places(_record((12, 8, -20), result={"winners": [0, 1]})) == (1, 2, 3)
    assert finish_places(_record((10, 10, -20), result={"winners": [0, 1]})) == (1, 1, 3)


def test_applying_a_hand_is_pure_and_a_replay_is_refused() -> None:
    record = _record((20, -10, -10))
    current = {"u0": Rating(mu=30.0, sigma=4.0, hands=12)}
    assert rate_hand(current, record) == rate_hand(current, record)
    after = {c.user_id: c.after for c in rate_hand(current, record)}
    with pytest.raises(NotRateable, match="already applied"):
        rate_hand(after, record)
    again = rate_hand(after, msgspec.structs.replace(record, hand_id="h2"))
    assert [c.after.hands for c in again] == [14, 2, 2]


def test_tiers_climb_with_the_shown_rating() -> None:
    assert tier(0) == "Bronze" and tier(shown_rating(Rating())) == "Bronze"
    for (name, floor), (below, _) in zip(TIERS[1:], TIERS, strict=False):
        assert tier(floor) == name and tier(floor - 1) == below
    assert tier(10_000) == "Master"
    assert shown_rating(Rating()) == 1000
    assert shown_rating(Rating(mu=-50.0, sigma=8.0)) == 0


_ratings = st.builds(
    Rating, mu=st.floats(0.0, 50.0), sigma=st.floats(0.5, 8.4), hands=st.integers(0, 999)
)


@given(
    st.lists(_ratings, min_size=2, max_size=4),
    st.lists(st.integers(-100, 100), min_size=4, max_size=4),
)
def test_the_first_place_gains_and_the_last_loses_skill(
    before: list[Rating], pay: list[int]
) -> None:
    payments = tuple(pay[: len(before)])
    record = _record(payments)
    if not is_rateable(record):
        return
    changes = rate_hand({f"u{i}": r for i, r in enumerate(before)}, record)
    last = max(c.place for c in changes)
    for change in changes:
        if change.place == 1:
            assert change.after.mu > change.before.mu and change.change >= 0
        elif change.place == last and [c.place for c in changes].count(last) == 1:
            # (Tied last with a stronger player is a sign of strength: mu may rise.)
            # openskill's variance floor (kappa 1e-4) can nudge a hopeless underdog's mu
            # up by about that much; never more.
            assert change.after.mu < change.before.mu + 1e-3
        assert change.after.sigma <= change.before.sigma


def test_the_rules_modules_import_no_io() -> None:
    """Issue 33's rule for pure modules: importing them loads no NATS, Redis or SQL."""
    probe = (
        "import sys, services.ranked.ratings, services.ranked.matching, "
        "services.ranked.fairplay\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'nats', 'redis', 'hiredis', 'sqlalchemy', 'asyncpg', 'aiosqlite', 'litestar'}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
