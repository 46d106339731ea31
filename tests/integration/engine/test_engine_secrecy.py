"""No frame a socket could receive carries another seat's concealed cards or tiles.

Whole random hands are played through the worker while the test records every frame
published for the table, by subject, and the server's true state at every version.
Each frame is then scanned for every card or tile name that its audience must not
know: the other seats' concealed hands and the stock or wall, less whatever is face up
or the recipient's own. Tongits cards are unique, so that check is exact; Mahjong tiles
come four of a kind, so only kinds with no copy in sight are checked by name and the
views' and events' shapes are checked besides.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import pytest
from nats.aio.client import Client as NATS

from kalaro.games.registry import rules_for
from kalaro.proto import subjects
from services.engine.slots import SlotStore
from tests.integration.engine.engine_helpers import (
    Feed,
    Frame,
    Replicas,
    decode_state,
    load_slot,
    play_random,
    start_hand,
    start_message,
)


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _forbidden(game: str, state: Any, recipient: int | None) -> set[str]:
    """What ``recipient`` must not be shown, from the game's own secrets fact."""
    return set(rules_for(game).secrets(state).forbidden(recipient))


def _recipient(frame: Frame, table_id: str) -> int | None:
    """Whose part of the table's frames message this frame is (None: the audience's)."""
    assert frame.subject == subjects.table_frames(table_id), frame.subject
    return frame.seat


def _leaks(game: str, state: Any, frame: Frame, recipient: int | None) -> set[str]:
    forbidden = _forbidden(game, state, recipient)
    shown = set(_strings(frame.body["view"])) | set(_strings(frame.body["events"]))
    return shown & forbidden


def _recorder(
    store: SlotStore, game: str, table_id: str, states: dict[int, Any]
) -> Callable[[int], Awaitable[None]]:
    """Keep the server's true state at each version (read straight from Redis)."""

    async def record(version: int) -> None:
        _, slot = await load_slot(store, table_id)
        states[version] = decode_state(game, slot)

    return record


def _mahjong_shape(frame: Frame, recipient: int | None) -> None:
    view = frame.body["view"]
    for player in view["players"]:
        if player["seat"] != recipient:
            assert player["hand"] is None, f"seat {player['seat']}'s tiles in {frame.subject}"
    if recipient is None or view["turn"] != recipient:
        assert view["drawn"] is None
    for event in frame.body["events"]:
        if event["type"] in ("claims_offered", "call_answered"):
            assert event["seat"] == recipient, f"{event} reached {frame.subject}"
        if event["type"] == "tile_drawn" and event["seat"] != recipient:
            assert event["tile"] is None, f"{event} reached {frame.subject}"


@pytest.mark.parametrize(
    ("game", "options", "seeds"),
    [
        ("tongits", {}, (21, 22)),
        ("tongits", {"ruleset": "classic"}, (23, 24)),  # secret sets, face down
        ("mahjong", {}, (25,)),
    ],
)
async def test_no_frame_shows_anyone_elses_concealed_cards(
    nc: NATS, workers: Replicas, unique: str, game: str, options: dict[str, Any], seeds: tuple[int]
) -> None:
    await workers.start(game)
    store = workers.store(game)
    seats = rules_for(game).seats
    for seed in seeds:
        start = start_message(game, unique, table=f"t{seed}", hand=f"h{seed}", options=options)
        feed = await Feed.open(nc, start.table_id, seats)
        states: dict[int, Any] = {}
        record = _recorder(store, game, start.table_id, states)

        started = await start_hand(nc, game, start)
        await record(started.version)
        final = await play_random(
            nc, game, start, feed, random.Random(seed), started.version, on_step=record
        )
        await feed.wait_version(final)

        scanned = with_secrets = 0
        for frame in feed.frames:
            if frame.body["type"] != "view":
                assert frame.subject == subjects.table_events(start.table_id)
                continue
            recipient = _recipient(frame, start.table_id)
            assert frame.body["seat"] == recipient, "a frame in another seat's part"
            state = states[frame.body["version"]]
            if rules_for(game).is_over(state):
                continue  # the result reveals every hand, by design
            assert not _leaks(game, state, frame, recipient), (frame.subject, frame.body)
            with_secrets += bool(_forbidden(game, state, recipient))
            if game == "mahjong":
                _mahjong_shape(frame, recipient)
            scanned += 1
        assert scanned >= (final - started.version) * (seats + 1)
        assert feed.messages == final - started.version + 1  # one message per step
        # Late in a Mahjong hand every kind may have a copy in sight; early on most don't.
        assert with_secrets >= (scanned if game == "tongits" else scanned // 3)

        # The scan can fail: a seat's own frame, read as another seat's, is full of leaks.
        own = next(f for f in feed.frames if f.body["type"] == "view" and f.seat == 0)
        assert _leaks(game, states[own.body["version"]], own, 1)
        await feed.close()
