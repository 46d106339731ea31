"""The SQL of password resets (like :mod:`services.auth.store`: the caller owns the
transaction, no rules are decided here)."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from services.auth.records import EmailToken
from services.auth.schema import password_resets, refresh_tokens


async def insert_reset(
    conn: AsyncConnection, token_hash: str, user_id: str, now_ms: int, expires_at: int
) -> None:
    await conn.execute(
        password_resets.insert().values(
            token_hash=token_hash, user_id=user_id, created_at=now_ms, expires_at=expires_at
        )
    )


async def reset_token(conn: AsyncConnection, token_hash: str) -> EmailToken | None:
    """The reset link stored under ``token_hash``, row-locked."""
    query = sa.select(password_resets).where(password_resets.c.token_hash == token_hash)
    row = (await conn.execute(query.with_for_update())).first()
    if row is None:
        return None
    return EmailToken(
        token_hash=row.token_hash,
        user_id=row.user_id,
        expires_at=row.expires_at,
        used_at=row.used_at,
    )


async def newest_reset_at(conn: AsyncConnection, user_id: str) -> int | None:
    query = sa.select(sa.func.max(password_resets.c.created_at)).where(
        password_resets.c.user_id == user_id
    )
    newest = (await conn.execute(query)).scalar()
    return None if newest is None else int(newest)


async def use_reset(conn: AsyncConnection, token: EmailToken, now_ms: int) -> bool:
    """Spend the link if nobody has (False when someone did first), and with it every
    other open reset link of its account: one reset voids the rest."""
    open_ = password_resets.c.used_at.is_(None)
    marked = await conn.execute(
        password_resets.update()
        .where(password_resets.c.token_hash == token.token_hash, open_)
        .values(used_at=now_ms)
    )
    if marked.rowcount != 1:
        return False
    await conn.execute(
        password_resets.update()
        .where(password_resets.c.user_id == token.user_id, open_)
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
