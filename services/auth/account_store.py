"""Accounts as a store with one interface, :class:`AccountStore`: in SQL
(:class:`SqlAccountStore`, over :mod:`services.auth.store`, one transaction a call) and
in memory (:class:`MemoryAccountStore`, the unit tier's twin). Both pass the same tests
(tests/contracts/accounts_store.py).

The auth handlers themselves still call :mod:`services.auth.store` inside transactions
they open (a sign-up's account, link and event commit together); this port is the
account rows' behaviour those functions promise, checked the same on both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from msgspec.structs import replace
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.proto.auth import Role
from services.auth import store
from services.auth.records import Account
from services.auth.rules import like_escape, roles_from_text, roles_text


def _canonical(roles: Sequence[Role]) -> tuple[Role, ...]:
    """Roles as SQL gives them back: canonical order, each once."""
    return roles_from_text(roles_text(roles))


class AccountTaken(Exception):
    """The email or Google identity of a new account belongs to another one."""


class AccountStore(Protocol):
    async def by_id(self, user_id: str) -> Account | None: ...

    async def by_email(self, email: str) -> Account | None: ...

    async def by_google(self, sub: str) -> Account | None: ...

    async def insert(self, account: Account) -> None:
        """Raises :class:`AccountTaken` for a taken email or Google identity."""
        ...

    async def update(
        self,
        user_id: str,
        *,
        display_name: str | None = None,
        password_hash: str | None = None,
        roles: Sequence[Role] | None = None,
        email_verified: bool | None = None,
    ) -> None: ...

    async def search(self, query: str, limit: int, offset: int = 0) -> list[Account]:
        """Accounts whose email or lower-cased name contains ``query`` (lower case):
        prefix matches first, then by name, then by id."""
        ...


class SqlAccountStore:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine

    async def by_id(self, user_id: str) -> Account | None:
        async with self.engine.connect() as conn:
            return await store.account_by_id(conn, user_id)

    async def by_email(self, email: str) -> Account | None:
        async with self.engine.connect() as conn:
            return await store.account_by_email(conn, email)

    async def by_google(self, sub: str) -> Account | None:
        async with self.engine.connect() as conn:
            return await store.account_by_google(conn, sub)

    async def insert(self, account: Account) -> None:
        try:
            async with self.engine.begin() as conn:
                await store.insert_account(conn, account)
        except IntegrityError as exc:
            raise AccountTaken(account.email) from exc

    async def update(
        self,
        user_id: str,
        *,
        display_name: str | None = None,
        password_hash: str | None = None,
        roles: Sequence[Role] | None = None,
        email_verified: bool | None = None,
    ) -> None:
        async with self.engine.begin() as conn:
            await store.update_account(
                conn,
                user_id,
                display_name=display_name,
                password_hash=password_hash,
                roles=roles,
                email_verified=email_verified,
            )

    async def search(self, query: str, limit: int, offset: int = 0) -> list[Account]:
        async with self.engine.connect() as conn:
            return await store.search_accounts(conn, like_escape(query), limit, offset)


class MemoryAccountStore:
    """Accounts in a dict; email and Google identity unique, as SQL's constraints are."""

    def __init__(self) -> None:
        self._accounts: dict[str, Account] = {}

    async def by_id(self, user_id: str) -> Account | None:
        return self._accounts.get(user_id)

    async def by_email(self, email: str) -> Account | None:
        return next((a for a in self._accounts.values() if a.email == email), None)

    async def by_google(self, sub: str) -> Account | None:
        return next((a for a in self._accounts.values() if a.google_sub == sub), None)

    async def insert(self, account: Account) -> None:
        for other in self._accounts.values():
            if (
                other.user_id == account.user_id
                or other.email == account.email
                or (account.google_sub is not None and other.google_sub == account.google_sub)
            ):
                raise AccountTaken(account.email)
        self._accounts[account.user_id] = replace(account, roles=_canonical(account.roles))

    async def update(
        self,
        user_id: str,
        *,
        display_name: str | None = None,
        password_hash: str | None = None,
        roles: Sequence[Role] | None = None,
        email_verified: bool | None = None,
    ) -> None:
        account = self._accounts.get(user_id)
        if account is None:
            return  # SQL's UPDATE of no row: nothing happens
        self._accounts[user_id] = replace(
            account,
            display_name=account.display_name if display_name is None else display_name,
            password_hash=account.password_hash if password_hash is None else password_hash,
            roles=account.roles if roles is None else _canonical(roles),
            email_verified=account.email_verified if email_verified is None else email_verified,
        )

    async def search(self, query: str, limit: int, offset: int = 0) -> list[Account]:
        def fields(a: Account) -> tuple[str, str]:
            return a.email, a.display_name.lower()

        found = [a for a in self._accounts.values() if any(query in f for f in fields(a))]
        found.sort(
            key=lambda a: (
                not any(f.startswith(query) for f in fields(a)),
                a.display_name.lower(),
                a.user_id,
            )
        )
        return found[offset : offset + limit]


if TYPE_CHECKING:  # mypy holds both to the port's interface
    _twin: type[AccountStore] = MemoryAccountStore
    _real: type[AccountStore] = SqlAccountStore
