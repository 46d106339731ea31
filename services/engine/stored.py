"""A finished hand's record once its Redis copy is gone: history's (SQL, kept for good).

History cuts a hand's Redis copy to an hour once it has stored it, so an engine asked
about an older hand (the wallet's reconciler, a late cancel) asks history instead.
"""

from __future__ import annotations

from nats.aio.client import Client as NATS

from kalaro.bus import RemoteError, ServiceError, request
from kalaro.proto import endpoints
from kalaro.proto import errors as codes
from kalaro.proto.engine import HandRecord
from kalaro.proto.history import GetStoredHand

#: History answers in milliseconds; a slower one is treated as down.
HISTORY_TIMEOUT_SECONDS = 2.0


async def stored_record(nc: NATS, hand_id: str) -> HandRecord | None:
    """The hand's record in history; None: history has no such hand. Raises
    ``unavailable`` when history does not answer (the caller cannot tell then)."""
    try:
        return await request(
            nc, endpoints.HISTORY_GET_HAND, GetStoredHand(hand_id=hand_id),
            timeout=HISTORY_TIMEOUT_SECONDS,
        )  # fmt: skip
    except RemoteError as exc:
        if exc.code == codes.NOT_FOUND:
            return None
        raise ServiceError(
            codes.UNAVAILABLE, f"history did not answer about hand {hand_id} ({exc.code}); retry"
        ) from exc
