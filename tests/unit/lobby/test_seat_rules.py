"""Seats, readiness, removal and bots: the lobby's pure table rules, in milliseconds."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from kalaro.bus import ServiceError
from kalaro.proto import errors as codes
from kalaro.proto.lobby import NO_SUCH_TABLE
from services.lobby import rules
from tests.unit.lobby.lobby_helpers import ADMIN, ANA, BEN, BOT, CRIS, HOST, NOW, record, seated


def refused(code: str, call: object, *args: object, **kw: object) -> str:
    with pytest.raises(ServiceError) as caught:
        call(*args, **kw)  # type: ignore[operator]
    assert caught.value.code == code, caught.value
    return caught.value.message


def test_sit_takes_the_first_free_seat_and_keeps_every_other_field() -> None:
    rec = replace(record(), last_hand_id="h_old", dealing_since=5.0)
    after = rules.sit(rec, ANA, None, None, NOW)
    assert after.info.seats[0] is not None and after.info.seats[0].user_id == ANA.user_id
    # A rule changes only what it means to: the rest of the record is carried over.
    assert (after.last_hand_id, after.dealing_since) == ("h_old", 5.0)
    assert rec.info.seats[0] is None  # and never mutates what it was given


def test_sit_refusals() -> None:
    rec = rules.sit(record(), ANA, 1, None, NOW)
    assert "already sitting" in refused(codes.CONFLICT, rules.sit, rec, ANA, None, None, NOW)
    assert "taken" in refused(codes.CONFLICT, rules.sit, rec, BEN, 1, None, NOW)
    assert "between 0 and 2" in refused(codes.BAD_REQUEST, rules.sit, rec, BEN, 3, None, NOW)
    full = seated(record(), ANA, BEN, CRIS)
    assert "full" in refused(codes.CONFLICT, rules.sit, full, HOST, None, None, NOW)
    ended = replace(rec, info=replace(rec.info, status="ended"))
    assert "ended" in refused(codes.CONFLICT, rules.sit, ended, BEN, None, None, NOW)


def test_private_table_needs_its_code_except_for_the_host() -> None:
    # Without the code the answer is an unknown table's, even for a closed table.
    rec = record(private=True, invite_code="s3cret-code")
    unknown = NO_SUCH_TABLE
    assert refused(codes.NOT_FOUND, rules.sit, rec, ANA, None, None, NOW) == unknown
    assert refused(codes.NOT_FOUND, rules.sit, rec, ANA, None, "nope", NOW) == unknown
    ended = replace(rec, info=replace(rec.info, status="ended"))
    assert refused(codes.NOT_FOUND, rules.sit, ended, ANA, None, "", NOW) == unknown
    assert rules.sit(rec, ANA, None, "s3cret-code", NOW).info.seats[0] is not None
    assert rules.sit(rec, HOST, None, None, NOW).info.seats[0] is not None


def test_ready_keeps_entropy_only_while_ready() -> None:
    rec = seated(record(), ANA, BEN)
    ready = rules.set_ready(rec, BEN, True, "ben's dice")
    assert ready.entropy == ("", "ben's dice", "")
    assert ready.info.seats[1] is not None and ready.info.seats[1].ready
    unready = rules.set_ready(ready, BEN, False, "ignored")
    assert unready.entropy == ("", "", "")
    assert "not sitting" in refused(codes.CONFLICT, rules.set_ready, rec, CRIS, True, "")
    playing = replace(rec, info=replace(rec.info, status="playing"))
    assert "hand in progress" in refused(codes.CONFLICT, rules.set_ready, playing, ANA, True, "")


def test_leave_frees_the_seat_and_a_practice_host_leaving_ends_the_table() -> None:
    rec = seated(record(), ANA, BEN)
    after = rules.leave(rec, ANA)
    assert after.info.seats[0] is None and after.info.status == "waiting"
    practice = seated(record(bet=0, practice=True), HOST)
    assert rules.leave(practice, HOST).info.status == "ended"


def test_leave_after_hand_is_a_flag_and_repeating_it_changes_nothing() -> None:
    rec = seated(record(), ANA)
    flagged = rules.leave_after_hand(rec, ANA, True)
    assert flagged.info.seats[0] is not None and flagged.info.seats[0].leave_after_hand
    assert rules.leave_after_hand(flagged, ANA, True) is flagged


def test_remove_bars_the_player_until_the_host_allows_them_back() -> None:
    rec = seated(record(), ANA, BEN)
    assert "only the host" in refused(codes.FORBIDDEN, rules.remove_player, rec, ANA, 1)
    removed = rules.remove_player(rec, HOST, 1)
    assert removed.info.seats[1] is None
    assert [r.user_id for r in removed.info.removed] == [BEN.user_id]
    refused(codes.REMOVED_FROM_TABLE, rules.sit, removed, BEN, None, None, NOW)
    back = rules.allow_back(removed, ADMIN, BEN.user_id)  # an admin may run any table
    assert back.info.removed == ()
    assert rules.sit(back, BEN, None, None, NOW).info.seats[1] is not None
    assert "not removed" in refused(codes.NOT_REMOVED, rules.allow_back, back, HOST, BEN.user_id)
    assert "already empty" in refused(codes.CONFLICT, rules.remove_player, removed, HOST, 1)


def test_bots_sit_only_in_seats_kept_for_them_at_zero_bet_tables() -> None:
    paid = seated(record(), HOST)
    assert "credits" in refused(codes.FORBIDDEN, rules.keep_bot_seat, paid, HOST, None, NOW)
    free = seated(record(bet=0), HOST)
    refused(codes.FORBIDDEN, rules.sit, free, BOT, None, None, NOW)  # nothing kept yet
    kept = rules.keep_bot_seat(free, HOST, None, NOW)
    assert kept.bot_seats[-1] == (1, NOW)
    # A person cannot take the kept seat; the bot takes it, and it is no longer kept.
    assert rules.sit(kept, ANA, None, None, NOW).info.seats[2] is not None
    assert "kept for a bot" in refused(codes.CONFLICT, rules.sit, kept, ANA, 1, None, NOW)
    sat = rules.sit(kept, BOT, None, None, NOW)
    assert sat.info.seats[1] is not None and sat.info.seats[1].is_bot and sat.bot_seats == ()
    # The hold runs out: a late bot is refused.
    late = NOW + 31
    refused(codes.FORBIDDEN, rules.sit, kept, BOT, None, None, late)
    assert rules.release_bot_seat(kept, 1).bot_seats == ()
    assert rules.release_bot_seat(free, 1) is free
