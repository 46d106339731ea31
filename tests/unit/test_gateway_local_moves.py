"""When a gateway may apply a table's move itself: only while every seat of the hand has
an open socket attached to that very seat here (services/gateway/local_moves.py).

Pure: a TableFeed with no NATS behind it (attach never touches the connection).
"""

from __future__ import annotations

from typing import cast

from nats.aio.client import Client as NATS

from kalaro.proto.lobby import SeatInfo, TableInfo
from services.gateway.hub import Connection, TableFeed
from services.gateway.local_moves import every_seat_here


async def _nothing(frame: bytes) -> None:
    return None


def _table(*users: str | None) -> TableInfo:
    seats = tuple(None if u is None else SeatInfo(user_id=u, display_name=u) for u in users)
    return TableInfo(
        table_id="t1", game="tongits", ruleset="classic", options={}, bet=10, max_loss=100,
        private=False, chat_enabled=True, host_id="h", host_name="H", seats=seats,
        status="playing", hand_no=1, created_at="2026-12-02T00:00:00Z",
    )  # fmt: skip


def _feed(table: TableInfo, *users: str) -> tuple[TableFeed, list[Connection]]:
    feed = TableFeed(cast(NATS, None), table)
    conns = [Connection(u, u, _nothing) for u in users]
    for conn in conns:
        feed.attach(conn)
    return feed, conns


def test_every_seat_on_its_own_seat_here() -> None:
    feed, _ = _feed(_table("a", "b", "c"), "a", "b", "c")
    assert every_seat_here(feed, ["a", "b", "c"])


def test_a_seat_without_a_socket_here_is_not() -> None:
    feed, _ = _feed(_table("a", "b", "c"), "a", "b")
    assert not every_seat_here(feed, ["a", "b", "c"])


def test_a_spectator_is_no_seat() -> None:
    feed, _ = _feed(_table("a", "b", None), "a", "b", "c")  # c watches
    assert not every_seat_here(feed, ["a", "b", "c"])
    assert not every_seat_here(feed, ["a", "b", None])  # an empty seat is never here


def test_the_hands_players_not_the_tables_decide() -> None:
    # c stood up and d sat down after the deal: the hand is still a, b and c's.
    feed, _ = _feed(_table("a", "b", "d"), "a", "b", "d")
    assert every_seat_here(feed, ["a", "b", "d"])
    assert not every_seat_here(feed, ["a", "b", "c"])
    assert not every_seat_here(feed, ["b", "a", "d"])  # seats, not just people


def test_a_closed_socket_does_not_count() -> None:
    feed, conns = _feed(_table("a", "b", "c"), "a", "b", "c")
    conns[2].closed.set()  # closing, not yet detached
    assert not every_seat_here(feed, ["a", "b", "c"])


def test_no_feed_is_not_here() -> None:
    assert not every_seat_here(None, ["a"])
