"""Password reset by email, for every account: whoever reads the mail owns the address.

Asking for a link answers the same whether or not the address has an account. The
link opens the web client's page (``/#/reset?token=…``), whose form POSTs the token
with the new password: fetching the link changes nothing. A reset link works once,
for :data:`RESET_MINUTES`, and is stored as its sha256. Following it replaces the
password (a squatter's too), marks the email verified (the mail proved it, which pays
the welcome grant if it was not), ends every other session at once, and signs in.
"""

from __future__ import annotations

import logging
import secrets

from kalaro.bus import ServiceError
from kalaro.proto import errors as codes
from kalaro.proto.auth import (
    PasswordResetRequested,
    RequestPasswordReset,
    ResetPassword,
    TokenPair,
)
from services.auth import letters, reset_store, rules, store
from services.auth.addresses import normalize_email
from services.auth.deps import AuthDeps, revoke_access
from services.auth.links import mail, pay_welcome
from services.auth.passwords import policy_problem
from services.auth.records import EmailToken
from services.auth.sessions import issue_pair

log = logging.getLogger("services.auth")

RESET_MINUTES = 30
# One reset mail per account a minute: asking again sooner is answered alike, unsent.
RESET_EVERY_SECONDS = 60


async def request_password_reset(
    req: RequestPasswordReset, deps: AuthDeps
) -> PasswordResetRequested:
    email = normalize_email(req.email)
    now_ms = deps.now_ms()
    token = secrets.token_urlsafe(32)
    async with deps.engine.begin() as conn:
        account = await store.account_by_email(conn, email, lock=True)
        if account is None or "bot" in account.roles:
            account = None  # bots' addresses receive no mail
        else:
            newest = await reset_store.newest_reset_at(conn, account.user_id)
            if newest is not None and now_ms - newest < RESET_EVERY_SECONDS * 1000:
                account = None
            else:
                expires_at = now_ms + RESET_MINUTES * 60_000
                token_hash = rules.hash_token(token)
                await reset_store.insert_reset(
                    conn, token_hash, account.user_id, now_ms, expires_at
                )
    if account is None:
        log.info("password reset for an unknown, bot or just-mailed address: nothing sent")
        return PasswordResetRequested()
    link = letters.reset_link(letters.link_base(deps.settings), token)
    await mail(deps, account.email, letters.reset_letter(account.display_name, link, RESET_MINUTES))
    log.info("mailed a password reset link to %s", account.user_id)
    return PasswordResetRequested()


async def _usable(deps: AuthDeps, token_hash: str, now_ms: int) -> EmailToken:
    async with deps.engine.connect() as conn:
        token = await reset_store.reset_token(conn, token_hash)
    verdict = rules.judge_link(token, now_ms)
    if token is None or verdict != "usable":
        raise rules.link_refusal(verdict, "password reset")
    return token


async def reset_password(req: ResetPassword, deps: AuthDeps) -> TokenPair:
    if not rules.plausible_token(req.token):
        raise rules.link_refusal("unknown", "password reset")
    if not rules.sign_in_password_fits(req.password):
        raise ServiceError(codes.WEAK_PASSWORD, "that password is too long")
    token_hash = rules.hash_token(req.token)
    now_ms = deps.now_ms()
    # The link and the password are checked before the link is spent: a weak password
    # is refused and the same link still works.
    token = await _usable(deps, token_hash, now_ms)
    async with deps.engine.connect() as conn:
        account = await store.account_by_id(conn, token.user_id)
    assert account is not None  # a link's user is a foreign key
    problem = policy_problem(req.password, account.email)
    if problem is not None:
        raise ServiceError(codes.WEAK_PASSWORD, f"password too weak: {problem}")
    password_hash = await deps.passwords.hash(req.password)
    async with deps.engine.begin() as conn:
        if not await reset_store.use_reset(conn, token, now_ms):
            raise rules.link_refusal("used", "password reset")
        before = await store.account_by_id(conn, token.user_id, lock=True)
        assert before is not None
        await store.update_account(
            conn, token.user_id, password_hash=password_hash, email_verified=True
        )
        families = await reset_store.revoke_sessions(conn, token.user_id, now_ms)
        account = await store.account_by_id(conn, token.user_id)
        assert account is not None
        pair = await issue_pair(conn, deps, account)
        if not before.email_verified:
            await pay_welcome(deps, account)  # the mail proved the address
    log.info("reset the password of %s; %d sessions ended", account.user_id, len(families))
    for family_id in families:
        try:
            await revoke_access(deps, family_id, account.user_id)
        except Exception:
            log.exception("could not revoke the access tokens of family %s", family_id)
    return pair
