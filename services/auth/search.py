"""Admins search accounts. The admin check is made here as well as in the gateway: a
request on the bus from anywhere else must not be able to read accounts. (Host access
is asked for and granted through the one approval workflow: :mod:`services.auth.approvals`.)"""

from __future__ import annotations

from kalaro.proto.auth import SearchUsers, UserSearchResult
from services.auth import rules, store
from services.auth.deps import AuthDeps


async def search_users(req: SearchUsers, deps: AuthDeps) -> UserSearchResult:
    """Accounts whose email or display name contains ``query``, case-insensitively;
    prefix matches first, then by name. Profiles only, never credentials.

    Emails are stored lower-cased; names are compared with SQL ``lower()``, which on
    SQLite folds ASCII letters only (PostgreSQL folds all).
    """
    query = rules.search_text(req.query, req.limit, req.offset)
    async with deps.engine.connect() as conn:
        admin = await store.account_by_id(conn, req.admin_id)
        rules.require_admin(admin, "only an admin can search users")
        # One more row than the page says whether there is another page.
        found = await store.search_accounts(
            conn, rules.like_escape(query), req.limit + 1, req.offset
        )
    more = len(found) > req.limit
    return UserSearchResult(
        users=tuple(rules.profile(account) for account in found[: req.limit]),
        next_offset=req.offset + req.limit if more else None,
    )
