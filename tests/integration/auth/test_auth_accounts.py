"""Sign-up, sign-in, profile, refresh rotation and reuse, sign-out, malformed input."""

from __future__ import annotations

import asyncio

import argon2
import msgspec
import pytest
import sqlalchemy as sa
from nats.js.api import ConsumerConfig, DeliverPolicy

from kalaro.bus import RemoteError
from kalaro.bus.codec import decode
from kalaro.proto import errors as codes
from kalaro.proto import subjects
from kalaro.proto.auth import (
    EmailVerified,
    GetProfile,
    GetPublicKeys,
    PublicKeys,
    Refresh,
    SignedOut,
    SignIn,
    SignOut,
    SignUp,
    SignUpAccepted,
    TokenPair,
    UserProfile,
    UserRegistered,
    VerifyEmail,
)
from kalaro.tokens import LEEWAY_SECONDS, TokenError, verify_access_token
from services.auth.schema import metadata
from tests.integration.auth.harness import PASSWORD, AuthHarness


async def _keys(auth: AuthHarness) -> PublicKeys:
    return await auth.call(subjects.AUTH_PUBLIC_KEYS, GetPublicKeys(), PublicKeys)


async def test_migrations_match_the_table_definitions(auth: AuthHarness) -> None:
    async with auth.deps.engine.connect() as conn:
        found = await conn.run_sync(
            lambda sync: {
                table: {c["name"] for c in sa.inspect(sync).get_columns(table)}
                for table in metadata.tables
            }
        )
    assert found == {name: set(t.columns.keys()) for name, t in metadata.tables.items()}


async def test_sign_up_sign_in_profile_refresh_and_reuse(auth: AuthHarness) -> None:
    email = auth.email()
    signed_up = await auth.sign_up(email, name="  Juan   dela Cruz ")
    user = signed_up.user
    assert user.email == email
    assert user.display_name == "Juan dela Cruz"
    assert user.roles == ("player",)
    assert not user.google_linked

    # The gateway's view: fetch the published keys, verify locally.
    keys = await _keys(auth)
    assert keys.algorithms == ("EdDSA",)
    claims = verify_access_token(
        signed_up.access_token, list(keys.keys), keys.issuer, keys.audience
    )
    assert (claims.user_id, claims.roles, claims.name) == (
        user.user_id,
        ("player",),
        user.display_name,
    )
    assert signed_up.expires_in == 300

    # Sign in with different capitalisation of the same email.
    signed_in = await auth.call(
        subjects.AUTH_SIGN_IN,
        SignIn(email=email.upper(), password=PASSWORD, address="10.0.0.1"),
        TokenPair,
    )
    assert signed_in.user.user_id == user.user_id
    profile = await auth.call(subjects.AUTH_PROFILE, GetProfile(user_id=user.user_id), UserProfile)
    assert profile == user

    # Refresh rotates: a new refresh token and a fresh access token.
    first = signed_in.refresh_token
    rotated = await auth.call(subjects.AUTH_REFRESH, Refresh(refresh_token=first), TokenPair)
    assert rotated.refresh_token != first
    assert rotated.user.user_id == user.user_id
    verify_access_token(rotated.access_token, list(keys.keys), keys.issuer, keys.audience)
    again = await auth.call(
        subjects.AUTH_REFRESH, Refresh(refresh_token=rotated.refresh_token), TokenPair
    )

    # Presenting the first token again is reuse: the whole family dies...
    err = await auth.refused(subjects.AUTH_REFRESH, Refresh(refresh_token=first), TokenPair)
    assert err.code == codes.REFRESH_REUSED
    err = await auth.refused(
        subjects.AUTH_REFRESH, Refresh(refresh_token=again.refresh_token), TokenPair
    )
    assert err.code == codes.INVALID_TOKEN
    # ...but not the other sign-in's family (sign-up started its own).
    other = await auth.call(
        subjects.AUTH_REFRESH, Refresh(refresh_token=signed_up.refresh_token), TokenPair
    )
    assert other.user.user_id == user.user_id

    # Only hashes are stored.
    async with auth.deps.engine.connect() as conn:
        stored = set(await conn.scalars(sa.text("SELECT token_hash FROM auth_refresh_tokens")))
    assert first not in stored and len(next(iter(stored))) == 64


async def test_concurrent_refreshes_let_exactly_one_through(auth: AuthHarness) -> None:
    pair = await auth.sign_up()
    results = await asyncio.gather(
        *(
            auth.call(subjects.AUTH_REFRESH, Refresh(refresh_token=pair.refresh_token), TokenPair)
            for _ in range(5)
        ),
        return_exceptions=True,
    )
    winners = [r for r in results if isinstance(r, TokenPair)]
    assert len(winners) == 1
    assert {r.code for r in results if isinstance(r, RemoteError)} == {codes.REFRESH_REUSED}
    # The racing reuse revoked the family, the winner's new token included.
    err = await auth.refused(
        subjects.AUTH_REFRESH, Refresh(refresh_token=winners[0].refresh_token), TokenPair
    )
    assert err.code == codes.INVALID_TOKEN


async def test_expired_refresh_and_access_tokens(auth: AuthHarness) -> None:
    pair = await auth.sign_up()
    keys = await _keys(auth)
    with pytest.raises(TokenError) as expired:
        verify_access_token(
            pair.access_token,
            list(keys.keys),
            keys.issuer,
            keys.audience,
            now=auth.clock() + 300 + LEEWAY_SECONDS + 1,
        )
    assert expired.value.code == codes.TOKEN_EXPIRED
    auth.clock.offset = 31 * 86_400
    err = await auth.refused(
        subjects.AUTH_REFRESH, Refresh(refresh_token=pair.refresh_token), TokenPair
    )
    assert err.code == codes.TOKEN_EXPIRED


async def test_sign_out_revokes_the_family_only(auth: AuthHarness) -> None:
    email = auth.email()
    one = await auth.sign_up(email)
    two = await auth.call(subjects.AUTH_SIGN_IN, SignIn(email=email, password=PASSWORD), TokenPair)
    rotated = await auth.call(
        subjects.AUTH_REFRESH, Refresh(refresh_token=one.refresh_token), TokenPair
    )
    # Signing out with any token of the family ends it, even an already-rotated one.
    out = await auth.call(
        subjects.AUTH_SIGN_OUT, SignOut(refresh_token=one.refresh_token), SignedOut
    )
    assert out.signed_out
    err = await auth.refused(
        subjects.AUTH_REFRESH, Refresh(refresh_token=rotated.refresh_token), TokenPair
    )
    assert err.code == codes.INVALID_TOKEN
    assert (
        await auth.call(subjects.AUTH_REFRESH, Refresh(refresh_token=two.refresh_token), TokenPair)
    ).user
    unknown = await auth.call(subjects.AUTH_SIGN_OUT, SignOut(refresh_token="x" * 43), SignedOut)
    assert not unknown.signed_out


async def test_unknown_refresh_token_and_profile(auth: AuthHarness) -> None:
    for token in ("", "short", "y" * 43):
        err = await auth.refused(subjects.AUTH_REFRESH, Refresh(refresh_token=token), TokenPair)
        assert err.code == codes.INVALID_TOKEN
    err = await auth.refused(subjects.AUTH_PROFILE, GetProfile(user_id="no-such-user"), UserProfile)
    assert err.code == codes.NOT_FOUND


@pytest.mark.parametrize(
    ("password", "words"),
    [
        ("Short1!", "at least 10"),
        ("alllowercaseletters", "two kinds"),
        ("1234567890123", "two kinds"),
        ("aAaAaAaAaAaA", "different characters"),
        ("Password2024!", "too common"),
        ("x" * 100 + "Y" * 29, "at most 128"),
    ],
)
async def test_weak_passwords_are_refused_with_a_reason(
    auth: AuthHarness, password: str, words: str
) -> None:
    err = await auth.refused(
        subjects.AUTH_SIGN_UP,
        SignUp(email=auth.email(), password=password, display_name="Juan"),
        TokenPair,
    )
    assert err.code == codes.WEAK_PASSWORD
    assert words in err.message
    assert await auth.count("auth_users") == 0


async def test_email_as_password_is_refused(auth: AuthHarness) -> None:
    email = auth.email()
    err = await auth.refused(
        subjects.AUTH_SIGN_UP, SignUp(email=email, password=email, display_name="Juan"), TokenPair
    )
    assert (err.code, "email" in err.message) == (codes.WEAK_PASSWORD, True)


async def test_password_hash_is_argon2id_at_or_above_the_floor(auth: AuthHarness) -> None:
    pair = await auth.sign_up()
    stored = await auth.column("auth_users", "password_hash", pair.user.user_id)
    assert PASSWORD not in stored
    params = argon2.extract_parameters(stored)
    assert params.type is argon2.Type.ID
    assert params.memory_cost >= 19456
    assert params.time_cost >= 2
    assert params.parallelism >= 1


async def test_known_email_answers_like_a_new_one_and_changes_nothing(auth: AuthHarness) -> None:
    email = auth.email()
    pair = await auth.sign_up(email)
    fresh = await auth.call(
        subjects.AUTH_SIGN_UP,
        SignUp(email=auth.email(), password="Another-Pass-77", display_name="Other"),
        SignUpAccepted,
    )
    for variant in (email, email.upper(), f"  {email.title()} "):
        raw = await auth.nc.request(
            subjects.AUTH_SIGN_UP,
            msgspec.json.encode(
                SignUp(email=variant, password="Another-Pass-77", display_name="Other")
            ),
            timeout=5,
        )
        assert not (raw.headers or {}).get("Kalaro-Error")
        assert msgspec.json.decode(raw.data, type=SignUpAccepted) == fresh
    assert await auth.count("auth_users") == 2
    # The squatter's password does not open the account; the owner's still does.
    err = await auth.refused(
        subjects.AUTH_SIGN_IN, SignIn(email=email, password="Another-Pass-77"), TokenPair
    )
    assert err.code == codes.INVALID_CREDENTIALS
    again = await auth.call(
        subjects.AUTH_SIGN_IN, SignIn(email=email, password=PASSWORD), TokenPair
    )
    assert again.user.user_id == pair.user.user_id and again.user.display_name == "Juan"
    # The owner is told by mail; no second verification link is sent.
    mails = auth.mails(email)
    assert [m["Subject"] for m in mails] == [
        "Confirm your KaLaro email address",
        *["You already have a KaLaro account"] * 3,
    ]
    assert "verify?token=" not in mails[-1].get_content()


async def test_wrong_password_and_unknown_email_look_the_same(auth: AuthHarness) -> None:
    email = auth.email()
    await auth.sign_up(email)
    wrong = await auth.refused(
        subjects.AUTH_SIGN_IN,
        SignIn(email=email, password="Not-The-Password-1", address="10.0.0.2"),
        TokenPair,
    )
    unknown = await auth.refused(
        subjects.AUTH_SIGN_IN,
        SignIn(email=auth.email(), password=PASSWORD, address="10.0.0.3"),
        TokenPair,
    )
    assert (wrong.code, wrong.message) == (unknown.code, unknown.message)
    assert wrong.code == codes.INVALID_CREDENTIALS


async def test_malformed_bodies_get_bad_request_and_change_nothing(auth: AuthHarness) -> None:
    await auth.sign_up()
    users, tokens = await auth.count("auth_users"), await auth.count("auth_refresh_tokens")
    cases: list[tuple[str, bytes, str]] = [
        (subjects.AUTH_SIGN_UP, b"", "malformed"),
        (subjects.AUTH_SIGN_UP, b"not json", "malformed"),
        (subjects.AUTH_SIGN_UP, b"[1, 2, 3]", "malformed"),
        (subjects.AUTH_SIGN_UP, b'{"email": "a@example.com"}', "malformed"),
        (subjects.AUTH_SIGN_UP, b'{"email": 5, "password": "x", "display_name": "y"}', "malformed"),
        (
            subjects.AUTH_SIGN_UP,
            b'{"email": "no-at-sign", "password": "Kulay-Ube-42", "display_name": "J"}',
            "valid email",
        ),
        (
            subjects.AUTH_SIGN_UP,
            b'{"email": "j@example.com", "password": "Kulay-Ube-42", "display_name": "  "}',
            "display name",
        ),
        (
            subjects.AUTH_SIGN_UP,
            b'{"email": "j@example.com", "password": "Kulay-Ube-42", "display_name": "a\\u0000b"}',
            "control",
        ),
        (subjects.AUTH_SIGN_IN, b"{}", "malformed"),
        (subjects.AUTH_SIGN_IN, b'{"email": "x y@z", "password": "p"}', "valid email"),
        (subjects.AUTH_REFRESH, b'{"refresh_token": null}', "malformed"),
        (subjects.AUTH_GOOGLE_SIGN_IN, b'{"id_token": ["a"]}', "malformed"),
        (subjects.AUTH_DECIDE_APPROVAL, b'{"approval_id": "r", "admin_id": "a"}', "malformed"),
        (subjects.AUTH_LIST_APPROVALS, b'{"status": "maybe"}', "malformed"),
        (subjects.AUTH_LIST_APPROVALS, b'{"kind": "everything"}', "malformed"),
        (subjects.AUTH_LIST_APPROVALS, b'{"limit": 0}', "limit"),
        (subjects.AUTH_REQUEST_APPROVAL, b'{"user_id": "u", "kind": "credits"}', "amount"),
    ]
    for subject, body, words in cases:
        reply = await auth.nc.request(subject, body, timeout=5)
        assert reply.headers is not None, (subject, body)
        assert reply.headers.get("Kalaro-Error") == codes.BAD_REQUEST, (subject, body)
        assert words in reply.data.decode(), (subject, body, reply.data)
    assert await auth.count("auth_users") == users
    assert await auth.count("auth_refresh_tokens") == tokens


async def _registered(auth: AuthHarness, *user_ids: str) -> list[UserRegistered]:
    """The UserRegistered events on the EVENTS stream about ``user_ids``."""
    js = auth.nc.jetstream()
    sub = await js.pull_subscribe(
        subjects.USER_REGISTERED,
        stream=subjects.EVENTS_STREAM,
        config=ConsumerConfig(deliver_policy=DeliverPolicy.ALL),
    )
    seen: list[UserRegistered] = []
    while True:
        try:
            batch = await sub.fetch(256, timeout=0.5)
        except TimeoutError:  # nats-py raises several kinds; all mean "no more"
            break
        for msg in batch:
            seen.append(decode(msg.data, UserRegistered))
            await msg.ack()
    await sub.unsubscribe()
    return [e for e in seen if e.user_id in user_ids]


async def test_user_registered_is_published_once_when_the_email_is_verified(
    auth: AuthHarness,
) -> None:
    email = auth.email()
    pair = await auth.sign_up(email)
    await auth.call(subjects.AUTH_SIGN_IN, SignIn(email=email, password=PASSWORD), TokenPair)
    await auth.call(
        subjects.AUTH_SIGN_UP,
        SignUp(email=email, password=PASSWORD, display_name="Again"),
        SignUpAccepted,
    )
    second = await auth.sign_up()  # never verified
    ids = (pair.user.user_id, second.user.user_id)
    # Signing up pays no welcome grant: that waits for the verified email.
    assert await _registered(auth, *ids) == []
    token = auth.link(email)
    await auth.call(subjects.AUTH_VERIFY_EMAIL, VerifyEmail(token=token), EmailVerified)
    again = await auth.refused(subjects.AUTH_VERIFY_EMAIL, VerifyEmail(token=token), EmailVerified)
    assert again.code == codes.LINK_USED
    [event] = await _registered(auth, *ids)
    assert (event.user_id, event.email, event.display_name) == (pair.user.user_id, email, "Juan")
