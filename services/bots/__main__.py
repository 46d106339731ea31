"""``python -m services.bots``: seat and play bots until SIGTERM (they resume elsewhere)."""

from __future__ import annotations

import logging

from kalaro.bus.runner import service_main
from services.bots.bootstrap import bootstrap
from services.bots.service import SERVICE_NAME


def main() -> int:
    # The SDK's HTTP client logs every request at INFO: far too chatty for a bot.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    return service_main(SERVICE_NAME, bootstrap)


if __name__ == "__main__":
    raise SystemExit(main())
