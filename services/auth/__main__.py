"""``python -m services.auth``: run the auth service, or ``create-admin`` for operators.

Serving: :func:`services.auth.bootstrap.bootstrap` (migrate, make sure the admin named
in settings exists, if any), then serve until SIGTERM.

``create-admin --email E [--name N] [--password P] [--reset-password]`` creates the
account, or promotes an existing one, to admin. Without ``--password`` a new account
gets a strong random password, printed once on stdout; an existing account keeps
its password unless ``--password`` or ``--reset-password`` is given.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError

from kalaro.bus import ServiceError
from kalaro.bus.runner import checked_settings, service_main
from kalaro.settings import Settings
from kalaro.sql import create_engine
from services.auth.accounts import AdminAccount, ensure_admin
from services.auth.bootstrap import SERVICE_NAME, bootstrap, print_admin
from services.auth.passwords import Passwords
from services.auth.schema import migrate_auth

log = logging.getLogger("services.auth")


def _reason(exc: BaseException) -> str:
    """The innermost cause's text on one line (SQLAlchemy wraps the driver's error)."""
    while exc.__cause__ is not None:
        exc = exc.__cause__
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:300]


async def create_admin(
    settings: Settings,
    email: str,
    *,
    name: str = "Admin",
    password: str = "",
    reset_password: bool = False,
) -> AdminAccount:
    """The ``create-admin`` command: needs only the database (no NATS, no Redis)."""
    engine = create_engine(settings.database_url)
    try:
        await migrate_auth(engine)
        return await ensure_admin(
            engine,
            Passwords(),
            email,
            display_name=name,
            password=password,
            replace_password=bool(password) or reset_password,
        )
    finally:
        await engine.dispose()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m services.auth", description=__doc__)
    commands = parser.add_subparsers(dest="command")
    commands.add_parser("serve", help="run the auth service (the default)")
    admin = commands.add_parser("create-admin", help="create or promote an admin account")
    admin.add_argument("--email", required=True)
    admin.add_argument("--name", default="Admin")
    admin.add_argument("--password", default="", help="omit to generate one (printed once)")
    admin.add_argument(
        "--reset-password", action="store_true", help="give an existing account a new password"
    )
    args = parser.parse_args(argv)
    if args.command != "create-admin":
        return service_main(SERVICE_NAME, bootstrap, owns_sql=True)
    settings = checked_settings(SERVICE_NAME, owns_sql=True)
    if settings is None:
        return 2
    try:
        account = asyncio.run(
            create_admin(
                settings,
                args.email,
                name=args.name,
                password=args.password,
                reset_password=args.reset_password,
            )
        )
    except ServiceError as exc:
        print(f"create-admin: {exc.message}", file=sys.stderr)
        return 2
    except (OSError, TimeoutError, SQLAlchemyError) as exc:
        # An operator's typo or a database that is down: say which, no traceback.
        where = make_url(settings.database_url).render_as_string(hide_password=True)
        print(
            f"create-admin: cannot reach the database at {where}: {_reason(exc)}",
            file=sys.stderr,
        )
        return 1
    print_admin(account)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
