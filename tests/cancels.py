"""A stand-in for Python 3.11's ``wait_for`` race, for tests of clean stops."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


def swallowing_one_cancel(
    real: Callable[[], Awaitable[T]], fallback: T, swallowed: list[bool]
) -> Callable[[], Awaitable[T]]:
    """``real``, except that the first call waits and, when cancelled, returns
    ``fallback`` as if nothing happened (appending to ``swallowed``), as ``wait_for``
    does when a cancel lands just as its future completes."""

    async def call() -> T:
        if not swallowed:
            try:
                await asyncio.sleep(10)
            except asyncio.CancelledError:
                swallowed.append(True)
                return fallback
        return await real()

    return call
