"""REST routes of ranked play (issue 34), forwarded to the ranked service: ratings, the
quick-play queue, leaderboards, and for admins the fair-play report and the actions on
accounts (warn, bar from ranked, freeze; each with a reason, audited).

Kept apart from routes.py so work on either never collides.
"""

from __future__ import annotations

from typing import Annotated

import msgspec
from litestar import Controller, Request, delete, get, post
from litestar.di import Provide
from litestar.params import FromQuery, JSONBody, Parameter

from kalaro.proto import endpoints
from kalaro.proto import lobby as lb
from kalaro.proto import ranked as rk
from kalaro.proto.api import whole
from services.gateway import access
from services.gateway.routes import Claims, forward, provide_admin, provide_claims
from services.gateway.security import request_address

UserId = Annotated[str, Parameter(min_length=1, max_length=128)]
GameQuery = Annotated[lb.Game, Parameter(description="tongits, mahjong or kawuxing")]
PeriodQuery = Annotated[
    rk.Period, Parameter(description="week: rated in the last 7 days; all: everyone")
]
Days = Annotated[int, Parameter(ge=1, le=90)]


class QueueBody(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    game: lb.Game
    bet: Annotated[int, msgspec.Meta(ge=1, le=100_000)]


class ReasonBody(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    # Something to read: at least one character that is not a space.
    reason: Annotated[str, msgspec.Meta(min_length=1, max_length=500, pattern=r"\S")]


class RatingsController(Controller):
    path = "/api"
    tags = ["ranked"]
    guards = [access.SIGNED_IN]
    dependencies = {"claims": Provide(provide_claims)}

    @get("/ratings/{user_id:str}", summary="A player's rating per game")
    async def ratings(
        self,
        request: Request,  # type: ignore[type-arg]
        claims: Claims,
        user_id: UserId,
    ) -> rk.Ratings:
        """Per game: the shown rating (conservative), ``mu`` and ``sigma`` (its
        uncertainty), the tier, rated hands and the last change (signed). A player with
        no rated hand has the newcomer's rating (1000)."""
        return await forward(request, endpoints.RANKED_RATINGS, rk.GetRatings(user_id=user_id))

    @get("/leaderboard", summary="The top 100 of a game and the caller's own place")
    async def leaderboard(
        self,
        request: Request,  # type: ignore[type-arg]
        claims: Claims,
        game: GameQuery,
        period: PeriodQuery = "all",
    ) -> rk.Leaderboard:
        """In rating order (ties: more hands first); ``me`` is the caller's row, counted
        from 1, or null when they are not on this board."""
        ask = rk.GetLeaderboard(game=game, period=period, caller_id=claims.user_id)
        return await forward(request, endpoints.RANKED_LEADERBOARD, ask)


class QueueController(Controller):
    path = "/api/queue"
    tags = ["ranked"]
    guards = [access.SIGNED_IN]
    dependencies = {"claims": Provide(provide_claims)}

    @post("/", status_code=200, summary="Join the ranked queue for a game and bet")
    async def join(
        self,
        request: Request,  # type: ignore[type-arg]
        claims: Claims,
        data: JSONBody[QueueBody],
    ) -> rk.QueueStatus:
        """The usual balance check applies (the table's maximum loss at this bet must be
        available: 402-like ``insufficient_funds`` otherwise); a frozen or barred account
        is refused (403). Seated: a ``seated`` frame on the player's WebSocket."""
        ask = rk.JoinQueue(
            user_id=claims.user_id,
            game=data.game,
            bet=data.bet,
            address=request_address(request),
        )
        return await forward(request, endpoints.RANKED_QUEUE_JOIN, ask)

    @delete("/", status_code=200, summary="Leave the ranked queue")
    async def leave(
        self,
        request: Request,  # type: ignore[type-arg]
        claims: Claims,
    ) -> rk.QueueStatus:
        return await forward(
            request, endpoints.RANKED_QUEUE_LEAVE, rk.LeaveQueue(user_id=claims.user_id)
        )

    @get("/", summary="Where the caller stands in the ranked queue")
    async def status(
        self,
        request: Request,  # type: ignore[type-arg]
        claims: Claims,
    ) -> rk.QueueStatus:
        """``{"status": "waiting", "waited_s": …}``, ``{"status": "seated", "table_id":
        …}`` or ``{"status": "idle"}``."""
        ask = rk.GetQueueStatus(user_id=claims.user_id)
        return await forward(request, endpoints.RANKED_QUEUE_STATUS, ask)


class FairPlayController(Controller):
    path = "/api/admin"
    tags = ["admin"]
    guards = [access.ADMIN]
    dependencies = {"admin": Provide(provide_admin)}

    @get("/fair-play", summary="Fair-play signals and the latest admin actions")
    async def fair_play(
        self,
        request: Request,  # type: ignore[type-arg]
        admin: Claims,
        game: FromQuery[lb.Game | None] = None,
        days: Days = 30,
    ) -> rk.FairPlayReport:
        """Pairs that sit together far more often than chance, credit flowing mostly one
        way, accounts sharing an address or device (24 h); each with its hands."""
        ask = rk.GetFairPlay(admin_id=admin.user_id, game=game, days=days)
        return await forward(request, endpoints.RANKED_FAIR_PLAY, ask)

    @post(
        "/players/{user_id:str}/{action:str}",
        status_code=200,
        summary="Warn, bar from ranked (or lift it), freeze (or unfreeze) an account",
        description="`action`: warn, bar-ranked, unbar-ranked, freeze, unfreeze. Each is "
        "audited with its reason. A frozen account cannot queue or sit (the lobby asks); "
        "a barred one cannot queue for ranked tables. An account auth does not know: 404.",
    )
    async def act(
        self,
        request: Request,  # type: ignore[type-arg]
        admin: Claims,
        user_id: UserId,
        action: Annotated[
            str, Parameter(pattern=whole("warn|bar-ranked|unbar-ranked|freeze|unfreeze"))
        ],
        data: JSONBody[ReasonBody],
    ) -> rk.AdminActed:
        name: rk.AdminActionName = msgspec.convert(action, rk.AdminActionName)
        ask = rk.AdminAct(admin_id=admin.user_id, user_id=user_id, action=name, reason=data.reason)
        return await forward(request, endpoints.RANKED_ADMIN_ACT, ask)
