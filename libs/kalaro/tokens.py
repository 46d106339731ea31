"""Access tokens: Ed25519 keys and JWTs, shared by auth (signing) and the gateway (verifying).

The auth service holds the only private key and publishes the public half as a JWKS
(``auth.public_keys``); the gateway verifies every request locally against it. The
verifier accepts exactly one algorithm, ``EdDSA``, and picks the key by ``kid``: a
token cannot choose its own algorithm (``alg: none``, or HS256 keyed with the public
key bytes) or its own key. It also checks issuer, audience, expiry and that the token
is an *access* token, so a refresh token or someone's Google ID token never passes.

Refresh tokens are not JWTs: they are opaque random strings stored hashed by the auth
service, so revoking one is a row update rather than a deny list.

Access tokens carry their session in ``sid`` (the refresh-token family they came from).
Signing out, or reuse of a refresh token, puts the session on a short-lived denylist in
Redis (:func:`revoked_key`, kept as long as an access token lives) that the gateway
checks, so the session's access tokens stop working at once rather than at expiry.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import secrets
import time
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any

import jwt
import msgspec
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from kalaro.proto import errors as codes

ALGORITHM = "EdDSA"
ALLOWED_ALGORITHMS: tuple[str, ...] = (ALGORITHM,)
ACCESS_TYPE = "access"
# Clock skew tolerated between the auth service and a verifier; kept small because
# access tokens live only minutes.
LEEWAY_SECONDS = 10
# Nothing legitimate comes close; refusing early keeps junk away from the parser.
MAX_TOKEN_LENGTH = 8192

_REQUIRED_CLAIMS = ["iss", "aud", "sub", "iat", "exp", "typ"]


class TokenError(Exception):
    """A token was refused; ``code`` is ``token_expired`` or ``invalid_token``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


def invalid(message: str) -> TokenError:
    return TokenError(codes.INVALID_TOKEN, message)


class AccessClaims(msgspec.Struct, frozen=True):
    """What a verified access token says about its bearer."""

    user_id: str
    roles: tuple[str, ...]
    name: str
    exp: int
    session: str = ""  # the ``sid`` claim; "" in tokens from before it existed
    # The ``ev`` claim: the bearer's email was verified when the token was issued (an
    # unverified account sits at no table with a bet). Tokens from before the claim
    # existed count as verified: they expire within minutes of the upgrade.
    email_verified: bool = True


REVOKED_PREFIX = "kalaro:auth:revoked:"


def revoked_key(session: str) -> str:
    """The Redis key that exists while ``session``'s access tokens are revoked."""
    return f"{REVOKED_PREFIX}{session}"


def revocation_seconds(access_token_seconds: int) -> int:
    """How long a revocation must be kept: as long as any access token can pass."""
    return access_token_seconds + LEEWAY_SECONDS


# --- keys ----------------------------------------------------------------------------


def load_or_create_private_key(path: str | Path) -> Ed25519PrivateKey:
    """The signing key in ``path`` (PKCS#8 PEM), created there with mode 0600 if missing.

    Creation is atomic (write a private temp file, then hard-link it into place) so
    replicas starting together on one host end up sharing one key, never a torn file.
    """
    target = Path(path)
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        pem = Ed25519PrivateKey.generate().private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        temp = target.with_name(f".{target.name}.{secrets.token_hex(6)}.tmp")
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(pem)
            # Another process may win the race: then we use its key.
            with contextlib.suppress(FileExistsError):
                os.link(temp, target)
        finally:
            temp.unlink(missing_ok=True)
    key = serialization.load_pem_private_key(target.read_bytes(), password=None)
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError(f"{target} does not hold an Ed25519 private key")
    return key


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _raw_public(public: Ed25519PublicKey) -> bytes:
    return public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def thumbprint(jwk: Mapping[str, str]) -> str:
    """RFC 7638 thumbprint of an OKP key: SHA-256 over its required members, sorted."""
    required = {"crv": jwk["crv"], "kty": jwk["kty"], "x": jwk["x"]}
    canonical = json.dumps(required, separators=(",", ":"), sort_keys=True).encode()
    return _b64url(hashlib.sha256(canonical).digest())


def public_jwks(private_key: Ed25519PrivateKey) -> list[dict[str, str]]:
    """The JWKS ``keys`` list that verifies tokens signed by ``private_key``."""
    jwk = {"kty": "OKP", "crv": "Ed25519", "x": _b64url(_raw_public(private_key.public_key()))}
    jwk.update(kid=thumbprint(jwk), alg=ALGORITHM, use="sig")
    return [jwk]


def key_id(private_key: Ed25519PrivateKey) -> str:
    """The ``kid`` that :func:`public_jwks` publishes for ``private_key``."""
    return public_jwks(private_key)[0]["kid"]


@lru_cache(maxsize=64)
def _public_key(x: str) -> Ed25519PublicKey:
    # Cached: the gateway verifies every request against the same handful of keys.
    raw = _b64url_decode(x)
    if len(raw) != 32:
        raise ValueError("an Ed25519 public key is 32 bytes")
    return Ed25519PublicKey.from_public_bytes(raw)


def _find_key(jwks: Iterable[Mapping[str, str]], kid: object) -> Ed25519PublicKey:
    if not isinstance(kid, str) or not kid:
        raise invalid("token has no kid (key id)")
    for jwk in jwks:
        if jwk.get("kid") != kid:
            continue
        if jwk.get("kty") != "OKP" or jwk.get("crv") != "Ed25519":
            raise invalid(f"kid {kid} is not an Ed25519 key")
        try:
            return _public_key(jwk.get("x", ""))
        except ValueError as exc:
            raise invalid(f"kid {kid} has a malformed public key") from exc
    raise invalid(f"unknown signing key: kid {kid}")


# --- access tokens ---------------------------------------------------------------------


def issue_access_token(
    key: Ed25519PrivateKey,
    kid: str,
    user_id: str,
    roles: Sequence[str],
    name: str,
    issuer: str,
    audience: str,
    ttl_seconds: int,
    now: float | None = None,
    session: str = "",
    email_verified: bool = True,
) -> str:
    """A signed access JWT for ``user_id``, valid for ``ttl_seconds`` from ``now``;
    ``session`` (the ``sid`` claim) is what signing out revokes; ``email_verified`` is
    the ``ev`` claim."""
    issued = int(time.time() if now is None else now)
    claims: dict[str, Any] = {
        "iss": issuer,
        "aud": audience,
        "sub": user_id,
        "iat": issued,
        "nbf": issued,
        "exp": issued + ttl_seconds,
        "jti": secrets.token_urlsafe(16),
        "typ": ACCESS_TYPE,
        "roles": list(roles),
        "name": name,
        "ev": email_verified,
    }
    if session:
        claims["sid"] = session
    return jwt.encode(claims, key, algorithm=ALGORITHM, headers={"kid": kid, "typ": "JWT"})


def _number(claims: Mapping[str, Any], name: str) -> float:
    value = claims.get(name)
    # bool is an int subclass; a JSON true is not a timestamp.
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise invalid(f"claim {name} must be a number")
    return float(value)


def check_times(claims: Mapping[str, Any], now: float | None, leeway: float) -> None:
    """Expiry, not-before and issued-at against ``now`` (PyJWT cannot take a clock)."""
    current = time.time() if now is None else now
    exp = _number(claims, "exp")
    if current >= exp + leeway:
        raise TokenError(codes.TOKEN_EXPIRED, "token has expired")
    if "nbf" in claims and current + leeway < _number(claims, "nbf"):
        raise invalid("token is not valid yet")
    if current + leeway < _number(claims, "iat"):
        raise invalid("token was issued in the future")


def decode_verified(
    token: str,
    key: Any,
    *,
    algorithm: str,
    issuer: str | Sequence[str],
    audience: str,
    required: list[str],
) -> dict[str, Any]:
    """Signature, issuer and audience checks with PyJWT; times are the caller's job.

    Every PyJWT failure becomes a :class:`TokenError` with a message a client can act on.
    """
    try:
        claims: dict[str, Any] = jwt.decode(
            token,
            key,
            algorithms=[algorithm],
            issuer=issuer,
            audience=audience,
            options={
                "require": required,
                "strict_aud": True,
                "verify_exp": False,
                "verify_nbf": False,
                "verify_iat": False,
            },
        )
    except jwt.InvalidSignatureError as exc:
        raise invalid("token signature does not verify") from exc
    except jwt.InvalidAudienceError as exc:
        raise invalid("token is for another audience") from exc
    except jwt.InvalidIssuerError as exc:
        raise invalid("token is from another issuer") from exc
    except jwt.MissingRequiredClaimError as exc:
        raise invalid(f"token lacks the {exc.claim} claim") from exc
    except jwt.InvalidAlgorithmError as exc:
        raise invalid("token algorithm is not allowed") from exc
    except jwt.PyJWTError as exc:
        raise invalid(f"token is malformed: {exc}") from exc
    return claims


def unverified_header(token: object, allowed: Sequence[str]) -> dict[str, Any]:
    """The JOSE header, after checking size and that ``alg`` is on the allowlist."""
    if not isinstance(token, str) or not token or len(token) > MAX_TOKEN_LENGTH:
        raise invalid("token is missing or too long")
    try:
        header: dict[str, Any] = jwt.get_unverified_header(token)
    except jwt.PyJWTError as exc:
        raise invalid("token is malformed") from exc
    if header.get("alg") not in allowed:
        raise invalid(f"token algorithm {header.get('alg')!r} is not allowed")
    return header


def verify_access_token(
    token: str,
    jwks: Iterable[Mapping[str, str]],
    issuer: str,
    audience: str,
    now: float | None = None,
) -> AccessClaims:
    """Verify an access token against the published keys; raise :class:`TokenError`.

    Checks, in order: size and algorithm (exactly ``EdDSA``), key by ``kid``,
    signature, issuer, audience, required claims, expiry (with a small leeway),
    ``typ == "access"``, and the shape of the claims the gateway relies on.
    """
    header = unverified_header(token, ALLOWED_ALGORITHMS)
    key = _find_key(jwks, header.get("kid"))
    claims = decode_verified(
        token, key, algorithm=ALGORITHM, issuer=issuer, audience=audience, required=_REQUIRED_CLAIMS
    )
    check_times(claims, now, LEEWAY_SECONDS)
    if claims.get("typ") != ACCESS_TYPE:
        raise invalid("not an access token")
    sub, roles, name = claims.get("sub"), claims.get("roles", []), claims.get("name", "")
    if not isinstance(sub, str) or not sub:
        raise invalid("token has no subject")
    if not isinstance(roles, list) or not all(isinstance(r, str) for r in roles):
        raise invalid("token roles are malformed")
    if not isinstance(name, str):
        raise invalid("token name is malformed")
    session = claims.get("sid", "")
    if not isinstance(session, str):
        raise invalid("token session is malformed")
    email_verified = claims.get("ev", True)
    if not isinstance(email_verified, bool):
        raise invalid("token email_verified is malformed")
    return AccessClaims(
        user_id=sub,
        roles=tuple(roles),
        name=name,
        exp=int(claims["exp"]),
        session=session,
        email_verified=email_verified,
    )
