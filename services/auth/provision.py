"""Accounts made by machines, not by sign-up: the bots' accounts (asked for by the bots
service on every start) and the first admin (made by ``python -m services.auth``)."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from typing import NamedTuple

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.bus import ServiceError
from kalaro.proto import errors as codes
from kalaro.proto.auth import CreateBot, UserProfile
from services.auth import rules, store
from services.auth.deps import AuthDeps, Publisher, announce
from services.auth.passwords import Passwords, generate_password
from services.auth.records import Account

log = logging.getLogger("services.auth")


async def create_bot(req: CreateBot, deps: AuthDeps) -> UserProfile:
    """Create a bot account, or make ``req.password`` the existing bot's password.

    Only addresses under ``BOT_EMAIL_DOMAIN`` (which sign-up refuses) and only accounts
    that already are bots can be touched, so this cannot take over a person's account.
    The password is re-hashed only when it changed (the bots service asks on every
    start). No ``UserRegistered``: bots never hold credits, so they get no welcome grant.
    """
    email, name = rules.bot_fields(req.email, req.display_name, req.password)
    async with deps.engine.connect() as conn:
        existing = await store.account_by_email(conn, email)
    if existing is not None:
        rules.require_bot(existing)
    same = existing is not None and await deps.passwords.verify(
        existing.password_hash, req.password
    )
    if same and existing is not None and existing.display_name == name:
        return rules.profile(existing)
    new_hash = None if same else await deps.passwords.hash(req.password)
    for attempt in range(2):
        try:
            async with deps.engine.begin() as conn:
                row = await store.account_by_email(conn, email, lock=True)
                if row is None:
                    if new_hash is None:  # deleted since we looked: hash and create it
                        new_hash = await deps.passwords.hash(req.password)
                    user_id = uuid.uuid4().hex
                    bot = Account(
                        user_id=user_id,
                        email=email,
                        display_name=name,
                        password_hash=new_hash,
                        google_sub=None,
                        roles=rules.BOT_ROLES,
                        created_at=deps.now_ms(),
                        email_verified=True,  # a reserved domain nobody else can use
                    )
                    await store.insert_account(conn, bot)
                    log.info("created bot %s (%s)", user_id, name)
                else:
                    rules.require_bot(row)
                    user_id = row.user_id
                    await store.update_account(
                        conn, user_id, display_name=name, password_hash=new_hash
                    )
                account = await store.account_by_id(conn, user_id)
            assert account is not None  # written in the transaction just committed
            return rules.profile(account)
        except IntegrityError:
            if attempt == 0:
                continue  # another replica created it at the same moment: update that one
            raise
    raise ServiceError(codes.CONFLICT, f"could not create bot {email}")  # pragma: no cover


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
    email, name = rules.admin_fields(email, display_name, password)
    chosen = password or generate_password()
    for attempt in range(2):
        async with engine.connect() as conn:
            exists = await store.account_by_email(conn, email) is not None
        new_hash = await passwords.hash(chosen) if not exists or replace_password else None
        try:
            async with engine.begin() as conn:
                row = await store.account_by_email(conn, email, lock=True)
                if row is None:
                    if new_hash is None:
                        continue  # deleted under us: go round again and create it
                    user_id = uuid.uuid4().hex
                    admin = Account(
                        user_id=user_id,
                        email=email,
                        display_name=name,
                        password_hash=new_hash,
                        google_sub=None,
                        roles=rules.ADMIN_ROLES,
                        created_at=int(clock() * 1000),
                        email_verified=True,  # the operator named this address
                    )
                    await store.insert_account(conn, admin)
                else:
                    user_id = row.user_id
                    await store.update_account(
                        conn,
                        user_id,
                        roles=rules.with_roles(row.roles, *rules.ADMIN_ROLES),
                        email_verified=True,
                        password_hash=new_hash,
                    )
                created = row is None
                account = await store.account_by_id(conn, user_id)
        except IntegrityError:
            if attempt == 0:
                continue  # another process created it meanwhile: promote that one
            raise
        if created:
            log.info("created admin %s", user_id)
            assert account is not None  # written in the transaction just committed
            await announce(on_registered, account)
        else:
            log.info("promoted %s to admin", user_id)
        generated = chosen if new_hash is not None and not password else None
        return AdminAccount(user_id, email, created, generated)
    raise ServiceError(codes.CONFLICT, f"could not create or promote {email}")
