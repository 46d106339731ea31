"""Typed request/reply over NATS."""

from __future__ import annotations

from typing import TypeVar

import msgspec
from nats.aio.client import Client as NATS
from nats.errors import NoRespondersError
from nats.errors import TimeoutError as NatsTimeout

from kalaro.bus.codec import decode, encode
from kalaro.bus.errors import RemoteError, unavailable
from kalaro.proto.errors import ErrorReply

T = TypeVar("T")

ERROR_HEADER = "Kalaro-Error"


async def request(
    nc: NATS,
    subject: str,
    message: msgspec.Struct,
    reply_type: type[T],
    *,
    timeout: float = 5.0,
) -> T:
    """Send ``message`` to ``subject`` and decode the reply as ``reply_type``.

    Raises :class:`RemoteError` with the service's code when it answered with an
    error, and with ``unavailable`` when nobody answered in time.
    """
    try:
        reply = await nc.request(subject, encode(message), timeout=timeout)
    except (NoRespondersError, NatsTimeout) as exc:
        raise unavailable(subject) from exc
    if reply.headers and ERROR_HEADER in reply.headers:
        err = decode(reply.data, ErrorReply)
        raise RemoteError(err.code, err.message)
    result: T = decode(reply.data, reply_type)
    return result
