"""Thousands of bot-played hands: every step legal and consistent, every ending paid by
the rules, and any hand replays exactly from (options, seed, actions).

Two bots: a uniform one (mostly drawn hands, every odd move tried) and a greedy one
(keeps connected tiles, melds, shows its hand and takes every win, so most hands end in
a win). Some turns and claim answers time out and are auto-played; seats that time out
twice in a row are marked away, and the bots' choice sometimes brings them back.
"""

from __future__ import annotations

import random
from collections import Counter

import msgspec
import pytest

from kalaro.games import kawuxing as kw
from kalaro.games.kawuxing import Claim, DeclareKong, DeclareWin, ShowHand, State
from tests.unit.kawuxing.kawuxing_helpers import DEFAULT, accounted, bot_move, random_hand

HANDS_PER_BOT = 1000
KONG_ON_KONG = kw.options_for("kawuxing", kong_on_kong=True)


def _check_step(before: State, after: State, events: list[kw.AnyEvent]) -> None:
    assert accounted(after) and kw.hand_size_ok(after)
    assert after.step == before.step + 1
    for event in events:
        for viewer in (None, 0, 1, 2):
            shown = kw.event_for(event, viewer)
            if isinstance(shown, kw.TileDrawn) and viewer != shown.seat and not shown.shown:
                assert shown.tile is None
            if isinstance(shown, kw.ClaimsOffered | kw.CallAnswered):
                assert shown.seat == viewer
    if not kw.is_over(after):
        assert kw.to_act(after)
        assert all(kw.legal_actions(after, s) for s in kw.to_act(after))


def _expected_charges(state: State, result: kw.Result) -> list[tuple[int, int, str, int]]:
    """The charges, worked out again from the table and the wins' multipliers."""
    due: list[tuple[int, int, str, int]] = []
    for seat, player in enumerate(state.players):
        for meld in player.melds:
            if meld.kind == "kong":
                assert meld.kong is not None
                units = {"exposed": 2, "concealed": 2, "extended": 1}[meld.kong]
                units *= 2 if meld.on_kong and state.options.kong_on_kong else 1
                payers = [meld.from_seat] if meld.kong == "exposed" else [
                    s for s in range(3) if s != seat
                ]  # fmt: skip
                due.extend((p, seat, f"{meld.kong}_kong", units) for p in payers if p is not None)
    shown = [p.shown for p in state.players]
    for win in result.wins:
        won = win.multiplier * (2 if win.shown else 1)
        if win.discarder is None:
            due.extend(
                (p, win.seat, "win", won * (2 if shown[p] else 1))
                for p in range(3)
                if p != win.seat
            )
        else:
            shares = 2 if win.shown else 1
            due.append(
                (win.discarder, win.seat, "win", shares * won * (2 if shown[win.discarder] else 1))
            )
    return due


def _check_result(state: State, tally: Counter[str]) -> None:
    result = kw.result(state)
    assert result is not None
    tally[result.ending] += 1
    assert sum(result.payments) == 0
    assert min(result.payments) >= -kw.max_loss_units(state.options)
    charges = [(c.payer, c.payee, c.reason, c.due) for c in result.charges]
    assert charges == _expected_charges(state, result)
    assert all(c.units == c.due for c in result.charges)
    if not result.winners:
        assert state.wall == () and result.next_dealer == state.dealer
        return
    assert result.next_dealer == result.winners[0]
    tally[f"winners_{len(result.winners)}"] += 1
    for win in result.wins:
        player = state.players[win.seat]
        hand = player.hand if win.seat == result.winners[0] else (*player.hand, win.tile)
        assert kw.is_winning(hand, player.melds)
        if win.source != "self_draw":
            assert win.items or win.shown, "a chicken hand wins on a discard only when shown"
        tally["shown_win"] += win.shown
        tally["chicken_win"] += not win.items
        for item in win.items:
            tally[item.name] += 1
        tally["capped"] += win.multiplier < win.raw


@pytest.mark.deep  # two thousand hands: `make test-deep`
@pytest.mark.parametrize("greedy", [False, True], ids=["uniform", "greedy"])
def test_thousands_of_random_hands_play_by_the_rules(greedy: bool) -> None:
    rng = random.Random(20260409 + greedy)
    tally: Counter[str] = Counter()
    for n in range(HANDS_PER_BOT):
        options = KONG_ON_KONG if n % 4 == 0 else DEFAULT
        state = kw.new_hand(options, f"conformance-{greedy}-{n}".encode())
        assert accounted(state)
        last_kong: str | None = None
        while not kw.is_over(state):
            seat, action = bot_move(state, rng, greedy)
            after, events = kw.apply(state, seat, action)
            _check_step(state, after, events)
            if isinstance(action, kw.TimeOut):
                assert events[0] == kw.TimedOut(seat=seat, away=seat in kw.away_seats(after))
                tally["turn_time_out"] += state.phase != "calls"
            else:
                assert seat not in kw.away_seats(after)
            tally["marked_away"] += seat in set(kw.away_seats(after)) - set(kw.away_seats(state))
            tally["back"] += isinstance(action, kw.Back)
            match action:
                case Claim(kind=kind):
                    tally[f"claim_{kind}"] += 1
                case DeclareKong(tile=tile):
                    added = any(m.tiles[0] == tile for m in state.players[seat].melds)
                    tally["extended_kong" if added else "concealed_kong"] += 1
                case ShowHand():
                    tally["show_hand"] += 1
                case DeclareWin():
                    tally["declared_win"] += 1
                case _:
                    pass
            tally["auto_discard"] += any(isinstance(e, kw.TileDiscarded) and e.auto for e in events)
            tally["rob_window"] += any(isinstance(e, kw.KongOffered) for e in events)
            for event in events:
                if isinstance(event, kw.KongDeclared):
                    last_kong = event.kong
                elif isinstance(event, kw.TileClaimed) and event.meld.kong is not None:
                    last_kong = event.meld.kong
            state = after
        _check_result(state, tally)
        # Win / Fire on Kong follow the kong just made, and only a visible one
        outcome = kw.result(state)
        assert outcome is not None
        for win in outcome.wins:
            if any(i.name in ("win_on_kong", "fire_on_kong") for i in win.items):
                assert last_kong in ("exposed", "extended"), (n, last_kong)
    assert tally["wall_out"] and tally["discard"] and tally["self_draw"], tally
    for seen in ("claim_pong", "claim_kong", "concealed_kong", "show_hand", "auto_discard",
                 "turn_time_out", "marked_away", "back"):  # fmt: skip
        assert tally[seen] > 0, f"{seen} never happened in {HANDS_PER_BOT} hands: {tally}"
    if greedy:
        for seen in ("claim_win", "extended_kong", "shown_win", "chicken_win", "rob_window",
                     "all_triplets", "seven_pairs", "ka_wu_xing", "concealed_tile_hog",
                     "exposed_tile_hog", "win_on_kong", "fire_on_kong"):  # fmt: skip
            assert tally[seen] > 0, f"{seen} never happened in {HANDS_PER_BOT} hands: {tally}"


def _replay(seed: bytes, moves: list[tuple[int, kw.AnyAction]]) -> tuple[State, list[bytes]]:
    """Replay the moves as they travel (JSON in, the shared decoder); state and events."""
    state = kw.new_hand(DEFAULT, seed)
    log: list[bytes] = []
    for seat, action in moves:
        state, events = kw.apply(state, seat, kw.decode_action(msgspec.json.encode(action)))
        log.extend(msgspec.json.encode(e) for e in events)
    return state, log


@pytest.mark.parametrize("n", range(10))
def test_a_hand_replays_exactly_from_options_seed_and_actions(n: int) -> None:
    seed = f"replay-{n}".encode()
    final, moves = random_hand(seed, random.Random(n), greedy=n % 2 == 0)
    replayed, events = _replay(seed, moves)
    assert msgspec.msgpack.encode(replayed) == msgspec.msgpack.encode(final)
    assert kw.result(replayed) == kw.result(final)
    assert _replay(seed, moves)[1] == events


def test_same_seed_same_deal_other_seed_other_deal() -> None:
    first = kw.new_hand(DEFAULT, b"same")
    assert kw.new_hand(DEFAULT, b"same") == first
    assert kw.new_hand(DEFAULT, b"other").wall != first.wall
