"""Ka Wu Xing end to end: three SDK players play a hand through the gateway to its result.

The whole stack runs (lobby, the ``kawuxing`` engine worker, wallet, gateway); every move
is a WebSocket frame chosen by the smart bot from the seat's own view. The hand settles
in the wallet by the result's payments × bet, and every frame any socket received is
scanned: nobody sees another seat's concealed tiles, draws, face-down kongs or claim
options — except a shown hand, which everyone (the spectator too) sees exactly as its
owner does.
"""

from __future__ import annotations

import json
import random
from typing import Any

from tests.e2e.stack import Stack
from tests.e2e.tables import LiveTable, admin, open_table, play_hand, signed_up, wait_balance

BET = 2
HOLD = 272 * BET  # the most one seat can lose in a hand under the default options
MAX_HANDS = 3  # until a hand with a Show Hand in it has been played (almost always the first)


def _frames(socket: Any) -> list[dict[str, Any]]:
    return [json.loads(raw) for raw in socket.raw_frames if '"type":"view"' in raw]


def kawuxing_leaks(live: LiveTable) -> list[str]:
    """Anything in a socket's view frames that shows another seat's concealed tiles.

    A seat's concealed tiles are its own until it shows its hand; then everyone sees them
    exactly as the owner does at the same version. Draws, face-down kongs and claim
    options stay private; frames of a finished hand (the result) reveal everything.
    """
    own: dict[tuple[str, int, int], list[str]] = {}  # (hand, version, seat) -> tiles
    for seat, socket in enumerate(live.sockets):
        for frame in _frames(socket):
            hand = frame["view"]["players"][seat]["hand"]
            own[(frame["hand_id"], frame["version"], seat)] = hand
    leaks: list[str] = []
    watchers = [*enumerate(live.sockets), *((None, s) for s in live.spectators)]
    for viewer, socket in watchers:
        for frame in _frames(socket):
            view = frame["view"]
            if view["result"] is not None:
                continue
            at = (frame["hand_id"], frame["version"])
            if frame["seat"] != viewer:
                leaks.append(f"socket of seat {viewer} got a frame for seat {frame['seat']}")
            if viewer is None and (view["legal"] or view["waits"] or view["drawn"]):
                leaks.append(f"the spectator got moves, waits or a draw at {at}")
            for player in view["players"]:
                other = player["seat"]
                if other == viewer:
                    continue
                if player["hand"] is not None and not player["shown"]:
                    leaks.append(f"{viewer} saw seat {other}'s concealed hand at {at}")
                if player["shown"]:
                    owner = own.get((*at, other))
                    if owner is not None and player["hand"] != owner:
                        leaks.append(f"{viewer} saw {player['hand']} of {other}'s {owner} at {at}")
                for meld in player["melds"]:
                    if meld["kong"] == "concealed" and meld["tiles"] is not None:
                        leaks.append(f"{viewer} saw seat {other}'s face-down kong at {at}")
            for event in frame["events"]:
                kind, owner = event.get("type"), event.get("seat")
                if owner == viewer:
                    continue
                if kind == "tile_drawn" and event["tile"] is not None and not event["shown"]:
                    leaks.append(f"{viewer} saw seat {owner}'s draw at {at}")
                if kind == "kong_declared" and event["kong"] == "concealed" and event["tile"]:
                    leaks.append(f"{viewer} saw seat {owner}'s concealed kong at {at}")
                if kind in ("claims_offered", "call_answered"):
                    leaks.append(f"{viewer} saw seat {owner}'s {kind} at {at}")
    return leaks


def shown_hands(live: LiveTable, hand_id: str) -> list[tuple[int, int]]:
    """(seat, version) of every Show Hand in the hand, from seat 0's frames."""
    return [
        (event["seat"], frame["version"])
        for frame in _frames(live.sockets[0])
        if frame["hand_id"] == hand_id
        for event in frame["events"]
        if event.get("type") == "hand_shown"
    ]


def _show_first(seat: int, view: dict[str, Any], legal: list[dict[str, Any]]) -> Any:
    """Show the hand as soon as the rules allow, once per hand (else the smart bot plays)."""
    if any(player["shown"] for player in view["players"]):
        return None
    return next((a for a in legal if a["type"] == "show_hand"), None)


async def test_a_ka_wu_xing_hand_through_the_gateway(stack: Stack, unique: str) -> None:
    host = await admin(stack)
    players = [await signed_up(stack, f"K{i}", unique) for i in range(3)]
    watcher = await signed_up(stack, "Watcher", unique)
    live = await open_table(stack, host, players, "kawuxing", BET, spectators=[watcher])
    table = await host.get_table(live.table_id)
    assert table.game == "kawuxing"
    balances = [1000, 1000, 1000]
    shows: list[tuple[int, int]] = []
    rng = random.Random(9)
    for _ in range(MAX_HANDS):
        await live.deal()
        assert [(await p.balance()).held for p in players] == [HOLD] * 3
        result = await play_hand(live, "kawuxing", policy="smart", rng=rng, choose=_show_first)
        outcome = json.loads(bytes(result.result))
        assert outcome["ending"] in ("self_draw", "discard", "robbed_kong", "wall_out")
        assert list(result.payments) == [units * BET for units in outcome["payments"]]
        assert sum(result.payments) == 0
        assert len(outcome["hands"]) == 3  # every hand is revealed with the result
        for seat, player in enumerate(players):
            balances[seat] += result.payments[seat]
            assert await wait_balance(player, balances[seat]) == balances[seat]
            assert (await player.balance()).held == 0
        shows = shown_hands(live, result.hand_id)
        if shows:
            break
    assert shows, f"no Show Hand in {MAX_HANDS} hands"

    # the shown hand was public from the moment it was shown, to every socket
    seat, version = shows[0]
    for socket in live.everyone:
        after = [
            f
            for f in _frames(socket)
            if f["hand_id"] == result.hand_id
            and f["version"] >= version
            and f["view"]["result"] is None
        ]
        assert after, "no view after the Show Hand"
        assert all(f["view"]["players"][seat]["shown"] for f in after)
        assert all(f["view"]["players"][seat]["hand"] is not None for f in after)
    assert kawuxing_leaks(live) == []
    spectator_views = _frames(live.spectators[0])
    assert spectator_views
    for frame in spectator_views:
        if frame["view"]["result"] is None:
            for player in frame["view"]["players"]:
                assert player["hand"] is None or player["shown"]
    audit = await host.audit()
    assert audit.mismatched_accounts == ()
    await live.close()
