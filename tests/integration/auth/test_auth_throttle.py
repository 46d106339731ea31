"""Sign-in throttling per account and per address, with its counters in real Redis.

The harness allows 3 failures per account and address, 5 per address and 8 per
account (from addresses it has not signed in from) in a 60 s window.
"""

from __future__ import annotations

import asyncio
import re

import pytest

from kalaro.bus import ServiceError
from kalaro.bus.redislink import RedisLink
from kalaro.proto import errors as codes
from kalaro.proto import subjects
from kalaro.proto.auth import SignIn, TokenPair
from services.auth.throttle import Throttle
from tests.integration.auth.harness import PASSWORD, AuthHarness


def _retry_after(message: str) -> int:
    found = re.search(r"try again in (\d+) seconds", message)
    assert found, message
    return int(found.group(1))


async def test_owner_signs_in_from_own_address_after_attackers_failures(
    auth: AuthHarness,
) -> None:
    email = auth.email()
    await auth.sign_up(email)
    attacker = "10.1.0.66"
    for i in range(3):
        err = await auth.refused(
            subjects.AUTH_SIGN_IN,
            SignIn(email=email, password=f"Wrong-Guess-{i}", address=attacker),
            TokenPair,
        )
        assert err.code == codes.INVALID_CREDENTIALS
    # The attacker's address is locked for this account, even with the right password...
    err = await auth.refused(
        subjects.AUTH_SIGN_IN, SignIn(email=email, password=PASSWORD, address=attacker), TokenPair
    )
    assert err.code == codes.THROTTLED
    assert "this account from your network address" in err.message
    assert 0 < _retry_after(err.message) <= 60
    # ...and case does not open a fresh counter.
    err = await auth.refused(
        subjects.AUTH_SIGN_IN,
        SignIn(email=email.upper(), password=PASSWORD, address=attacker),
        TokenPair,
    )
    assert err.code == codes.THROTTLED
    # The owner, from their own address, is not locked out.
    pair = await auth.call(
        subjects.AUTH_SIGN_IN, SignIn(email=email, password=PASSWORD, address="10.1.0.7"), TokenPair
    )
    assert pair.user.email == email
    # Another account from the attacker's address is unaffected (within its budget).
    other = auth.email()
    await auth.sign_up(other)
    ok = await auth.call(
        subjects.AUTH_SIGN_IN, SignIn(email=other, password=PASSWORD, address=attacker), TokenPair
    )
    assert ok.user.email == other


async def test_account_budget_spares_addresses_the_owner_used(auth: AuthHarness) -> None:
    """Guesses from many addresses use up the account's budget (8 in the harness): new
    addresses are then refused for the window, but not the owner's known address."""
    email = auth.email()
    await auth.sign_up(email)
    home = "10.2.0.1"
    await auth.call(
        subjects.AUTH_SIGN_IN, SignIn(email=email, password=PASSWORD, address=home), TokenPair
    )
    for i in range(8):  # 2 guesses from each of 4 addresses: no address is locked
        err = await auth.refused(
            subjects.AUTH_SIGN_IN,
            SignIn(email=email, password=f"Wrong-{i}-xx", address=f"10.2.1.{i // 2}"),
            TokenPair,
        )
        assert err.code == codes.INVALID_CREDENTIALS
    err = await auth.refused(
        subjects.AUTH_SIGN_IN, SignIn(email=email, password=PASSWORD, address="10.2.2.9"), TokenPair
    )
    assert err.code == codes.THROTTLED
    assert "for this account;" in err.message
    pair = await auth.call(
        subjects.AUTH_SIGN_IN, SignIn(email=email, password=PASSWORD, address=home), TokenPair
    )
    assert pair.user.email == email


async def test_success_clears_the_account_counter(auth: AuthHarness) -> None:
    email = auth.email()
    await auth.sign_up(email)
    for round_ in range(2):
        for i in range(2):
            err = await auth.refused(
                subjects.AUTH_SIGN_IN,
                SignIn(email=email, password=f"Wrong-{round_}-{i}-x", address=""),
                TokenPair,
            )
            assert err.code == codes.INVALID_CREDENTIALS
        # 2 + 2 failures would pass the limit of 3 if this did not reset the count.
        pair = await auth.call(
            subjects.AUTH_SIGN_IN, SignIn(email=email, password=PASSWORD, address=""), TokenPair
        )
        assert pair.user.email == email


async def test_address_is_throttled_across_accounts(auth: AuthHarness) -> None:
    address = f"203.0.113.{int(auth.unique[:2], 16) % 250}"
    victim = auth.email()
    await auth.sign_up(victim)
    # Five failures spread over accounts that do not exist (no account limit trips).
    for i in range(5):
        err = await auth.refused(
            subjects.AUTH_SIGN_IN,
            SignIn(email=auth.email(f"ghost{i}"), password=PASSWORD, address=address),
            TokenPair,
        )
        assert err.code == codes.INVALID_CREDENTIALS
    err = await auth.refused(
        subjects.AUTH_SIGN_IN, SignIn(email=victim, password=PASSWORD, address=address), TokenPair
    )
    assert err.code == codes.THROTTLED
    assert "address" in err.message
    # The same account from another address is fine: its own counter is clean.
    pair = await auth.call(
        subjects.AUTH_SIGN_IN,
        SignIn(email=victim, password=PASSWORD, address="198.51.100.7"),
        TokenPair,
    )
    assert pair.user.email == victim


async def test_parallel_guesses_cannot_pass_the_limit(redis: RedisLink, unique: str) -> None:
    throttle = Throttle(
        redis, max_failures=3, address_max_failures=100, window_seconds=60, prefix=f"t:{unique}:"
    )
    results = await asyncio.gather(
        *(throttle.attempt("someone@example.com", "10.9.9.9") for _ in range(20)),
        return_exceptions=True,
    )
    assert sum(1 for r in results if r is None) == 3
    assert all(isinstance(r, ServiceError) and r.code == codes.THROTTLED for r in results if r)


async def test_counters_expire_after_the_window(redis: RedisLink, unique: str) -> None:
    throttle = Throttle(
        redis, max_failures=1, address_max_failures=1, window_seconds=1, prefix=f"t:{unique}:"
    )
    await throttle.attempt("someone@example.com", "10.9.9.8")
    with pytest.raises(ServiceError) as throttled:
        await throttle.attempt("someone@example.com", "10.9.9.8")
    assert throttled.value.code == codes.THROTTLED
    assert _retry_after(throttled.value.message) == 1
    await asyncio.sleep(1.1)
    await throttle.attempt("someone@example.com", "10.9.9.8")  # allowed again
    assert await redis.keys(f"t:{unique}:account:*")  # keyed by a hash, not the email
    assert not await redis.keys(f"t:{unique}:*someone*")
