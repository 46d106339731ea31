"""REST routes of the one approval workflow (host access, credits): players ask, see
their own and withdraw; admins list every kind in one queue and decide with a reason.
Thin forwarding like routes.py: the workflow is the auth service's
(``services/auth/approvals.py``).
"""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, Request, get, post
from litestar.di import Provide
from litestar.params import FromQuery, JSONBody, Parameter

from kalaro.proto import api, endpoints
from kalaro.proto import approvals as ap
from services.gateway import access
from services.gateway.routes import Claims, Limit, Offset, forward, provide_admin, provide_claims

ApprovalId = Annotated[str, Parameter(min_length=1, max_length=64)]


class ApprovalsController(Controller):
    """A player's requests to admins."""

    path = "/api/approvals"
    tags = ["approvals"]
    guards = [access.SIGNED_IN]
    dependencies = {"claims": Provide(provide_claims)}

    @post("/", status_code=201, summary="Ask an admin for host access or credits")
    async def ask(
        self,
        request: Request,  # type: ignore[type-arg]
        claims: Claims,
        data: JSONBody[api.ApprovalBody],
    ) -> ap.Approval:
        kind: ap.ApprovalKind
        if isinstance(data, api.CreditsBody):
            kind, amount = "credits", data.amount
        else:
            kind, amount = "host_access", 0
        message = ap.RequestApproval(
            user_id=claims.user_id, kind=kind, amount=amount, note=data.note
        )
        return await forward(request, endpoints.AUTH_REQUEST_APPROVAL, message)

    @get("/", summary="My requests, newest first")
    async def mine(
        self,
        request: Request,  # type: ignore[type-arg]
        claims: Claims,
        kind: FromQuery[ap.ApprovalKind | None] = None,
        limit: Limit = 50,
    ) -> ap.ApprovalList:
        message = ap.ListApprovals(kind=kind, status=None, user_id=claims.user_id, limit=limit)
        return await forward(request, endpoints.AUTH_LIST_APPROVALS, message)

    @post("/{approval_id:str}/withdraw", status_code=200, summary="Withdraw a pending request")
    async def withdraw(
        self,
        request: Request,  # type: ignore[type-arg]
        claims: Claims,
        approval_id: ApprovalId,
    ) -> ap.Approval:
        message = ap.WithdrawApproval(approval_id=approval_id, user_id=claims.user_id)
        return await forward(request, endpoints.AUTH_WITHDRAW_APPROVAL, message)


class AdminApprovalsController(Controller):
    """Every request admins decide, one queue, filtered by kind and status."""

    path = "/api/admin/approvals"
    tags = ["admin"]
    guards = [access.ADMIN]
    dependencies = {"admin": Provide(provide_admin)}

    @get("/", summary="Requests to decide (pending by default), any kind")
    async def queue(
        self,
        request: Request,  # type: ignore[type-arg]
        admin: Claims,
        kind: FromQuery[ap.ApprovalKind | None] = None,
        status: FromQuery[ap.ApprovalStatus | None] = "pending",
        limit: Limit = 50,
        offset: Offset = 0,
    ) -> ap.ApprovalList:
        message = ap.ListApprovals(kind=kind, status=status, limit=limit, offset=offset)
        return await forward(request, endpoints.AUTH_LIST_APPROVALS, message)

    @get("/{approval_id:str}", summary="One request and its audit trail: who, when, why")
    async def trail(
        self,
        request: Request,  # type: ignore[type-arg]
        admin: Claims,
        approval_id: ApprovalId,
    ) -> ap.ApprovalTrail:
        message = ap.GetApprovalTrail(approval_id=approval_id, admin_id=admin.user_id)
        return await forward(request, endpoints.AUTH_APPROVAL_TRAIL, message)

    @post("/{approval_id:str}/decision", status_code=200, summary="Approve or decline")
    async def decide(
        self,
        request: Request,  # type: ignore[type-arg]
        admin: Claims,
        approval_id: ApprovalId,
        data: JSONBody[api.DecisionBody],
    ) -> ap.Approval:
        message = ap.DecideApproval(
            approval_id=approval_id,
            admin_id=admin.user_id,
            approve=data.approve,
            reason=data.reason,
        )
        return await forward(request, endpoints.AUTH_DECIDE_APPROVAL, message)
