"""The events every tile game has alike, and the base of every tile-game event.

Both games' event unions (``mahjong.AnyEvent``, ``kawuxing.AnyEvent``) take these as
they are; the events that carry a game's own ``Claim`` or ``Meld``, or its vocabulary
(kang or kong, flowers, Show Hand), stay in the game's ``events`` module. The ``type``
tags and fields are a wire and storage format: they never change.
"""

from __future__ import annotations

import msgspec


class Event(msgspec.Struct, frozen=True, tag_field="type"):
    """Base of every tile-game event; the ``type`` field names the subclass."""


class CallWindowOpened(Event, frozen=True, tag="call_window_opened", kw_only=True):
    """Someone may claim the tile; answers are due within ``seconds``.

    Public, but says nothing about who may claim or what. ``robbing``: ``discarder`` is
    adding ``tile`` to their pong (a kong) and someone may win on it (robbing the kong).
    """

    discarder: int
    tile: str
    seconds: int
    robbing: bool = False


class CallsPassed(Event, frozen=True, tag="calls_passed", kw_only=True):
    """Nobody claimed the tile: a discard stays on the table, a kong goes ahead."""

    discarder: int
    tile: str


class WallExhausted(Event, frozen=True, tag="wall_exhausted"):
    """No tile left to draw: nobody wins the hand (Mahjong's tabla; in Ka Wu Xing only
    kong scores are paid)."""


class TimedOut(Event, frozen=True, tag="timed_out", omit_defaults=True, kw_only=True):
    """``seat``'s timer ran out; the events of the moves played for it follow.

    ``away``: the seat is (now, or still) marked away. ``call``: it was a call window's
    time-out, which only ``seat`` is told (it would tell the others that ``seat`` could
    claim the tile); it counts for nothing towards away. Left out when false, so a turn's
    time-out encodes as it always did.
    """

    seat: int
    away: bool
    call: bool = False


class Returned(Event, frozen=True, tag="returned"):
    """``seat``, marked away, is back (it tapped Back)."""

    seat: int
