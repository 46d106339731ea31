"""What a seat can do: one tagged union of actions, decoded once per message.

Actions are imperative. A seat's legal actions are listed by ``legal_actions``, and a
client simply sends one of them back; ``TimeOut`` is sent by the engine worker when a
timer from ``pending_timer`` runs out, never by a player. ``Back`` is offered (first)
to a seat marked away.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from kalaro.games.tiles import TileName

#: Kinds of claim on a discard, highest priority first.
ClaimKind = Literal["mahjong", "kang", "pong", "chow"]
CLAIM_PRIORITY: dict[str, int] = {"mahjong": 4, "kang": 3, "pong": 2, "chow": 1}


class Action(msgspec.Struct, frozen=True, tag_field="type"):
    """Base of every Mahjong action; the ``type`` field names the subclass."""


class Draw(Action, frozen=True, tag="draw"):
    """Draw the next tile from the front of the wall (flowers are replaced at once)."""


class Discard(Action, frozen=True, tag="discard"):
    """Discard one tile from the concealed hand."""

    tile: TileName


class DeclareKang(Action, frozen=True, tag="declare_kang"):
    """Declare a kang of ``tile``: four in hand (concealed) or the fourth on one's pong."""

    tile: TileName


class DeclareWin(Action, frozen=True, tag="declare_win"):
    """Mahjong by self-draw (bunot): the hand is complete after one's own draw."""


class Claim(Action, frozen=True, tag="claim", kw_only=True):
    """Claim the discard. ``tiles`` are the concealed tiles that join it (none for mahjong)."""

    kind: ClaimKind
    tiles: tuple[TileName, ...] = ()


class Pass(Action, frozen=True, tag="pass"):
    """Decline every claim on the current discard."""


class TimeOut(Action, frozen=True, tag="time_out"):
    """The seat's timer ran out (sent by the worker); the engine plays for the seat.

    A turn: draw if not drawn, win if the hand is complete, else discard the drawn tile.
    A call window: claim Mahjong if offered, else pass. Never a kang, chow or pong.
    """


class Back(Action, frozen=True, tag="back"):
    """An away seat is back: its timers run their full length again."""


AnyAction = Draw | Discard | DeclareKang | DeclareWin | Claim | Pass | TimeOut | Back

#: Decoders for the action union, built once (JSON from clients, msgpack internally).
ACTION_JSON_DECODER: msgspec.json.Decoder[AnyAction] = msgspec.json.Decoder(AnyAction)
ACTION_MSGPACK_DECODER: msgspec.msgpack.Decoder[AnyAction] = msgspec.msgpack.Decoder(AnyAction)


def decode_action(data: bytes | str) -> AnyAction:
    """One action from JSON; ``msgspec.ValidationError`` for anything else."""
    return ACTION_JSON_DECODER.decode(data)
