"""The ranked queue's table forming (services.ranked.matching)."""

from __future__ import annotations

import random
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kalaro.games.registry import UnknownGame, game_names, rules_for
from services.ranked.matching import (
    BAND_START,
    BAND_UNLIMITED_AFTER_S,
    MatchResult,
    QueueEntry,
    band,
    form_tables,
    seats_of,
)

NOW = 1_000_000_000


def _entry(
    user: str,
    rating: int = 1000,
    *,
    game: str = "tongits",
    bet: int = 10,
    waited_s: float = 0,
    addresses: tuple[str, ...] = (),
    devices: tuple[str, ...] = (),
) -> QueueEntry:
    return QueueEntry(
        user_id=user,
        game=game,
        bet=bet,
        rating=rating,
        joined_ms=NOW - int(waited_s * 1000),
        addresses=frozenset(addresses) or frozenset({f"ip-{user}"}),
        devices=frozenset(devices) or frozenset({f"dev-{user}"}),
    )


def _check(result: MatchResult, given: list[QueueEntry]) -> None:
    """What holds for every result: each player seated once or waiting, one game and
    stake per table, the game's size, no shared address or device at a table."""
    by_user = {e.user_id: e for e in given}
    seated = [u for t in result.tables for u in t.seats]
    assert len(seated) == len(set(seated))
    assert set(seated) | {e.user_id for e in result.waiting} == set(by_user)
    assert not set(seated) & {e.user_id for e in result.waiting}
    for table in result.tables:
        members = [by_user[u] for u in table.seats]
        assert len(members) == seats_of(table.game)
        assert {(e.game, e.bet) for e in members} == {(table.game, table.bet)}
        for i, a in enumerate(members):
            for b in members[i + 1 :]:
                assert not a.addresses & b.addresses and not a.devices & b.devices


def test_the_issue_scenario_six_players_two_sharing_an_address() -> None:
    queue = [_entry(f"p{i}") for i in range(6)]
    queue[4] = _entry("p4", addresses=("10.0.0.9",))
    queue[5] = _entry("p5", addresses=("10.0.0.9", "10.0.0.5"))
    for shuffle_seed in range(20):  # whatever order the store lists them in
        order = queue[:]
        random.Random(shuffle_seed).shuffle(order)
        result = form_tables(order, NOW, random.Random(1))
        _check(result, queue)
        assert len(result.tables) == 2 and result.waiting == ()
        assert not any({"p4", "p5"} <= set(t.seats) for t in result.tables)


def test_a_shared_device_also_keeps_two_accounts_apart() -> None:
    queue = [_entry("a", devices=("phone",)), _entry("b", devices=("phone",)), _entry("c")]
    result = form_tables(queue, NOW, random.Random(1))
    assert result.tables == () and len(result.waiting) == 3


def test_the_band_widens_with_the_wait() -> None:
    assert band(0) == BAND_START
    assert band(10_000) > band(5_000) > band(0)
    assert band(BAND_UNLIMITED_AFTER_S * 1000) == float("inf")
    far = [_entry("low", 1000), _entry("mid", 1400), _entry("high", 1800)]
    assert form_tables(far, NOW, random.Random(1)).tables == ()
    # The same three once the longest waiter's band reaches 800 points (28 s).
    waited = [_entry("low", 1000, waited_s=28), far[1], far[2]]
    (table,) = form_tables(waited, NOW, random.Random(1)).tables
    assert sorted(table.seats) == ["high", "low", "mid"]
    # And anyone at all after the unlimited wait.
    waited = [_entry("low", 0, waited_s=BAND_UNLIMITED_AFTER_S), far[1], _entry("x", 5000)]
    assert len(form_tables(waited, NOW, random.Random(1)).tables) == 1


def test_similar_ratings_sit_together() -> None:
    queue = [_entry(f"n{i}", 1000 + i) for i in range(3)]
    queue += [_entry(f"f{i}", 2000 + i) for i in range(3)]
    result = form_tables(queue, NOW, random.Random(3))
    assert sorted(sorted(t.seats) for t in result.tables) == [
        ["f0", "f1", "f2"],
        ["n0", "n1", "n2"],
    ]


def test_games_and_stakes_never_mix() -> None:
    queue = [_entry("t1"), _entry("t2"), _entry("t3", bet=20), _entry("m1", game="mahjong")]
    queue += [_entry(f"k{i}", game="kawuxing", waited_s=90) for i in range(2)]
    queue += [_entry(f"m{i}", game="mahjong", waited_s=90) for i in range(2, 5)]
    result = form_tables(queue, NOW, random.Random(1))
    _check(result, queue)
    assert [t.game for t in result.tables] == ["mahjong"]
    assert {e.user_id for e in result.waiting} == {"t1", "t2", "t3", "k0", "k1"}


def test_seats_are_a_seeded_shuffle() -> None:
    queue = [_entry(f"p{i}", 1000 + i) for i in range(4)]
    layouts = {form_tables(queue, NOW, random.Random(s), seats_for=lambda _: 4).tables[0].seats
               for s in range(30)}  # fmt: skip
    assert len(layouts) > 5  # not a fixed order
    assert all(sorted(seats) == ["p0", "p1", "p2", "p3"] for seats in layouts)
    assert form_tables(queue, NOW, random.Random(5)) == form_tables(queue, NOW, random.Random(5))


def test_the_longest_waiter_is_served_first() -> None:
    queue = [_entry(f"p{i}", 1000 + 10 * i, waited_s=i) for i in range(4)]  # p3 waited most
    (table,) = form_tables(queue, NOW, random.Random(1)).tables
    assert "p3" in table.seats and sorted(table.seats) == ["p1", "p2", "p3"]


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="queued twice"):
        form_tables([_entry("a"), _entry("a")], NOW, random.Random(1))
    with pytest.raises(UnknownGame):
        form_tables([_entry(f"u{i}", game="chess") for i in range(3)], NOW, random.Random(1))


def test_table_sizes_are_the_registry_s() -> None:
    assert {g: seats_of(g) for g in game_names()} == {"tongits": 3, "mahjong": 4, "kawuxing": 3}
    assert all(seats_of(g) == rules_for(g).seats for g in game_names())


_queues = st.lists(
    st.builds(
        lambda i, game, bet, rating, waited, ip, dev: _entry(
            f"u{i}",
            rating,
            game=game,
            bet=bet,
            waited_s=waited,
            addresses=(f"ip{ip}",),
            devices=(f"d{dev}",),
        ),
        st.integers(0, 10_000),
        st.sampled_from(["tongits", "mahjong", "kawuxing"]),
        st.sampled_from([10, 20]),
        st.integers(0, 3000),
        st.floats(0, 90),
        st.integers(0, 40),
        st.integers(0, 60),
    ),
    max_size=60,
    unique_by=lambda e: e.user_id,
)


@given(_queues, st.integers(0, 2**32))
def test_every_result_keeps_the_rules(queue: list[QueueEntry], seed: int) -> None:
    result = form_tables(queue, NOW, random.Random(seed))
    _check(result, queue)
    assert form_tables(queue, NOW, random.Random(seed)) == result  # deterministic


@given(_queues, st.integers(0, 2**32))
def test_after_the_unlimited_wait_strangers_all_sit(queue: list[QueueEntry], seed: int) -> None:
    # Everyone past the unlimited wait, nobody sharing anything: each (game, stake)
    # leaves fewer players waiting than one table needs.
    strangers = [
        _entry(e.user_id, e.rating, game=e.game, bet=e.bet, waited_s=BAND_UNLIMITED_AFTER_S)
        for e in queue
    ]
    result = form_tables(strangers, NOW, random.Random(seed))
    _check(result, strangers)
    left: dict[tuple[str, int], int] = {}
    for e in result.waiting:
        left[(e.game, e.bet)] = left.get((e.game, e.bet), 0) + 1
    assert all(n < seats_of(game) for (game, _), n in left.items())


def test_three_thousand_players_are_matched_in_a_tick() -> None:
    rng = random.Random(34)
    queue = [
        QueueEntry(
            user_id=f"u{i}",
            game=rng.choice(["tongits", "mahjong", "kawuxing"]),
            bet=rng.choice([5, 10, 20, 50]),
            rating=int(rng.gauss(1500, 300)),
            joined_ms=NOW - rng.randrange(0, 30_000),
            addresses=frozenset({f"ip{rng.randrange(2500)}"}),
            devices=frozenset({f"d{i}"}),
        )
        for i in range(3000)
    ]
    for game in game_names():  # the registry imports a game's rules once: not timed
        seats_of(game)
    started = time.perf_counter()
    result = form_tables(queue, NOW, random.Random(1))
    took = time.perf_counter() - started
    print(f"3,000 waiting: {len(result.tables)} tables in {took * 1000:.1f} ms")
    _check(result, queue)
    assert sum(len(t.seats) for t in result.tables) > 2500
    assert took < 0.5, f"{took:.3f} s for 3,000 waiting players"  # ~20 ms on a quiet core
