"""Moves applied in the gateway, for tables whose every seat is connected to it.

A move that goes through an engine service crosses two Python processes and NATS four
times (the request, three seat views back, the reply). When every seated player's socket
is on this gateway, which is the usual case once players of a table share one gateway,
the gateway runs the engine's own code (:class:`kalaro.engine.EngineWorker`) in-process
instead: load the hand (or use what this process last wrote), apply the game's pure
rules, write by the same compare-and-set on the hand's version in Redis, and push each
seat's frame straight to that seat's sockets here.

What does not change:

- Redis is the only truth. A move applied here and one applied by an engine service (a
  time-out, another gateway) against the same version cannot both be written.
- Secrecy. A gateway applies a move only while every seat of the hand has a socket on it,
  so it builds no frame that would not have reached it anyway.
- Other gateways' sockets (a player's second device). Every gateway holding seat sockets
  of a table is listed in the table's seat-gateways set in Redis (the hub does it after
  subscribing, before the socket asks for the current view), and the move's write says,
  in the same atomic step, whether a gateway other than this one is listed; only then
  are the seat frames also published on their subjects (three NATS messages a move for
  nobody, otherwise). This process's table connection has ``no_echo``, so its own
  frames never come back to it.
- Hand ends, deals, timers and outcomes stay the engine service's: a move that would end
  the hand is not written here (:class:`NotHere`) but sent on to the engine, which
  publishes the settlement exactly once as before.

Anything else unusual (no such hand here, Redis unreachable) also sends the move on, so
this is only ever a shortcut: with ``KALARO_GATEWAY_LOCAL_MOVES=false``, or when it does
not apply, every move takes the engine service's path.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable

from nats.aio.client import Client as NATS
from prometheus_client import Counter

from kalaro.bus import RemoteError, ServiceError
from kalaro.bus.redislink import RedisLink
from kalaro.engine import EngineWorker, Slot
from kalaro.games.registry import UnknownGame, rules_for
from kalaro.proto import errors as codes
from kalaro.proto import subjects
from kalaro.proto.engine import Act, Acted
from kalaro.settings import Settings
from services.gateway.hub import Connection, Hub, TableFeed

log = logging.getLogger("kalaro.gateway.moves")

MOVES = Counter(
    "kalaro_gateway_moves",
    "Moves received on this gateway's sockets, by where they were decided: 'here' (every "
    "seat of the table is connected here), 'engine' (sent to the engine service: the "
    "table is not all here, or the move ends the hand) or 'trouble' (sent to the engine "
    "because this process could not apply it, e.g. Redis unreachable)",
    ["where"],
)
_HERE = MOVES.labels("here")
_ENGINE = MOVES.labels("engine")
_TROUBLE = MOVES.labels("trouble")
#: At most one warning this often about moves that could not be applied here.
TROUBLE_LOG_SECONDS = 60.0

#: Answers of the engine's code that mean "ask the engine service": no such hand in this
#: Redis keyspace, another game's table, or trouble. Every other error (a stale version,
#: a move the rules refuse, not seated) is the verdict the engine service would give too.
_ASK_THE_ENGINE = frozenset({codes.NOT_FOUND, codes.CONFLICT, codes.UNAVAILABLE, codes.INTERNAL})


class NotHere(Exception):
    """This move is the engine service's to apply (nothing was written)."""


def _present(sockets: Iterable[Connection], user_id: str) -> bool:
    return any(c.user_id == user_id and not c.closed.is_set() for c in sockets)


def every_seat_here(feed: TableFeed | None, players: Iterable[str | None]) -> bool:
    """Whether each seat's player (``players`` by seat, None for an empty seat) has an
    open socket attached to that seat in ``feed``."""
    if feed is None:
        return False
    seated = feed.seated
    for seat, user_id in enumerate(players):
        if user_id is None or not _present(seated.get(seat, ()), user_id):
            return False
    return True


def _table_players(feed: TableFeed) -> list[str | None]:
    return [s.user_id if s is not None else None for s in feed.table.seats]


class _GatewayWorker(EngineWorker):
    """The engine's worker, writing only moves that keep the hand going, and delivering
    their frames to this gateway's sockets first."""

    def __init__(
        self, game: str, nc: NATS, redis: RedisLink, hub: Hub, settings: Settings, namespace: str
    ):
        super().__init__(game, nc, redis, settings=settings, namespace=namespace)
        self._hub = hub  # this process's sockets, by table

    def _check_write(self, slot: Slot, over: bool) -> None:
        # Checked against the hand's own players, after the load: the table may have
        # changed since the hand was dealt. A hand's end is the engine service's.
        players = (p.user_id for p in slot.players)
        if over or not every_seat_here(self._hub.feed(slot.table_id), players):
            raise NotHere

    def _seat_listeners(self, table_id: str, now_ms: int) -> tuple[str, str, int] | None:
        key = self._audience_prefix + subjects.table_seat_gateways_key(table_id)
        return key, self._hub.gateway_id, now_ms

    async def _deliver(
        self, table_id: str, frames: list[tuple[int | None, bytes]], listened: bool
    ) -> None:
        feed = self._hub.feed(table_id)
        publish = self._nc.publish
        for seat, frame in frames:
            if seat is None:
                subject = subjects.table_public(table_id)
                here: Iterable[Connection] = feed.spectators if feed is not None else ()
            else:
                subject = subjects.table_seat(table_id, seat)
                here = feed.seated.get(seat, ()) if feed is not None else ()
            for conn in list(here):
                conn.push(frame)
            if listened or seat is None:
                # For sockets on other gateways (seats: only while another gateway is
                # listed as holding some); never delivered back here (no_echo).
                await publish(subject, frame)


class LocalMoves:
    """Applies moves of tables whose every seat is connected here (see the module)."""

    def __init__(
        self, nc: NATS, redis: RedisLink, hub: Hub, settings: Settings, *, namespace: str = ""
    ) -> None:
        if not nc.options.get("no_echo"):
            # Without it this process would get its own frames back from NATS, and each
            # socket every view twice.
            raise ValueError("local moves need a NATS connection with no_echo")
        self._nc = nc
        self._redis = redis
        self._hub = hub
        self._settings = settings
        self._namespace = namespace  # the engines' Redis key prefix (tests share a server)
        self._workers: dict[str, EngineWorker | None] = {}
        self._failures = 0  # moves sent on for trouble here since the last warning
        self._warned_at = -TROUBLE_LOG_SECONDS

    def _trouble(self, table_id: str, exc: Exception) -> None:
        """Log why moves go to the engine instead: the first time, then once a minute
        with a count (while Redis is down, that is every move)."""
        self._failures += 1
        now = time.monotonic()
        if now - self._warned_at < TROUBLE_LOG_SECONDS:
            return
        log.warning(
            "could not apply %d move(s) here (last: table %s, %r); sent them to the engine",
            self._failures,
            table_id,
            exc,
        )
        self._warned_at, self._failures = now, 0

    def _worker(self, game: str) -> EngineWorker | None:
        if game not in self._workers:
            try:
                rules_for(game)
            except UnknownGame:
                self._workers[game] = None
            else:
                self._workers[game] = _GatewayWorker(
                    game, self._nc, self._redis, self._hub, self._settings, self._namespace
                )
        return self._workers[game]

    async def act(self, feed: TableFeed, message: Act) -> Acted | None:
        """Apply the move here and answer as the engine would; None: send it to the
        engine service (the table is not all here, or the move ends the hand, or this
        process cannot tell)."""
        worker = self._worker(feed.game)
        if worker is None or not every_seat_here(feed, _table_players(feed)):
            _ENGINE.inc()
            return None
        try:
            acted = await worker.act(message)
        except NotHere:
            _ENGINE.inc()
            return None
        except RemoteError:
            raise
        except ServiceError as exc:
            if exc.code in _ASK_THE_ENGINE:
                _ENGINE.inc()
                return None
            _HERE.inc()
            raise RemoteError(exc.code, exc.message) from None
        except Exception as exc:
            self._trouble(message.table_id, exc)
            _TROUBLE.inc()
            return None
        _HERE.inc()
        return acted
