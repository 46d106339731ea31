"""Records to test the lobby's pure rules on: no servers, no clock, no I/O."""

from __future__ import annotations

from msgspec.structs import replace

from kalaro.proto.lobby import Caller, SeatInfo, TableInfo
from services.lobby.records import TableRecord

HOST = Caller(user_id="u_host", display_name="Hana", roles=("host",))
ANA = Caller(user_id="u_ana", display_name="Ana")
BEN = Caller(user_id="u_ben", display_name="Ben")
CRIS = Caller(user_id="u_cris", display_name="Cris")
ADMIN = Caller(user_id="u_admin", display_name="Ada", roles=("admin",))
BOT = Caller(user_id="u_bot", display_name="Bot", roles=("bot",))
NOW = 1_000_000.0


def record(
    *,
    seats: int = 3,
    bet: int = 10,
    private: bool = False,
    invite_code: str | None = None,
    practice: bool = False,
) -> TableRecord:
    info = TableInfo(
        table_id="t1",
        game="tongits",
        ruleset="kalaro",
        options={},
        bet=bet,
        max_loss=4 * bet,
        private=private,
        chat_enabled=True,
        host_id=HOST.user_id,
        host_name=HOST.display_name,
        seats=(None,) * seats,
        status="waiting",
        hand_no=0,
        created_at="2026-01-01T00:00:00.000+00:00",
        version=1,
        practice=practice,
    )
    return TableRecord(
        info=info, server_seed="aa" * 32, entropy=("",) * seats, invite_code=invite_code
    )


def seated(rec: TableRecord, *callers: Caller, ready: bool = False) -> TableRecord:
    """``callers`` in seats 0, 1, …, ready or not."""
    seats = tuple(
        SeatInfo(user_id=c.user_id, display_name=c.display_name, ready=ready) for c in callers
    )
    rest = rec.info.seats[len(seats) :]
    return replace(rec, info=replace(rec.info, seats=seats + rest))
