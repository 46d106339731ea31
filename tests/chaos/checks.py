"""After the load: wait for things to settle, then check the books and the tables.

Read SQL directly (the wallet's tables, see ``services/wallet/schema.py``) and ask the
API (tables through the lobby, the audit through the wallet).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from kalaro.client import KalaroClient
from tests.chaos.faults import Fault
from tests.chaos.players import Journal, call


@dataclass
class Books:
    settlements: dict[str, tuple[str, str]] = field(default_factory=dict)  # hand -> status, req
    outcome_txs: dict[str, list[tuple[str, float]]] = field(default_factory=dict)
    held: dict[str, int] = field(default_factory=dict)  # hand -> holds still 'held'
    total: int = 0
    mismatched: list[str] = field(default_factory=list)


def _stamp(value: str) -> float:
    return datetime.fromisoformat(value).timestamp()


async def read_books(database_url: str) -> Books:
    engine = create_async_engine(database_url)
    books = Books()
    try:
        async with engine.connect() as conn:
            for hand, status, requested in await conn.execute(
                text("SELECT hand_id, status, requested FROM wallet_settlements")
            ):
                books.settlements[hand] = (status, requested)
            txs: dict[str, list[tuple[str, float]]] = defaultdict(list)
            for hand, kind, created in await conn.execute(
                text(
                    "SELECT hand_id, kind, created_at FROM wallet_transactions "
                    "WHERE kind IN ('settlement', 'void')"
                )
            ):
                txs[hand].append((kind, _stamp(created)))
            books.outcome_txs = dict(txs)
            for hand, n in await conn.execute(
                text(
                    "SELECT hand_id, COUNT(*) FROM wallet_holds WHERE status = 'held' "
                    "GROUP BY hand_id"
                )
            ):
                books.held[hand] = n
            books.total = (
                await conn.execute(text("SELECT COALESCE(SUM(balance), 0) FROM wallet_accounts"))
            ).scalar_one()
            rows = await conn.execute(
                text(
                    "SELECT a.owner, a.balance, a.held, "
                    "(SELECT COALESCE(SUM(e.amount), 0) FROM wallet_entries e "
                    " WHERE e.account_id = a.id), "
                    "(SELECT COALESCE(SUM(h.amount), 0) FROM wallet_holds h "
                    " WHERE h.account_id = a.id AND h.status = 'held') "
                    "FROM wallet_accounts a"
                )
            )
            for owner, balance, held, entries, holds in rows:
                if balance != entries or held != holds:
                    books.mismatched.append(
                        f"{owner}: balance {balance} vs entries {entries}, "
                        f"held {held} vs open holds {holds}"
                    )
    finally:
        await engine.dispose()
    return books


def _requested(raw: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in json.loads(raw or "[]"):
        if isinstance(item, dict):
            out[str(item.get("user_id"))] = int(item.get("amount", 0))
        else:
            out[str(item[0])] = int(item[1])
    return out


def unsettled(journal: Journal, books: Books) -> list[str]:
    """What is not done yet (empty: settled): the wait-until-quiet condition."""
    left = []
    for hand in journal.hands.values():
        kinds = [k for k, _ in books.outcome_txs.get(hand.hand_id, [])]
        if hand.finished and "settlement" not in kinds:
            left.append(f"finished hand {hand.hand_id} not settled")
        if hand.cancelled and not kinds:
            left.append(f"cancelled hand {hand.hand_id} not voided")
    left += [f"hand {h} still has {n} hold(s) held" for h, n in books.held.items()]
    left += [f"hand {h} still open" for h, (s, _) in books.settlements.items() if s == "open"]
    return left


async def stuck_tables(admin: KalaroClient, journal: Journal) -> list[str]:
    stuck = []
    for table_id in sorted(journal.tables):
        info = await call(journal, "get table", lambda t=table_id: admin.get_table(t), 30)
        if info.status in ("playing", "dealing"):
            stuck.append(f"table {table_id} ({info.game}) is {info.status!r}, hand {info.hand_id}")
    return stuck


async def wait_settled(
    database_url: str, admin: KalaroClient, journal: Journal, timeout: float
) -> tuple[Books, float]:
    """Poll until nothing is left to settle and no table is mid-hand, or ``timeout``."""
    started = time.monotonic()
    while True:
        books = await read_books(database_url)
        left = unsettled(journal, books) + await stuck_tables(admin, journal)
        waited = time.monotonic() - started
        if not left or waited > timeout:
            return books, waited
        await asyncio.sleep(1)


async def check_all(
    database_url: str, admin: KalaroClient, journal: Journal, bet: int
) -> tuple[list[str], dict[str, Any]]:
    """Every check; returns the problems found and the counts."""
    problems: list[str] = []
    books = await read_books(database_url)
    ours = journal.hands
    finished = [h for h in ours.values() if h.finished]
    cancelled = [h for h in ours.values() if h.cancelled]
    # Every finished hand was settled exactly once, as the engine's result said.
    for hand in finished:
        kinds = [k for k, _ in books.outcome_txs.get(hand.hand_id, [])]
        status = books.settlements.get(hand.hand_id, ("missing", "[]"))
        if kinds != ["settlement"] or status[0] != "settled":
            problems.append(
                f"finished hand {hand.hand_id} ({hand.game}, table {hand.table_id}): "
                f"outcome transactions {kinds}, settlement row {status[0]!r} "
                "(want one settlement, row 'settled')"
            )
        elif bet > 0 and hand.payments:
            requested = _requested(status[1])
            if {u: a for u, a in requested.items() if a} != {
                u: a for u, a in hand.payments.items() if a
            }:
                problems.append(
                    f"hand {hand.hand_id}: settled {requested}, the result said {hand.payments}"
                )
    # Every cancelled hand was voided once (or, if its last move won the race with the
    # cancel, settled once: then the engine has its record).
    for hand in cancelled:
        kinds = [k for k, _ in books.outcome_txs.get(hand.hand_id, [])]
        if kinds == ["void"]:
            continue
        if kinds == ["settlement"]:
            try:
                record = await admin.hand_record(hand.table_id, hand.hand_id)
            except Exception as exc:
                problems.append(
                    f"cancelled hand {hand.hand_id} ({hand.game}) was settled, and the "
                    f"engine has no record of it finishing ({exc})"
                )
                continue
            # A voided hand has a record too (issue 31): only a finished one was settled.
            if not record.voided:
                journal.note(f"cancelled hand {hand.hand_id} had finished first: settled")
                continue
            problems.append(f"cancelled hand {hand.hand_id} ({hand.game}) was settled and voided")
            continue
        problems.append(
            f"cancelled hand {hand.hand_id} ({hand.game}, table {hand.table_id}): outcome "
            f"transactions {kinds} (want exactly one void)"
        )
    # No acknowledged move was lost (Redis is killed with appendfsync always): the
    # engine's record of each finished hand holds at least every move it acked per seat.
    for hand in finished:
        try:
            record = await call(
                journal, "record", lambda h=hand: admin.hand_record(h.table_id, h.hand_id), 30
            )
        except Exception as exc:
            problems.append(f"finished hand {hand.hand_id} ({hand.game}): no record: {exc}")
            continue
        recorded = Counter(seat for seat, _action in record.actions)
        lost = {s: n - recorded[s] for s, n in hand.acked.items() if recorded[s] < n}
        if lost:
            problems.append(
                f"hand {hand.hand_id} ({hand.game}): acked moves missing from its record "
                f"(seat: missing) {lost}; acked {dict(hand.acked)}, recorded {dict(recorded)}"
            )
    # Every hand the wallet knows of (ours, and deals that failed on the way): one outcome.
    for hand_id, (status, _) in books.settlements.items():
        kinds = sorted(k for k, _ in books.outcome_txs.get(hand_id, []))
        want = {"settled": ["settlement"], "voided": ["void"]}.get(status)
        if kinds != want:
            problems.append(
                f"hand {hand_id}: settlement row {status!r} with outcome transactions {kinds}"
            )
    both = [h for h, txs in books.outcome_txs.items() if len({k for k, _ in txs}) > 1]
    problems += [f"hand {h} was both settled and voided" for h in both]
    problems += [f"hand {h}: {n} hold(s) still 'held'" for h, n in books.held.items()]
    problems += [f"table not settled: {t}" for t in await stuck_tables(admin, journal)]
    # The books.
    if books.total != 0:
        problems.append(f"SQL: balances sum to {books.total}, not 0")
    problems += [f"SQL: account {m}" for m in books.mismatched]
    report = await call(journal, "audit", admin.audit, 60)
    if report.total != 0 or report.mismatched_accounts or report.negative_available:
        problems.append(f"audit: {report}")
    settled = sum(1 for s, _ in books.settlements.values() if s == "settled")
    voided = sum(1 for s, _ in books.settlements.values() if s == "voided")
    counts = {
        "hands dealt (seen by clients)": len(ours),
        "hands finished (seen by clients)": len(finished),
        "hands cancelled by the host": len(cancelled),
        "settlements (wallet)": settled,
        "voids (wallet)": voided,
        "settled hands the clients did not see finish": len(
            [
                h
                for h, (s, _) in books.settlements.items()
                if s == "settled" and not (h in ours and ours[h].finished)
            ]
        ),
        "audit accounts": report.accounts,
    }
    for game in sorted({h.game for h in ours.values()}):
        counts[f"  {game}: finished"] = sum(1 for h in finished if h.game == game)
    return problems, counts


def settle_delays(journal: Journal, books: Books) -> dict[str, float]:
    """hand id -> seconds from its last move to its settlement in the wallet."""
    delays = {}
    for hand in journal.hands.values():
        txs = [t for k, t in books.outcome_txs.get(hand.hand_id, []) if k == "settlement"]
        if hand.finished and txs and hand.last_move_at:
            delays[hand.hand_id] = txs[0] - hand.last_move_at
    return delays


def delay_report(
    journal: Journal, delays: dict[str, float], faults: list[Fault], window: float
) -> tuple[list[str], dict[str, float | None]]:
    """For each NATS fault, the worst settlement delay of hands that ended around it."""
    lines = []
    worst: dict[str, float | None] = {}
    near_any: set[str] = set()
    for i, fault in enumerate(faults):
        if fault.kind != "nats":
            continue
        around = [
            h
            for h in journal.hands.values()
            if h.hand_id in delays and fault.at - 3 <= h.ended_at <= fault.back_at + window
        ]
        near_any.update(h.hand_id for h in around)
        key = f"#{i + 1} {fault.label()}"
        if around:
            top = max(around, key=lambda h: delays[h.hand_id])
            worst[key] = delays[top.hand_id]
            lines.append(
                f"{key}: {len(around)} hand(s) ended around it; worst delay "
                f"{delays[top.hand_id]:.2f}s (hand {top.hand_id}); node back after "
                f"{fault.back_at - fault.at:.1f}s"
            )
        else:
            worst[key] = None
            lines.append(f"{key}: no hand ended around it")
    calm = [d for h, d in delays.items() if h not in near_any]
    if calm:
        lines.append(
            f"away from NATS faults: {len(calm)} hands, median {statistics.median(calm):.2f}s, "
            f"max {max(calm):.2f}s"
        )
    return lines, worst
