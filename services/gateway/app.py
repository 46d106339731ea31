"""Build the gateway's Litestar app: routes, error mapping, OpenAPI, the web client."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import msgspec
from litestar import Litestar, Request, Response, get
from litestar.datastructures import MutableScopeHeaders
from litestar.exceptions import HTTPException, ValidationException
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import SwaggerRenderPlugin
from litestar.openapi.spec import Components
from litestar.routes import HTTPRoute
from litestar.static_files import create_static_files_router
from litestar.types import Empty
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from prometheus_client import CONTENT_TYPE_LATEST, Gauge, generate_latest

from kalaro.bus import RemoteError
from kalaro.bus.codec import decode
from kalaro.bus.runner import connect, readiness, redis_ready, watch_event_loop
from kalaro.bus.store import connect_redis
from kalaro.logs import new_request_id
from kalaro.proto import errors as codes
from kalaro.proto import subjects
from kalaro.proto.api import ErrorBody, ErrorDetail
from kalaro.proto.auth import SessionRevoked
from kalaro.settings import Settings
from services.gateway import (
    limits,
    routes,
    routes_accounts,
    routes_admin,
    routes_approvals,
    routes_export,
    routes_hands,
    routes_players,
    routes_practice,
    routes_ranked,
    routes_tables,
)
from services.gateway.apidoc import (
    SECURITY_SCHEMES,
    document_errors,
    document_limits,
    document_security,
)
from services.gateway.hub import Hub
from services.gateway.notify import subscribe_notifications
from services.gateway.presence import PresenceReporter
from services.gateway.schema_page import OfflineDocsPlugin
from services.gateway.security import KeyCache, trusted_networks
from services.gateway.ws import IDLE_HEARTBEATS, ws_endpoint

log = logging.getLogger("kalaro.gateway")

WEB_DIR = Path(__file__).resolve().parents[2] / "web"


def _error(status: int, code: str, message: str) -> Response[ErrorBody]:
    return Response(ErrorBody(error=ErrorDetail(code=code, message=message)), status_code=status)


class GatewayRequest(Request):  # type: ignore[type-arg]
    """A request whose JSON body is checked before it is decoded: only one sent as
    ``application/json`` is read (else 415), too deep is refused (a 400, not a
    ``RecursionError``), and the body must match the handler's ``data`` type strictly
    (``"bet": "10"`` is not a number), not just convertibly. Guards (access.py) have
    run by then: nothing of the body is looked at for a caller who may not send it."""

    async def json(self) -> Any:
        if self._json is not Empty:
            return self._json
        body = await self.body()
        if not _json_media_type(self.headers.get("content-type", "")) and (
            body or "content-type" in self.headers
        ):
            # Read under application/json only: a form or text/plain post from another
            # site (no CORS preflight) must not act as a JSON one would.
            raise HTTPException(status_code=415, detail="send the body as application/json")
        if limits.too_deep(body):
            log.warning(
                "refused a body nested deeper than %d levels: %s %s from %s",
                limits.MAX_DEPTH, self.method, self.url.path, _client(self),
            )  # fmt: skip
            raise ValidationException(f"body nested deeper than {limits.MAX_DEPTH} levels")
        data = self.route_handler.parsed_data_field
        if not body or data is None or not isinstance(data.annotation, type):
            return await super().json()
        try:
            # 5.0 is an integer to JSON Schema (the document's language): taken as 5.
            # Nothing else is converted ("5" is not a number).
            value = _integral_floats_as_ints(msgspec.json.decode(body))
            msgspec.convert(value, type=data.annotation, strict=True)
        except msgspec.ValidationError as exc:
            raise ValidationException(f"invalid request: {exc}") from None
        except msgspec.DecodeError as exc:
            raise ValidationException(f"malformed JSON body: {exc}") from None
        self._json = value
        return value


def _integral_floats_as_ints(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _integral_floats_as_ints(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_integral_floats_as_ints(v) for v in value]
    return value


def _json_media_type(content_type: str) -> bool:
    return content_type.partition(";")[0].strip().lower() == "application/json"


def _client(request: Request) -> str:  # type: ignore[type-arg]
    return request.client.host if request.client else "?"


def _on_rate_limited(_: Request, exc: limits.RateLimited) -> Response[ErrorBody]:  # type: ignore[type-arg]
    response = _error(429, codes.THROTTLED, str(exc))
    response.headers["Retry-After"] = str(exc.retry_after)
    return response


def _on_remote_error(_: Request, exc: RemoteError) -> Response[ErrorBody]:  # type: ignore[type-arg]
    status = codes.http_status(exc.code)
    response = _error(status, exc.code, exc.message)
    if status == 429:  # every 429 says when to come back (1 s if the service did not)
        response.headers["Retry-After"] = str(max(1, exc.retry_after))
    return response


def _on_validation_error(_: Request, exc: ValidationException) -> Response[ErrorBody]:  # type: ignore[type-arg]
    detail = exc.detail
    if detail.startswith(("invalid request: ", "malformed JSON body: ")):
        return _error(400, codes.BAD_REQUEST, detail)
    if isinstance(exc.extra, list) and exc.extra:
        detail = (
            "; ".join(
                f"{e.get('key', '')}: {e.get('message', '')}".strip(": ")
                for e in exc.extra
                if isinstance(e, dict)
            )
            or detail
        )
    return _error(400, codes.BAD_REQUEST, f"invalid request: {detail}")


#: The error code of each status Litestar itself answers with (the rest: bad_request).
_HTTP_CODES = {
    401: codes.UNAUTHORIZED,
    403: codes.FORBIDDEN,
    404: codes.NOT_FOUND,
    405: codes.METHOD_NOT_ALLOWED,
    415: codes.UNSUPPORTED_MEDIA_TYPE,
}


def _on_http_error(_: Request, exc: HTTPException) -> Response[ErrorBody]:  # type: ignore[type-arg]
    code = _HTTP_CODES.get(
        exc.status_code, codes.BAD_REQUEST if exc.status_code < 500 else codes.INTERNAL
    )
    response = _error(exc.status_code, code, str(exc.detail))
    for name, value in (exc.headers or {}).items():  # a 405's Allow
        response.headers[name] = value
    return response


def _on_unexpected(_: Request, exc: Exception) -> Response[ErrorBody]:  # type: ignore[type-arg]
    log.exception("unhandled error", exc_info=exc)
    return _error(500, codes.INTERNAL, "internal error")


async def _add_security_headers(message: Any, scope: Any) -> None:
    if message["type"] == "http.response.start":
        headers = MutableScopeHeaders.from_message(message)
        for name, value in limits.security_headers(scope.get("path", "")):
            headers[name.decode()] = value.decode()


OPEN_SOCKETS = Gauge("kalaro_gateway_open_sockets", "WebSockets open on this gateway")
# Every hub of this process (one, but tests run several apps in one process).
_HUBS: weakref.WeakSet[Hub] = weakref.WeakSet()
OPEN_SOCKETS.set_function(lambda: sum(len(hub.connections) for hub in list(_HUBS)))

#: Probes and scrapes: never rate-limited (a Prometheus or a kubelet is one address
#: that asks often; a probe refused with 429 would restart a healthy gateway).
_PROBES = frozenset({"/healthz", "/metrics", "/readyz"})


@get("/metrics", include_in_schema=False, media_type=CONTENT_TYPE_LATEST)
async def metrics() -> bytes:
    return generate_latest()


@get("/readyz", include_in_schema=False)
async def readyz(request: Request) -> Response[dict[str, object]]:  # type: ignore[type-arg]
    """Readiness: NATS connected and Redis (the session denylist) answering."""
    state = request.app.state
    checks = {"redis": redis_ready(state.redis)}
    ready, results = await readiness(state.nc, checks)
    body: dict[str, object] = {"service": "gateway", "ready": ready, "checks": results}
    return Response(body, status_code=200 if ready else 503)


def _before_request(request: Request) -> Response[None] | None:  # type: ignore[type-arg]
    if request.url.path not in _PROBES:
        routes.limit_address(request)
    if request.method == "OPTIONS":
        return _options(request)
    return None


def _options(request: Request) -> Response[None]:  # type: ignore[type-arg]
    """``Allow`` as the route has it: Litestar's own OPTIONS answer lists the methods of
    the first controller that declared the path (``/api/tables``: POST but not GET)."""
    template = request.scope.get("path_template", "")
    methods = {
        method
        for route in request.app.routes
        if isinstance(route, HTTPRoute) and route.path_format == template
        for method in route.methods
    }
    return Response(None, status_code=204, headers={"Allow": ", ".join(sorted(methods))})


def _with_request_ids(app: Any) -> Any:
    """ASGI middleware: a request id per HTTP request, bound for the logs (and sent on
    in NATS headers by the bus client), returned as ``X-Request-Id``. Frames on a
    WebSocket get theirs in ws_session.py."""

    async def middleware(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        rid = new_request_id().encode()

        async def send_with_id(message: Any) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = [*message["headers"], (b"x-request-id", rid)]
            await send(message)

        await app(scope, receive, send_with_id)

    return middleware


def create_app(settings: Settings, nc: NATS | None = None) -> Litestar:
    """The gateway app; pass ``nc`` to share a connection (tests), else it connects."""

    trusted = trusted_networks(settings.trusted_proxies)  # a bad CIDR fails at start

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        own = nc is None

        def reconnected() -> None:
            # Table frames published while the connection was away are lost for good:
            # every socket here gets its tables' current views again.
            hub = getattr(app.state, "hub", None)
            if hub is not None:
                hub.resync_soon()

        client = (
            await connect(settings.nats_url, "gateway", on_reconnected=reconnected) if own else nc
        )
        assert client is not None
        app.state.nc = client
        redis = connect_redis(settings.redis_url, settings)  # the session denylist (security.py)
        app.state.redis = redis
        app.state.key_cache = KeyCache(client, redis)
        app.state.trusted_proxies = trusted
        presence = PresenceReporter(client, refresh_seconds=settings.presence_refresh_seconds)
        app.state.hub = Hub(client, presence, redis)
        _HUBS.add(app.state.hub)
        presence.start()

        async def on_revoked(msg: Msg) -> None:
            # A signed-out session's open sockets close now; new ones are refused by the
            # denylist check when they open.
            try:
                revoked = decode(msg.data, SessionRevoked)
            except Exception:
                log.warning("malformed %s message", subjects.AUTH_REVOKED)
                return
            app.state.hub.close_session(revoked.session_id)

        revocations = await client.subscribe(subjects.AUTH_REVOKED, cb=on_revoked)
        notices = await subscribe_notifications(client, app.state.hub)  # e.g. ranked: seated
        app.state.settings = settings
        app.state.user_limiter = limits.RateLimiter(
            "user", settings.rest_user_rate, settings.rest_user_burst
        )
        app.state.address_limiter = limits.RateLimiter(
            "address", settings.rest_address_rate, settings.rest_address_burst
        )
        watcher = asyncio.create_task(watch_event_loop("gateway"))
        heartbeat = settings.ws_heartbeat_seconds
        reaper = asyncio.create_task(
            app.state.hub.reap_idle(IDLE_HEARTBEATS * heartbeat, heartbeat / 2)
        )
        try:
            yield
        finally:
            watcher.cancel()
            reaper.cancel()
            await app.state.hub.stop()
            with contextlib.suppress(Exception):
                await revocations.unsubscribe()
            with contextlib.suppress(Exception):
                await notices.unsubscribe()
            await redis.aclose()
            await presence.stop()
            if own:
                await client.drain()

    handlers: list[object] = [
        routes.AuthController,
        routes.MeController,
        routes_accounts.AccountLinksController,
        routes_accounts.MyLinksController,
        routes.WalletController,
        routes.AdminController,
        routes_approvals.ApprovalsController,
        routes_approvals.AdminApprovalsController,
        routes_tables.TablesController,
        routes_practice.PracticeController,
        routes_admin.AdminUsersController,
        routes_admin.HostingController,
        routes_hands.HandsController,
        routes_export.HandsExportController,
        routes_players.PlayersController,
        routes_ranked.RatingsController,
        routes_ranked.QueueController,
        routes_ranked.FairPlayController,
        ws_endpoint,
        routes.public_config,
        routes.healthz,
        metrics,
        readyz,
        routes.message_schema_route,
    ]
    if WEB_DIR.is_dir():
        handlers.append(
            create_static_files_router(path="/", directories=[WEB_DIR], html_mode=True, name="web")
        )
    limits.redact_tokens_in_server_logs()
    app = Litestar(
        route_handlers=handlers,  # type: ignore[arg-type]
        lifespan=[lifespan],
        request_class=GatewayRequest,
        request_max_body_size=limits.MAX_BODY_BYTES,
        before_request=_before_request,
        middleware=[_with_request_ids],
        before_send=[_add_security_headers],
        exception_handlers={
            limits.RateLimited: _on_rate_limited,
            RemoteError: _on_remote_error,
            ValidationException: _on_validation_error,
            HTTPException: _on_http_error,
            Exception: _on_unexpected,
        },
        openapi_config=OpenAPIConfig(
            title="KaLaro API",
            version="0.1.0",
            description="Tongits and Filipino Mahjong for fun credits. "
            'Errors are always {"error": {"code", "message"}}.',
            path="/schema",
            components=Components(security_schemes=SECURITY_SCHEMES),
            render_plugins=[OfflineDocsPlugin(path="/"), SwaggerRenderPlugin(path="/swagger")],
        ),
        debug=False,
        # Logging is kalaro.logs' (one layout for every service, JSON in production):
        # Litestar's own config would put its handler and layout on the root logger.
        logging_config=None,
    )
    document_errors(app)
    document_security(app)
    document_limits(app)
    return app
