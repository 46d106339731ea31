"""``python -m services.wallet``: migrate the ledger, then serve it until SIGTERM."""

from __future__ import annotations

import logging
import sys

from kalaro.bus.jetstream import DurableConsumer
from kalaro.bus.runner import connect, run_until_stopped, serve
from kalaro.settings import Settings, load_settings, production_problem
from kalaro.sql import create_engine
from services.wallet.schema import migrate_wallet
from services.wallet.service import SERVICE_NAME, build_service, start_consumers, stop_consumers

log = logging.getLogger("kalaro.wallet")


async def run(settings: Settings) -> None:
    engine = create_engine(settings.database_url)
    try:
        nc = await connect(settings.nats_url, SERVICE_NAME)
        version = await migrate_wallet(engine)
        log.info("wallet schema at version %d on %s", version, engine.url.render_as_string())
        service = build_service(engine, settings)
        consumers: list[DurableConsumer] = []

        async def on_start() -> None:
            consumers.extend(await start_consumers(nc, engine, settings))

        async def on_stop() -> None:
            # After requests stop and before NATS drains: no message is left half-done.
            await stop_consumers(consumers)

        await serve(
            service, nc, health_port=settings.health_port, on_start=on_start, on_stop=on_stop
        )
    finally:
        await engine.dispose()


def main() -> int:
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    settings = load_settings()
    problem = production_problem(settings)
    if problem is not None:
        print(f"wallet: {problem}", file=sys.stderr)
        return 2
    run_until_stopped(run(settings))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
