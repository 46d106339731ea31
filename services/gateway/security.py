"""Who is calling: access-token verification against the auth service's published keys.

The gateway never holds a signing key. It fetches the JWKS from the auth service
(``auth.public_keys``), verifies tokens locally, and refetches (at most every few
seconds) when a token names a key it does not know yet, so key rotation just works.

A verified token is still refused when its session has been revoked (signed out, or its
refresh token reused): see :meth:`KeyCache.check_revoked`.
"""

from __future__ import annotations

import asyncio
import ipaddress
import time
from collections.abc import Iterable
from typing import Any

from litestar.connection import ASGIConnection
from nats.aio.client import Client as NATS

from kalaro.bus import RemoteError, request
from kalaro.bus.redislink import RedisError, RedisLink
from kalaro.proto import endpoints
from kalaro.proto import errors as codes
from kalaro.proto.auth import GetPublicKeys, PublicKeys
from kalaro.tokens import AccessClaims, TokenError, revoked_key, verify_access_token
from services.gateway.limits import RateLimiter

_REFETCH_SECONDS = 5.0


class KeyCache:
    def __init__(self, nc: NATS, redis: RedisLink | None = None) -> None:
        self._nc = nc
        self._redis = redis
        self._keys: PublicKeys | None = None
        self._fetched_at = 0.0
        self._lock = asyncio.Lock()

    async def keys(self, *, refresh: bool = False) -> PublicKeys:
        async with self._lock:
            stale = time.monotonic() - self._fetched_at > _REFETCH_SECONDS
            if self._keys is None or (refresh and stale):
                self._keys = await request(self._nc, endpoints.AUTH_PUBLIC_KEYS, GetPublicKeys())
                self._fetched_at = time.monotonic()
            return self._keys

    async def verify(self, token: str) -> AccessClaims:
        """The token's claims, if it verifies and its session has not been revoked."""
        claims = await self._verify(token)
        await self.check_revoked(claims)
        return claims

    async def check_revoked(self, claims: AccessClaims) -> None:
        """Refuse a token whose session is on the auth service's denylist.

        One Redis EXISTS per authenticated request (and per socket, when it opens) rather
        than a per-gateway copy of the denylist kept by the ``auth.revoked`` broadcast: a
        copy would miss revocations made while this gateway was starting or cut off from
        NATS, and "signed out" must hold on every replica at once. The EXISTS is one
        pipelined round trip on the connection every request shares, small next to the
        NATS request a route makes anyway. The broadcast is used only to close sockets
        already open (see app.py). If Redis cannot answer, the request fails (503):
        a signed-out session must not come back because Redis is down.
        """
        if not claims.session or self._redis is None:
            return  # a token from before sessions were named: it expires soon enough
        try:
            revoked = await self._redis.exists(revoked_key(claims.session))
        except RedisError as exc:
            raise RemoteError(
                codes.UNAVAILABLE, "cannot check your session right now; try again"
            ) from exc
        if revoked:
            raise TokenError(codes.INVALID_TOKEN, "this session has ended; sign in again")

    async def _verify(self, token: str) -> AccessClaims:
        keys = await self.keys()
        try:
            return verify_access_token(token, list(keys.keys), keys.issuer, keys.audience)
        except TokenError as exc:
            if exc.code != codes.INVALID_TOKEN or "kid" not in exc.message:
                raise
        # A key we have not seen: the auth service may have rotated. Ask once more.
        keys = await self.keys(refresh=True)
        return verify_access_token(token, list(keys.keys), keys.issuer, keys.audience)


Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def trusted_networks(cidrs: Iterable[str]) -> tuple[Network, ...]:
    """The ``trusted_proxies`` setting as networks (a bare address is a /32 or /128)."""
    return tuple(ipaddress.ip_network(c.strip(), strict=False) for c in cidrs if c.strip())


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.strip())
    except ValueError:
        return None


def _trusted(address: str, networks: tuple[Network, ...]) -> bool:
    ip = _ip(address)
    return ip is not None and any(ip in net for net in networks)


def client_address(peer: str, forwarded_for: Iterable[str], trusted: tuple[Network, ...]) -> str:
    """The client's address: the socket ``peer``, unless it is a trusted proxy.

    Only then is ``X-Forwarded-For`` read, right to left (each proxy appends the address
    it saw), skipping our own trusted proxies: the first address not among them is the
    client. Anything left of it was written by the client and is never believed, so a
    client cannot pick its own address (and its own throttling budget) with the header.
    uvicorn must not rewrite the peer itself (``proxy_headers=False``, see __main__).
    """
    if not trusted or not _trusted(peer, trusted):
        return peer
    hops = [h.strip() for value in forwarded_for for h in value.split(",") if h.strip()]
    client = peer
    for hop in reversed(hops):
        if _ip(hop) is None:
            break  # garbage: the last proxy we trust is as far as we can see
        client = hop
        if not _trusted(hop, trusted):
            break
    return client


def limit_handshake(state: Any, peer: str, headers: Iterable[tuple[bytes, bytes]]) -> None:
    """A WebSocket handshake is an HTTP request: it takes a token from its address's
    bucket, as every REST request does, so one address cannot open sockets without end
    (:class:`~services.gateway.limits.RateLimited` when the bucket is empty)."""
    limiter: RateLimiter | None = getattr(state, "address_limiter", None)
    if limiter is None:
        return
    forwarded = [v.decode("latin-1") for name, v in headers if name == b"x-forwarded-for"]
    limiter.check(client_address(peer, forwarded, getattr(state, "trusted_proxies", ())))


def request_address(connection: ASGIConnection) -> str:  # type: ignore[type-arg]
    """The caller's address, as the throttling in auth should see it."""
    peer = connection.client.host if connection.client else ""
    trusted: tuple[Network, ...] = connection.app.state.trusted_proxies
    return client_address(peer, connection.headers.getall("x-forwarded-for", []), trusted)


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
