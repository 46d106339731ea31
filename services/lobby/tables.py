"""The lobby's deps: :class:`Lobby` builds, once per process, what its handlers
(:mod:`services.lobby.handlers`, where the rules and their order are described) work
with: the table store and writer, the dealer, stakes, practice tables and chat limits.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import partial

from nats.aio.client import Client as NATS

from kalaro.bus.redislink import RedisLink
from services.lobby import handlers
from services.lobby.chat import ChatLimiter
from services.lobby.dealing import Dealer
from services.lobby.practice import Practice
from services.lobby.ranked_ratings import FrozenCheck, RatingOf, is_frozen, rating_of
from services.lobby.ranked_tables import RankedTables
from services.lobby.records import (
    PRACTICE_IDLE_SECONDS,
    PRACTICE_TABLES_PER_PLAYER,
    PRESENCE_FORGET_PERIODS,
    PRESENCE_GRACE_SECONDS,
    PRESENCE_REFRESH_SECONDS,
    TableRecord,
)
from services.lobby.stakes import Stakes
from services.lobby.store import TableStore
from services.lobby.writer import TableWriter

__all__ = ["PRESENCE_FORGET_PERIODS", "Lobby", "TableRecord"]


class Lobby:
    """The lobby's dependencies (NATS for peers, Redis for tables), built once.

    ``prefix`` namespaces every Redis key (tests give each test its own); ``clock``
    returns epoch seconds and is injected so chat limits and timestamps can be tested.
    """

    def __init__(
        self,
        nc: NATS,
        redis: RedisLink,
        *,
        prefix: str = "lobby:",
        clock: Callable[[], float] = time.time,
        wallet_timeout: float = 5.0,
        engine_timeout: float = 10.0,
        bots_timeout: float = 8.0,
        chat_limit: int = 5,
        chat_window_seconds: float = 10.0,
        practice_idle_seconds: float = PRACTICE_IDLE_SECONDS,
        practice_per_player: int = PRACTICE_TABLES_PER_PLAYER,
        presence_grace_seconds: float = PRESENCE_GRACE_SECONDS,
        presence_refresh_seconds: float = PRESENCE_REFRESH_SECONDS,
        ratings: RatingOf | None = None,
        frozen: FrozenCheck | None = None,
    ) -> None:
        self.nc = nc
        self.store = TableStore(redis, prefix)
        self.clock = clock
        self.writer = TableWriter(
            nc,
            self.store,
            clock=clock,
            presence_grace_seconds=presence_grace_seconds,
            presence_forget_seconds=PRESENCE_FORGET_PERIODS * presence_refresh_seconds,
        )
        self.chat = ChatLimiter(
            redis, f"{prefix}chat:", limit=chat_limit, window_seconds=chat_window_seconds
        )
        self.dealer = Dealer(
            nc,
            self.store,
            self.writer.update,
            clock=clock,
            wallet_timeout=wallet_timeout,
            engine_timeout=engine_timeout,
        )
        self.stakes = Stakes(nc, self.store, prefix, clock=clock, wallet_timeout=wallet_timeout)
        self.practice = Practice(
            nc,
            self.store,
            self.writer,
            deal=partial(handlers.deal, lobby=self),
            cancel=partial(handlers.cancel_table, lobby=self),
            idle_seconds=practice_idle_seconds,
            per_player=practice_per_player,
            engine_timeout=engine_timeout,
            bots_timeout=bots_timeout,
        )
        # Ranked tables, minimum ratings, frozen accounts (issue 34); ``ratings`` and
        # ``frozen`` ask the ranked service unless a test gives its twin.
        self.ranked = RankedTables(
            nc,
            self.store,
            self.writer,
            self.stakes,
            self.dealer,
            prefix,
            clock=clock,
            rating_of=ratings or partial(rating_of, nc),
            is_frozen=frozen or partial(is_frozen, nc),
        )
        self.stale_deal_seconds = self.dealer.stale_deal_seconds
        self.practice_idle_seconds = practice_idle_seconds
        self.presence_grace_seconds = self.writer.presence_grace_seconds
        self.presence_forget_seconds = self.writer.presence_forget_seconds
        # What the sweeper runs (services.lobby.bootstrap.sweep).
        self.sweep_presence = self.writer.sweep_presence
        self.end_idle_practice = self.practice.end_idle_practice
        self.retry_cancels = self.dealer.retry_cancels
        self.rescue_stale_deals = self.dealer.rescue_stale_deals
