"""The simulator with every policy: thousands of hands where each move is legal, smart
beats random, runs repeat exactly from the seed, and the report's statistics are right.

``simulate`` raises :class:`IllegalChoice` the moment a policy picks an action its view
did not list, so a run that completes is a run of legal moves only.
"""

from __future__ import annotations

import math
import random
import subprocess
import sys
from typing import Any

import pytest

from kalaro.bots import RandomPolicy, UnknownPolicy, policy_for
from kalaro.bots.simulate import (
    IllegalChoice,
    Report,
    SeatsMismatch,
    mean_interval,
    simulate,
    wilson_interval,
)
from kalaro.games.registry import UnknownGame, game_names
from kalaro.games.tongits import TimeOut

# (game, ruleset, seats, hands): about 4,000 hands in all, each move checked
LEGAL_RUNS = [
    ("tongits", "kalaro", "random,random,random", 1000),
    ("tongits", "kalaro", "smart,random,random", 1000),
    ("tongits", "kalaro", "smart,smart,smart", 400),
    ("tongits", "classic", "smart,random,smart", 500),
    ("mahjong", "kalaro", "random,random,random,random", 600),
    ("mahjong", "kalaro", "smart,random,random,random", 400),
    ("mahjong", "kalaro", "smart,smart,smart,smart", 100),
]


def _check_report(report: Report, hands: int, seats: list[str]) -> None:
    assert report.hands == hands
    assert report.actions >= hands  # every hand took moves
    assert [p.policy for p in report.players] == seats
    # every hand is won by someone, shared, or by nobody
    total_wins = sum(p.wins for p in report.players)
    assert math.isclose(total_wins + report.no_winner, hands)
    # credits only move between players
    assert math.isclose(sum(p.mean for p in report.players), 0.0, abs_tol=1e-9)
    assert sum(count for _, count in report.endings) == hands


# `make test` plays a tenth of each run; `make test-deep` the whole run.
_RUNS = [
    pytest.param(game, ruleset, seats, hands // 10, id=f"{game}-{ruleset}-{seats}-short")
    for game, ruleset, seats, hands in LEGAL_RUNS
] + [
    pytest.param(*run, marks=pytest.mark.deep, id=f"{run[0]}-{run[1]}-{run[2]}")
    for run in LEGAL_RUNS
]


@pytest.mark.parametrize(("game", "ruleset", "seats", "hands"), _RUNS)
def test_bots_only_ever_send_legal_actions(game: str, ruleset: str, seats: str, hands: int) -> None:
    names = seats.split(",")
    report = simulate(game, names, hands, seed=11, ruleset=ruleset)
    _check_report(report, hands, names)


@pytest.mark.deep  # a margin needs hundreds of hands
@pytest.mark.parametrize(("game", "hands"), [("tongits", 300), ("mahjong", 200)])
def test_smart_beats_random_by_a_clear_margin(game: str, hands: int) -> None:
    seats = 3 if game == "tongits" else 4
    report = simulate(game, ["smart"] + ["random"] * (seats - 1), hands, seed=5)
    smart, rand = report.policy("smart"), report.policy("random")
    assert smart.win_low > 1 / seats, report.table()
    assert smart.mean_low > 0 > rand.mean_high, report.table()


@pytest.mark.parametrize("game", ["tongits", "mahjong"])
def test_a_run_repeats_exactly_from_its_seed(game: str) -> None:
    seats = ["smart", "random", "random"] + (["smart"] if game == "mahjong" else [])

    def outcome(seed: int) -> tuple[Any, ...]:
        r = simulate(game, seats, 30, seed=seed)
        return (r.actions, r.players, r.endings)

    assert outcome(3) == outcome(3)
    assert outcome(3) != outcome(4)


class _Cheat:
    """Plays random legal moves, but now and then sends the worker's own ``TimeOut``."""

    name = "cheat"

    def choose(self, view: Any, rng: random.Random) -> Any:
        return TimeOut() if rng.random() < 0.05 else rng.choice(view.legal)


def test_an_illegal_choice_stops_the_run() -> None:
    policies = [_Cheat(), RandomPolicy("tongits"), RandomPolicy("tongits")]
    with pytest.raises(IllegalChoice, match="cheat"):
        simulate("tongits", ["cheat", "random", "random"], 50, policies=policies)


class _Silent:
    """Never answers a Draw call (returns None): the Fight/Fold window must time out."""

    name = "silent"

    def choose(self, view: Any, rng: random.Random) -> Any:
        if view.phase == "answers":
            return None
        return rng.choice(view.legal)


def test_a_seat_that_does_not_answer_times_out_as_at_the_table() -> None:
    policies = [_Silent(), _Silent(), _Silent()]
    report = simulate("tongits", ["silent"] * 3, 100, seed=2, policies=policies)
    _check_report(report, 100, ["silent"] * 3)
    assert dict(report.endings).get("draw", 0) > 0  # Draw calls were settled by time-outs


@pytest.mark.deep  # a statistic over 900 hands
def test_players_move_round_the_table_so_position_does_not_bias() -> None:
    # random against random in every chair: no player stands out
    report = simulate("tongits", ["random"] * 3, 900, seed=8)
    for player in report.players:
        assert player.win_low < 1 / 3 < player.win_high or abs(player.win_rate - 1 / 3) < 0.05


def test_the_report_names_players_and_pools_policies() -> None:
    report = simulate("tongits", ["smart", "random", "random"], 30, seed=1)
    assert [p.label for p in report.players] == ["seat 1", "seat 2", "seat 3"]
    rand = report.policy("random")
    assert rand.hands == 60
    assert math.isclose(rand.wins, report.players[1].wins + report.players[2].wins)
    table = report.table()
    assert "hands/s" in table and "by policy" in table and "95% CI" in table


@pytest.mark.parametrize(
    ("seats", "error"),
    [
        (["smart", "random"], SeatsMismatch),
        (["smart", "random", "random", "random"], SeatsMismatch),
        (["smart", "clever", "random"], UnknownPolicy),
    ],
)
def test_bad_seats_are_refused_with_a_clear_error(seats: list[str], error: type[Exception]) -> None:
    with pytest.raises(error) as caught:
        simulate("tongits", seats, 1)
    message = str(caught.value)
    assert "3 seats" in message or "clever" in message


def test_unknown_games_are_refused() -> None:
    with pytest.raises(UnknownGame, match="chess"):
        simulate("chess", ["smart"], 1)
    with pytest.raises(UnknownGame):
        policy_for("chess", "smart")


@pytest.mark.parametrize("game", game_names())
def test_every_game_has_a_smart_policy(game: str) -> None:
    assert policy_for(game, "smart").name == "smart"


def test_a_smart_policy_loads_only_its_own_game() -> None:
    # a fresh interpreter: this one has loaded every bot already
    code = (
        "import sys; from kalaro.bots import policy_for; policy_for('tongits', 'smart'); "
        "print(sorted(m for m in sys.modules if m.startswith('kalaro.bots.')))"
    )
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert ran.stdout.strip() == "['kalaro.bots.tongits']"


def test_wilson_interval() -> None:
    low, high = wilson_interval(50, 100)
    assert math.isclose(low, 0.4038, abs_tol=1e-3) and math.isclose(high, 0.5962, abs_tol=1e-3)
    low, high = wilson_interval(0, 10)
    assert low == 0.0 and 0.27 < high < 0.28
    assert wilson_interval(2.5, 10)[0] < 0.25 < wilson_interval(2.5, 10)[1]  # split wins


def test_mean_interval() -> None:
    values = [2, -1, -1, 4, 0, -2, 1, 1]
    n = len(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    low, high = mean_interval(sum(values), sum(v * v for v in values), n)
    assert math.isclose(low, mean - 1.959964 * sd / math.sqrt(n), rel_tol=1e-6)
    assert math.isclose(high, mean + 1.959964 * sd / math.sqrt(n), rel_tol=1e-6)
