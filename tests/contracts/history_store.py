"""The hand-history store (:class:`services.history.store.HandHistory`): each hand stored
once whatever arrives twice, read back by id, and paged newest first per player with a
cursor, a game filter and a start time; voided hands listed as such."""

from __future__ import annotations

import pytest

from kalaro.bus import ServiceError
from kalaro.proto import errors as codes
from kalaro.proto.history import GetStoredHand, ListHands
from services.history import handlers
from services.history.handlers import HistoryDeps
from services.history.store import HandHistory
from tests.integration.history.history_helpers import stored, voided

__all__ = [
    "test_duplicates_within_and_across_batches_are_stored_once",
    "test_pages_newest_first_with_a_cursor_and_a_game_filter",
    "test_since_bounds_a_page_and_voided_hands_are_listed",
    "test_the_read_handlers_answer_from_the_store",
]


async def _page(
    hands: HandHistory,
    user: str,
    *,
    before_ms: int | None = None,
    since_ms: int | None = None,
) -> list[str]:
    page = await hands.player_page(
        user, game=None, before_ms=before_ms, before_id=None, limit=10, since_ms=since_ms
    )
    return [h.hand_id for h in page]


async def test_duplicates_within_and_across_batches_are_stored_once(
    hands: HandHistory, unique: str
) -> None:
    first = [stored(unique, 0), stored(unique, 1), stored(unique, 0)]
    await hands.store_hands(first)
    ids = [f"{unique}.{n}" for n in range(3)]
    assert await hands.stored_ids(ids) == {f"{unique}.0", f"{unique}.1"}
    # The whole batch again (a redelivery), and a different record under a stored id:
    # the first one stays.
    changed = stored(unique, 1, finished_ms=5)
    await hands.store_hands([*first, changed, stored(unique, 2)])
    assert await hands.stored_ids(ids) == set(ids)
    assert await hands.load_hand(f"{unique}.1") == stored(unique, 1).record
    assert await hands.load_hand(f"{unique}.9") is None
    page = await hands.player_page(
        f"{unique}-a", game=None, before_ms=None, before_id=None, limit=10
    )
    assert [h.finished_ms for h in page] == [1_000_002, 1_000_001, 1_000_000]
    assert await hands.stored_ids([]) == set()


async def test_pages_newest_first_with_a_cursor_and_a_game_filter(
    hands: HandHistory, unique: str
) -> None:
    # Six hands; 2 and 3 finished in the same millisecond (the id breaks the tie).
    items = [stored(unique, n, game="mahjong" if n % 2 else "tongits") for n in range(6)]
    items[3] = stored(unique, 3, game="mahjong", finished_ms=items[2].finished_ms)
    await hands.store_hands(items)
    user = f"{unique}-b"
    seen: list[str] = []
    cursor: tuple[int | None, str | None] = (None, None)
    while True:
        page = await hands.player_page(
            user, game=None, before_ms=cursor[0], before_id=cursor[1], limit=2
        )
        seen += [h.hand_id for h in page]
        if len(page) < 2:
            break
        cursor = (page[-1].finished_ms, page[-1].hand_id)
    assert seen == [f"{unique}.{n}" for n in (5, 4, 3, 2, 1, 0)]
    mahjong = await hands.player_page(
        user, game="mahjong", before_ms=None, before_id=None, limit=10
    )
    assert [h.hand_id for h in mahjong] == [f"{unique}.{n}" for n in (5, 3, 1)]
    # The summary is from the asking player's seat: seat 1 won hand 1.
    one = next(h for h in mahjong if h.hand_id == f"{unique}.1")
    assert (one.seat, one.won, one.credits) == (1, True, 20)
    # A time without an id: everything strictly before it.
    assert await _page(hands, user, before_ms=items[2].finished_ms) == [
        f"{unique}.1",
        f"{unique}.0",
    ]
    assert await _page(hands, f"{unique}-bot") == []  # bots are not indexed


async def test_since_bounds_a_page_and_voided_hands_are_listed(
    hands: HandHistory, unique: str
) -> None:
    await hands.store_hands([stored(unique, 0), stored(unique, 1), voided(unique, 2)])
    me = f"{unique}-a"
    assert await _page(hands, me, since_ms=1_000_001) == [f"{unique}.2", f"{unique}.1"]
    page = await hands.player_page(me, game=None, before_ms=None, before_id=None, limit=10)
    assert [(h.hand_id, h.ending, h.won, h.credits) for h in page] == [
        (f"{unique}.2", "voided", False, 0),
        (f"{unique}.1", "tongits", False, -10),
        (f"{unique}.0", "tongits", True, 20),
    ]
    # A finished record under the voided one's id changes nothing.
    await hands.store_hands([stored(unique, 2)])
    assert await hands.load_hand(f"{unique}.2") == voided(unique, 2).record


async def test_the_read_handlers_answer_from_the_store(history: HistoryDeps, unique: str) -> None:
    """The handlers over whichever store the deps hold: a page, a record, and their
    refusals (a page size out of bounds, a hand history does not have)."""
    await history.hands.store_hands([stored(unique, n) for n in range(3)])
    listed = await handlers.list_hands(ListHands(user_id=f"{unique}-a", limit=2), history)
    assert [h.hand_id for h in listed.hands] == [f"{unique}.2", f"{unique}.1"]
    record = await handlers.get_hand(GetStoredHand(hand_id=f"{unique}.0"), history)
    assert record == stored(unique, 0).record
    with pytest.raises(ServiceError) as missing:
        await handlers.get_hand(GetStoredHand(hand_id=f"{unique}.9"), history)
    assert missing.value.code == codes.NOT_FOUND
    with pytest.raises(ServiceError) as bad:
        await handlers.list_hands(ListHands(user_id=f"{unique}-a", limit=0), history)
    assert bad.value.code == codes.BAD_REQUEST
