"""Hand records for the ranked tests, and waiting for the consumer."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from kalaro.proto.engine import HandRecord, Player


def ranked_record(
    hand_id: str,
    players: tuple[str, ...],
    payments: tuple[int, ...],
    *,
    game: str = "tongits",
    **flags: Any,
) -> HandRecord:
    """A finished hand of ``players`` (user ids, seat order); the best paid won."""
    winner = max(range(len(payments)), key=lambda s: payments[s])
    fields: dict[str, Any] = {"ranked": True, **flags}
    return HandRecord(
        game=game, table_id=f"t-{hand_id}", hand_id=hand_id, options={}, bet=10,
        players=tuple(Player(user_id=u, display_name=f"name {u}") for u in players),
        dealer=0, seed_commitment="", server_seed="", entropy=(), actions=(),
        initial_hands=(), result={"winners": [winner]}, payments=payments, **fields,
    )  # fmt: skip


async def eventually(check: Callable[[], Awaitable[bool]], timeout: float = 10.0) -> float:
    """Wait until ``check()`` holds; the seconds it took (AssertionError past timeout)."""
    started = time.monotonic()
    while not await check():
        if time.monotonic() - started > timeout:
            raise AssertionError(f"not within {timeout}s")
        await asyncio.sleep(0.05)
    return time.monotonic() - started
