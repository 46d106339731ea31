"""Tongits actions: one tagged union (``"type"`` field), named as commands.

The cards in an action may be given in any order; the engine compares them as sets.
``ACTION_JSON_DECODER`` and ``ACTION_MSGPACK_DECODER`` are built once at import.
"""

from __future__ import annotations

import msgspec

from kalaro.games.cards import CardName


class Action(msgspec.Struct, frozen=True, tag_field="type"):
    """Base of every Tongits action."""


class Draw(Action, frozen=True, tag="draw"):
    """Draw the top card of the stock (start of a turn)."""


class TakeDiscard(Action, frozen=True, tag="take_discard"):
    """Take the top discard and expose it at once in a new meld with these hand cards."""

    cards: tuple[CardName, ...]


class Meld(Action, frozen=True, tag="meld"):
    """Expose a set or run from hand."""

    cards: tuple[CardName, ...]


class ExposeSecretSet(Action, frozen=True, tag="expose_secret_set"):
    """Expose a four-card set face down (only when the table plays secret sets)."""

    cards: tuple[CardName, ...]


class LayOff(Action, frozen=True, tag="lay_off", kw_only=True):
    """Sapaw: add hand cards to an exposed meld on the table (own or an opponent's)."""

    cards: tuple[CardName, ...]
    meld_id: int


class Discard(Action, frozen=True, tag="discard"):
    """Discard one card, ending the turn."""

    card: CardName


class CallDraw(Action, frozen=True, tag="call_draw"):
    """Call Draw (tawag) at the start of one's turn, before drawing."""


class Fight(Action, frozen=True, tag="fight"):
    """Answer a Draw call by fighting (compare deadwood)."""


class Fold(Action, frozen=True, tag="fold"):
    """Answer a Draw call by folding."""


class TimeOut(Action, frozen=True, tag="time_out"):
    """This seat's clock ran out (sent by the worker, never by a player): a Fight/Fold
    answer counts as Fold; a turn is auto-played (draw, then the discard that leaves the
    least deadwood)."""


class Back(Action, frozen=True, tag="back"):
    """A seat marked away is back (any time before the hand ends; does not use a turn)."""


AnyAction = (
    Draw
    | TakeDiscard
    | Meld
    | ExposeSecretSet
    | LayOff
    | Discard
    | CallDraw
    | Fight
    | Fold
    | TimeOut
    | Back
)

ACTION_JSON_DECODER: msgspec.json.Decoder[AnyAction] = msgspec.json.Decoder(AnyAction)
ACTION_MSGPACK_DECODER: msgspec.msgpack.Decoder[AnyAction] = msgspec.msgpack.Decoder(AnyAction)


def decode_action(data: bytes | str) -> AnyAction:
    """Decode one JSON action; ``msgspec.ValidationError`` if it is malformed."""
    return ACTION_JSON_DECODER.decode(data)
