"""The turn clock's bookkeeping, shared by every game (Tongits, Mahjong, Ka Wu Xing).

A seat that lets its timer run out ``away_after_timeouts`` times in a row is marked
away: its timers then run for 0 seconds, so the table never waits on it, until it acts
again or taps Back. A private window (a tile game's call window, where who may claim is
secret) never waits on an away seat (the game answers for it as the window opens) and
runs its full length whoever it waits on, since its deadline is shown to every seat.
Per seat, a state keeps ``away`` flags and consecutive ``timeouts``; an empty tuple (a
state stored before the clock existed) means nobody away, no time-outs. ``Clock`` is
what a view shows of the running timer.
"""

from __future__ import annotations

from typing import Any

import msgspec


class Clock(msgspec.Struct, frozen=True, kw_only=True):
    """The timer running now, as a view shows it: ``kind`` (``"turn"``, ``"call"``,
    ``"fight_or_fold"``), the seats it waits on (of a private window such as a tile
    game's call window, only the viewer's own seat), and ``seconds``, the window's
    length: 0 when every seat it waits on is away (never for a private window, whose
    length is the same whoever it waits on).
    """

    kind: str
    seats: tuple[int, ...]
    seconds: int


def visible(timer: Any, seat: int | None, private: frozenset[str] = frozenset()) -> Clock | None:
    """``timer`` (a game's ``pending_timer``, or None) as ``seat`` may see it: of a window
    whose kind is in ``private``, the viewer learns only whether it waits on them (its
    ``seconds`` must not depend on who else it waits on: the game's ``pending_timer``
    sees to that, and the re-deal property test checks it)."""
    if timer is None:
        return None
    seats: tuple[int, ...] = timer.seats
    if timer.kind in private:
        seats = (seat,) if seat is not None and seat in seats else ()
    return Clock(kind=timer.kind, seats=seats, seconds=timer.seconds)


def is_away(away: tuple[bool, ...], seat: int) -> bool:
    """Whether ``seat`` is marked away (``away`` may be empty: nobody is)."""
    return seat < len(away) and away[seat]


def timeouts_of(timeouts: tuple[int, ...], seat: int) -> int:
    """``seat``'s consecutive time-outs (``timeouts`` may be empty: none)."""
    return timeouts[seat] if seat < len(timeouts) else 0


def away_seats(away: tuple[bool, ...]) -> tuple[int, ...]:
    """The seats marked away, in seat order."""
    return tuple(seat for seat, flag in enumerate(away) if flag)


def timed_out(
    away: tuple[bool, ...], timeouts: tuple[int, ...], seat: int, seats: int, limit: int
) -> tuple[tuple[bool, ...], tuple[int, ...]]:
    """``away`` and ``timeouts`` after ``seat`` timed out once more (``limit``: away after)."""
    counts = [timeouts_of(timeouts, s) for s in range(seats)]
    flags = [is_away(away, s) for s in range(seats)]
    counts[seat] += 1
    flags[seat] = flags[seat] or counts[seat] >= limit
    return tuple(flags), tuple(counts)


def acted(
    away: tuple[bool, ...], timeouts: tuple[int, ...], seat: int, seats: int
) -> tuple[tuple[bool, ...], tuple[int, ...]]:
    """``away`` and ``timeouts`` after ``seat`` acted itself: back, with no time-outs.

    Returned unchanged (the very same tuples) when there is nothing to clear, so a
    stored state without the fields keeps encoding as it did.
    """
    if not is_away(away, seat) and not timeouts_of(timeouts, seat):
        return away, timeouts
    flags = [is_away(away, s) for s in range(seats)]
    counts = [timeouts_of(timeouts, s) for s in range(seats)]
    flags[seat], counts[seat] = False, 0
    return tuple(flags), tuple(counts)
