"""Players' public stats: ``GET /api/players/{user_id}/stats``, served by history.

Any signed-in player may see anyone's stats (a profile's record, as on a games
platform): hands played and won, net credits and biggest win per game, practice hands
apart. Private tables' hands count in the totals; no table or hand id is ever shown.
A player with no hands, or an id nobody has, answers 200 with empty lists (not a 404:
stats do not say whether an account exists).
"""

from __future__ import annotations

from typing import Annotated

from litestar import Controller, Request, get
from litestar.di import Provide
from litestar.params import Parameter

from kalaro.bus import request as bus_request
from kalaro.proto import endpoints
from kalaro.proto.history import GetPlayerStats, PlayerStats
from services.gateway import access
from services.gateway.hand_source import HISTORY_TIMEOUT_SECONDS
from services.gateway.routes import Claims, _nc, provide_claims

UserId = Annotated[str, Parameter(min_length=1, max_length=128)]


class PlayersController(Controller):
    path = "/api/players"
    tags = ["players"]
    guards = [access.SIGNED_IN]
    dependencies = {"claims": Provide(provide_claims)}

    @get("/{user_id:str}/stats", summary="A player's stats per game (public to signed-in players)")
    async def stats(
        self,
        request: Request,  # type: ignore[type-arg]
        claims: Claims,
        user_id: UserId,
    ) -> PlayerStats:
        """Bet hands per game in ``games``, practice hands in ``practice``; an unknown
        player's are empty. History unreachable: 503."""
        return await bus_request(
            _nc(request),
            endpoints.HISTORY_PLAYER_STATS,
            GetPlayerStats(user_id=user_id),
            timeout=HISTORY_TIMEOUT_SECONDS,
        )
