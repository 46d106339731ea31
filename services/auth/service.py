"""The auth service on the bus: dependencies from settings, and one endpoint per subject.

Handlers are one-liners over :mod:`services.auth.accounts`; decoding, typed errors,
metrics and draining come from :class:`kalaro.bus.Service`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from nats.aio.client import Client as NATS
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.bus import Service
from kalaro.bus.codec import encode
from kalaro.bus.jetstream import ensure_stream, publish_once
from kalaro.bus.redislink import RedisLink
from kalaro.proto import endpoints, subjects
from kalaro.proto.auth import (
    GetPublicKeys,
    PublicKeys,
    SessionRevoked,
    UserRegistered,
)
from kalaro.settings import Settings
from kalaro.tokens import load_or_create_private_key, revocation_seconds, revoked_key
from services.auth import accounts
from services.auth.deps import AuthDeps, Publisher, Revoker
from services.auth.google import GoogleVerifier
from services.auth.passwords import Passwords
from services.auth.throttle import Throttle

log = logging.getLogger("services.auth")

SERVICE_NAME = "auth"


async def registered_publisher(nc: NATS, settings: Settings | None = None) -> Publisher:
    """Publish ``UserRegistered`` on the EVENTS stream, deduplicated by user id."""
    js = nc.jetstream()
    await ensure_stream(js, subjects.EVENTS_STREAM, settings=settings)

    async def publish(event: UserRegistered) -> None:
        await publish_once(js, subjects.USER_REGISTERED, event, msg_id=event.user_id)

    return publish


def session_revoker(redis: RedisLink, nc: NATS | None, settings: Settings) -> Revoker:
    """Put a session on the gateways' denylist, then tell them (to close its sockets).

    The denylist entry is the record; it lives as long as an access token can, so it
    outlives every token it refuses. The broadcast is best effort: a gateway that misses
    it still refuses the session's tokens on the next request or socket.
    """
    ttl_ms = revocation_seconds(settings.access_token_seconds) * 1000

    async def revoke(session: str, user_id: str) -> None:
        await redis.set(revoked_key(session), "1", px=ttl_ms)
        if nc is None:
            return
        try:
            await nc.publish(
                subjects.AUTH_REVOKED, encode(SessionRevoked(session_id=session, user_id=user_id))
            )
        except Exception:
            log.warning("could not broadcast the revocation of %s", session, exc_info=True)

    return revoke


def google_verifier(settings: Settings) -> GoogleVerifier | None:
    """Google sign-in is on when a client id and a key set are configured."""
    if not settings.google_client_id or not settings.google_jwks_file:
        log.info("Google sign-in is off (set google_client_id and google_jwks_file)")
        return None
    return GoogleVerifier.from_file(
        settings.google_jwks_file, settings.google_client_id, settings.google_issuers
    )


async def bootstrap(
    settings: Settings,
    *,
    engine: AsyncEngine,
    redis: RedisLink,
    nc: NATS | None,
    throttle_prefix: str = "kalaro:auth:throttle:",
    google: GoogleVerifier | None = None,
    clock: Callable[[], float] = time.time,
) -> AuthDeps:
    """Build the service's dependencies from settings, once per process."""
    return AuthDeps(
        engine=engine,
        passwords=Passwords(),
        throttle=Throttle(
            redis,
            window_seconds=settings.throttle_window_seconds,
            max_failures=settings.throttle_max_failures,
            max_delay_seconds=settings.throttle_max_delay_seconds,
            account_max_failures=settings.throttle_account_max_failures,
            address_max_failures=settings.throttle_address_max_failures,
            device_max_failures=settings.throttle_device_max_failures,
            prefix=throttle_prefix,
        ),
        signing_key=load_or_create_private_key(settings.jwt_private_key_file),
        settings=settings,
        google=google or google_verifier(settings),
        on_registered=await registered_publisher(nc, settings) if nc is not None else None,
        on_revoked=session_revoker(redis, nc, settings),
        clock=clock,
    )


def build_service(deps: AuthDeps) -> Service:
    """Every ``auth.*`` subject, wired to its function."""
    service = Service(SERVICE_NAME)
    service.add(endpoints.AUTH_SIGN_UP, lambda req: accounts.sign_up(deps, req))
    service.add(endpoints.AUTH_VERIFY_EMAIL, lambda req: accounts.verify_email(deps, req))
    service.add(
        endpoints.AUTH_RESEND_VERIFICATION, lambda req: accounts.resend_verification(deps, req)
    )
    service.add(
        endpoints.AUTH_REQUEST_PASSWORD_RESET,
        lambda req: accounts.request_password_reset(deps, req),
    )
    service.add(endpoints.AUTH_RESET_PASSWORD, lambda req: accounts.reset_password(deps, req))
    service.add(endpoints.AUTH_SIGN_IN, lambda req: accounts.sign_in(deps, req))
    service.add(endpoints.AUTH_GOOGLE_SIGN_IN, lambda req: accounts.google_sign_in(deps, req))
    service.add(endpoints.AUTH_REFRESH, lambda req: accounts.refresh(deps, req))
    service.add(endpoints.AUTH_SIGN_OUT, lambda req: accounts.sign_out(deps, req))
    service.add(endpoints.AUTH_PROFILE, lambda req: accounts.get_profile(deps, req))

    async def public_keys(_: GetPublicKeys) -> PublicKeys:
        return accounts.public_keys(deps)

    service.add(endpoints.AUTH_PUBLIC_KEYS, public_keys)
    service.add(endpoints.AUTH_REQUEST_HOST, lambda req: accounts.request_host(deps, req))
    service.add(
        endpoints.AUTH_LIST_HOST_REQUESTS,
        lambda req: accounts.list_host_requests(deps, req),
    )
    service.add(
        endpoints.AUTH_DECIDE_HOST_REQUEST,
        lambda req: accounts.decide_host_request(deps, req),
    )
    service.add(endpoints.AUTH_SEARCH_USERS, lambda req: accounts.search_users(deps, req))
    # Internal: the gateway has no route to it; only the bots service asks.
    service.add(endpoints.AUTH_CREATE_BOT, lambda req: accounts.create_bot(deps, req))
    return service
