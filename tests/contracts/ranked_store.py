"""The ranked store (:class:`services.ranked.store.RankedStore`): a hand's ratings
applied once and only for rateable hands, the leaderboard's order with the caller's
place (all time and this week), and admins' actions with their audit."""

from __future__ import annotations

from services.ranked.ratings import shown_rating
from services.ranked.store import RankedStore
from tests.integration.ranked.ranked_helpers import ranked_record

__all__ = [
    "test_a_batch_rates_as_its_hands_one_by_one_each_once",
    "test_a_hand_is_applied_once_and_only_if_rateable",
    "test_admin_actions_change_the_standing_and_are_audited",
    "test_the_board_orders_by_rating_and_counts_the_callers_place",
]

DAY_MS = 86_400_000


async def test_a_hand_is_applied_once_and_only_if_rateable(store: RankedStore, unique: str) -> None:
    players = (f"{unique}a", f"{unique}b", f"{unique}c")
    assert await store.apply_hand(ranked_record("p1", players, (9, -3, -6), practice=True), 1) == ()
    assert await store.apply_hand(ranked_record("u1", players, (9, -3, -6), ranked=False), 1) == ()
    assert await store.ratings_of(players[0]) == {}
    record = ranked_record(f"{unique}.1", players, (9, -3, -6))
    changes = await store.apply_hand(record, 5)
    assert [c.user_id for c in changes] == list(players)
    assert await store.apply_hand(record, 6) == ()  # again: nothing
    rows = {u: (await store.ratings_of(u))["tongits"] for u in players}
    assert all(r.rating.hands == 1 and r.last_rated_ms == 5 for r in rows.values())
    assert rows[players[0]].shown == shown_rating(rows[players[0]].rating)
    assert rows[players[0]].shown > rows[players[1]].shown
    assert rows[players[0]].display_name == f"name {players[0]}"


async def test_the_board_orders_by_rating_and_counts_the_callers_place(
    store: RankedStore, unique: str
) -> None:
    a, b, c, d = (f"{unique}{x}" for x in "abcd")
    # d plays one hand against b and c on day 1 and loses; on day 10 a beats them twice.
    await store.apply_hand(ranked_record(f"{unique}.1", (d, b, c), (-10, 20, -10)), 1 * DAY_MS)
    await store.apply_hand(ranked_record(f"{unique}.2", (a, b, c), (20, -10, -10)), 10 * DAY_MS)
    await store.apply_hand(ranked_record(f"{unique}.3", (b, a, c), (-10, 20, -10)), 10 * DAY_MS)
    board = await store.board("tongits", None, 100)
    ids = [r.user_id for r in board]
    assert ids[0] == a and set(ids) == {a, b, c, d}
    assert [r.shown for r in board] == sorted((r.shown for r in board), reverse=True)
    for place, row in enumerate(board, start=1):
        assert await store.place_of("tongits", row.user_id, None) == (place, row)
    assert [r.user_id for r in await store.board("tongits", None, 2)] == ids[:2]
    # This week (since day 5): d was last rated on day 1, so d is not on it.
    week = await store.board("tongits", 5 * DAY_MS, 100)
    assert d not in [r.user_id for r in week] and len(week) == 3
    assert await store.place_of("tongits", d, 5 * DAY_MS) is None
    assert await store.place_of("tongits", f"{unique}nobody", None) is None
    assert await store.board("mahjong", None, 100) == []


async def test_admin_actions_change_the_standing_and_are_audited(
    store: RankedStore, unique: str
) -> None:
    from kalaro.proto import ranked as rk

    user, admin = f"{unique}u", f"{unique}admin"
    assert await store.standing(user) == rk.Standing(user_id=user)
    steps: list[rk.AdminActionName] = ["warn", "warn", "bar-ranked", "freeze", "unfreeze"]
    for n, action in enumerate(steps):
        act = rk.AdminAct(admin_id=admin, user_id=user, action=action, reason=f"why {n}")
        acted = await store.act(act, 100 + n)
        assert acted.audit.reason == f"why {n}" and acted.audit.at_ms == 100 + n
    assert await store.standing(user) == rk.Standing(
        user_id=user, frozen=False, barred=True, warnings=2
    )
    log = await store.audit_log(3)
    assert [(e.action, e.reason, e.admin_id) for e in log] == [
        ("unfreeze", "why 4", admin),
        ("freeze", "why 3", admin),
        ("bar-ranked", "why 2", admin),
    ]


async def test_a_batch_rates_as_its_hands_one_by_one_each_once(
    store: RankedStore, unique: str
) -> None:
    """One fetch in one transaction: the same ratings as hand by hand, a hand repeated
    in the batch or applied before counts once, unrateable ones change nothing."""
    a, b, c, d = (f"{unique}{x}" for x in "abcd")
    first = ranked_record(f"{unique}.1", (a, b, c), (20, -10, -10))
    second = ranked_record(f"{unique}.2", (b, c, d), (-10, 20, -10))
    practice = ranked_record(f"{unique}.3", (a, b, d), (0, 0, 0), practice=True)
    await store.apply_hand(first, 1)
    done = await store.apply_hands([first, second, practice, second], 2)
    assert [len(changes) for changes in done] == [0, 3, 0, 3]
    assert done[1] == done[3]
    assert {u: (await store.ratings_of(u))["tongits"].rating.hands for u in (a, b, c, d)} == {
        a: 1, b: 2, c: 2, d: 1,
    }  # fmt: skip
    # Hand by hand from the ratings the first hand left: the batch's second hand started
    # from them, not from the newcomer's.
    by_change = {x.user_id: x for x in done[1]}
    assert by_change[b].before.hands == 1 and by_change[d].before.hands == 0
