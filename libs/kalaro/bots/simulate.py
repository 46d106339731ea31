"""Play bots against each other in-process with the pure engines: ``kalaro simulate``.

:func:`simulate` deals ``hands`` hands of a game, each seat's policy choosing from
``rules.view(state, seat)`` exactly as a bot at a live table would, and reports the
speed, each player's win rate (95% Wilson interval) and average result in units of the
bet (95% normal interval). A policy that returns anything outside its view's legal
actions stops the run with :class:`IllegalChoice`: the simulator doubles as the check
that bots only ever send legal moves.

How a run is laid out, so it is fair and repeatable:

* Hand ``h`` is dealt from ``sha256(game, seed, h)``; each player's policy draws from its
  own ``random.Random`` seeded from the run seed. Same seed, same run.
* The players (the ``seats`` list) move one chair round the table every hand, so each
  sits in every position equally often and position (the Tongits dealer's extra card,
  the Mahjong dealer's first draw) does not bias the comparison.
* The deal follows the rules: the first dealer comes from the seed; afterwards the
  player in the chair ``result.next_dealer`` names deals, wherever they now sit.
* When the seats the hand waits on have nothing to say (a policy returned ``None``),
  the pending timer runs out: ``rules.time_out()`` is applied as the worker would.
"""

from __future__ import annotations

import hashlib
import math
import random
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TextIO

from kalaro.bots import Policy, legal_actions, policy_for
from kalaro.games.registry import rules_for

__all__ = [
    "IllegalChoice",
    "PlayerStats",
    "Report",
    "SeatsMismatch",
    "Stuck",
    "mean_interval",
    "simulate",
    "wilson_interval",
]

_Z95 = 1.959963984540054


class IllegalChoice(RuntimeError):
    """A policy chose an action that its view did not list as legal."""


class Stuck(RuntimeError):
    """The hand waits on a seat that will not act and no timer would end the wait."""


class SeatsMismatch(ValueError):
    """The seats list does not have one policy per seat of the game."""


def wilson_interval(successes: float, n: int, z: float = _Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (``successes`` may be fractional)."""
    if n <= 0:
        return (0.0, 1.0)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(max(p * (1 - p) / n + z * z / (4 * n * n), 0.0)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


def mean_interval(total: float, squares: float, n: int, z: float = _Z95) -> tuple[float, float]:
    """Mean ± z·sd/√n from a sample's sum and sum of squares (sample sd, n - 1)."""
    if n <= 0:
        return (0.0, 0.0)
    mean = total / n
    if n == 1:
        return (mean, mean)
    variance = max(squares - n * mean * mean, 0.0) / (n - 1)
    half = z * math.sqrt(variance / n)
    return (mean - half, mean + half)


@dataclass(frozen=True)
class PlayerStats:
    """Results of one player (an entry of the seats list) or of every player of a policy."""

    label: str
    policy: str
    hands: int  # hands played (per policy: hands × players of that policy)
    wins: float  # a win shared by k tied winners counts 1/k
    win_rate: float
    win_low: float
    win_high: float
    mean: float  # average result, units of the bet
    mean_low: float
    mean_high: float


@dataclass(frozen=True)
class Report:
    game: str
    ruleset: str
    seed: int
    hands: int
    seconds: float  # wall clock
    cpu_seconds: float  # this process's CPU time: the speed on a busy machine
    actions: int  # every action applied, time-outs included
    players: tuple[PlayerStats, ...]
    policies: tuple[PlayerStats, ...]
    endings: tuple[tuple[str, int], ...]
    no_winner: int  # hands nobody won (Mahjong tabla, Tongits with nobody opened)

    @property
    def hands_per_second(self) -> float:
        return self.hands / self.seconds if self.seconds > 0 else float("inf")

    @property
    def hands_per_cpu_second(self) -> float:
        return self.hands / self.cpu_seconds if self.cpu_seconds > 0 else float("inf")

    def policy(self, name: str) -> PlayerStats:
        return next(p for p in self.policies if p.policy == name)

    def table(self) -> str:
        """The report for people: speed, endings, then players and policies."""
        lines = [
            f"{self.game} ({self.ruleset}), {self.hands} hands, seed {self.seed}: "
            f"{self.seconds:.1f} s, {self.hands_per_second:,.0f} hands/s, "
            f"{self.actions / max(self.hands, 1):.1f} actions/hand",
            "endings: "
            + ", ".join(f"{name} {count}" for name, count in self.endings)
            + f" (no winner {self.no_winner})",
            "",
        ]
        header = (
            f"{'':<10}{'policy':<8}{'hands':>7}{'wins':>9}{'win rate':>10}"
            f"{'95% CI':>18}{'avg result':>12}{'95% CI':>18}"
        )
        lines += [header, "-" * len(header)]
        for stats in self.players:
            lines.append(_row(stats))
        lines += ["", "by policy", header, "-" * len(header)]
        for stats in self.policies:
            lines.append(_row(stats))
        return "\n".join(lines)


def _row(s: PlayerStats) -> str:
    win_ci = f"[{s.win_low:6.1%}, {s.win_high:6.1%}]"
    mean_ci = f"[{s.mean_low:+6.2f}, {s.mean_high:+6.2f}]"
    return (
        f"{s.label:<10}{s.policy:<8}{s.hands:>7}{s.wins:>9.1f}{s.win_rate:>10.1%}"
        f"{win_ci:>18}{s.mean:>+12.2f}{mean_ci:>18}"
    )


class _Tally:
    """Running wins and results of one player or policy."""

    __slots__ = ("n", "squares", "total", "wins")

    def __init__(self) -> None:
        self.n = 0
        self.wins = 0.0
        self.total = 0.0
        self.squares = 0.0

    def add(self, win: float, units: int) -> None:
        self.n += 1
        self.wins += win
        self.total += units
        self.squares += units * units

    def merge(self, other: _Tally) -> None:
        self.n += other.n
        self.wins += other.wins
        self.total += other.total
        self.squares += other.squares

    def stats(self, label: str, policy: str) -> PlayerStats:
        low, high = wilson_interval(self.wins, self.n)
        mean_low, mean_high = mean_interval(self.total, self.squares, self.n)
        return PlayerStats(
            label=label,
            policy=policy,
            hands=self.n,
            wins=self.wins,
            win_rate=self.wins / self.n if self.n else 0.0,
            win_low=low,
            win_high=high,
            mean=self.total / self.n if self.n else 0.0,
            mean_low=mean_low,
            mean_high=mean_high,
        )


def hand_seed(game: str, seed: int, hand: int) -> bytes:
    """The deal seed of hand number ``hand`` of a run."""
    return hashlib.sha256(f"kalaro-simulate\x00{game}\x00{seed}\x00{hand}".encode()).digest()


def simulate(
    game: str,
    seats: Sequence[str],
    hands: int,
    seed: int = 0,
    progress: bool = False,
    *,
    ruleset: str = "kalaro",
    policies: Sequence[Policy] | None = None,
    out: TextIO | None = None,
) -> Report:
    """Play ``hands`` hands of ``game`` between the policies named in ``seats``.

    ``seats`` has one policy name per seat of the game (``["smart", "random",
    "random"]``); ``policies`` may pass the policy objects themselves instead (e.g. a
    tuned variant), ``seats`` then only labels them. ``progress`` draws a bar on
    ``out`` (stderr). Raises :class:`SeatsMismatch` for a wrong number of seats,
    ``UnknownGame``/``UnknownPolicy`` for unknown names, ``ValueError`` for an unknown
    ruleset and :class:`IllegalChoice` if a policy ever breaks the rules.
    """
    rules = rules_for(game)
    if len(seats) != rules.seats:
        raise SeatsMismatch(
            f"{game} is played by {rules.seats} seats; got {len(seats)} "
            f"({', '.join(seats) or 'none'}): give one policy per seat, "
            f"e.g. --seats {','.join(['smart'] + ['random'] * (rules.seats - 1))}"
        )
    if hands < 0:
        raise ValueError("hands must not be negative")
    if policies is None:
        policies = [policy_for(game, name) for name in seats]
    elif len(policies) != len(seats):
        raise SeatsMismatch("give one policy object per seat")
    options = rules.options({"ruleset": ruleset})
    n = rules.seats
    rngs = [random.Random(f"kalaro-simulate:{game}:{seed}:{player}") for player in range(n)]
    tallies = [_Tally() for _ in range(n)]
    endings: Counter[str] = Counter()
    winners_of = rules.winners
    time_out = rules.time_out()
    bar = _ProgressBar(hands, out or sys.stderr) if progress else None

    actions = 0
    no_winner = 0
    dealer: int | None = None  # the first dealer comes from the first hand's seed
    started = time.perf_counter()
    cpu_started = time.process_time()
    for h in range(hands):
        # player p sits in chair (p + h) % n this hand
        player_at = [(chair - h) % n for chair in range(n)]
        state = rules.new_hand(options, hand_seed(game, seed, h), dealer)
        while not rules.is_over(state):
            moved = False
            for chair in rules.to_act(state):
                view = rules.view(state, chair)
                legal = legal_actions(game, view)
                if not legal:
                    continue
                player = player_at[chair]
                action = policies[player].choose(view, rngs[player])
                if action is None:
                    continue
                if action not in legal:
                    raise IllegalChoice(
                        f"{seats[player]} (seat {player + 1}, chair {chair}) chose {action!r}, "
                        f"not among the {len(legal)} legal actions, in hand {h} of seed {seed}"
                    )
                state, _ = rules.apply(state, chair, action)
                actions += 1
                moved = True
                break  # who may act next depends on that move
            if moved:
                continue
            timer = rules.pending_timer(state)
            if timer is None or not timer.seats:
                raise Stuck(f"hand {h}: seats {rules.to_act(state)} will not act and no timer runs")
            state, _ = rules.apply(state, timer.seats[0], time_out)
            actions += 1
        outcome = rules.result(state)
        assert outcome is not None  # is_over
        winners = winners_of(outcome)
        endings[outcome.ending] += 1
        if not winners:
            no_winner += 1
        for chair in range(n):
            share = 1 / len(winners) if chair in winners else 0.0
            tallies[player_at[chair]].add(share, outcome.payments[chair])
        # the player in the chair the result names deals next, wherever they sit next
        dealer_player = player_at[outcome.next_dealer]
        dealer = (dealer_player + h + 1) % n
        if bar is not None:
            bar.update(h + 1, time.perf_counter() - started)
    seconds = time.perf_counter() - started
    cpu_seconds = time.process_time() - cpu_started
    if bar is not None:
        bar.close()

    names = list(seats)
    players = tuple(tallies[p].stats(f"seat {p + 1}", names[p]) for p in range(n))
    by_policy: list[PlayerStats] = []
    for name in dict.fromkeys(names):
        pooled = _Tally()
        for p in range(n):
            if names[p] == name:
                pooled.merge(tallies[p])
        by_policy.append(pooled.stats(name, name))
    return Report(
        game=game,
        ruleset=ruleset,
        seed=seed,
        hands=hands,
        seconds=seconds,
        cpu_seconds=cpu_seconds,
        actions=actions,
        players=players,
        policies=tuple(by_policy),
        endings=tuple(sorted(endings.items(), key=lambda item: -item[1])),
        no_winner=no_winner,
    )


class _ProgressBar:
    """A one-line ``\\r`` progress bar with the current speed; redrawn at most 10×/s."""

    _WIDTH = 30

    def __init__(self, total: int, out: TextIO) -> None:
        self._total = total
        self._out = out
        self._drawn_at = -1.0

    def update(self, done: int, elapsed: float) -> None:
        if done < self._total and elapsed - self._drawn_at < 0.1:
            return
        self._drawn_at = elapsed
        filled = self._WIDTH * done // self._total if self._total else self._WIDTH
        rate = done / elapsed if elapsed > 0 else 0.0
        self._out.write(
            f"\r[{'#' * filled}{'.' * (self._WIDTH - filled)}] "
            f"{done}/{self._total} hands  {rate:,.0f} hands/s"
        )
        self._out.flush()

    def close(self) -> None:
        self._out.write("\n")
        self._out.flush()


def main(
    game: str,
    seats: str,
    hands: int,
    seed: int,
    ruleset: str,
    progress: bool,
    out: TextIO | None = None,
) -> int:
    """``kalaro simulate``: run and print the report; a clear message and 2 on bad input."""
    names = [name.strip() for name in seats.split(",") if name.strip()]
    try:
        if hands < 1:
            raise ValueError(f"--hands must be at least 1, not {hands}")
        # check every name before the first hand, so a typo fails at once
        rules_for(game)
        for name in names:
            policy_for(game, name)
        report = simulate(game, names, hands, seed, progress, ruleset=ruleset)
    except ValueError as exc:  # UnknownGame, UnknownPolicy, SeatsMismatch, bad ruleset
        print(f"kalaro simulate: error: {exc}", file=sys.stderr)
        return 2
    print(report.table(), file=out or sys.stdout)
    return 0
