"""``python -m services.ranked``: migrate its tables (Alembic), then rate hands, run the
queue's matcher and serve ratings, leaderboards, the queue and fair play (see
:mod:`services.ranked.bootstrap`)."""

from __future__ import annotations

from kalaro.bus.runner import service_main
from services.ranked.bootstrap import SERVICE_NAME, bootstrap


def main() -> int:
    return service_main(SERVICE_NAME, bootstrap, owns_sql=True)


if __name__ == "__main__":
    raise SystemExit(main())
