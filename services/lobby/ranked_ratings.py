"""What the lobby asks the ranked service (issue 34): a player's rating, for a table's
minimum rating, and their standing (a frozen account may not sit anywhere).

Both through the ranked service's declared endpoints (``endpoints.RANKED_RATINGS``,
``endpoints.RANKED_STANDING``).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from nats.aio.client import Client as NATS

from kalaro.bus import RemoteError, request
from kalaro.proto.endpoints import RANKED_RATINGS, RANKED_STANDING
from kalaro.proto.ranked import GetRatings, GetStanding

log = logging.getLogger("kalaro.lobby")


#: What the lobby asks: the player's rating in one game (None: not rated yet).
RatingOf = Callable[[str, str], Awaitable[float | None]]


async def rating_of(nc: NATS, user_id: str, game: str, *, timeout: float = 2.0) -> float | None:
    """``user_id``'s shown rating in ``game``; None when they have none yet.

    The ranked service not answering is not the player's fault, but a gated table must
    not let anyone through unchecked: the error goes back to the Sit (``unavailable``).
    """
    try:
        found = await request(nc, RANKED_RATINGS, GetRatings(user_id=user_id), timeout=timeout)
    except RemoteError as exc:
        log.info("ratings of %s not available: %s", user_id, exc)
        raise
    for entry in found.games:
        if entry.game == game:
            return float(entry.rating)
    return None


#: What the lobby asks before a sit: is the account frozen?
FrozenCheck = Callable[[str], Awaitable[bool]]


async def is_frozen(nc: NATS, user_id: str, *, timeout: float = 2.0) -> bool:
    """Whether an admin froze ``user_id`` (issue 34's fair play).

    The ranked service not answering lets the sit through (logged): ordinary tables do
    not stop working when ranked play is down, and a freeze also ends the account's
    sessions' use of the queue there. A frozen account found later is refused then.
    """
    try:
        standing = await request(nc, RANKED_STANDING, GetStanding(user_id=user_id), timeout=timeout)
    except RemoteError as exc:
        log.warning("standing of %s not available, sit allowed: %s", user_id, exc)
        return False
    return standing.frozen


class MemoryRatings:
    """The in-memory twin of the ranked service's ratings, for the unit tier."""

    def __init__(self, ratings: dict[tuple[str, str], float] | None = None) -> None:
        self.ratings = dict(ratings or {})
        self.asked: list[tuple[str, str]] = []
        self.frozen: set[str] = set()

    async def __call__(self, user_id: str, game: str) -> float | None:
        self.asked.append((user_id, game))
        return self.ratings.get((user_id, game))

    async def is_frozen(self, user_id: str) -> bool:
        return user_id in self.frozen
