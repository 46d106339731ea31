"""Sign-in throttling on the whole stack, behind two gateway processes: the failure
counts are the auth service's, in Redis, so they hold whichever gateway a try reaches;
the owner's known device gets in during an attack; 20 players behind one address (all
of these clients are 127.0.0.1) sign in at once.

The e2e stack slows new devices down after 5 failures on an account (tests/e2e/stack.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AsyncExitStack

import httpx
import pytest

from tests.e2e.stack import Stack

PASSWORD = "Kulay-Ube-42-throttle"
#: ``browser(which, device="")``: a new client (its own cookie jar) on gateway 0 or 1.
Browser = Callable[..., Awaitable[httpx.AsyncClient]]


@pytest.fixture(scope="module")
def second_gateway(stack: Stack) -> Iterator[str]:
    yield stack.start_gateway("gateway-throttle")
    stack.stop("gateway-throttle")


@pytest.fixture
async def browser(stack: Stack, second_gateway: str) -> AsyncIterator[Browser]:
    async with AsyncExitStack() as exits:

        async def new(which: int, device: str = "") -> httpx.AsyncClient:
            base = (stack.base_url, second_gateway)[which]
            cookies = {"kalaro_device": device} if device else None
            http = httpx.AsyncClient(base_url=base, timeout=30, cookies=cookies)
            return await exits.enter_async_context(http)

        yield new


def _sign_in(
    http: httpx.AsyncClient, email: str, password: str = PASSWORD
) -> Awaitable[httpx.Response]:
    return http.post("/api/auth/sign-in", json={"email": email, "password": password})


async def _sign_up(http: httpx.AsyncClient, email: str) -> None:
    body = {"email": email, "password": PASSWORD, "display_name": "Tala"}
    r = await http.post("/api/auth/sign-up", json=body)
    assert r.status_code == 202, r.text


async def test_the_owners_device_gets_in_while_both_gateways_hold_the_attack(
    browser: Browser, unique: str
) -> None:
    email = f"owner-{unique}@example.com"
    owner = await browser(0)
    await _sign_up(owner, email)
    assert (await _sign_in(owner, email)).status_code == 200
    device = owner.cookies["kalaro_device"]
    guessers = (await browser(0), await browser(1))
    for i in range(5):
        r = await _sign_in(guessers[i % 2], email, f"wrong guess {i}")
        assert r.status_code == 401, r.text
    for guesser in guessers:  # five failures over two gateways count as five
        r = await _sign_in(guesser, email)
        assert r.status_code == 429, r.text
        assert r.headers["retry-after"] == "1"
    owner_elsewhere = await browser(1, device)
    r = await _sign_in(owner_elsewhere, email)
    assert r.status_code == 200, r.text


async def test_twenty_players_behind_one_address_sign_in_at_once(
    browser: Browser, unique: str
) -> None:
    emails = [f"cgnat{i}-{unique}@example.com" for i in range(20)]
    setup = await browser(0)
    for email in emails:
        await _sign_up(setup, email)
    for i in range(5):  # a few typos from the same address first
        r = await _sign_in(setup, f"nobody{i}-{unique}@example.com", "typo")
        assert r.status_code == 401, r.text
    players = [await browser(i % 2) for i in range(20)]
    answers = await asyncio.gather(*(_sign_in(p, e) for p, e in zip(players, emails, strict=True)))
    assert [r.status_code for r in answers] == [200] * 20, [r.text for r in answers]
