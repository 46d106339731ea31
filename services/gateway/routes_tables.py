"""REST routes for tables: list, watch, sit, ready, and a host's running of a table.

Thin forwarding to the lobby like the rest of the REST API (see
:mod:`services.gateway.routes` for the shared plumbing), kept in a module of its own
because it is the largest controller; practice tables are in ``routes_practice``.
"""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, Request, get, post
from litestar.di import Provide
from litestar.params import FromQuery, JSONBody, Parameter, QueryParameter

from kalaro.bus import RemoteError
from kalaro.proto import api, endpoints
from kalaro.proto import errors as codes
from kalaro.proto import lobby as lb
from kalaro.proto.engine import HandRecord
from kalaro.tokens import AccessClaims
from services.gateway import access
from services.gateway.hand_source import find_record
from services.gateway.routes import (
    Claims,
    Limit,
    TableId,
    _nc,
    caller,
    forward,
    provide_claims,
)


def _may_read_record(claims: AccessClaims, table: lb.TableInfo, record: HandRecord) -> bool:
    private = table.private or record.private  # the record says so too, since issue 31
    if not private or "admin" in claims.roles or claims.user_id == table.host_id:
        return True
    return any(p.user_id == claims.user_id for p in record.players)


class TablesController(Controller):
    """Tables: list and watch (anyone signed in; a private table with its invite code),
    sit and ready (players), run (hosts)."""

    path = "/api/tables"
    tags = ["tables"]
    guards = [access.SIGNED_IN]
    dependencies = {"claims": Provide(provide_claims)}

    @get("/", summary="Open tables, optionally by game or with free seats")
    async def list_tables(
        self,
        request: Request,  # type: ignore[type-arg]
        claims: Claims,
        game: FromQuery[lb.Game | None] = None,
        open_seats: FromQuery[bool] = False,
        limit: Limit = 50,
    ) -> lb.TableList:
        message = lb.ListTables(
            game=game, open_seats_only=open_seats, limit=limit, caller=caller(claims)
        )
        return await forward(request, endpoints.LOBBY_LIST_TABLES, message)

    @post("/", status_code=201, summary="Create a table (hosts)", guards=[access.HOST])
    async def create(
        self,
        request: Request,  # type: ignore[type-arg]
        claims: Claims,
        data: JSONBody[api.CreateTableBody],
    ) -> lb.TableCreated:
        message = lb.CreateTable(
            caller=caller(claims), game=data.game, bet=data.bet, ruleset=data.ruleset,
            options=data.options, private=data.private, chat_enabled=data.chat_enabled,
            min_rating=data.min_rating,
        )  # fmt: skip
        return await forward(request, endpoints.LOBBY_CREATE_TABLE, message)

    @get("/{table_id:str}", summary="One table")
    async def get_table(
        self,
        request: Request,  # type: ignore[type-arg]
        claims: Claims,
        table_id: TableId,
        invite_code: Annotated[str | None, QueryParameter(max_length=64)] = None,
    ) -> lb.TableInfo:
        # A private table: only for its host, players, admins, or with its invite code.
        message = lb.GetTable(table_id=table_id, caller=caller(claims), invite_code=invite_code)
        return await forward(request, endpoints.LOBBY_GET_TABLE, message)

    @post("/{table_id:str}/sit", status_code=200, summary="Sit down (needs the max loss)")
    async def sit(
        self,
        request: Request,  # type: ignore[type-arg]
        claims: Claims,
        table_id: TableId,
        data: JSONBody[api.SitBody],
    ) -> lb.TableInfo:
        message = lb.Sit(
            caller=caller(claims), table_id=table_id, seat=data.seat, invite_code=data.invite_code
        )
        return await forward(request, endpoints.LOBBY_SIT, message)

    @post("/{table_id:str}/leave", status_code=200, summary="Leave between hands")
    async def leave(
        self,
        request: Request,  # type: ignore[type-arg]
        claims: Claims,
        table_id: TableId,
    ) -> lb.TableInfo:
        message = lb.Leave(caller=caller(claims), table_id=table_id)
        return await forward(request, endpoints.LOBBY_LEAVE, message)

    @post("/{table_id:str}/leave-after-hand", status_code=200)
    async def leave_after_hand(
        self,
        request: Request,  # type: ignore[type-arg]
        claims: Claims,
        table_id: TableId,
        data: JSONBody[api.LeaveAfterHandBody],
    ) -> lb.TableInfo:
        message = lb.LeaveAfterHand(caller=caller(claims), table_id=table_id, leave=data.leave)
        return await forward(request, endpoints.LOBBY_LEAVE_AFTER_HAND, message)

    @post("/{table_id:str}/ready", status_code=200, summary="I am ready (with my entropy)")
    async def ready(
        self,
        request: Request,  # type: ignore[type-arg]
        claims: Claims,
        table_id: TableId,
        data: JSONBody[api.ReadyBody],
    ) -> lb.TableInfo:
        message = lb.SetReady(
            caller=caller(claims), table_id=table_id, ready=data.ready, entropy=data.entropy
        )
        return await forward(request, endpoints.LOBBY_SET_READY, message)

    @post(
        "/{table_id:str}/deal",
        status_code=200,
        summary="Deal the next hand (host)",
        guards=[access.TABLE_HOST_ONLY],
    )
    async def deal(
        self,
        request: Request,  # type: ignore[type-arg]
        claims: Claims,
        table_id: TableId,
    ) -> lb.TableInfo:
        message = lb.Deal(caller=caller(claims), table_id=table_id)
        return await forward(request, endpoints.LOBBY_DEAL, message)

    @post(
        "/{table_id:str}/remove",
        status_code=200,
        summary="Remove a player (host)",
        guards=[access.TABLE_HOST_ONLY],
    )
    async def remove(
        self,
        request: Request,  # type: ignore[type-arg]
        claims: Claims,
        table_id: TableId,
        data: JSONBody[api.RemovePlayerBody],
    ) -> lb.TableInfo:
        message = lb.RemovePlayer(caller=caller(claims), table_id=table_id, seat=data.seat)
        return await forward(request, endpoints.LOBBY_REMOVE_PLAYER, message)

    @post(
        "/{table_id:str}/end",
        status_code=200,
        summary="End the table between hands (host)",
        guards=[access.TABLE_HOST_ONLY],
    )
    async def end(
        self,
        request: Request,  # type: ignore[type-arg]
        claims: Claims,
        table_id: TableId,
    ) -> lb.TableInfo:
        message = lb.EndTable(caller=caller(claims), table_id=table_id)
        return await forward(request, endpoints.LOBBY_END_TABLE, message)

    @post(
        "/{table_id:str}/cancel",
        status_code=200,
        summary="Cancel now; voids the hand (host)",
        guards=[access.TABLE_HOST_ONLY],
    )
    async def cancel(
        self,
        request: Request,  # type: ignore[type-arg]
        claims: Claims,
        table_id: TableId,
    ) -> lb.TableInfo:
        message = lb.CancelTable(caller=caller(claims), table_id=table_id)
        return await forward(request, endpoints.LOBBY_CANCEL_TABLE, message)

    @get("/{table_id:str}/hands/{hand_id:str}", summary="A finished hand's record (to verify)")
    async def hand_record(
        self,
        request: Request,  # type: ignore[type-arg]
        claims: Claims,
        table_id: TableId,
        hand_id: Annotated[str, Parameter(min_length=1, max_length=64)],
    ) -> HandRecord:
        """Anyone's once a public table's hand finished or was voided (there is a record
        only then); at a private table only its players', host's and admins'. Anyone
        else is answered as if there were no such hand."""
        missing = RemoteError(codes.NOT_FOUND, "no such finished hand at this table")
        try:
            # No caller: the whole table whoever asks (the record's players decide below).
            table = await forward(
                request, endpoints.LOBBY_GET_TABLE, lb.GetTable(table_id=table_id)
            )
            # History's copy, or the engine's while history has not stored it yet.
            record = await find_record(_nc(request), table.game, hand_id)
        except RemoteError as exc:
            # No table, no hand, or one not to be seen: the one answer, word for word.
            if exc.code == codes.NOT_FOUND:
                raise missing from None
            raise
        if (
            record is None
            or record.table_id != table_id
            or record.game != table.game
            or not _may_read_record(claims, table, record)
        ):
            raise missing
        return record

    @post(
        "/{table_id:str}/chat-setting",
        status_code=200,
        summary="Turn chat on or off (host)",
        guards=[access.TABLE_HOST_ONLY],
    )
    async def chat_setting(
        self,
        request: Request,  # type: ignore[type-arg]
        claims: Claims,
        table_id: TableId,
        data: JSONBody[api.ChatSettingBody],
    ) -> lb.TableInfo:
        message = lb.SetChat(caller=caller(claims), table_id=table_id, enabled=data.enabled)
        return await forward(request, endpoints.LOBBY_SET_CHAT, message)

    @post(
        "/{table_id:str}/min-rating",
        status_code=200,
        summary="Set or clear the minimum rating to sit (host; public tables, issue 34)",
        guards=[access.TABLE_HOST_ONLY],
    )
    async def min_rating(
        self,
        request: Request,  # type: ignore[type-arg]
        claims: Claims,
        table_id: TableId,
        data: JSONBody[api.MinRatingBody],
    ) -> lb.TableInfo:
        message = lb.SetMinRating(
            caller=caller(claims), table_id=table_id, min_rating=data.min_rating
        )
        return await forward(request, endpoints.LOBBY_SET_MIN_RATING, message)
