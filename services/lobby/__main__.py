"""``python -m services.lobby``: serve the lobby until SIGTERM (see
:mod:`services.lobby.bootstrap`)."""

from __future__ import annotations

from kalaro.bus.runner import service_main
from services.lobby.bootstrap import bootstrap
from services.lobby.service import SERVICE_NAME


def main() -> int:
    return service_main(SERVICE_NAME, bootstrap)


if __name__ == "__main__":
    raise SystemExit(main())
