"""Tongits events: what happened, in the past tense, one tagged union (``"type"``).

``apply`` returns the full events. Some carry concealed cards: a card drawn from the
stock (only the drawer may see it) and a secret set's cards (only its owner, until the
hand ends). :func:`event_for` gives the version a seat (or the audience) may see;
whoever fans events out must pass them through it.
"""

from __future__ import annotations

import msgspec

from kalaro.games.tongits.melds import MeldKind
from kalaro.games.tongits.state import Result


class Event(msgspec.Struct, frozen=True, tag_field="type"):
    """Base of every Tongits event."""


class CardDrawn(Event, frozen=True, tag="card_drawn", kw_only=True):
    """``seat`` drew from the stock; ``card`` is ``None`` in everyone else's copy."""

    seat: int
    card: str | None
    stock_left: int


class DiscardTaken(Event, frozen=True, tag="discard_taken", kw_only=True):
    """``seat`` took the top discard ``card`` and exposed it with hand ``cards``."""

    seat: int
    card: str
    cards: tuple[str, ...]
    meld_id: int


class MeldExposed(Event, frozen=True, tag="meld_exposed", kw_only=True):
    seat: int
    meld_id: int
    kind: MeldKind
    cards: tuple[str, ...]


class SecretSetExposed(Event, frozen=True, tag="secret_set_exposed", kw_only=True):
    """A four-card set face down; ``cards`` is empty in everyone else's copy."""

    seat: int
    meld_id: int
    cards: tuple[str, ...]


class CardsLaidOff(Event, frozen=True, tag="cards_laid_off", kw_only=True):
    """Sapaw: ``seat`` added ``cards`` to meld ``meld_id`` owned by ``owner``."""

    seat: int
    meld_id: int
    owner: int
    cards: tuple[str, ...]


class CardDiscarded(Event, frozen=True, tag="card_discarded", kw_only=True):
    seat: int
    card: str


class DrawCalled(Event, frozen=True, tag="draw_called", kw_only=True):
    """``seat`` called Draw; ``asked`` are the opponents who may Fight or Fold."""

    seat: int
    asked: tuple[int, ...]


class Fought(Event, frozen=True, tag="fought"):
    seat: int


class Folded(Event, frozen=True, tag="folded", kw_only=True):
    seat: int
    timed_out: bool = False


class HandEnded(Event, frozen=True, tag="hand_ended"):
    result: Result


class TimedOut(Event, frozen=True, tag="timed_out", kw_only=True):
    """``seat``'s clock ran out; ``away``: the seat is marked away after it. The events of
    the moves auto-played for it follow."""

    seat: int
    away: bool


class Returned(Event, frozen=True, tag="returned"):
    """``seat``, marked away, is back."""

    seat: int


AnyEvent = (
    CardDrawn
    | DiscardTaken
    | MeldExposed
    | SecretSetExposed
    | CardsLaidOff
    | CardDiscarded
    | DrawCalled
    | Fought
    | Folded
    | HandEnded
    | TimedOut
    | Returned
)

EVENT_JSON_DECODER: msgspec.json.Decoder[AnyEvent] = msgspec.json.Decoder(AnyEvent)


def event_for(event: Event, seat: int | None) -> Event | None:
    """The copy of ``event`` that ``seat`` may see (``None``: the audience).

    Returns ``None`` for an event the viewer may not see at all (none today; callers
    should still handle it).
    """
    match event:
        case CardDrawn(seat=drawer) if drawer != seat:
            return msgspec.structs.replace(event, card=None)
        case SecretSetExposed(seat=owner) if owner != seat:
            return msgspec.structs.replace(event, cards=())
        case _:
            return event
