"""The auth service's SQL (SQLAlchemy Core over the tables in :mod:`services.auth.schema`).

Plain async functions over a connection the caller opened: the caller owns the
transaction (what must commit together, what is retried on a unique-key race), this
module only reads rows into :mod:`services.auth.records` and writes values it is given.
No rules are decided here.

``lock=True`` takes a row lock on PostgreSQL (``SELECT … FOR UPDATE``); SQLite ignores
it, its ``BEGIN IMMEDIATE`` already serialises writers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from sqlalchemy.ext.asyncio import AsyncConnection

from kalaro.proto.auth import Role
from services.auth.records import Account, EmailToken, RefreshToken
from services.auth.rules import roles_from_text, roles_text
from services.auth.schema import email_tokens, refresh_tokens, users

# --- accounts -------------------------------------------------------------------------


def _account(row: Any) -> Account:
    return Account(
        user_id=row.id,
        email=row.email,
        display_name=row.display_name,
        password_hash=row.password_hash,
        google_sub=row.google_sub,
        roles=roles_from_text(row.roles),
        created_at=row.created_at,
        email_verified=bool(row.email_verified),
    )


async def _account_where(conn: AsyncConnection, clause: Any, lock: bool) -> Account | None:
    query = sa.select(users).where(clause)
    if lock:
        query = query.with_for_update()
    row = (await conn.execute(query)).first()
    return None if row is None else _account(row)


async def account_by_id(
    conn: AsyncConnection, user_id: str, *, lock: bool = False
) -> Account | None:
    return await _account_where(conn, users.c.id == user_id, lock)


async def account_by_email(
    conn: AsyncConnection, email: str, *, lock: bool = False
) -> Account | None:
    return await _account_where(conn, users.c.email == email, lock)


async def account_by_google(conn: AsyncConnection, sub: str) -> Account | None:
    return await _account_where(conn, users.c.google_sub == sub, False)


async def insert_account(conn: AsyncConnection, account: Account) -> None:
    """A new row; a taken email or Google identity raises ``IntegrityError``."""
    await conn.execute(
        users.insert().values(
            id=account.user_id,
            email=account.email,
            display_name=account.display_name,
            password_hash=account.password_hash,
            google_sub=account.google_sub,
            roles=roles_text(account.roles),
            created_at=account.created_at,
            email_verified=account.email_verified,
        )
    )


async def update_account(
    conn: AsyncConnection,
    user_id: str,
    *,
    display_name: str | None = None,
    password_hash: str | None = None,
    roles: Sequence[Role] | None = None,
    email_verified: bool | None = None,
    google_sub: str | None = None,
) -> None:
    """Set the given columns (those left at None keep their value)."""
    values: dict[str, Any] = {}
    if display_name is not None:
        values["display_name"] = display_name
    if password_hash is not None:
        values["password_hash"] = password_hash
    if roles is not None:
        values["roles"] = roles_text(roles)
    if email_verified is not None:
        values["email_verified"] = email_verified
    if google_sub is not None:
        values["google_sub"] = google_sub
    await conn.execute(users.update().where(users.c.id == user_id).values(values))


async def take_over(
    conn: AsyncConnection, user_id: str, sub: str, name: str, now_ms: int
) -> list[str]:
    """Give an unverified account to its Google-verified owner: link it, mark it
    verified, drop the password, void its links and revoke its refresh tokens. The
    families whose access tokens must be revoked too are returned."""
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
    live = refresh_tokens.c.user_id == user_id, refresh_tokens.c.revoked_at.is_(None)
    families = (
        (await conn.execute(sa.select(refresh_tokens.c.family_id).where(*live).distinct()))
        .scalars()
        .all()
    )
    await conn.execute(refresh_tokens.update().where(*live).values(revoked_at=now_ms))
    return list(families)


async def search_accounts(
    conn: AsyncConnection, literal: str, limit: int, offset: int
) -> list[Account]:
    """Accounts whose email or lower-cased display name contains ``literal`` (already
    LIKE-escaped); prefix matches first, then by name."""
    name = sa.func.lower(users.c.display_name)
    inside, prefix = f"%{literal}%", f"{literal}%"
    found = (
        sa.select(users)
        .where(sa.or_(users.c.email.like(inside, escape="\\"), name.like(inside, escape="\\")))
        .order_by(
            sa.case(
                (
                    sa.or_(users.c.email.like(prefix, escape="\\"), name.like(prefix, escape="\\")),
                    0,
                ),
                else_=1,
            ),
            name,
            users.c.id,
        )
        .limit(limit)
        .offset(offset)
    )
    return [_account(row) for row in (await conn.execute(found)).all()]


# --- single-use mailed links (verification, password reset) ----------------------------
# Both tables have one shape (token_hash, user_id, created_at, expires_at, used_at);
# ``table`` says which.


async def insert_email_token(
    conn: AsyncConnection,
    token_hash: str,
    user_id: str,
    now_ms: int,
    expires_at: int,
    *,
    table: sa.Table = email_tokens,
) -> None:
    await conn.execute(
        table.insert().values(
            token_hash=token_hash, user_id=user_id, created_at=now_ms, expires_at=expires_at
        )
    )


async def email_token(
    conn: AsyncConnection, token_hash: str, *, table: sa.Table = email_tokens
) -> EmailToken | None:
    """The link stored under ``token_hash``, row-locked."""
    query = sa.select(table).where(table.c.token_hash == token_hash)
    row = (await conn.execute(query.with_for_update())).first()
    if row is None:
        return None
    return EmailToken(
        token_hash=row.token_hash,
        user_id=row.user_id,
        expires_at=row.expires_at,
        used_at=row.used_at,
    )


async def newest_email_token_at(
    conn: AsyncConnection, user_id: str, *, table: sa.Table = email_tokens
) -> int | None:
    """When the newest link for ``user_id`` was made (None: never)."""
    query = sa.select(sa.func.max(table.c.created_at)).where(table.c.user_id == user_id)
    newest = (await conn.execute(query)).scalar()
    return None if newest is None else int(newest)


async def use_email_token(
    conn: AsyncConnection, token_hash: str, now_ms: int, *, table: sa.Table = email_tokens
) -> bool:
    """Mark the link used if nobody has; False when someone did first."""
    marked = await conn.execute(
        table.update()
        .where(table.c.token_hash == token_hash, table.c.used_at.is_(None))
        .values(used_at=now_ms)
    )
    return marked.rowcount == 1


# --- refresh tokens -------------------------------------------------------------------


async def insert_refresh_token(
    conn: AsyncConnection,
    token_hash: str,
    family_id: str,
    user_id: str,
    now_ms: int,
    expires_at: int,
) -> None:
    await conn.execute(
        refresh_tokens.insert().values(
            token_hash=token_hash,
            family_id=family_id,
            user_id=user_id,
            created_at=now_ms,
            expires_at=expires_at,
        )
    )


def _refresh_token(row: Any) -> RefreshToken:
    return RefreshToken(
        token_hash=row.token_hash,
        family_id=row.family_id,
        user_id=row.user_id,
        expires_at=row.expires_at,
        used_at=row.used_at,
        revoked_at=row.revoked_at,
    )


async def refresh_token(
    conn: AsyncConnection, token_hash: str, *, lock: bool = False
) -> RefreshToken | None:
    query = sa.select(refresh_tokens).where(refresh_tokens.c.token_hash == token_hash)
    if lock:
        query = query.with_for_update()
    row = (await conn.execute(query)).first()
    return None if row is None else _refresh_token(row)


async def use_refresh_token(conn: AsyncConnection, token_hash: str, now_ms: int) -> bool:
    """Compare-and-set on ``used_at``: of two racing uses exactly one gets True; the
    other is, by definition, a reuse."""
    marked = await conn.execute(
        refresh_tokens.update()
        .where(
            refresh_tokens.c.token_hash == token_hash,
            refresh_tokens.c.used_at.is_(None),
            refresh_tokens.c.revoked_at.is_(None),
        )
        .values(used_at=now_ms)
    )
    return marked.rowcount == 1


async def revoke_family(conn: AsyncConnection, family_id: str, now_ms: int) -> None:
    await conn.execute(
        refresh_tokens.update()
        .where(refresh_tokens.c.family_id == family_id, refresh_tokens.c.revoked_at.is_(None))
        .values(revoked_at=now_ms)
    )
