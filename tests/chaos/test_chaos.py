"""Cluster chaos: bet hands of every game under kill -9 of every kind of process.

The system runs replicated (see ``stack.py``): a 3-node NATS cluster with JetStream
(streams with 3 replicas), Redis with ``appendfsync always``, SQL (PostgreSQL when
reachable, and/or SQLite), one auth and two replicas each of wallet, lobby, gateway and
every game's engine, with clients coming in through a TCP balancer over the gateways.

While players keep bet hands going at a table per game (the host now and then cancels a
table mid-hand and opens a new one), it kill -9s in turn, with a pause between faults:
the NATS node leading the RESULTS stream, the other two nodes (one loses its JetStream
directory), an engine, a wallet, a lobby, a gateway and Redis; each comes back. It also
freezes processes (SIGSTOP for longer than the ack wait and the timer lease, then
SIGCONT), so a wallet and an engine wake up holding work others have redone; the long
run freezes every kind, a NATS stream leader and Redis included. Then the
load stops, things settle (bounded, polling) and it checks: every finished hand settled
exactly once as its result said, every cancelled hand voided once, no hand both, no
hold left 'held', no table stuck mid-hand, the books balance (SQL and the audit), every
stream has 3 replicas, no process crashed by itself. It prints the counts and, for each
NATS node kill, the worst delay from a hand's last move to its settlement in the wallet
(the goal is 5 s when a stream leader dies; this asserts under 30 s).

Short by default (about 2-3 minutes, in ``make test``); ``KALARO_CHAOS=long`` (``make
chaos``) runs more tables and more rounds of faults (``KALARO_CHAOS_ROUNDS``, default 2)
on SQLite and PostgreSQL. ``KALARO_CHAOS_DB`` = auto | sqlite | postgresql | both
overrides the database choice.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import re
import shutil
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from kalaro.client import KalaroClient
from tests.chaos.checks import check_all, delay_report, read_books, settle_delays, wait_settled
from tests.chaos.faults import Fault, Injector, long_plan, short_plan, stream_report
from tests.chaos.players import Journal, TableRunner, call
from tests.chaos.stack import ChaosStack
from tests.conftest import POSTGRES_ADMIN_URL, _drop_postgres_database, _postgres_database
from tests.e2e.tables import admin as admin_client
from tests.e2e.tables import signed_up

GAMES = ("tongits", "mahjong", "kawuxing")
SEATS = {"tongits": 3, "mahjong": 4, "kawuxing": 3}
BET = 10
MAX_SETTLE_DELAY = 30.0  # seconds; the goal is 5 (printed), this is the generous bound


@dataclass(frozen=True)
class Mode:
    name: str
    tables_per_game: int
    plan: list[Fault]
    pause: float  # between faults: the system recovers
    down: float  # how long a killed process stays dead
    warmup: float  # load before the first fault
    settle: float  # bound on the wait for things to settle
    cancel_chance: float  # per hand, the host cancels mid-hand


LONG = os.environ.get("KALARO_CHAOS", "").lower() == "long"
ROUNDS = int(os.environ.get("KALARO_CHAOS_ROUNDS", "2"))
MODE = (
    Mode("long", 2, long_plan(GAMES, ROUNDS), 15, 2, 15, 180, 0.12)
    if LONG
    else Mode("short", 1, short_plan(GAMES), 6, 1.5, 8, 90, 0.15)
)
_DB_CHOICE = os.environ.get("KALARO_CHAOS_DB", "both" if LONG else "auto")
DATABASES = ["sqlite", "postgresql"] if _DB_CHOICE == "both" else [_DB_CHOICE]
# The whole run: start-up, faults, the last hands, settling, checks.
TIMEOUT = 300 + len(MODE.plan) * (MODE.pause + MODE.down + 10) + MODE.settle


@pytest.fixture(
    params=[
        # "auto" uses PostgreSQL when one is reachable, so it is marked too.
        pytest.param(kind, marks=pytest.mark.postgres) if kind != "sqlite" else kind
        for kind in DATABASES
    ]
)
async def chaos_database(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    kind = request.param
    name = f"kalaro_chaos_{uuid.uuid4().hex[:12]}"
    url = None
    if kind in ("postgresql", "auto"):
        url = await _postgres_database(name)
        if url is None and kind == "postgresql":
            pytest.skip(f"PostgreSQL not reachable at {POSTGRES_ADMIN_URL}")
    if url is None:
        print(f"\n[chaos] database: SQLite ({tmp_path / 'kalaro.db'})")
        yield f"sqlite+aiosqlite:///{tmp_path / 'kalaro.db'}"
        return
    print(f"\n[chaos] database: PostgreSQL ({name} on {POSTGRES_ADMIN_URL})")
    try:
        yield url
    finally:
        await _drop_postgres_database(name)


def _log_errors(stack: ChaosStack) -> list[str]:
    """Each replica's distinct ERROR lines and exceptions (evidence, not failures)."""
    lines = []
    for path in sorted(stack.logs.glob("*.log")):
        if path.name.startswith(("nats-", "redis")):
            continue
        seen: dict[str, int] = {}
        in_traceback = False
        for line in path.read_text(errors="replace").splitlines():
            if line.startswith("Traceback"):
                in_traceback = True
                continue
            if in_traceback and not line.startswith((" ", "During", "The above", "Traceback")):
                in_traceback = False
                if line.strip():
                    key = re.sub(r"[0-9a-f]{12,}|\d+", "#", line)[:200]
                    seen[f"raised {key}"] = seen.get(f"raised {key}", 0) + 1
                    continue
            if " ERROR " in line or " CRITICAL " in line:
                key = re.sub(r"[0-9a-f]{12,}|\d+", "#", line.split(": ", 1)[-1])[:200]
                seen[key] = seen.get(key, 0) + 1
        for key, n in seen.items():
            lines.append(f"{path.stem}: {n}x {key}")
    return lines


def _keep_logs(stack: ChaosStack, label: str) -> Path | None:
    """Copy the logs where pytest's rotation of temporary directories cannot reach."""
    target = Path("test-artifacts") / f"chaos-{label}-{time.strftime('%Y%m%d-%H%M%S')}"
    with contextlib.suppress(Exception):
        shutil.copytree(stack.logs, target)
        return target.resolve()
    return None


@pytest.mark.timeout(TIMEOUT)
async def test_cluster_chaos(chaos_database: str, tmp_path: Path) -> None:
    mode = MODE
    print(f"[chaos] mode {mode.name}: {len(mode.plan)} faults, pause {mode.pause}s")
    print(f"[chaos] root {tmp_path}")
    stack = ChaosStack(tmp_path, chaos_database, GAMES)
    journal = Journal()
    clients: list[KalaroClient] = []
    tasks: list[asyncio.Task[None]] = []
    problems: list[str] = []
    try:
        started = time.monotonic()
        await stack.start_all()
        up = time.monotonic() - started
        print(f"[chaos] stack up in {up:.1f}s; clients via {stack.base_url}")
        admin = await admin_client(stack)  # type: ignore[arg-type]
        clients.append(admin)
        streams = await stream_report(stack.cluster.url)
        print(f"[chaos] streams at start: {streams}")

        unique = uuid.uuid4().hex[:8]
        rng = random.Random(unique)
        runners = []
        for game in GAMES:
            for t in range(mode.tables_per_game):
                players = []
                for seat in range(SEATS[game]):
                    player = await signed_up(stack, f"{game[:3]}{t}s{seat}", unique)  # type: ignore[arg-type]
                    clients.append(player)
                    await call(journal, "grant", lambda p=player: admin.grant(
                        p.user.user_id, 50_000, "chaos test credits"))  # fmt: skip
                    players.append(player)
                runners.append(
                    TableRunner(
                        journal, admin, players, game, BET,
                        rng=random.Random(rng.random()), cancel_chance=mode.cancel_chance,
                        cancel_hand=2 if not runners else None,  # one cancel is certain
                    )
                )  # fmt: skip
        stop = asyncio.Event()
        tasks = [asyncio.create_task(r.run(stop)) for r in runners]
        await asyncio.sleep(mode.warmup)
        injector = Injector(stack, pause=mode.pause, down=mode.down)
        faults = await injector.run(mode.plan)
        await asyncio.sleep(mode.pause)
        print(f"[chaos] {time.strftime('%H:%M:%S')} faults done; finishing the hands in play")
        stop.set()
        _done, pending = await asyncio.wait(tasks, timeout=180)
        for task in pending:
            journal.problem(f"a table runner did not finish its hand in 180 s: {task}")
            task.cancel()
        for task in tasks:
            if task.done() and not task.cancelled() and task.exception() is not None:
                journal.problem(f"a table runner failed: {task.exception()!r}")

        books, waited = await wait_settled(chaos_database, admin, journal, mode.settle)
        print(f"[chaos] settled after {waited:.1f}s (bound {mode.settle:.0f}s)")
        problems, counts = await check_all(chaos_database, admin, journal, BET)

        streams = await stream_report(stack.cluster.url)
        print(f"[chaos] streams at the end: {streams}")
        for name, info in streams.items():
            if info.get("replicas") != 3:
                replicas = info.get("replicas")
                problems.append(f"stream {name} has {replicas} replica(s), not 3: {info}")
        for name in stack.dead():
            code = stack.replicas[name].process.returncode  # type: ignore[union-attr]
            problems.append(f"{name} exited by itself (code {code}):\n{stack.log_tail(name, 1500)}")
        for fault in faults:
            if fault.error:
                problems.append(f"fault {fault.label()} could not be injected: {fault.error}")

        books = await read_books(chaos_database)
        delays = settle_delays(journal, books)
        lines, worst = delay_report(journal, delays, faults, mode.pause)
        for key, value in worst.items():
            if value is not None and value > MAX_SETTLE_DELAY:
                problems.append(f"NATS fault {key}: a settlement took {value:.1f}s (> 30 s)")

        finished_games = {h.game for h in journal.hands.values() if h.finished}
        problems += [f"no {g} hand finished at all" for g in GAMES if g not in finished_games]
        if not any(h.cancelled for h in journal.hands.values()):
            problems.append("no hand was cancelled mid-hand (the void path went untested)")

        print("\n[chaos] ===== counts")
        for key, value in counts.items():
            print(f"[chaos] {key}: {value}")
        print(f"[chaos] faults injected: {len(faults)}")
        for i, fault in enumerate(faults):
            print(f"[chaos]   #{i + 1} {fault.label()}: back after {fault.back_at - fault.at:.1f}s")
        print(f"[chaos] calls retried through faults: {journal.retries}")
        print(f"[chaos] moves refused or lost: {dict(journal.act_errors)}")
        print(f"[chaos] sockets reconnected by the SDK: {journal.reconnects}")
        print(f"[chaos] quiet hands re-fetched (subscribe again): {journal.resubscribes}")
        lb = stack.balancer
        print(
            f"[chaos] balancer: connections per gateway port {dict(lb.accepted)}, "
            f"refused {dict(lb.refused)}"
        )
        print("[chaos] ===== last move -> settlement in the wallet, per NATS node kill")
        for line in lines:
            print(f"[chaos] {line}")
        print("[chaos] ===== errors in the service logs (evidence)")
        for line in _log_errors(stack)[:60]:
            print(f"[chaos] {line}")
        print("[chaos] ===== notes")
        for note in journal.notes[-40:]:
            print(f"[chaos] {note}")
        problems = journal.problems + problems
        print("[chaos] ===== problems")
        for problem in problems:
            print(f"[chaos] PROBLEM: {problem}")
    finally:
        for task in tasks:
            task.cancel()
        for client in clients:
            with contextlib.suppress(Exception):
                await client.close()
        await stack.stop_all()
        kept = _keep_logs(stack, f"{mode.name}-{chaos_database.split(':')[0].split('+')[0]}")
        print(f"[chaos] service logs: {kept or stack.logs}")
    assert not problems, f"{len(problems)} problem(s):\n" + "\n".join(problems)
