"""Sessions: issuing a token pair, refreshing it, signing out.

An access JWT (short-lived, Ed25519, see :mod:`kalaro.tokens`) plus an opaque refresh
token stored as its sha256. Every refresh rotates: the presented token is marked used
and a new one joins the same *family* (the session). Presenting a used token again
means someone kept a copy, so the whole family is revoked (both the thief's and the
owner's sessions end; the owner signs in again).
"""

from __future__ import annotations

import logging
import secrets
import uuid

from sqlalchemy.ext.asyncio import AsyncConnection

from kalaro.proto.auth import Refresh, SignedOut, SignOut, TokenPair
from kalaro.tokens import issue_access_token
from services.auth import rules, store
from services.auth.deps import AuthDeps, revoke_access
from services.auth.records import Account, RefreshToken

log = logging.getLogger("services.auth")


async def issue_pair(
    conn: AsyncConnection, deps: AuthDeps, account: Account, family_id: str | None = None
) -> TokenPair:
    """A fresh access token and a refresh token (stored hashed in this transaction)."""
    settings = deps.settings
    refresh_token = secrets.token_urlsafe(32)  # 256 bits
    now_ms = deps.now_ms()
    family_id = family_id or uuid.uuid4().hex
    await store.insert_refresh_token(
        conn,
        rules.hash_token(refresh_token),
        family_id,
        account.user_id,
        now_ms,
        rules.refresh_expiry(now_ms, settings.refresh_token_days),
    )
    access = issue_access_token(
        deps.signing_key,
        deps.kid,
        account.user_id,
        account.roles,
        account.display_name,
        settings.jwt_issuer,
        settings.jwt_audience,
        settings.access_token_seconds,
        now=deps.clock(),
        session=family_id,  # what signing out (or reuse) revokes
        email_verified=account.email_verified,
    )
    return TokenPair(
        access_token=access,
        refresh_token=refresh_token,
        expires_in=settings.access_token_seconds,
        user=rules.profile(account),
    )


async def refresh(req: Refresh, deps: AuthDeps) -> TokenPair:
    """Trade a refresh token for a new pair; a second use of one token is theft."""
    if not rules.plausible_token(req.refresh_token):
        raise rules.refresh_refusal("unknown")
    token_hash = rules.hash_token(req.refresh_token)
    now_ms = deps.now_ms()
    # Decided inside the transaction, raised after it commits: revoking a family on
    # reuse must stick even though the request fails.
    token: RefreshToken | None
    async with deps.engine.begin() as conn:
        token = await store.refresh_token(conn, token_hash, lock=True)
        verdict = rules.judge_refresh(token, now_ms)
        if token is not None and verdict == "usable":
            if await store.use_refresh_token(conn, token_hash, now_ms):
                account = await store.account_by_id(conn, token.user_id)
                assert account is not None  # a token's user is a foreign key
                return await issue_pair(conn, deps, account, family_id=token.family_id)
            verdict = "reused"  # lost the race to another use of the same token
        if token is not None and verdict == "reused":
            await store.revoke_family(conn, token.family_id, now_ms)
    if token is not None and verdict == "reused":
        log.warning(
            "refresh token reused for user %s: family %s revoked", token.user_id, token.family_id
        )
        try:
            await revoke_access(deps, token.family_id, token.user_id)
        except Exception:
            # Presenting the used token again revokes again; the answer stays the same.
            log.exception("could not revoke the access tokens of family %s", token.family_id)
    raise rules.refresh_refusal(verdict)


async def sign_out(req: SignOut, deps: AuthDeps) -> SignedOut:
    """Revoke the refresh token's whole family and, at once, its access tokens;
    ``signed_out`` is False if the token is unknown.

    Signing out again with the same token revokes again, so a client whose sign-out
    failed half-way (the denylist unreachable) can simply retry.
    """
    if not rules.plausible_token(req.refresh_token):
        return SignedOut(signed_out=False)
    async with deps.engine.begin() as conn:
        found = await store.refresh_token(conn, rules.hash_token(req.refresh_token))
        if found is None:
            return SignedOut(signed_out=False)
        await store.revoke_family(conn, found.family_id, deps.now_ms())
    await revoke_access(deps, found.family_id, found.user_id)
    return SignedOut(signed_out=True)
