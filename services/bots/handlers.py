"""The bots service's handler, in the services' one shape ``handle(cmd, deps)``: the
deps is the :class:`~services.bots.service.Bots` pool (its accounts, who plays where,
Redis, the bus, the bot settings)."""

from __future__ import annotations

import logging

from kalaro.bots import UnknownPolicy, policy_for
from kalaro.bus import ServiceError
from kalaro.client import ApiError
from kalaro.games.registry import UnknownGame
from kalaro.proto import errors as codes
from kalaro.proto.bots import BotSeated, SeatBot
from services.bots.service import SEAT_ATTEMPTS, Bots, Picking

log = logging.getLogger("kalaro.bots")


async def seat(req: SeatBot, bots: Bots) -> BotSeated:
    """Sit a bot in the seat the lobby kept for one, and play it."""
    try:
        policy_for(req.game, bots.settings.policy)
    except (UnknownGame, UnknownPolicy) as exc:
        raise ServiceError(codes.BAD_REQUEST, str(exc)) from None
    here = bots.playing.get((req.table_id, req.seat))
    if here is not None and not here[1].done():
        bot = here[0]  # a repeated request: the bot is already there
        return BotSeated(
            table_id=req.table_id,
            seat=req.seat,
            user_id=bot.account.user_id or "",
            display_name=bot.account.name,
        )
    # Seats of one table are often asked for together (a practice table): the
    # accounts being seated here are kept apart until every such request is done.
    picking = bots.picking.setdefault(req.table_id, Picking())
    picking.requests += 1
    try:
        for _ in range(SEAT_ATTEMPTS):
            account = await bots.pick(req.table_id, picking.accounts)
            picking.accounts.add(account.creds.index)
            try:
                await account.rest(lambda c: c.sit(req.table_id, req.seat))
            except ApiError as exc:
                if exc.status == 409 and "already sitting" in exc.message:
                    continue  # another replica seated this account here first
                raise ServiceError(exc.code, exc.message) from None
            return await bots.sit_down(req, account)
    except ServiceError:
        raise
    except Exception as exc:  # the gateway or auth is away
        log.warning("bots: cannot seat a bot at %s: %r", req.table_id, exc)
        raise ServiceError(codes.UNAVAILABLE, f"bots cannot reach the table: {exc!r}") from None
    finally:
        picking.requests -= 1
        if picking.requests == 0:
            del bots.picking[req.table_id]
    raise ServiceError(codes.CONFLICT, "no bot was free to sit at this table; try again")
