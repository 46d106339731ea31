"""Test helpers for the wallet: a bus client for the service under test."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

import msgspec
from nats.aio.client import Client as NATS
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.bus import request
from kalaro.proto import subjects
from kalaro.proto.wallet import Adjust, Adjusted, Audit, AuditReport, Balance, GetBalance
from services.wallet.schema import accounts

WELCOME = 1000  # the welcome grant the tests' settings use
ADMIN = "admin-1"

T = TypeVar("T")


async def open_accounts(engine: AsyncEngine, *users: str) -> None:
    """Open empty accounts, as a player's welcome grant does (admins grant only to players
    with an account), without the grant, so tests can count credits from zero."""
    async with engine.begin() as conn:
        for user in users:
            await conn.execute(
                accounts.insert().values(owner=user, balance=0, held=0, created_at="2026-01-01")
            )


@dataclass
class Wallet:
    """A client for the wallet under test, plus its database for direct checks."""

    nc: NATS
    engine: AsyncEngine

    async def call(self, subject: str, message: msgspec.Struct, reply_type: type[T]) -> T:
        return await request(self.nc, subject, message, reply_type, timeout=15)

    async def balance(self, user_id: str) -> Balance:
        return await self.call(subjects.WALLET_BALANCE, GetBalance(user_id=user_id), Balance)

    async def audit(self) -> AuditReport:
        return await self.call(subjects.WALLET_AUDIT, Audit(), AuditReport)

    async def open_account(self, *users: str) -> None:
        await open_accounts(self.engine, *users)

    async def fund(self, user_id: str, amount: int) -> Balance:
        """An admin grant to the player, opening their account first if need be."""
        if (await self.balance(user_id)).balance == 0:
            async with self.engine.connect() as conn:
                known = await conn.scalar(select(accounts.c.id).where(accounts.c.owner == user_id))
            if known is None:
                await open_accounts(self.engine, user_id)
        granted = await self.call(
            subjects.WALLET_ADJUST,
            Adjust(admin_id=ADMIN, user_id=user_id, amount=amount, reason="test funds"),
            Adjusted,
        )
        return granted.balance

    async def assert_books_balance(self) -> AuditReport:
        report = await self.audit()
        assert report.total == 0, report
        assert report.mismatched_accounts == (), report
        assert report.negative_available == (), report
        return report
