"""What happened: one tagged union of past-tense events, and who may see each.

``apply`` returns the full events; before one leaves the server it goes through
``event_for(event, seat)``, which hides concealed tiles from everyone but their owner
(a drawn tile is shown to its drawer only; a secret concealed kang is face down to the
others) and drops private events (claim offers and answers) for everyone else. Flowers
are public the moment they are set aside; the joker indicator is public from the deal
(it is in every view).
"""

from __future__ import annotations

import msgspec

from kalaro.games.mahjong.actions import Claim
from kalaro.games.mahjong.state import Meld
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
    "FlowerReplaced",
    "HandWon",
    "KangDeclared",
    "Returned",
    "TileClaimed",
    "TileDiscarded",
    "TileDrawn",
    "TimedOut",
    "WallExhausted",
    "event_for",
]


class TileDrawn(Event, frozen=True, tag="tile_drawn", kw_only=True):
    """``seat`` drew a tile: from the front, or from the back as a replacement.

    ``tile`` is None in the copy everyone but the drawer gets.
    """

    seat: int
    tile: str | None
    replacement: bool = False


class FlowerReplaced(Event, frozen=True, tag="flower_replaced", kw_only=True):
    """``seat`` set a flower aside; a replacement ``TileDrawn`` follows."""

    seat: int
    flower: str


class TileDiscarded(Event, frozen=True, tag="tile_discarded", kw_only=True):
    seat: int
    tile: str


class ClaimsOffered(Event, frozen=True, tag="claims_offered", kw_only=True):
    """Private to ``seat``: what it may claim on the discard (it may also pass)."""

    seat: int
    tile: str
    claims: tuple[Claim, ...]
    seconds: int


class CallAnswered(Event, frozen=True, tag="call_answered", kw_only=True):
    """Private to ``seat``: its answer was recorded (``claim`` None = pass)."""

    seat: int
    claim: Claim | None


class TileClaimed(Event, frozen=True, tag="tile_claimed", kw_only=True):
    """``seat`` claimed the discard for a pong, chow or kang, now exposed as ``meld``."""

    seat: int
    discarder: int
    meld: Meld


class KangDeclared(Event, frozen=True, tag="kang_declared", kw_only=True):
    """``seat`` declared a kang on its turn: concealed (four in hand) or added to a pong.

    ``secret``: a concealed kang kept face down; the others' copy has no meld tiles.
    """

    seat: int
    meld: Meld
    added: bool
    secret: bool = False


class HandWon(Event, frozen=True, tag="hand_won", kw_only=True):
    """``seat`` won: by self-draw (bunot), on ``discarder``'s discard, or robbing its kang.

    ``tile`` is None for a Bisaklat triple-joker win (no tile completes it);
    ``category`` names the win (``options.CATEGORIES``).
    """

    seat: int
    tile: str | None
    self_draw: bool
    discarder: int | None = None
    category: str | None = None
    robbed_kang: bool = False


AnyEvent = (
    TileDrawn
    | FlowerReplaced
    | TileDiscarded
    | CallWindowOpened
    | ClaimsOffered
    | CallAnswered
    | CallsPassed
    | TileClaimed
    | KangDeclared
    | HandWon
    | WallExhausted
    | TimedOut
    | Returned
)

EVENT_JSON_DECODER: msgspec.json.Decoder[AnyEvent] = msgspec.json.Decoder(AnyEvent)


def event_for(event: AnyEvent, seat: int | None) -> AnyEvent | None:
    """The event as ``seat`` may see it (``None`` = the audience), or None if it may not."""
    match event:
        case TileDrawn(seat=drawer) if drawer != seat and event.tile is not None:
            return msgspec.structs.replace(event, tile=None)
        case KangDeclared(seat=owner, secret=True) if owner != seat:
            face_down = msgspec.structs.replace(event.meld, tiles=())
            return msgspec.structs.replace(event, meld=face_down)
        case ClaimsOffered(seat=owner) | CallAnswered(seat=owner) if owner != seat:
            return None
        case TimedOut(seat=owner, call=True) if owner != seat:
            return None  # a call window's time-out: it would tell who could claim
        case _:
            return event
