"""Each player's (won, net) of a hand, as history's stats count it, for every game:
the record's winners (Tongits' and Ka Wu Xing's lists, Mahjong's one winner) and its
payments, checked against the game's own ``winners`` on real hands."""

from __future__ import annotations

import msgspec
import pytest

from kalaro.games.registry import rules_for
from services.history.outcome import outcome, winning_seats
from tests.history_played import GAMES, played


@pytest.mark.parametrize("game", GAMES)
def test_outcome_matches_the_games_own_winners_and_payments(game: str) -> None:
    rules = rules_for(game)
    seen_won = seen_lost = False
    for seed in range(6):
        users = tuple(f"p{i}" for i in range(rules.seats))
        record = played(game, seed, users)
        expected = set(rules_for(game).winners(_result(game, record.result)))
        for seat, user in enumerate(users):
            won, net = outcome(record, user)
            assert won == (seat in expected)
            assert net == record.payments[seat]
            seen_won |= won
            seen_lost |= not won
    assert seen_won and seen_lost  # the seeds exercise both


def _result(game: str, data: object) -> object:
    """The game's Result struct decoded back from the record's JSON form."""
    module = __import__(f"kalaro.games.{game}", fromlist=["Result"])
    return msgspec.convert(data, module.Result)


def test_winning_seats_of_each_result_shape() -> None:
    assert winning_seats({"winners": [0, 2], "ending": "tongits"}) == {0, 2}
    assert winning_seats({"winner": 1}) == {1}
    assert winning_seats({"winner": None, "ending": "draw"}) == frozenset()
    assert winning_seats({"winners": []}) == frozenset()
    assert winning_seats(None) == frozenset()


def test_a_player_seated_twice_counts_their_first_seat() -> None:
    record = played("tongits", 1, ("a", "b", "a"))
    _, net = outcome(record, "a")
    assert net == record.payments[0]
    with pytest.raises(StopIteration):
        outcome(record, "nobody")


def test_a_fresh_records_tuple_of_winners_counts_too() -> None:
    assert winning_seats({"winners": (1,)}) == {1}


def test_a_voided_hand_was_won_by_nobody_and_paid_nothing() -> None:
    record = msgspec.structs.replace(
        played("tongits", 2, ("a", "b", "c")), result=None, payments=(0, 0, 0), voided=True
    )
    assert [outcome(record, user) for user in ("a", "b", "c")] == [(False, 0)] * 3
    # Even a voided record that (wrongly) kept a result counts for no one.
    kept = msgspec.structs.replace(record, result={"winners": [0]}, payments=(5, 0, -5))
    assert outcome(kept, "a") == (False, 0)
