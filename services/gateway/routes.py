"""REST routes: authenticate, validate, forward over NATS. No business logic here.

Each handler maps a strict client body onto the service message (adding what only
the server knows: the caller's id from the verified token, their address) and
returns the service's reply as it came.

This module holds what every ``routes_*`` module shares (the verified caller, query
bounds, :func:`forward`) and the account, wallet, admin grant and meta routes; the
other areas have modules of their own (tables in ``routes_tables``, hands, export,
practice, players, user admin and hosting, approvals, mailed links).
"""

from __future__ import annotations

from typing import Annotated, TypeVar

import msgspec
from litestar import Controller, Request, Response, get, post
from litestar.datastructures import Cookie
from litestar.di import NamedDependency, Provide
from litestar.params import JSONBody, Parameter
from nats.aio.client import Client as NATS

from kalaro.bus import request as bus_request
from kalaro.proto import api, endpoints, subjects
from kalaro.proto import auth as a
from kalaro.proto import lobby as lb
from kalaro.proto import wallet as w
from kalaro.proto.endpoints import Endpoint
from kalaro.settings import Settings
from kalaro.tokens import AccessClaims
from services.gateway import access
from services.gateway.notify import note_sign_in
from services.gateway.security import request_address

#: The signed device cookie (services/auth/devices.py), sent only to the auth API.
DEVICE_COOKIE = "kalaro_device"


def _nc(request: Request) -> NATS:  # type: ignore[type-arg]
    nc: NATS = request.app.state.nc
    return nc


def _address(request: Request) -> str:  # type: ignore[type-arg]
    return request_address(request)


def limit_address(request: Request) -> None:  # type: ignore[type-arg]
    """Every HTTP request (``before_request``): the caller's address has a token left
    (taken already, before the token was checked, on a guarded route)."""
    access.limit_address(request)


async def provide_claims(request: Request) -> AccessClaims:  # type: ignore[type-arg]
    """The caller the route's guard verified (see access.py)."""
    claims = access.verified_caller(request)
    if claims is None:  # a route without a guard: never in this gateway, but not a hole
        await access.SIGNED_IN(request, None)
        claims = access.verified_caller(request)
        assert claims is not None
    return claims


#: The admin routes' dependency: the same caller, whom the ``ADMIN`` guard let in.
provide_admin = provide_claims


T = TypeVar("T")
Req = TypeVar("Req", bound=msgspec.Struct)

#: The verified caller: the controller's ``claims`` (or ``admin``) dependency.
Claims = NamedDependency[AccessClaims]

Limit = Annotated[int, Parameter(ge=1, le=200)]
#: Query integers are bounded: an unbounded one overflowed a 64-bit field downstream.
Offset = Annotated[int, Parameter(ge=0, le=1_000_000)]
#: A ledger entry's id to page back from: ids start at 1 (the wallet refuses 0).
Before = Annotated[int | None, Parameter(ge=1, le=2**53)]


class AuthController(Controller):
    path = "/api/auth"
    tags = ["auth"]

    @post(
        "/sign-up",
        status_code=202,
        summary="Create an account (then sign in); a verification link is mailed",
        description="Answers 202 `check_email` whether or not the email is known, so it "
        "reveals nothing; sign in with the password afterwards.",
    )
    async def sign_up(self, request: Request, data: JSONBody[api.SignUpBody]) -> a.SignUpAccepted:  # type: ignore[type-arg]
        message = a.SignUp(
            email=data.email,
            password=data.password,
            display_name=data.display_name,
            address=_address(request),
        )
        return await forward(request, endpoints.AUTH_SIGN_UP, message)

    @post(
        "/sign-in",
        status_code=200,
        summary="Sign in with email and password",
        description="Sets the `kalaro_device` cookie (HttpOnly, path /api/auth): a device "
        "that signed in before is not held up by failures from elsewhere. Only failures "
        "count: a new device is answered 429 with `Retry-After` once the account has had "
        "many, then 401 `code_required` (a 6-digit code was mailed: send it as `code` with "
        "the password again; `code_invalid` if wrong or expired). See docs/protocol.md.",
    )
    async def sign_in(
        self,
        request: Request,  # type: ignore[type-arg]
        data: JSONBody[api.SignInBody],
    ) -> Response[a.TokenPair]:
        message = a.SignIn(
            email=data.email,
            password=data.password,
            address=_address(request),
            device=request.cookies.get(DEVICE_COOKIE, "")[:256],
            code=data.code or "",
        )
        signed = await forward(request, endpoints.AUTH_SIGN_IN, message)
        # Ranked play keeps accounts seen from one address or device apart (issue 34).
        await note_sign_in(
            _nc(request), signed.user.user_id, message.address, message.device, signed.device_token
        )
        settings: Settings = request.app.state.settings
        pair = a.TokenPair(
            access_token=signed.access_token,
            refresh_token=signed.refresh_token,
            expires_in=signed.expires_in,
            user=signed.user,
            token_type=signed.token_type,
        )
        cookie = Cookie(
            key=DEVICE_COOKIE,
            value=signed.device_token,
            path="/api/auth",
            max_age=settings.throttle_device_days * 86_400,
            httponly=True,
            secure=settings.env == "production",
            samesite="lax",
        )
        return Response(pair, cookies=[cookie] if signed.device_token else [])

    @post("/google", status_code=200, summary="Sign in with a Google ID token")
    async def google(self, request: Request, data: JSONBody[api.GoogleSignInBody]) -> a.TokenPair:  # type: ignore[type-arg]
        message = a.GoogleSignIn(id_token=data.id_token, address=_address(request))
        return await forward(request, endpoints.AUTH_GOOGLE_SIGN_IN, message)

    @post("/refresh", status_code=200, summary="Trade a refresh token for a new pair")
    async def refresh(self, request: Request, data: JSONBody[api.RefreshBody]) -> a.TokenPair:  # type: ignore[type-arg]
        message = a.Refresh(refresh_token=data.refresh_token)
        return await forward(request, endpoints.AUTH_REFRESH, message)

    @post("/sign-out", status_code=200, summary="Revoke a refresh token and its family")
    async def sign_out(self, request: Request, data: JSONBody[api.RefreshBody]) -> a.SignedOut:  # type: ignore[type-arg]
        message = a.SignOut(refresh_token=data.refresh_token)
        return await forward(request, endpoints.AUTH_SIGN_OUT, message)


class MeController(Controller):
    path = "/api/me"
    tags = ["me"]
    guards = [access.SIGNED_IN]
    dependencies = {"claims": Provide(provide_claims)}

    @get("/", summary="My profile")
    async def profile(self, request: Request, claims: Claims) -> a.UserProfile:  # type: ignore[type-arg]
        return await forward(request, endpoints.AUTH_PROFILE, a.GetProfile(user_id=claims.user_id))


class WalletController(Controller):
    path = "/api/wallet"
    tags = ["wallet"]
    guards = [access.SIGNED_IN]
    dependencies = {"claims": Provide(provide_claims)}

    @get("/", summary="My balance, holds and available credits")
    async def balance(self, request: Request, claims: Claims) -> w.Balance:  # type: ignore[type-arg]
        return await forward(
            request, endpoints.WALLET_BALANCE, w.GetBalance(user_id=claims.user_id)
        )

    @get("/history", summary="My ledger entries, newest first")
    async def history(
        self,
        request: Request,  # type: ignore[type-arg]
        claims: Claims,
        limit: Limit = 50,
        before: Before = None,
    ) -> w.History:
        message = w.GetHistory(user_id=claims.user_id, limit=limit, before=before)
        return await forward(request, endpoints.WALLET_HISTORY, message)


class AdminController(Controller):
    path = "/api/admin"
    tags = ["admin"]
    guards = [access.ADMIN]
    dependencies = {"admin": Provide(provide_admin)}

    @post("/grants", status_code=201, summary="Grant or adjust a player's credits")
    async def adjust(
        self,
        request: Request,  # type: ignore[type-arg]
        admin: Claims,
        data: JSONBody[api.AdjustBody],
    ) -> w.Adjusted:
        message = w.Adjust(
            admin_id=admin.user_id,
            user_id=data.user_id,
            amount=data.amount,
            reason=data.reason,
            kind=data.kind,
            request_key=data.request_key,
        )
        return await forward(request, endpoints.WALLET_ADJUST, message)

    @get("/audit", summary="Check the ledger's books")
    async def audit(self, request: Request, admin: Claims) -> w.AuditReport:  # type: ignore[type-arg]
        return await forward(request, endpoints.WALLET_AUDIT, w.Audit())


@get("/api/config", tags=["meta"], summary="Public settings a client needs before sign-in")
async def public_config(request: Request) -> api.PublicConfig:  # type: ignore[type-arg]
    settings: Settings = request.app.state.settings
    return api.PublicConfig(
        google_client_id=settings.google_client_id, welcome_grant=settings.welcome_grant
    )


@get("/healthz", tags=["meta"], summary="Liveness: 200 while NATS is connected")
async def healthz(request: Request) -> dict[str, object]:  # type: ignore[type-arg]
    return {"service": "gateway", "nats": _nc(request).is_connected}


#: How long the gateway waits for a request that waits on other services in turn: a
#: deal asks the wallet (5 s) and the engine (10 s, which may first wait out a NATS
#: election); a cancel asks the engine. Giving up sooner answered "no service
#: answered" while the lobby was still dealing, and the table looked stuck to players.
SLOW_REQUEST_SECONDS = 20.0
# Deciding on credits asks the wallet for the grant.
_SLOW = frozenset({subjects.LOBBY_DEAL, subjects.LOBBY_CANCEL_TABLE, subjects.AUTH_DECIDE_APPROVAL})


async def forward(
    request: Request,  # type: ignore[type-arg]
    endpoint: Endpoint[Req, T],
    message: Req,
) -> T:
    """Send the service message and hand back its reply (errors become HTTP errors)."""
    if endpoint.subject in _SLOW:
        return await bus_request(_nc(request), endpoint, message, timeout=SLOW_REQUEST_SECONDS)
    return await bus_request(_nc(request), endpoint, message)


TableId = Annotated[str, Parameter(min_length=1, max_length=64)]


def caller(claims: AccessClaims) -> lb.Caller:
    return lb.Caller(
        user_id=claims.user_id,
        display_name=claims.name,
        roles=tuple(claims.roles),
        email_verified=claims.email_verified,
    )


_MESSAGE_SCHEMA: dict[str, object] = {}


@get("/api/schema/messages", tags=["meta"], summary="JSON Schema of every client message")
async def message_schema_route() -> dict[str, object]:
    if not _MESSAGE_SCHEMA:
        from kalaro.proto.schema import message_schema

        _MESSAGE_SCHEMA.update(message_schema())
    return _MESSAGE_SCHEMA
