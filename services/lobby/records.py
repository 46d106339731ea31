"""What the lobby stores for a table, and the limits its rules work to.

The record is the public :class:`~kalaro.proto.lobby.TableInfo` plus its secrets: the
invite code, the next hand's server seed, and each seat's entropy. Only ``info`` is
ever returned or published, so a secret cannot leak by accident.
"""

from __future__ import annotations

import msgspec

from kalaro.proto.lobby import TableInfo

MAX_BET = 100_000
MAX_ENTROPY = 64
MAX_CHAT = 300
MAX_LIST = 200
HOST_ROLES = frozenset({"host", "admin"})
BOT_ROLE = "bot"
#: A practice table with nothing happening at it for this long is ended (its host left
#: without saying so, and its bots would otherwise wait for them for ever).
PRACTICE_IDLE_SECONDS = 30 * 60
#: Practice tables one player may have open at once (each has bots seated, holding a
#: socket and a task each); one more is refused until they leave one or it goes idle.
PRACTICE_TABLES_PER_PLAYER = 3
CLOSED = ("ended", "cancelled")
IN_HAND = ("dealing", "playing")
# A seat kept for a bot stays kept this long: the bots service sits its bot within a
# second or two, and a lost request must not block the seat for good.
BOT_SEAT_HOLD_SECONDS = 30.0
#: A table whose options leave this out gets the engines' default clock (seconds).
DEFAULT_TURN_SECONDS = 30
#: Presence: how long a seat shows "reconnecting" after its last socket went, and how
#: often gateways re-announce their sockets (a gateway silent for
#: ``PRESENCE_FORGET_PERIODS`` of them is taken for dead and forgotten).
PRESENCE_GRACE_SECONDS = 30.0
PRESENCE_REFRESH_SECONDS = 30.0
PRESENCE_FORGET_PERIODS = 3


class GatewaySockets(msgspec.Struct, frozen=True, array_like=True):
    """The seated players with a socket on a table at one gateway process."""

    gateway_id: str
    user_ids: tuple[str, ...]
    heard: float  # epoch seconds of the gateway's last report for this table


class TableRecord(msgspec.Struct, frozen=True):
    """What Redis holds for one table: the public info plus what must stay secret."""

    info: TableInfo
    server_seed: str  # hex of 32 random bytes; info.seed_commitment is sha256 of them
    entropy: tuple[str, ...]  # per seat, as given with Ready ("" when none)
    invite_code: str | None = None
    last_hand_id: str | None = None  # the hand the engine most recently reported finished
    cancelled_hand_id: str | None = None  # the hand voided by CancelTable, for retries
    dealing_since: float = 0.0  # epoch seconds the current deal began (stale-deal rescue)
    bot_seats: tuple[tuple[int, float], ...] = ()  # (seat, epoch seconds) kept for a bot
    # Presence: each gateway's seated sockets here, and when a player last had one (for
    # seats with none now, within the grace period). The seats' ``presence`` in ``info``
    # is derived from these by :func:`services.lobby.presence.derive` on every write.
    gateways: tuple[GatewaySockets, ...] = ()
    last_connected: tuple[tuple[str, float], ...] = ()  # (user id, epoch seconds)
