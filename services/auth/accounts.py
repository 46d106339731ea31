"""What the auth service does, as plain async functions with their dependencies passed in.

No NATS here: :mod:`services.auth.service` decodes requests and calls these; tests
call them over the bus against real Redis and SQL. Failures are
:class:`~kalaro.bus.ServiceError` with a code from :mod:`kalaro.proto.errors`.

Tokens: an access JWT (short-lived, Ed25519, see :mod:`kalaro.tokens`) plus an opaque
refresh token stored as its sha256. Every refresh rotates: the presented token is
marked used and a new one joins the same *family*. Presenting a used token again
means someone kept a copy, so the whole family is revoked (both the thief's and the
owner's sessions end; the owner signs in again).
"""

from __future__ import annotations

import hashlib
import logging
import re
import secrets
import time
import unicodedata
import uuid
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, NamedTuple, cast

import sqlalchemy as sa
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from kalaro.bus import ServiceError
from kalaro.proto import errors as codes
from kalaro.proto.auth import (
    BOT_EMAIL_DOMAIN,
    CreateBot,
    DecideHostRequest,
    EmailVerified,
    GetProfile,
    GoogleSignIn,
    HostRequest,
    HostRequestList,
    ListHostRequests,
    PublicKeys,
    Refresh,
    RequestHost,
    RequestStatus,
    Role,
    SignedOut,
    SignIn,
    SignOut,
    SignUp,
    SignUpAccepted,
    TokenPair,
    UserProfile,
    UserRegistered,
    VerifyEmail,
)
from kalaro.settings import Settings
from kalaro.tokens import ALLOWED_ALGORITHMS, TokenError, issue_access_token, public_jwks
from services.auth.google import GoogleVerifier
from services.auth.mail import Mailer
from services.auth.passwords import Passwords, generate_password, policy_problem
from services.auth.schema import email_tokens, host_requests, refresh_tokens, users
from services.auth.throttle import Throttle

log = logging.getLogger("services.auth")

ROLE_ORDER: tuple[Role, ...] = ("player", "host", "admin", "bot")
BOT_ROLES: tuple[Role, ...] = ("player", "bot")
# Bot passwords are machine-made secrets (see services.bots); anything shorter is a mistake.
MIN_BOT_PASSWORD = 16
ADMIN_ROLES: tuple[Role, ...] = ("player", "host", "admin")

MAX_DISPLAY_NAME = 40
MAX_NOTE = 500
MAX_LIST = 200
# A password this long is not a password; refuse before spending a hash on it.
MAX_SIGN_IN_PASSWORD = 1024

_EMAIL = re.compile(r"^[^@\s]{1,64}@(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$")
# Same words whether the email is unknown, has no password, or the password is wrong.
_BAD_CREDENTIALS = "email or password is incorrect"

Publisher = Callable[[UserRegistered], Awaitable[None]]
# Revokes a session's access tokens at once: (session id, user id).
Revoker = Callable[[str, str], Awaitable[None]]


@dataclass(frozen=True)
class AuthDeps:
    """Everything the auth functions need, built once per process (see service.bootstrap)."""

    engine: AsyncEngine
    passwords: Passwords
    throttle: Throttle
    signing_key: Ed25519PrivateKey
    settings: Settings
    google: GoogleVerifier | None = None
    on_registered: Publisher | None = None
    on_revoked: Revoker | None = None
    clock: Callable[[], float] = time.time
    mailer: Mailer | None = None
    jwks: tuple[dict[str, str], ...] = field(init=False)
    kid: str = field(init=False)

    def __post_init__(self) -> None:
        jwks = tuple(public_jwks(self.signing_key))
        object.__setattr__(self, "jwks", jwks)
        object.__setattr__(self, "kid", jwks[0]["kid"])
        if self.mailer is None:
            object.__setattr__(self, "mailer", Mailer(self.settings))

    def now_ms(self) -> int:
        return int(self.clock() * 1000)


# --- small helpers ---------------------------------------------------------------------


def _bad_request(message: str) -> ServiceError:
    return ServiceError(codes.BAD_REQUEST, message)


def normalize_email(raw: str) -> str:
    """The canonical (trimmed, lower-cased) form of an email, or ``bad_request``."""
    email = raw.strip().lower()
    if len(email) > 254 or not email.isprintable() or not _EMAIL.match(email):
        raise _bad_request("enter a valid email address, like name@example.com")
    return email


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


def _iso(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds")


def _roles(text: str) -> tuple[Role, ...]:
    present = set(text.split(","))
    return tuple(role for role in ROLE_ORDER if role in present)


def _roles_text(roles: Iterable[str]) -> str:
    present = set(roles)
    return ",".join(role for role in ROLE_ORDER if role in present)


def _profile(row: Any) -> UserProfile:
    return UserProfile(
        user_id=row.id,
        email=row.email,
        display_name=row.display_name,
        roles=_roles(row.roles),
        created_at=_iso(row.created_at),
        google_linked=row.google_sub is not None,
        email_verified=bool(row.email_verified),
    )


def _hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


async def _user_where(conn: AsyncConnection, clause: Any, *, lock: bool = False) -> Any:
    query = sa.select(users).where(clause)
    if lock:
        # Row lock on PostgreSQL; SQLite ignores it (BEGIN IMMEDIATE already serialises).
        query = query.with_for_update()
    return (await conn.execute(query)).first()


async def _announce(publish: Publisher | None, row: Any) -> None:
    """Tell the rest of the system about a new account; never fail the sign-up over it."""
    if publish is None:
        return
    try:
        await publish(UserRegistered(row.id, row.email, row.display_name))
    except Exception:
        # The wallet also grants the welcome credits on demand, so this is recoverable.
        log.warning("could not publish UserRegistered for %s", row.id, exc_info=True)


async def _issue_pair(
    conn: AsyncConnection, deps: AuthDeps, row: Any, family_id: str | None = None
) -> TokenPair:
    """A fresh access token and a refresh token (stored hashed in this transaction)."""
    settings = deps.settings
    refresh = secrets.token_urlsafe(32)  # 256 bits
    now_ms = deps.now_ms()
    family_id = family_id or uuid.uuid4().hex
    await conn.execute(
        refresh_tokens.insert().values(
            token_hash=_hash_token(refresh),
            family_id=family_id,
            user_id=row.id,
            created_at=now_ms,
            expires_at=now_ms + settings.refresh_token_days * 86_400_000,
        )
    )
    access = issue_access_token(
        deps.signing_key,
        deps.kid,
        row.id,
        _roles(row.roles),
        row.display_name,
        settings.jwt_issuer,
        settings.jwt_audience,
        settings.access_token_seconds,
        now=deps.clock(),
        session=family_id,  # what signing out (or reuse) revokes
    )
    return TokenPair(
        access_token=access,
        refresh_token=refresh,
        expires_in=settings.access_token_seconds,
        user=_profile(row),
    )


# --- sign up, sign in ----------------------------------------------------------------


def is_bot_email(email: str) -> bool:
    return email.endswith(f"@{BOT_EMAIL_DOMAIN}")


def _link_base(settings: Settings) -> str:
    return (settings.public_url or f"http://{settings.http_host}:{settings.http_port}").rstrip("/")


async def _new_verify_link(conn: AsyncConnection, deps: AuthDeps, user_id: str) -> str:
    """A single-use verification link for ``user_id`` (its token stored hashed)."""
    token = secrets.token_urlsafe(32)
    now_ms = deps.now_ms()
    await conn.execute(
        email_tokens.insert().values(
            token_hash=_hash_token(token),
            user_id=user_id,
            created_at=now_ms,
            expires_at=now_ms + deps.settings.verify_token_hours * 3_600_000,
        )
    )
    return f"{_link_base(deps.settings)}/api/auth/verify?token={token}"


async def _mail(deps: AuthDeps, to: str, subject: str, body: str, link: str = "") -> None:
    if deps.mailer is not None:
        await deps.mailer.send(to, subject, body, link=link)


async def _mail_verify(deps: AuthDeps, email: str, name: str, link: str) -> None:
    hours = deps.settings.verify_token_hours
    body = (
        f"Hello {name},\n\nWelcome to KaLaro. Confirm that this is your email address by "
        f"opening this link (it works once, within {hours} hours):\n\n{link}\n\n"
        "If you did not create a KaLaro account, ignore this mail: nobody can keep an "
        "address that is not theirs.\n"
    )
    await _mail(deps, email, "Confirm your KaLaro email address", body, link)


async def _mail_already(deps: AuthDeps, email: str) -> None:
    base = _link_base(deps.settings)
    body = (
        "Hello,\n\nSomeone (perhaps you) tried to create a KaLaro account with this email "
        "address, but you already have an account. Nothing was changed.\n\n"
        f"Sign in at {base}/ with your password, or with Google if you use it.\n"
    )
    await _mail(deps, email, "You already have a KaLaro account", body)


async def sign_up(deps: AuthDeps, req: SignUp) -> SignUpAccepted:
    """Create an unverified account and mail it a verification link.

    The answer is the same whether or not the email is known (so sign-up reveals
    nothing): for a known email nothing changes and its owner is told by mail. The
    caller signs in with the password afterwards; a squatter's password for someone
    else's address then fails exactly like a wrong one.
    """
    email = normalize_email(req.email)
    if is_bot_email(email):
        raise _bad_request("that email domain is reserved; use your own email address")
    name = clean_display_name(req.display_name)
    problem = policy_problem(req.password, email)
    if problem is not None:
        raise ServiceError(codes.WEAK_PASSWORD, f"password too weak: {problem}")
    # Hashed whether or not the email is known: both answers take the same time.
    password_hash = await deps.passwords.hash(req.password)
    user_id = uuid.uuid4().hex
    link = ""
    try:
        async with deps.engine.begin() as conn:
            if await _user_where(conn, users.c.email == email) is None:
                await conn.execute(
                    users.insert().values(
                        id=user_id,
                        email=email,
                        display_name=name,
                        password_hash=password_hash,
                        roles=_roles_text(["player"]),
                        created_at=deps.now_ms(),
                        email_verified=False,
                    )
                )
                link = await _new_verify_link(conn, deps, user_id)
    except IntegrityError:
        link = ""  # a concurrent sign-up took the address first: it is known now
    if not link:
        log.info("sign-up for a known email")
        await _mail_already(deps, email)
        return SignUpAccepted()
    async with deps.engine.connect() as conn:
        row = await _user_where(conn, users.c.id == user_id)
    log.info("signed up %s (unverified)", user_id)
    await _mail_verify(deps, email, name, link)
    await _announce(deps.on_registered, row)
    return SignUpAccepted()


async def verify_email(deps: AuthDeps, req: VerifyEmail) -> EmailVerified:
    """Follow a verification link: mark its account verified; each link works once."""
    if not _plausible_refresh_token(req.token):
        raise ServiceError(codes.INVALID_TOKEN, "this verification link is not valid")
    now_ms = deps.now_ms()
    async with deps.engine.begin() as conn:
        token = (
            await conn.execute(
                sa.select(email_tokens)
                .where(email_tokens.c.token_hash == _hash_token(req.token))
                .with_for_update()
            )
        ).first()
        if token is None:
            raise ServiceError(codes.INVALID_TOKEN, "this verification link is not valid")
        if token.used_at is not None:
            raise ServiceError(codes.INVALID_TOKEN, "this verification link was already used")
        if token.expires_at <= now_ms:
            raise ServiceError(
                codes.TOKEN_EXPIRED, "this verification link has expired; sign up again"
            )
        marked = await conn.execute(
            email_tokens.update()
            .where(email_tokens.c.token_hash == token.token_hash, email_tokens.c.used_at.is_(None))
            .values(used_at=now_ms)
        )
        if marked.rowcount != 1:
            raise ServiceError(codes.INVALID_TOKEN, "this verification link was already used")
        await conn.execute(
            users.update().where(users.c.id == token.user_id).values(email_verified=True)
        )
        row = await _user_where(conn, users.c.id == token.user_id)
    log.info("verified the email of %s", row.id)
    return EmailVerified(user_id=row.id, email=row.email)


async def sign_in(deps: AuthDeps, req: SignIn) -> TokenPair:
    email = normalize_email(req.email)
    address = req.address.strip()[:64]
    await deps.throttle.attempt(email, address)
    if len(req.password) > MAX_SIGN_IN_PASSWORD:
        raise ServiceError(codes.INVALID_CREDENTIALS, _BAD_CREDENTIALS)
    async with deps.engine.connect() as conn:
        row = await _user_where(conn, users.c.email == email)
    stored: str | None = row.password_hash if row is not None else None
    # verify() checks a dummy hash when there is no stored one: same answer, same time.
    matched = await deps.passwords.verify(stored, req.password)
    if not matched or stored is None:
        raise ServiceError(codes.INVALID_CREDENTIALS, _BAD_CREDENTIALS)
    await deps.throttle.succeeded(email, address)
    # Parameters were raised since this hash was made: upgrade it while we have the
    # plain password in hand (hashed before the transaction, which stays short).
    upgraded = (
        await deps.passwords.hash(req.password) if deps.passwords.needs_rehash(stored) else None
    )
    async with deps.engine.begin() as conn:
        if upgraded is not None:
            await conn.execute(
                users.update().where(users.c.id == row.id).values(password_hash=upgraded)
            )
        return await _issue_pair(conn, deps, row)


# --- Google ---------------------------------------------------------------------------


async def google_sign_in(deps: AuthDeps, req: GoogleSignIn) -> TokenPair:
    """Sign in with a Google ID token: the account linked to its ``sub``, else the
    account with its (Google-verified) email, which gets linked, else a new account.

    Only a *verified* password account is linked as it is. An unverified one may have
    been made by anyone who typed this address, so its Google-verified owner takes it
    over: the password stops working and every session of it ends.
    """
    if deps.google is None:
        raise ServiceError(codes.UNAVAILABLE, "Google sign-in is not configured on this server")
    try:
        identity = deps.google.verify(req.id_token, now=deps.clock())
    except TokenError as exc:
        raise ServiceError(exc.code, exc.message) from exc
    email = normalize_email(identity.email)
    try:
        name = clean_display_name(identity.name)
    except ServiceError:
        name = email.split("@", 1)[0][:MAX_DISPLAY_NAME]
    for attempt in range(2):
        created = False
        taken_over: list[str] = []
        try:
            async with deps.engine.begin() as conn:
                row = await _user_where(conn, users.c.google_sub == identity.sub)
                if row is None:
                    row = await _user_where(conn, users.c.email == email, lock=True)
                    if row is not None and row.google_sub is not None:
                        raise ServiceError(
                            codes.CONFLICT,
                            "this email's account is linked to a different Google account",
                        )
                    if row is not None and row.email_verified:
                        await conn.execute(
                            users.update()
                            .where(users.c.id == row.id)
                            .values(google_sub=identity.sub)
                        )
                        log.info("linked Google account to %s", row.id)
                        user_id = row.id
                    elif row is not None:
                        taken_over = await _take_over(conn, deps, row.id, identity.sub, name)
                        log.warning("Google-verified owner took over unverified account %s", row.id)
                        user_id = row.id
                    else:
                        user_id = uuid.uuid4().hex
                        await conn.execute(
                            users.insert().values(
                                id=user_id,
                                email=email,
                                display_name=name,
                                password_hash=None,
                                google_sub=identity.sub,
                                roles=_roles_text(["player"]),
                                created_at=deps.now_ms(),
                                email_verified=True,
                            )
                        )
                        created = True
                        log.info("signed up %s with Google", user_id)
                    row = await _user_where(conn, users.c.id == user_id)
                pair = await _issue_pair(conn, deps, row)
        except IntegrityError as exc:
            # A concurrent first sign-in with the same identity won: go again, which
            # now finds that account.
            if attempt == 0:
                continue
            raise ServiceError(codes.CONFLICT, "could not link this Google account") from exc
        if created:
            await _announce(deps.on_registered, row)
        for family_id in taken_over:
            try:
                await _revoke_access(deps, family_id, row.id)
            except Exception:
                log.exception("could not revoke the access tokens of family %s", family_id)
        return pair
    raise AssertionError("unreachable")  # pragma: no cover


async def _take_over(
    conn: AsyncConnection, deps: AuthDeps, user_id: str, sub: str, name: str
) -> list[str]:
    """Give an unverified account to its Google-verified owner: link it, mark it
    verified, drop the password, void its links and revoke its refresh tokens. The
    families whose access tokens must be revoked too are returned."""
    now_ms = deps.now_ms()
    await conn.execute(
        users.update()
        .where(users.c.id == user_id)
        .values(google_sub=sub, email_verified=True, password_hash=None, display_name=name)
    )
    await conn.execute(
        email_tokens.update()
        .where(email_tokens.c.user_id == user_id, email_tokens.c.used_at.is_(None))
        .values(used_at=now_ms)
    )
    families = (
        (
            await conn.execute(
                sa.select(refresh_tokens.c.family_id)
                .where(refresh_tokens.c.user_id == user_id, refresh_tokens.c.revoked_at.is_(None))
                .distinct()
            )
        )
        .scalars()
        .all()
    )
    await conn.execute(
        refresh_tokens.update()
        .where(refresh_tokens.c.user_id == user_id, refresh_tokens.c.revoked_at.is_(None))
        .values(revoked_at=now_ms)
    )
    return list(families)


# --- refresh, sign out -----------------------------------------------------------------


def _plausible_refresh_token(token: str) -> bool:
    return 20 <= len(token) <= 512


async def _revoke_family(conn: AsyncConnection, family_id: str, now_ms: int) -> None:
    await conn.execute(
        refresh_tokens.update()
        .where(refresh_tokens.c.family_id == family_id, refresh_tokens.c.revoked_at.is_(None))
        .values(revoked_at=now_ms)
    )


async def refresh(deps: AuthDeps, req: Refresh) -> TokenPair:
    """Trade a refresh token for a new pair; a second use of one token is theft."""
    if not _plausible_refresh_token(req.refresh_token):
        raise ServiceError(codes.INVALID_TOKEN, "unknown refresh token")
    token_hash = _hash_token(req.refresh_token)
    now_ms = deps.now_ms()
    # Decided inside the transaction, raised after it commits: revoking a family on
    # reuse must stick even though the request fails.
    outcome: str
    pair: TokenPair | None = None
    async with deps.engine.begin() as conn:
        token = (
            await conn.execute(
                sa.select(refresh_tokens)
                .where(refresh_tokens.c.token_hash == token_hash)
                .with_for_update()
            )
        ).first()
        if token is None:
            outcome = "unknown"
        elif token.used_at is not None:
            await _revoke_family(conn, token.family_id, now_ms)
            outcome = "reused"
        elif token.revoked_at is not None:
            outcome = "revoked"
        elif token.expires_at <= now_ms:
            outcome = "expired"
        else:
            # Compare-and-set on used_at: of two racing uses exactly one wins; the
            # other is, by definition, a reuse.
            marked = await conn.execute(
                refresh_tokens.update()
                .where(
                    refresh_tokens.c.token_hash == token_hash,
                    refresh_tokens.c.used_at.is_(None),
                    refresh_tokens.c.revoked_at.is_(None),
                )
                .values(used_at=now_ms)
            )
            if marked.rowcount != 1:
                await _revoke_family(conn, token.family_id, now_ms)
                outcome = "reused"
            else:
                row = await _user_where(conn, users.c.id == token.user_id)
                pair = await _issue_pair(conn, deps, row, family_id=token.family_id)
                outcome = "ok"
    if pair is not None:
        return pair
    if outcome == "reused" and token is not None:
        log.warning(
            "refresh token reused for user %s: family %s revoked", token.user_id, token.family_id
        )
        try:
            await _revoke_access(deps, token.family_id, token.user_id)
        except Exception:
            # Presenting the used token again revokes again; the answer stays the same.
            log.exception("could not revoke the access tokens of family %s", token.family_id)
        raise ServiceError(
            codes.REFRESH_REUSED,
            "this refresh token was already used; every session from that sign-in "
            "has been ended, please sign in again",
        )
    if outcome == "expired":
        raise ServiceError(codes.TOKEN_EXPIRED, "refresh token has expired; sign in again")
    if outcome == "revoked":
        raise ServiceError(codes.INVALID_TOKEN, "refresh token was revoked; sign in again")
    raise ServiceError(codes.INVALID_TOKEN, "unknown refresh token")


async def _revoke_access(deps: AuthDeps, family_id: str, user_id: str) -> None:
    if deps.on_revoked is not None:
        await deps.on_revoked(family_id, user_id)


async def sign_out(deps: AuthDeps, req: SignOut) -> SignedOut:
    """Revoke the refresh token's whole family and, at once, its access tokens;
    ``signed_out`` is False if the token is unknown.

    Signing out again with the same token revokes again, so a client whose sign-out
    failed half-way (the denylist unreachable) can simply retry.
    """
    if not _plausible_refresh_token(req.refresh_token):
        return SignedOut(signed_out=False)
    async with deps.engine.begin() as conn:
        found = (
            await conn.execute(
                sa.select(refresh_tokens.c.family_id, refresh_tokens.c.user_id).where(
                    refresh_tokens.c.token_hash == _hash_token(req.refresh_token)
                )
            )
        ).first()
        if found is None:
            return SignedOut(signed_out=False)
        await _revoke_family(conn, found.family_id, deps.now_ms())
    await _revoke_access(deps, found.family_id, found.user_id)
    return SignedOut(signed_out=True)


# --- profile, keys ---------------------------------------------------------------------


async def get_profile(deps: AuthDeps, req: GetProfile) -> UserProfile:
    async with deps.engine.connect() as conn:
        row = await _user_where(conn, users.c.id == req.user_id)
    if row is None:
        raise ServiceError(codes.NOT_FOUND, "no such user")
    return _profile(row)


def public_keys(deps: AuthDeps) -> PublicKeys:
    settings = deps.settings
    return PublicKeys(
        keys=deps.jwks,
        issuer=settings.jwt_issuer,
        audience=settings.jwt_audience,
        algorithms=ALLOWED_ALGORITHMS,
    )


# --- host requests -------------------------------------------------------------------


def _host_request_query() -> sa.Select[Any]:
    return sa.select(host_requests, users.c.display_name).join(
        users, users.c.id == host_requests.c.user_id
    )


def _host_request(row: Any) -> HostRequest:
    return HostRequest(
        request_id=row.id,
        user_id=row.user_id,
        display_name=row.display_name,
        note=row.note,
        status=cast(RequestStatus, row.status),
        created_at=_iso(row.created_at),
        decided_by=row.decided_by,
        decided_at=_iso(row.decided_at) if row.decided_at is not None else None,
        reason=row.reason,
    )


async def _pending_request(conn: AsyncConnection, user_id: str) -> Any:
    query = _host_request_query().where(
        host_requests.c.user_id == user_id, host_requests.c.status == "pending"
    )
    return (await conn.execute(query)).first()


async def request_host(deps: AuthDeps, req: RequestHost) -> HostRequest:
    """Ask to become a host; asking again while pending returns the same request."""
    note = req.note.strip()
    if len(note) > MAX_NOTE:
        raise _bad_request(f"notes have at most {MAX_NOTE} characters")
    try:
        async with deps.engine.begin() as conn:
            user = await _user_where(conn, users.c.id == req.user_id)
            if user is None:
                raise ServiceError(codes.NOT_FOUND, "no such user")
            if "host" in _roles(user.roles):
                raise ServiceError(codes.CONFLICT, "you can already host tables")
            if "bot" in _roles(user.roles):
                raise ServiceError(codes.FORBIDDEN, "bots do not host tables")
            existing = await _pending_request(conn, req.user_id)
            if existing is not None:
                return _host_request(existing)
            request_id = uuid.uuid4().hex
            await conn.execute(
                host_requests.insert().values(
                    id=request_id,
                    user_id=req.user_id,
                    note=note,
                    status="pending",
                    created_at=deps.now_ms(),
                )
            )
            row = (
                await conn.execute(_host_request_query().where(host_requests.c.id == request_id))
            ).first()
            return _host_request(row)
    except IntegrityError:
        # Raced with the same user's other request (one pending per user): return it.
        async with deps.engine.connect() as conn:
            existing = await _pending_request(conn, req.user_id)
        if existing is None:
            raise
        return _host_request(existing)


async def list_host_requests(deps: AuthDeps, req: ListHostRequests) -> HostRequestList:
    """Pending requests oldest first (a queue); decided ones newest first (history)."""
    if not 1 <= req.limit <= MAX_LIST or req.offset < 0:
        raise _bad_request(f"limit must be 1..{MAX_LIST} and offset at least 0")
    query = _host_request_query()
    if req.status is not None:
        query = query.where(host_requests.c.status == req.status)
    if req.status == "pending":
        query = query.order_by(host_requests.c.created_at, host_requests.c.id)
    else:
        query = query.order_by(host_requests.c.created_at.desc(), host_requests.c.id)
    async with deps.engine.connect() as conn:
        rows = (await conn.execute(query.limit(req.limit).offset(req.offset))).all()
    return HostRequestList(requests=tuple(_host_request(row) for row in rows))


async def decide_host_request(deps: AuthDeps, req: DecideHostRequest) -> HostRequest:
    """An admin approves (the user gains ``host``) or rejects a pending request.

    The admin check is here as well as in the gateway: a request on the bus from
    anywhere else must not be able to grant roles.
    """
    reason = req.reason.strip()
    if len(reason) > MAX_NOTE:
        raise _bad_request(f"reasons have at most {MAX_NOTE} characters")
    async with deps.engine.begin() as conn:
        admin = await _user_where(conn, users.c.id == req.admin_id)
        if admin is None or "admin" not in _roles(admin.roles):
            raise ServiceError(codes.FORBIDDEN, "only an admin can decide host requests")
        current = (
            await conn.execute(
                sa.select(host_requests)
                .where(host_requests.c.id == req.request_id)
                .with_for_update()
            )
        ).first()
        if current is None:
            raise ServiceError(codes.NOT_FOUND, "no such host request")
        status: RequestStatus = "approved" if req.approve else "rejected"
        decided = await conn.execute(
            host_requests.update()
            .where(host_requests.c.id == req.request_id, host_requests.c.status == "pending")
            .values(status=status, decided_by=req.admin_id, decided_at=deps.now_ms(), reason=reason)
        )
        if decided.rowcount != 1:
            raise ServiceError(codes.ALREADY_DECIDED, f"this request was already {current.status}")
        if req.approve:
            user = await _user_where(conn, users.c.id == current.user_id, lock=True)
            await conn.execute(
                users.update()
                .where(users.c.id == current.user_id)
                .values(roles=_roles_text([*_roles(user.roles), "host"]))
            )
        row = (
            await conn.execute(_host_request_query().where(host_requests.c.id == req.request_id))
        ).first()
    log.info("host request %s %s by %s", req.request_id, status, req.admin_id)
    return _host_request(row)


# --- bot accounts (internal: the bots service) -------------------------------------------


async def create_bot(deps: AuthDeps, req: CreateBot) -> UserProfile:
    """Create a bot account, or make ``req.password`` the existing bot's password.

    Only addresses under ``BOT_EMAIL_DOMAIN`` (which sign-up refuses) and only accounts
    that already are bots can be touched, so this cannot take over a person's account.
    The password is re-hashed only when it changed (the bots service asks on every
    start). No ``UserRegistered``: bots never hold credits, so they get no welcome grant.
    """
    email = normalize_email(req.email)
    if not is_bot_email(email):
        raise _bad_request(f"bot accounts live under @{BOT_EMAIL_DOMAIN}")
    name = clean_display_name(req.display_name)
    if not MIN_BOT_PASSWORD <= len(req.password) <= MAX_SIGN_IN_PASSWORD:
        raise ServiceError(
            codes.WEAK_PASSWORD,
            f"bot passwords have {MIN_BOT_PASSWORD} to {MAX_SIGN_IN_PASSWORD} characters",
        )
    async with deps.engine.connect() as conn:
        existing = await _user_where(conn, users.c.email == email)
    if existing is not None and "bot" not in _roles(existing.roles):
        raise ServiceError(codes.CONFLICT, "that email belongs to an account that is not a bot")
    same = existing is not None and await deps.passwords.verify(
        existing.password_hash, req.password
    )
    if same and existing.display_name == name:
        return _profile(existing)
    new_hash = None if same else await deps.passwords.hash(req.password)
    for attempt in range(2):
        try:
            async with deps.engine.begin() as conn:
                row = await _user_where(conn, users.c.email == email, lock=True)
                if row is None:
                    if new_hash is None:  # deleted since we looked: hash and create it
                        new_hash = await deps.passwords.hash(req.password)
                    user_id = uuid.uuid4().hex
                    await conn.execute(
                        users.insert().values(
                            id=user_id,
                            email=email,
                            display_name=name,
                            password_hash=new_hash,
                            roles=_roles_text(BOT_ROLES),
                            created_at=deps.now_ms(),
                            email_verified=True,  # a reserved domain nobody else can use
                        )
                    )
                    log.info("created bot %s (%s)", user_id, name)
                else:
                    if "bot" not in _roles(row.roles):
                        raise ServiceError(
                            codes.CONFLICT, "that email belongs to an account that is not a bot"
                        )
                    user_id = row.id
                    values: dict[str, Any] = {"display_name": name}
                    if new_hash is not None:
                        values["password_hash"] = new_hash
                    await conn.execute(users.update().where(users.c.id == user_id).values(values))
                row = await _user_where(conn, users.c.id == user_id)
            return _profile(row)
        except IntegrityError:
            if attempt == 0:
                continue  # another replica created it at the same moment: update that one
            raise
    raise ServiceError(codes.CONFLICT, f"could not create bot {email}")  # pragma: no cover


# --- the first admin -------------------------------------------------------------------


class AdminAccount(NamedTuple):
    user_id: str
    email: str
    created: bool
    # Set only when we generated the password: the caller prints it once.
    generated_password: str | None


async def ensure_admin(
    engine: AsyncEngine,
    passwords: Passwords,
    email: str,
    *,
    display_name: str = "Admin",
    password: str = "",
    replace_password: bool = False,
    on_registered: Publisher | None = None,
    clock: Callable[[], float] = time.time,
) -> AdminAccount:
    """Create the admin account, or give an existing account the admin (and host) role.

    A new account gets ``password``, or a generated one when none is given. An
    existing account keeps its password unless ``replace_password`` (then ``password``
    or a generated one). There is no default password, ever.
    """
    email = normalize_email(email)
    name = clean_display_name(display_name)
    if password:
        problem = policy_problem(password, email)
        if problem is not None:
            raise ServiceError(codes.WEAK_PASSWORD, f"admin password too weak: {problem}")
    chosen = password or generate_password()
    for attempt in range(2):
        async with engine.connect() as conn:
            exists = await _user_where(conn, users.c.email == email) is not None
        new_hash = await passwords.hash(chosen) if not exists or replace_password else None
        try:
            async with engine.begin() as conn:
                row = await _user_where(conn, users.c.email == email, lock=True)
                if row is None:
                    if new_hash is None:
                        continue  # deleted under us: go round again and create it
                    user_id = uuid.uuid4().hex
                    await conn.execute(
                        users.insert().values(
                            id=user_id,
                            email=email,
                            display_name=name,
                            password_hash=new_hash,
                            roles=_roles_text(ADMIN_ROLES),
                            created_at=int(clock() * 1000),
                            email_verified=True,  # the operator named this address
                        )
                    )
                else:
                    user_id = row.id
                    values: dict[str, Any] = {
                        "roles": _roles_text([*_roles(row.roles), *ADMIN_ROLES]),
                        "email_verified": True,
                    }
                    if new_hash is not None:
                        values["password_hash"] = new_hash
                    await conn.execute(users.update().where(users.c.id == user_id).values(values))
                created = row is None
                row = await _user_where(conn, users.c.id == user_id)
        except IntegrityError:
            if attempt == 0:
                continue  # another process created it meanwhile: promote that one
            raise
        if created:
            log.info("created admin %s", user_id)
            await _announce(on_registered, row)
        else:
            log.info("promoted %s to admin", user_id)
        generated = chosen if new_hash is not None and not password else None
        return AdminAccount(user_id, email, created, generated)
    raise ServiceError(codes.CONFLICT, f"could not create or promote {email}")
