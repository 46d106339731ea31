"""Roles granted by people: players ask to host tables, admins decide; admins search
accounts. The admin check is made here as well as in the gateway: a request on the bus
from anywhere else must not be able to grant roles or read accounts."""

from __future__ import annotations

import logging
import uuid

from sqlalchemy.exc import IntegrityError

from kalaro.bus import ServiceError
from kalaro.proto import errors as codes
from kalaro.proto.auth import (
    DecideHostRequest,
    HostRequest,
    HostRequestList,
    ListHostRequests,
    RequestHost,
    SearchUsers,
    UserSearchResult,
)
from services.auth import rules, store
from services.auth.deps import AuthDeps

log = logging.getLogger("services.auth")


async def request_host(req: RequestHost, deps: AuthDeps) -> HostRequest:
    """Ask to become a host; asking again while pending returns the same request."""
    note = rules.clean_note(req.note)
    try:
        async with deps.engine.begin() as conn:
            rules.require_may_request_host(await store.account_by_id(conn, req.user_id))
            existing = await store.pending_host_request(conn, req.user_id)
            if existing is not None:
                return rules.host_request_view(existing)
            request_id = uuid.uuid4().hex
            await store.insert_host_request(conn, request_id, req.user_id, note, deps.now_ms())
            row = await store.host_request(conn, request_id)
            assert row is not None  # inserted just now, in this transaction
            return rules.host_request_view(row)
    except IntegrityError:
        # Raced with the same user's other request (one pending per user): return it.
        async with deps.engine.connect() as conn:
            existing = await store.pending_host_request(conn, req.user_id)
        if existing is None:
            raise
        return rules.host_request_view(existing)


async def list_host_requests(req: ListHostRequests, deps: AuthDeps) -> HostRequestList:
    """Pending requests oldest first (a queue); decided ones newest first (history)."""
    rules.check_list_page(req.limit, req.offset)
    async with deps.engine.connect() as conn:
        rows = await store.host_requests_page(conn, req.status, req.limit, req.offset)
    return HostRequestList(requests=tuple(rules.host_request_view(row) for row in rows))


async def decide_host_request(req: DecideHostRequest, deps: AuthDeps) -> HostRequest:
    """An admin approves (the user gains ``host``) or rejects a pending request."""
    reason = rules.clean_note(req.reason, "reasons")
    status = rules.decision_status(req.approve)
    async with deps.engine.begin() as conn:
        admin = await store.account_by_id(conn, req.admin_id)
        rules.require_admin(admin, "only an admin can decide host requests")
        current = await store.locked_host_request(conn, req.request_id)
        if current is None:
            raise ServiceError(codes.NOT_FOUND, "no such host request")
        decided = await store.decide_host_request(
            conn, req.request_id, status, req.admin_id, deps.now_ms(), reason
        )
        if not decided:
            raise rules.already_decided(current)
        if req.approve:
            user = await store.account_by_id(conn, current.user_id, lock=True)
            assert user is not None  # a request's user is a foreign key
            await store.update_account(
                conn, current.user_id, roles=rules.with_roles(user.roles, "host")
            )
        row = await store.host_request(conn, req.request_id)
        assert row is not None  # locked and decided in this transaction
    log.info("host request %s %s by %s", req.request_id, status, req.admin_id)
    return rules.host_request_view(row)


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
