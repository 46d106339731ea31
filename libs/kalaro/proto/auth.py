"""Messages of the auth service (subjects ``auth.*``).

Requests are imperative (``SignUp``), replies are nouns (``TokenPair``), events
are past tense (``UserRegistered``). ``address`` is the client's IP as the gateway
saw it: the auth service throttles sign-in per account and per address.
"""

from __future__ import annotations

from typing import Literal

import msgspec

Role = Literal["player", "host", "admin", "bot"]
#: Bot accounts live under this domain only: reserved (``.invalid`` never resolves), so
#: no person can sign up with it and take a bot's name first.
BOT_EMAIL_DOMAIN = "bots.kalaro.invalid"


class UserProfile(msgspec.Struct, frozen=True, kw_only=True):
    user_id: str
    email: str
    display_name: str
    roles: tuple[Role, ...]
    created_at: str
    google_linked: bool = False
    # The owner of the email proved it (followed the link we mailed, or Google said so).
    email_verified: bool = False


class TokenPair(msgspec.Struct, frozen=True, kw_only=True):
    access_token: str
    refresh_token: str
    expires_in: int
    user: UserProfile
    token_type: str = "Bearer"


class SignUp(msgspec.Struct, frozen=True, kw_only=True):
    email: str
    password: str
    display_name: str
    address: str = ""


class SignUpAccepted(msgspec.Struct, frozen=True, kw_only=True):
    """The answer to every well-formed sign-up, whether or not the email was known: the
    rest happens by email (a verification link, or "you already have an account")."""

    status: Literal["check_email"] = "check_email"


class VerifyEmail(msgspec.Struct, frozen=True, kw_only=True):
    token: str


class EmailVerified(msgspec.Struct, frozen=True, kw_only=True):
    user_id: str
    email: str
    email_verified: bool = True


class ResendVerification(msgspec.Struct, frozen=True, kw_only=True):
    """Mail a new verification link: to the holder of an expired one (``token``, which is
    spent by this), or to a signed-in account (``user_id``, set by the gateway from the
    access token). Exactly one of the two."""

    token: str = ""
    user_id: str = ""


class LinkResent(msgspec.Struct, frozen=True, kw_only=True):
    """``sent``: a new link is on its way to the account's address; ``already_verified``:
    nothing to do, sign in."""

    status: Literal["sent", "already_verified"]


class RequestPasswordReset(msgspec.Struct, frozen=True, kw_only=True):
    """Mail a password reset link to this address if an account has it. The answer is
    the same either way (it reveals nothing)."""

    email: str


class PasswordResetRequested(msgspec.Struct, frozen=True, kw_only=True):
    status: Literal["check_email"] = "check_email"


class ResetPassword(msgspec.Struct, frozen=True, kw_only=True):
    """Follow a reset link: ``password`` replaces the account's password (or gives a
    Google-only account one), every other session ends, and the reply signs in."""

    token: str
    password: str


class SignIn(msgspec.Struct, frozen=True, kw_only=True):
    email: str
    password: str
    address: str = ""
    # The caller's device cookie (from an earlier sign-in), as the gateway read it: a
    # device the account knows is not held up by failures from elsewhere.
    device: str = ""
    # The emailed one-time code, when the answer was ``code_required``.
    code: str = ""


class SignedIn(TokenPair, frozen=True, kw_only=True):
    """The answer to a password sign-in: the pair, and the device cookie to set (the
    gateway moves it into an HttpOnly cookie; it never reaches the page's script)."""

    device_token: str = ""


class GoogleSignIn(msgspec.Struct, frozen=True, kw_only=True):
    id_token: str
    address: str = ""


class Refresh(msgspec.Struct, frozen=True, kw_only=True):
    refresh_token: str


class SignOut(msgspec.Struct, frozen=True, kw_only=True):
    refresh_token: str


class SignedOut(msgspec.Struct, frozen=True, kw_only=True):
    signed_out: bool


class SessionRevoked(msgspec.Struct, frozen=True, kw_only=True):
    """Broadcast on ``auth.revoked``: every access token of this session is void."""

    session_id: str
    user_id: str


class GetProfile(msgspec.Struct, frozen=True, kw_only=True):
    user_id: str


class GetPublicKeys(msgspec.Struct, frozen=True, kw_only=True):
    """Ask for the keys that verify access tokens (a JWKS document)."""


class PublicKeys(msgspec.Struct, frozen=True, kw_only=True):
    keys: tuple[dict[str, str], ...]
    issuer: str
    audience: str
    algorithms: tuple[str, ...]


class UserRegistered(msgspec.Struct, frozen=True, kw_only=True):
    """Published on the EVENTS stream when a person's account is ready for its welcome
    grant: its email verified (the mailed link, a password reset, or Google at sign-up),
    or the operator's admin created. At most once per account (JetStream deduplicates
    by user id; the wallet's grant is keyed by it)."""

    user_id: str
    email: str
    display_name: str


class CreateBot(msgspec.Struct, frozen=True, kw_only=True):
    """Bots service → auth (``auth.bots.create``, internal: the gateway never maps it).

    Creates the bot account (roles player and bot) or, if it exists, makes ``password``
    its password, so the bots service can always sign its bots in with what it holds.
    ``email`` must be under :data:`BOT_EMAIL_DOMAIN`. Bots get no welcome grant.
    """

    email: str
    display_name: str
    password: str


class SearchUsers(msgspec.Struct, frozen=True, kw_only=True):
    """An admin looks for accounts by email or display name (``auth.users.search``).

    ``query`` matches anywhere in either, case-insensitively (prefix matches are listed
    first). ``admin_id`` is checked against the database too: the gateway already
    requires the admin role, but an account demoted since its token was issued must not
    keep searching.
    """

    admin_id: str
    query: str
    limit: int = 20
    offset: int = 0


class UserSearchResult(msgspec.Struct, frozen=True, kw_only=True):
    """A page of matching accounts (profiles only: never a password hash or Google id)."""

    users: tuple[UserProfile, ...]
    # Pass as ``offset`` for the next page; None when this was the last one.
    next_offset: int | None = None
