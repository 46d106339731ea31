"""Mailed links: verifying an email address, and sending a new verification link.

A link opens a page of the web client (``/#/verify?token=…``) whose one button POSTs the
token: fetching the link (a mail scanner's prefetch) changes nothing, and only the
POST spends it. Tokens are stored as their sha256 and work once, for a while.
"""

from __future__ import annotations

import logging
import secrets

from sqlalchemy.ext.asyncio import AsyncConnection

from kalaro.bus import ServiceError
from kalaro.proto import errors as codes
from kalaro.proto.auth import EmailVerified, LinkResent, ResendVerification, VerifyEmail
from services.auth import letters, rules, store
from services.auth.deps import AuthDeps
from services.auth.letters import Letter
from services.auth.records import Account

log = logging.getLogger("services.auth")

# A signed-in account asks for another link at most this often (each one is a mail).
RESEND_SECONDS = 60


async def new_verify_link(conn: AsyncConnection, deps: AuthDeps, user_id: str) -> str:
    """A single-use verification link for ``user_id`` (its token stored hashed)."""
    token = secrets.token_urlsafe(32)
    now_ms = deps.now_ms()
    expires_at = rules.link_expiry(now_ms, deps.settings.verify_token_hours)
    await store.insert_email_token(conn, rules.hash_token(token), user_id, now_ms, expires_at)
    return letters.verify_link(letters.link_base(deps.settings), token)


async def mail(deps: AuthDeps, to: str, letter: Letter) -> None:
    if deps.mailer is not None:
        await deps.mailer.send(to, letter.subject, letter.body)


async def pay_welcome(deps: AuthDeps, account: Account) -> None:
    """Publish ``UserRegistered`` (the wallet pays the welcome grant) inside the caller's
    transaction, before it commits. If it cannot be published, the verification rolls
    back and the person presses the button again; if the commit fails after it, the
    grant is paid once anyway (JetStream dedupes by user id, the ledger keys the grant
    by it) and verifying again pays nothing more."""
    if deps.on_registered is None:
        return
    try:
        await deps.on_registered(rules.registered(account))
    except Exception as exc:
        log.warning("could not publish UserRegistered for %s", account.user_id, exc_info=True)
        raise ServiceError(codes.UNAVAILABLE, "that did not work just now; try again") from exc


async def verify_email(req: VerifyEmail, deps: AuthDeps) -> EmailVerified:
    """Follow a verification link: mark its account verified; each link works once."""
    if not rules.plausible_token(req.token):
        raise rules.link_refusal("unknown")
    now_ms = deps.now_ms()
    async with deps.engine.begin() as conn:
        token = await store.email_token(conn, rules.hash_token(req.token))
        verdict = rules.judge_link(token, now_ms)
        if token is None or verdict != "usable":
            raise rules.link_refusal(verdict)
        if not await store.use_email_token(conn, token.token_hash, now_ms):
            raise rules.link_refusal("used")
        before = await store.account_by_id(conn, token.user_id, lock=True)
        assert before is not None  # a link's user is a foreign key
        await store.update_account(conn, token.user_id, email_verified=True)
        account = await store.account_by_id(conn, token.user_id)
        assert account is not None
        if not before.email_verified:
            await pay_welcome(deps, account)
    log.info("verified the email of %s", account.user_id)
    return EmailVerified(user_id=account.user_id, email=account.email)


async def resend_verification(req: ResendVerification, deps: AuthDeps) -> LinkResent:
    """Mail a new link to the owner of an expired one, or to a signed-in account."""
    if bool(req.token) == bool(req.user_id):
        raise ServiceError(codes.BAD_REQUEST, "send either a link's token or a user id")
    now_ms = deps.now_ms()
    async with deps.engine.begin() as conn:
        account = await _resend_account(conn, req, now_ms)
        if account.email_verified:
            return LinkResent(status="already_verified")
        link = await new_verify_link(conn, deps, account.user_id)
    hours = deps.settings.verify_token_hours
    await mail(deps, account.email, letters.verify_letter(account.display_name, link, hours))
    log.info("mailed a new verification link to %s", account.user_id)
    return LinkResent(status="sent")


async def _resend_account(conn: AsyncConnection, req: ResendVerification, now_ms: int) -> Account:
    """Whose link to resend. An expired link is spent by this (one new link each); a
    signed-in account waits :data:`RESEND_SECONDS` between links."""
    if req.user_id:
        account = await store.account_by_id(conn, req.user_id, lock=True)
        if account is None:
            raise ServiceError(codes.NOT_FOUND, "no such user")
        newest = await store.newest_email_token_at(conn, account.user_id)
        if newest is not None and now_ms - newest < RESEND_SECONDS * 1000:
            raise ServiceError(
                codes.THROTTLED, "we just sent you a link; check your mail or wait a minute"
            )
        return account
    if not rules.plausible_token(req.token):
        raise rules.link_refusal("unknown")
    token = await store.email_token(conn, rules.hash_token(req.token))
    verdict = rules.judge_link(token, now_ms)
    if token is None or verdict in ("unknown", "used"):
        raise rules.link_refusal(verdict)
    account = await store.account_by_id(conn, token.user_id, lock=True)
    assert account is not None  # a link's user is a foreign key
    if not account.email_verified and verdict == "usable":
        raise ServiceError(
            codes.CONFLICT, "this link still works: open it and press the button instead"
        )
    await store.use_email_token(conn, token.token_hash, now_ms)
    return account
