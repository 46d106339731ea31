"""What the auth service does, as plain async functions with their dependencies passed in.

No NATS here: :mod:`services.auth.bootstrap` binds requests and calls these; tests
call them over the bus against real Redis and SQL. Failures are
:class:`~kalaro.bus.ServiceError` with a code from :mod:`kalaro.proto.errors`.

Each function is a thin shell: it checks the request with the pure rules of
:mod:`services.auth.rules`, reads and writes through :mod:`services.auth.store` inside
the transaction it opens, and hashes, mails and announces around that. This module has
signing up, signing in with Google and profiles;
the rest lives beside it and is re-exported here, the one name callers import:
:mod:`~services.auth.links` (verifying an email, new links),
:mod:`~services.auth.resets` (password reset by email),
:mod:`~services.auth.sessions` (token pairs, refresh, sign-out),
:mod:`~services.auth.signin` (password sign-in behind the throttle),
:mod:`~services.auth.search` (admins' user search) and
:mod:`~services.auth.provision` (bot accounts, the first admin).
Requests an admin approves (host access, credits) are :mod:`services.auth.approvals`'.
"""

from __future__ import annotations

import logging
import uuid

from sqlalchemy.exc import IntegrityError

from kalaro.bus import ServiceError
from kalaro.proto import errors as codes
from kalaro.proto.auth import (
    GetProfile,
    GetPublicKeys,
    GoogleSignIn,
    PublicKeys,
    SignUp,
    SignUpAccepted,
    TokenPair,
    UserProfile,
)
from kalaro.tokens import ALLOWED_ALGORITHMS, TokenError
from services.auth import letters, rules, store
from services.auth.addresses import normalize_email, person_email
from services.auth.deps import AuthDeps, Publisher, Revoker, announce, revoke_access
from services.auth.links import (
    mail,
    new_verify_link,
    pay_welcome,
    resend_verification,
    verify_email,
)
from services.auth.provision import AdminAccount, create_bot, ensure_admin
from services.auth.records import Account
from services.auth.resets import request_password_reset, reset_password
from services.auth.rules import (
    ADMIN_ROLES,
    BOT_ROLES,
    MAX_DISPLAY_NAME,
    MAX_LIST,
    MAX_NOTE,
    MAX_SEARCH_OFFSET,
    MAX_SEARCH_PAGE,
    MAX_SEARCH_QUERY,
    MAX_SIGN_IN_PASSWORD,
    MIN_BOT_PASSWORD,
    ROLE_ORDER,
    clean_display_name,
    is_bot_email,
)
from services.auth.search import search_users
from services.auth.sessions import issue_pair, refresh, sign_out
from services.auth.signin import sign_in

__all__ = [
    "ADMIN_ROLES",
    "BOT_ROLES",
    "MAX_DISPLAY_NAME",
    "MAX_LIST",
    "MAX_NOTE",
    "MAX_SEARCH_OFFSET",
    "MAX_SEARCH_PAGE",
    "MAX_SEARCH_QUERY",
    "MAX_SIGN_IN_PASSWORD",
    "MIN_BOT_PASSWORD",
    "ROLE_ORDER",
    "AdminAccount",
    "AuthDeps",
    "Publisher",
    "Revoker",
    "clean_display_name",
    "create_bot",
    "ensure_admin",
    "get_profile",
    "google_sign_in",
    "is_bot_email",
    "normalize_email",
    "public_keys",
    "refresh",
    "request_password_reset",
    "resend_verification",
    "reset_password",
    "search_users",
    "sign_in",
    "sign_out",
    "sign_up",
    "verify_email",
]

log = logging.getLogger("services.auth")


# --- sign up --------------------------------------------------------------------------


async def sign_up(req: SignUp, deps: AuthDeps) -> SignUpAccepted:
    """Create an unverified account and mail it a verification link.

    The answer is the same whether or not the email is known (so sign-up reveals
    nothing): for a known email nothing changes and its owner is told by mail. The
    caller signs in with the password afterwards; a squatter's password for someone
    else's address then fails exactly like a wrong one.
    """
    email, name = rules.sign_up_fields(req.email, req.display_name, req.password)
    # Hashed whether or not the email is known: both answers take the same time.
    password_hash = await deps.passwords.hash(req.password)
    user_id = uuid.uuid4().hex
    link = ""
    try:
        async with deps.engine.begin() as conn:
            if await store.account_by_email(conn, email) is None:
                new = Account(
                    user_id=user_id,
                    email=email,
                    display_name=name,
                    password_hash=password_hash,
                    google_sub=None,
                    roles=rules.PLAYER_ROLES,
                    created_at=deps.now_ms(),
                    email_verified=False,
                )
                await store.insert_account(conn, new)
                link = await new_verify_link(conn, deps, user_id)
    except IntegrityError:
        link = ""  # a concurrent sign-up took the address first: it is known now
    if not link:
        log.info("sign-up for a known email")
        await mail(deps, email, letters.already_registered_letter(letters.link_base(deps.settings)))
        return SignUpAccepted()
    log.info("signed up %s (unverified)", user_id)
    hours = deps.settings.verify_token_hours
    await mail(deps, email, letters.verify_letter(name, link, hours))
    # No UserRegistered yet: the welcome grant is paid when the email is verified.
    return SignUpAccepted()


# --- sign in --------------------------------------------------------------------------


async def google_sign_in(req: GoogleSignIn, deps: AuthDeps) -> TokenPair:
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
    email = person_email(identity.email)
    name = rules.google_display_name(identity.name, email)
    for attempt in range(2):
        created = taken_over_now = False
        taken_over: list[str] = []
        try:
            async with deps.engine.begin() as conn:
                account = await store.account_by_google(conn, identity.sub)
                if account is None:
                    by_email = await store.account_by_email(conn, email, lock=True)
                    match rules.google_link(by_email):
                        case "link":
                            assert by_email is not None
                            user_id = by_email.user_id
                            await store.update_account(conn, user_id, google_sub=identity.sub)
                            log.info("linked Google account to %s", user_id)
                        case "take_over":
                            assert by_email is not None
                            user_id = by_email.user_id
                            taken_over = await store.take_over(
                                conn, user_id, identity.sub, name, deps.now_ms()
                            )
                            taken_over_now = True
                            log.warning(
                                "Google-verified owner took over unverified account %s", user_id
                            )
                        case "create":
                            user_id = uuid.uuid4().hex
                            new = Account(
                                user_id=user_id,
                                email=email,
                                display_name=name,
                                password_hash=None,
                                google_sub=identity.sub,
                                roles=rules.PLAYER_ROLES,
                                created_at=deps.now_ms(),
                                email_verified=True,
                            )
                            await store.insert_account(conn, new)
                            created = True
                            log.info("signed up %s with Google", user_id)
                    account = await store.account_by_id(conn, user_id)
                    assert account is not None  # written in this transaction
                    if taken_over_now:
                        await pay_welcome(deps, account)  # Google verified the email
                pair = await issue_pair(conn, deps, account)
        except IntegrityError as exc:
            # A concurrent first sign-in with the same identity won: go again, which
            # now finds that account.
            if attempt == 0:
                continue
            raise ServiceError(codes.CONFLICT, "could not link this Google account") from exc
        if created:
            # After the commit: an account that might not exist gets no grant.
            await announce(deps.on_registered, account)
        for family_id in taken_over:
            try:
                await revoke_access(deps, family_id, account.user_id)
            except Exception:
                log.exception("could not revoke the access tokens of family %s", family_id)
        return pair
    raise AssertionError("unreachable")  # pragma: no cover


# --- profile, keys --------------------------------------------------------------------


async def get_profile(req: GetProfile, deps: AuthDeps) -> UserProfile:
    async with deps.engine.connect() as conn:
        account = await store.account_by_id(conn, req.user_id)
    if account is None:
        raise ServiceError(codes.NOT_FOUND, "no such user")
    return rules.profile(account)


async def public_keys(_req: GetPublicKeys, deps: AuthDeps) -> PublicKeys:
    settings = deps.settings
    return PublicKeys(
        keys=deps.jwks,
        issuer=settings.jwt_issuer,
        audience=settings.jwt_audience,
        algorithms=ALLOWED_ALGORITHMS,
    )
