"""REST routes for practice tables and bots: thin forwarding to the lobby, like routes.py.

Both wait for the bots service to sit its bots down through this same gateway, so they
allow the lobby longer than the default request time (the lobby gives up on the bots
first and says so).
"""

from __future__ import annotations

from litestar import Controller, Request, post
from litestar.di import Provide
from litestar.params import JSONBody
from nats.aio.client import Client as NATS

from kalaro.bus import request as bus_request
from kalaro.proto import api, endpoints
from kalaro.proto import lobby as lb
from services.gateway import access
from services.gateway.routes import Claims, TableId, caller, provide_claims

#: Longer than the lobby's own wait for the bots service (8 s), so its error gets through.
BOTS_REQUEST_SECONDS = 15.0


class PracticeController(Controller):
    """Practice tables (any player) and bots at zero-bet tables (their host)."""

    path = "/api"
    tags = ["tables"]
    guards = [access.SIGNED_IN]
    dependencies = {"claims": Provide(provide_claims)}

    @post("/practice", status_code=201, summary="Start a practice table against bots")
    async def create_practice(
        self,
        request: Request,  # type: ignore[type-arg]
        claims: Claims,
        data: JSONBody[api.PracticeBody],
    ) -> lb.TableCreated:
        message = lb.CreatePractice(
            caller=caller(claims), game=data.game, ruleset=data.ruleset, options=data.options
        )
        nc: NATS = request.app.state.nc
        return await bus_request(
            nc, endpoints.LOBBY_CREATE_PRACTICE, message,
            timeout=BOTS_REQUEST_SECONDS,
        )  # fmt: skip

    @post(
        "/tables/{table_id:str}/bots",
        status_code=200,
        summary="Seat a bot (host, 0 bet)",
        guards=[access.TABLE_HOST_ONLY],
    )
    async def add_bot(
        self,
        request: Request,  # type: ignore[type-arg]
        claims: Claims,
        table_id: TableId,
        data: JSONBody[api.AddBotBody],
    ) -> lb.TableInfo:
        message = lb.AddBot(caller=caller(claims), table_id=table_id, seat=data.seat)
        nc: NATS = request.app.state.nc
        return await bus_request(nc, endpoints.LOBBY_ADD_BOT, message, timeout=BOTS_REQUEST_SECONDS)
