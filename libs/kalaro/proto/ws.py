"""The WebSocket protocol at ``/ws``: one tagged union each way.

Client → server frames are strict (unknown fields refused). Server → client frames
for a table are built once by the service that produced them (engine or lobby) and
forwarded by the gateway as bytes, which is why ``view`` and ``events`` are raw JSON
here: the gateway never decodes or re-encodes a view on the hot path.

Every hand frame carries the hand's ``version``. A client that sees a version jump
sends ``Resync`` and receives a full ``HandView``; every ``HandView`` is complete,
so applying the newest one is always correct.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from kalaro.proto.lobby import TableInfo

TableId = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
Ref = Annotated[int, msgspec.Meta(ge=0)]


# --- client → server --------------------------------------------------------------
class ClientFrame(
    msgspec.Struct, frozen=True, tag_field="type", forbid_unknown_fields=True, kw_only=True
):
    pass


class Subscribe(ClientFrame, frozen=True, tag="subscribe", kw_only=True):
    """Watch a table: as its seated player if you sit there, else as a spectator.

    A private table is watched only by its host, seated players and admins, or with its
    ``invite_code``; anyone else is answered ``not_found``."""

    table_id: TableId
    ref: Ref | None = None
    invite_code: Annotated[str, msgspec.Meta(max_length=64)] | None = None


class Unsubscribe(ClientFrame, frozen=True, tag="unsubscribe", kw_only=True):
    table_id: TableId
    ref: Ref | None = None


class Act(ClientFrame, frozen=True, tag="act", kw_only=True):
    """A move, made against the hand version the client last saw."""

    table_id: TableId
    version: Annotated[int, msgspec.Meta(ge=0)]
    action: dict[str, Any]
    ref: Ref | None = None


class Resync(ClientFrame, frozen=True, tag="resync", kw_only=True):
    table_id: TableId
    ref: Ref | None = None


class Chat(ClientFrame, frozen=True, tag="chat", kw_only=True):
    table_id: TableId
    text: Annotated[str, msgspec.Meta(min_length=1, max_length=300)]
    ref: Ref | None = None


class Ping(ClientFrame, frozen=True, tag="ping", kw_only=True):
    ref: Ref | None = None


class Ready(ClientFrame, frozen=True, tag="ready", kw_only=True):
    """Ready (or not) for the next hand, with your entropy: the REST call, on the socket."""

    table_id: TableId
    ready: bool = True
    entropy: Annotated[str, msgspec.Meta(max_length=64)] = ""
    ref: Ref | None = None


class Deal(ClientFrame, frozen=True, tag="deal", kw_only=True):
    """The host deals the next hand: the REST call, on the socket."""

    table_id: TableId
    ref: Ref | None = None


AnyClientFrame = Subscribe | Unsubscribe | Act | Resync | Chat | Ping | Ready | Deal


# --- server → client --------------------------------------------------------------
class ServerFrame(msgspec.Struct, frozen=True, tag_field="type", kw_only=True):
    pass


class Welcome(ServerFrame, frozen=True, tag="welcome", kw_only=True):
    user_id: str
    heartbeat_seconds: int


class Subscribed(ServerFrame, frozen=True, tag="subscribed", kw_only=True):
    table: TableInfo
    seat: int | None  # None: watching as a spectator
    ref: int | None = None


class Unsubscribed(ServerFrame, frozen=True, tag="unsubscribed", kw_only=True):
    table_id: str
    ref: int | None = None


class HandView(ServerFrame, frozen=True, tag="view", kw_only=True):
    """The hand as one seat (or the audience, ``seat`` None) may see it, complete."""

    table_id: str
    hand_id: str
    version: int
    seat: int | None
    view: msgspec.Raw
    events: msgspec.Raw  # what just happened, redacted for this seat (a JSON list)
    deadline_ms: int | None = None  # when the pending timer fires (epoch ms), if any


class TableChanged(ServerFrame, frozen=True, tag="table", kw_only=True):
    table: TableInfo


class ChatPosted(ServerFrame, frozen=True, tag="chat", kw_only=True):
    table_id: str
    user_id: str
    display_name: str
    text: str
    at: str


class HandResult(ServerFrame, frozen=True, tag="result", kw_only=True):
    """The end of a hand: who won, what moved, every hand, and the seed to verify."""

    table_id: str
    hand_id: str
    result: msgspec.Raw  # the game's Result
    payments: tuple[int, ...]  # credits per seat (units x bet)
    players: tuple[str, ...]  # user id per seat
    seed_commitment: str
    server_seed: str
    entropy: tuple[str, ...]


class Ack(ServerFrame, frozen=True, tag="ack", kw_only=True):
    ref: int | None
    version: int | None = None


class Error(ServerFrame, frozen=True, tag="error", kw_only=True):
    code: str
    message: str
    ref: int | None = None


class Pong(ServerFrame, frozen=True, tag="pong", kw_only=True):
    ref: int | None = None


class Seated(ServerFrame, frozen=True, tag="seated", kw_only=True):
    """The ranked queue seated this player (issue 34): subscribe to ``table_id``."""

    table_id: str
    game: str
    bet: int = 0


AnyServerFrame = (
    Welcome
    | Subscribed
    | Unsubscribed
    | HandView
    | TableChanged
    | ChatPosted
    | HandResult
    | Ack
    | Error
    | Pong
    | Seated
)
