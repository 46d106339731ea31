"""Stable error codes shared by services, the gateway and clients.

A service raises :class:`kalaro.bus.ServiceError` with one of these codes; the bus
carries it as an :class:`ErrorReply`; the gateway maps the code to an HTTP status.
"""

from __future__ import annotations

import msgspec

BAD_REQUEST = "bad_request"
UNAUTHORIZED = "unauthorized"
TOKEN_EXPIRED = "token_expired"
INVALID_TOKEN = "invalid_token"
FORBIDDEN = "forbidden"
NOT_FOUND = "not_found"
CONFLICT = "conflict"
EMAIL_TAKEN = "email_taken"
WEAK_PASSWORD = "weak_password"
INVALID_CREDENTIALS = "invalid_credentials"
REFRESH_REUSED = "refresh_token_reused"
THROTTLED = "throttled"
INSUFFICIENT_FUNDS = "insufficient_funds"
ALREADY_DECIDED = "already_decided"
UNAVAILABLE = "unavailable"
INTERNAL = "internal"

HTTP_STATUS: dict[str, int] = {
    BAD_REQUEST: 400,
    WEAK_PASSWORD: 400,
    UNAUTHORIZED: 401,
    TOKEN_EXPIRED: 401,
    INVALID_TOKEN: 401,
    INVALID_CREDENTIALS: 401,
    REFRESH_REUSED: 401,
    FORBIDDEN: 403,
    NOT_FOUND: 404,
    CONFLICT: 409,
    EMAIL_TAKEN: 409,
    ALREADY_DECIDED: 409,
    INSUFFICIENT_FUNDS: 409,
    THROTTLED: 429,
    UNAVAILABLE: 503,
    INTERNAL: 500,
}


def http_status(code: str) -> int:
    """HTTP status for an error code; unknown codes are server errors."""
    return HTTP_STATUS.get(code, 500)


class ErrorReply(msgspec.Struct, frozen=True):
    """The body of a failed request/reply; the header ``Kalaro-Error`` is set too."""

    code: str
    message: str
