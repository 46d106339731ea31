"""The smart Mahjong bot: shanten, discards by tile efficiency, claims, wins.

Hand-built spots start from a real deal and replace the seats' tiles, then hand the bot
``view(state, seat)``, exactly what a bot at a live table receives.
"""

from __future__ import annotations

import random

import msgspec
import pytest

from kalaro.bots import RandomPolicy
from kalaro.bots.mahjong import SmartMahjong, shanten
from kalaro.games import mahjong as mj
from kalaro.games.mahjong import Claim, DeclareWin, Discard, Pass, Player, State, View
from kalaro.games.tiles import KINDS, is_complete, parse_tiles, sort_tiles

KALARO = mj.options_for("kalaro")
SMART = SmartMahjong()
FILLER = "19m 19p 19s 3s 2z 3z 4z 6z 7z 5m 5p 5s 7m"  # 16 tiles that connect to little


def _spot(hands: dict[int, str], *, turn: int = 0) -> State:
    """A deal whose seats hold ``hands`` (compact notation); ``turn`` has just drawn."""
    state = mj.new_hand(KALARO, b"spot", dealer=turn)
    players = []
    for seat in range(4):
        tiles = sort_tiles(parse_tiles(hands.get(seat, FILLER)))
        players.append(Player(hand=tiles))
    drawn = players[turn].hand[-1]
    return msgspec.structs.replace(
        state, players=tuple(players), turn=turn, phase="discard", drawn=drawn
    )


def _choose(state: State, seat: int) -> object:
    seen = mj.view(state, seat)
    action = SMART.choose(seen, random.Random(0))
    assert action in seen.legal
    return action


def test_shanten_of_known_hands() -> None:
    assert shanten(parse_tiles("123m 456m 789m 123p 456p 11z")) == -1
    assert shanten(parse_tiles("123m 456m 789m 123p 456p 1z")) == 0
    assert shanten(parse_tiles("123m 456m 78p 11z"), sets=3) == 0
    assert shanten(parse_tiles("123m 456m 789m 55p 99s 135z")) == 2
    assert shanten(parse_tiles("147m 258p 369s 1234567z")) == 10  # no two tiles work together


def test_shanten_agrees_with_the_winning_hand_check() -> None:
    rng = random.Random(7)
    for _ in range(3000):
        sets = rng.randint(1, 5)
        # few kinds, so hands are often close to ready
        pool = [k for k in KINDS[: rng.choice((9, 18, 34))] for _ in range(4)]
        hand = rng.sample(pool, 3 * sets + 1)
        ready = any(is_complete([*hand, k], sets=sets) for k in KINDS)
        assert (shanten(hand, sets) == 0) == ready, (hand, sets)
        full = [*hand, rng.choice(pool)]
        assert (shanten(full, sets) == -1) == is_complete(full, sets=sets), (full, sets)


def test_discards_the_tile_that_leaves_the_most_ways_to_win() -> None:
    # 1z and 4p both leave the hand one step from ready; with 1z gone, far more tiles help
    state = _spot({0: "123m 456m 789m 123p 45p 78s 1z"})
    assert _choose(state, 0) == Discard("1z")


def test_declares_a_self_drawn_win() -> None:
    state = _spot({0: "123m 456m 789m 123p 456p 11z"})
    assert _choose(state, 0) == DeclareWin()


def _after_discard(hands: dict[int, str], tile: str) -> State:
    """Seat 0 (holding ``tile`` and filler) discards ``tile``; the call window opens."""
    state, _ = mj.apply(_spot({0: f"{tile} {FILLER}", **hands}), 0, Discard(tile))
    assert state.phase == "calls"
    return state


def test_claims_mahjong_on_a_discard() -> None:
    state = _after_discard({1: "123m 456m 789m 123p 456p 1z"}, "1z")
    assert _choose(state, 1) == Claim(kind="mahjong")


def test_pongs_when_it_brings_the_hand_closer() -> None:
    # two steps from ready; after the pong and a discard, one
    state = _after_discard({2: "123m 456m 789m 55p 99s 135z"}, "5p")
    assert _choose(state, 2) == Claim(kind="pong", tiles=("5p", "5p"))


def test_passes_when_a_pong_would_not_help() -> None:
    # ready already (waits 5s/8s): the pong would spend the eyes for nothing
    state = _after_discard({2: "123m 456m 789m 123p 55p 67s"}, "5p")
    assert _choose(state, 2) == Pass()


def test_takes_every_win_and_only_answers_calls_with_claims_or_pass() -> None:
    rng = random.Random(3)
    rand = RandomPolicy("mahjong")
    wins = 0
    for n in range(60):
        state = mj.new_hand(KALARO, f"props-{n}".encode())
        while not mj.is_over(state):
            seat = mj.to_act(state)[0]
            seen = mj.view(state, seat)
            choice = SMART.choose(seen, rng)
            assert choice in seen.legal
            if DeclareWin() in seen.legal or Claim(kind="mahjong") in seen.legal:
                assert choice in (DeclareWin(), Claim(kind="mahjong"))
                wins += 1
            if seen.phase == "calls":
                assert isinstance(choice, Claim | Pass)
            action = choice if seat == n % 4 else rand.choose(seen, rng)
            assert action is not None
            state, _ = mj.apply(state, seat, action)
    assert wins > 20


@pytest.mark.parametrize("seed", range(3))
def test_chooses_the_same_from_a_view_decoded_off_the_wire(seed: int) -> None:
    """The bots service will decode the view's JSON; the bot needs nothing else."""
    rng = random.Random(seed)
    decoder = msgspec.json.Decoder(View)
    state = mj.new_hand(KALARO, f"wire-{seed}".encode())
    while not mj.is_over(state):
        seat = mj.to_act(state)[0]
        seen = mj.view(state, seat)
        wired = decoder.decode(msgspec.json.encode(seen))
        action = SMART.choose(seen, rng)
        assert SMART.choose(wired, random.Random(0)) == SMART.choose(seen, random.Random(0))
        assert action is not None
        state, _ = mj.apply(state, seat, action)
