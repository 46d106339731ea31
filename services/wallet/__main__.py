"""``python -m services.wallet``: migrate the ledger, then serve it until SIGTERM."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys

from kalaro.bus.jetstream import DurableConsumer
from kalaro.bus.runner import connect, database_ready, run_until_stopped, serve, streams_ready
from kalaro.logs import setup as setup_logs
from kalaro.proto import subjects
from kalaro.settings import Settings, load_settings, production_problem
from kalaro.sql import create_engine
from services.wallet.reconciler import Reconciler
from services.wallet.schema import migrate_wallet
from services.wallet.service import SERVICE_NAME, build_service, start_consumers, stop_consumers

log = logging.getLogger("kalaro.wallet")


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


async def run(settings: Settings) -> None:
    engine = create_engine(settings.database_url)
    try:
        nc = await connect(settings.nats_url, SERVICE_NAME)
        version = await migrate_wallet(engine)
        log.info("wallet schema at revision %s on %s", version, engine.url.render_as_string())
        service = build_service(engine, settings)
        consumers: list[DurableConsumer] = []
        reconciler = Reconciler(engine, nc, release_after=settings.hold_release_minutes * 60.0)
        background: list[asyncio.Task[None]] = []

        async def on_start() -> None:
            consumers.extend(await start_consumers(nc, engine, settings))
            every = float(settings.reconcile_seconds)
            background.append(asyncio.create_task(reconcile_forever(reconciler, every)))

        async def on_stop() -> None:
            # After requests stop and before NATS drains: no message is left half-done.
            for task in background:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            await stop_consumers(consumers)

        checks = {
            "database": database_ready(engine),
            "jetstream": streams_ready(
                nc, [subjects.RESULTS_STREAM, subjects.EVENTS_STREAM], settings
            ),
        }
        await serve(
            service,
            nc,
            health_port=settings.health_port,
            health_host=settings.health_host,
            checks=checks,
            on_start=on_start,
            on_stop=on_stop,
        )
    finally:
        await engine.dispose()


def main() -> int:
    setup_logs("wallet")
    settings = load_settings()
    problem = production_problem(settings)
    if problem is not None:
        print(f"wallet: {problem}", file=sys.stderr)
        return 2
    run_until_stopped(run(settings))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
