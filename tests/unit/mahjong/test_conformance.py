"""Thousands of bot-played hands: every step legal and consistent, every ending right,
and any hand replays exactly from (options, seed, actions).

Two bots: a uniform one (mostly tabla hands, every odd move tried) and a greedy one
(keeps connected tiles and takes every win, so most hands end in a win).
"""

from __future__ import annotations

import random
from collections import Counter

import msgspec
import pytest

from kalaro.games import mahjong as mj
from kalaro.games.mahjong import Claim, DeclareKang, DeclareWin, Draw, State
from kalaro.games.tiles import is_complete
from tests.unit.mahjong.helpers import KALARO, accounted, choose, random_hand

HANDS_PER_BOT = 1000


def _check_step(before: State, seat: int, after: State, events: list[mj.AnyEvent]) -> None:
    assert accounted(after)
    assert after.step == before.step + 1
    assert sum(len(p.hand) for p in after.players) + 3 * sum(
        len(p.melds) for p in after.players
    ) in (64, 65)  # 16 each, plus the turn's extra tile
    for event in events:
        for viewer in (None, 0, 1, 2, 3):
            shown = mj.event_for(event, viewer)
            if isinstance(shown, mj.TileDrawn) and viewer != shown.seat:
                assert shown.tile is None
    if not mj.is_over(after):
        assert mj.to_act(after)
        assert all(mj.legal_actions(after, s) for s in mj.to_act(after))


def _check_result(state: State, tally: Counter[str]) -> None:
    result = mj.result(state)
    assert result is not None
    tally[result.ending] += 1
    assert sum(result.payments) == 0
    assert min(result.payments) >= -mj.max_loss_units(state.options)
    if result.winner is None:
        assert state.wall == ()
        assert result.next_dealer == state.dealer
        return
    winner = state.players[result.winner]
    assert is_complete(winner.hand, sets=mj.WINNING_SETS - len(winner.melds))
    kangs = sum(m.kind == "kang" for m in winner.melds)
    tally["won_with_kang"] += kangs > 0
    dealer_won = result.winner == state.dealer
    assert result.next_dealer == (state.dealer if dealer_won else (state.dealer + 1) % 4)
    for bill in result.charges:
        base = 2 if result.ending == "self_draw" or bill.payer == result.discarder else 1
        assert bill.units == min(base + kangs, state.options.cap_units)


@pytest.mark.parametrize("greedy", [False, True], ids=["uniform", "greedy"])
def test_thousands_of_random_hands_play_by_the_rules(greedy: bool) -> None:
    rng = random.Random(20260401 + greedy)
    tally: Counter[str] = Counter()
    for n in range(HANDS_PER_BOT):
        state = mj.new_hand(KALARO, f"conformance-{greedy}-{n}".encode())
        assert accounted(state)
        while not mj.is_over(state):
            seat = rng.choice(mj.to_act(state))
            if state.phase == "calls" and rng.random() < 0.1:
                action: mj.AnyAction = mj.TimeOut()
            else:
                action = choose(state, seat, rng, greedy)
            after, events = mj.apply(state, seat, action)
            _check_step(state, seat, after, events)
            match action:
                case Claim(kind=kind):
                    tally[f"claim_{kind}"] += 1
                case DeclareKang(tile=tile):
                    added = any(m.tiles[0] == tile for m in state.players[seat].melds)
                    tally["added_kang" if added else "concealed_kang"] += 1
                case Draw() if any(isinstance(e, mj.FlowerReplaced) for e in events):
                    tally["flower_in_play"] += 1
                case DeclareWin():
                    tally["declared_win"] += 1
                case _:
                    pass
            if (
                state.call is not None
                and sum(any(c.kind == "mahjong" for c in offers) for offers in state.call.offers)
                > 1
            ):
                tally["two_possible_winners"] += 1
            state = after
        _check_result(state, tally)
    assert tally["wall_out"] > 0 and tally["discard"] > 0 and tally["self_draw"] > 0
    for seen in ("claim_pong", "claim_chow", "claim_kang", "concealed_kang", "flower_in_play"):
        assert tally[seen] > 0, f"{seen} never happened in {HANDS_PER_BOT} hands: {tally}"
    if greedy:
        assert tally["claim_mahjong"] > 0 and tally["added_kang"] > 0
        assert tally["won_with_kang"] > 0 and tally["two_possible_winners"] > 0


def _replay(seed: bytes, moves: list[tuple[int, mj.AnyAction]]) -> tuple[State, list[bytes]]:
    """Replay the moves as they travel (JSON in, the shared decoder); state and events."""
    state = mj.new_hand(KALARO, seed)
    log: list[bytes] = []
    for seat, action in moves:
        state, events = mj.apply(state, seat, mj.decode_action(msgspec.json.encode(action)))
        log.extend(msgspec.json.encode(e) for e in events)
    return state, log


@pytest.mark.parametrize("n", range(40))
def test_a_hand_replays_exactly_from_options_seed_and_actions(n: int) -> None:
    seed = f"replay-{n}".encode()
    final, moves = random_hand(seed, random.Random(n), greedy=n % 2 == 0)
    replayed, events = _replay(seed, moves)
    assert msgspec.msgpack.encode(replayed) == msgspec.msgpack.encode(final)
    assert mj.result(replayed) == mj.result(final)
    assert _replay(seed, moves)[1] == events


def test_same_seed_same_deal_other_seed_other_deal() -> None:
    first = mj.new_hand(KALARO, b"same")
    assert mj.new_hand(KALARO, b"same") == first
    assert mj.new_hand(KALARO, b"other").wall != first.wall
