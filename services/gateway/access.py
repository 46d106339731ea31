"""Who may call a route: checked as a Litestar guard, before anything else of the request
is read. A body is validated only for a caller allowed to send it, so a player who posts
junk to an admin route learns nothing of its schema (a 403, never a 400 listing the
fields it wants).

A :class:`Requirement` is also what the OpenAPI document says of the operation
(``apidoc.document_security``): the bearer scheme and the roles it names.
"""

from __future__ import annotations

from typing import Any, cast

from litestar.connection import ASGIConnection

from kalaro.bus import RemoteError
from kalaro.bus import request as bus_request
from kalaro.proto import endpoints
from kalaro.proto import errors as codes
from kalaro.proto import lobby as lb
from kalaro.tokens import AccessClaims
from services.gateway.limits import RateLimiter
from services.gateway.security import authenticate, request_address

#: Where a guard leaves the verified caller for the handler's ``claims`` dependency.
_CLAIMS = "kalaro_claims"
_ADDRESS_LIMITED = "kalaro_address_limited"

#: The OpenAPI security scheme every signed-in operation names.
BEARER = "bearer"
#: The role an operation on one table needs when only that table's host (or an admin)
#: may call it: not a token role, the lobby's record says who hosts the table.
TABLE_HOST = "table-host"


def limit_address(connection: ASGIConnection) -> None:  # type: ignore[type-arg]
    """Take a token from the caller's address bucket, once a request (a guard does it
    before authenticating; ``before_request`` then skips it)."""
    scope = _scope(connection)
    if scope.get(_ADDRESS_LIMITED):
        return
    scope[_ADDRESS_LIMITED] = True
    limiter: RateLimiter | None = getattr(connection.app.state, "address_limiter", None)
    if limiter is not None:
        limiter.check(request_address(connection))


def _limit_user(connection: ASGIConnection, claims: AccessClaims) -> None:  # type: ignore[type-arg]
    limiter: RateLimiter | None = getattr(connection.app.state, "user_limiter", None)
    if limiter is not None:
        limiter.check(claims.user_id)


class Requirement:
    """A guard: the caller is signed in and holds one of ``roles`` (none: any account);
    ``table_host``: hosts the path's ``table_id`` (or is an admin), as the lobby says."""

    def __init__(self, *roles: str, table_host: bool = False) -> None:
        self.roles = frozenset(roles)
        self.table_host = table_host

    @property
    def scopes(self) -> list[str]:
        """The roles the document names for the operation's bearer requirement."""
        return sorted(self.roles) + ([TABLE_HOST] if self.table_host else [])

    async def __call__(self, connection: ASGIConnection, _: Any) -> None:  # type: ignore[type-arg]
        if connection.scope.get("method") == "OPTIONS":
            return  # the methods of a path are no secret (app.py answers OPTIONS alone)
        claims = verified_caller(connection)  # a controller's guard ran first
        if claims is None:
            limit_address(connection)
            claims = await authenticate(connection)
            _limit_user(connection, claims)
            _scope(connection)[_CLAIMS] = claims
        if self.roles and not self.roles & set(claims.roles):
            needed = " or ".join(sorted(self.roles))
            raise RemoteError(codes.FORBIDDEN, f"this needs the {needed} role")
        if self.table_host:
            await _require_table_host(connection, claims)


async def _require_table_host(connection: ASGIConnection, claims: AccessClaims) -> None:  # type: ignore[type-arg]
    """The caller hosts the path's table: asked of the lobby as a caller may ask (a
    private table they do not belong to is ``not_found``, as one that does not exist).
    The lobby checks again when it acts; this is only so nothing else is read first."""
    table_id = str(connection.path_params.get("table_id", ""))
    if not 1 <= len(table_id) <= 64:
        raise RemoteError(codes.NOT_FOUND, lb.NO_SUCH_TABLE)
    who = lb.Caller(user_id=claims.user_id, display_name=claims.name, roles=tuple(claims.roles))
    asking = lb.GetTable(table_id=table_id, caller=who)
    table = await bus_request(connection.app.state.nc, endpoints.LOBBY_GET_TABLE, asking)
    if claims.user_id != table.host_id and "admin" not in claims.roles:
        raise RemoteError(codes.FORBIDDEN, "only the host of this table can do that")


def verified_caller(connection: ASGIConnection) -> AccessClaims | None:  # type: ignore[type-arg]
    """The claims a guard verified for this request, if one did."""
    claims: AccessClaims | None = _scope(connection).get(_CLAIMS)
    return claims


def _scope(connection: ASGIConnection) -> dict[str, Any]:  # type: ignore[type-arg]
    # The request's own ASGI scope: what a guard learns lives as long as the request.
    return cast(dict[str, Any], connection.scope)


SIGNED_IN = Requirement()
ADMIN = Requirement("admin")
#: Creating a table (the lobby's ``HOST_ROLES``).
HOST = Requirement("host", "admin")
TABLE_HOST_ONLY = Requirement(table_host=True)
