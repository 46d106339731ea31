"""The parts of a tile game's state that every tile game has alike: phases and timers.

Each game keeps its own ``State``, ``Player``, ``Meld``, ``CallWindow`` and ``Outcome``
Structs (their fields are stored with live hands); these are the pieces with nothing
game-specific in them.
"""

from __future__ import annotations

from typing import Literal

import msgspec

#: Drawing, then discarding (or declaring), a call window open, the hand over.
Phase = Literal["draw", "discard", "calls", "over"]


class Timer(msgspec.Struct, frozen=True, kw_only=True):
    """A deadline the worker must run, ``seconds`` from when the window opened.

    ``call``: a call window (a discard, or a kong being added that may be robbed);
    answers do not restart it. ``turn`` (option ``turn_seconds``): the whole turn of
    ``seats[0]``, draw and discard; a draw or kong inside the turn does not restart it.
    ``seconds`` of a turn is 0 when its seat is away (a seat marked away or back gets a
    fresh deadline: the worker keys a window by ``kind``, ``opened_at`` and ``seconds``).
    A call window always runs ``call_seconds``, whoever it waits on: its deadline is
    shown to every seat, and must not tell them who may claim.
    When it passes, the worker applies ``TimeOut()`` for the seats still awaited until
    the window is gone (a turn's time-out plays the turn in one action, so the window
    changes)::

        while (now := pending_timer(state)) and (now.kind, now.opened_at, now.seconds) == (
            timer.kind, timer.opened_at, timer.seconds
        ):
            state, events = apply(state, now.seats[0], TimeOut())
    """

    kind: Literal["call", "turn"]
    #: Seats still awaited (private to the server: it tells who may claim).
    seats: tuple[int, ...]
    seconds: int
    #: Identifies the window (``State.step`` when it opened); a new window, a new timer.
    opened_at: int
