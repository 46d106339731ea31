"""The wallet's request handlers, one shape: ``async def handle(cmd, deps) -> reply``.

Each decodes nothing and catches nothing (the runner does both): it calls a
:mod:`~services.wallet.ledger` function with the dependencies in :class:`WalletDeps`
and returns its answer. They are bound to their endpoints in
:mod:`services.wallet.bootstrap`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import assert_never

from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.proto.wallet import (
    Adjust,
    Adjusted,
    Audit,
    AuditReport,
    Balance,
    GetBalance,
    GetHistory,
    GrantApproved,
    HandOutcome,
    History,
    HoldsPlaced,
    PlaceHolds,
    SettleHand,
    Settlement,
    VoidHand,
    WelcomeGrant,
    WelcomeGranted,
)
from kalaro.settings import Settings
from services.wallet import ledger
from services.wallet.books import Books, SqlBooks


@dataclass(frozen=True)
class WalletDeps:
    """What the wallet's handlers are given, built once per process (bootstrap):
    ``books`` (balances, grants, adjustments: :mod:`~services.wallet.books`) and the SQL
    ``engine`` the hand operations and approved grants run in."""

    engine: AsyncEngine
    settings: Settings
    books: Books


def wallet_deps(engine: AsyncEngine, settings: Settings) -> WalletDeps:
    """The service's deps: the books in SQL too."""
    return WalletDeps(engine=engine, settings=settings, books=SqlBooks(engine))


async def welcome(cmd: WelcomeGrant, deps: WalletDeps) -> WelcomeGranted:
    return await deps.books.welcome_grant(cmd.user_id, deps.settings.welcome_grant)


async def balance(cmd: GetBalance, deps: WalletDeps) -> Balance:
    return await deps.books.get_balance(cmd.user_id)


async def history(cmd: GetHistory, deps: WalletDeps) -> History:
    return await deps.books.history(cmd.user_id, limit=cmd.limit, before=cmd.before)


async def grant_approved(cmd: GrantApproved, deps: WalletDeps) -> Adjusted:
    return await ledger.grant_approved(
        deps.engine, cmd.approval_id, cmd.user_id, cmd.amount, cmd.admin_id, cmd.memo
    )


async def adjust(cmd: Adjust, deps: WalletDeps) -> Adjusted:
    return await deps.books.adjust(
        cmd.admin_id,
        cmd.user_id,
        cmd.amount,
        cmd.reason,
        cmd.kind,
        request_key=cmd.request_key,
    )


async def place_holds(cmd: PlaceHolds, deps: WalletDeps) -> HoldsPlaced:
    return await ledger.place_holds(deps.engine, cmd.table_id, cmd.hand_id, cmd.holds, cmd.game)


async def settle(cmd: SettleHand, deps: WalletDeps) -> Settlement:
    return await apply_outcome(deps.engine, cmd)


async def void(cmd: VoidHand, deps: WalletDeps) -> Settlement:
    return await apply_outcome(deps.engine, cmd)


async def audit(_cmd: Audit, deps: WalletDeps) -> AuditReport:
    return await ledger.audit(deps.engine)


async def apply_outcome(engine: AsyncEngine, outcome: HandOutcome) -> Settlement:
    """Settle or void a hand, whichever the engine reported (requests and the RESULTS
    consumer alike)."""
    match outcome:
        case SettleHand():
            return await ledger.settle(
                engine, outcome.hand_id, outcome.payments, table_id=outcome.table_id
            )
        case VoidHand():
            return await ledger.void(engine, outcome.hand_id, table_id=outcome.table_id)
        case _:
            assert_never(outcome)
