"""The engine worker: runs hands of one game type, statelessly, on NATS and Redis.

Every request loads the table's slot from Redis (one EVALSHA), applies the game's pure
rules through the pure step (:mod:`services.engine.step`), writes the slot back by
compare-and-set on its version and then publishes the move's client frames
(:mod:`services.engine.writer`) as one message on ``table.<id>.frames``: each seat's
frame, and the audience's while someone watches; each gateway sends a socket only its
own seat's part. The game's views and ``event_for`` hide concealed cards from everyone
else.

The worker is built in layers, one module each: outcome publishing
(:mod:`~services.engine.outcomes`), writes (:mod:`~services.engine.writer`), the timer
loop and outcome sweeper (:mod:`~services.engine.timers`), and here who serves which
subject; the request handlers are functions ``handle(cmd, worker)`` in
:mod:`~services.engine.handlers`, the worker their deps. Redis
(:mod:`~services.engine.slots`) is the only truth: a replica keeps nothing another one
needs. The clock is one injected callable (``now_ms``) so tests
can drive time.

With ``owned=True`` (what ``python -m services.engine`` runs) a replica serves a
table's requests only while it owns the table's partition
(:mod:`~services.engine.ownership`): on ``engine.<game>.<request>.<partition>``, each
write fenced by its lease; the plain ``engine.<game>.<request>`` subjects forward to the
owner. Without it (tests' workers) every replica serves every partition.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any, Literal

from nats.aio.client import Client as NATS

from kalaro.bus import Service, request
from kalaro.proto import endpoints, subjects
from kalaro.settings import Settings
from services.engine import handlers
from services.engine.handlers import START_WAIT_SECONDS
from services.engine.ownership import LEASE_MS, Ownership
from services.engine.slots import SlotStore
from services.engine.step import Steps
from services.engine.timers import SWEEP_SECONDS, TICK_SECONDS, Handler, TimerLoop

log = logging.getLogger("kalaro.engine")

#: How long a request forwarded to a table's owner may take (a StartHand waits up to
#: START_WAIT_SECONDS).
FORWARD_TIMEOUT_SECONDS = START_WAIT_SECONDS + 3.0


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


class EngineWorker(TimerLoop):
    """One game's hands: the deps of its handlers (:mod:`services.engine.handlers`),
    who serves which subject, and the timer loop.

    ``namespace`` prefixes the worker's Redis keys (tests share one redis-server).
    """

    def __init__(
        self,
        game: str,
        nc: NATS,
        redis: Any,
        *,
        now_ms: Callable[[], int] = wall_clock_ms,
        namespace: str = "",
        tick_seconds: float = TICK_SECONDS,
        sweep_seconds: float = SWEEP_SECONDS,
        settings: Settings | None = None,
        audience: Literal["watched", "always"] = "watched",
        owned: bool = False,
        lease_ms: int = LEASE_MS,
    ) -> None:
        self.game = game
        # "watched": the audience view only while a gateway marks the table as watched
        # (``subjects.table_audience_key``); "always" for tests that listen on NATS alone.
        self._audience_always = audience == "always"
        self._audience_prefix = namespace
        self._settings = settings
        self.steps = Steps(game)
        self.now_ms = now_ms
        self.slots = SlotStore(redis, game, namespace)
        self.nc = nc
        self._js = nc.jetstream()
        self._tick = tick_seconds
        self._sweep_every = sweep_seconds
        self._task = None
        self._stopping = False
        self.known = {}
        self._retries = set()
        self._partitions: dict[int, Service] = {}
        self.ownership = (
            Ownership(
                redis,
                game,
                on_acquired=self._serve_partition,
                on_released=self._leave_partition,
                namespace=namespace,
                lease_ms=lease_ms,
            )
            if owned
            else None
        )

    # --- routing: who serves which subject -----------------------------------------

    def build_service(self) -> Service:
        """The worker's endpoints on the queue group ``engine-<game>``. With ownership
        the per-table ones forward to the owner (one hop more, for callers that do not
        route themselves); without, this replica serves every partition's subjects."""
        service = Service(f"engine-{self.game}")
        for r in handlers.table_routes(self.game):
            if self.ownership is not None:
                service.add(r.endpoint, self._forwarder(r.endpoint))
            else:
                service.add(r.endpoint, r.bound(self))
                service.add(endpoints.at_partition(r.endpoint, "*"), r.bound(self))
        return service.bind(handlers.game_routes(self.game), self)

    def _forwarder(self, endpoint: endpoints.Endpoint[Any, Any]) -> Handler:
        async def forward(msg: Any) -> Any:
            # A refusal comes back as a RemoteError, answered with the owner's code.
            owner = endpoints.to_owner(endpoint, msg.table_id)
            return await request(self.nc, owner, msg, timeout=FORWARD_TIMEOUT_SECONDS)

        return forward

    async def _serve_partition(self, partition: int) -> None:
        """Subscribe to the partition's subjects (its lease is ours). No queue group: a
        former owner paused past its lease still holds its subscription, and must not
        take requests away from the new one (it answers late, and is fenced)."""
        service = Service(f"engine-{self.game}", queue=False)
        for r in handlers.table_routes(self.game):
            service.add(
                endpoints.at_partition(r.endpoint, partition),
                self._guarded(r.bound(self)),
                label=r.endpoint.subject,
            )
        await service.start(self.nc)
        self._partitions[partition] = service

    async def _leave_partition(self, partition: int) -> None:
        """Unsubscribe (letting requests in flight finish) and forget its tables: a
        next owner may move them on, so nothing cached here may be trusted again."""
        service = self._partitions.pop(partition, None)
        if service is not None:
            await service.stop(timeout=2.0)
        for table_id in [t for t in self.known if subjects.partition_of(t) == partition]:
            del self.known[table_id]


__all__ = ["EngineWorker", "wall_clock_ms"]
