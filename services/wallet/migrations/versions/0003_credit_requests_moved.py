"""Credit requests moved to auth's one approval workflow (``auth_approvals``).

Auth's revision 0004 moves the rows of ``wallet_credit_requests`` and drops it. Here it
is dropped only when empty (a new database, or auth moved it already): one with rows
waits for auth's revision, so no request is lost whichever service migrates first.

Revision ID: 0003
"""

from __future__ import annotations

import logging

from alembic import op
from sqlalchemy import inspect, text

revision = "0003"
down_revision: str | None = "0002"

log = logging.getLogger("kalaro.sql")


def upgrade() -> None:
    bind = op.get_bind()
    if not inspect(bind).has_table("wallet_credit_requests"):
        return
    if bind.scalar(text("SELECT COUNT(*) FROM wallet_credit_requests")):
        log.warning("wallet_credit_requests has rows: auth's revision 0004 moves them")
        return
    op.execute("DROP TABLE wallet_credit_requests")
