"""The OpenAPI document tells the truth about errors: each operation lists every error
status the gateway can answer it with, each with the one error body the gateway sends
(``{"error": {"code", "message"}}``, see ``app.py``), not Litestar's default shape.

Applied to the app's route handlers before the document is first built, so the live
``/schema`` and ``docs/schema/openapi.json`` are the same document.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, get_args

import msgspec
from litestar import Litestar
from litestar.handlers import HTTPRouteHandler
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import OpenAPIHeader, Reference, Schema, SecurityScheme
from litestar.openapi.spec.enums import OpenAPIType
from litestar.params import ParameterKwarg
from litestar.routes import HTTPRoute

from kalaro.proto import errors as codes
from kalaro.proto.api import ErrorBody
from services.gateway import apidoc_games
from services.gateway.access import BEARER, TABLE_HOST, Requirement
from services.gateway.apidoc_games import game_options

# What each status means; the codes that answer with it are listed from
# ``errors.HTTP_STATUS``, the one table the gateway maps codes by.
_MEANINGS = {
    400: "Bad request: a parameter or the body is malformed, of the wrong type or out "
    "of its limits, or the service refused it as invalid",
    401: "Not signed in: no, an invalid or an expired access token, or wrong credentials "
    "(on sign-in from a new device while the account is under attack, `code_required` "
    "or `code_invalid`)",
    403: "Forbidden: the caller may not do this",
    404: "No such resource, or one the caller may not see (both answer alike)",
    409: "Conflict with the current state",
    410: "The mailed link was already used",
    413: "The request body is larger than the gateway accepts",
    415: "The body is not sent as `application/json`; it is not read",
    429: "Too many requests from this account or address; `Retry-After` says how many "
    "seconds to wait",
    503: "A service behind the gateway did not answer in time",
}


def _description(status: int) -> str:
    found = sorted(code for code, st in codes.HTTP_STATUS.items() if st == status)
    listed = ", ".join(f"`{code}`" for code in found)
    return (
        f"{_MEANINGS[status]} (code{'s' if len(found) > 1 else ''} {listed})"
        if found
        else _MEANINGS[status]
    )


#: Routes whose mailed token may already have been spent (410).
_LINKS = frozenset(
    {"/api/auth/verify", "/api/auth/verify/resend", "/api/auth/password-reset/confirm"}
)


#: Routes answered by the gateway alone: only the address rate limit applies.
_LOCAL = frozenset({"/api/config", "/api/schema/messages"})


def _statuses(handler: HTTPRouteHandler, path: str) -> list[int]:
    if path == "/healthz":
        return []  # a probe is never rate-limited
    if path in _LOCAL:
        return [429]
    statuses = {400, 401, 403, 404, 409, 429, 503}
    if path in _LINKS:
        statuses.add(410)
    if handler.parsed_data_field is not None:
        statuses |= {413, 415}
    return sorted(statuses)


def _response(status: int) -> ResponseSpec:
    return ResponseSpec(
        data_container=ErrorBody, description=_description(status), generate_examples=False
    )


def _documented(app: Litestar) -> Iterator[tuple[str, HTTPRouteHandler]]:
    for route in app.routes:
        if not isinstance(route, HTTPRoute):
            continue
        for handler in route.route_handlers:
            if handler.resolve_include_in_schema():
                yield route.path, handler


def document_errors(app: Litestar) -> None:
    """Give every documented operation its error statuses and the gateway's error body."""
    for path, handler in _documented(app):
        responses = {s: _response(s) for s in _statuses(handler, path)}
        handler.responses = {**responses, **(handler.responses or {})}


#: The scheme every signed-in operation names: an access token from ``/api/auth``.
SECURITY_SCHEMES: dict[str, SecurityScheme | Reference] = {
    BEARER: SecurityScheme(
        type="http",
        scheme="bearer",
        bearer_format="JWT",
        description="An access token from `/api/auth/sign-in`, `/google` or `/refresh`. "
        "An operation's requirement names the roles it needs (any one of them); "
        f"`{TABLE_HOST}`: the host of the path's table (or an admin).",
    )
}


def document_security(app: Litestar) -> None:
    """Each operation's security requirement, from the guards that enforce it."""
    for _, handler in _documented(app):
        needs = [
            guard
            for layer in handler.ownership_layers
            for guard in (layer.guards or ())
            if isinstance(guard, Requirement)
        ]
        if needs:
            scopes = sorted({scope for need in needs for scope in need.scopes})
            handler.security = [{BEARER: scopes}]


def document_limits(app: Litestar) -> None:
    """What Litestar's document says less exactly than the code enforces, taken from
    where it is enforced: each request body's schema is msgspec's own for its Struct
    (every bound, the union's too, and ``additionalProperties: false`` when unknown
    fields are refused), a parameter keeps the bounds of its ``Parameter`` (Litestar
    drops those of an optional one), and a 429 names its ``Retry-After`` header. Edits
    the app's own document object, which ``/schema`` serves and
    ``services.gateway.schema`` writes."""
    doc = app.openapi_schema
    bodies = {
        body
        for _, handler in _documented(app)
        if handler.parsed_data_field is not None
        # A body that is one of several Structs (told apart by a tag): each of them.
        for body in (
            get_args(handler.parsed_data_field.annotation)
            or (handler.parsed_data_field.annotation,)
        )
        if isinstance(body, type)
    }
    schemas = doc.components.schemas if doc.components and doc.components.schemas else {}
    _, exact = msgspec.json.schema_components(
        sorted(bodies, key=lambda t: t.__name__), ref_template=_REF
    )
    options, option_schemas = game_options()
    for name, schema in exact.items():
        if name in apidoc_games.BY_GAME:
            schema = apidoc_games.by_game(schema, options)
        if name in schemas:
            schemas[name] = _litestar_schema(schema)
    for name, schema in option_schemas.items():
        schemas[name] = _litestar_schema(schema)
    bounds = {
        (_PATH_TYPE.sub("}", path), str(method)): _parameter_bounds(handler)
        for path, handler in _documented(app)
        for method in handler.http_methods
    }
    retry_after = OpenAPIHeader(
        schema=Schema(type=OpenAPIType.INTEGER, minimum=1),
        description="Seconds to wait before trying again",
    )
    for path, item in (doc.paths or {}).items():
        for method in ("get", "put", "post", "patch", "delete"):
            operation = getattr(item, method)
            if operation is None:
                continue
            known = bounds.get((path, method.upper()), {})
            for parameter in operation.parameters or ():
                top = getattr(parameter, "schema", None)
                bound = known.get(getattr(parameter, "name", ""))
                if bound is not None and isinstance(top, Schema):
                    _bound(top, bound)
            limited = (operation.responses or {}).get("429")
            if limited is not None and hasattr(limited, "headers"):
                limited.headers = {**(limited.headers or {}), "Retry-After": retry_after}


_REF = "#/components/schemas/{name}"
_PATH_TYPE = re.compile(r":\w+}")  # a route's "{table_id:str}" is the document's "{table_id}"
#: msgspec's JSON Schema keywords that are not Litestar's field names turned snake_case.
_KEYWORDS = {"$ref": "ref", "not": "schema_not", "if": "schema_if", "else": "schema_else"}
#: A parameter's bound in the document, and the ``Parameter`` attribute that sets it.
_BOUNDS = {
    "minimum": "ge",
    "maximum": "le",
    "min_length": "min_length",
    "max_length": "max_length",
    "pattern": "pattern",
}


def _snake(name: str) -> str:
    return _KEYWORDS.get(name) or "".join(f"_{c.lower()}" if c.isupper() else c for c in name)


def _litestar_schema(value: Any) -> Any:
    """A JSON Schema (as msgspec writes it) as Litestar's document objects."""
    if isinstance(value, list):
        return [_litestar_schema(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "$ref" in value:
        return Reference(ref=value["$ref"])
    fields: dict[str, Any] = {}
    for key, item in value.items():
        name = _snake(key)
        if name in ("properties", "pattern_properties", "dependent_schemas"):
            fields[name] = {k: _litestar_schema(v) for k, v in item.items()}
        elif name == "type":
            kinds = [OpenAPIType(t) for t in ([item] if isinstance(item, str) else item)]
            fields[name] = kinds[0] if isinstance(item, str) else kinds
        elif name in ("enum", "default", "const", "examples", "required"):
            fields[name] = item
        else:
            fields[name] = _litestar_schema(item)
    return Schema(**fields)


def _parameter_bounds(handler: HTTPRouteHandler) -> dict[str, dict[str, Any]]:
    """Each query and path parameter's bounds, as its ``Parameter`` declares them."""
    found: dict[str, dict[str, Any]] = {}
    for name, field in handler.parsed_fn_signature.parameters.items():
        kwarg = field.kwarg_definition
        if not isinstance(kwarg, ParameterKwarg):
            continue
        bound = {
            key: getattr(kwarg, attr)
            for key, attr in _BOUNDS.items()
            if getattr(kwarg, attr) is not None
        }
        if bound:
            found[kwarg.query or name] = bound
    return found


def _bound(top: Schema, bound: dict[str, Any]) -> None:
    """Put ``bound`` on the schema of the parameter's own type (not on ``null``)."""
    for choice in (*(top.one_of or ()), top):
        if not isinstance(choice, Schema) or choice.type in (None, OpenAPIType.NULL):
            continue
        for key in _BOUNDS:
            fits = key in ("minimum", "maximum") and choice.type == OpenAPIType.INTEGER
            fits |= key not in ("minimum", "maximum") and choice.type == OpenAPIType.STRING
            if key in bound and fits:
                setattr(choice, key, bound[key])
        if choice is not top:  # the bounds live on the union's member
            for key in _BOUNDS:
                setattr(top, key, None)
