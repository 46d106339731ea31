"""Where the gateway reads finished hands: the history service (SQL, kept for good),
falling back to the engines' Redis copies for a hand history has not stored yet (its
ingest lags a moment behind the hand's end, or history is down for a while). A voided
hand's record (cancelled mid-play) is only in history: the engines keep none.

Access rules are the callers' (routes and routes_hands): only the source changes here.
"""

from __future__ import annotations

import asyncio
import logging

from nats.aio.client import Client as NATS

from kalaro.bus import RemoteError
from kalaro.bus import request as bus_request
from kalaro.games.registry import game_names
from kalaro.proto import endpoints
from kalaro.proto import errors as codes
from kalaro.proto.engine import GetHandRecord, HandRecord, HandSummary, ListMyHands
from kalaro.proto.history import GetStoredHand, ListHands

log = logging.getLogger("kalaro.gateway")

#: History answers in milliseconds; this bounds what a history outage adds to a read
#: before the Redis copy is asked instead.
HISTORY_TIMEOUT_SECONDS = 2.0


async def find_record(nc: NATS, game: str, hand_id: str) -> HandRecord | None:
    """The hand's record from history, else from ``game``'s engine; None: neither has it.
    If history failed and the engine has no copy, history's error is raised (a 503
    says "try again", not "no such hand")."""
    failed: RemoteError | None = None
    try:
        return await bus_request(
            nc,
            endpoints.HISTORY_GET_HAND,
            GetStoredHand(hand_id=hand_id),
            timeout=HISTORY_TIMEOUT_SECONDS,
        )
    except RemoteError as exc:
        if exc.code != codes.NOT_FOUND:
            log.warning("history did not answer for hand %s (%s); asking the engine", hand_id, exc)
            failed = exc
    try:
        return await bus_request(nc, endpoints.engine_record(game), GetHandRecord(hand_id=hand_id))
    except RemoteError as exc:
        if exc.code != codes.NOT_FOUND:
            raise
    if failed is not None:
        raise failed
    return None


async def player_hands(
    nc: NATS,
    user_id: str,
    *,
    game: str | None,
    before_ms: int | None,
    limit: int,
    since_ms: int | None = None,
) -> list[HandSummary]:
    """A page of the player's hands, newest first: history's merged with the engines'
    (hands not in history yet), each hand once. History down: the engines' alone.
    ``since_ms``: none finished before it (the engines' lists are filtered here).

    The engines are read first, history after: history takes a hand out of the
    engines' index only once it has committed it, so a hand missing from an engine's
    answer is already in history's (read in the other order, a hand stored between
    the two reads would be in neither)."""
    games = [game] if game is not None else list(game_names())
    from_engines = ListMyHands(user_id=user_id, before_ms=before_ms, limit=limit)
    from_history = ListHands(
        user_id=user_id, game=game, before_ms=before_ms, limit=limit, since_ms=since_ms
    )
    engines = await asyncio.gather(
        *(bus_request(nc, endpoints.engine_my_hands(g), from_engines) for g in games),
        return_exceptions=True,
    )
    pages: list[tuple[HandSummary, ...]] = []
    for page in engines:
        if isinstance(page, BaseException):
            raise page
        pages.append(page.hands)
    try:
        history = await bus_request(
            nc, endpoints.HISTORY_LIST_HANDS, from_history, timeout=HISTORY_TIMEOUT_SECONDS
        )
    except RemoteError as exc:
        if exc.code == codes.BAD_REQUEST:
            raise
        log.warning("history did not list %s's hands (%s); the engines' only", user_id, exc)
    else:
        pages.append(history.hands)
    unique = {
        hand.hand_id: hand
        for page in pages
        for hand in page
        if since_ms is None or hand.finished_ms >= since_ms
    }
    return sorted(unique.values(), key=lambda hand: (hand.finished_ms, hand.hand_id), reverse=True)[
        :limit
    ]
