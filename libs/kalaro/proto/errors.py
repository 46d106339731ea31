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
# Sitting at a table with a bet needs a verified email address.
EMAIL_UNVERIFIED = "email_unverified"
# A mailed link (email verification, password reset) that was already followed once.
LINK_USED = "link_used"
THROTTLED = "throttled"
INSUFFICIENT_FUNDS = "insufficient_funds"
ALREADY_DECIDED = "already_decided"
# An approval asked to move where its state machine has no way (withdraw a decided
# request, apply one not approved): services/auth/approval_states.py.
ILLEGAL_TRANSITION = "illegal_transition"
UNAVAILABLE = "unavailable"
# The host removed this player from the table; they sit again only if the host allows.
REMOVED_FROM_TABLE = "removed_from_table"
# Allow-back for a player the host never removed (or already allowed back).
NOT_REMOVED = "not_removed"
# Sitting here too would commit more credits than the player has, counting every
# table where they already sit with a bet (the message names those tables).
COMMITTED_ELSEWHERE = "committed_elsewhere"
# The player already has as many open practice tables as one player may.
PRACTICE_LIMIT = "practice_limit"
INTERNAL = "internal"
# Issue 34: a Sit at a table whose host asks a higher rating in its game than the caller's.
RATING_TOO_LOW = "rating_too_low"
# The action named a version the hand has moved past (or not reached): resync, retry.
STALE_VERSION = "stale_version"
HAND_CANCELLED = "hand_cancelled"
# WebSocket only: a frame about a table this socket has not subscribed to.
NOT_SUBSCRIBED = "not_subscribed"
# WebSocket only: the socket sent frames faster than its budget.
RATE_LIMITED = "rate_limited"
# Sign-in from a device the account does not know, while the account is under attack:
# the answer names the emailed one-time code to send (``code_required``), or says the
# code sent was wrong or has expired (``code_invalid``).
CODE_REQUIRED = "code_required"
CODE_INVALID = "code_invalid"
# HTTP only: the route has no such method (the answer's ``Allow`` lists those it has).
METHOD_NOT_ALLOWED = "method_not_allowed"
# HTTP only: a body that is not ``application/json``; it is not read.
UNSUPPORTED_MEDIA_TYPE = "unsupported_media_type"
# Client SDK only: the gateway answered an error without the JSON error body.
HTTP_ERROR = "http_error"

HTTP_STATUS: dict[str, int] = {
    BAD_REQUEST: 400,
    WEAK_PASSWORD: 400,
    UNAUTHORIZED: 401,
    TOKEN_EXPIRED: 401,
    INVALID_TOKEN: 401,
    INVALID_CREDENTIALS: 401,
    REFRESH_REUSED: 401,
    CODE_REQUIRED: 401,
    CODE_INVALID: 401,
    LINK_USED: 410,
    FORBIDDEN: 403,
    EMAIL_UNVERIFIED: 403,
    REMOVED_FROM_TABLE: 403,
    RATING_TOO_LOW: 403,
    NOT_FOUND: 404,
    METHOD_NOT_ALLOWED: 405,
    CONFLICT: 409,
    EMAIL_TAKEN: 409,
    ALREADY_DECIDED: 409,
    ILLEGAL_TRANSITION: 409,
    INSUFFICIENT_FUNDS: 409,
    NOT_REMOVED: 409,
    COMMITTED_ELSEWHERE: 409,
    PRACTICE_LIMIT: 409,
    STALE_VERSION: 409,
    HAND_CANCELLED: 409,
    NOT_SUBSCRIBED: 409,
    UNSUPPORTED_MEDIA_TYPE: 415,
    THROTTLED: 429,
    RATE_LIMITED: 429,
    UNAVAILABLE: 503,
    INTERNAL: 500,
}


#: A service refused the request with a code this gateway does not know (a newer
#: service, mid-upgrade): a deliberate refusal, not a fault of ours, so not a 500.
UNKNOWN_CODE_STATUS = 400


def http_status(code: str) -> int:
    """HTTP status for an error code; a code not listed here is :data:`UNKNOWN_CODE_STATUS`."""
    return HTTP_STATUS.get(code, UNKNOWN_CODE_STATUS)


class ErrorReply(msgspec.Struct, frozen=True, kw_only=True):
    """The body of a failed request/reply; the header ``Kalaro-Error`` is set too."""

    code: str
    message: str
    # The accounts the error is about, as data (e.g. who is short of credits), so no
    # caller parses them out of ``message``.
    user_ids: tuple[str, ...] = ()
    # Seconds until a refused caller may try again (``throttled``); 0: not said.
    retry_after: int = 0
