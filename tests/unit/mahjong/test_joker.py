"""The ``joker`` ruleset beyond its win categories: options and the points table, the
joker indicator, jokers in claims, the passed-win block, Joker Eye on a discard, secret
kangs and what views show. Categories are in ``test_categories.py``.
"""

from __future__ import annotations

import msgspec
import pytest

from kalaro.games import mahjong as mj
from kalaro.games.base import IllegalAction, pick, shuffled
from kalaro.games.mahjong import (
    CallAnswered,
    Claim,
    DeclareKang,
    DeclareWin,
    Discard,
    Draw,
    KangDeclared,
    Meld,
    Pass,
    State,
)
from kalaro.games.registry import rules_for
from kalaro.games.tiles import MAHJONG_144, is_flower
from tests.unit.mahjong.helpers import JOKER, KALARO, PINOY, accounted, play, rig

INDICATOR = "4z"


def raises(state: State, seat: int, action: mj.AnyAction, code: str) -> None:
    before = msgspec.msgpack.encode(state)
    with pytest.raises(IllegalAction) as caught:
        mj.apply(state, seat, action)
    assert caught.value.code == code
    assert msgspec.msgpack.encode(state) == before


# -- options and the points table ---------------------------------------------------------


def test_the_joker_and_pinoy_presets() -> None:
    joker = mj.options_for("joker")
    assert (joker.jokers, joker.seven_pairs, joker.eskalera) == (True, True, True)
    assert (joker.secret_kangs, joker.passed_win_blocks) == (True, True)
    assert (joker.robbing_the_kang, joker.special_hands, joker.turn_seconds) == (False, False, 30)
    assert joker.points == mj.DEFAULT_POINTS and joker.cap_units == 10
    pinoy = mj.options_for("pinoy")
    assert (
        msgspec.structs.replace(
            pinoy, ruleset="joker", robbing_the_kang=False, special_hands=False, turn_seconds=30
        )
        == joker
    )
    assert (pinoy.robbing_the_kang, pinoy.special_hands, pinoy.turn_seconds) == (True, True, 20)
    assert mj.options_for("kalaro").points is None  # kalaro's own payments


def test_the_points_table_is_keyed_by_the_names_players_read() -> None:
    table = msgspec.to_builtins(mj.DEFAULT_POINTS)
    assert list(table) == list(mj.POINT_NAMES) == list(mj.DEFAULT_POINTS.table())
    assert list(table)[:22] == list(mj.CATEGORIES)
    assert table["Win by Discard Regular"] == 2 and table["Bisaklat Seven Pairs"] == 10
    assert table["Each other player (by Discard)"] == 1 and table["Each kang of the winner"] == 1
    assert [table[s] for s in mj.SPECIAL_HANDS] == [2, 4, 6, 4, 2, 1]


def test_a_host_changes_single_entries_of_the_table() -> None:
    options = mj.options_for("joker", points={"Win by Draw Regular": 3, "All Pongs": 0})
    assert options.points is not None
    assert options.points.units("Win by Draw Regular") == 3
    assert options.points.units("All Pongs") == 0
    assert options.points.units("Bisaklat Regular") == 8  # untouched
    # kalaro has no table: the override starts from the documented defaults.
    house = mj.options_for("kalaro", points={"Bisaklat Regular": 5})
    assert house.points == msgspec.structs.replace(mj.DEFAULT_POINTS, bisaklat_regular=5)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"points": {"Bisaklat Jackpot": 3}}, "unknown Mahjong points entry 'Bisaklat Jackpot'"),
        ({"points": {"Win by Draw Regular": -1}}, r"Expected `int` >= 0"),
        ({"points": {"Win by Draw Regular": 101}}, r"<= 100"),
        ({"points": {"Win by Draw Regular": True}}, "bad Mahjong option value"),
        ({"points": {"Win by Draw Regular": "2"}}, "bad Mahjong option value"),
        ({"points": 5}, "bad Mahjong option value"),
        ({"points": None}, "needs a points table"),
        ({"turn_seconds": 0}, ">= 1"),
    ],
)
def test_bad_points_and_options_are_refused(overrides: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        mj.options_for("pinoy", **overrides)


def test_the_lobby_round_trip_keeps_the_table() -> None:
    rules = rules_for("mahjong")
    options = rules.options({"ruleset": "pinoy", "points": {"Win by Discard Regular": 3}})
    stored = rules.options_dict(options)
    assert stored["points"]["Win by Discard Regular"] == 3
    assert stored["points"]["Bisaklat Eskalera"] == 10
    assert rules.options(stored) == options
    assert rules.options_dict(rules.options({})) == msgspec.to_builtins(KALARO)


def test_max_loss_comes_from_the_table_and_never_exceeds_the_cap() -> None:
    assert mj.max_loss_units(KALARO) == 10  # unchanged: the cap
    assert mj.max_loss_units(JOKER) == 10 and mj.max_loss_units(PINOY) == 10  # the cap binds
    # Without the cap: Bisaklat Regular 8 + five kangs; pinoy adds the best special
    # hands that can go together: Concealed 1 + All Honours 6 + Big Three Dragons 4.
    assert mj.max_loss_units(mj.options_for("joker", cap_units=100)) == 13
    assert mj.max_loss_units(mj.options_for("pinoy", cap_units=100)) == 13 + 11
    # A small table: only a late win by draw pays, 3; no kang bonus.
    zero = dict.fromkeys(mj.POINT_NAMES, 0)
    small = mj.options_for("joker", points=zero | {"Win by Draw Regular": 3})
    assert mj.max_loss_units(small) == 3
    # The other losers' share of a discard win counts too.
    assert (
        mj.max_loss_units(
            mj.options_for("joker", points=zero | {"Each other player (by Discard)": 4})
        )
        == 4
    )
    # Categories a table cannot reach do not count: no jokers, no Joker Eye or triple.
    plain = mj.options_for("joker", jokers=False, points=zero | {"Win by Draw Joker Eye": 9})
    assert mj.max_loss_units(plain) == 0


# -- the joker indicator -------------------------------------------------------------------


@pytest.mark.parametrize("n", range(8))
def test_the_last_non_flower_of_the_wall_is_revealed_after_the_deal(n: int) -> None:
    seed = f"joker-deal-{n}".encode()
    plain = mj.new_hand(KALARO, seed)
    state = mj.new_hand(JOKER, seed)
    # The deal itself is the kalaro deal; then the indicator leaves the wall.
    assert [p.hand for p in state.players] == [p.hand for p in plain.players]
    back = max(i for i, t in enumerate(plain.wall) if not is_flower(t))
    assert state.indicator == plain.wall[back]
    assert state.wall == plain.wall[:back] + plain.wall[back + 1 :]
    assert state.joker == state.indicator and not is_flower(state.indicator)
    assert accounted(state)
    assert all(mj.view(state, s).joker == state.indicator for s in (None, 0, 1, 2, 3))
    assert rules_for("mahjong").dealt(state) == rules_for("mahjong").dealt(plain)


def test_a_flower_at_the_back_is_skipped_and_stays_in_the_wall() -> None:
    for n in range(400):
        seed = f"flower-back-{n}".encode()
        plain = mj.new_hand(KALARO, seed)
        if is_flower(plain.wall[-1]):
            state = mj.new_hand(JOKER, seed)
            assert state.wall[-1] == plain.wall[-1]
            assert state.indicator == next(t for t in reversed(plain.wall) if not is_flower(t))
            assert accounted(state)
            return
    pytest.fail("no seed in range put a flower at the back of the wall")


def test_without_jokers_there_is_no_indicator() -> None:
    state = mj.new_hand(KALARO, b"plain")
    assert state.indicator is None and state.joker is None
    assert mj.view(state, 0).joker is None
    assert len(state.wall) + sum(len(p.flowers) for p in state.players) == 80
    seed = b"x"
    assert shuffled(MAHJONG_144, seed)  # the shuffle is shared with kalaro
    assert mj.new_hand(JOKER, seed).dealer == pick(seed, "dealer", 4)


# -- jokers and claims ----------------------------------------------------------------------

# Joker kind 4m: seat 1 (next after the dealer) holds 3m, 6m 7m and a joker 4m, seat 2 a 5m
# and a joker. On a 5m discard seat 1 may chow only 5-6-7, and seat 2 may not pong.
JOKER_CLAIMS = ("5m 111p 222p 333z 444z 777z", "3m 4m 6m 7m 111s 222s 111z 2z 3z 5z",
                "5m 4m 333s 444s 555s 666s 9m 8p", "9m 99p 777s 888s 9s 555z 6z 2m 2m")  # fmt: skip


def test_a_joker_is_never_used_to_claim() -> None:
    state = rig(JOKER_CLAIMS, front="9s", indicator="4m", options=JOKER)
    state, _ = play(state, [(0, Draw()), (0, Discard("5m"))])
    assert state.call is not None
    assert state.call.offers[1] == (Claim(kind="chow", tiles=("6m", "7m")),)  # not 3m-4m, not 4m-6m
    assert state.call.offers[2] == ()  # one natural 5m and a joker: no pong
    raises(state, 1, Claim(kind="chow", tiles=("3m", "4m")), "cannot_claim")
    raises(state, 1, Claim(kind="chow", tiles=("4m", "6m")), "cannot_claim")
    raises(state, 2, Claim(kind="pong", tiles=("4m", "5m")), "cannot_claim")
    # The same table without jokers: the 4m is a plain tile and all three chows are there.
    plain = rig(JOKER_CLAIMS, front="9s", options=KALARO)
    plain, _ = play(plain, [(0, Draw()), (0, Discard("5m"))])
    assert plain.call is not None and len(plain.call.offers[1]) == 3


def test_a_discarded_joker_cannot_be_claimed_at_all() -> None:
    # Seat 1 waits on any tile with its joker, seat 2 holds the third joker: the joker
    # the dealer throws is dead, and no window opens.
    hands = ("4z 111p 222p 333z 555z 777z", "123m 456m 789p 123s 456s 4z",
             "4z 1m 9m 1s 8s 1z 2z 6z 8m 8p 2p 3p 7p 7s 6s 5p",
             "999m 999p 999s 3m 3p 3s 7m 7p 7s 2z")  # fmt: skip
    state = rig(hands, front="9s", indicator="4z", options=JOKER, discarded=True)
    state, events = play(state, [(0, Draw()), (0, Discard("4z"))])
    assert (state.turn, state.phase, state.call) == (1, "draw", None)
    assert not any(isinstance(e, mj.CallWindowOpened) for e in events)
    assert state.players[0].discards[-1] == "4z"


# -- Joker Eye is draw-only -----------------------------------------------------------------

# Seat 1 keeps a joker as the eye; seat 0 discards a 5z it could only pair with the joker;
# seat 2 may pong the 5z.
EYE = ("5z 111p 222p 333z 666z 777z", "123m 456m 789p 123s 456s 4z",
       "55z 1m 9m 1s 9s 1z 2z 6z 8m 8p 8s 2m 2p 3p 7p",
       "999m 999p 999s 3m 3p 3s 7m 7p 7s 2z")  # fmt: skip


def test_a_joker_eye_is_not_offered_a_win_on_a_discard_and_is_told_why() -> None:
    state = rig(EYE, front="1m 5z", indicator="4z", options=JOKER, discarded=True)
    state, _ = play(state, [(0, Draw()), (0, Discard("5z"))])
    assert state.call is not None
    assert state.call.offers[1] == ()  # no Win: the 5z would only pair the joker
    assert state.call.offers[2] == (Claim(kind="pong", tiles=("5z", "5z")),)
    seen = mj.view(state, 1)
    assert seen.win_blocked == "joker_eye"
    assert seen.win_blocked_reason == mj.WIN_BLOCKED_REASONS["joker_eye"]
    assert mj.view(state, 2).win_blocked is None
    # Drawn, the same kind of tile wins.
    state, _ = play(state, [(2, Pass()), (1, Draw())])
    assert mj.view(state, 1).win_blocked is None
    state, _ = mj.apply(state, 1, DeclareWin())
    result = mj.result(state)
    # (one tile in the discard pile: Before the Fifth)
    assert result is not None and result.category == "Win by Draw Joker Eye Before the Fifth"


def test_a_joker_eye_wait_never_wins_on_a_discard_that_completes_it_another_way() -> None:
    # Issue 17: 123s 345s + joker waits in Joker Eye shape. A 3s discard would also make
    # 12s+joker, 33s pair, 345s, but Joker Eye is draw-only: no Win, only Pung and Chow.
    hands = ("3s 111p 222p 333z 666z 777z", "123m 456m 789p 123s 345s 4z", *EYE[2:])
    state = rig(hands, front="1m 8s", indicator="4z", options=JOKER, discarded=True)
    state, _ = play(state, [(0, Draw()), (0, Discard("3s"))])
    assert state.call is not None
    offers = state.call.offers[1]
    assert Claim(kind="mahjong") not in offers
    assert Claim(kind="pong", tiles=("3s", "3s")) in offers
    assert any(c.kind == "chow" for c in offers)
    assert Claim(kind="mahjong") not in mj.legal_actions(state, 1)
    seen = mj.view(state, 1)
    assert seen.win_blocked == "joker_eye"
    assert seen.win_blocked_reason == mj.WIN_BLOCKED_REASONS["joker_eye"]
    # Passing is not passing a win, and the same tile drawn wins as a Joker Eye.
    state, _ = play(state, [(1, Pass()), (1, Draw())])
    assert state.passed_win[1] is False
    state, _ = mj.apply(state, 1, DeclareWin())
    result = mj.result(state)
    assert result is not None and result.category == "Win by Draw Joker Eye Before the Fifth"


# -- the passed-win block --------------------------------------------------------------------

# Seat 2 waits on a 5z; the dealer and seat 1 each throw one.
PASSED = ("5z 111p 222p 333z 666z 777z", "5z 1m 9m 1s 9s 1z 2z 6z 8m 8p 8s 2m 2p 3p 7p 7s",
          "123m 456m 789p 123s 456s 5z", "999m 999p 999s 3m 4p 3s 7m 6p 5s 2z")  # fmt: skip


def _passed(claim: Claim | None, hands: tuple[str, ...] = PASSED, front: str = "1m 4m") -> State:
    """Seat 2 answers the dealer's 5z with ``claim`` (None = pass) instead of winning."""
    state = rig(hands, front=front, indicator="4z", options=JOKER, discarded=True)
    state, _ = play(state, [(0, Draw()), (0, Discard("5z"))])
    assert Claim(kind="mahjong") in mj.legal_actions(state, 2)
    state, events = mj.apply(state, 2, claim or Pass())
    assert events[0] == CallAnswered(seat=2, claim=claim)
    return state


def test_passing_a_win_blocks_wins_on_discards_until_the_next_draw() -> None:
    state = _passed(None)
    assert state.passed_win == (False, False, True, False)
    seen = mj.view(state, 2)
    assert seen.win_blocked == "passed_win"
    assert seen.win_blocked_reason == mj.WIN_BLOCKED_REASONS["passed_win"]
    assert mj.view(state, 1).win_blocked is None  # private to seat 2
    # Seat 1 draws and throws its 5z: seat 2 is not offered the win, no window opens.
    state, events = play(state, [(1, Draw()), (1, Discard("5z"))])
    assert (state.turn, state.phase) == (2, "draw")
    assert not any(isinstance(e, mj.CallWindowOpened) for e in events)
    assert mj.view(state, 2).win_blocked == "passed_win"
    # Its own draw lifts the block.
    state, _ = mj.apply(state, 2, Draw())
    assert state.passed_win == (False,) * 4
    assert mj.view(state, 2).win_blocked is None


def test_after_the_draw_a_discard_wins_again() -> None:
    state = _passed(None, front="1m 4m 8s 5z")
    state, _ = play(state, [(1, Draw()), (1, Discard("1z"))])
    state, _ = play(state, [(2, Draw()), (2, Discard("8s"))])  # the block is lifted here
    state, _ = play(state, [(3, Draw()), (3, Discard("5z"))])
    assert mj.legal_actions(state, 2) == [Claim(kind="mahjong"), Pass()]
    state, _ = mj.apply(state, 2, Claim(kind="mahjong"))
    result = mj.result(state)
    assert result is not None and (result.winner, result.discarder) == (2, 3)


# Seat 2 waits on 5z (a pong) or 4s, and holds two 5z: Mahjong and Pong on a 5z.
WIN_OR_PONG = (PASSED[0], PASSED[1], "55z 123m 456m 789p 123s 44s", PASSED[3])


def test_claiming_something_else_instead_of_winning_also_blocks() -> None:
    state = _passed(Claim(kind="pong", tiles=("5z", "5z")), hands=WIN_OR_PONG)
    assert state.passed_win[2] and (state.turn, state.phase) == (2, "discard")
    assert state.players[2].melds[0].tiles == ("5z",) * 3


def test_a_blocked_player_may_still_pong_and_still_win_by_drawing() -> None:
    state = rig(
        WIN_OR_PONG,
        front="1m 4m 4s",
        indicator="4z",
        options=JOKER,
        discarded=True,
        passed_win=(False, False, True, False),
    )
    state, _ = play(state, [(0, Draw()), (0, Discard("5z"))])
    assert mj.legal_actions(state, 2) == [Claim(kind="pong", tiles=("5z", "5z")), Pass()]
    assert mj.view(state, 2).win_blocked == "passed_win"
    state, _ = play(state, [(2, Pass()), (1, Draw()), (1, Discard("1z")), (2, Draw())])
    assert DeclareWin() in mj.legal_actions(state, 2)  # a self-draw is never blocked


def test_the_block_is_an_option() -> None:
    options = mj.options_for("joker", passed_win_blocks=False)
    state = rig(PASSED, front="1m", indicator="4z", options=options, discarded=True)
    state, _ = play(state, [(0, Draw()), (0, Discard("5z")), (2, Pass())])
    assert state.passed_win == (False,) * 4 and mj.view(state, 2).win_blocked is None
    kalaro = rig(PASSED, front="1m", discarded=True)
    kalaro, _ = play(kalaro, [(0, Draw()), (0, Discard("5z")), (2, Pass())])
    assert kalaro.passed_win == (False,) * 4


# -- secret kangs and what views show --------------------------------------------------------

KANG = ("1111p 2222p 333s 444s 66s", "111m 222m 333m 444m 55m 1z 2z",
        "666m 777m 888m 999m 5m 1z 2z 3z", "56789p 56789p 1z 2z 3z 5z 6z 7z")  # fmt: skip


def test_a_secret_kang_is_face_down_to_the_others_until_the_hand_ends() -> None:
    state = rig(KANG, front="7s", back="7s 7s", indicator="4z", options=JOKER, discarded=True)
    state, events = play(state, [(0, Draw()), (0, DeclareKang("1p"))])
    kang = Meld(kind="kang", tiles=("1p",) * 4, concealed=True)
    declared = events[1]
    assert declared == KangDeclared(seat=0, meld=kang, added=False, secret=True)
    face_down = KangDeclared(
        seat=0, meld=Meld(kind="kang", tiles=(), concealed=True), added=False, secret=True
    )
    for seat in (None, 1, 2, 3):
        assert mj.event_for(declared, seat) == face_down
        assert mj.view(state, seat).players[0].melds == (face_down.meld,)
        assert b"1p" not in msgspec.json.encode(mj.view(state, seat).players[0])
    assert mj.event_for(declared, 0) == declared
    assert mj.view(state, 0).players[0].melds == (kang,)
    state, _ = play(state, [(0, DeclareKang("2p")), (0, DeclareWin())])
    assert mj.view(state, 1).players[0].melds[0] == kang  # revealed with the win


def test_kalaro_shows_concealed_kangs() -> None:
    state = rig(KANG, front="7s", back="7s 7s", discarded=True)
    state, events = play(state, [(0, Draw()), (0, DeclareKang("1p"))])
    assert mj.event_for(events[1], 2) == events[1]
    assert mj.view(state, 2).players[0].melds[0].tiles == ("1p",) * 4


def test_jokers_are_shown_first_in_their_owners_hand() -> None:
    hands = ("4z 111p 222p 333z 666z 777z", "123m 456m 789p 123s 456s 4z",
             "4z 1m 9m 1s 9s 1z 2z 6z 8m 8p 8s 2m 2p 3p 7p 7s", EYE[3])  # fmt: skip
    state = rig(hands, front="1m", indicator="4z", options=JOKER, discarded=True)
    seen = mj.view(state, 1)
    assert seen.players[1].hand == (
        "4z",
        "1m",
        "2m",
        "3m",
        "4m",
        "5m",
        "6m",
        "7p",
        "8p",
        "9p",
        "1s",
        "2s",
        "3s",
        "4s",
        "5s",
        "6s",
    )
    assert state.players[1].hand[-1] == "4z"  # the state keeps table order
    assert all(seen.players[s].hand is None for s in (0, 2, 3))
    assert mj.view(state, 2).players[2].hand[0] == "4z"


def test_the_view_carries_what_the_client_shows() -> None:
    state = rig(EYE, front="1m", indicator="4z", options=PINOY, discarded=True)
    seen = mj.view(state, 0)
    assert seen.joker == "4z"
    assert seen.options.points == mj.DEFAULT_POINTS  # the points table
    assert seen.options.turn_seconds == 20
    decoded = msgspec.json.decode(msgspec.json.encode(seen), type=mj.View)
    assert decoded == seen
    table = msgspec.json.decode(msgspec.json.encode(seen))["options"]["points"]
    assert table["Win by Draw Joker Eye"] == 3
