"""``python -m services.wallet``: migrate the ledger, then serve it until SIGTERM."""

from __future__ import annotations

from kalaro.bus.runner import service_main
from services.wallet.bootstrap import bootstrap
from services.wallet.service import SERVICE_NAME


def main() -> int:
    return service_main(SERVICE_NAME, bootstrap, owns_sql=True)


if __name__ == "__main__":
    raise SystemExit(main())
