"""The SQL of password resets (like :mod:`services.auth.store`: the caller owns the
transaction, no rules are decided here)."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from services.auth import store
from services.auth.records import EmailToken
from services.auth.schema import password_resets, refresh_tokens


async def insert_reset(
    conn: AsyncConnection, token_hash: str, user_id: str, now_ms: int, expires_at: int
) -> None:
    await store.insert_email_token(
        conn, token_hash, user_id, now_ms, expires_at, table=password_resets
    )


async def reset_token(conn: AsyncConnection, token_hash: str) -> EmailToken | None:
    """The reset link stored under ``token_hash``, row-locked."""
    return await store.email_token(conn, token_hash, table=password_resets)


async def newest_reset_at(conn: AsyncConnection, user_id: str) -> int | None:
    return await store.newest_email_token_at(conn, user_id, table=password_resets)


async def use_reset(conn: AsyncConnection, token: EmailToken, now_ms: int) -> bool:
    """Spend the link if nobody has (False when someone did first), and with it every
    other open reset link of its account: one reset voids the rest."""
    if not await store.use_email_token(conn, token.token_hash, now_ms, table=password_resets):
        return False
    await conn.execute(
        password_resets.update()
        .where(password_resets.c.user_id == token.user_id, password_resets.c.used_at.is_(None))
        .values(used_at=now_ms)
    )
    return True


async def revoke_sessions(conn: AsyncConnection, user_id: str, now_ms: int) -> list[str]:
    """Revoke every live refresh token of ``user_id``; the families (sessions) whose
    access tokens must be revoked too are returned."""
    live = refresh_tokens.c.user_id == user_id, refresh_tokens.c.revoked_at.is_(None)
    families = (
        (await conn.execute(sa.select(refresh_tokens.c.family_id).where(*live).distinct()))
        .scalars()
        .all()
    )
    await conn.execute(refresh_tokens.update().where(*live).values(revoked_at=now_ms))
    return list(families)
