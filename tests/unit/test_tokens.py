"""Access-token issue and verification: every way a forged or stale token must fail."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import stat
import time
from collections.abc import Mapping
from pathlib import Path

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.asymmetric.rsa import generate_private_key

from kalaro.proto import errors as codes
from kalaro.tokens import (
    LEEWAY_SECONDS,
    AccessClaims,
    TokenError,
    issue_access_token,
    key_id,
    load_or_create_private_key,
    public_jwks,
    thumbprint,
    verify_access_token,
)

ISSUER = "kalaro-test"
AUDIENCE = "kalaro-clients-test"
NOW = 1_800_000_000.0


@pytest.fixture(scope="module")
def key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()


@pytest.fixture(scope="module")
def jwks(key: Ed25519PrivateKey) -> list[dict[str, str]]:
    return public_jwks(key)


def _issue(key: Ed25519PrivateKey, **overrides: object) -> str:
    args: dict[str, object] = {
        "key": key,
        "kid": key_id(key),
        "user_id": "u1",
        "roles": ["player", "host"],
        "name": "Lola Nena",
        "issuer": ISSUER,
        "audience": AUDIENCE,
        "ttl_seconds": 900,
        "now": NOW,
    }
    args.update(overrides)
    return issue_access_token(**args)  # type: ignore[arg-type]


def _verify(token: str, jwks: list[dict[str, str]], now: float = NOW + 1) -> AccessClaims:
    return verify_access_token(token, jwks, ISSUER, AUDIENCE, now=now)


def _refused(token: str, jwks: list[dict[str, str]], now: float = NOW + 1) -> TokenError:
    with pytest.raises(TokenError) as err:
        _verify(token, jwks, now)
    return err.value


def _b64(data: Mapping[str, object]) -> str:
    raw = json.dumps(data, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _payload(token: str) -> dict[str, object]:
    part = token.split(".")[1]
    decoded: dict[str, object] = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
    return decoded


def test_round_trip(key: Ed25519PrivateKey, jwks: list[dict[str, str]]) -> None:
    claims = _verify(_issue(key), jwks)
    assert claims == AccessClaims(
        user_id="u1", roles=("player", "host"), name="Lola Nena", exp=int(NOW) + 900
    )
    payload = _payload(_issue(key))
    assert payload["typ"] == "access"
    assert {"iss", "aud", "sub", "iat", "nbf", "exp", "jti"} <= payload.keys()


def test_expired_token_is_token_expired(key: Ed25519PrivateKey, jwks: list[dict[str, str]]) -> None:
    token = _issue(key, ttl_seconds=60)
    # Inside the leeway it still passes; at the leeway's end it is expired.
    assert _verify(token, jwks, now=NOW + 60 + LEEWAY_SECONDS - 1).user_id == "u1"
    assert _refused(token, jwks, now=NOW + 60 + LEEWAY_SECONDS).code == codes.TOKEN_EXPIRED
    assert _refused(token, jwks, now=NOW + 3600).code == codes.TOKEN_EXPIRED


def test_token_from_the_future_is_refused(
    key: Ed25519PrivateKey, jwks: list[dict[str, str]]
) -> None:
    err = _refused(_issue(key, now=NOW + 600), jwks, now=NOW)
    assert err.code == codes.INVALID_TOKEN


def test_tampered_payload(key: Ed25519PrivateKey, jwks: list[dict[str, str]]) -> None:
    header, _, signature = _issue(key).split(".")
    payload = _payload(_issue(key))
    payload["roles"] = ["player", "host", "admin"]
    err = _refused(f"{header}.{_b64(payload)}.{signature}", jwks)
    assert err.code == codes.INVALID_TOKEN
    assert "signature" in err.message


def test_tampered_signature(key: Ed25519PrivateKey, jwks: list[dict[str, str]]) -> None:
    header, payload, signature = _issue(key).split(".")
    flipped = ("A" if signature[0] != "A" else "B") + signature[1:]
    assert _refused(f"{header}.{payload}.{flipped}", jwks).code == codes.INVALID_TOKEN


def test_alg_none_is_refused(key: Ed25519PrivateKey, jwks: list[dict[str, str]]) -> None:
    payload = _payload(_issue(key))
    for alg in ("none", "None", "NONE"):
        token = f"{_b64({'alg': alg, 'typ': 'JWT', 'kid': key_id(key)})}.{_b64(payload)}."
        err = _refused(token, jwks)
        assert err.code == codes.INVALID_TOKEN
        assert "not allowed" in err.message


def test_hs256_keyed_with_the_public_key_is_refused(
    key: Ed25519PrivateKey, jwks: list[dict[str, str]]
) -> None:
    # The classic confusion attack: sign with HMAC using the (public) verification key.
    payload = _payload(_issue(key))
    header = {"alg": "HS256", "typ": "JWT", "kid": key_id(key)}
    for secret in (
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        ),
        jwks[0]["x"].encode(),
    ):
        signing_input = f"{_b64(header)}.{_b64(payload)}"
        mac = hmac.new(secret, signing_input.encode(), hashlib.sha256).digest()
        token = f"{signing_input}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"
        err = _refused(token, jwks)
        assert err.code == codes.INVALID_TOKEN
        assert "not allowed" in err.message


def test_rs256_token_is_refused(key: Ed25519PrivateKey, jwks: list[dict[str, str]]) -> None:
    rsa = generate_private_key(public_exponent=65537, key_size=2048)
    token = jwt.encode(_payload(_issue(key)), rsa, algorithm="RS256", headers={"kid": key_id(key)})
    assert _refused(token, jwks).code == codes.INVALID_TOKEN


def test_wrong_audience_and_issuer(key: Ed25519PrivateKey, jwks: list[dict[str, str]]) -> None:
    err = _refused(_issue(key, audience="someone-else"), jwks)
    assert (err.code, "audience" in err.message) == (codes.INVALID_TOKEN, True)
    err = _refused(_issue(key, issuer="https://evil.example"), jwks)
    assert (err.code, "issuer" in err.message) == (codes.INVALID_TOKEN, True)


def test_refresh_typed_token_is_not_an_access_token(
    key: Ed25519PrivateKey, jwks: list[dict[str, str]]
) -> None:
    payload = _payload(_issue(key))
    for typ in ("refresh", "id", None):
        claims = dict(payload)
        if typ is None:
            del claims["typ"]
        else:
            claims["typ"] = typ
        token = jwt.encode(claims, key, algorithm="EdDSA", headers={"kid": key_id(key)})
        assert _refused(token, jwks).code == codes.INVALID_TOKEN


def test_missing_required_claims(key: Ed25519PrivateKey, jwks: list[dict[str, str]]) -> None:
    for claim in ("exp", "iat", "sub"):
        claims = _payload(_issue(key))
        del claims[claim]
        token = jwt.encode(claims, key, algorithm="EdDSA", headers={"kid": key_id(key)})
        err = _refused(token, jwks)
        assert (err.code, claim in err.message) == (codes.INVALID_TOKEN, True)


def test_unknown_kid_and_other_key(key: Ed25519PrivateKey, jwks: list[dict[str, str]]) -> None:
    other = Ed25519PrivateKey.generate()
    # Signed by another key under its own kid: we do not know that kid. The gateway
    # refetches keys when the message names a kid, so the message must say so.
    err = _refused(_issue(other, kid=key_id(other)), jwks)
    assert (err.code, "kid" in err.message) == (codes.INVALID_TOKEN, True)
    # Signed by another key but claiming our kid: the signature fails.
    err = _refused(_issue(other, kid=key_id(key)), jwks)
    assert (err.code, "signature" in err.message) == (codes.INVALID_TOKEN, True)
    # No kid at all.
    token = jwt.encode(_payload(_issue(key)), key, algorithm="EdDSA")
    assert _refused(token, jwks).code == codes.INVALID_TOKEN


def test_garbage_is_invalid(jwks: list[dict[str, str]]) -> None:
    for token in ("", "abc", "a.b.c", "x" * 10_000, "....."):
        assert _refused(token, jwks).code == codes.INVALID_TOKEN


def test_jwks_thumbprint_matches_rfc_8037_example() -> None:
    # RFC 8037 appendix A.3: the thumbprint of the example Ed25519 public key.
    jwk = {"kty": "OKP", "crv": "Ed25519", "x": "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}
    assert thumbprint(jwk) == "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k"


def test_public_jwks_shape(key: Ed25519PrivateKey, jwks: list[dict[str, str]]) -> None:
    (jwk,) = jwks
    assert jwk["kty"] == "OKP" and jwk["crv"] == "Ed25519" and jwk["alg"] == "EdDSA"
    assert jwk["kid"] == thumbprint(jwk) == key_id(key)
    assert "d" not in jwk  # never the private part
    assert all(isinstance(v, str) for v in jwk.values())


def test_key_file_is_created_private_and_reloaded(tmp_path: Path) -> None:
    path = tmp_path / "keys" / "jwt.pem"
    first = load_or_create_private_key(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert list(path.parent.iterdir()) == [path]  # no temp file left behind
    second = load_or_create_private_key(path)
    assert key_id(first) == key_id(second)
    token = _issue(first, now=time.time())
    assert verify_access_token(token, public_jwks(second), ISSUER, AUDIENCE).user_id == "u1"


def test_key_file_of_the_wrong_type_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "rsa.pem"
    rsa = generate_private_key(public_exponent=65537, key_size=2048)
    path.write_bytes(
        rsa.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    with pytest.raises(ValueError, match="Ed25519"):
        load_or_create_private_key(path)


def test_the_email_verified_claim(key: Ed25519PrivateKey, jwks: list[dict[str, str]]) -> None:
    assert _payload(_issue(key, email_verified=False))["ev"] is False
    assert _verify(_issue(key, email_verified=False), jwks).email_verified is False
    assert _verify(_issue(key), jwks).email_verified is True
