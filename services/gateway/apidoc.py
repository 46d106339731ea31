"""The OpenAPI document tells the truth about errors: each operation lists every error
status the gateway can answer it with, each with the one error body the gateway sends
(``{"error": {"code", "message"}}``, see ``app.py``), not Litestar's default shape.

Applied to the app's route handlers before the document is first built, so the live
``/schema`` and ``docs/schema/openapi.json`` are the same document.
"""

from __future__ import annotations

import msgspec
from litestar import Litestar
from litestar.handlers import HTTPRouteHandler
from litestar.openapi.datastructures import ResponseSpec
from litestar.openapi.spec import OpenAPIHeader, Schema
from litestar.openapi.spec.enums import OpenAPIType
from litestar.routes import HTTPRoute

from kalaro.proto import api
from kalaro.proto.api import ErrorBody

_DESCRIPTIONS = {
    400: "Bad request: a parameter or the body is malformed, of the wrong type or out "
    "of its limits (code `bad_request`), or the service refused it as invalid",
    401: "Not signed in: no, an invalid or an expired access token, or wrong "
    "credentials (codes `unauthorized`, `invalid_token`, `token_expired`, "
    "`invalid_credentials`, `refresh_token_reused`; on sign-in from a new device while "
    "the account is under attack `code_required` or `code_invalid`)",
    403: "Forbidden: the caller may not do this (code `forbidden`)",
    404: "No such resource, or one the caller may not see (code `not_found`)",
    409: "Conflict with the current state (codes `conflict`, `email_taken`, "
    "`already_decided`, `insufficient_funds`)",
    413: "The request body is larger than the gateway accepts",
    429: "Too many requests from this account or address (code `throttled`); "
    "`Retry-After` says how many seconds to wait",
    503: "A service behind the gateway did not answer in time (code `unavailable`)",
}

#: Routes answered by the gateway alone: only the address rate limit applies.
_LOCAL = frozenset({"/api/config", "/api/schema/messages"})


def _statuses(handler: HTTPRouteHandler, path: str) -> list[int]:
    if path == "/healthz":
        return []  # a probe is never rate-limited
    if path in _LOCAL:
        return [429]
    statuses = {400, 401, 403, 404, 409, 429, 503}
    if handler.parsed_data_field is not None:
        statuses.add(413)
    return sorted(statuses)


def _response(status: int) -> ResponseSpec:
    return ResponseSpec(
        data_container=ErrorBody, description=_DESCRIPTIONS[status], generate_examples=False
    )


def document_errors(app: Litestar) -> None:
    """Give every documented operation its error statuses and the gateway's error body."""
    for route in app.routes:
        if not isinstance(route, HTTPRoute):
            continue
        for handler in route.route_handlers:
            if not handler.resolve_include_in_schema():
                continue
            responses = {s: _response(s) for s in _statuses(handler, route.path)}
            handler.responses = {**responses, **(handler.responses or {})}


def document_limits(app: Litestar) -> None:
    """What Litestar leaves out of the built document: request bodies refuse unknown
    fields (``additionalProperties: false``), an optional integer parameter keeps its
    lower bound, and a 429 names its ``Retry-After`` header. Edits the app's own document
    object, which ``/schema`` serves and ``services.gateway.schema`` writes."""
    doc = app.openapi_schema
    strict = {
        name
        for name, value in vars(api).items()
        if isinstance(value, type)
        and issubclass(value, msgspec.Struct)
        and value.__struct_config__.forbid_unknown_fields
    }
    for name, schema in (doc.components.schemas or {}).items() if doc.components else ():
        if name in strict:
            schema.additional_properties = False
    retry_after = OpenAPIHeader(
        schema=Schema(type=OpenAPIType.INTEGER, minimum=1),
        description="Seconds to wait before trying again",
    )
    for item in (doc.paths or {}).values():
        for operation in (item.get, item.put, item.post, item.patch, item.delete):
            if operation is None:
                continue
            for parameter in operation.parameters or ():
                bound = _LOWER_BOUNDS.get(getattr(parameter, "name", ""))
                top = getattr(parameter, "schema", None)
                if bound is None or not isinstance(top, Schema):
                    continue
                for choice in (*(top.one_of or ()), top):
                    if isinstance(choice, Schema) and choice.type == OpenAPIType.INTEGER:
                        choice.minimum = bound
            limited = (operation.responses or {}).get("429")
            if limited is not None and hasattr(limited, "headers"):
                limited.headers = {**(limited.headers or {}), "Retry-After": retry_after}


#: Lower bounds of optional integer parameters, which Litestar drops from the document.
_LOWER_BOUNDS = {"before": 0}
