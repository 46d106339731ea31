"""History at scale (issue 31): reads through the service, batched ingest against a raw
multi-row INSERT of the same rows, on SQLite and PostgreSQL.

    .venv/bin/python bench/bench_history.py [--records 1000000] [--database both]
        [--database-url postgresql://postgres@127.0.0.1:5432/postgres] [--strict]
        [--keep URL]

``--keep URL`` loads into that database and keeps it (``sqlite+aiosqlite:///path`` or a
PostgreSQL URL of a database you made); run again with the same ``--keep``, ``--records``,
``--pool`` and ``--seed`` and the load is skipped, only the reads are measured: loading a
million records takes most of an hour on 2 busy cores, the reads a minute, so the reads
can be timed again on a quiet machine.

Records are real hands: a pool (``--pool``, spread over the games) is played from seeds
by the pure engines with the smart bots, dealt as the engine worker deals (a server
seed, the players' entropy, ``derive_seed``), and each becomes a ``HandRecord`` through
the worker's own builder (``services.engine.hand.hand_record`` of the finished
``Slot``); one per game is checked with ``kalaro verify``. Playing a million distinct
hands in Python would take hours, so the stored records are copies of the pool, each
stamped with its own hand id, table, players and finish time: real records with real
sizes (the stamp touches nothing the verifier checks). Every 10th hand seats one of 20
"heavy" players (1M records: 5,000 hands each); the other seats are drawn from
``records / 40`` players; a third of the hands have a bot in the last seat.

Ingest: the records are stored in batches of ``--batch`` (64, the consumer's fetch)
with ``services.history.store.store_hands``, one transaction each, as the consumer
stores a fetch: that is the ingest measurement and also the load. Each batch's same
rows (built beforehand, untimed) also go through a raw multi-row INSERT (SQLAlchemy Core
``insert(table)``, no ON CONFLICT) into anchor tables made with the same DDL (same keys
and indexes), one transaction per batch; which goes first alternates, so both tables
grow alike. Goal: store ≥ 0.5× the raw rate.

Reads: a nats-server (``kalaro.devstack``) and the history service's endpoints
(``build_service``) in a child process on uvloop with the services' GC settings, as
deployed; this process asks one request at a time with ``kalaro.bus.request`` and
times request → decoded reply: "my hands" first page (limit 20) of the heavy players,
all games and one game, and a record by id (ids drawn uniformly from all stored).
The asker's garbage collector is off while it times (its pauses are not the
service's); the child collects as the services do. Goals (absolute, from the issue):
p99 ≤ 20 ms and ≤ 10 ms. The floor, same run: a raw NATS request answered by a bare
subscription in the same child.

Progress goes to stderr, the summary to stdout. Exit status 1 when an answer is wrong
(or, with ``--strict``, when a goal is missed); the other benches only print verdicts.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import hashlib
import os
import random
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
from sqlalchemy import MetaData, text
from sqlalchemy.ext.asyncio import AsyncEngine

from bench_wallet import DEFAULT_POSTGRES, _drop_postgres, _postgres_scratch
from kalaro.bots import policy_for
from kalaro.bus import request
from kalaro.bus.runner import connect, tune_gc
from kalaro.devstack import NatsServer
from kalaro.games.base import derive_seed
from kalaro.games.registry import game_names, rules_for
from kalaro.proto import endpoints
from kalaro.proto.engine import HandRecord, Player
from kalaro.proto.history import GetStoredHand, ListHands, StoredHand
from kalaro.sql import create_engine
from kalaro.verify import verify_hand
from services.engine.hand import Slot, hand_record
from services.history import store
from services.history.bootstrap import build_service
from services.history.handlers import history_deps
from services.history.schema import hands, migrate_history, player_hands

HEAVY = 20
PAGE = 20
ECHO = "bench.history.echo"
LIST_P99_MS, GET_P99_MS, INGEST_RATIO = 20.0, 10.0, 0.5
EPOCH_MS = 1_764_000_000_000  # finish times from here, 20 s apart


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# --- records -------------------------------------------------------------------------


def play_hand(game: str, seed: int) -> HandRecord:
    """One hand of smart bots, dealt and logged as the engine worker does, recorded by
    the worker's ``hand_record``."""
    rules = rules_for(game)
    rng = random.Random(f"bench-history:{game}:{seed}")
    options = rules.options({})
    server_seed = rng.randbytes(32)
    entropy = tuple(f"ready-{rng.getrandbits(64):x}" for _ in range(rules.seats))
    state = rules.new_hand(options, derive_seed(server_seed, entropy), None)
    dealt = rules.dealt(state)
    policies = [policy_for(game, "smart") for _ in range(rules.seats)]
    encode = msgspec.json.Encoder().encode
    actions: list[tuple[int, bytes]] = []
    while not rules.is_over(state):
        for seat in rules.to_act(state):
            action = policies[seat].choose(rules.view(state, seat), rng)
            if action is not None:
                break
        else:  # nobody has anything to say: the pending timer runs out, as the worker's
            timer = rules.pending_timer(state)
            assert timer is not None and timer.seats, f"{game} hand {seed} is stuck"
            seat, action = timer.seats[0], rules.time_out()
        state, _ = rules.apply(state, seat, action)
        actions.append((seat, encode(action)))
    slot = Slot(
        table_id="pool",
        hand_id=f"pool-{game}-{seed}",
        game=game,
        options=rules.options_dict(options),
        bet=10,
        players=tuple(Player(user_id=f"p{s}", display_name=f"P{s}") for s in range(rules.seats)),
        seed_commitment=hashlib.sha256(server_seed).hexdigest(),
        server_seed=server_seed.hex(),
        entropy=entropy,
        state=msgspec.msgpack.encode(state),
        actions=tuple(actions),
        initial_hands=dealt,
        status="finished",
    )
    return hand_record(slot)


def make_pool(size: int) -> list[HandRecord]:
    games = game_names()
    if size < len(games):
        raise SystemExit(f"--pool must be at least {len(games)}: a hand of every game")
    pool: list[HandRecord] = []
    started = time.perf_counter()
    for i in range(size):
        pool.append(play_hand(games[i % len(games)], i // len(games)))
        if (i + 1) % 100 == 0:
            log(f"  pool: {i + 1}/{size} hands played ({time.perf_counter() - started:.0f} s)")
    for game in games:
        report = verify_hand(next(r for r in pool if r.game == game))
        if not report.ok:
            raise SystemExit(f"a pool hand of {game} does not verify: {report.checks}")
    return pool


def hand_id(seed: int, n: int) -> str:
    """Stored hand ``n``'s id (random-looking, as the lobby's are): any ``n`` is cheap."""
    return hashlib.blake2b(f"{seed}:{n}".encode(), digest_size=12).hexdigest()


def heavy_user(k: int) -> str:
    return f"heavy-{k:02d}"


@dataclass
class Stamper:
    """Stored hand ``n``: a pool record with its own id, table, players and time."""

    pool: list[HandRecord]
    records: int
    seed: int
    users: int = field(init=False)

    def __post_init__(self) -> None:
        self.users = max(100, self.records // 40)

    def stored(self, n: int) -> StoredHand:
        rng = random.Random(self.seed * 1_000_003 + n)
        record = self.pool[rng.randrange(len(self.pool))]
        seats = len(record.players)
        ids = [f"user-{rng.randrange(self.users)}" for _ in range(seats)]
        if n % 10 == 0:
            ids[0] = heavy_user((n // 10) % HEAVY)
        players = [Player(user_id=u, display_name=u) for u in ids]
        if n % 3 == 0:
            players[-1] = Player(user_id="bot:smart", display_name="Bot", is_bot=True)
        stamped = msgspec.structs.replace(
            record,
            hand_id=hand_id(self.seed, n),
            table_id=f"table-{n // 20}",
            players=tuple(players),
        )
        return StoredHand(record=stamped, finished_ms=EPOCH_MS + n * 20_000, practice=n % 7 == 0)


# --- ingest --------------------------------------------------------------------------


async def create_anchor_tables(engine: AsyncEngine) -> tuple[Any, Any]:
    """``bench_raw_*``: history's tables under other names (same columns, keys and
    indexes: the ``Table``s mirror the migrated schema, a test checks it)."""
    scratch = MetaData()
    raw_hands = hands.to_metadata(scratch, name="bench_raw_hands")
    raw_players = player_hands.to_metadata(scratch, name="bench_raw_player_hands")
    for table in (raw_hands, raw_players):
        for index in table.indexes:  # index names are per schema, not per table
            index.name = str(index.name).replace("history_", "bench_raw_")
    async with engine.begin() as conn:
        await conn.run_sync(scratch.create_all)
    return raw_hands, raw_players


@dataclass
class Ingest:
    records: int = 0
    store_s: float = 0.0
    raw_s: float = 0.0

    @property
    def ratio(self) -> float:
        return self.raw_s / self.store_s if self.store_s else 0.0


def batches(records: int, size: int) -> Iterator[range]:
    for start in range(0, records, size):
        yield range(start, min(records, start + size))


async def _raw_insert(
    engine: AsyncEngine, tables: tuple[Any, Any], hand_rows: Any, player_rows: Any
) -> float:
    started = time.perf_counter()
    async with engine.begin() as conn:
        await conn.execute(tables[0].insert(), hand_rows)
        await conn.execute(tables[1].insert(), player_rows)
    return time.perf_counter() - started


async def _timed_store(engine: AsyncEngine, stored: list[StoredHand]) -> float:
    started = time.perf_counter()
    await store.store_hands(engine, stored)
    return time.perf_counter() - started


async def load(engine: AsyncEngine, stamper: Stamper, batch: int) -> Ingest:
    raw_tables = await create_anchor_tables(engine)
    result = Ingest()
    shown = started = time.perf_counter()
    for b, numbers in enumerate(batches(stamper.records, batch)):
        stored = [stamper.stored(n) for n in numbers]
        hand_rows, player_rows = store.rows_of(stored)  # the anchor's rows, untimed

        if b % 2:
            result.raw_s += await _raw_insert(engine, raw_tables, hand_rows, player_rows)
        result.store_s += await _timed_store(engine, stored)
        if not b % 2:
            result.raw_s += await _raw_insert(engine, raw_tables, hand_rows, player_rows)
        result.records = numbers.stop
        now = time.perf_counter()
        if now - shown >= 5 or result.records == stamper.records:
            shown = now
            log(
                f"  loaded {result.records:,}/{stamper.records:,} in {now - started:.0f} s:"
                f" store {result.records / result.store_s:,.0f}/s,"
                f" raw INSERT {result.records / result.raw_s:,.0f}/s"
            )
    async with engine.begin() as conn:
        await conn.execute(text("DROP TABLE bench_raw_player_hands"))
        await conn.execute(text("DROP TABLE bench_raw_hands"))
    if engine.dialect.name == "postgresql":  # fresh statistics, as autovacuum would have
        async with engine.begin() as conn:
            await conn.execute(text("ANALYZE"))
    return result


# --- reads through the service --------------------------------------------------------


async def serve(database_url: str, nats_url: str) -> None:
    """The child: history's endpoints and the echo floor until SIGTERM."""
    engine = create_engine(database_url)
    nc = await connect(nats_url, "history-bench")
    service = build_service(history_deps(engine))
    await service.start(nc)

    async def echo(msg: Any) -> None:
        await msg.respond(msg.data)

    await nc.subscribe(ECHO, cb=echo)
    await nc.flush()
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    print("ready", flush=True)
    await stop.wait()
    await service.stop()
    await nc.drain()
    await engine.dispose()


@dataclass
class Latency:
    name: str
    samples: list[float]
    goal_ms: float | None = None

    def quantile(self, q: float) -> float:
        ordered = sorted(self.samples)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000

    @property
    def met(self) -> bool:
        return self.goal_ms is None or self.quantile(0.99) <= self.goal_ms


async def measure_reads(nats_url: str, stamper: Stamper, requests: int) -> list[Latency]:
    nc = await connect(nats_url, "history-bench-client")
    rng = random.Random(stamper.seed)
    games = game_names()

    async def list_all(i: int) -> float:
        user = heavy_user(i % HEAVY)
        t = time.perf_counter()
        page = await request(nc, endpoints.HISTORY_LIST_HANDS, ListHands(user_id=user))
        elapsed = time.perf_counter() - t
        times = [h.finished_ms for h in page.hands]
        held = len(range(10 * (i % HEAVY), stamper.records, 10 * HEAVY))
        if times != sorted(times, reverse=True) or len(times) != min(PAGE, held):
            raise SystemExit(f"{user}'s first page is wrong: {len(times)} hands, {times[:3]}…")
        return elapsed

    async def list_game(i: int) -> float:
        req = ListHands(user_id=heavy_user(i % HEAVY), game=games[i % len(games)])
        t = time.perf_counter()
        page = await request(nc, endpoints.HISTORY_LIST_HANDS, req)
        elapsed = time.perf_counter() - t
        if any(h.game != req.game for h in page.hands):
            raise SystemExit(f"a page of {req.game} lists another game's hand")
        return elapsed

    async def get(i: int) -> float:
        n = rng.randrange(stamper.records)
        req = GetStoredHand(hand_id=hand_id(stamper.seed, n))
        t = time.perf_counter()
        record = await request(nc, endpoints.HISTORY_GET_HAND, req)
        elapsed = time.perf_counter() - t
        if msgspec.json.encode(record) != msgspec.json.encode(stamper.stored(n).record):
            raise SystemExit(f"record {n} came back different from what was stored")
        return elapsed

    async def floor(i: int) -> float:
        t = time.perf_counter()
        await nc.request(ECHO, b"x", timeout=5)
        return time.perf_counter() - t

    kinds = [
        ("raw NATS request/reply (floor)", floor, None),
        (f"my hands, first page ({PAGE}), all games", list_all, LIST_P99_MS),
        (f"my hands, first page ({PAGE}), one game", list_game, LIST_P99_MS),
        ("a record by id", get, GET_P99_MS),
    ]
    results = []
    for name, call, goal in kinds:
        for i in range(min(50, requests)):  # warm up: connections, caches
            await call(i)
        samples = []
        gc.collect()
        gc.disable()  # the asker's own collections are not the service's latency
        try:
            for i in range(requests):  # each times its request alone, not its checks
                samples.append(await call(i))
        finally:
            gc.enable()
        results.append(Latency(name, samples, goal))
        p50, p99 = results[-1].quantile(0.5), results[-1].quantile(0.99)
        log(f"  {name}: p50 {p50:.2f} ms, p99 {p99:.2f} ms")
    await nc.drain()
    return results


async def stored_count(engine: AsyncEngine) -> int:
    async with engine.connect() as conn:
        return int((await conn.execute(text("SELECT count(*) FROM history_hands"))).scalar_one())


@dataclass
class Run:
    database: str
    records: int
    ingest: Ingest | None  # None: loaded by an earlier run (``--keep``)
    reads: list[Latency]
    load_s: float


async def measure(
    label: str, url: str, args: argparse.Namespace, pool: list[HandRecord], nats: NatsServer
) -> Run:
    engine = create_engine(url)
    stamper = Stamper(pool, args.records, args.seed)
    try:
        await migrate_history(engine)
        if args.keep and await stored_count(engine) == args.records:
            log(f"{label}: {args.records:,} records kept from an earlier run: reads only")
            ingest, load_s = None, 0.0
        else:
            log(f"{label}: loading {args.records:,} records in batches of {args.batch}")
            started = time.perf_counter()
            ingest = await load(engine, stamper, args.batch)
            load_s = time.perf_counter() - started
    finally:
        await engine.dispose()
    log(f"{label}: reads through the service ({args.requests} requests of each kind)")
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        __file__,
        "--serve",
        url,
        nats.url,
        stdout=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    try:
        assert child.stdout is not None
        line = await asyncio.wait_for(child.stdout.readline(), 60)
        if line.strip() != b"ready":
            raise SystemExit(f"the history service did not start (exit {child.returncode})")
        reads = await measure_reads(nats.url, stamper, args.requests)
    finally:
        if child.returncode is None:
            child.terminate()
        await asyncio.wait_for(child.wait(), 30)
    return Run(label, args.records, ingest, reads, load_s)


def report(runs: list[Run], batch: int) -> bool:
    met = True
    print(
        f"\n{'database':<11}{'records':>10}{'store/s':>10}{'raw INSERT/s':>14}"
        f"{'store/raw':>11}  goal"
    )
    for r in runs:
        i = r.ingest
        if i is None:
            print(f"{r.database:<11}{r.records:>10,}  loaded by an earlier run: not measured")
            continue
        ok = i.ratio >= INGEST_RATIO
        met &= ok
        print(
            f"{r.database:<11}{r.records:>10,}{i.records / i.store_s:>10,.0f}"
            f"{i.records / i.raw_s:>14,.0f}{i.ratio:>11.2f}"
            f"  >= {INGEST_RATIO} {'met' if ok else 'NOT met'}"
        )
    print(f"\n{'database':<11}{'request':<40}{'n':>6}{'p50 ms':>9}{'p99 ms':>9}  goal")
    for r in runs:
        for lat in r.reads:
            goal = (
                ""
                if lat.goal_ms is None
                else f"p99 <= {lat.goal_ms:g} {'met' if lat.met else 'NOT met'}"
            )
            met &= lat.met
            print(
                f"{r.database:<11}{lat.name:<40}{len(lat.samples):>6}"
                f"{lat.quantile(0.5):>9.2f}{lat.quantile(0.99):>9.2f}  {goal}"
            )
    print(
        f"\nstore/s: records per second through store_hands, batches of {batch}, one"
        " transaction each (the consumer's path);\nraw INSERT/s: the same rows, prebuilt,"
        " as a plain multi-row INSERT into tables of the same DDL, same batches;\nlatency:"
        " request -> decoded reply over NATS, one at a time, service in its own process."
    )
    for r in runs:
        if r.ingest is not None:
            print(f"{r.database}: loading both took {r.load_s:.0f} s")
    return met


async def main(args: argparse.Namespace) -> int:
    tune_gc()
    log(f"playing a pool of {args.pool} real hands with the smart bots")
    pool = make_pool(args.pool)
    sizes = [len(msgspec.json.encode(r)) for r in pool]
    log(f"  record size: mean {statistics.mean(sizes):,.0f} B, max {max(sizes):,} B")
    runs: list[Run] = []
    with tempfile.TemporaryDirectory(prefix="kalaro-bench-history-") as tmp:
        nats = NatsServer(Path(tmp) / "nats")
        nats.start()
        try:
            if args.keep:
                label = "sqlite" if args.keep.startswith("sqlite") else "postgresql"
                runs.append(await measure(label, args.keep, args, pool, nats))
            elif args.database in ("sqlite", "both"):
                url = f"sqlite+aiosqlite:///{Path(tmp) / 'history.db'}"
                runs.append(await measure("sqlite", url, args, pool, nats))
            if not args.keep and args.database in ("postgres", "both"):
                scratch = await _postgres_scratch(args.database_url)
                if isinstance(scratch, str):
                    log(f"skipping PostgreSQL: {scratch}")
                else:
                    url, name = scratch
                    try:
                        runs.append(await measure("postgresql", url, args, pool, nats))
                    finally:
                        await _drop_postgres(args.database_url, name)
        finally:
            nats.stop()
    if not runs:
        print("nothing measured (see above why)")
        return 2
    met = report(runs, args.batch)
    print(f"\ngoals: {'all met' if met else 'NOT all met'}")
    return 1 if args.strict and not met else 0


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=1_000_000, help="records to store")
    parser.add_argument("--database", choices=("sqlite", "postgres", "both"), default="both")
    parser.add_argument(
        "--database-url",
        default=DEFAULT_POSTGRES,
        help="PostgreSQL admin URL (a scratch database is made)",
    )
    parser.add_argument("--pool", type=int, default=1500, help="real hands played (over the games)")
    parser.add_argument("--requests", type=int, default=2000, help="timed requests of each kind")
    parser.add_argument("--batch", type=int, default=64, help="records per ingest transaction")
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument(
        "--keep", metavar="URL", help="load into this database and keep it; reads only if loaded"
    )
    parser.add_argument("--strict", action="store_true", help="exit 1 when a goal is missed")
    return parser.parse_args(argv)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve"]:
        tune_gc()
        import uvloop

        uvloop.run(serve(sys.argv[2], sys.argv[3]))
    else:
        sys.exit(asyncio.run(main(parse(sys.argv[1:]))))
