"""Which engine replica should own which partition: rendezvous hashing, pure.

Every replica of a game sees the same list of live replicas (Redis,
:mod:`services.engine.ownership`) and computes the same answer on its own: each
partition goes to the replica with the highest score ``hash(replica, partition)``
(highest-random-weight hashing). Shares come out balanced, and when a replica joins
or leaves, only the partitions it wins or held change hands; every other partition
stays where its tables' hands are already in memory.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable


def _score(replica: str, partition: int) -> int:
    digest = hashlib.blake2b(f"{replica}/{partition}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def owner_of(partition: int, replicas: Iterable[str]) -> str | None:
    """The replica that should own ``partition``; None when there is none."""
    return max(replicas, key=lambda r: (_score(r, partition), r), default=None)


def share_of(replica: str, replicas: Iterable[str], partitions: int) -> frozenset[int]:
    """The partitions ``replica`` should own among ``replicas`` (it need not be one of
    them: a draining replica's share is empty)."""
    live = tuple(replicas)
    return frozenset(p for p in range(partitions) if owner_of(p, live) == replica)


def assignment(replicas: Iterable[str], partitions: int) -> dict[int, str]:
    """Every partition's owner (empty without replicas)."""
    live = tuple(replicas)
    if not live:
        return {}
    return {p: owner for p in range(partitions) if (owner := owner_of(p, live)) is not None}


__all__ = ["assignment", "owner_of", "share_of"]
