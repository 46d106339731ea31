"""Typed request/reply over NATS.

Replies come back on one inbox subscription per connection (``_INBOX.<random>.*``),
as in nats-py's own ``request``, but each request costs a counter, a future and a
timer: nats-py's version draws random bytes for every token and wraps the wait in
``asyncio.wait_for``, which showed in the gateway's CPU samples at 500 bench tables.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import secrets
import time
import weakref
from typing import Any, TypeVar, overload

import msgspec
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from prometheus_client import Counter

from kalaro.bus.codec import decode, encode
from kalaro.bus.errors import RemoteError, unavailable
from kalaro.logs import outgoing_headers
from kalaro.proto.endpoints import Endpoint
from kalaro.proto.errors import ErrorReply

log = logging.getLogger("kalaro.bus")
T = TypeVar("T")
Req = TypeVar("Req", bound=msgspec.Struct)

ERROR_HEADER = "Kalaro-Error"
_NO_RESPONDERS = "503"  # the status NATS answers with when nobody is subscribed


class _Inbox:
    """Where one connection's replies arrive, and who is waiting for which."""

    def __init__(self, nc: NATS) -> None:
        self._nc = nc
        self.prefix = f"_INBOX.{secrets.token_hex(11)}."
        self._tokens = itertools.count()
        self._waiting: dict[str, asyncio.Future[Msg]] = {}

    async def start(self) -> None:
        await self._nc.subscribe(self.prefix + "*", cb=self._on_reply)

    async def _on_reply(self, msg: Msg) -> None:
        future = self._waiting.get(msg.subject[len(self.prefix) :])
        if future is not None and not future.done():
            future.set_result(msg)

    async def request(
        self,
        subject: str,
        payload: bytes,
        timeout: float,
        again: tuple[float, ...] = (),
        budget: ResendBudget | None = None,
    ) -> Msg | None:
        """The reply (NATS's "no responders" included), or None when nobody answered in
        time.

        ``again``: seconds after the first send at which the same request is sent once
        more while no reply has come (each send taking a token from ``budget``, when
        given); a reply to any of the sends is the reply."""
        token = str(next(self._tokens))
        loop = asyncio.get_running_loop()
        future: asyncio.Future[Msg] = loop.create_future()
        self._waiting[token] = future
        timer = loop.call_later(timeout, _give_up, future)
        reply_to = self.prefix + token
        # The request id (if one is bound) travels in a header, for the logs there.
        headers = outgoing_headers()
        try:
            await self._nc.publish(subject, payload, reply=reply_to, headers=headers)
            sent_at = loop.time() if again else 0.0
            for at in again:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(future), sent_at + at - loop.time())
                if future.done() or (budget is not None and not budget.take()):
                    break
                _asked_again(subject, at)
                await self._nc.publish(subject, payload, reply=reply_to, headers=headers)
            reply = await future
        except TimeoutError:
            return None
        finally:
            timer.cancel()
            del self._waiting[token]
        return reply


def _nobody_listened(reply: Msg) -> bool:
    """NATS's own answer that nobody is subscribed: the request reached no one."""
    headers = reply.headers
    return not reply.data and headers is not None and headers.get("Status") == _NO_RESPONDERS


#: A request to a table's owner (``Endpoint.owned``) that found nobody subscribed (the
#: partition is between owners: a replica died, is draining, or just started) is sent
#: again after these pauses; nobody received it, so sending it again is safe even for a
#: move. An owner is found within the engine lease (1.5 s) plus its renewal tick.
OWNER_WAIT_SECONDS = (0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.5, 0.5, 0.5)

#: When an idempotent request still unanswered is sent again, as shares of its time.
ASK_AGAIN_AT = (0.25, 0.5, 0.75)
#: Resends of a subject are at most this many per request, plus a burst: a service that
#: is merely slow (every answer late, none lost) gets at most twice its requests, not
#: four times, while one replica paused among several needs fewer than one per request.
RESEND_RATIO = 1.0
RESEND_BURST = 100.0


class ResendBudget:
    """One subject's tokens for resends: each request adds ``RESEND_RATIO`` (up to
    ``RESEND_BURST``), each resend spends one."""

    def __init__(self) -> None:
        self.tokens = RESEND_BURST

    def requested(self) -> None:
        self.tokens = min(RESEND_BURST, self.tokens + RESEND_RATIO)

    def take(self) -> bool:
        if self.tokens < 1:
            return False
        self.tokens -= 1
        return True


_budgets: dict[str, ResendBudget] = {}
#: At most one warning per subject this often (each repeat is counted in the metric).
ASK_AGAIN_LOG_SECONDS = 60.0
ASKED_AGAIN = Counter(
    "kalaro_requests_asked_again_total",
    "Idempotent requests sent again because no answer had come yet",
    ["subject"],
)
_warned: dict[str, float] = {}


def _asked_again(subject: str, waited: float) -> None:
    ASKED_AGAIN.labels(subject).inc()
    now = time.monotonic()
    if now - _warned.get(subject, -ASK_AGAIN_LOG_SECONDS) >= ASK_AGAIN_LOG_SECONDS:
        _warned[subject] = now
        log.warning(
            "no answer on %s within %.2f s; sent it again (a replica of it may be paused "
            "or stuck; kalaro_requests_asked_again_total counts these)",
            subject,
            waited,
        )


def _give_up(future: asyncio.Future[Any]) -> None:
    if not future.done():
        future.set_exception(TimeoutError())


_inboxes: weakref.WeakKeyDictionary[NATS, _Inbox] = weakref.WeakKeyDictionary()
_opening: weakref.WeakKeyDictionary[NATS, asyncio.Lock] = weakref.WeakKeyDictionary()


async def _inbox(nc: NATS) -> _Inbox:
    """The connection's inbox, subscribed on first use (callers try ``_inboxes`` first)."""
    lock = _opening.setdefault(nc, asyncio.Lock())
    async with lock:
        inbox = _inboxes.get(nc)
        if inbox is None:
            inbox = _Inbox(nc)
            await inbox.start()
            _inboxes[nc] = inbox
    return inbox


@overload
async def request(
    nc: NATS, endpoint: Endpoint[Req, T], message: Req, *, timeout: float = 5.0
) -> T: ...


@overload
async def request(
    nc: NATS, endpoint: str, message: msgspec.Struct, reply_type: type[T], *, timeout: float = 5.0
) -> T: ...


async def request(
    nc: NATS,
    endpoint: Endpoint[Any, Any] | str,
    message: msgspec.Struct,
    reply_type: Any = None,
    *,
    timeout: float = 5.0,
) -> Any:
    """Send ``message`` through ``endpoint`` and decode the reply as its reply type.

    The older form ``request(nc, subject, message, reply_type)`` still works, for
    contracts not yet declared in :mod:`kalaro.proto.endpoints`.

    Raises :class:`RemoteError` with the service's code when it answered with an
    error, and with ``unavailable`` when nobody answered in time. An ``idempotent``
    endpoint's request is sent again while unanswered (see ``ASK_AGAIN_AT``).
    """
    again = False
    if isinstance(endpoint, Endpoint):
        subject, reply_type, again = endpoint.subject, endpoint.reply, endpoint.idempotent
    else:
        subject = endpoint
    inbox = _inboxes.get(nc) or await _inbox(nc)
    # NATS hands each request to one replica of the service, at random; a replica that
    # is paused (a long GC, a stalled VM) keeps its subscription and takes its share
    # without answering. An idempotent request is sent again at a quarter, half and
    # three quarters of its time: each send is a new draw, so with one of two replicas
    # paused, 1 in 16 goes unanswered instead of 1 in 2.
    budget = None
    if again:
        budget = _budgets.get(subject) or _budgets.setdefault(subject, ResendBudget())
        budget.requested()
    resend = tuple(timeout * f for f in ASK_AGAIN_AT) if again else ()
    payload = encode(message)
    reply = await inbox.request(subject, payload, timeout, resend, budget)
    if reply is not None and _nobody_listened(reply) and isinstance(endpoint, Endpoint):
        for pause in OWNER_WAIT_SECONDS if endpoint.owned else ():
            await asyncio.sleep(pause)
            reply = await inbox.request(subject, payload, timeout, resend, budget)
            if reply is None or not _nobody_listened(reply):
                break
    if reply is None or _nobody_listened(reply):
        raise unavailable(subject)
    if reply.headers and ERROR_HEADER in reply.headers:
        err = decode(reply.data, ErrorReply)
        raise RemoteError(err.code, err.message, user_ids=err.user_ids, retry_after=err.retry_after)
    return decode(reply.data, reply_type)
