"""What happened: one tagged union of past-tense events, and who may see each.

``apply`` returns the full events; before one leaves the server it goes through
``event_for(event, seat)``, which hides concealed tiles from everyone but their owner
(a drawn tile is shown to its drawer only, unless the drawer's hand is shown; a
concealed kong is face down to the others) and drops private events (claim offers and
answers) for everyone else.
"""

from __future__ import annotations

import msgspec

from kalaro.games.kawuxing.actions import Claim
from kalaro.games.kawuxing.state import KongKind, Meld
from kalaro.games.tilegame.events import (
    CallsPassed,
    CallWindowOpened,
    Event,
    Returned,
    TimedOut,
    WallExhausted,
)

#: The events every tile game has alike (``Event``, ``CallWindowOpened``, ``CallsPassed``,
#: ``WallExhausted``, ``TimedOut``, ``Returned``) come from :mod:`kalaro.games.tilegame.events`.
__all__ = [
    "EVENT_JSON_DECODER",
    "AnyEvent",
    "CallAnswered",
    "CallWindowOpened",
    "CallsPassed",
    "ClaimsOffered",
    "Event",
    "HandShown",
    "HandWon",
    "KongDeclared",
    "KongOffered",
    "Returned",
    "TileClaimed",
    "TileDiscarded",
    "TileDrawn",
    "TimedOut",
    "WallExhausted",
    "event_for",
]


class TileDrawn(Event, frozen=True, tag="tile_drawn", kw_only=True):
    """``seat`` drew a tile: from the front, or from the back as a kong's replacement.

    ``tile`` is None in the copy the others get, unless the drawer's hand is shown.
    """

    seat: int
    tile: str | None
    replacement: bool = False
    shown: bool = False


class TileDiscarded(Event, frozen=True, tag="tile_discarded", kw_only=True):
    """``seat`` discarded ``tile``; ``auto``: a shown hand's draw that did not win."""

    seat: int
    tile: str
    auto: bool = False


class HandShown(Event, frozen=True, tag="hand_shown", kw_only=True):
    """``seat`` declared Show Hand with its discard: ``hand`` is public from now on."""

    seat: int
    hand: tuple[str, ...]
    waits: tuple[str, ...]


class ClaimsOffered(Event, frozen=True, tag="claims_offered", kw_only=True):
    """Private to ``seat``: what it may claim (it may also pass)."""

    seat: int
    tile: str
    claims: tuple[Claim, ...]
    seconds: int


class CallAnswered(Event, frozen=True, tag="call_answered", kw_only=True):
    """Private to ``seat``: its answer was recorded (``claim`` None = pass)."""

    seat: int
    claim: Claim | None


class TileClaimed(Event, frozen=True, tag="tile_claimed", kw_only=True):
    """``seat`` claimed the discard for a pong or kong, now exposed as ``meld``."""

    seat: int
    discarder: int
    meld: Meld


class KongDeclared(Event, frozen=True, tag="kong_declared", kw_only=True):
    """``seat`` declared a kong on its turn: concealed (four in hand) or extended.

    ``tile`` is None in the copy the others get of a concealed kong (it lies face down).
    An extended kong is announced when it completes, after nobody robbed it.
    """

    seat: int
    kong: KongKind
    tile: str | None
    on_kong: bool = False


class KongOffered(Event, frozen=True, tag="kong_offered", kw_only=True):
    """``seat`` adds ``tile`` to its pong; another player can win on it (Rob a Kong)."""

    seat: int
    tile: str


class HandWon(Event, frozen=True, tag="hand_won", kw_only=True):
    """``seat`` won: by self-draw, on ``discarder``'s discard, or robbing its kong."""

    seat: int
    tile: str
    self_draw: bool
    discarder: int | None = None
    robbed_kong: bool = False


AnyEvent = (
    TileDrawn
    | TileDiscarded
    | HandShown
    | CallWindowOpened
    | ClaimsOffered
    | CallAnswered
    | CallsPassed
    | TileClaimed
    | KongDeclared
    | KongOffered
    | HandWon
    | WallExhausted
    | TimedOut
    | Returned
)

EVENT_JSON_DECODER: msgspec.json.Decoder[AnyEvent] = msgspec.json.Decoder(AnyEvent)


def event_for(event: AnyEvent, seat: int | None) -> AnyEvent | None:
    """The event as ``seat`` may see it (``None`` = the audience), or None if it may not."""
    match event:
        case TileDrawn(seat=drawer, shown=False) if drawer != seat and event.tile is not None:
            return msgspec.structs.replace(event, tile=None)
        case KongDeclared(seat=owner, kong="concealed") if owner != seat and event.tile:
            return msgspec.structs.replace(event, tile=None)
        case ClaimsOffered(seat=owner) | CallAnswered(seat=owner) if owner != seat:
            return None
        case TimedOut(seat=owner, call=True) if owner != seat:
            return None  # a call window's time-out: it would tell who could claim
        case _:
            return event
