"""What every rules engine shares: the illegal-action error and the seeded shuffle.

The shuffle is specified here (not borrowed from :mod:`random`) so that anyone can
re-derive a deal from the revealed seed with a few lines of code in any language:
Fisher-Yates from the last index down, each swap index drawn from a SHA-256 counter
stream with rejection sampling so it is exactly uniform.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")


class IllegalAction(Exception):
    """Raised by ``apply`` for an action the rules refuse; the state is untouched.

    ``code`` is stable (clients and tests match on it); ``message`` is for people.
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


class _ByteStream:
    """Deterministic byte source: SHA-256(seed || counter) blocks."""

    def __init__(self, seed: bytes) -> None:
        self._seed = seed
        self._counter = 0
        self._buffer = b""

    def take(self, n: int) -> bytes:
        while len(self._buffer) < n:
            block = hashlib.sha256(self._seed + self._counter.to_bytes(8, "big")).digest()
            self._buffer += block
            self._counter += 1
        out, self._buffer = self._buffer[:n], self._buffer[n:]
        return out

    def below(self, bound: int) -> int:
        """A uniform integer in ``[0, bound)`` by rejection sampling on 4-byte words."""
        limit = (1 << 32) - ((1 << 32) % bound)
        while True:
            value = int.from_bytes(self.take(4), "big")
            if value < limit:
                return value % bound


def shuffled(items: Sequence[T], seed: bytes) -> list[T]:
    """Return a new list with ``items`` in the order fixed by ``seed``."""
    out = list(items)
    stream = _ByteStream(seed)
    for i in range(len(out) - 1, 0, -1):
        j = stream.below(i + 1)
        out[i], out[j] = out[j], out[i]
    return out


def derive_seed(server_seed: bytes, player_entropy: Sequence[str] = ()) -> bytes:
    """Combine the server's secret seed with what players added when they tapped Ready.

    The combination is public once the server seed is revealed, so the deal can be
    checked against the commitment ``sha256(server_seed)`` published before it.
    """
    h = hashlib.sha256(b"kalaro-deal-v1\x00" + server_seed)
    for entropy in player_entropy:
        h.update(b"\x00" + entropy.encode("utf-8"))
    return h.digest()


def pick(seed: bytes, label: str, bound: int) -> int:
    """A deterministic choice in ``[0, bound)`` for other chance events (e.g. first dealer)."""
    return _ByteStream(hashlib.sha256(seed + b"\x00" + label.encode()).digest()).below(bound)
