"""Client-facing REST bodies: what browsers, the mobile app and the SDK send.

These are strict (unknown fields are refused) because the gateway faces untrusted
clients; the gateway maps them onto the internal service messages, adding what
only the server knows (the caller's identity and address). Replies reuse the
service reply types from :mod:`kalaro.proto.auth` and :mod:`kalaro.proto.wallet`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec


def whole(pattern: str) -> str:
    """A pattern the whole string must match, read alike by Python and JSON Schema.

    Python's ``$`` also matches before a trailing newline, so ``^[a-z]*$`` lets ``"a\\n"``
    through (and on into a NATS subject or a key); ``(?!\\n)`` after it refuses that,
    and means nothing to an ECMAScript reader, whose ``$`` is the end.
    """
    return f"^(?:{pattern})$(?!\\n)"


#: Printable ASCII: what clients send as a seat's entropy (random bytes as hex), and
#: something every reader (``kalaro verify``, web/verify.js) hashes alike.
PRINTABLE_ASCII = whole("[ -~]*")
#: A user search: at least one character that is not a space, from an alphabet of
#: printable characters only (ASCII, Latin-1 and Latin Extended-A, CJK ideographs; no
#: control or format characters), since the auth service refuses anything unprintable.
_SEARCHABLE = "!-~\\xa1-\\xac\\xae-\\u017f\\u4e00-\\u9fff"
SEARCH_TEXT = whole(f"[ {_SEARCHABLE}]*[{_SEARCHABLE}][ {_SEARCHABLE}]*")

Email = Annotated[
    str, msgspec.Meta(min_length=3, max_length=254, extra_json_schema={"format": "email"})
]
Password = Annotated[str, msgspec.Meta(min_length=1, max_length=1024)]
Name = Annotated[str, msgspec.Meta(min_length=1, max_length=40)]
Note = Annotated[str, msgspec.Meta(max_length=500)]
Reason = Annotated[str, msgspec.Meta(min_length=1, max_length=500)]


class _Strict(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    pass


class SignUpBody(_Strict, frozen=True, kw_only=True):
    email: Email
    password: Password
    display_name: Name


class SignInBody(_Strict, frozen=True, kw_only=True):
    email: Email
    password: Password
    # The 6-digit code mailed after a ``code_required`` answer (see docs/protocol.md).
    code: Annotated[str, msgspec.Meta(pattern=whole("[0-9]{6}"))] | None = None


class GoogleSignInBody(_Strict, frozen=True, kw_only=True):
    id_token: Annotated[str, msgspec.Meta(min_length=1, max_length=8192)]


class RefreshBody(_Strict, frozen=True, kw_only=True):
    refresh_token: Annotated[str, msgspec.Meta(min_length=1, max_length=512)]


class TokenBody(_Strict, frozen=True, kw_only=True):
    """A mailed link's token, as its page sends it."""

    token: Annotated[str, msgspec.Meta(min_length=1, max_length=512)]


class PasswordResetBody(_Strict, frozen=True, kw_only=True):
    email: Email


class NewPasswordBody(_Strict, frozen=True, kw_only=True):
    """A reset link's token and the password that replaces the old one."""

    token: Annotated[str, msgspec.Meta(min_length=1, max_length=512)]
    password: Password


class HostAccessBody(_Strict, frozen=True, kw_only=True, tag="host_access", tag_field="kind"):
    """Ask an admin for host access: ``{"kind": "host_access", "note"}``."""

    note: Note = ""


class CreditsBody(_Strict, frozen=True, kw_only=True, tag="credits", tag_field="kind"):
    """Ask an admin for credits: ``{"kind": "credits", "amount", "note"}``."""

    amount: Annotated[int, msgspec.Meta(ge=1, le=1_000_000)]
    note: Note = ""


#: What a player asks of admins, told apart by ``kind`` (the schema says which fields
#: each kind takes, so a request the schema allows is one the service accepts).
ApprovalBody = HostAccessBody | CreditsBody


class DecisionBody(_Strict, frozen=True, kw_only=True):
    approve: bool
    reason: Note = ""


class AdjustBody(_Strict, frozen=True, kw_only=True):
    user_id: Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
    amount: Annotated[int, msgspec.Meta(ge=-1_000_000, le=1_000_000)]
    reason: Reason
    kind: Literal["grant", "adjust"] = "grant"
    # Send the same key again to retry safely (after a timeout, say): it applies once.
    request_key: Annotated[str, msgspec.Meta(max_length=64, pattern=whole("[A-Za-z0-9_-]*"))] = ""


class ErrorDetail(msgspec.Struct, frozen=True, kw_only=True):
    code: str
    message: str


class ErrorBody(msgspec.Struct, frozen=True, kw_only=True):
    """Every error the gateway returns: ``{"error": {"code": ..., "message": ...}}``."""

    error: ErrorDetail


class PublicConfig(msgspec.Struct, frozen=True, kw_only=True):
    """What a client needs before signing in."""

    google_client_id: str
    welcome_grant: int


# --- tables (lobby) ------------------------------------------------------------------
Bet = Annotated[int, msgspec.Meta(ge=0, le=100_000)]


class CreateTableBody(_Strict, frozen=True, kw_only=True):
    game: Literal["tongits", "mahjong", "kawuxing"]
    bet: Bet
    ruleset: Annotated[str, msgspec.Meta(min_length=1, max_length=32)] = "kalaro"
    options: dict[str, Any] = {}
    private: bool = False
    chat_enabled: bool = True
    # Issue 34: public tables only; a Sit below it is refused (``rating_too_low``).
    min_rating: Annotated[float, msgspec.Meta(ge=0, le=10_000)] | None = None


class SitBody(_Strict, frozen=True, kw_only=True):
    seat: Annotated[int, msgspec.Meta(ge=0, le=7)] | None = None
    invite_code: Annotated[str, msgspec.Meta(max_length=64)] | None = None


class ReadyBody(_Strict, frozen=True, kw_only=True):
    ready: bool = True
    entropy: Annotated[str, msgspec.Meta(max_length=64, pattern=PRINTABLE_ASCII)] = ""


class LeaveAfterHandBody(_Strict, frozen=True, kw_only=True):
    leave: bool = True


class RemovePlayerBody(_Strict, frozen=True, kw_only=True):
    seat: Annotated[int, msgspec.Meta(ge=0, le=7)]


class MinRatingBody(_Strict, frozen=True, kw_only=True):
    """Issue 34: the rating a Sit needs at a public table (null: anyone may sit)."""

    min_rating: Annotated[float, msgspec.Meta(ge=0, le=10_000)] | None = None


class ChatSettingBody(_Strict, frozen=True, kw_only=True):
    enabled: bool


# --- practice tables and bots ------------------------------------------------------------
class PracticeBody(_Strict, frozen=True, kw_only=True):
    """``POST /api/practice``: a zero-bet table against bots, in one click."""

    # Any game; one the bots service has no policy for is refused with the reason.
    game: Literal["tongits", "mahjong", "kawuxing"]
    ruleset: Annotated[str, msgspec.Meta(min_length=1, max_length=32)] = "kalaro"
    options: dict[str, Any] = {}


class AddBotBody(_Strict, frozen=True, kw_only=True):
    """``POST /api/tables/{id}/bots``: seat a bot (host; zero-bet tables only)."""

    seat: Annotated[int, msgspec.Meta(ge=0, le=7)] | None = None
