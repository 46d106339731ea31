"""Verifying Google ID tokens ("Sign in with Google") without calling Google.

A token passes only if it is RS256, signed by a key in the configured JWKS (Google's
published signing keys, kept in ``settings.google_jwks_file``), issued by Google
(``iss``), for *our* client id (``aud``), unexpired, and for an account whose email
Google has verified. Linking to a KaLaro account is the caller's job (accounts.py).

Google rotates its keys; when a token names a key we do not have, the file is
re-read (at most once a minute) so an operator can refresh it without a restart.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec
from jwt.algorithms import RSAAlgorithm

from kalaro.tokens import (
    LEEWAY_SECONDS,
    check_times,
    decode_verified,
    invalid,
    unverified_header,
)

log = logging.getLogger("services.auth.google")

ALGORITHM = "RS256"
_RELOAD_SECONDS = 60.0


class GoogleIdentity(msgspec.Struct, frozen=True):
    sub: str
    email: str
    name: str


def _rsa_keys(jwks: Mapping[str, Any] | Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """``kid -> RSA public key`` for every usable RS256 signing key in a JWKS."""
    entries: Iterable[Any] = jwks.get("keys", []) if isinstance(jwks, Mapping) else jwks
    keys: dict[str, Any] = {}
    for jwk in entries:
        if not isinstance(jwk, Mapping) or jwk.get("kty") != "RSA" or not jwk.get("kid"):
            continue
        if jwk.get("alg", ALGORITHM) != ALGORITHM or jwk.get("use", "sig") != "sig":
            continue
        try:
            keys[str(jwk["kid"])] = RSAAlgorithm.from_jwk(dict(jwk))
        except Exception:
            log.warning("skipping malformed Google key %s", jwk.get("kid"))
    return keys


class GoogleVerifier:
    def __init__(
        self,
        jwks: Mapping[str, Any] | Sequence[Mapping[str, Any]],
        client_id: str,
        issuers: Sequence[str],
        *,
        path: str | Path | None = None,
    ) -> None:
        if not client_id:
            raise ValueError("a Google client id is needed to verify ID tokens")
        self._keys = _rsa_keys(jwks)
        self._client_id = client_id
        self._issuers = tuple(issuers)
        self._path = Path(path) if path else None
        self._loaded_at = time.monotonic()

    @classmethod
    def from_file(cls, path: str | Path, client_id: str, issuers: Sequence[str]) -> GoogleVerifier:
        return cls(json.loads(Path(path).read_text()), client_id, issuers, path=path)

    def _reload(self) -> None:
        if self._path is None or time.monotonic() - self._loaded_at < _RELOAD_SECONDS:
            return
        self._loaded_at = time.monotonic()
        try:
            self._keys = _rsa_keys(json.loads(self._path.read_text()))
        except (OSError, ValueError):
            log.warning("could not re-read Google keys from %s", self._path, exc_info=True)

    def verify(self, id_token: str, now: float | None = None) -> GoogleIdentity:
        """The identity in a valid ID token; :class:`kalaro.tokens.TokenError` otherwise."""
        header = unverified_header(id_token, (ALGORITHM,))
        kid = header.get("kid")
        if not isinstance(kid, str) or not kid:
            raise invalid("Google ID token has no kid")
        if kid not in self._keys:
            self._reload()
        key = self._keys.get(kid)
        if key is None:
            raise invalid(f"Google ID token is signed by an unknown key: kid {kid}")
        claims = decode_verified(
            id_token,
            key,
            algorithm=ALGORITHM,
            issuer=self._issuers,
            audience=self._client_id,
            required=["iss", "aud", "sub", "iat", "exp", "email"],
        )
        check_times(claims, now, LEEWAY_SECONDS)
        sub, email = claims.get("sub"), claims.get("email")
        if not isinstance(sub, str) or not sub or not isinstance(email, str) or not email:
            raise invalid("Google ID token lacks a subject or email")
        # Google sends a JSON boolean; very old tokens sent the string "true".
        if claims.get("email_verified") not in (True, "true"):
            raise invalid("Google has not verified this account's email address")
        name = claims.get("name")
        return GoogleIdentity(sub=sub, email=email, name=name if isinstance(name, str) else "")
