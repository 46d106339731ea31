"""The auth service's one bootstrap: its deps from settings, every ``auth.*`` endpoint
bound to its handler (``async def handle(cmd, deps: AuthDeps) -> reply``, in
:mod:`services.auth.accounts` and the modules it gathers); decoding, typed errors,
metrics and draining come from :class:`kalaro.bus.Service`.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable

from nats.aio.client import Client as NATS
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.bus import Route, Service, request, route
from kalaro.bus.codec import encode
from kalaro.bus.jetstream import ensure_stream, publish_once
from kalaro.bus.redislink import RedisLink
from kalaro.bus.runner import Running, database_ready, redis_ready, streams_ready
from kalaro.bus.store import connect_redis
from kalaro.proto import endpoints, subjects
from kalaro.proto.auth import (
    SessionRevoked,
    UserRegistered,
)
from kalaro.proto.wallet import Adjusted, GrantApproved
from kalaro.settings import Settings
from kalaro.sql import create_engine
from kalaro.tokens import load_or_create_private_key, revocation_seconds, revoked_key
from services.auth import accounts, approvals
from services.auth.accounts import AdminAccount, ensure_admin
from services.auth.deps import AuthDeps, CreditGranter, Publisher, Revoker
from services.auth.google import GoogleVerifier
from services.auth.passwords import Passwords
from services.auth.schema import migrate_auth
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


def credit_granter(nc: NATS) -> CreditGranter:
    """Approved credits are the wallet's to grant (keyed by the approval: exactly once)."""

    async def grant(message: GrantApproved) -> Adjusted:
        return await request(nc, endpoints.WALLET_GRANT_APPROVED, message)

    return grant


def google_verifier(settings: Settings) -> GoogleVerifier | None:
    """Google sign-in is on when a client id and a key set are configured."""
    if not settings.google_client_id or not settings.google_jwks_file:
        log.info("Google sign-in is off (set google_client_id and google_jwks_file)")
        return None
    return GoogleVerifier.from_file(
        settings.google_jwks_file, settings.google_client_id, settings.google_issuers
    )


async def build_deps(
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
        grant_credits=credit_granter(nc) if nc is not None else None,
    )


ROUTES: list[Route[AuthDeps]] = [
    route(endpoints.AUTH_SIGN_UP, accounts.sign_up),
    route(endpoints.AUTH_VERIFY_EMAIL, accounts.verify_email),
    route(endpoints.AUTH_RESEND_VERIFICATION, accounts.resend_verification),
    route(endpoints.AUTH_REQUEST_PASSWORD_RESET, accounts.request_password_reset),
    route(endpoints.AUTH_RESET_PASSWORD, accounts.reset_password),
    route(endpoints.AUTH_SIGN_IN, accounts.sign_in),
    route(endpoints.AUTH_GOOGLE_SIGN_IN, accounts.google_sign_in),
    route(endpoints.AUTH_REFRESH, accounts.refresh),
    route(endpoints.AUTH_SIGN_OUT, accounts.sign_out),
    route(endpoints.AUTH_PROFILE, accounts.get_profile),
    route(endpoints.AUTH_PUBLIC_KEYS, accounts.public_keys),
    route(endpoints.AUTH_REQUEST_APPROVAL, approvals.request_approval),
    route(endpoints.AUTH_LIST_APPROVALS, approvals.list_approvals),
    route(endpoints.AUTH_DECIDE_APPROVAL, approvals.decide_approval),
    route(endpoints.AUTH_WITHDRAW_APPROVAL, approvals.withdraw_approval),
    route(endpoints.AUTH_APPROVAL_TRAIL, approvals.approval_trail),
    route(endpoints.AUTH_SEARCH_USERS, accounts.search_users),
    # Internal: the gateway has no route to it; only the bots service asks.
    route(endpoints.AUTH_CREATE_BOT, accounts.create_bot),
]


def build_service(deps: AuthDeps) -> Service:
    """Every ``auth.*`` subject, wired to its function."""
    return Service(SERVICE_NAME).bind(ROUTES, deps)


async def bootstrap(settings: Settings, nc: NATS, resources: contextlib.AsyncExitStack) -> Running:
    """Migrate, build the deps, make sure the admin named in settings exists (if any)."""
    engine = create_engine(settings.database_url)
    resources.push_async_callback(engine.dispose)
    await migrate_auth(engine)
    redis = connect_redis(settings.redis_url, settings)
    resources.push_async_callback(redis.aclose)
    deps = await build_deps(settings, engine=engine, redis=redis, nc=nc)
    if settings.admin_email:
        # Settings create the first admin once; later starts only keep the role
        # in place and never overwrite a password changed since.
        account = await ensure_admin(
            engine,
            deps.passwords,
            settings.admin_email,
            password=settings.admin_password,
            on_registered=deps.on_registered,
        )
        if account.generated_password is not None:
            print_admin(account)
    return Running(
        build_service(deps),
        # Credits approved while the wallet was down are granted once it is back.
        background=[lambda: approvals.apply_loop(deps)],
        checks={
            "database": database_ready(engine),
            "redis": redis_ready(redis),
            "jetstream": streams_ready(nc, [subjects.EVENTS_STREAM], settings),
        },
    )


def print_admin(account: AdminAccount) -> None:
    action = "created" if account.created else "promoted"
    print(f"admin {action}: {account.email}")
    if account.generated_password is not None:
        # The only time it is ever shown: we keep just its hash.
        print(f"password: {account.generated_password}")
    elif not account.created:
        print("password: unchanged")
