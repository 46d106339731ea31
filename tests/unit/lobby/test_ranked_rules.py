"""Ranked tables and minimum ratings: the pure rules (services/lobby/ranked.py) and the
Sit's rating check against the in-memory twin of the ranked service's ratings."""

from __future__ import annotations

from typing import Any, cast

import pytest
from msgspec.structs import replace

from kalaro.bus import ServiceError
from kalaro.proto import errors as codes
from kalaro.proto.lobby import CreateTable, HandFinished, OpenRankedTable, Sit
from services.lobby import hands, ranked, rules, setup
from services.lobby.ranked_ratings import MemoryRatings
from services.lobby.ranked_tables import RankedTables
from services.lobby.records import TableRecord
from tests.unit.lobby.lobby_helpers import ADMIN, ANA, BEN, BOT, CRIS, HOST, NOW, record, seated

OPEN = OpenRankedTable(game="tongits", bet=10, players=("u_ana", "u_ben", "u_cris"), match_id="m1")


def _ranked(*, ready: bool = False) -> TableRecord:
    rec = ranked.new_table(OPEN, created_at="2026-12-05T00:00:00Z", now=NOW)
    for index, caller in enumerate((ANA, BEN, CRIS)):
        rec = ranked.seat_player(rec, index, caller)
    if ready:
        seats = tuple(replace(s, ready=True) for s in rec.info.seats if s is not None)
        rec = replace(rec, info=replace(rec.info, seats=seats))
    return rec


def _refused(code: str, call: Any, *args: Any, **kw: Any) -> str:
    with pytest.raises(ServiceError) as error:
        call(*args, **kw)
    assert error.value.code == code, error.value
    return error.value.message


def test_a_ranked_table_is_public_hostless_clocked_and_seats_the_match_in_order() -> None:
    rec = _ranked()
    info = rec.info
    assert info.ranked and not info.private and not info.practice
    assert info.host_id == ""
    assert [s.user_id for s in info.seats if s is not None] == ["u_ana", "u_ben", "u_cris"]
    assert info.ready_by == NOW + ranked.READY_SECONDS
    assert info.options.get("turn_seconds") is not None  # always a turn clock
    assert info.max_loss > 0 and info.bet == 10


@pytest.mark.parametrize(
    "players", [("a", "b"), ("a", "b", "c", "d"), ("a", "a", "b"), ("a", "", "b")]
)
def test_a_match_must_name_one_distinct_player_per_seat(players: tuple[str, ...]) -> None:
    bad = replace(OPEN, players=players)
    _refused(codes.BAD_REQUEST, ranked.new_table, bad, created_at="x", now=NOW)


def test_nobody_else_sits_and_no_bot_is_ever_added_at_a_ranked_table() -> None:
    rec = ranked.new_table(OPEN, created_at="x", now=NOW)  # seats still empty
    for who in (ANA, HOST, ADMIN, BOT):
        message = _refused(codes.FORBIDDEN, rules.sit, rec, who, None, None, NOW)
        assert "ranked" in message
    _refused(codes.FORBIDDEN, rules.keep_bot_seat, rec, ADMIN, None, NOW)
    _refused(codes.FORBIDDEN, rules.keep_bot_seat, rec, HOST, None, NOW)  # not its host


def test_nobody_hosts_it_but_the_lobby_deals_it() -> None:
    rec = _ranked(ready=True)
    for who in (ANA, HOST):
        _refused(codes.FORBIDDEN, hands.claim_deal, rec, who, "h1", NOW)
        _refused(codes.FORBIDDEN, rules.end_table, rec, who)
        _refused(codes.FORBIDDEN, rules.remove_player, rec, who, 0)
    claimed = hands.claim_deal(rec, ranked.LOBBY_DEALER, "h1", NOW)
    assert claimed.info.status == "dealing"
    assert claimed.info.ready_by is None  # the clock stops for the hand


def test_a_player_leaving_ends_the_ranked_table() -> None:
    left = rules.leave(_ranked(), ANA)
    assert left.info.status == "ended"
    assert left.info.seats[0] is None


def test_a_hand_end_with_an_empty_seat_ends_it_and_otherwise_waits() -> None:
    playing = hands.claim_deal(_ranked(ready=True), ranked.LOBBY_DEALER, "h1", NOW)
    playing = hands.start_playing(playing, "h1")
    seed = ("bb" * 32, "cc" * 32)
    kept = hands.finish_hand(playing, HandFinished(table_id="t", hand_id="h1", next_dealer=1), seed)
    assert kept.info.status == "waiting"
    assert ranked.clock_started(kept, NOW + 5).info.ready_by == NOW + 5 + ranked.READY_SECONDS
    away = HandFinished(table_id="t", hand_id="h1", next_dealer=1, away_seats=(2,))
    assert hands.finish_hand(playing, away, seed).info.status == "ended"


def test_the_ready_clock_stands_up_the_late_and_ends_the_table() -> None:
    rec = _ranked()
    seats = list(rec.info.seats)
    seats[0] = replace(seats[0], ready=True)  # type: ignore[type-var]
    rec = replace(rec, info=replace(rec.info, seats=tuple(seats)))
    assert ranked.clock_ran_out(rec, NOW + ranked.READY_SECONDS - 1) is rec  # not yet
    out = ranked.clock_ran_out(rec, NOW + ranked.READY_SECONDS)
    assert out.info.status == "ended"
    assert out.info.seats[0] is not None and out.info.seats[1] is None and out.info.seats[2] is None
    everyone = _ranked(ready=True)  # all ready at the clock: the sweep deals instead
    assert ranked.clock_ran_out(everyone, NOW + 60) is everyone


def test_an_abandoned_open_leaves_nobody_seated() -> None:
    gone = ranked.abandoned(_ranked())
    assert gone.info.status == "cancelled"
    assert gone.info.seats == (None, None, None)
    assert ranked.abandoned(gone) is gone


# --- minimum rating ----------------------------------------------------------------------


def test_a_host_sets_a_minimum_rating_on_a_public_table_only() -> None:
    made = setup.new_table(
        CreateTable(caller=HOST, game="tongits", bet=0, min_rating=1200, options={}),
        created_at="x",
        invite_code=None,
    )
    assert made.info.min_rating == 1200
    private = CreateTable(caller=HOST, game="tongits", bet=0, private=True, min_rating=1200)
    _refused(codes.BAD_REQUEST, setup.new_table, private, created_at="x", invite_code="c")
    rec = record()
    changed = ranked.set_min_rating(rec, HOST, 1500)
    assert changed.info.min_rating == 1500
    assert ranked.set_min_rating(changed, HOST, None).info.min_rating is None
    _refused(codes.FORBIDDEN, ranked.set_min_rating, rec, ANA, 1500)
    _refused(codes.BAD_REQUEST, ranked.set_min_rating, rec, HOST, -1)
    _refused(codes.FORBIDDEN, ranked.set_min_rating, _ranked(), ADMIN, 1500)


def test_a_rating_below_the_minimum_is_refused_and_unknown_counts_as_the_start() -> None:
    info = replace(record().info, min_rating=1100)
    message = _refused(codes.RATING_TOO_LOW, ranked.require_rating, info, 1099.5)
    assert "1100" in message and "1099.5" in message
    ranked.require_rating(info, 1100)
    _refused(codes.RATING_TOO_LOW, ranked.require_rating, info, None)  # 1000 < 1100
    ranked.require_rating(replace(info, min_rating=1000), None)
    ranked.require_rating(replace(info, min_rating=None), 0)


async def test_the_sit_asks_the_ratings_twin_for_the_tables_game() -> None:
    twin = MemoryRatings({("u_ana", "tongits"): 1400.0, ("u_ben", "mahjong"): 2000.0})
    deps = _deps(twin)
    info = replace(record().info, min_rating=1300)
    await deps.check_sit(Sit(caller=ANA, table_id="t1"), info)
    with pytest.raises(ServiceError) as error:  # Ben's rating is in another game
        await deps.check_sit(Sit(caller=BEN, table_id="t1"), info)
    assert error.value.code == codes.RATING_TOO_LOW
    assert twin.asked == [("u_ana", "tongits"), ("u_ben", "tongits")]
    await deps.check_sit(Sit(caller=CRIS, table_id="t1"), replace(info, min_rating=None))
    await deps.check_sit(Sit(caller=ANA, table_id="t1"), seated(record(), ANA).info)
    await deps.check_sit(Sit(caller=BOT, table_id="t1"), info)
    assert len(twin.asked) == 2  # no minimum, already seated, or a bot: nobody asked


def _deps(twin: MemoryRatings) -> RankedTables:
    nothing = cast(Any, None)
    return RankedTables(
        *(nothing,) * 5, "p:", clock=lambda: NOW, rating_of=twin, is_frozen=twin.is_frozen
    )


async def test_a_frozen_account_sits_nowhere() -> None:
    twin = MemoryRatings()
    twin.frozen.add(ANA.user_id)
    with pytest.raises(ServiceError) as error:
        await _deps(twin).check_sit(Sit(caller=ANA, table_id="t1"), record().info)
    assert error.value.code == codes.FORBIDDEN and "frozen" in error.value.message
    await _deps(twin).check_sit(Sit(caller=BEN, table_id="t1"), record().info)
