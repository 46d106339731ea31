"""New verification links (for the holder of an expired one, or a signed-in account),
and the welcome grant's event when JetStream refuses it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kalaro.bus import ServiceError
from kalaro.proto import errors as codes
from kalaro.proto import subjects
from kalaro.proto.auth import (
    EmailVerified,
    LinkResent,
    ResendVerification,
    UserRegistered,
    VerifyEmail,
)
from services.auth import links
from services.auth.links import RESEND_SECONDS
from tests.integration.auth.harness import AuthHarness


async def _resend(auth: AuthHarness, **fields: str) -> LinkResent:
    return await auth.call(
        subjects.AUTH_RESEND_VERIFICATION, ResendVerification(**fields), LinkResent
    )


async def _refused_resend(auth: AuthHarness, **fields: str) -> str:
    err = await auth.refused(
        subjects.AUTH_RESEND_VERIFICATION, ResendVerification(**fields), LinkResent
    )
    return err.code


async def test_an_expired_link_is_traded_once_for_a_new_one(auth: AuthHarness) -> None:
    email = auth.email()
    pair = await auth.sign_up(email)
    old = auth.link(email)
    # A link that still works is opened, not traded.
    assert await _refused_resend(auth, token=old) == codes.CONFLICT
    assert len(auth.mails(email)) == 1
    auth.clock.offset += auth.settings.verify_token_hours * 3600 + 1
    assert (await _resend(auth, token=old)).status == "sent"
    new = auth.link(email)
    assert new != old and len(auth.mails(email)) == 2
    # The expired link bought one new link; it buys nothing more and verifies nothing.
    assert await _refused_resend(auth, token=old) == codes.LINK_USED
    assert len(auth.mails(email)) == 2
    done = await auth.call(subjects.AUTH_VERIFY_EMAIL, VerifyEmail(token=new), EmailVerified)
    assert done.user_id == pair.user.user_id
    assert await _refused_resend(auth, token="not-a-real-token-at-all") == codes.INVALID_TOKEN


async def test_a_signed_in_account_asks_for_a_link_at_most_once_a_minute(
    auth: AuthHarness,
) -> None:
    email = auth.email()
    pair = await auth.sign_up(email)
    user_id = pair.user.user_id
    # The sign-up's own link was just made.
    assert await _refused_resend(auth, user_id=user_id) == codes.THROTTLED
    auth.clock.offset += RESEND_SECONDS + 1
    assert (await _resend(auth, user_id=user_id)).status == "sent"
    assert len(auth.mails(email)) == 2
    assert await _refused_resend(auth, user_id=user_id) == codes.THROTTLED
    await auth.call(subjects.AUTH_VERIFY_EMAIL, VerifyEmail(token=auth.link(email)), EmailVerified)
    auth.clock.offset += RESEND_SECONDS + 1
    assert (await _resend(auth, user_id=user_id)).status == "already_verified"
    assert len(auth.mails(email)) == 2


async def test_a_resend_names_exactly_one_link_or_account(auth: AuthHarness) -> None:
    assert await _refused_resend(auth) == codes.BAD_REQUEST
    both = {"token": "x" * 40, "user_id": "u"}
    assert await _refused_resend(auth, **both) == codes.BAD_REQUEST
    assert await _refused_resend(auth, user_id="nobody") == codes.NOT_FOUND


async def test_a_grant_that_cannot_be_announced_leaves_the_link_to_press_again(
    auth: AuthHarness,
) -> None:
    """The welcome grant's event is published inside the verifying transaction: when
    JetStream refuses it, nothing is verified and the same link works again."""
    email = auth.email()
    pair = await auth.sign_up(email)
    token = auth.link(email)
    published: list[UserRegistered] = []

    async def down(event: UserRegistered) -> None:
        raise ConnectionError("JetStream is down")

    async def up(event: UserRegistered) -> None:
        published.append(event)

    with pytest.raises(ServiceError) as err:
        await links.verify_email(VerifyEmail(token=token), replace(auth.deps, on_registered=down))
    assert err.value.code == codes.UNAVAILABLE
    assert not await auth.column("auth_users", "email_verified", pair.user.user_id)
    done = await links.verify_email(VerifyEmail(token=token), replace(auth.deps, on_registered=up))
    assert done.user_id == pair.user.user_id
    assert [e.user_id for e in published] == [pair.user.user_id]
    assert await auth.column("auth_users", "email_verified", pair.user.user_id)
