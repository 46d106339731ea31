"""One approval workflow: host access and credit requests in ``auth_approvals``.

Creates ``auth_approvals`` (every request an admin decides, whatever its kind) and
``auth_approval_events`` (its audit trail: one row per transition, who, when, why), then
moves the rows of the two tables it replaces and drops them:

* ``auth_host_requests``: pending stays pending; approved becomes ``applied`` (the
  role was granted in the deciding transaction); rejected becomes ``declined``.
* ``wallet_credit_requests`` (when the wallet's tables are in this database, as they
  are: every service shares one URL): pending stays pending; approved with its ledger
  transaction becomes ``applied`` (``tx_id`` kept); rejected becomes ``declined``. Its
  ISO-8601 times become epoch milliseconds. The wallet's revision 0003 drops the table
  only when it is empty, so whichever service migrates first, no row is lost.

Revision ID: 0004
"""

from __future__ import annotations

from alembic import op
from sqlalchemy import inspect

revision = "0004"
down_revision: str | None = "0003"

CREATE = (
    """CREATE TABLE auth_approvals (
                id VARCHAR(64) PRIMARY KEY,
                kind VARCHAR(16) NOT NULL,
                user_id VARCHAR(128) NOT NULL,
                amount BIGINT NOT NULL DEFAULT 0,
                note VARCHAR(500) NOT NULL DEFAULT '',
                status VARCHAR(16) NOT NULL,
                created_at BIGINT NOT NULL,
                decided_by VARCHAR(128),
                decided_at BIGINT,
                reason VARCHAR(500) NOT NULL DEFAULT '',
                applied_at BIGINT,
                tx_id BIGINT,
                CONSTRAINT auth_approvals_kind_ck CHECK (kind IN ('host_access', 'credits')),
                CONSTRAINT auth_approvals_status_ck CHECK
                    (status IN ('pending', 'approved', 'applied', 'declined', 'withdrawn')),
                CONSTRAINT auth_approvals_amount_ck CHECK (amount >= 0)
            )""",
    "CREATE INDEX ix_auth_approvals_status ON auth_approvals (status, created_at)",
    "CREATE INDEX ix_auth_approvals_user ON auth_approvals (user_id, created_at)",
    # At most one pending host-access request per user (credits: as many as they like).
    """CREATE UNIQUE INDEX ux_auth_approvals_pending_host ON auth_approvals (user_id)
                WHERE status = 'pending' AND kind = 'host_access'""",
    """CREATE TABLE auth_approval_events (
                approval_id VARCHAR(64) NOT NULL
                    REFERENCES auth_approvals (id) ON DELETE CASCADE,
                seq INTEGER NOT NULL,
                status VARCHAR(16) NOT NULL,
                actor VARCHAR(128) NOT NULL,
                at BIGINT NOT NULL,
                reason VARCHAR(500) NOT NULL DEFAULT '',
                PRIMARY KEY (approval_id, seq)
            )""",
    "CREATE INDEX ix_auth_approval_events_at ON auth_approval_events (at)",
)

MOVE_HOST_REQUESTS = """INSERT INTO auth_approvals
        (id, kind, user_id, amount, note, status, created_at, decided_by, decided_at,
         reason, applied_at)
    SELECT id, 'host_access', user_id, 0, note,
        CASE status WHEN 'approved' THEN 'applied' WHEN 'rejected' THEN 'declined'
            ELSE status END,
        created_at, decided_by, decided_at, reason,
        CASE status WHEN 'approved' THEN decided_at END
    FROM auth_host_requests"""

# The wallet kept ISO-8601 UTC text ("2026-01-01T00:00:00.000000+00:00").
EPOCH_MS = {
    "sqlite": "CAST(ROUND((julianday({0}) - 2440587.5) * 86400000) AS BIGINT)",
    "postgresql": "CAST(ROUND(EXTRACT(EPOCH FROM CAST({0} AS TIMESTAMPTZ)) * 1000) AS BIGINT)",
}

MOVE_CREDIT_REQUESTS = """INSERT INTO auth_approvals
        (id, kind, user_id, amount, note, status, created_at, decided_by, decided_at,
         reason, applied_at, tx_id)
    SELECT request_id, 'credits', user_id, amount, note,
        CASE WHEN status = 'approved' AND tx_id IS NOT NULL THEN 'applied'
            WHEN status = 'rejected' THEN 'declined' ELSE status END,
        {created}, decided_by, {decided}, reason,
        CASE WHEN status = 'approved' AND tx_id IS NOT NULL THEN {decided} END, tx_id
    FROM wallet_credit_requests"""

# The audit trail of the moved rows, from what they recorded: asked, decided, applied.
EVENTS = (
    """INSERT INTO auth_approval_events (approval_id, seq, status, actor, at, reason)
        SELECT id, 1, 'pending', user_id, created_at, '' FROM auth_approvals""",
    """INSERT INTO auth_approval_events (approval_id, seq, status, actor, at, reason)
        SELECT id, 2, CASE status WHEN 'declined' THEN 'declined' ELSE 'approved' END,
            COALESCE(decided_by, ''), decided_at, reason
        FROM auth_approvals WHERE decided_at IS NOT NULL""",
    """INSERT INTO auth_approval_events (approval_id, seq, status, actor, at, reason)
        SELECT id, 3, 'applied', COALESCE(decided_by, ''), applied_at, ''
        FROM auth_approvals WHERE applied_at IS NOT NULL""",
)


def upgrade() -> None:
    bind = op.get_bind()
    for statement in CREATE:
        op.execute(statement)
    op.execute(MOVE_HOST_REQUESTS)
    op.execute("DROP TABLE auth_host_requests")
    if inspect(bind).has_table("wallet_credit_requests"):
        epoch = EPOCH_MS[bind.dialect.name]
        op.execute(
            MOVE_CREDIT_REQUESTS.format(
                created=epoch.format("created_at"), decided=epoch.format("decided_at")
            )
        )
        op.execute("DROP TABLE wallet_credit_requests")
    for statement in EVENTS:
        op.execute(statement)
