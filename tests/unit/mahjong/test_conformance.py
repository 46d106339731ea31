"""Thousands of bot-played hands under each ruleset (``kalaro``, ``joker``, ``pinoy``):
every step legal and consistent, every ending right, and any hand replays exactly from
(options, seed, actions).

Two bots: a uniform one (mostly tabla hands, every odd move tried) and a greedy one
(keeps jokers and connected tiles and takes every win, so most hands end in a win).
Every ruleset runs the turn clock: some turns and claim answers time out and are
auto-played, seats that time out twice in a row are marked away, and the bots' choice
(from the legal actions) sometimes brings them back.
"""

from __future__ import annotations

import random
from collections import Counter

import msgspec
import pytest

from kalaro.games import mahjong as mj
from kalaro.games.mahjong import Claim, DeclareKang, DeclareWin, Draw, State
from kalaro.games.mahjong.hands import winning_pattern
from kalaro.games.mahjong.options import OTHER_PLAYER, TRIPLE_JOKER
from kalaro.games.tiles import is_complete
from tests.unit.mahjong.helpers import (
    KALARO,
    RULESET_OPTIONS,
    accounted,
    choose,
    random_hand,
    timed_out,
)

# Hands per bot: kalaro as before the joker rulesets came, fewer for the slower rulesets.
HANDS_PER_BOT = {"kalaro": 600, "joker": 200, "pinoy": 200}


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
            if isinstance(shown, mj.KangDeclared) and viewer != shown.seat:
                assert (shown.meld.tiles == ()) == shown.secret
                assert shown.secret == (after.options.secret_kangs and not shown.added)
    if after.joker is not None:
        assert after.indicator is not None
        assert all(m.tiles.count(after.joker) == 0 for p in after.players for m in p.melds)
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
    kangs = sum(m.kind == "kang" for m in winner.melds)
    tally["won_with_kang"] += kangs > 0
    dealer_won = result.winner == state.dealer
    assert result.next_dealer == (state.dealer if dealer_won else (state.dealer + 1) % 4)
    points = state.options.points
    if points is None:
        assert is_complete(winner.hand, sets=mj.WINNING_SETS - len(winner.melds))
        assert result.category is None
        for bill in result.charges:
            base = 2 if result.ending == "self_draw" or bill.payer == result.discarder else 1
            assert bill.units == min(base + kangs, state.options.cap_units)
        return
    _check_category(state, result, tally)
    for bill in result.charges:
        assert result.category is not None
        if result.discarder is None or bill.payer == result.discarder:
            base = points.units(result.category)
        else:
            base = points.units(OTHER_PLAYER)
        extra = kangs * points.units("Each kang of the winner")
        extra += sum(points.units(s) for s in result.specials)
        assert bill.total == base + extra
        assert bill.units == min(bill.total, state.options.cap_units)


def _check_category(state: State, result: mj.Result, tally: Counter[str]) -> None:
    """The category fits how the hand ended (the patterns are checked in test_hands)."""
    name = result.category
    assert name in mj.CATEGORIES
    tally[name] += 1
    tally["robbed_kang"] += result.robbed_kang
    for special in result.specials:
        tally[special] += 1
    assert result.winner is not None
    winner = state.players[result.winner]
    pile = sum(len(p.discards) for p in state.players)
    if name == TRIPLE_JOKER:
        assert winner.hand.count(state.joker or "") >= 3 and result.ending == "self_draw"
        return
    pattern = winning_pattern(winner.hand, winner.melds, state.joker, state.options)
    assert pattern is not None and (pattern == "Regular") == (
        not name.endswith(("Eskalera", "Seven Pairs"))
    )
    assert name.endswith(pattern) or pattern == "Regular"
    if name.startswith("Bisaklat"):
        assert result.winner == state.dealer and result.ending == "self_draw"
        assert not any(p.discards for p in state.players)
        return
    assert ("Before the Fifth" in name) == (pile < 5)
    assert name.startswith("Win by Discard") == (result.ending == "discard")
    assert result.robbed_kang <= (result.ending == "discard")
    assert "Joker Eye" not in name or result.ending == "self_draw"


@pytest.mark.deep  # a thousand hands: `make test-deep`
@pytest.mark.parametrize("greedy", [False, True], ids=["uniform", "greedy"])
@pytest.mark.parametrize("ruleset", list(HANDS_PER_BOT))
def test_thousands_of_random_hands_play_by_the_rules(ruleset: str, greedy: bool) -> None:
    options = RULESET_OPTIONS[ruleset]
    rng = random.Random(20260401 + greedy)
    tally: Counter[str] = Counter()
    hands = HANDS_PER_BOT[ruleset]
    for n in range(hands):
        seed = f"conformance-{greedy}-{n}".encode()
        if ruleset != "kalaro":
            seed = f"{ruleset}-{seed.decode()}".encode()
        state = mj.new_hand(options, seed)
        assert accounted(state)
        while not mj.is_over(state):
            seat = rng.choice(mj.to_act(state))
            if timed_out(state, rng):
                action: mj.AnyAction = mj.TimeOut()
                tally["turn_time_out" if state.phase != "calls" else "call_time_out"] += 1
            else:
                action = choose(state, seat, rng, greedy)
            after, events = mj.apply(state, seat, action)
            _check_step(state, seat, after, events)
            if isinstance(action, mj.TimeOut):
                assert events[0] == mj.TimedOut(seat=seat, away=seat in mj.away_seats(after))
            else:
                assert seat not in mj.away_seats(after)
            tally["marked_away"] += seat in set(mj.away_seats(after)) - set(mj.away_seats(state))
            tally["back"] += isinstance(action, mj.Back)
            tally["rob_window"] += any(
                isinstance(e, mj.CallWindowOpened) and e.robbing for e in events
            )
            tally["passed_win"] += after.passed_win[seat] and not state.passed_win[seat]
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
    assert tally["discard"] > 0 and tally["self_draw"] > 0
    # With three jokers about, greedy bots finish before the wall runs out.
    assert tally["wall_out"] > 0 or (greedy and ruleset != "kalaro"), tally
    assert tally["turn_time_out"] and tally["marked_away"] and tally["back"], tally
    for seen in ("claim_pong", "claim_chow", "claim_kang", "concealed_kang", "flower_in_play"):
        assert tally[seen] > 0, f"{seen} never happened in {hands} hands: {tally}"
    if greedy:
        assert tally["claim_mahjong"] > 0 and tally["added_kang"] > 0
        assert tally["won_with_kang"] > 0 and tally["two_possible_winners"] > 0
    if ruleset == "kalaro":
        return
    # The joker rulesets: categories beyond a plain win, and the passed-win block.
    seen_categories = [name for name in mj.CATEGORIES if tally[name]]
    assert "Win by Discard Regular" in seen_categories, tally
    if not greedy:  # the greedy bot never passes a win (a time-out claims it)
        assert tally["passed_win"] > 0, tally
    if greedy:
        assert any("Seven Pairs" in name for name in seen_categories), tally
        assert any("Eskalera" in name for name in seen_categories), tally
    if ruleset == "pinoy" and greedy:  # (robbing the kang is rare in random play: see test_pinoy)
        assert tally["Concealed Hand"] > 0 and tally["All Pongs"] > 0, tally


def _replay(
    seed: bytes, moves: list[tuple[int, mj.AnyAction]], options: mj.Options = KALARO
) -> tuple[State, list[bytes]]:
    """Replay the moves as they travel (JSON in, the shared decoder); state and events."""
    state = mj.new_hand(options, seed)
    log: list[bytes] = []
    for seat, action in moves:
        state, events = mj.apply(state, seat, mj.decode_action(msgspec.json.encode(action)))
        log.extend(msgspec.json.encode(e) for e in events)
    return state, log


@pytest.mark.parametrize("n", range(12))  # every ruleset, uniform and greedy, twice
def test_a_hand_replays_exactly_from_options_seed_and_actions(n: int) -> None:
    options = list(RULESET_OPTIONS.values())[n % 3]
    seed = f"replay-{n}".encode()
    final, moves = random_hand(seed, random.Random(n), greedy=n % 2 == 0, options=options)
    replayed, events = _replay(seed, moves, options)
    assert msgspec.msgpack.encode(replayed) == msgspec.msgpack.encode(final)
    assert mj.result(replayed) == mj.result(final)
    assert _replay(seed, moves, options)[1] == events


@pytest.mark.parametrize("ruleset", list(RULESET_OPTIONS))
def test_same_seed_same_deal_other_seed_other_deal(ruleset: str) -> None:
    options = RULESET_OPTIONS[ruleset]
    first = mj.new_hand(options, b"same")
    assert mj.new_hand(options, b"same") == first
    assert mj.new_hand(options, b"other").wall != first.wall
