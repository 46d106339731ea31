"""New tables: the record a CreateTable or CreatePractice asks for, or why not (pure).

The table id, server seed and its commitment are filled in when the table is stored.
"""

from __future__ import annotations

from typing import Any

from kalaro.bus import ServiceError
from kalaro.games.registry import GameRules, UnknownGame, rules_for
from kalaro.proto import errors as codes
from kalaro.proto.lobby import Caller, CreatePractice, CreateTable, SeatInfo, TableInfo
from services.lobby.records import (
    BOT_ROLE,
    CLOSED,
    DEFAULT_TURN_SECONDS,
    HOST_ROLES,
    MAX_BET,
    TableRecord,
)


def game_rules(game: str) -> GameRules:
    try:
        return rules_for(game)
    except UnknownGame as exc:
        raise ServiceError(codes.BAD_REQUEST, str(exc)) from None


def game_options(game: GameRules, ruleset: str, options: dict[str, Any]) -> Any:
    if options.get("ruleset", ruleset) != ruleset:
        raise ServiceError(codes.BAD_REQUEST, "give the ruleset once, not also inside options")
    try:
        return game.options({**options, "ruleset": ruleset})
    except (ValueError, TypeError) as exc:
        raise ServiceError(codes.BAD_REQUEST, str(exc)) from None


def check_min_rating(min_rating: float | None, *, private: bool) -> None:
    if min_rating is None:
        return
    if private:
        raise ServiceError(
            codes.BAD_REQUEST,
            "a minimum rating is for public tables: a private table's host chooses its "
            "players by invitation",
        )
    if not 0 <= min_rating <= 10_000:
        raise ServiceError(codes.BAD_REQUEST, "the minimum rating must be between 0 and 10000")


def new_table(req: CreateTable, *, created_at: str, invite_code: str | None) -> TableRecord:
    """A host's table (``invite_code`` given when it is private)."""
    if not HOST_ROLES & set(req.caller.roles):
        raise ServiceError(
            codes.FORBIDDEN, "only hosts can create tables; ask an admin for host access"
        )
    game = game_rules(req.game)
    options = game_options(game, req.ruleset, req.options)
    if not 0 <= req.bet <= MAX_BET:
        raise ServiceError(codes.BAD_REQUEST, f"the bet must be between 0 and {MAX_BET} credits")
    options_dict = game.options_dict(options)
    check_min_rating(req.min_rating, private=req.private)
    # DESIGN.md flow 7: every turn has a clock, off only at private zero-bet tables
    # (and practice tables, which are zero-bet and their host's alone).
    if options_dict.get("turn_seconds", DEFAULT_TURN_SECONDS) is None and not (
        req.private and req.bet == 0
    ):
        raise ServiceError(
            codes.BAD_REQUEST,
            "this table needs a turn clock: set turn_seconds (seconds per turn); only "
            "private tables with no bet may play without one (turn_seconds null)",
        )
    info = TableInfo(
        table_id="",
        game=req.game,
        ruleset=req.ruleset,
        options=options_dict,
        bet=req.bet,
        max_loss=game.max_loss_units(options) * req.bet,
        private=req.private,
        chat_enabled=req.chat_enabled,
        host_id=req.caller.user_id,
        host_name=req.caller.display_name,
        seats=(None,) * game.seats,
        status="waiting",
        hand_no=0,
        created_at=created_at,
        version=1,
        min_rating=req.min_rating,
    )
    return TableRecord(
        info=info, server_seed="", entropy=("",) * game.seats, invite_code=invite_code
    )


def new_practice(req: CreatePractice, *, created_at: str, now: float) -> TableRecord:
    """A zero-bet table hosted by the caller (any player) in seat 0, every other seat
    kept for a bot from ``now``."""
    caller: Caller = req.caller
    if BOT_ROLE in caller.roles:
        raise ServiceError(codes.FORBIDDEN, "bots do not start practice tables")
    game = game_rules(req.game)
    options = game_options(game, req.ruleset, req.options)
    host = SeatInfo(user_id=caller.user_id, display_name=caller.display_name)
    info = TableInfo(
        table_id="",
        game=req.game,
        ruleset=req.ruleset,
        options=game.options_dict(options),
        bet=0,
        max_loss=0,
        private=False,
        chat_enabled=True,
        host_id=caller.user_id,
        host_name=caller.display_name,
        seats=(host,) + (None,) * (game.seats - 1),
        status="waiting",
        hand_no=0,
        created_at=created_at,
        version=1,
        practice=True,
    )
    return TableRecord(
        info=info,
        server_seed="",
        entropy=("",) * game.seats,
        bot_seats=tuple((seat, now) for seat in range(1, game.seats)),
    )


# --- how many practice tables one player may have open ----------------------------------


def practice_open(info: TableInfo | None) -> bool:
    """Whether a practice table counts towards its host's limit (open, not gone)."""
    return info is not None and info.status not in CLOSED


def practice_limit_error(
    open_tables: list[TableInfo], opening: int, limit: int, idle_minutes: float
) -> ServiceError:
    """The refusal of one practice table too many, naming the limit and the tables open
    (``opening``: how many more are being opened right now)."""
    named = [f"{t.game} table {t.table_id}" for t in open_tables]
    if opening:
        named.append(f"{opening} being opened right now")
    return ServiceError(
        codes.PRACTICE_LIMIT,
        f"you already have {limit} practice tables open, the most one player may have "
        f"({', '.join(named)}). Leave one of them first (leaving a practice table ends "
        f"it); one nobody plays at closes by itself after {idle_minutes:g} minutes.",
    )
