"""Riding out a restarting service: when to try a call again, and how long to wait.

The gateway answers ``unavailable`` (HTTP 503 on REST, an ``error`` frame on the socket)
when no service answered its request: none is subscribed (the only engine worker of a
game is restarting) or none answered in time. Nothing else about the request is known,
so only calls that are safe to repeat are tried again: reads, and moves, which carry
the hand version they were decided on (the engine's compare-and-set applies a move
once; a repeat of one that did apply comes back ``stale_version``, and the caller
resyncs from there).

:class:`Backoff` is the one policy both sides of the SDK use: exponential waits with
jitter (0.2 s doubling to 5 s by default) until a deadline longer than a restart
(60 s), after which the last error is raised as it would have been without retries.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

from kalaro.proto.errors import UNAVAILABLE

log = logging.getLogger("kalaro.client")

T = TypeVar("T")

#: Error codes that mean "nobody answered": the request may be made again.
RETRYABLE_CODES = frozenset({UNAVAILABLE})

#: How long a call keeps trying by default: longer than an engine worker's restart.
DEFAULT_RETRY_SECONDS = 60.0


def retryable(exc: BaseException) -> bool:
    """Whether ``exc`` is the gateway saying no service answered (``ApiError`` or
    ``FrameError`` with a retryable ``code``)."""
    return getattr(exc, "code", None) in RETRYABLE_CODES


@dataclass(frozen=True)
class Backoff:
    """Exponential backoff with jitter, bounded by ``deadline`` seconds per call.

    Attempt ``n`` (0 after the first failure) waits a random time in
    ``[(1 - jitter) * base, base]`` where ``base = min(cap, first * factor ** n)``, so
    many clients that lost the same service do not come back in step. ``deadline`` 0
    turns retries off.
    """

    deadline: float = DEFAULT_RETRY_SECONDS
    first: float = 0.2
    factor: float = 2.0
    cap: float = 5.0
    jitter: float = 0.5
    rng: random.Random = field(default_factory=random.Random, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.deadline < 0 or self.first <= 0 or self.factor < 1 or self.cap < self.first:
            raise ValueError(f"not a usable backoff: {self!r}")
        if not 0 <= self.jitter <= 1:
            raise ValueError(f"jitter must be between 0 and 1, not {self.jitter}")

    def delay(self, attempt: int) -> float:
        """The wait after failed attempt ``attempt`` (0, 1, …), jitter included."""
        base = min(self.cap, self.first * self.factor ** min(attempt, 64))
        return base * (1 - self.jitter * self.rng.random())

    async def run(
        self,
        call: Callable[[], Awaitable[T]],
        *,
        should_retry: Callable[[BaseException], bool] = retryable,
        what: str = "call",
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> T:
        """``await call()``, again after each failure ``should_retry`` accepts, until
        it succeeds or ``deadline`` seconds have passed (then the last error is raised).
        The last wait is cut so the final attempt starts at the deadline at the latest."""
        started = clock()
        attempt = 0
        while True:
            try:
                return await call()
            except Exception as exc:
                if not should_retry(exc):
                    raise
                left = started + self.deadline - clock()
                if left <= 0:
                    raise
                wait = min(self.delay(attempt), left)
                # Once per call at INFO: a restart costs each waiting caller one line.
                level = logging.INFO if attempt == 0 else logging.DEBUG
                log.log(level, "%s: %s; trying again for up to %.0f s", what, exc, left)
            await sleep(wait)
            attempt += 1


#: No retries: every error is raised at once (what the SDK did before retries).
NO_RETRY = Backoff(deadline=0.0)
