"""Mahjong's ``joker`` and ``pinoy`` rulesets at real tables, end to end.

The whole stack through the gateway, as SDK clients: a ``joker`` table's full options
(its points table included) and the hold computed from them in the lobby, the joker in
every view, hands settled by win category, and no concealed tile (nor a secret kang's)
reaching another seat; a ``pinoy`` table whose turn and call timers auto-play an idle
seat through the engine worker; and the passed-win block reaching the client with its
reason.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Callable
from typing import Any

import msgspec

from kalaro.bots import policy_for
from kalaro.client import KalaroClient
from kalaro.client.socket import TableSocket
from kalaro.games.mahjong import CATEGORIES, WIN_BLOCKED_REASONS, View, max_loss_units, options_for
from kalaro.verify import verify_hand
from tests.e2e.stack import Stack
from tests.e2e.tables import (
    FrameError,
    LiveTable,
    admin,
    legal_of,
    play_hand,
    signed_up,
    wait_balance,
)

BET = 5
# House rules on top of ``joker``: a higher cap, so the hold comes from the points table.
JOKER_HOUSE = {"cap_units": 30, "points": {"Win by Draw Regular": 3, "Each kang of the winner": 2}}
# The largest bill these points allow: Bisaklat Regular 8 + five kangs x 2.
JOKER_HOLD_UNITS = 18
TURN_SECONDS = 2
# The gateway takes 20 frames a second per socket (burst 40); stay under it.
MOVE_GAP = 0.06
# Joker hands to play at most while waiting for a win and a secret kang.
HANDS = 10
# Deals to try for one where a claim reaches the seat left idle.
IDLE_DEALS = 4
MAHJONG = {"type": "claim", "kind": "mahjong", "tiles": []}


async def _watch(client: KalaroClient, table_id: str, seat: int | None) -> TableSocket:
    socket = client.table_socket()
    await socket.connect()
    assert (await socket.subscribe(table_id)).seat == seat
    return paced(socket)


def paced(socket: TableSocket, gap: float = MOVE_GAP) -> TableSocket:
    """Keep one socket's moves under the gateway's frame rate limit: a rate-limited
    frame is answered by an error without its ``ref``, so the SDK's request would wait
    out its timeout. (Bots passing every claim can reach that rate.)"""
    act = socket.act
    last = 0.0

    async def act_paced(*args: Any, **kwargs: Any) -> Any:
        nonlocal last
        await asyncio.sleep(max(0.0, last + gap - time.monotonic()))
        last = time.monotonic()
        return await act(*args, **kwargs)

    socket.act = act_paced  # type: ignore[method-assign]
    return socket


async def open_mahjong(
    host: KalaroClient,
    players: list[KalaroClient],
    bet: int,
    ruleset: str,
    options: dict[str, Any],
    spectators: tuple[KalaroClient, ...] = (),
) -> LiveTable:
    """``tables.open_table`` with a ruleset: create, seat everyone, subscribe."""
    table = (await host.create_table("mahjong", bet, ruleset=ruleset, options=options)).table
    sockets = []
    for seat, player in enumerate(players):
        await player.sit(table.table_id, seat)
        sockets.append(await _watch(player, table.table_id, seat))
    watchers = [await _watch(s, table.table_id, None) for s in spectators]
    return LiveTable(table.table_id, host, players, sockets, watchers)


def view_frames(socket: TableSocket) -> list[dict[str, Any]]:
    return [f for f in map(json.loads, socket.raw_frames) if f.get("type") == "view"]


def hoarding(seat: int, view: dict[str, Any], legal: list[dict[str, Any]]) -> Any:
    """Keep sets concealed so that secret kangs happen often (about one hand in four):
    declare four alike at once, claim nothing but a win, throw singles first."""
    hand = view["players"][seat]["hand"] or []
    for action in legal:
        if action["type"] == "declare_kang" and hand.count(action["tile"]) == 4:
            return action
    if MAHJONG in legal or {"type": "declare_win"} in legal:
        return None  # the policy takes the win
    if view["phase"] == "calls":
        return {"type": "pass"}
    discards = [a for a in legal if a["type"] == "discard" and a["tile"] != view["joker"]]
    return min(discards, key=lambda a: (hand.count(a["tile"]), a["tile"]), default=None)


def mahjong_leaks(live: LiveTable) -> tuple[list[str], int]:
    """What a socket saw of another seat's concealed tiles; and how many times a socket
    saw another seat's secret kang face down (the scan is only as good as the hands)."""
    leaks: list[str] = []
    face_down = 0
    watchers = [*enumerate(live.sockets), *((None, s) for s in live.spectators)]
    for viewer, socket in watchers:
        for frame in view_frames(socket):
            view = frame["view"]
            if view["result"] is not None:
                continue
            if frame["seat"] != viewer:
                leaks.append(f"socket of seat {viewer} got a frame for seat {frame['seat']}")
            if view["drawn"] is not None and viewer != view["turn"]:
                leaks.append(f"seat {viewer} saw seat {view['turn']}'s drawn tile")
            for player in view["players"]:
                owner = player["seat"]
                if owner == viewer:
                    continue
                if player["hand"] is not None:
                    leaks.append(f"seat {viewer} saw seat {owner}'s hand")
                for meld in player["melds"]:
                    if meld["concealed"] and meld["tiles"]:
                        leaks.append(f"seat {viewer} saw seat {owner}'s secret kang {meld}")
                    face_down += meld["concealed"]
            for event in frame["events"]:
                kind, owner = event["type"], event.get("seat")
                if owner == viewer:
                    continue
                if kind == "tile_drawn" and event["tile"] is not None:
                    leaks.append(f"seat {viewer} saw seat {owner}'s draw")
                if kind in ("claims_offered", "call_answered"):
                    leaks.append(f"seat {viewer} saw seat {owner}'s {kind}")
                if kind == "kang_declared" and event["secret"] and event["meld"]["tiles"]:
                    leaks.append(f"seat {viewer} saw seat {owner}'s secret kang declared")
    return leaks, face_down


def check_settlement(result: Any, bet: int) -> dict[str, Any]:
    """The credits are the engine's units x bet; returns the engine's result."""
    outcome = json.loads(bytes(result.result))
    assert list(result.payments) == [u * bet for u in outcome["payments"]]
    assert sum(result.payments) == 0
    return outcome


async def test_joker_table_shows_its_points_and_settles_by_category(
    stack: Stack, unique: str
) -> None:
    host = await admin(stack)
    players = [await signed_up(stack, f"J{i}", unique) for i in range(4)]
    watcher = await signed_up(stack, "JWatch", unique)
    expected = options_for("joker", **JOKER_HOUSE)
    assert max_loss_units(expected) == JOKER_HOLD_UNITS < expected.cap_units
    live = await open_mahjong(host, players, BET, "joker", JOKER_HOUSE, (watcher,))

    # The lobby shows the full options, the points table included, and the hold.
    listed = (await watcher.list_tables("mahjong")).tables
    for info in (next(t for t in listed if t.table_id == live.table_id),
                 await host.get_table(live.table_id)):  # fmt: skip
        assert info.ruleset == "joker"
        assert info.options == msgspec.to_builtins(expected)
        assert info.options["jokers"] is True
        points = info.options["points"]
        assert set(CATEGORIES) <= set(points)
        assert points["Win by Draw Regular"] == 3
        assert points["Win by Discard Regular"] == 2  # the ruleset's default stays
        assert info.max_loss == JOKER_HOLD_UNITS * BET

    totals = [0, 0, 0, 0]
    categories: list[str] = []
    secret_kangs = 0
    for hand in range(HANDS):  # until a win, and a secret kang to check (or out of hands)
        for player, total in zip(players, totals, strict=True):  # the last hand settled
            assert await wait_balance(player, 1000 + total) == 1000 + total
        await live.deal()
        assert [(await p.balance()).held for p in players] == [JOKER_HOLD_UNITS * BET] * 4
        # The deal reveals the joker to everyone, the spectator included.
        jokers = {s.view(live.table_id).view["joker"] for s in live.everyone}  # type: ignore
        assert len(jokers) == 1
        joker = jokers.pop()
        assert joker is not None and not joker.endswith("f")
        result = await play_hand(
            live, "mahjong", policy="smart", rng=random.Random(11 + hand), choose=hoarding
        )
        outcome = check_settlement(result, BET)
        assert outcome["joker"] == joker
        totals = [t + p for t, p in zip(totals, result.payments, strict=True)]
        # The result reveals secret kangs (for verification).
        secret_kangs += sum(m["concealed"] for h in outcome["hands"] for m in h["melds"])
        if outcome["winner"] is None:
            assert outcome["ending"] == "wall_out" and outcome["category"] is None
        else:
            categories.append(check_category(outcome, points, expected.cap_units, live))
            if hand == 0:  # a joker hand's record replays to the same result
                record = await host.hand_record(live.table_id, result.hand_id)
                assert verify_hand(record).ok
        if categories and secret_kangs:
            break
    assert categories, f"{HANDS} joker hands without a winner"
    for player, total in zip(players, totals, strict=True):
        assert await wait_balance(player, 1000 + total) == 1000 + total
        assert (await player.balance()).held == 0
    leaks, face_down = mahjong_leaks(live)
    assert leaks == []
    if secret_kangs:  # the others saw each secret kang face down
        assert face_down > 0
    print(f"joker: {hand + 1} hands, won by {categories}; {secret_kangs} secret kangs, "
          f"seen face down {face_down} times")  # fmt: skip
    await live.close()


def check_category(
    outcome: dict[str, Any], points: dict[str, int], cap: int, live: LiveTable
) -> str:
    """A win names its category, bills it by the table's points, and says so to all."""
    name = outcome["category"]
    assert name in CATEGORIES
    for bill in outcome["charges"]:
        named = [i for i in bill["items"] if i["detail"] == name]
        if named:  # the discarder's line, or every loser's on a win by Draw / Bisaklat
            assert named[0]["units"] == points[name]
        assert bill["units"] == min(bill["total"], cap)
    assert any(i["detail"] == name for b in outcome["charges"] for i in b["items"])
    events = [e for f in view_frames(live.spectators[0]) for e in f["events"]]
    won = [e for e in events if e["type"] == "hand_won"]
    assert won[-1]["category"] == name  # the event names it too
    return str(name)


def auto_plays(frames: list[dict[str, Any]], seat: int) -> list[tuple[int, str, str]]:
    """Turns the server played for ``seat``: (version, tile drawn, tile discarded), from
    its own view ``frames`` (a draw and a discard in one write: only a time-out does that)."""
    found = []
    for frame in frames:
        events = frame["events"]
        drawn = [e["tile"] for e in events if e["type"] == "tile_drawn" and e["seat"] == seat]
        thrown = [e["tile"] for e in events if e["type"] == "tile_discarded" and e["seat"] == seat]
        if drawn and thrown:
            found.append((frame["version"], drawn[-1], thrown[0]))
    return found


def claimable(tile: str, hand: list[str], joker: str | None) -> bool:
    """Whether a hand could pong or (as the next seat) chow ``tile``: jokers never count."""
    if tile == joker:
        return False
    if hand.count(tile) >= 2:
        return True
    number, suit = int(tile[0]), tile[1]
    if suit not in "mps":
        return False
    held = {f"{n}{suit}" for n in range(1, 10)} & (set(hand) - {joker})
    runs = ((-2, -1), (-1, 1), (1, 2))
    return any({f"{number + a}{suit}", f"{number + b}{suit}"} <= held for a, b in runs)


async def play_around(
    live: LiveTable,
    idle: int,
    stop: Callable[[], bool],
    rng: random.Random,
    choose: Callable[[int, dict[str, Any]], Any] = lambda seat, view: None,
) -> None:
    """Play every seat but ``idle`` with the smart policy (or ``choose``) until ``stop()``
    or the result.

    Nothing is ever sent for ``idle``: only the server's timers play its turns and
    answer its claims.
    """
    brain = policy_for("mahjong", "smart")
    while not stop():
        newest = live.newest()
        assert newest is not None
        version, view, _ = newest
        if view["result"] is not None:
            return
        await live.wait_all_at(version)
        movers = [
            (seat, own) for seat, socket in enumerate(live.sockets)
            if seat != idle and (own := socket.view(live.table_id)) is not None
            and own.version == version and legal_of(own.view)
        ]  # fmt: skip
        if not movers:  # waiting on the idle seat: its timer must move the hand on
            await live.sockets[0].wait_for(
                lambda at=version: (n := live.newest()) is not None and n[0] > at, timeout=15
            )
            continue
        seat, own = movers[0]
        action = choose(seat, own.view)
        if action is None:
            chosen = brain.choose(msgspec.convert(own.view, View), rng)
            action = msgspec.to_builtins(chosen) if chosen else rng.choice(legal_of(own.view))
        try:
            await live.sockets[seat].act(live.table_id, action, version=version)
        except FrameError as exc:
            if exc.code != "stale_version":  # a timer fired first
                raise


async def test_pinoy_timers_auto_play_an_idle_seat(stack: Stack, unique: str) -> None:
    host = await admin(stack)
    players = [await signed_up(stack, f"P{i}", unique) for i in range(4)]
    house = {"turn_seconds": TURN_SECONDS, "call_seconds": 1}
    live = await open_mahjong(host, players, 0, "pinoy", house)
    info = await host.get_table(live.table_id)
    assert info.ruleset == "pinoy"
    assert (info.options["turn_seconds"], info.options["call_seconds"]) == (TURN_SECONDS, 1)
    assert info.options["robbing_the_kang"] and info.options["special_hands"]
    # The idle seat's hand hardly changes (its timer throws back every draw), so a deal
    # that leaves it nothing to claim stays that way; about one in a hundred also ends
    # before its turn. Such a deal is played out and the next one tried.
    for attempt in range(1, IDLE_DEALS + 1):
        await live.deal()
        if await _idle_seat_is_timed(live, players[0], attempt):
            break
    else:
        raise AssertionError(f"in {IDLE_DEALS} deals no claim reached the idle seat")
    await live.close()


async def _idle_seat_is_timed(live: LiveTable, player: KalaroClient, attempt: int) -> bool:
    """Leave the seat after the dealer alone for one hand: its turns and its claims must
    be played by the server's timers. False when the deal never offered it a claim."""
    first = live.sockets[0].view(live.table_id)
    assert first is not None and first.deadline_ms is not None  # the dealer's turn is timed
    hand_id = first.hand_id
    idle = (first.view["dealer"] + 1) % 4  # the seat after the dealer never acts
    socket = live.sockets[idle]
    arrived: dict[int, float] = {}  # version -> when the idle seat's socket got it
    socket.view_listeners.append(lambda v: arrived.setdefault(v.version, time.monotonic()))

    def frames() -> list[dict[str, Any]]:
        return [f for f in view_frames(socket) if f["hand_id"] == hand_id]

    def answered() -> list[dict[str, Any]]:
        return [e for f in frames() for e in f["events"] if e["type"] == "call_answered"]

    def enough() -> bool:  # two turns and a claim passed by the timer (or five turns)
        turns = len(auto_plays(frames(), idle))
        return turns >= 5 or (turns >= 2 and bool(answered()))

    def feed(seat: int, view: dict[str, Any]) -> Any:
        """The seat before the idle one discards what the idle seat could claim."""
        idle_view = socket.view(live.table_id)
        if seat != (idle - 1) % 4 or view["phase"] != "discard" or idle_view is None:
            return None
        hand = idle_view.view["players"][idle]["hand"]
        return next(
            (
                a for a in legal_of(view)
                if a["type"] == "discard" and claimable(a["tile"], hand, view["joker"])
            ),
            None,
        )  # fmt: skip

    await play_around(live, idle, enough, random.Random(20 + attempt), feed)
    played = auto_plays(frames(), idle)
    answers = answered()
    if not (played and answers):
        print(f"pinoy deal {attempt}: {len(played)} idle turns, no claim offered; dealing again")
        if live.newest()[1]["result"] is None:  # type: ignore[index]
            await play_hand(live, "mahjong", policy="smart", rng=random.Random(attempt))
        return False
    for version, drawn, discarded in played:
        assert drawn == discarded  # the auto-discard is the tile just drawn
        # The turn began in the frame before (every seat's frame shows its deadline) and
        # the server waited the whole turn before playing it.
        began = max(f["version"] for f in frames() if f["version"] < version)
        opened = next(f for f in frames() if f["version"] == began)
        assert opened["view"]["turn"] == idle and opened["view"]["phase"] == "draw"
        assert opened["deadline_ms"] is not None
        waited = arrived[version] - arrived[began]
        if opened["view"]["away"][idle]:
            assert waited < TURN_SECONDS - 0.5  # away (two time-outs in a row): at once
        else:
            assert waited > TURN_SECONDS - 0.5
    assert any(f["version"] > played[0][0] for f in frames()), "the hand stopped after it"
    # Claims offered to the idle seat were answered for it by the call timer.
    offered = sum(1 for f in frames() for e in f["events"] if e["type"] == "claims_offered")
    # (A win on offer is taken for it: the time-out never throws a win away.)
    assert all(
        a["seat"] == idle and (a["claim"] is None or a["claim"]["kind"] == "mahjong")
        for a in answers
    )
    assert_reasons(live)

    if live.newest()[1]["result"] is None:  # type: ignore[index]
        await play_hand(live, "mahjong", policy="smart", rng=random.Random(22))
    results = socket.state(live.table_id).results
    await socket.wait_for(lambda: bool(results) and results[-1].hand_id == hand_id)
    result = results[-1]
    check_settlement(result, 0)
    # The hand's record: every move of the idle seat until then was the worker's time-out,
    # and the record replays (time-outs included) to the same result.
    record = await player.hand_record(live.table_id, result.hand_id)
    idle_moves = [action for seat, action in record.actions if seat == idle]
    timed = len(played) + len(answers)
    assert idle_moves[:timed] == [{"type": "time_out"}] * timed
    assert verify_hand(record).ok
    print(f"pinoy: {len(played)} turns auto-played; {len(answers)} of {offered} offers timed out")
    return True


def assert_reasons(live: LiveTable) -> dict[str, int]:
    """Every "why no Win" a client got comes with its sentence; counts per code."""
    seen: dict[str, int] = {}
    for seat, socket in enumerate(live.sockets):
        for frame in view_frames(socket):
            code = frame["view"].get("win_blocked")
            reason = frame["view"].get("win_blocked_reason")
            if code is None:
                assert reason is None
                continue
            assert reason == WIN_BLOCKED_REASONS[code], (seat, code, reason)
            seen[code] = seen.get(code, 0) + 1
    for socket in live.spectators:
        assert all(f["view"].get("win_blocked") is None for f in view_frames(socket))
    return seen


async def test_passed_win_blocks_and_the_client_is_told_why(stack: Stack, unique: str) -> None:
    host = await admin(stack)
    players = [await signed_up(stack, f"X{i}", unique) for i in range(4)]
    live = await open_mahjong(host, players, 0, "joker", {})
    passes: list[tuple[int, int]] = []  # (seat, version of the discard it passed)

    def blocked_now() -> bool:
        views = (s.view(live.table_id) for s in live.sockets)
        return any(v is not None and v.view.get("win_blocked") == "passed_win" for v in views)

    def pass_wins(seat: int, view: dict[str, Any], legal: list[dict[str, Any]]) -> Any:
        """Pass a win on a discard, until a client has been told it is blocked."""
        if MAHJONG not in legal or blocked_now():
            return None
        own = live.sockets[seat].view(live.table_id)
        assert own is not None
        passes.append((seat, own.version))
        return {"type": "pass"}

    blocked = 0
    for hand in range(6):  # until a passed win leaves the hand going on
        await live.deal()
        start = len(passes)
        await play_hand(
            live, "mahjong", policy="smart", rng=random.Random(31 + hand), choose=pass_wins
        )
        for seat, version in passes[start:]:
            blocked += check_blocked_until_draw(live.sockets[seat], seat, version)
        if blocked:
            break
    assert passes, "six hands without a win on a discard to pass"
    assert blocked, "every passed win ended the hand at once (someone else won on it)"
    counts = assert_reasons(live)
    assert counts.get("passed_win", 0) >= blocked
    print(f"passed wins: {len(passes)}, blocked frames: {blocked}, reasons: {counts}")
    await live.close()


def check_blocked_until_draw(socket: TableSocket, seat: int, passed_at: int) -> int:
    """From the pass to the seat's next draw its views say "passed_win" and offer no
    Mahjong; the draw lifts the block. The number of blocked frames seen."""
    blocked = 0
    for frame in view_frames(socket):
        view = frame["view"]
        if frame["version"] <= passed_at:
            continue
        if view["result"] is not None:
            break  # the hand ended before the seat drew again
        drew = any(e["type"] == "tile_drawn" and e["seat"] == seat for e in frame["events"])
        if drew:
            assert view["win_blocked"] is None
            break
        assert view["win_blocked"] == "passed_win", frame
        assert view["win_blocked_reason"] == WIN_BLOCKED_REASONS["passed_win"]
        assert MAHJONG not in view["legal"]
        blocked += 1
    return blocked
