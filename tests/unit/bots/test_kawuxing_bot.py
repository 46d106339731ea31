"""The Ka Wu Xing bots: shanten, discards, claims, kongs, Show Hand, wins, legality, strength.

Hand-built spots start from a real deal and replace the seats' tiles, then hand the bot
``view(state, seat)``, exactly what a bot at a live table receives. The simulated runs
check every choice against the view's legal actions (``simulate`` raises
``IllegalChoice`` otherwise).
"""

from __future__ import annotations

import math
import random
from collections import Counter

import msgspec
import pytest

from kalaro.bots import RandomPolicy, UnknownPolicy, legal_actions, policy_for
from kalaro.bots.kawuxing import SmartKaWuXing, shanten
from kalaro.bots.simulate import simulate
from kalaro.cli import main
from kalaro.games import kawuxing as kw
from kalaro.games.kawuxing import (
    Claim,
    DeclareKong,
    DeclareWin,
    Discard,
    Draw,
    Pass,
    Player,
    ShowHand,
    State,
    View,
)
from kalaro.games.tiles import parse_tiles, sort_tiles

OPTIONS = kw.options_for("kawuxing")
SMART = SmartKaWuXing()
FILLER = "1p 9p 1s 9s 5z 6z 7z 3p 7p 3s 8s 5p 6s"  # 13 tiles that connect to little


def _spot(
    hands: dict[int, str], *, turn: int = 0, shown: tuple[int, ...] = (), wall: int | None = None
) -> State:
    """A deal whose seats hold ``hands`` (compact notation); ``turn`` has just drawn the
    last tile of its hand (14 tiles) unless it holds 13."""
    state = kw.new_hand(OPTIONS, b"spot", dealer=turn)
    players = tuple(
        Player(hand=sort_tiles(parse_tiles(hands.get(seat, FILLER))), shown=seat in shown)
        for seat in range(kw.SEATS)
    )
    drawn = parse_tiles(hands[turn])[-1] if turn in hands else None
    full = drawn is not None and len(players[turn].hand) == kw.HAND_SIZE + 1
    return msgspec.structs.replace(
        state,
        players=players,
        turn=turn,
        phase="discard" if full else "draw",
        drawn=drawn if full else None,
        wall=state.wall if wall is None else state.wall[:wall],
    )


def _choose(state: State, seat: int, bot: SmartKaWuXing = SMART) -> object:
    seen = kw.view(state, seat)
    action = bot.choose(seen, random.Random(0))
    assert action in seen.legal
    return action


def _after_discard(hands: dict[int, str], tile: str) -> State:
    """Seat 0 (holding ``tile`` and filler) discards ``tile``; the call window opens."""
    state, _ = kw.apply(_spot({0: f"{FILLER} {tile}", **hands}), 0, Discard(tile))
    assert state.phase == "calls"
    return state


# -- shanten ----------------------------------------------------------------------------


def test_shanten_of_known_hands() -> None:
    assert shanten(parse_tiles("123p 456p 789p 123s 55z")) == -1
    assert shanten(parse_tiles("123p 456p 789p 123s 5z")) == 0
    assert shanten(parse_tiles("123p 456p 789p 55s 46s")) == 0
    assert shanten(parse_tiles("123p 456p 78p 55z"), sets=3) == 0
    # seven pairs (four alike are two pairs), only without melds
    assert shanten(parse_tiles("1155p 3399s 55z 66z 7z")) == 0
    assert shanten(parse_tiles("1111p 3399s 55z 66z 7z")) == 0
    assert shanten(parse_tiles("11p 33s 99s 55z 66z 77z 7z"), sets=3, seven_pairs=False) > 0
    # dragons never make runs
    assert shanten(parse_tiles("123p 456p 789p 1s 567s")) == 0
    assert shanten(parse_tiles("123p 456p 789p 1s 567z")) == 2


def test_shanten_agrees_with_the_rules() -> None:
    rng = random.Random(7)
    for _ in range(3000):
        sets = rng.randint(1, 4)
        seven = sets == kw.WINNING_SETS
        pool = [k for k in kw.KINDS[: rng.choice((9, 18, 21))] for _ in range(4)]
        hand = rng.sample(pool, 3 * sets + 1)
        melds = [kw.Meld(kind="pong", tiles=("?",) * 3)] * (kw.WINNING_SETS - sets)
        ready = any(kw.is_winning(sort_tiles([*hand, k]), melds) for k in kw.KINDS)
        assert (shanten(hand, sets) == 0) == ready, (hand, sets)
        full = [*hand, rng.choice(pool)]
        complete = kw.is_winning(sort_tiles(full), melds)
        assert (shanten(full, sets, seven) == -1) == complete, (full, sets)


# -- spots ------------------------------------------------------------------------------


def test_discards_the_tile_that_leaves_the_most_ways_to_win() -> None:
    # 7z and 5s both leave the hand one step from ready; without 7z more tiles help
    state = _spot({0: "123p 456p 789p 23s 57s 7z"})
    assert _choose(state, 0) == Discard("7z")


def test_declares_a_self_drawn_win() -> None:
    state = _spot({0: "123p 456p 789p 123s 55z"})
    assert _choose(state, 0) == DeclareWin()


def test_wins_on_a_discard_rather_than_pong_it() -> None:
    # 4-6 waiting for the closed 5: Ka Wu Xing (x2), so it may win on a discard
    state = _after_discard({1: "123p 456p 789p 55s 46s"}, "5s")
    assert Claim(kind="pong", tiles=("5s", "5s")) in kw.view(state, 1).legal
    assert _choose(state, 1) == Claim(kind="win")


def test_pongs_when_it_brings_the_hand_closer() -> None:
    # one step from ready; after the pong and a discard, ready
    state = _after_discard({2: "123p 456p 55s 99s 13s 7z"}, "5s")
    assert _choose(state, 2) == Claim(kind="pong", tiles=("5s", "5s"))


def test_passes_a_pong_that_would_not_help() -> None:
    # ready on 5s/8s already (5s here would be a chicken hand: no win on a discard)
    state = _after_discard({2: "123p 456p 789p 55s 67s"}, "5s")
    assert Claim(kind="win") not in kw.view(state, 2).legal
    assert _choose(state, 2) == Pass()


def test_claims_a_kong_that_costs_no_step() -> None:
    state = _after_discard({1: "555s 123p 456p 789p 9s"}, "5s")
    assert _choose(state, 1) == Claim(kind="kong", tiles=("5s", "5s", "5s"))


def test_declares_a_concealed_kong_that_costs_no_step() -> None:
    state = _spot({0: "111p 456p 789p 55s 46s 1p"})
    assert _choose(state, 0) == DeclareKong("1p")


def test_shows_a_ready_hand_with_live_waits_but_not_at_the_end_of_the_wall() -> None:
    hand = {0: "123p 456p 789p 55s 46s 7z"}
    assert _choose(_spot(hand), 0) == ShowHand("7z")
    assert _choose(_spot(hand, wall=3), 0) == Discard("7z")
    assert _choose(_spot(hand), 0, SmartKaWuXing(show_min_live=99)) == Discard("7z")


def test_shows_a_chicken_wait_which_then_wins_on_discards() -> None:
    # 1s-2s waiting on 3s: no score item, so only self-draw unless the hand is shown
    state = _spot({0: "123p 456p 789p 55z 12s 7z"})
    assert _choose(state, 0, SmartKaWuXing(show_min_live=99)) == ShowHand("7z")


def test_never_feeds_a_shown_hand() -> None:
    # Seat 1 showed, waiting on 7z; seat 0 would otherwise throw its lone 7z.
    shown = {1: "123s 456s 789s 111p 7z"}
    state = _spot({0: "123p 456p 789p 23s 57s 7z", **shown}, shown=(1,))
    assert kw.view(state, 0).players[1].hand is not None
    choice = _choose(state, 0)
    assert isinstance(choice, Discard | ShowHand) and choice.tile != "7z"


def test_a_shown_hand_only_wins_or_lets_its_draw_go() -> None:
    state = _spot({0: "123p 456p 789p 123s 55z"}, shown=(0,))
    assert _choose(state, 0) == DeclareWin()


# -- whole hands ------------------------------------------------------------------------


def test_takes_every_win_and_answers_every_call_at_once() -> None:
    """Smart at every seat: a call window never has to time out, and no win is passed."""
    rng = random.Random(3)
    wins = shows = 0
    for n in range(80):
        state = kw.new_hand(OPTIONS, f"props-{n}".encode())
        while not kw.is_over(state):
            seat = kw.to_act(state)[0]
            seen = kw.view(state, seat)
            choice = SMART.choose(seen, rng)
            assert choice is not None and choice in seen.legal
            if DeclareWin() in seen.legal or Claim(kind="win") in seen.legal:
                assert choice in (DeclareWin(), Claim(kind="win"))
                wins += 1
            if seen.phase == "calls":
                assert isinstance(choice, Claim | Pass)
            if seen.phase == "draw":
                assert choice == Draw()
            shows += isinstance(choice, ShowHand)
            state, _ = kw.apply(state, seat, choice)
    assert wins > 40
    assert shows > 10


@pytest.mark.parametrize("seed", range(3))
def test_chooses_the_same_from_a_view_decoded_off_the_wire(seed: int) -> None:
    """The bots service decodes the view's JSON; the bot needs nothing else."""
    rng = random.Random(seed)
    decoder = msgspec.json.Decoder(View)
    state = kw.new_hand(OPTIONS, f"wire-{seed}".encode())
    while not kw.is_over(state):
        seat = kw.to_act(state)[0]
        seen = kw.view(state, seat)
        wired = decoder.decode(msgspec.json.encode(seen))
        assert SMART.choose(wired, random.Random(0)) == SMART.choose(seen, random.Random(0))
        action = SMART.choose(seen, rng)
        assert action is not None
        state, _ = kw.apply(state, seat, action)


def test_policies_by_name() -> None:
    assert isinstance(policy_for("kawuxing", "smart"), SmartKaWuXing)
    rand = policy_for("kawuxing", "random")
    assert isinstance(rand, RandomPolicy) and rand.game == "kawuxing"
    seen = kw.view(kw.new_hand(OPTIONS, b"names"), kw.new_hand(OPTIONS, b"names").dealer)
    assert legal_actions("kawuxing", seen) == (Draw(),)
    assert rand.choose(seen, random.Random(1)) == Draw()
    with pytest.raises(UnknownPolicy):
        policy_for("kawuxing", "genius")


# About 1,100 hands, each move checked against the view's legal actions.
LEGAL_RUNS = [
    ("random,random,random", 300),
    ("smart,random,random", 500),
    ("smart,smart,smart", 300),
]


# `make test` plays a tenth of each run; `make test-deep` the whole run.
_RUNS = [pytest.param(seats, hands // 10, id=f"{seats}-short") for seats, hands in LEGAL_RUNS] + [
    pytest.param(seats, hands, marks=pytest.mark.deep, id=seats) for seats, hands in LEGAL_RUNS
]


@pytest.mark.parametrize(("seats", "hands"), _RUNS)
def test_bots_only_ever_send_legal_actions(seats: str, hands: int) -> None:
    names = seats.split(",")
    report = simulate("kawuxing", names, hands, seed=11)
    assert report.hands == hands and report.actions >= hands
    assert math.isclose(sum(p.wins for p in report.players) + report.no_winner, hands)
    assert math.isclose(sum(p.mean for p in report.players), 0.0, abs_tol=1e-9)
    assert sum(count for _, count in report.endings) == hands


@pytest.mark.deep  # a margin needs hundreds of hands
def test_smart_beats_random_by_a_clear_margin() -> None:
    report = simulate("kawuxing", ["smart", "random", "random"], 300, seed=5)
    smart, rand = report.policy("smart"), report.policy("random")
    assert smart.win_low > 1 / 3, report.table()
    assert smart.mean_low > 0 > rand.mean_high, report.table()
    endings = Counter(dict(report.endings))
    assert endings["self_draw"] and endings["discard"]


def test_kalaro_simulate_plays_ka_wu_xing(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["simulate", "--game", "kawuxing", "--hands", "20", "--seats", "smart,random,random"]
    assert main([*argv, "--seed", "3", "--no-progress"]) == 0
    out, err = capsys.readouterr()
    assert "kawuxing (kalaro), 20 hands, seed 3" in out
    assert "by policy" in out and err == ""
