"""Sign-in throttling with its counters in real Redis (see services/auth/throttle.py).

The harness: new devices slow down after 3 failures on an account (waits 1 s, then
2 s at most), need an emailed code after 5; an address may fail 8 times; a device
cookie survives 3 failures of its own; a 60 s window.
"""

from __future__ import annotations

import asyncio
import re

import pytest

from kalaro.bus import RemoteError, ServiceError
from kalaro.bus.redislink import RedisLink
from kalaro.proto import errors as codes
from kalaro.proto import subjects
from kalaro.proto.auth import SignedIn, SignIn, SignUp, SignUpAccepted
from services.auth.throttle import Throttle
from tests.integration.auth.harness import PASSWORD, AuthHarness


async def _sign_in(
    auth: AuthHarness, email: str, password: str = PASSWORD, **more: str
) -> SignedIn:
    return await auth.call(
        subjects.AUTH_SIGN_IN, SignIn(email=email, password=password, **more), SignedIn
    )


async def _refused(
    auth: AuthHarness, email: str, password: str = PASSWORD, **more: str
) -> RemoteError:
    return await auth.refused(
        subjects.AUTH_SIGN_IN, SignIn(email=email, password=password, **more), SignedIn
    )


def _code(auth: AuthHarness, email: str) -> str:
    mails = [m for m in auth.mails(email) if "sign-in code" in m["Subject"]]
    assert mails, "no code was mailed"
    found = re.search(r"^ {4}(\d{6})$", mails[-1].get_content(), re.M)
    assert found, mails[-1].get_content()
    return found.group(1)


async def test_concurrent_correct_sign_ins_from_one_address_all_succeed(
    auth: AuthHarness,
) -> None:
    """20 players behind one carrier address, after 7 failures from it (the limit is
    8): only failures count, so all 20 get in at once."""
    address = "100.64.0.1"
    emails = [auth.email(f"cgnat{i}") for i in range(20)]
    await asyncio.gather(
        *(
            auth.call(
                subjects.AUTH_SIGN_UP,
                SignUp(email=e, password=PASSWORD, display_name="Ana"),
                SignUpAccepted,
            )
            for e in emails
        )
    )
    for i in range(7):
        err = await _refused(auth, auth.email(f"ghost{i}"), address=address)
        assert err.code == codes.INVALID_CREDENTIALS
    pairs = await asyncio.gather(*(_sign_in(auth, e, address=address) for e in emails))
    assert sorted(p.user.email for p in pairs) == sorted(emails)
    assert all(p.device_token for p in pairs)


async def test_owner_device_signs_in_during_an_attack(auth: AuthHarness) -> None:
    """An attack from many addresses slows new devices down (429, a growing wait), then
    asks them for an emailed code; the owner's known device is never held up."""
    email = auth.email()
    await auth.sign_up(email)
    home = await _sign_in(auth, email, address="10.2.0.1")
    for i in range(3):
        err = await _refused(auth, email, f"Wrong-{i}-xx", address=f"10.2.1.{i}")
        assert err.code == codes.INVALID_CREDENTIALS
    # Slowed down, not locked: even the right password waits, and is told how long.
    err = await _refused(auth, email, address="10.2.1.50")
    assert (err.code, err.retry_after) == (codes.THROTTLED, 1)
    assert "try again in 1 seconds" in err.message and "new device" in err.message
    ok = await _sign_in(auth, email, address="10.2.1.51", device=home.device_token)
    assert ok.user.email == email
    await asyncio.sleep(1.05)
    err = await _refused(auth, email, "Wrong-3-xx", address="10.2.1.3")
    assert err.code == codes.INVALID_CREDENTIALS
    err = await _refused(auth, email, "Wrong-4-xx", address="10.2.1.4")
    assert (err.code, err.retry_after) == (codes.THROTTLED, 2)  # the wait grew
    await asyncio.sleep(2.05)
    err = await _refused(auth, email, "Wrong-5-xx", address="10.2.1.5")
    assert err.code == codes.INVALID_CREDENTIALS
    # 5 failures: a new device now needs a code, before its password is even tried.
    err = await _refused(auth, email, "Any-Guess-66", address="10.2.1.6")
    assert err.code == codes.CODE_REQUIRED
    code = _code(auth, email)
    err = await _refused(auth, email, address="10.2.1.7")
    assert err.code == codes.CODE_REQUIRED
    assert _code(auth, email) == code  # a live code is not replaced by asking again
    wrong = f"{(int(code) + 1) % 1_000_000:06d}"
    err = await _refused(auth, email, address="10.2.1.8", code=wrong)
    assert err.code == codes.CODE_INVALID
    # The owner's known device signs in throughout, with no code and no wait.
    ok = await _sign_in(auth, email, address="10.2.0.1", device=home.device_token)
    assert ok.user.email == email
    # The owner on a new device: the code and the password together.
    phone = await _sign_in(auth, email, address="10.2.3.1", code=code)
    assert phone.user.email == email and phone.device_token != home.device_token
    err = await _refused(auth, email, address="10.2.3.2", code=code)
    assert err.code == codes.CODE_INVALID  # single use
    # The phone is a known device now.
    again = await _sign_in(auth, email, address="10.2.3.1", device=phone.device_token)
    assert again.user.email == email


async def _into_code_mode(auth: AuthHarness, email: str, net: str) -> str:
    """Five failures from new devices (waiting out the waits); the code then mailed."""
    for i in range(3):
        await _refused(auth, email, f"Wrong-{i}-xx", address=f"{net}.1.{i}")
    await asyncio.sleep(1.05)
    await _refused(auth, email, "Wrong-3-xx", address=f"{net}.1.3")
    await asyncio.sleep(2.05)
    await _refused(auth, email, "Wrong-4-xx", address=f"{net}.1.4")
    assert (await _refused(auth, email, address=f"{net}.1.5")).code == codes.CODE_REQUIRED
    return _code(auth, email)


async def test_a_right_code_with_a_wrong_password_fails(auth: AuthHarness) -> None:
    email = auth.email()
    await auth.sign_up(email)
    code = await _into_code_mode(auth, email, "10.3")
    err = await _refused(auth, email, "Wrong-5-xx", address="10.3.1.6", code=code)
    assert err.code == codes.INVALID_CREDENTIALS
    ok = await _sign_in(auth, email, address="10.3.1.7", code=code)  # not used up
    assert ok.user.email == email


async def test_wrong_codes_withdraw_the_code_and_a_new_one_is_mailed(
    auth: AuthHarness,
) -> None:
    email = auth.email()
    await auth.sign_up(email)
    code = await _into_code_mode(auth, email, "10.6")
    wrong = f"{(int(code) + 1) % 1_000_000:06d}"
    for _ in range(5):
        err = await _refused(auth, email, address="10.6.2.1", code=wrong)
        assert err.code == codes.CODE_INVALID
    err = await _refused(auth, email, address="10.6.2.2", code=code)
    assert err.code == codes.CODE_INVALID  # withdrawn after 5 wrong tries
    assert (await _refused(auth, email, address="10.6.2.3")).code == codes.CODE_REQUIRED
    fresh = _code(auth, email)
    assert len(auth.mails(email)) >= 3  # the sign-up link and two codes
    ok = await _sign_in(auth, email, address="10.6.2.4", code=fresh)
    assert ok.user.email == email


async def test_another_accounts_or_a_forged_cookie_is_a_new_device(auth: AuthHarness) -> None:
    email, other = auth.email(), auth.email()
    await auth.sign_up(email)
    await auth.sign_up(other)
    others_cookie = (await _sign_in(auth, other)).device_token
    body, _, mac = others_cookie.rpartition(".")
    for i in range(3):
        await _refused(auth, email, f"Wrong-{i}-xx", address=f"10.4.1.{i}")
    for cookie in (others_cookie, f"{body}.{mac[::-1]}", "v1.x.y.1.z", ""):
        err = await _refused(auth, email, address="10.4.2.1", device=cookie)
        assert err.code == codes.THROTTLED, cookie


async def test_a_cookies_own_failures_end_its_exemption(auth: AuthHarness) -> None:
    """A cookie left on a shared computer is no free pass: after 3 failures of its own
    it counts as a new device, and runs into the account's limits."""
    email = auth.email()
    await auth.sign_up(email)
    cookie = (await _sign_in(auth, email)).device_token
    for i in range(6):
        err = await _refused(auth, email, f"Wrong-{i}-xx", address="10.5.0.1", device=cookie)
        assert err.code == codes.INVALID_CREDENTIALS
    err = await _refused(auth, email, address="10.5.0.1", device=cookie)
    assert err.code == codes.THROTTLED
    # Its next success (once the wait is over) makes it a known device again, its own
    # failures forgiven: the owner's typos on it are not held against the account.
    await asyncio.sleep(1.05)
    again = await _sign_in(auth, email, address="10.5.0.1", device=cookie)
    for i in range(2):
        err = await _refused(
            auth, email, f"Typo-{i}-xx", address="10.5.0.1", device=again.device_token
        )
        assert err.code == codes.INVALID_CREDENTIALS
    ok = await _sign_in(auth, email, address="10.5.0.1", device=again.device_token)
    assert ok.user.email == email  # 6 failures on the account, yet no wait: known again


async def test_address_limit_spares_known_devices(auth: AuthHarness) -> None:
    address = "203.0.113.9"
    victim = auth.email()
    await auth.sign_up(victim)
    cookie = (await _sign_in(auth, victim, address=address)).device_token
    for i in range(8):  # over accounts that do not exist: no account limit trips
        err = await _refused(auth, auth.email(f"ghost{i}"), address=address)
        assert err.code == codes.INVALID_CREDENTIALS
    err = await _refused(auth, victim, address=address)
    assert err.code == codes.THROTTLED and "your network address" in err.message
    assert 50 <= err.retry_after <= 60  # until the address's window ends
    ok = await _sign_in(auth, victim, address=address, device=cookie)
    assert ok.user.email == victim
    ok = await _sign_in(auth, victim, address="198.51.100.7")  # another address
    assert ok.user.email == victim


async def test_parallel_guesses_cannot_pass_the_limit(redis: RedisLink, unique: str) -> None:
    throttle = Throttle(
        redis,
        window_seconds=60,
        max_failures=3,
        account_max_failures=10,
        address_max_failures=100,
        prefix=f"t:{unique}:",
    )
    results = await asyncio.gather(
        *(
            throttle.check("someone@example.com", f"10.9.9.{i}", device_id="", has_code=False)
            for i in range(20)
        ),
        return_exceptions=True,
    )
    let_through = [r for r in results if not isinstance(r, BaseException)]
    assert len(let_through) == 3  # tries in flight count until they are decided
    refused = [r for r in results if isinstance(r, BaseException)]
    assert all(isinstance(r, ServiceError) and r.code == codes.THROTTLED for r in refused)
    waits = [await throttle.finish(gate, "fail") for gate in let_through]
    assert waits == [0, 0, 1000]
    with pytest.raises(ServiceError) as slowed:
        await throttle.check("someone@example.com", "10.9.9.99", device_id="", has_code=False)
    assert slowed.value.retry_after == 1


async def test_counters_expire_after_the_window(redis: RedisLink, unique: str) -> None:
    throttle = Throttle(
        redis,
        window_seconds=1,
        max_failures=5,
        account_max_failures=10,
        address_max_failures=1,
        prefix=f"t:{unique}:",
    )
    gate = await throttle.check("someone@example.com", "10.9.9.8", device_id="", has_code=False)
    await throttle.finish(gate, "fail")
    with pytest.raises(ServiceError) as throttled:
        await throttle.check("someone@example.com", "10.9.9.8", device_id="", has_code=False)
    assert (throttled.value.code, throttled.value.retry_after) == (codes.THROTTLED, 1)
    await asyncio.sleep(1.1)
    gate = await throttle.check("someone@example.com", "10.9.9.8", device_id="", has_code=False)
    await throttle.finish(gate, "fail")
    assert await redis.keys(f"t:{unique}:account:*")  # keyed by a hash, not the email
    assert not await redis.keys(f"t:{unique}:*someone*")
