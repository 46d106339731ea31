"""What a seat puts at stake and whether one balance covers every table (pure)."""

from __future__ import annotations

from msgspec.structs import replace

from kalaro.proto import errors as codes
from kalaro.proto.lobby import TableInfo
from kalaro.proto.wallet import Balance
from services.lobby import money
from services.lobby.money import PENDING_STAKE_SECONDS, Stake
from tests.unit.lobby.lobby_helpers import ANA, NOW, record, seated


def _table(table_id: str, *, bet: int = 10, status: str = "waiting", ana: bool = True) -> TableInfo:
    rec = seated(record(bet=bet), ANA) if ana else record(bet=bet)
    return replace(rec.info, table_id=table_id, status=status)  # type: ignore[arg-type]


def _balance(total: int, held: int = 0) -> Balance:
    return Balance(user_id=ANA.user_id, balance=total, held=held, available=total - held)


def _counted(info: TableInfo) -> money.Commitment:
    found = money.commitment_of(info, pending=False)
    assert found is not None
    return found


def test_a_seat_commits_the_max_loss_only_where_there_is_a_bet() -> None:
    assert money.seat_hold(_table("t1", bet=10)) == 40  # 4x the bet at kalaro Tongits
    assert money.seat_hold(_table("t1", bet=0)) == 0
    practice = replace(_table("t1", bet=0), practice=True)
    assert money.seat_hold(practice) == 0
    assert money.commitment_of(practice, pending=False) is None


def test_a_stake_counts_while_its_player_sits_there() -> None:
    stake = Stake(token="a", at=NOW - 10_000, seated=True)
    counted = money.stake_commitment(ANA.user_id, _table("t1"), stake, NOW)
    assert counted is not None and counted.amount == 40 and not counted.pending
    # Left (or removed), closed, or gone: forgotten.
    assert money.stake_commitment(ANA.user_id, _table("t1", ana=False), stake, NOW) is None
    assert money.stake_commitment(ANA.user_id, _table("t1", status="ended"), stake, NOW) is None
    assert money.stake_commitment(ANA.user_id, _table("t1", status="cancelled"), stake, NOW) is None
    assert money.stake_commitment(ANA.user_id, None, stake, NOW) is None


def test_a_sit_in_flight_counts_until_it_is_stale() -> None:
    fresh = Stake(token="a", at=NOW - 1)
    counted = money.stake_commitment(ANA.user_id, _table("t1", ana=False), fresh, NOW)
    assert counted is not None and counted.pending
    old = Stake(token="a", at=NOW - PENDING_STAKE_SECONDS)
    assert money.stake_commitment(ANA.user_id, _table("t1", ana=False), old, NOW) is None
    # A Sit that died after its seat was taken still counts: the seat is the truth.
    assert money.stake_commitment(ANA.user_id, _table("t1"), old, NOW) is not None


def test_held_credits_are_not_counted_twice() -> None:
    playing = _counted(_table("t1", status="playing"))
    waiting = _counted(_table("t2"))
    # t1's hold (40) is already in held: 40 + t2's 40, not 40 + 40 + 40.
    assert money.required([playing, waiting], held=40) == 80
    # Not placed yet (still dealing), or a hold of some other hand: the larger counts.
    assert money.required([playing, waiting], held=0) == 80
    assert money.required([playing, waiting], held=100) == 140


def test_cover_refuses_over_commitment_naming_the_tables() -> None:
    here = _counted(_table("t2"))
    elsewhere = [_counted(_table("t1"))]
    assert money.cover(here, [], _balance(40)) is None
    assert money.cover(here, elsewhere, _balance(80)) is None
    problem = money.cover(here, elsewhere, _balance(79))
    assert problem is not None and problem.code == codes.COMMITTED_ELSEWHERE
    assert "t1" in problem.message and "80" in problem.message and "Leave" in problem.message
    alone = money.cover(here, [], _balance(39))
    assert alone is not None and alone.code == codes.INSUFFICIENT_FUNDS
    assert "40 credits available" in alone.message and "4x the bet of 10" in alone.message
    # Credits held for a hand not at any table counted still cover nothing new.
    held = money.cover(here, [], _balance(60, held=30))
    assert held is not None and held.code == codes.INSUFFICIENT_FUNDS
