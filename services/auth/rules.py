"""The auth service's account rules: pure functions over plain values and records.

What a valid email, display name or page is; who may hold which role; what a
presented refresh token or verification link is worth; how a Google identity meets an
existing account. No SQL, no clock, no I/O: the time comes in as an argument, and each
rule is tested alone (``tests/unit/auth``). A refusal is a
:class:`~kalaro.bus.ServiceError` whose code callers match on; where the shell needs
to act on the answer (a reused refresh token, a Google link) the rule returns a value
instead of raising.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Literal, NamedTuple

from kalaro.errors import ServiceError
from kalaro.proto import errors as codes
from kalaro.proto.auth import (
    BOT_EMAIL_DOMAIN,
    Role,
    UserProfile,
    UserRegistered,
)
from services.auth.addresses import normalize_email, person_email
from services.auth.passwords import policy_problem
from services.auth.records import Account, EmailToken, RefreshToken

ROLE_ORDER: tuple[Role, ...] = ("player", "host", "admin", "bot")
PLAYER_ROLES: tuple[Role, ...] = ("player",)
BOT_ROLES: tuple[Role, ...] = ("player", "bot")
# Bot passwords are machine-made secrets (see services.bots); anything shorter is a mistake.
MIN_BOT_PASSWORD = 16
ADMIN_ROLES: tuple[Role, ...] = ("player", "host", "admin")

MAX_DISPLAY_NAME = 40
MAX_NOTE = 500
MAX_LIST = 200
# User search: a query longer than an email is no search; a page is what a screen shows;
# deep offsets are a crawl, not a search (narrow the query instead).
MAX_SEARCH_QUERY = 100
MAX_SEARCH_PAGE = 50
MAX_SEARCH_OFFSET = 10_000
# A password this long is not a password; refuse before spending a hash on it.
MAX_SIGN_IN_PASSWORD = 1024

# Same words whether the email is unknown, has no password, or the password is wrong.
BAD_CREDENTIALS = "email or password is incorrect"


def _bad_request(message: str) -> ServiceError:
    return ServiceError(codes.BAD_REQUEST, message)


# --- emails, names, passwords ----------------------------------------------------------


def clean_display_name(raw: str) -> str:
    """A display name with whitespace tidied; ``bad_request`` if empty, long or odd."""
    name = " ".join(unicodedata.normalize("NFC", raw).split())
    if not name:
        raise _bad_request("enter a display name")
    if len(name) > MAX_DISPLAY_NAME:
        raise _bad_request(f"display names have at most {MAX_DISPLAY_NAME} characters")
    if not name.isprintable():
        raise _bad_request("display names cannot contain control characters")
    return name


def is_bot_email(email: str) -> bool:
    return email.endswith(f"@{BOT_EMAIL_DOMAIN}")


class NewAccount(NamedTuple):
    """A sign-up's email and display name, checked and canonical."""

    email: str
    display_name: str


def sign_up_fields(email: str, display_name: str, password: str) -> NewAccount:
    """Check a sign-up: a person's address (not the bots'), a name, a strong password."""
    if is_bot_email(normalize_email(email)):
        raise _bad_request("that email domain is reserved; use your own email address")
    email = person_email(email)
    name = clean_display_name(display_name)
    problem = policy_problem(password, email)
    if problem is not None:
        raise ServiceError(codes.WEAK_PASSWORD, f"password too weak: {problem}")
    return NewAccount(email, name)


def sign_in_password_fits(password: str) -> bool:
    """False for a password too long to be one (answered like a wrong password)."""
    return len(password) <= MAX_SIGN_IN_PASSWORD


def bot_fields(email: str, display_name: str, password: str) -> NewAccount:
    """Check a bot account: an address under the bots' domain, a long machine secret."""
    email = normalize_email(email)
    if not is_bot_email(email):
        raise _bad_request(f"bot accounts live under @{BOT_EMAIL_DOMAIN}")
    name = clean_display_name(display_name)
    if not MIN_BOT_PASSWORD <= len(password) <= MAX_SIGN_IN_PASSWORD:
        raise ServiceError(
            codes.WEAK_PASSWORD,
            f"bot passwords have {MIN_BOT_PASSWORD} to {MAX_SIGN_IN_PASSWORD} characters",
        )
    return NewAccount(email, name)


def admin_fields(email: str, display_name: str, password: str) -> NewAccount:
    """Check the operator's admin account; an empty password means "generate one"."""
    email = normalize_email(email)
    name = clean_display_name(display_name)
    if password:
        problem = policy_problem(password, email)
        if problem is not None:
            raise ServiceError(codes.WEAK_PASSWORD, f"admin password too weak: {problem}")
    return NewAccount(email, name)


def google_display_name(name: str, email: str) -> str:
    """Google's name for the person when it makes a display name, else the email's
    local part (Google names can be empty or too long)."""
    try:
        return clean_display_name(name)
    except ServiceError:
        return email.split("@", 1)[0][:MAX_DISPLAY_NAME]


# --- roles ----------------------------------------------------------------------------


def roles_from_text(text: str) -> tuple[Role, ...]:
    """The stored comma-separated roles, in canonical order (unknown words dropped)."""
    present = set(text.split(","))
    return tuple(role for role in ROLE_ORDER if role in present)


def roles_text(roles: Iterable[str]) -> str:
    """Roles as stored: comma-separated, canonical order, each once."""
    present = set(roles)
    return ",".join(role for role in ROLE_ORDER if role in present)


def with_roles(roles: Iterable[Role], *added: Role) -> tuple[Role, ...]:
    present = {*roles, *added}
    return tuple(role for role in ROLE_ORDER if role in present)


def is_admin(account: Account | None) -> bool:
    return account is not None and "admin" in account.roles


def require_admin(account: Account | None, message: str) -> None:
    """The admin check the service makes itself: a bus request from anywhere else
    must not grant roles or read accounts."""
    if not is_admin(account):
        raise ServiceError(codes.FORBIDDEN, message)


def require_bot(account: Account) -> None:
    """Bot provisioning touches bot accounts only, never a person's."""
    if "bot" not in account.roles:
        raise ServiceError(codes.CONFLICT, "that email belongs to an account that is not a bot")


# --- views ----------------------------------------------------------------------------


def iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds")


def profile(account: Account) -> UserProfile:
    """What anyone is shown of an account: never its credentials."""
    return UserProfile(
        user_id=account.user_id,
        email=account.email,
        display_name=account.display_name,
        roles=account.roles,
        created_at=iso(account.created_at),
        google_linked=account.google_sub is not None,
        email_verified=account.email_verified,
    )


def registered(account: Account) -> UserRegistered:
    """The event that brings a new person's welcome credits (bots never get one)."""
    return UserRegistered(
        user_id=account.user_id, email=account.email, display_name=account.display_name
    )


# --- tokens and links -----------------------------------------------------------------


def hash_token(token: str) -> str:
    """How a refresh token or link is stored and looked up: its sha256, hex."""
    return hashlib.sha256(token.encode()).hexdigest()


def plausible_token(token: str) -> bool:
    """Whether a presented refresh token or link is worth a lookup at all."""
    return 20 <= len(token) <= 512


def refresh_expiry(now_ms: int, refresh_token_days: int) -> int:
    return now_ms + refresh_token_days * 86_400_000


def link_expiry(now_ms: int, verify_token_hours: int) -> int:
    return now_ms + verify_token_hours * 3_600_000


# What a presented refresh token is worth. "reused" is theft (someone kept a copy): the
# shell revokes the whole family, and its access tokens, before refusing.
RefreshVerdict = Literal["usable", "unknown", "reused", "revoked", "expired"]


def judge_refresh(token: RefreshToken | None, now_ms: int) -> RefreshVerdict:
    if token is None:
        return "unknown"
    if token.used_at is not None:
        return "reused"
    if token.revoked_at is not None:
        return "revoked"
    if token.expires_at <= now_ms:
        return "expired"
    return "usable"


def refresh_refusal(verdict: RefreshVerdict) -> ServiceError:
    """The answer to a refresh token that bought no new pair."""
    match verdict:
        case "reused":
            return ServiceError(
                codes.REFRESH_REUSED,
                "this refresh token was already used; every session from that sign-in "
                "has been ended, please sign in again",
            )
        case "expired":
            return ServiceError(codes.TOKEN_EXPIRED, "refresh token has expired; sign in again")
        case "revoked":
            return ServiceError(codes.INVALID_TOKEN, "refresh token was revoked; sign in again")
        case "unknown" | "usable":
            return ServiceError(codes.INVALID_TOKEN, "unknown refresh token")


LinkVerdict = Literal["usable", "unknown", "used", "expired"]


def judge_link(token: EmailToken | None, now_ms: int) -> LinkVerdict:
    """What a presented verification link is worth (each works once, for a while)."""
    if token is None:
        return "unknown"
    if token.used_at is not None:
        return "used"
    if token.expires_at <= now_ms:
        return "expired"
    return "usable"


def link_refusal(verdict: LinkVerdict, kind: str = "verification") -> ServiceError:
    """Why a mailed link (``kind``: verification, password reset) cannot be followed."""
    match verdict:
        case "used":
            return ServiceError(codes.LINK_USED, f"this {kind} link was already used")
        case "expired":
            return ServiceError(
                codes.TOKEN_EXPIRED, f"this {kind} link has expired; ask for a new one"
            )
        case "unknown" | "usable":
            return ServiceError(codes.INVALID_TOKEN, f"this {kind} link is not valid")


# --- Google ---------------------------------------------------------------------------

# How a Google identity with no linked account meets the account holding its email:
# "create" (none), "link" (a verified one: add the Google identity), or "take_over" (an
# unverified one, which anyone who typed the address may have made: its Google-verified
# owner takes it, its password and sessions end).
GoogleLink = Literal["create", "link", "take_over"]


def google_link(by_email: Account | None) -> GoogleLink:
    if by_email is None:
        return "create"
    if by_email.google_sub is not None:
        raise ServiceError(
            codes.CONFLICT, "this email's account is linked to a different Google account"
        )
    return "link" if by_email.email_verified else "take_over"


# --- approvals (host access, credits) ----------------------------------------------


def clean_note(raw: str, what: str = "notes") -> str:
    """A request's note (or an admin's reason), trimmed; refused when too long."""
    note = raw.strip()
    if len(note) > MAX_NOTE:
        raise _bad_request(f"{what} have at most {MAX_NOTE} characters")
    return note


def require_may_request_host(account: Account | None) -> Account:
    """Only an existing person who cannot host yet may ask to."""
    if account is None:
        raise ServiceError(codes.NOT_FOUND, "no such user")
    if "host" in account.roles:
        raise ServiceError(codes.CONFLICT, "you can already host tables")
    if "bot" in account.roles:
        raise ServiceError(codes.FORBIDDEN, "bots do not host tables")
    return account


def check_list_page(limit: int, offset: int) -> None:
    if not 1 <= limit <= MAX_LIST or offset < 0:
        raise _bad_request(f"limit must be 1..{MAX_LIST} and offset at least 0")


# --- user search ----------------------------------------------------------------------


def search_text(raw: str, limit: int, offset: int) -> str:
    """A search's query, whitespace tidied and lower-cased; its page checked."""
    query = " ".join(raw.split()).lower()
    if not query:
        raise _bad_request("enter part of an email or display name to search for")
    if len(query) > MAX_SEARCH_QUERY or not query.isprintable():
        raise _bad_request(f"a search is at most {MAX_SEARCH_QUERY} printable characters")
    if not 1 <= limit <= MAX_SEARCH_PAGE:
        raise _bad_request(f"limit must be 1..{MAX_SEARCH_PAGE}")
    if not 0 <= offset <= MAX_SEARCH_OFFSET:
        raise _bad_request(f"offset must be 0..{MAX_SEARCH_OFFSET}; narrow the search instead")
    return query


def like_escape(text: str) -> str:
    """``text`` as a literal inside a LIKE pattern (``%`` and ``_`` match themselves)."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
