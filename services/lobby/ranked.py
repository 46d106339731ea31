"""Ranked tables and minimum ratings: pure rules over :class:`TableRecord` (issue 34).

A **ranked table** is opened by the ranked service (``lobby.ranked.open``) with the
players its queue matched already seated, in the order it chose. It has no host (so
nobody ends it, removes a player or adds a bot; bots never sit there at all), is never
private, and is listed and watchable like any public table (spectators see it late:
see ``services/gateway/watch_delay.py``). Nobody else can sit there.

It **deals by itself**: when the last player taps Ready, or when the sweep finds every
seat ready. Between hands a **ready clock** of :data:`READY_SECONDS` runs
(``info.ready_by``); when it runs out, the players not ready are stood up. A ranked hand
needs every seat of its game (they were matched together; nobody else may sit), so the
table then **ends**, and so it does whenever a seat empties (a player leaves, asked to
leave after the hand, or was marked away by the engine). Its players queue again.

A **minimum rating** (``info.min_rating``) is a host's option on a public table: a Sit
by a player whose rating in the table's game is lower is refused (``rating_too_low``);
a player with no rating yet counts as the starting rating.
"""

from __future__ import annotations

from msgspec.structs import replace

from kalaro.bus import ServiceError
from kalaro.proto import errors as codes
from kalaro.proto.lobby import Caller, OpenRankedTable, SeatInfo, TableInfo
from services.lobby.records import CLOSED, DEFAULT_TURN_SECONDS, MAX_BET, TableRecord
from services.lobby.rules import require_host, require_open, with_seat
from services.lobby.setup import check_min_rating, game_options, game_rules

#: Seconds every seat has to tap Ready, from the table's opening and after each hand.
READY_SECONDS = 20.0
#: The shown rating of a player with no rated hand yet (services/ranked/ratings.py:
#: ``1000 + 40 * ordinal`` of openskill's default rating, whose ordinal is 0).
STARTING_RATING = 1000.0
#: Who deals a ranked table: the lobby itself, acting as a moderator would (a ranked
#: table has no host, and only a host or an admin may deal).
LOBBY_DEALER = Caller(user_id="kalaro-lobby", display_name="KaLaro", roles=("admin",))


def _error(code: str, message: str) -> ServiceError:
    return ServiceError(code, message)


# --- opening --------------------------------------------------------------------------


def new_table(req: OpenRankedTable, *, created_at: str, now: float) -> TableRecord:
    """The ranked table a match asks for, its seats still empty (each player is seated
    by :func:`seat_player` after their balance check), or why not."""
    game = game_rules(req.game)
    if len(req.players) != game.seats:
        raise _error(
            codes.BAD_REQUEST, f"a ranked {req.game} table seats exactly {game.seats} players"
        )
    if len(set(req.players)) != len(req.players) or not all(req.players):
        raise _error(codes.BAD_REQUEST, "each player of a match must be a different user id")
    if not 0 <= req.bet <= MAX_BET:
        raise _error(codes.BAD_REQUEST, f"the bet must be between 0 and {MAX_BET} credits")
    if not req.match_id:
        raise _error(codes.BAD_REQUEST, "a ranked table needs its match id")
    options = game_options(game, "kalaro", {})
    options_dict = game.options_dict(options)
    if options_dict.get("turn_seconds", DEFAULT_TURN_SECONDS) is None:
        # Ranked hands always play with the turn clock (the game's default otherwise).
        options = game_options(game, "kalaro", {"turn_seconds": DEFAULT_TURN_SECONDS})
        options_dict = game.options_dict(options)
    info = TableInfo(
        table_id="",
        game=req.game,  # type: ignore[arg-type]  # checked by game_rules above
        ruleset="kalaro",
        options=options_dict,
        bet=req.bet,
        max_loss=game.max_loss_units(options) * req.bet,
        private=False,
        chat_enabled=True,
        host_id="",
        host_name="",
        seats=(None,) * game.seats,
        status="waiting",
        hand_no=0,
        created_at=created_at,
        version=1,
        ranked=True,
        ready_by=now + READY_SECONDS,
    )
    return TableRecord(info=info, server_seed="", entropy=("",) * game.seats)


def seat_player(rec: TableRecord, index: int, caller: Caller) -> TableRecord:
    """The matched player ``caller`` in seat ``index`` of a ranked table being opened."""
    require_open(rec.info)
    seat = rec.info.seats[index]
    if seat is not None:
        if seat.user_id == caller.user_id:
            return rec
        raise _error(codes.CONFLICT, f"seat {index} is taken")
    return with_seat(rec, index, SeatInfo(user_id=caller.user_id, display_name=caller.display_name))


def abandoned(rec: TableRecord) -> TableRecord:
    """A ranked table that could not be opened (someone could not be seated): cancelled,
    with nobody left sitting at it."""
    if rec.info.status in CLOSED and not any(rec.info.seats):
        return rec
    emptied = replace(rec.info, seats=(None,) * len(rec.info.seats), status="cancelled")
    return replace(rec, info=emptied, entropy=("",) * len(rec.entropy))


# --- refusals at a ranked table --------------------------------------------------------


def require_unranked(info: TableInfo, what: str) -> None:
    if info.ranked:
        raise _error(codes.FORBIDDEN, f"a ranked table {what}")


def refuse_sit(info: TableInfo) -> None:
    """Seats at a ranked table are the queue's to give."""
    require_unranked(
        info, "seats only the players its queue matched: join the ranked queue to play ranked"
    )


# --- the ready clock -------------------------------------------------------------------


def closed_if_short(rec: TableRecord) -> TableRecord:
    """A ranked table between hands with an empty seat can never deal again: it ends."""
    info = rec.info
    if not info.ranked or info.status != "waiting" or all(s is not None for s in info.seats):
        return rec
    return replace(rec, info=replace(info, status="ended", ready_by=None))


def clock_started(rec: TableRecord, now: float) -> TableRecord:
    """Between hands with no clock running (a hand just ended, or a deal failed): start
    the ready clock."""
    info = rec.info
    if not info.ranked or info.status != "waiting" or info.ready_by is not None:
        return rec
    return replace(rec, info=replace(info, ready_by=now + READY_SECONDS))


def clock_ran_out(rec: TableRecord, now: float) -> TableRecord:
    """The ready clock ran out: the players not ready are stood up (and so the table
    ends, see :func:`closed_if_short`). Before it runs out, or when everyone is ready
    (the sweep deals), nothing changes."""
    info = rec.info
    if not info.ranked or info.status != "waiting" or info.ready_by is None:
        return rec
    if now < info.ready_by:
        return rec
    late = [i for i, s in enumerate(info.seats) if s is None or not s.ready]
    if not late:
        return rec
    for index in late:
        rec = with_seat(rec, index, None)
    return closed_if_short(rec)


def dealt(info: TableInfo) -> TableInfo:
    """A ranked table being dealt has no ready clock until the hand ends."""
    return replace(info, ready_by=None) if info.ranked else info


# --- minimum rating ---------------------------------------------------------------------


def set_min_rating(rec: TableRecord, caller: Caller, min_rating: float | None) -> TableRecord:
    info = rec.info
    require_host(info, caller)
    require_open(info)
    require_unranked(info, "seats players by rating already")
    check_min_rating(min_rating, private=info.private)
    if info.min_rating == min_rating:
        return rec
    return replace(rec, info=replace(info, min_rating=min_rating))


def require_rating(info: TableInfo, rating: float | None) -> None:
    """Refuses a Sit by a player rated ``rating`` (None: not rated yet, so the starting
    rating) at a table asking more."""
    if info.min_rating is None:
        return
    shown = STARTING_RATING if rating is None else rating
    if shown < info.min_rating:
        raise _error(
            codes.RATING_TOO_LOW,
            f"this table asks a {info.game} rating of at least {info.min_rating:g}; "
            f"yours is {shown:g}. Play ranked games to raise it, or pick another table",
        )
