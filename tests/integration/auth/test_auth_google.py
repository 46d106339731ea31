"""Google sign-in with ID tokens the tests sign themselves (their own RSA key and JWKS)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.rsa import generate_private_key

from kalaro.proto import errors as codes
from kalaro.proto import subjects
from kalaro.proto.auth import EmailVerified, GoogleSignIn, SignIn, TokenPair, VerifyEmail
from tests.integration.auth.harness import PASSWORD, AuthHarness


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


async def _google(auth: AuthHarness, token: str) -> TokenPair:
    return await auth.call(
        subjects.AUTH_GOOGLE_SIGN_IN, GoogleSignIn(id_token=token, address="10.2.0.1"), TokenPair
    )


async def _refused(auth: AuthHarness, token: str) -> tuple[str, str]:
    err = await auth.refused(subjects.AUTH_GOOGLE_SIGN_IN, GoogleSignIn(id_token=token), TokenPair)
    return err.code, err.message


async def test_valid_token_creates_then_signs_in_the_same_account(auth: AuthHarness) -> None:
    email, sub = auth.email("google"), f"g-{auth.unique}"
    token = auth.google.id_token(sub=sub, email=email.upper(), now=auth.clock())
    first = await _google(auth, token)
    assert first.user.email == email
    assert first.user.display_name == "Juan dela Cruz"
    assert first.user.google_linked
    assert first.user.roles == ("player",)
    assert await auth.column("auth_users", "password_hash", first.user.user_id) is None
    # Same Google account, even with a changed email, is the same KaLaro account.
    later = auth.google.id_token(sub=sub, email=auth.email("renamed"), now=auth.clock())
    assert (await _google(auth, later)).user.user_id == first.user.user_id
    # A Google-only account has no password to sign in with.
    err = await auth.refused(
        subjects.AUTH_SIGN_IN, SignIn(email=email, password=PASSWORD), TokenPair
    )
    assert err.code == codes.INVALID_CREDENTIALS
    assert await auth.count("auth_users") == 1


async def test_verified_email_links_an_existing_password_account(auth: AuthHarness) -> None:
    email = auth.email()
    pair = await auth.sign_up(email)
    await auth.call(subjects.AUTH_VERIFY_EMAIL, VerifyEmail(token=auth.link(email)), EmailVerified)
    token = auth.google.id_token(sub=f"g-{auth.unique}", email=email, now=auth.clock())
    linked = await _google(auth, token)
    assert linked.user.user_id == pair.user.user_id
    assert linked.user.google_linked and linked.user.email_verified
    assert linked.user.display_name == "Juan"  # the account keeps its own name
    # The password still works too.
    assert (
        await auth.call(subjects.AUTH_SIGN_IN, SignIn(email=email, password=PASSWORD), TokenPair)
    ).user
    # Another Google account with the same email cannot take it over.
    other = auth.google.id_token(sub=f"other-{auth.unique}", email=email, now=auth.clock())
    assert (await _refused(auth, other))[0] == codes.CONFLICT


async def test_wrong_audience_issuer_expired_and_unverified(auth: AuthHarness) -> None:
    now = auth.clock()
    g = auth.google
    email, sub = auth.email("google"), f"g-{auth.unique}"
    code, message = await _refused(auth, g.id_token(sub=sub, email=email, now=now, aud="other"))
    assert (code, "audience" in message) == (codes.INVALID_TOKEN, True)
    code, message = await _refused(
        auth, g.id_token(sub=sub, email=email, now=now, iss="https://evil.example")
    )
    assert (code, "issuer" in message) == (codes.INVALID_TOKEN, True)
    code, _ = await _refused(auth, g.id_token(sub=sub, email=email, now=now - 7200))
    assert code == codes.TOKEN_EXPIRED
    for verified in (False, "false", None):
        code, message = await _refused(
            auth, g.id_token(sub=sub, email=email, now=now, email_verified=verified)
        )
        assert (code, "verified" in message) == (codes.INVALID_TOKEN, True)
    assert await auth.count("auth_users") == 0


async def test_bad_signature_unknown_key_and_wrong_algorithm(auth: AuthHarness) -> None:
    now = auth.clock()
    email, sub = auth.email("google"), f"g-{auth.unique}"
    impostor = generate_private_key(public_exponent=65537, key_size=2048)
    # Signed by another key but naming Google's kid: the signature fails.
    forged = auth.google.id_token(sub=sub, email=email, now=now, key=impostor)
    code, message = await _refused(auth, forged)
    assert (code, "signature" in message) == (codes.INVALID_TOKEN, True)
    # Signed by a key the JWKS does not have.
    stranger = auth.google.id_token(sub=sub, email=email, now=now, key=impostor, kid="nope")
    code, message = await _refused(auth, stranger)
    assert (code, "unknown key" in message) == (codes.INVALID_TOKEN, True)
    # HS256 keyed with the public JWK, and alg none: refused before any key is used.
    # (PyJWT will not mint these, so they are assembled by hand.)
    claims = jwt.decode(forged, options={"verify_signature": False})
    body = _b64(json.dumps(claims).encode())
    public_pem = auth.google.key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    signing_input = f"{_b64(json.dumps({'alg': 'HS256', 'kid': auth.google.kid}).encode())}.{body}"
    mac = hmac.new(public_pem, signing_input.encode(), hashlib.sha256).digest()
    code, message = await _refused(auth, f"{signing_input}.{_b64(mac)}")
    assert (code, "not allowed" in message) == (codes.INVALID_TOKEN, True)
    header = _b64(json.dumps({"alg": "none", "kid": auth.google.kid}).encode())
    code, message = await _refused(auth, f"{header}.{body}.")
    assert (code, "not allowed" in message) == (codes.INVALID_TOKEN, True)
    assert (await _refused(auth, "not-a-token"))[0] == codes.INVALID_TOKEN
    assert await auth.count("auth_users") == 0
