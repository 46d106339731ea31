"""Password reset links: stored hashed, 30 minutes, once; one mail a minute; no bots."""

from __future__ import annotations

import re

from kalaro.proto import errors as codes
from kalaro.proto import subjects
from kalaro.proto.auth import (
    CreateBot,
    PasswordResetRequested,
    RequestPasswordReset,
    ResetPassword,
    SignIn,
    TokenPair,
    UserProfile,
)
from services.auth.resets import RESET_EVERY_SECONDS, RESET_MINUTES
from tests.integration.auth.harness import AuthHarness

NEW = "Mango-Float-77"


async def _ask(auth: AuthHarness, email: str) -> None:
    ask = RequestPasswordReset(email=email)
    reply = PasswordResetRequested
    answer = await auth.call(subjects.AUTH_REQUEST_PASSWORD_RESET, ask, reply)
    assert answer.status == "check_email"


def _reset_tokens(auth: AuthHarness, email: str) -> list[str]:
    found = []
    for mail in auth.mails(email):
        match = re.search(r"/#/reset\?token=([A-Za-z0-9_-]+)", mail.get_content())
        if match:
            found.append(match.group(1))
    return found


async def _reset(auth: AuthHarness, token: str, password: str = NEW) -> str:
    err = await auth.refused(
        subjects.AUTH_RESET_PASSWORD, ResetPassword(token=token, password=password), TokenPair
    )
    return err.code


async def test_a_reset_link_is_hashed_and_lasts_thirty_minutes(auth: AuthHarness) -> None:
    email = auth.email()
    await auth.sign_up(email)
    await _ask(auth, email)
    [token] = _reset_tokens(auth, email)
    async with auth.deps.engine.connect() as conn:
        rows = (await conn.exec_driver_sql("SELECT * FROM auth_password_resets")).all()
    assert len(rows) == 1 and token not in repr(rows)
    auth.clock.offset += RESET_MINUTES * 60 + 1
    assert await _reset(auth, token) == codes.TOKEN_EXPIRED
    assert await _reset(auth, "not-a-real-token-at-all") == codes.INVALID_TOKEN
    # The old password still works: nothing changed.
    await auth.call(subjects.AUTH_SIGN_IN, SignIn(email=email, password="Kulay-Ube-42"), TokenPair)


async def test_one_reset_spends_every_open_link(auth: AuthHarness) -> None:
    email = auth.email()
    await auth.sign_up(email)
    await _ask(auth, email)
    await _ask(auth, email)  # within the minute: answered alike, nothing sent
    assert len(_reset_tokens(auth, email)) == 1
    auth.clock.offset += RESET_EVERY_SECONDS + 1
    await _ask(auth, email)
    first, second = _reset_tokens(auth, email)
    pair = await auth.call(
        subjects.AUTH_RESET_PASSWORD, ResetPassword(token=second, password=NEW), TokenPair
    )
    assert pair.user.email_verified
    assert await _reset(auth, first) == codes.LINK_USED
    assert await _reset(auth, second) == codes.LINK_USED


async def test_bots_and_unknown_addresses_get_no_mail(auth: AuthHarness) -> None:
    bot = await auth.call(
        subjects.AUTH_CREATE_BOT,
        CreateBot(email="seven@bots.kalaro.invalid", display_name="Seven", password="s" * 20),
        UserProfile,
    )
    await _ask(auth, bot.email)
    await _ask(auth, auth.email("nobody"))
    assert await auth.count("auth_password_resets") == 0
    refused = await auth.refused(
        subjects.AUTH_REQUEST_PASSWORD_RESET,
        RequestPasswordReset(email="ana,eve@example.com"),
        PasswordResetRequested,
    )
    assert refused.code == codes.BAD_REQUEST
