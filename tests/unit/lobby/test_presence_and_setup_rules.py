"""Presence and new-table rules: pure, in milliseconds."""

from __future__ import annotations

import pytest
from msgspec.structs import replace

from kalaro.bus import ServiceError
from kalaro.proto import errors as codes
from kalaro.proto.lobby import CreatePractice, CreateTable
from services.lobby import presence, setup
from services.lobby.records import TableRecord
from tests.unit.lobby.lobby_helpers import ANA, BEN, BOT, HOST, NOW, record, seated

GRACE, FORGET = 30.0, 90.0


def derive(rec: TableRecord, now: float) -> TableRecord:
    return presence.derive(rec, now, grace=GRACE, forget_after=FORGET)


def states(rec: TableRecord) -> list[str | None]:
    return [s.presence if s else None for s in rec.info.seats]


def test_a_socket_connects_then_its_loss_is_graced_then_offline() -> None:
    rec = derive(seated(record(), ANA, BEN), NOW)
    assert states(rec) == ["offline", "offline", None]
    on = derive(presence.note_gateway(rec, "g1", (ANA.user_id,), NOW), NOW)
    assert states(on) == ["connected", "offline", None]
    assert derive(on, NOW) is on  # nothing moved: the same record, nothing written
    off = derive(presence.note_gateway(on, "g1", (), NOW + 1), NOW + 1)
    assert states(off) == ["reconnecting", "offline", None]
    assert presence.due(off, grace=GRACE, forget_after=FORGET) == NOW + 1 + GRACE
    assert states(derive(off, NOW + 1 + GRACE)) == ["offline", "offline", None]


def test_a_silent_gateway_is_forgotten() -> None:
    on = derive(presence.note_gateway(seated(record(), ANA), "g1", (ANA.user_id,), NOW), NOW)
    assert presence.due(on, grace=GRACE, forget_after=FORGET) == NOW + FORGET
    gone = derive(on, NOW + FORGET)
    # Last known connected when it last reported, longer ago than the grace: offline.
    assert gone.gateways == () and states(gone)[0] == "offline"
    assert presence.due(gone, grace=GRACE, forget_after=FORGET) is None
    # An empty report from a gateway we never heard of changes nothing.
    assert presence.note_gateway(on, "g2", (), NOW) is on


def test_new_table_refusals() -> None:
    make = CreateTable(caller=HOST, game="tongits", bet=10)
    rec = setup.new_table(make, created_at="t", invite_code=None)
    assert rec.info.max_loss > 0 and rec.info.host_id == HOST.user_id
    with pytest.raises(ServiceError) as caught:
        setup.new_table(
            CreateTable(caller=ANA, game="tongits", bet=10), created_at="t", invite_code=None
        )
    assert caught.value.code == codes.FORBIDDEN
    no_clock = CreateTable(caller=HOST, game="tongits", bet=10, options={"turn_seconds": None})
    with pytest.raises(ServiceError, match="turn clock"):
        setup.new_table(no_clock, created_at="t", invite_code=None)
    with pytest.raises(ServiceError) as caught:
        setup.new_table(
            CreateTable(caller=HOST, game="chess", bet=0), created_at="t", invite_code=None
        )
    assert caught.value.code == codes.BAD_REQUEST


def test_new_practice_keeps_every_other_seat_for_a_bot() -> None:
    rec = setup.new_practice(CreatePractice(caller=ANA, game="tongits"), created_at="t", now=NOW)
    assert rec.info.practice and rec.info.bet == 0
    assert [s.user_id if s else None for s in rec.info.seats] == [ANA.user_id, None, None]
    assert rec.bot_seats == ((1, NOW), (2, NOW))
    with pytest.raises(ServiceError):
        setup.new_practice(CreatePractice(caller=BOT, game="tongits"), created_at="t", now=NOW)


def test_only_open_practice_tables_count_and_the_refusal_names_them() -> None:
    open_one = record(bet=0, practice=True).info
    assert setup.practice_open(open_one)
    for status in ("ended", "cancelled"):
        assert not setup.practice_open(replace(open_one, status=status))  # type: ignore[arg-type]
    assert not setup.practice_open(None)  # expired
    refusal = setup.practice_limit_error([open_one], opening=2, limit=3, idle_minutes=30)
    assert refusal.code == codes.PRACTICE_LIMIT
    assert "3 practice tables" in refusal.message and "tongits table t1" in refusal.message
    assert "2 being opened right now" in refusal.message and "30 minutes" in refusal.message
