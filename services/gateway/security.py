"""Who is calling: access-token verification against the auth service's published keys.

The gateway never holds a signing key. It fetches the JWKS from the auth service
(``auth.public_keys``), verifies tokens locally, and refetches (at most every few
seconds) when a token names a key it does not know yet, so key rotation just works.
"""

from __future__ import annotations

import asyncio
import time

from litestar.connection import ASGIConnection
from nats.aio.client import Client as NATS

from kalaro.bus import RemoteError, request
from kalaro.proto import errors as codes
from kalaro.proto import subjects
from kalaro.proto.auth import GetPublicKeys, PublicKeys
from kalaro.tokens import AccessClaims, TokenError, verify_access_token

_REFETCH_SECONDS = 5.0


class KeyCache:
    def __init__(self, nc: NATS) -> None:
        self._nc = nc
        self._keys: PublicKeys | None = None
        self._fetched_at = 0.0
        self._lock = asyncio.Lock()

    async def keys(self, *, refresh: bool = False) -> PublicKeys:
        async with self._lock:
            stale = time.monotonic() - self._fetched_at > _REFETCH_SECONDS
            if self._keys is None or (refresh and stale):
                self._keys = await request(
                    self._nc, subjects.AUTH_PUBLIC_KEYS, GetPublicKeys(), PublicKeys
                )
                self._fetched_at = time.monotonic()
            return self._keys

    async def verify(self, token: str) -> AccessClaims:
        keys = await self.keys()
        try:
            return verify_access_token(token, list(keys.keys), keys.issuer, keys.audience)
        except TokenError as exc:
            if exc.code != codes.INVALID_TOKEN or "kid" not in exc.message:
                raise
        # A key we have not seen: the auth service may have rotated. Ask once more.
        keys = await self.keys(refresh=True)
        return verify_access_token(token, list(keys.keys), keys.issuer, keys.audience)


def bearer_token(connection: ASGIConnection) -> str:  # type: ignore[type-arg]
    header = connection.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise RemoteError(codes.UNAUTHORIZED, "sign in first: missing bearer token")
    return token.strip()


async def authenticate(connection: ASGIConnection) -> AccessClaims:  # type: ignore[type-arg]
    """The caller's verified claims, or a 401 error."""
    cache: KeyCache = connection.app.state.key_cache
    try:
        return await cache.verify(bearer_token(connection))
    except TokenError as exc:
        raise RemoteError(exc.code, exc.message) from exc


def require_role(claims: AccessClaims, role: str) -> None:
    if role not in claims.roles:
        raise RemoteError(codes.FORBIDDEN, f"this needs the {role} role")
