"""The holds path against the real wallet service and a real database.

Here the wallet is :mod:`services.wallet` itself on a fresh SQLite database (and on
PostgreSQL when one is reachable), so the balance check at Sit, the all-or-nothing
PlaceHolds at Deal and the void at Cancel are checked against the real ledger. The
engine is still a stand-in peer (it is another service); its cancel voids the hand at
the wallet, as the real engine's void reaches it through JetStream.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from nats.aio.client import Client as NATS
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.bus import RemoteError, request
from kalaro.proto import errors as codes
from kalaro.proto import lobby as lb
from kalaro.proto import subjects
from kalaro.proto.wallet import (
    Adjust,
    Adjusted,
    Audit,
    AuditReport,
    Balance,
    GetBalance,
    HoldRequest,
    HoldsPlaced,
    PlaceHolds,
)
from kalaro.settings import load_settings
from kalaro.sql import create_engine
from tests.integration.lobby.harness import LobbyHarness, Peers
from tests.integration.wallet.wallet_helpers import open_accounts

wallet_bootstrap = pytest.importorskip("services.wallet.bootstrap")
wallet_handlers = pytest.importorskip("services.wallet.handlers")
wallet_schema = pytest.importorskip("services.wallet.schema")

ADMIN = "admin-lobby-tests"


@pytest.fixture
def peers() -> Peers:
    # The real wallet answers its own subjects.
    return Peers(wallet=False, engine_voids=True)


@pytest.fixture
async def wallet(nc: NATS, database_url: str) -> AsyncIterator[AsyncEngine]:
    engine = create_engine(database_url)
    await wallet_schema.migrate_wallet(engine)
    service = wallet_bootstrap.build_service(
        wallet_handlers.wallet_deps(engine, load_settings({}, database_url=database_url))
    )
    await service.start(nc)
    yield engine
    await service.stop()
    await engine.dispose()


async def _adjust(nc: NATS, user_id: str, amount: int) -> Balance:
    message = Adjust(
        admin_id=ADMIN,
        user_id=user_id,
        amount=amount,
        reason="lobby test funds",
        kind="grant" if amount > 0 else "adjust",
    )
    adjusted = await request(nc, subjects.WALLET_ADJUST, message, Adjusted, timeout=15)
    return adjusted.balance


async def _balance(nc: NATS, user_id: str) -> Balance:
    return await request(
        nc, subjects.WALLET_BALANCE, GetBalance(user_id=user_id), Balance, timeout=15
    )


async def test_holds_placed_refused_and_voided_by_the_real_wallet(
    wallet: AsyncEngine, lobby: LobbyHarness
) -> None:
    nc = lobby.nc
    table = (await lobby.create("tongits", 20)).table  # max loss 80
    ana, ben, cris, dina = (lobby.user(n) for n in ("Ana", "Ben", "Cris", "Dina"))
    await open_accounts(wallet, *(p.user_id for p in (ana, ben, cris, dina)))
    for p in (ana, ben, cris):
        await _adjust(nc, p.user_id, 100)
    await _adjust(nc, dina.user_id, 79)

    with pytest.raises(RemoteError) as poor:
        await lobby.sit(dina, table.table_id)
    assert poor.value.code == codes.INSUFFICIENT_FUNDS
    assert "80" in poor.value.message and "79" in poor.value.message
    for p in (ana, ben, cris):
        await lobby.sit(p, table.table_id)
        await lobby.ready(p, table.table_id)

    # Cris's credits are taken back after he sat down: the wallet refuses the holds
    # (all or nothing), and the table goes back to waiting with Cris not ready.
    await _adjust(nc, cris.user_id, -30)
    with pytest.raises(RemoteError) as short:
        await lobby.deal(lobby.host, table.table_id)
    assert short.value.code == codes.INSUFFICIENT_FUNDS
    assert "Cris" in short.value.message
    # The wallet names who is short as data (the lobby reads no text to find them).
    probe = PlaceHolds(
        table_id=table.table_id,
        hand_id="h_probe",
        holds=tuple(HoldRequest(user_id=p.user_id, amount=80) for p in (ana, cris)),
        game="tongits",
    )
    with pytest.raises(RemoteError) as named:
        await request(nc, subjects.WALLET_PLACE_HOLDS, probe, HoldsPlaced, timeout=5)
    assert named.value.code == codes.INSUFFICIENT_FUNDS
    assert named.value.user_ids == (cris.user_id,)
    info = await lobby.get(table.table_id)
    assert info.status == "waiting"
    assert [s.ready if s else None for s in info.seats] == [True, True, False]
    assert lobby.peers.starts == []
    for p in (ana, ben, cris):
        assert (await _balance(nc, p.user_id)).held == 0

    await _adjust(nc, cris.user_id, 30)
    await lobby.ready(cris, table.table_id)
    dealt = await lobby.deal(lobby.host, table.table_id)
    assert dealt.status == "playing"
    for p in (ana, ben, cris):
        balance = await _balance(nc, p.user_id)
        assert (balance.balance, balance.held, balance.available) == (100, 80, 20)

    cancel = lb.CancelTable(caller=lobby.host, table_id=table.table_id)
    cancelled = await lobby.call(subjects.LOBBY_CANCEL_TABLE, cancel, lb.TableInfo)
    assert cancelled.status == "cancelled"
    assert [c.hand_id for c in lobby.peers.cancels] == [dealt.hand_id]
    for p in (ana, ben, cris):
        balance = await _balance(nc, p.user_id)
        assert (balance.balance, balance.held) == (100, 0)  # voided: nothing moved
    report = await request(nc, subjects.WALLET_AUDIT, Audit(), AuditReport, timeout=15)
    assert report.total == 0 and report.mismatched_accounts == ()


async def test_sit_counts_every_table_once_against_the_real_balance(
    wallet: AsyncEngine, lobby: LobbyHarness
) -> None:
    """Ana's 160 credits cover two tables of max loss 80: one in a hand (its 80 held at
    the wallet, counted once, not again as a seat) and one more; not a third."""
    nc = lobby.nc
    playing, waiting, third = [(await lobby.create("tongits", 20)).table for _ in range(3)]
    ana, ben, cris = (lobby.user(n) for n in ("Ana", "Ben", "Cris"))
    await open_accounts(wallet, *(p.user_id for p in (ana, ben, cris)))
    await _adjust(nc, ana.user_id, 160)
    for p in (ben, cris):
        await _adjust(nc, p.user_id, 100)
    for p in (ana, ben, cris):
        await lobby.sit(p, playing.table_id)
        await lobby.ready(p, playing.table_id)
    dealt = await lobby.deal(lobby.host, playing.table_id)
    assert dealt.status == "playing"
    balance = await _balance(nc, ana.user_id)
    assert (balance.balance, balance.held, balance.available) == (160, 80, 80)

    await lobby.sit(ana, waiting.table_id)
    with pytest.raises(RemoteError) as over:
        await lobby.sit(ana, third.table_id)
    assert over.value.code == codes.COMMITTED_ELSEWHERE
    assert playing.table_id in over.value.message and waiting.table_id in over.value.message
    assert "240" in over.value.message and "160" in over.value.message
    assert (await lobby.get(third.table_id)).seats == (None, None, None)
