"""``python -m services.history``: migrate its tables (Alembic), copy Redis's records,
then ingest and serve (see :mod:`services.history.bootstrap`)."""

from __future__ import annotations

from kalaro.bus.runner import service_main
from services.history.bootstrap import bootstrap
from services.history.service import SERVICE_NAME


def main() -> int:
    return service_main(SERVICE_NAME, bootstrap, owns_sql=True)


if __name__ == "__main__":
    raise SystemExit(main())
