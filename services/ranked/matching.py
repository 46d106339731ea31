"""The ranked queue's table forming: strangers of similar rating, seated at random.

:func:`form_tables` is called every tick with everyone waiting and returns the tables
it could form and who still waits. Rules:

- One table is one game at one stake, with the game's number of seats (the registry's
  ``rules_for(game).seats``: Tongits 3, Mahjong 4, Ka Wu Xing 3).
- Rating bands, in shown-rating points (:func:`services.ranked.ratings.shown_rating`),
  widen with the wait (:func:`band`): +/-100 on joining, 25 more each second
  (+/-350 at 10 s, +/-850 at 30 s), unlimited from 60 s on. A table forms around the
  longest-waiting player (the anchor) from the players nearest their rating inside the
  anchor's band, so whoever waits longest is served first and their widened band lets
  them reach further. Players who share an address or device with another waiting
  player anchor before the rest, so partners are spread over tables rather than left
  over together.
- Never two accounts that share an address seen in the last 24 h, or a device, at one
  table (friends could share what they hold).
- Seats are a shuffle by the ``random.Random`` passed in, so the result is
  deterministic given (entries, now, the generator's state).

Cost: entries are bucketed by (game, bet) and sorted by rating once; each anchor scans
outward from its own rating and stops at the edge of its band, so a tick over thousands
of waiting players is a sort plus near-linear work, never all pairs.
"""

from __future__ import annotations

import bisect
import math
import random
from collections.abc import Callable, Iterable

import msgspec

from kalaro.games.registry import rules_for

BAND_START = 100  # shown-rating points either side, on joining
BAND_GROWTH_PER_S = 25  # more points either side per second waited
BAND_UNLIMITED_AFTER_S = 60  # from this wait on, any rating will do


class QueueEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One player waiting in the ranked queue (what the store keeps for them)."""

    user_id: str
    game: str
    bet: int
    rating: int  # shown rating in this game
    joined_ms: int  # epoch ms
    addresses: frozenset[str] = frozenset()  # addresses they signed in from, last 24 h
    devices: frozenset[str] = frozenset()  # device ids they used


class FormedTable(msgspec.Struct, frozen=True, kw_only=True):
    """A ranked table the queue formed: ``seats[i]`` is the user id at seat ``i``."""

    game: str
    bet: int
    seats: tuple[str, ...]
    waited_ms: tuple[int, ...]  # per seat: how long that player waited


class MatchResult(msgspec.Struct, frozen=True, kw_only=True):
    tables: tuple[FormedTable, ...]
    waiting: tuple[QueueEntry, ...]  # still queued, in the order they were given


def band(waited_ms: int) -> float:
    """Half-width of a player's rating band after ``waited_ms`` in the queue."""
    waited_s = max(0, waited_ms) / 1000
    if waited_s >= BAND_UNLIMITED_AFTER_S:
        return math.inf
    return BAND_START + BAND_GROWTH_PER_S * waited_s


def seats_of(game: str) -> int:
    """The game's table size (the registry's :class:`~kalaro.games.registry.UnknownGame`
    for a game we do not deal)."""
    return rules_for(game).seats


def _conflicts(entry: QueueEntry, chosen: list[QueueEntry]) -> bool:
    return any(
        entry.addresses & other.addresses or entry.devices & other.devices for other in chosen
    )


def _order(entry: QueueEntry) -> tuple[int, int, str]:
    return (entry.rating, entry.joined_ms, entry.user_id)


def _hard_to_seat(members: list[QueueEntry]) -> set[str]:
    """Who shares an address or a device with another member (they must be split)."""
    holders: dict[tuple[str, str], list[str]] = {}
    for entry in members:
        for address in entry.addresses:
            holders.setdefault(("address", address), []).append(entry.user_id)
        for device in entry.devices:
            holders.setdefault(("device", device), []).append(entry.user_id)
    return {user for users in holders.values() if len(users) > 1 for user in users}


class _Bucket:
    """The waiting players of one (game, bet), sorted by rating; seated ones are removed."""

    def __init__(self, entries: list[QueueEntry]) -> None:
        self.entries = sorted(entries, key=_order)
        self.keys = [_order(e) for e in self.entries]  # unique: user ids are
        self.ratings = [e.rating for e in self.entries]

    def remove(self, entry: QueueEntry) -> None:
        i = bisect.bisect_left(self.keys, _order(entry))
        del self.entries[i], self.keys[i], self.ratings[i]

    def nearest(self, anchor: QueueEntry, half_width: float, wanted: int) -> list[QueueEntry]:
        """Up to ``wanted`` players nearest the anchor's rating within ``half_width``,
        none sharing an address or a device with the anchor or each other."""
        chosen = [anchor]
        start = bisect.bisect_left(self.ratings, anchor.rating)
        left, right = start - 1, start
        while len(chosen) <= wanted and (left >= 0 or right < len(self.ratings)):
            left_gap = anchor.rating - self.ratings[left] if left >= 0 else math.inf
            right_gap = (
                self.ratings[right] - anchor.rating if right < len(self.ratings) else math.inf
            )
            if min(left_gap, right_gap) > half_width:
                break
            if left_gap <= right_gap:
                candidate = self.entries[left]
                left -= 1
            else:
                candidate = self.entries[right]
                right += 1
            if candidate is not anchor and not _conflicts(candidate, chosen):
                chosen.append(candidate)
        return chosen[1:]


def form_tables(
    entries: Iterable[QueueEntry],
    now_ms: int,
    rng: random.Random,
    seats_for: Callable[[str], int] = seats_of,
) -> MatchResult:
    """Form every table the queue allows now; see the module docstring for the rules.

    ``entries`` hold each user once (:class:`ValueError` otherwise). Anchors are taken
    those to split first, then longest-waiting first, then by user id, so the outcome
    does not depend on the order the store listed them in, only on ``rng`` for seats."""
    given = list(entries)
    if len({e.user_id for e in given}) != len(given):
        raise ValueError("a user is queued twice")
    groups: dict[tuple[str, int], list[QueueEntry]] = {}
    for entry in given:
        groups.setdefault((entry.game, entry.bet), []).append(entry)
    seated: set[str] = set()
    tables: list[FormedTable] = []
    for (game, bet), members in sorted(groups.items()):
        size = seats_for(game)
        if len(members) < size:
            continue
        bucket = _Bucket(members)
        # Players who must be split anchor first: each takes others than its partner, so
        # the partners are not left over together (six players, one pair: two tables).
        hard = _hard_to_seat(members)
        anchors = sorted(members, key=lambda e: (e.user_id not in hard, e.joined_ms, e.user_id))
        for anchor in anchors:
            if anchor.user_id in seated or len(bucket.entries) < size:
                continue
            others = bucket.nearest(anchor, band(now_ms - anchor.joined_ms), size - 1)
            if len(others) < size - 1:
                continue
            table = [anchor, *others]
            for member in table:
                bucket.remove(member)
                seated.add(member.user_id)
            rng.shuffle(table)
            tables.append(
                FormedTable(
                    game=game,
                    bet=bet,
                    seats=tuple(e.user_id for e in table),
                    waited_ms=tuple(max(0, now_ms - e.joined_ms) for e in table),
                )
            )
    waiting = tuple(e for e in given if e.user_id not in seated)
    return MatchResult(tables=tuple(tables), waiting=waiting)


__all__ = [
    "BAND_GROWTH_PER_S",
    "BAND_START",
    "BAND_UNLIMITED_AFTER_S",
    "FormedTable",
    "MatchResult",
    "QueueEntry",
    "band",
    "form_tables",
    "seats_of",
]
