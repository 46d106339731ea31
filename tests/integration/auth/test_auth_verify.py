"""Verified emails: sign-up mails a single-use link; Google takes unverified accounts over."""

from __future__ import annotations

import sqlalchemy as sa

from kalaro.bus.redislink import RedisLink
from kalaro.proto import errors as codes
from kalaro.proto import subjects
from kalaro.proto.auth import (
    EmailVerified,
    GetProfile,
    GoogleSignIn,
    Refresh,
    SignIn,
    TokenPair,
    UserProfile,
    VerifyEmail,
)
from kalaro.tokens import revoked_key
from services.auth.schema import refresh_tokens
from tests.integration.auth.harness import PASSWORD, AuthHarness


async def _verify(auth: AuthHarness, token: str) -> EmailVerified:
    return await auth.call(subjects.AUTH_VERIFY_EMAIL, VerifyEmail(token=token), EmailVerified)


async def _profile(auth: AuthHarness, user_id: str) -> UserProfile:
    return await auth.call(subjects.AUTH_PROFILE, GetProfile(user_id=user_id), UserProfile)


async def test_a_new_account_is_unverified_until_its_mailed_link_is_followed(
    auth: AuthHarness,
) -> None:
    email = auth.email()
    pair = await auth.sign_up(email)  # unverified accounts may sign in and play
    assert not pair.user.email_verified
    assert not await auth.column("auth_users", "email_verified", pair.user.user_id)
    [mail] = auth.mails(email)
    assert mail["Subject"] == "Confirm your KaLaro email address"
    body = mail.get_content()
    assert f"http://{auth.settings.http_host}:{auth.settings.http_port}/#/verify?token=" in body
    token = auth.link(email)
    # Stored hashed: the token itself is nowhere in the database.
    async with auth.deps.engine.connect() as conn:
        rows = (await conn.exec_driver_sql("SELECT * FROM auth_email_tokens")).all()
    assert len(rows) == 1 and token not in repr(rows)

    done = await _verify(auth, token)
    assert (done.user_id, done.email, done.email_verified) == (pair.user.user_id, email, True)
    assert (await _profile(auth, pair.user.user_id)).email_verified
    # Single use.
    again = await auth.refused(subjects.AUTH_VERIFY_EMAIL, VerifyEmail(token=token), EmailVerified)
    assert again.code == codes.LINK_USED and "already used" in again.message


async def test_garbage_and_expired_links_are_refused(auth: AuthHarness) -> None:
    for garbage in ("", "x", "not-a-real-token-" * 3, "y" * 600):
        err = await auth.refused(
            subjects.AUTH_VERIFY_EMAIL, VerifyEmail(token=garbage), EmailVerified
        )
        assert err.code == codes.INVALID_TOKEN, garbage
    email = auth.email()
    pair = await auth.sign_up(email)
    token = auth.link(email)
    auth.clock.offset += auth.settings.verify_token_hours * 3600 + 1
    err = await auth.refused(subjects.AUTH_VERIFY_EMAIL, VerifyEmail(token=token), EmailVerified)
    assert err.code == codes.TOKEN_EXPIRED and "expired" in err.message
    assert not await auth.column("auth_users", "email_verified", pair.user.user_id)


async def test_google_owner_takes_over_an_unverified_password_account(
    auth: AuthHarness, redis: RedisLink
) -> None:
    email = auth.email("victim")
    squatter = await auth.sign_up(email, name="Squatter")
    token = auth.google.id_token(sub=f"g-{auth.unique}", email=email, now=auth.clock())
    owner = await auth.call(subjects.AUTH_GOOGLE_SIGN_IN, GoogleSignIn(id_token=token), TokenPair)
    assert owner.user.user_id == squatter.user.user_id  # the address, and its account
    assert owner.user.google_linked and owner.user.email_verified
    assert owner.user.display_name == "Juan dela Cruz"  # the owner's name, not the squatter's
    assert await auth.column("auth_users", "password_hash", owner.user.user_id) is None
    # The squatter's password no longer works...
    err = await auth.refused(
        subjects.AUTH_SIGN_IN, SignIn(email=email, password=PASSWORD), TokenPair
    )
    assert err.code == codes.INVALID_CREDENTIALS
    # ...nor their refresh token, and their session's access tokens are revoked at once.
    err = await auth.refused(
        subjects.AUTH_REFRESH, Refresh(refresh_token=squatter.refresh_token), TokenPair
    )
    assert err.code == codes.INVALID_TOKEN
    async with auth.deps.engine.connect() as conn:
        families = (
            (
                await conn.execute(
                    sa.select(refresh_tokens.c.family_id)
                    .where(
                        refresh_tokens.c.user_id == squatter.user.user_id,
                        refresh_tokens.c.revoked_at.is_not(None),
                    )
                    .distinct()
                )
            )
            .scalars()
            .all()
        )
    assert families
    for family in families:
        assert await redis.exists(revoked_key(family)) == 1
    # The link mailed at sign-up can no longer verify anything for the squatter.
    err = await auth.refused(
        subjects.AUTH_VERIFY_EMAIL, VerifyEmail(token=auth.link(email)), EmailVerified
    )
    assert err.code == codes.LINK_USED
    # The owner's own session works.
    assert (
        await auth.call(
            subjects.AUTH_REFRESH, Refresh(refresh_token=owner.refresh_token), TokenPair
        )
    ).user
