"""The one approval workflow on real NATS and SQL: host access and credits asked,
listed, withdrawn, approved or declined by admins, audited; credits granted by the real
wallet exactly once, also when it was down at the decision."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from kalaro.proto import errors as codes
from kalaro.proto import subjects
from kalaro.proto.approvals import (
    Approval,
    ApprovalList,
    ApprovalTrail,
    DecideApproval,
    GetApprovalTrail,
    ListApprovals,
    RequestApproval,
    WithdrawApproval,
)
from kalaro.proto.auth import (
    GetProfile,
    GetPublicKeys,
    PublicKeys,
    Refresh,
    TokenPair,
    UserProfile,
)
from kalaro.proto.wallet import Balance, GetBalance, GetHistory, History
from kalaro.settings import load_settings
from kalaro.tokens import verify_access_token
from services.auth import approval_store
from services.auth.accounts import ensure_admin
from services.auth.approvals import apply_loop, apply_owed
from services.wallet.bootstrap import build_service as wallet_service
from services.wallet.handlers import wallet_deps
from services.wallet.schema import migrate_wallet
from tests.integration.auth.harness import AuthHarness


async def _admin(auth: AuthHarness) -> str:
    account = await ensure_admin(auth.deps.engine, auth.deps.passwords, auth.email("admin"))
    return account.user_id


async def _ask(
    auth: AuthHarness, user_id: str, kind: str = "host_access", **kw: object
) -> Approval:
    message = RequestApproval(user_id=user_id, kind=kind, **kw)  # type: ignore[arg-type]
    return await auth.call(subjects.AUTH_REQUEST_APPROVAL, message, Approval)


async def _decide(
    auth: AuthHarness, approval_id: str, admin_id: str, approve: bool, reason: str = ""
) -> Approval:
    message = DecideApproval(
        approval_id=approval_id, admin_id=admin_id, approve=approve, reason=reason
    )
    return await auth.call(subjects.AUTH_DECIDE_APPROVAL, message, Approval)


async def _list(auth: AuthHarness, **kw: object) -> list[str]:
    found = await auth.call(subjects.AUTH_LIST_APPROVALS, ListApprovals(**kw), ApprovalList)  # type: ignore[arg-type]
    return [a.approval_id for a in found.approvals]


async def _trail(auth: AuthHarness, approval_id: str) -> list[tuple[str, str, str]]:
    """(state entered, by whom, why) in order, as an admin reads it on the bus."""
    admin_id = await _admin(auth)
    read = await auth.call(
        subjects.AUTH_APPROVAL_TRAIL,
        GetApprovalTrail(approval_id=approval_id, admin_id=admin_id),
        ApprovalTrail,
    )
    assert read.approval.approval_id == approval_id
    assert [e.seq for e in read.events] == list(range(1, len(read.events) + 1))
    assert all(e.at for e in read.events)
    return [(e.status, e.actor, e.reason) for e in read.events]


@asynccontextmanager
async def _wallet(auth: AuthHarness) -> AsyncIterator[None]:
    """The real wallet on the same database and NATS, for as long as the block runs."""
    engine = auth.deps.engine
    await migrate_wallet(engine)
    settings = load_settings({}, database_url=auth.settings.database_url)
    service = wallet_service(wallet_deps(engine, settings))
    await service.start(auth.nc)
    try:
        yield
    finally:
        await service.stop()


async def _balance(auth: AuthHarness, user_id: str) -> int:
    return (await auth.call(subjects.WALLET_BALANCE, GetBalance(user_id=user_id), Balance)).balance


async def test_host_access_approved_grants_the_role_in_the_decision(auth: AuthHarness) -> None:
    admin_id = await _admin(auth)
    player = await auth.sign_up(name="Aling Nena")
    user_id = player.user.user_id

    asked = await _ask(auth, user_id, note=" I run Friday games ")
    assert (asked.kind, asked.status, asked.note, asked.display_name, asked.amount) == (
        "host_access",
        "pending",
        "I run Friday games",
        "Aling Nena",
        0,
    )
    again = await _ask(auth, user_id)
    assert again.approval_id == asked.approval_id  # asking twice: the same request
    assert await _list(auth) == [asked.approval_id]
    assert await _list(auth, kind="credits") == []

    # A player cannot decide, not even their own request.
    for who in (user_id, "no-such-admin"):
        err = await auth.refused(
            subjects.AUTH_DECIDE_APPROVAL,
            DecideApproval(approval_id=asked.approval_id, admin_id=who, approve=True),
            Approval,
        )
        assert err.code == codes.FORBIDDEN
    profile = await auth.call(subjects.AUTH_PROFILE, GetProfile(user_id=user_id), UserProfile)
    assert profile.roles == ("player",)

    decided = await _decide(auth, asked.approval_id, admin_id, True, "welcome")
    assert (decided.status, decided.decided_by, decided.reason) == ("applied", admin_id, "welcome")
    assert decided.decided_at is not None and decided.applied_at is not None
    profile = await auth.call(subjects.AUTH_PROFILE, GetProfile(user_id=user_id), UserProfile)
    assert profile.roles == ("player", "host")
    assert await _trail(auth, asked.approval_id) == [
        ("pending", user_id, ""),
        ("approved", admin_id, "welcome"),
        ("applied", admin_id, ""),
    ]

    # The next refresh carries the new role in the access token.
    keys = await auth.call(subjects.AUTH_PUBLIC_KEYS, GetPublicKeys(), PublicKeys)
    fresh = await auth.call(
        subjects.AUTH_REFRESH, Refresh(refresh_token=player.refresh_token), TokenPair
    )
    claims = verify_access_token(fresh.access_token, list(keys.keys), keys.issuer, keys.audience)
    assert claims.roles == ("player", "host")

    err = await auth.refused(
        subjects.AUTH_DECIDE_APPROVAL,
        DecideApproval(approval_id=asked.approval_id, admin_id=admin_id, approve=False),
        Approval,
    )
    assert (err.code, err.message) == (codes.ALREADY_DECIDED, "this request was already applied")
    err = await auth.refused(
        subjects.AUTH_REQUEST_APPROVAL,
        RequestApproval(user_id=user_id, kind="host_access"),
        Approval,
    )
    assert err.code == codes.CONFLICT  # already a host
    assert await _list(auth, status="applied") == [asked.approval_id]
    assert await _list(auth) == []
    # The trail is the admins': a player reading it is refused, an unknown id not found.
    err = await auth.refused(
        subjects.AUTH_APPROVAL_TRAIL,
        GetApprovalTrail(approval_id=asked.approval_id, admin_id=user_id),
        ApprovalTrail,
    )
    assert err.code == codes.FORBIDDEN
    err = await auth.refused(
        subjects.AUTH_APPROVAL_TRAIL,
        GetApprovalTrail(approval_id="no-such-request", admin_id=admin_id),
        ApprovalTrail,
    )
    assert err.code == codes.NOT_FOUND


async def test_declined_and_withdrawn_requests_leave_roles_and_allow_asking_again(
    auth: AuthHarness,
) -> None:
    admin_id = await _admin(auth)
    player = await auth.sign_up()
    user_id = player.user.user_id
    asked = await _ask(auth, user_id)
    declined = await _decide(auth, asked.approval_id, admin_id, False, "not yet")
    assert (declined.status, declined.reason) == ("declined", "not yet")
    profile = await auth.call(subjects.AUTH_PROFILE, GetProfile(user_id=user_id), UserProfile)
    assert profile.roles == ("player",)

    again = await _ask(auth, user_id)
    assert again.approval_id != asked.approval_id and again.status == "pending"
    # Only who asked withdraws; anyone else is told there is no such request.
    other = await auth.sign_up()
    err = await auth.refused(
        subjects.AUTH_WITHDRAW_APPROVAL,
        WithdrawApproval(approval_id=again.approval_id, user_id=other.user.user_id),
        Approval,
    )
    assert err.code == codes.NOT_FOUND
    withdrawn = await auth.call(
        subjects.AUTH_WITHDRAW_APPROVAL,
        WithdrawApproval(approval_id=again.approval_id, user_id=user_id),
        Approval,
    )
    assert withdrawn.status == "withdrawn"
    err = await auth.refused(
        subjects.AUTH_DECIDE_APPROVAL,
        DecideApproval(approval_id=again.approval_id, admin_id=admin_id, approve=True),
        Approval,
    )
    assert err.code == codes.ALREADY_DECIDED
    err = await auth.refused(
        subjects.AUTH_WITHDRAW_APPROVAL,
        WithdrawApproval(approval_id=asked.approval_id, user_id=user_id),
        Approval,
    )
    assert err.code == codes.ILLEGAL_TRANSITION  # decided already
    assert await _trail(auth, again.approval_id) == [
        ("pending", user_id, ""),
        ("withdrawn", user_id, ""),
    ]
    mine = await _list(auth, user_id=user_id, status=None)
    assert sorted(mine) == sorted([asked.approval_id, again.approval_id])

    for message in (
        DecideApproval(approval_id="no-such-request", admin_id=admin_id, approve=True),
        WithdrawApproval(approval_id="no-such-request", user_id=user_id),
    ):
        subject = (
            subjects.AUTH_DECIDE_APPROVAL
            if isinstance(message, DecideApproval)
            else subjects.AUTH_WITHDRAW_APPROVAL
        )
        assert (await auth.refused(subject, message, Approval)).code == codes.NOT_FOUND
    err = await auth.refused(
        subjects.AUTH_REQUEST_APPROVAL,
        RequestApproval(user_id="nobody", kind="host_access"),
        Approval,
    )
    assert err.code == codes.NOT_FOUND


async def test_bad_requests_are_refused(auth: AuthHarness) -> None:
    user_id = (await auth.sign_up()).user.user_id
    for kind, amount in (("credits", 0), ("credits", 1_000_001), ("host_access", 5)):
        err = await auth.refused(
            subjects.AUTH_REQUEST_APPROVAL,
            RequestApproval(user_id=user_id, kind=kind, amount=amount),  # type: ignore[arg-type]
            Approval,
        )
        assert err.code == codes.BAD_REQUEST, (kind, amount)
    err = await auth.refused(
        subjects.AUTH_REQUEST_APPROVAL,
        RequestApproval(user_id=user_id, kind="credits", amount=5, note="x" * 501),
        Approval,
    )
    assert err.code == codes.BAD_REQUEST
    err = await auth.refused(subjects.AUTH_LIST_APPROVALS, ListApprovals(limit=0), ApprovalList)
    assert err.code == codes.BAD_REQUEST
    assert await auth.count("auth_approvals") == 0


async def test_racing_host_requests_make_one(auth: AuthHarness) -> None:
    player = await auth.sign_up()
    replies = await asyncio.gather(*(_ask(auth, player.user.user_id) for _ in range(5)))
    assert len({r.approval_id for r in replies}) == 1
    assert await auth.count("auth_approvals") == 1


async def test_credits_approved_are_granted_by_the_wallet_exactly_once(auth: AuthHarness) -> None:
    admin_id = await _admin(auth)
    user_id = (await auth.sign_up()).user.user_id
    async with _wallet(auth):
        first = await _ask(auth, user_id, "credits", amount=300, note="Friday")
        second = await _ask(auth, user_id, "credits", amount=50)  # several may be pending
        assert await _list(auth, kind="credits") == [first.approval_id, second.approval_id]
        # Two admins deciding at once: one decision wins, the other is told.
        results = await asyncio.gather(
            _decide(auth, first.approval_id, admin_id, True, "have fun"),
            _decide(auth, first.approval_id, admin_id, False, "no"),
            return_exceptions=True,
        )
        won = [r for r in results if isinstance(r, Approval)]
        assert len(won) == 1
        lost = [r for r in results if not isinstance(r, Approval)]
        assert [getattr(e, "code", e) for e in lost] == [codes.ALREADY_DECIDED]
        declined = await _decide(auth, second.approval_id, admin_id, False, "enough")
        assert declined.status == "declined"
        credited = 300 if won[0].status == "applied" else 0
        assert won[0].status in ("applied", "declined")
        assert await _balance(auth, user_id) == credited
        if credited:
            assert won[0].tx_id is not None
            history = await auth.call(subjects.WALLET_HISTORY, GetHistory(user_id=user_id), History)
            assert [(e.kind, e.amount, e.memo) for e in history.entries] == [
                ("credit_request", 300, "have fun")
            ]
            assert [s for s, _, _ in await _trail(auth, first.approval_id)] == [
                "pending",
                "approved",
                "applied",
            ]
        assert await apply_owed(auth.deps) == 0  # nothing owed
        assert await _balance(auth, user_id) == credited


async def test_credits_approved_while_the_wallet_is_down_are_applied_once_it_is_back(
    auth: AuthHarness,
) -> None:
    admin_id = await _admin(auth)
    user_id = (await auth.sign_up()).user.user_id
    await migrate_wallet(auth.deps.engine)
    # No wallet serves: the decision is kept, its grant owed.
    asked = await _ask(auth, user_id, "credits", amount=120)
    decided = await _decide(auth, asked.approval_id, admin_id, True, "ok")
    assert (decided.status, decided.applied_at, decided.tx_id) == ("approved", None, None)
    assert await apply_owed(auth.deps) == 0  # still down: still owed
    assert await _list(auth, status="approved") == [asked.approval_id]

    async with _wallet(auth):
        assert await _balance(auth, user_id) == 0
        # The next decision applies what is owed (the retry loop would, too).
        later = await _ask(auth, user_id, "credits", amount=30)
        await _decide(auth, later.approval_id, admin_id, True)
        assert await _balance(auth, user_id) == 150
        assert await _list(auth, status="approved") == []
        assert await apply_owed(auth.deps) == 0
        assert await _balance(auth, user_id) == 150  # once, however often applied
    async with auth.deps.engine.connect() as conn:
        applied = await approval_store.approval(conn, asked.approval_id)
    assert applied is not None and applied.status == "applied" and applied.tx_id is not None
    assert await _trail(auth, asked.approval_id) == [
        ("pending", user_id, ""),
        ("approved", admin_id, "ok"),
        ("applied", "system", ""),
    ]


async def test_the_retry_loop_applies_what_the_wallet_owes_without_another_decision(
    auth: AuthHarness,
) -> None:
    admin_id = await _admin(auth)
    user_id = (await auth.sign_up()).user.user_id
    await migrate_wallet(auth.deps.engine)
    asked = await _ask(auth, user_id, "credits", amount=70)
    assert (await _decide(auth, asked.approval_id, admin_id, True)).status == "approved"
    async with _wallet(auth):
        loop = asyncio.create_task(apply_loop(auth.deps, every=0.05))
        try:
            for _ in range(100):
                if not await _list(auth, status="approved"):
                    break
                await asyncio.sleep(0.05)
        finally:
            loop.cancel()
        assert await _list(auth, status="applied") == [asked.approval_id]
        assert await _balance(auth, user_id) == 70
