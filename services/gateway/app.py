"""Build the gateway's Litestar app: routes, error mapping, OpenAPI, the web client."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import msgspec
from litestar import Litestar, Request, Response
from litestar.datastructures import MutableScopeHeaders
from litestar.exceptions import HTTPException, ValidationException
from litestar.openapi import OpenAPIConfig
from litestar.openapi.plugins import ScalarRenderPlugin, SwaggerRenderPlugin
from litestar.static_files import create_static_files_router
from litestar.types import Empty
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg

from kalaro.bus import RemoteError
from kalaro.bus.codec import decode
from kalaro.bus.runner import connect, watch_event_loop
from kalaro.bus.store import connect_redis
from kalaro.proto import errors as codes
from kalaro.proto import subjects
from kalaro.proto.api import ErrorBody, ErrorDetail
from kalaro.proto.auth import SessionRevoked
from kalaro.settings import Settings
from services.gateway import limits, routes, routes_practice
from services.gateway.apidoc import document_errors, document_limits
from services.gateway.hub import Hub
from services.gateway.presence import PresenceReporter
from services.gateway.security import KeyCache, trusted_networks
from services.gateway.ws import IDLE_HEARTBEATS, ws_endpoint

log = logging.getLogger("kalaro.gateway")

WEB_DIR = Path(__file__).resolve().parents[2] / "web"


def _error(status: int, code: str, message: str) -> Response[ErrorBody]:
    return Response(ErrorBody(ErrorDetail(code, message)), status_code=status)


class GatewayRequest(Request):  # type: ignore[type-arg]
    """A request whose JSON body is checked before it is decoded: too deep is refused
    (a 400, not a ``RecursionError``), and the body must match the handler's ``data``
    type strictly (``"bet": "10"`` is not a number), not just convertibly."""

    async def json(self) -> Any:
        if self._json is not Empty:
            return self._json
        body = await self.body()
        if limits.too_deep(body):
            log.warning(
                "refused a body nested deeper than %d levels: %s %s from %s",
                limits.MAX_DEPTH, self.method, self.url.path, _client(self),
            )  # fmt: skip
            raise ValidationException(f"body nested deeper than {limits.MAX_DEPTH} levels")
        data = self.route_handler.parsed_data_field
        if body and data is not None and isinstance(data.annotation, type):
            try:
                msgspec.json.decode(body, type=data.annotation, strict=True)
            except msgspec.ValidationError as exc:
                raise ValidationException(f"invalid request: {exc}") from None
            except msgspec.DecodeError as exc:
                raise ValidationException(f"malformed JSON body: {exc}") from None
        return await super().json()


def _client(request: Request) -> str:  # type: ignore[type-arg]
    return request.client.host if request.client else "?"


def _on_rate_limited(_: Request, exc: limits.RateLimited) -> Response[ErrorBody]:  # type: ignore[type-arg]
    response = _error(429, codes.THROTTLED, str(exc))
    response.headers["Retry-After"] = str(exc.retry_after)
    return response


def _on_remote_error(_: Request, exc: RemoteError) -> Response[ErrorBody]:  # type: ignore[type-arg]
    return _error(codes.http_status(exc.code), exc.code, exc.message)


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


def _on_http_error(_: Request, exc: HTTPException) -> Response[ErrorBody]:  # type: ignore[type-arg]
    code = {401: codes.UNAUTHORIZED, 403: codes.FORBIDDEN, 404: codes.NOT_FOUND}.get(
        exc.status_code, codes.BAD_REQUEST if exc.status_code < 500 else codes.INTERNAL
    )
    return _error(exc.status_code, code, str(exc.detail))


def _on_unexpected(_: Request, exc: Exception) -> Response[ErrorBody]:  # type: ignore[type-arg]
    log.exception("unhandled error", exc_info=exc)
    return _error(500, codes.INTERNAL, "internal error")


async def _add_security_headers(message: Any, scope: Any) -> None:
    if message["type"] == "http.response.start":
        headers = MutableScopeHeaders.from_message(message)
        for name, value in limits.security_headers(scope.get("path", "")):
            headers[name.decode()] = value.decode()


def create_app(settings: Settings, nc: NATS | None = None) -> Litestar:
    """The gateway app; pass ``nc`` to share a connection (tests), else it connects."""

    trusted = trusted_networks(settings.trusted_proxies)  # a bad CIDR fails at start

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        own = nc is None
        client = await connect(settings.nats_url, "gateway") if own else nc
        assert client is not None
        app.state.nc = client
        redis = connect_redis(settings.redis_url)  # the session denylist (security.py)
        app.state.key_cache = KeyCache(client, redis)
        app.state.trusted_proxies = trusted
        presence = PresenceReporter(client, refresh_seconds=settings.presence_refresh_seconds)
        app.state.hub = Hub(client, presence)
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
            with contextlib.suppress(Exception):
                await revocations.unsubscribe()
            await redis.aclose()
            await presence.stop()
            if own:
                await client.drain()

    handlers: list[object] = [
        routes.AuthController,
        routes.MeController,
        routes.WalletController,
        routes.AdminController,
        routes.TablesController,
        routes_practice.PracticeController,
        ws_endpoint,
        routes.public_config,
        routes.healthz,
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
        before_request=routes.limit_address,
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
            render_plugins=[ScalarRenderPlugin(), SwaggerRenderPlugin(path="/swagger")],
        ),
        debug=False,
    )
    document_errors(app)
    document_limits(app)
    return app
