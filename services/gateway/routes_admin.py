"""REST routes for finding users (admins) and for hosting (a table's invite link, letting
a removed player back): thin forwarding like routes.py, kept apart so that module's
other changes and these never collide.
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from litestar import Controller, Request, get, post
from litestar.di import Provide
from litestar.params import JSONBody, Parameter

from kalaro.proto import api, endpoints
from kalaro.proto import auth as a
from kalaro.proto import lobby as lb
from kalaro.proto import wallet as w
from services.gateway import access
from services.gateway.routes import (
    Before,
    Claims,
    Limit,
    TableId,
    caller,
    forward,
    provide_admin,
    provide_claims,
)

#: What an admin types: part of an email or display name (the auth service trims it).
SearchQuery = Annotated[str, Parameter(min_length=1, max_length=100, pattern=api.SEARCH_TEXT)]
SearchLimit = Annotated[int, Parameter(ge=1, le=50)]
SearchOffset = Annotated[int, Parameter(ge=0, le=10_000)]
UserId = Annotated[str, Parameter(min_length=1, max_length=64)]


class AllowBackBody(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    user_id: Annotated[str, msgspec.Meta(min_length=1, max_length=64)]


class AdminUsersController(Controller):
    """Admins find accounts by email or name, and read one account's ledger."""

    path = "/api/admin/users"
    tags = ["admin"]
    guards = [access.ADMIN]
    dependencies = {"admin": Provide(provide_admin)}

    @get(
        "/",
        summary="Find users by email or display name",
        description="Case-insensitive, anywhere in either; prefix matches first. Profiles "
        "only. Page with `offset` (the reply's `next_offset`, null on the last page).",
    )
    async def search(
        self,
        request: Request,  # type: ignore[type-arg]
        admin: Claims,
        q: SearchQuery,
        limit: SearchLimit = 20,
        offset: SearchOffset = 0,
    ) -> a.UserSearchResult:
        message = a.SearchUsers(admin_id=admin.user_id, query=q, limit=limit, offset=offset)
        return await forward(request, endpoints.AUTH_SEARCH_USERS, message)

    @get("/{user_id:str}/ledger", summary="A user's ledger entries, newest first")
    async def ledger(
        self,
        request: Request,  # type: ignore[type-arg]
        admin: Claims,
        user_id: UserId,
        limit: Limit = 50,
        before: Before = None,
    ) -> w.History:
        # The wallet's own history query; only this admin-only route names another user.
        message = w.GetHistory(user_id=user_id, limit=limit, before=before)
        return await forward(request, endpoints.WALLET_HISTORY, message)

    @get("/{user_id:str}/balance", summary="A user's balance, holds and available credits")
    async def balance(
        self,
        request: Request,  # type: ignore[type-arg]
        admin: Claims,
        user_id: UserId,
    ) -> w.Balance:
        return await forward(request, endpoints.WALLET_BALANCE, w.GetBalance(user_id=user_id))


class HostingController(Controller):
    """What a table's host does besides dealing: share its invite link, let people back."""

    path = "/api/tables"
    tags = ["tables"]
    guards = [access.SIGNED_IN]
    dependencies = {"claims": Provide(provide_claims)}

    @get(
        "/{table_id:str}/invite",
        summary="A private table's invite code (its host)",
        guards=[access.TABLE_HOST_ONLY],
    )
    async def invite(
        self,
        request: Request,  # type: ignore[type-arg]
        claims: Claims,
        table_id: TableId,
    ) -> lb.InviteCode:
        message = lb.GetInviteCode(caller=caller(claims), table_id=table_id)
        return await forward(request, endpoints.LOBBY_INVITE_CODE, message)

    @post(
        "/{table_id:str}/allow-back",
        status_code=200,
        summary="Let a removed player sit here again (host)",
        guards=[access.TABLE_HOST_ONLY],
    )
    async def allow_back(
        self,
        request: Request,  # type: ignore[type-arg]
        claims: Claims,
        table_id: TableId,
        data: JSONBody[AllowBackBody],
    ) -> lb.TableInfo:
        message = lb.AllowBack(caller=caller(claims), table_id=table_id, user_id=data.user_id)
        return await forward(request, endpoints.LOBBY_ALLOW_BACK, message)
