"""The chaos test's checks, on a ledger we break on purpose: each can fail.

No servers: a SQLite wallet written through the ledger's own functions, then damaged
by hand (a hold left open, a hand settled and voided, an account that does not add
up, a settlement that differs from the result, a table stuck mid-hand, a lost move).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from kalaro.proto.wallet import AuditReport, HoldRequest, Payment
from services.wallet import ledger
from services.wallet.schema import migrate_wallet
from tests.chaos.checks import check_all, settle_delays
from tests.chaos.players import HandLog, Journal

USERS = ("user-1", "user-2", "user-3")


@dataclass
class _Table:
    status: str
    game: str = "tongits"
    hand_id: str | None = None


@dataclass
class _Record:
    actions: tuple[tuple[int, Any], ...]
    voided: bool = False


class FakeAdmin:
    """The API calls the checks make, answered from fixed data."""

    def __init__(
        self, stuck: set[str], records: dict[str, int], voided: frozenset[str] = frozenset()
    ) -> None:
        self.stuck = stuck
        self.records = records  # hand -> actions per seat in its record
        self.voided = voided  # hands whose record says voided

    async def get_table(self, table_id: str) -> _Table:
        return _Table("playing" if table_id in self.stuck else "waiting")

    async def hand_record(self, table_id: str, hand_id: str) -> _Record:
        n = self.records.get(hand_id, 50)
        actions = tuple((seat, {}) for seat in range(3) for _ in range(n))
        return _Record(actions, voided=hand_id in self.voided)

    async def audit(self) -> AuditReport:
        return AuditReport(total=0, accounts=4, mismatched_accounts=(), negative_available=())


async def _ledger(url: str, *, clean: bool = False) -> None:
    engine = create_async_engine(url)
    await migrate_wallet(engine)
    for user in USERS:
        await ledger.welcome_grant(engine, user, 1000)
    holds = [HoldRequest(user_id=u, amount=40) for u in USERS]
    paid = [
        Payment(user_id="user-1", amount=20),
        Payment(user_id="user-2", amount=-10),
        Payment(user_id="user-3", amount=-10),
    ]
    for hand in (
        ("h-good", "h-both", "h-other") if clean else ("h-good", "h-open", "h-both", "h-other")
    ):
        await ledger.place_holds(engine, "t-1", hand, holds)
    await ledger.place_holds(engine, "t-2", "h-void", holds)
    await ledger.settle(engine, "h-good", paid, "t-1")
    await ledger.settle(engine, "h-both", paid, "t-1")
    await ledger.settle(engine, "h-other", paid, "t-1")
    await ledger.void(engine, "h-void", "t-2")
    if not clean:  # h-race: cancelled, settled, yet its record says voided
        await ledger.place_holds(engine, "t-1", "h-race", holds)
        await ledger.settle(engine, "h-race", paid, "t-1")
    await engine.dispose()


def _hand(hand_id: str, **kw: Any) -> HandLog:
    payments = {"user-1": 20, "user-2": -10, "user-3": -10}
    return HandLog(hand_id, "t-1", "tongits", 0.0, payments=payments, **kw)


async def test_a_clean_ledger_passes(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'w.db'}"
    await _ledger(url, clean=True)
    journal = Journal()
    journal.hands = {
        "h-good": _hand("h-good", finished=True, last_move_at=1.0),
        "h-void": _hand("h-void", cancelled=True),
        "h-both": _hand("h-both", cancelled=True),  # its last move beat the cancel: settled
    }
    journal.tables = {"t-1", "t-2"}
    problems, counts = await check_all(url, FakeAdmin(set(), {}), journal, 10)  # type: ignore[arg-type]
    assert problems == []
    assert counts["settlements (wallet)"] == 3 and counts["voids (wallet)"] == 1


async def test_every_kind_of_damage_is_reported(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'w.db'}"
    await _ledger(url)
    engine = create_async_engine(url)
    async with engine.begin() as conn:
        # h-both: a void lands after its settlement
        await conn.execute(
            text(
                "INSERT INTO wallet_transactions (kind, idempotency_key, actor, memo, hand_id, "
                "created_at) VALUES ('void', 'void:h-both', 'x', '', 'h-both', "
                "'2025-01-01T00:00:00.000000+00:00')"
            )
        )
        # an account that does not add up: balances no longer sum to zero either
        await conn.execute(
            text("UPDATE wallet_accounts SET balance = balance + 5 WHERE owner = 'user-1'")
        )
    await engine.dispose()
    journal = Journal()
    journal.hands = {
        "h-good": _hand("h-good", finished=True),
        "h-open": _hand("h-open", finished=True),  # finished, never settled
        "h-both": _hand("h-both", finished=True),
        "h-void": _hand("h-void", finished=True),  # finished, but the wallet voided it
        "h-other": _hand("h-other", finished=True),
        "h-lost": _hand("h-lost", cancelled=True),  # cancelled, never voided
        "h-race": _hand("h-race", cancelled=True),
    }
    journal.hands["h-other"].payments = {"user-1": 30, "user-2": -30}
    journal.hands["h-good"].acked[1] = 60  # more moves acked than its record holds
    journal.tables = {"t-1", "t-stuck"}
    admin = FakeAdmin({"t-stuck"}, {"h-good": 50}, frozenset({"h-race"}))
    problems, _ = await check_all(url, admin, journal, 10)  # type: ignore[arg-type]
    text_ = "\n".join(problems)
    expected = [
        "finished hand h-open (tongits, table t-1): outcome transactions []",
        "finished hand h-both (tongits, table t-1): outcome transactions ['settlement', 'void']",
        "finished hand h-void (tongits, table t-1): outcome transactions ['void']",
        "hand h-other: settled {'user-1': 20, 'user-2': -10, 'user-3': -10}, the result said",
        "cancelled hand h-lost (tongits, table t-1): outcome transactions []",
        "cancelled hand h-race (tongits) was settled and voided",
        "hand h-good (tongits): acked moves missing from its record (seat: missing) {1: 10}",
        "hand h-both: settlement row 'settled' with outcome transactions ['settlement', 'void']",
        "hand h-both was both settled and voided",
        "hand h-open: 3 hold(s) still 'held'",
        "table not settled: table t-stuck (tongits) is 'playing'",
        "SQL: balances sum to 5, not 0",
        "SQL: account user-1: balance",
    ]
    for piece in expected:
        assert piece in text_, f"not reported: {piece!r}\n--- got:\n{text_}"


async def test_settle_delays_measure_last_move_to_settlement(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'w.db'}"
    await _ledger(url)
    from tests.chaos.checks import read_books

    books = await read_books(url)
    settled_at = next(t for k, t in books.outcome_txs["h-good"] if k == "settlement")
    journal = Journal()
    journal.hands = {"h-good": _hand("h-good", finished=True, last_move_at=settled_at - 2.5)}
    delays = settle_delays(journal, books)
    assert abs(delays["h-good"] - 2.5) < 1e-3
