"""Losing Redis loses no replay: two hands are played, history stores them, Redis is
wiped (FLUSHALL on the stack's redis-server), and a player who signs in afterwards
still finds both in My hands and replays one on a phone (375×812): the deal, each
step, the result with every hand revealed, the fairness check. axe-core finds no
serious or critical WCAG 2.2 AA violation on the replay.

The hands are played with the SDK (a thread of its own: Playwright's sync API owns
this thread's event loop)."""

from __future__ import annotations

import asyncio
import random
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser.axe import assert_accessible
from tests.e2e.browser.conftest import PHONE
from tests.e2e.browser.pages import PASSWORD, shot, sign_in
from tests.e2e.history_wipe import wipe_once_stored
from tests.e2e.stack import Stack
from tests.e2e.tables import admin, open_table, play_hand, signed_up

expect = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed").expect

# Two real hands are played first (a minute or two on a busy two-core machine).
pytestmark = [pytest.mark.browser, pytest.mark.timeout(400)]

Json = dict[str, Any]


@dataclass
class Wiped:
    """What a player saw of the hands before Redis was wiped."""

    email: str
    hand_ids: list[str]
    steps: int  # the first hand's replay steps (the deal included)
    credits: int  # what the first hand paid the player (negative: charged)


def play_then_wipe(stack: Stack, unique: str) -> Wiped:
    async def run() -> Wiped:
        host = await admin(stack)
        players = [await signed_up(stack, f"Wp{i}", unique) for i in range(3)]
        live = await open_table(stack, host, players, "tongits", 10)
        results = []
        for n in range(2):
            await live.deal()
            results.append(await play_hand(live, "tongits", policy="smart", rng=random.Random(n)))
        await live.close()
        hand_ids = [r.hand_id for r in results]
        first = hand_ids[0]
        replay: Json = await players[0].call("GET", f"/api/hands/tongits/{first}/replay", Json)
        await wipe_once_stored(stack.redis.url, hand_ids)
        for client in [host, *players]:
            await client.close()
        return Wiped(
            email=f"wp0-{unique}@example.com",
            hand_ids=hand_ids,
            steps=len(replay["steps"]),
            credits=results[0].payments[replay["seat"]],
        )

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, run()).result(timeout=300)


@pytest.fixture(scope="module")
def wiped(stack: Stack) -> Wiped:
    return play_then_wipe(stack, uuid.uuid4().hex[:10])


def test_a_hand_replays_from_history_after_redis_is_wiped(
    new_page: Any, wiped: Wiped, screenshots: Path
) -> None:
    page = new_page(PHONE)
    sign_in(page, wiped.email, PASSWORD)

    # My hands: both hands, read back from history alone.
    page.goto("/#/hands")
    for hand_id in wiped.hand_ids:
        expect(page.locator(f"tr.hand-row[data-hand='{hand_id}']")).to_be_visible()

    # The replay of the first: the deal, a step, the result.
    page.goto(f"/#/hands/tongits/{wiped.hand_ids[0]}")
    expect(page.locator("#replay-title")).to_contain_text("Tongits hand")
    expect(page.locator("#replay-counter")).to_have_text(f"Step 0 of {wiped.steps - 1}")
    expect(page.locator("#replay-move")).to_contain_text("The deal")
    assert page.locator("#replay-hand .card").count() in (12, 13)
    page.click("#replay-next")
    expect(page.locator("#replay-counter")).to_have_text(f"Step 1 of {wiped.steps - 1}")
    shot(page, screenshots, "36-replay-after-redis-wipe-step-phone")
    assert_accessible(page, "the replay after Redis was wiped, step 1 (phone)")

    page.click("#replay-last")
    expect(page.locator("#replay-counter")).to_have_text(f"Result ({wiped.steps} steps)")
    expect(page.locator("#result-panel")).to_be_visible()
    assert page.locator("#result-panel tbody tr").count() == 3
    assert page.locator("#result-panel .revealed .card").count() > 13
    mine = page.locator("#result-panel .my-amount")
    if wiped.credits > 0:
        expect(mine).to_contain_text(f"You received {wiped.credits:,}")
    elif wiped.credits < 0:
        expect(mine).to_contain_text(f"You paid {-wiped.credits:,}")
    else:
        expect(mine).to_contain_text("No credits moved")
    page.click("#verify-hand")
    expect(page.locator("#verify-verdict")).to_contain_text("Verified")
    shot(page, screenshots, "37-replay-after-redis-wipe-result-phone")
    assert_accessible(page, "the replay's result after Redis was wiped (phone)")
