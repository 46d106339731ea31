"""Every NATS subject KaLaro uses, declared once.

Request/reply subjects are served by queue groups named after the service, so any
number of replicas can share the load. Handlers import names from here; a subject is
never spelled as a string literal elsewhere.
"""

from __future__ import annotations

import zlib

# --- auth: users, tokens, roles ---------------------------------------------------
AUTH_SIGN_UP = "auth.sign_up"
AUTH_SIGN_IN = "auth.sign_in"
AUTH_VERIFY_EMAIL = "auth.verify_email"
AUTH_RESEND_VERIFICATION = "auth.verify_email.resend"
AUTH_REQUEST_PASSWORD_RESET = "auth.password_reset.request"
AUTH_RESET_PASSWORD = "auth.password_reset.confirm"
AUTH_GOOGLE_SIGN_IN = "auth.google_sign_in"
AUTH_REFRESH = "auth.refresh"
AUTH_SIGN_OUT = "auth.sign_out"
AUTH_PROFILE = "auth.profile"
AUTH_PUBLIC_KEYS = "auth.public_keys"
# The one approval workflow (host access, credits): services/auth/approvals.py.
AUTH_REQUEST_APPROVAL = "auth.approvals.create"
AUTH_LIST_APPROVALS = "auth.approvals.list"
AUTH_DECIDE_APPROVAL = "auth.approvals.decide"  # admins
AUTH_WITHDRAW_APPROVAL = "auth.approvals.withdraw"
AUTH_APPROVAL_TRAIL = "auth.approvals.trail"  # admins
AUTH_CREATE_BOT = "auth.bots.create"  # internal: the bots service only
AUTH_SEARCH_USERS = "auth.users.search"  # admins
# Broadcast (no reply): a session was signed out or its refresh token reused; gateways
# close its open sockets. The Redis denylist (kalaro.tokens.revoked_key) is the record.
AUTH_REVOKED = "auth.revoked"

# --- wallet: the credit ledger -----------------------------------------------------
WALLET_WELCOME_GRANT = "wallet.welcome_grant"
WALLET_BALANCE = "wallet.balance"
WALLET_HISTORY = "wallet.history"
WALLET_GRANT_APPROVED = "wallet.approved_grant"  # internal: auth applies approved credits
WALLET_ADJUST = "wallet.adjust"
WALLET_PLACE_HOLDS = "wallet.holds.place"
WALLET_SETTLE = "wallet.settle"
WALLET_VOID = "wallet.void"
WALLET_AUDIT = "wallet.audit"

# --- lobby: tables, seats, readiness, chat ----------------------------------------
LOBBY_CREATE_TABLE = "lobby.tables.create"
LOBBY_LIST_TABLES = "lobby.tables.list"
LOBBY_GET_TABLE = "lobby.tables.get"
LOBBY_SIT = "lobby.seats.sit"
LOBBY_LEAVE = "lobby.seats.leave"
LOBBY_LEAVE_AFTER_HAND = "lobby.seats.leave_after_hand"
LOBBY_SET_READY = "lobby.seats.ready"
LOBBY_REMOVE_PLAYER = "lobby.seats.remove"
LOBBY_ALLOW_BACK = "lobby.seats.allow_back"  # host: a removed player may sit again
LOBBY_INVITE_CODE = "lobby.tables.invite_code"  # host: a private table's code, again
LOBBY_DEAL = "lobby.tables.deal"
LOBBY_END_TABLE = "lobby.tables.end"
LOBBY_CANCEL_TABLE = "lobby.tables.cancel"
LOBBY_SET_CHAT = "lobby.chat.set"
LOBBY_SEND_CHAT = "lobby.chat.send"
LOBBY_CREATE_PRACTICE = "lobby.practice.create"
LOBBY_ADD_BOT = "lobby.seats.add_bot"
LOBBY_PRESENCE = "lobby.presence"  # internal: gateways report their seated sockets
# Engine -> lobby, the same HandFinished as on the EVENTS stream, sent directly while
# that stream has no leader (internal; idempotent).
LOBBY_HAND_FINISHED = "lobby.hands.finished"
# Ranked play (issue 34): the ranked service opens a table for a match it formed.
LOBBY_OPEN_RANKED = "lobby.ranked.open"
LOBBY_SET_MIN_RATING = "lobby.tables.min_rating"  # host: the rating a sit needs

# --- history: every finished hand's record, in SQL ----------------------------------
HISTORY_LIST_HANDS = "history.hands.list"
HISTORY_GET_HAND = "history.hands.get"
HISTORY_EXPORT_HANDS = "history.hands.export"  # whole records, page by page
HISTORY_PLAYER_STATS = "history.players.stats"

# --- ranked: ratings, the quick-play queue, fair play (issue 34) -------------------
RANKED_RATINGS = "ranked.ratings.get"
RANKED_LEADERBOARD = "ranked.leaderboard.get"
RANKED_QUEUE_JOIN = "ranked.queue.join"
RANKED_QUEUE_LEAVE = "ranked.queue.leave"
RANKED_QUEUE_STATUS = "ranked.queue.status"
RANKED_STANDING = "ranked.standing.get"  # the lobby asks before a sit: frozen?
RANKED_FAIR_PLAY = "ranked.admin.fair_play"  # admins
RANKED_ADMIN_ACT = "ranked.admin.act"  # admins: warn, bar from ranked, freeze
#: Fire and forget (no reply): an account seen from an address/device (``SeenFrom``).
RANKED_SEEN = "ranked.seen"
#: The ranked service's durable consumer on the RECORDS stream (ratings).
RANKED_RECORDS_CONSUMER = "ranked-records"


def user_notify(user_id: str) -> str:
    """A server frame for every socket of one user (e.g. ``seated``), on any gateway."""
    return f"users.notify.{user_id}"


#: What each gateway process subscribes to once (not a queue group: every gateway).
USER_NOTIFY_ALL = "users.notify.*"

# --- bots: seat a bot account that plays through the gateway -----------------------
BOTS_SEAT = "bots.seat"


# --- engine workers: one queue group per game --------------------------------------
#: Each game's tables are split into this many partitions; one engine replica owns a
#: partition at a time (services/engine/ownership.py). Callers and engines must agree
#: on it, so it is part of the protocol, not a setting: changing it needs every engine
#: and caller restarted together.
ENGINE_PARTITIONS = 32


def partition_of(table_id: str, partitions: int = ENGINE_PARTITIONS) -> int:
    """The partition a table belongs to: a stable hash (CRC-32, the same in every
    process and Python version, unlike ``hash``), so any caller finds the owner's
    subject without a lookup."""
    return zlib.crc32(table_id.encode()) % partitions


def at_partition(subject: str, partition: int | str) -> str:
    """The subject a partition's owner serves ``subject`` on: ``engine.<game>.act.7``."""
    return f"{subject}.{partition}"


def engine_start(game: str) -> str:
    return f"engine.{game}.start"


def engine_act(game: str) -> str:
    return f"engine.{game}.act"


def engine_view(game: str) -> str:
    return f"engine.{game}.view"


def engine_cancel(game: str) -> str:
    return f"engine.{game}.cancel"


def engine_record(game: str) -> str:
    return f"engine.{game}.record"


def engine_my_hands(game: str) -> str:
    """A player's finished hands of ``game`` (hand history)."""
    return f"engine.{game}.myhands"


def engine_outcome(game: str) -> str:
    """What became of a hand (the wallet's reconciler asks before touching a hold)."""
    return f"engine.{game}.outcome"


# --- durable streams (JetStream) ---------------------------------------------------
# Hand outcomes on their way to the wallet: published with Nats-Msg-Id = hand id.
RESULTS_STREAM = "RESULTS"
RESULTS_SUBJECTS = "results.>"
WALLET_RESULTS_CONSUMER = "wallet-results"

# Facts other services react to (a new user gets a welcome grant, ...).
EVENTS_STREAM = "EVENTS"
EVENTS_SUBJECTS = "events.>"
USER_REGISTERED = "events.auth.user_registered"
WALLET_USERS_CONSUMER = "wallet-users"
HAND_FINISHED = "events.hand.finished"
LOBBY_HANDS_CONSUMER = "lobby-hands"


# Finished hands' records on their way to the history service (Nats-Msg-Id = hand id).
RECORDS_STREAM = "RECORDS"
RECORDS_SUBJECTS = "records.>"
HISTORY_RECORDS_CONSUMER = "history-records"


def hand_record(hand_id: str) -> str:
    """Subject of a finished hand's record on the RECORDS stream."""
    return f"records.hand.{hand_id}"


def hand_result(hand_id: str) -> str:
    """Subject of a hand's settlement or void on the RESULTS stream."""
    return f"results.hand.{hand_id}"


# --- live tables (fan-out of views) ------------------------------------------------
#: How long a gateway's mark that someone watches a table lasts; it refreshes the mark
#: well within this while a spectator stays (see ``table_audience_key``).
AUDIENCE_TTL_MS = 30_000


def table_audience_key(table_id: str) -> str:
    """Redis key that exists while some gateway has a spectator on the table: engines
    build the audience's frame (in ``table_frames``) only then."""
    return f"audience:{table_id}"


def table_frames(table_id: str) -> str:
    """One message per move: every seat's frame and the audience's
    (:class:`kalaro.proto.frames.TableFrames`); gateways only, never a client."""
    return f"table.{table_id}.frames"


def table_all(table_id: str) -> str:
    """Everything published for a table (what one gateway process subscribes to)."""
    return f"table.{table_id}.>"


def table_events(table_id: str) -> str:
    """Table-level changes (sits, readies, chat, results) that everyone may see."""
    return f"table.{table_id}.events"
