"""The wallet's one bootstrap: its deps from settings, its endpoints bound to handlers,
its consumers and the reconciler beside them (``python -m services.wallet`` runs it)."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from nats.aio.client import Client as NATS

from kalaro.bus import Route, Service, route
from kalaro.bus.jetstream import DurableConsumer
from kalaro.bus.runner import Running, database_ready, streams_ready
from kalaro.proto import endpoints, subjects
from kalaro.settings import Settings
from kalaro.sql import create_engine
from services.wallet import handlers as h
from services.wallet.handlers import WalletDeps, wallet_deps
from services.wallet.reconciler import Reconciler
from services.wallet.schema import migrate_wallet
from services.wallet.service import SERVICE_NAME, start_consumers, stop_consumers

log = logging.getLogger("kalaro.wallet")

ROUTES: list[Route[WalletDeps]] = [
    route(endpoints.WALLET_WELCOME_GRANT, h.welcome),
    route(endpoints.WALLET_BALANCE, h.balance),
    route(endpoints.WALLET_HISTORY, h.history),
    # Internal: the gateway has no route to it; auth asks when an admin approved credits.
    route(endpoints.WALLET_GRANT_APPROVED, h.grant_approved),
    route(endpoints.WALLET_ADJUST, h.adjust),
    route(endpoints.WALLET_PLACE_HOLDS, h.place_holds),
    route(endpoints.WALLET_SETTLE, h.settle),
    route(endpoints.WALLET_VOID, h.void),
    route(endpoints.WALLET_AUDIT, h.audit),
]


def build_service(deps: WalletDeps) -> Service:
    """The wallet's request/reply endpoints, served on the ``wallet`` queue group."""
    return Service(SERVICE_NAME).bind(ROUTES, deps)


async def reconcile_forever(reconciler: Reconciler, every: float) -> None:
    """Run the reconciler every ``every`` seconds until cancelled (every replica does:
    what it applies is keyed by hand, so two replicas never apply anything twice)."""
    while True:
        await asyncio.sleep(every)
        try:
            done = await reconciler.run_once()
        except Exception:
            log.warning("reconciling open holds failed; retrying", exc_info=True)
            continue
        if done.settled or done.voided or done.released:
            log.warning("reconciler: %s", done)


async def bootstrap(settings: Settings, nc: NATS, resources: contextlib.AsyncExitStack) -> Running:
    """Migrate the ledger, then the endpoints, both consumers and the reconciler."""
    engine = create_engine(settings.database_url)
    resources.push_async_callback(engine.dispose)
    version = await migrate_wallet(engine)
    log.info("wallet schema at revision %s on %s", version, engine.url.render_as_string())
    deps = wallet_deps(engine, settings)
    reconciler = Reconciler(engine, nc, release_after=settings.hold_release_minutes * 60.0)
    consumers: list[DurableConsumer] = []

    async def start() -> None:
        consumers.extend(await start_consumers(nc, engine, settings))

    async def stop() -> None:
        await stop_consumers(consumers)

    return Running(
        build_service(deps),
        checks={
            "database": database_ready(engine),
            "jetstream": streams_ready(
                nc, [subjects.RESULTS_STREAM, subjects.EVENTS_STREAM], settings
            ),
        },
        on_start=[start],
        background=[lambda: reconcile_forever(reconciler, float(settings.reconcile_seconds))],
        on_stop=[stop],
    )
