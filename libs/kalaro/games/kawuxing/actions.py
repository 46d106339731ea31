"""What a seat can do: one tagged union of actions, decoded once per message.

Actions are imperative. A seat's legal actions are listed by ``legal_actions`` and a
client simply sends one of them back; ``TimeOut`` is sent by the engine worker when a
timer from ``pending_timer`` runs out, never by a player. ``Back`` is offered (first)
to a seat marked away.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from kalaro.games.tiles import TileName

#: Kinds of claim on a discard, highest priority first. No chow in Ka Wu Xing.
ClaimKind = Literal["win", "kong", "pong"]
CLAIM_PRIORITY: dict[str, int] = {"win": 3, "kong": 2, "pong": 1}


class Action(msgspec.Struct, frozen=True, tag_field="type"):
    """Base of every Ka Wu Xing action; the ``type`` field names the subclass."""


class Draw(Action, frozen=True, tag="draw"):
    """Draw the next tile from the front of the wall.

    For a shown hand a drawn tile that does not win is discarded at once, in the same move.
    """


class Discard(Action, frozen=True, tag="discard"):
    """Discard one tile from the concealed hand."""

    tile: TileName


class ShowHand(Action, frozen=True, tag="show_hand"):
    """Discard ``tile`` and show the rest of the hand, which must be waiting (tenpai).

    From then on the hand is public and cannot change: draws that do not win are
    discarded automatically, and the hand's win and loss are doubled.
    """

    tile: TileName


class DeclareKong(Action, frozen=True, tag="declare_kong"):
    """Declare a kong of ``tile``: four in hand (concealed) or the fourth on one's pong
    (extended; the other players may rob it)."""

    tile: TileName


class DeclareWin(Action, frozen=True, tag="declare_win"):
    """Win by self-draw: the hand is complete after one's own draw (or kong replacement)."""


class Claim(Action, frozen=True, tag="claim", kw_only=True):
    """Claim the discard (or the tile added to a kong, for ``win`` only).

    ``tiles`` are the concealed tiles that join it (none for a win).
    """

    kind: ClaimKind
    tiles: tuple[TileName, ...] = ()


class Pass(Action, frozen=True, tag="pass"):
    """Decline every claim on the current discard."""


class TimeOut(Action, frozen=True, tag="time_out"):
    """The seat's timer ran out (sent by the worker); the engine plays for the seat.

    A turn: draw if not drawn, win if the hand is complete, else discard the drawn tile.
    A call window: claim the win if offered, else pass. Never a kong nor a pong.
    """


class Back(Action, frozen=True, tag="back"):
    """An away seat is back: its timers run their full length again."""


AnyAction = Draw | Discard | ShowHand | DeclareKong | DeclareWin | Claim | Pass | TimeOut | Back

#: Decoders for the action union, built once (JSON from clients, msgpack internally).
ACTION_JSON_DECODER: msgspec.json.Decoder[AnyAction] = msgspec.json.Decoder(AnyAction)
ACTION_MSGPACK_DECODER: msgspec.msgpack.Decoder[AnyAction] = msgspec.msgpack.Decoder(AnyAction)


def decode_action(data: bytes | str) -> AnyAction:
    """One action from JSON; ``msgspec.ValidationError`` for anything else."""
    return ACTION_JSON_DECODER.decode(data)
