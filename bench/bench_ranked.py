"""Ranked play benchmark: the queue's table forming and rating updates (issue 34).

    .venv/bin/python bench/bench_ranked.py [--quick] [--seed N] [--tick-ms 200]

1. Matching. A queue of ``--queued`` players (default 3,000) who joined over the last
   30 s, then ``--arrivals`` more (default 6,000) joining at random over ``--arrive-s``
   seconds (default 20 s: 300 joins/s), on a simulated clock. The matcher
   (``services.ranked.matching.form_tables``) runs every ``--tick-ms`` over everyone
   waiting, on real CPU: a table is seated at its tick's time plus that run's CPU, and
   the next tick waits for the run to finish. Players: three games, four stakes,
   ratings ~ N(1500, 300), 2 % of them in pairs sharing an address. Reported: the
   time from a **compatible join** (the join of a table's last member, after which the
   table could form) to seated, p50/p99 (goal: p99 <= 1 s); every player's wait; the
   matcher's CPU per run (p50/p99/max) against the anchor, a plain ``sorted`` of the
   same queue by rating (the least any rating-ordered matcher does).
2. Rating updates. ``--hands`` ranked hand records of the three games (3 or 4 seats,
   the winner paid by the others, one in ten with tied losers) rated one after the
   other by ``services.ranked.ratings.rate_hand`` against a dict of current ratings,
   as the store will; the anchor is a plain openskill ``PlackettLuce().rate`` loop on
   the same orders of finish. Goal: >= 10x the paced table benchmark's hand rate
   (bench_tables: 500 paced tables at ~1,000 moves/s, ~22 moves a hand: ~45 hands/s),
   so >= 450 rated hands/s.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Sequence

from openskill.models import PlackettLuce

from kalaro.proto.engine import HandRecord, Player
from services.ranked.matching import QueueEntry, form_tables
from services.ranked.ratings import Rating, rate_hand

GAMES = (("tongits", 0.5), ("mahjong", 0.3), ("kawuxing", 0.2))
BETS = (5, 10, 20, 50)
PACED_HANDS_PER_S = 1000 / 22  # bench_tables' paced run


def _pct(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def _player(rng: random.Random, i: int, joined_ms: int) -> QueueEntry:
    game = rng.choices([g for g, _ in GAMES], [w for _, w in GAMES])[0]
    address = f"ip-pair-{i // 2}" if rng.random() < 0.02 else f"ip-{i}"
    return QueueEntry(
        user_id=f"u{i}",
        game=game,
        bet=rng.choice(BETS),
        rating=max(0, int(rng.gauss(1500, 300))),
        joined_ms=joined_ms,
        addresses=frozenset({address}),
        devices=frozenset({f"dev-{i}"}),
    )


def bench_matching(seed: int, queued: int, arrivals: int, arrive_s: float, tick_ms: int) -> bool:
    rng = random.Random(seed)
    seats_rng = random.Random(seed + 1)
    start_ms = 1_000_000_000
    waiting = [_player(rng, i, start_ms - rng.randrange(30_000)) for i in range(queued)]
    future = [
        _player(rng, queued + i, start_ms + int(rng.random() * arrive_s * 1000))
        for i in range(arrivals)
    ]
    future.sort(key=lambda e: e.joined_ms)
    end_ms = start_ms + int(arrive_s * 1000) + 60_000  # room for the last to be seated
    now_ms, cpu, anchor, sizes = start_ms, [], [], []
    to_seat: list[float] = []  # compatible join -> seated, ms
    waits: list[float] = []
    nxt = 0
    while now_ms <= end_ms and (waiting or nxt < len(future)):
        while nxt < len(future) and future[nxt].joined_ms <= now_ms:
            waiting.append(future[nxt])
            nxt += 1
        sizes.append(len(waiting))
        started = time.perf_counter()
        sorted(waiting, key=lambda e: e.rating)
        anchor.append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        result = form_tables(waiting, now_ms, seats_rng)
        took_ms = (time.perf_counter() - started) * 1000
        cpu.append(took_ms)
        by_user = {e.user_id: e for e in waiting}
        for table in result.tables:
            joins = [by_user[u].joined_ms for u in table.seats]
            seated_ms = now_ms + took_ms
            to_seat.append(seated_ms - max(joins))
            waits.extend(seated_ms - j for j in joins)
        waiting = list(result.waiting)
        now_ms += max(tick_ms, int(took_ms) + 1)
    seated = len(waits)
    print(
        f"matching: {queued:,} queued + {arrivals:,} arriving over {arrive_s:g} s "
        f"({arrivals / arrive_s:,.0f} joins/s), a run every {tick_ms} ms, {len(cpu)} runs"
    )
    print(f"  queue size per run: max {max(sizes):,}, median {statistics.median(sizes):,.0f}")
    print(f"  seated {seated:,} in {len(to_seat):,} tables; still waiting {len(waiting):,}")
    print(
        f"  compatible join -> seated: p50 {_pct(to_seat, 0.5):.0f} ms, "
        f"p99 {_pct(to_seat, 0.99):.0f} ms (goal p99 <= 1000)"
    )
    print(f"  every player's wait: p50 {_pct(waits, 0.5):.0f} ms, p99 {_pct(waits, 0.99):.0f} ms")
    mid, hi = _pct(cpu, 0.5), _pct(cpu, 0.99)
    print(
        f"  matcher CPU per run: p50 {mid:.1f} ms, p99 {hi:.1f} ms, max {max(cpu):.1f} ms; "
        f"anchor (sort by rating) p50 {_pct(anchor, 0.5):.2f} ms -> "
        f"{mid / max(_pct(anchor, 0.5), 1e-6):.0f}x"
    )
    met = _pct(to_seat, 0.99) <= 1000
    print(f"  goal (p99 <= 1 s): {'met' if met else 'NOT met'}")
    return met


def _records(rng: random.Random, count: int, users: int) -> list[HandRecord]:
    records = []
    for n in range(count):
        game = rng.choices([g for g, _ in GAMES], [w for _, w in GAMES])[0]
        size = 4 if game == "mahjong" else 3
        seated = rng.sample(range(users), size)
        winner = rng.randrange(size)
        losses = [rng.choice((5, 10, 20)) for _ in range(size)]
        if rng.random() < 0.1:
            losses = [10] * size
        payments = [-x for x in losses]
        payments[winner] = sum(losses) - losses[winner]
        records.append(
            HandRecord(
                game=game, table_id=f"t{n}", hand_id=f"h{n}", options={}, bet=10,
                players=tuple(Player(user_id=f"u{s}", display_name=f"P{s}") for s in seated),
                dealer=0, seed_commitment="", server_seed="", entropy=(), actions=(),
                initial_hands=(), result={"winners": [winner]}, payments=tuple(payments),
                ranked=True,
            )
        )  # fmt: skip
    return records


def bench_ratings(seed: int, hands: int) -> bool:
    records = _records(random.Random(seed), hands, users=2000)
    ratings: dict[tuple[str, str], Rating] = {}
    started = time.perf_counter()
    for record in records:
        current = {
            p.user_id: ratings[(record.game, p.user_id)]
            for p in record.players
            if (record.game, p.user_id) in ratings
        }
        for change in rate_hand(current, record):
            ratings[(record.game, change.user_id)] = change.after
    ours = hands / (time.perf_counter() - started)
    model = PlackettLuce()
    plain: dict[tuple[str, str], tuple[float, float]] = {}
    started = time.perf_counter()
    for record in records:
        keys = [(record.game, p.user_id) for p in record.players]
        teams = [[model.rating(*plain.get(k, (model.mu, model.sigma)))] for k in keys]
        ranks = [1.0 if s == record.result["winners"][0] else 2.0 for s in range(len(keys))]
        for key, (new,) in zip(keys, model.rate(teams, ranks=ranks), strict=True):
            plain[key] = (new.mu, new.sigma)
    anchor = hands / (time.perf_counter() - started)
    print(f"\nrating updates: {hands:,} ranked hands over 2,000 players, one at a time")
    print(f"  rate_hand: {ours:,.0f} hands/s; anchor (plain openskill rate loop) {anchor:,.0f}/s")
    print(f"  -> {ours / anchor:.2f}x the anchor; {ours / PACED_HANDS_PER_S:.0f}x the paced")
    print(f"     table benchmark's ~{PACED_HANDS_PER_S:.0f} hands/s (goal >= 10x)")
    met = ours >= 10 * PACED_HANDS_PER_S
    print(f"  goal (>= {10 * PACED_HANDS_PER_S:.0f} hands/s): {'met' if met else 'NOT met'}")
    return met


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="a shorter run, for a smoke test")
    parser.add_argument("--seed", type=int, default=34)
    parser.add_argument("--tick-ms", type=int, default=200, help="how often the matcher runs")
    parser.add_argument("--queued", type=int, default=3000)
    parser.add_argument("--arrivals", type=int, default=6000)
    parser.add_argument("--arrive-s", type=float, default=20.0)
    parser.add_argument("--hands", type=int, default=20_000)
    args = parser.parse_args(argv)
    if args.quick:
        args.arrivals, args.arrive_s, args.hands = 1500, 5.0, 3000
    print(f"Ranked play benchmark (python {sys.version.split()[0]}, seed {args.seed})\n")
    ok = bench_matching(args.seed, args.queued, args.arrivals, args.arrive_s, args.tick_ms)
    ok = bench_ratings(args.seed, args.hands) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
