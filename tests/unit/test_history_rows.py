"""History's rows for a batch (pure): each hand once, one index row per human player."""

from __future__ import annotations

from msgspec.structs import replace

from kalaro.proto.engine import Player
from kalaro.records import summary
from services.history.store import rows_of
from tests.integration.history.history_helpers import stored, voided


def test_a_batch_gives_each_hand_once_and_indexes_only_its_humans() -> None:
    first, second = stored("u", 0), stored("u", 1, game="mahjong", finished_ms=7)
    again = stored("u", 0, finished_ms=99)  # a later duplicate: the first one is kept
    hand_rows, player_rows = rows_of([first, second, again])
    assert [(r["hand_id"], r["finished_ms"], r["game"]) for r in hand_rows] == [
        ("u.0", 1_000_000, "tongits"),
        ("u.1", 7, "mahjong"),
    ]
    assert sorted((r["user_id"], r["hand_id"]) for r in player_rows) == [
        ("u-a", "u.0"), ("u-a", "u.1"), ("u-b", "u.0"), ("u-b", "u.1"),
    ]  # fmt: skip
    assert all(not r["practice"] for r in hand_rows)


def test_one_player_in_two_seats_is_indexed_once() -> None:
    item = stored("u", 0)
    twice = (*item.record.players[:2], Player(user_id="u-a", display_name="A again"))
    _, player_rows = rows_of([replace(item, record=replace(item.record, players=twice))])
    assert sorted(r["user_id"] for r in player_rows) == ["u-a", "u-b"]


def test_a_voided_hand_is_flagged_in_both_tables_and_counts_for_nobody() -> None:
    item = voided("u", 0)
    hand_rows, player_rows = rows_of([stored("u", 1), item])
    assert [(r["hand_id"], r["voided"]) for r in hand_rows] == [("u.1", False), ("u.0", True)]
    flagged = sorted((r["user_id"], r["voided"], r["won"], r["net"]) for r in player_rows
                     if r["hand_id"] == "u.0")  # fmt: skip
    assert flagged == [("u-a", True, False, 0), ("u-b", True, False, 0)]


def test_a_voided_hand_reads_as_voided_in_my_hands() -> None:
    line = summary(voided("u", 0).record, "u-a", 5)
    assert (line.ending, line.won, line.credits, line.finished_ms) == ("voided", False, 0, 5)
    finished = summary(stored("u", 0).record, "u-a", 5)
    assert (finished.ending, finished.won, finished.credits) == ("tongits", True, 20)
