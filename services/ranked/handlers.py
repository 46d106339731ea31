"""Ranked's handlers, one shape: ``async def handle(cmd, deps) -> reply``; bound to their
endpoints in :mod:`services.ranked.bootstrap`. Ratings and admins' decisions come from
:attr:`RankedDeps.store` (SQL in the service, the in-memory twin in unit tests), the
queue from Redis (:mod:`services.ranked.queue`)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from nats.aio.client import Client as NATS

from kalaro.bus import RemoteError, ServiceError
from kalaro.bus import request as bus_request
from kalaro.games.registry import UnknownGame, game_names, rules_for
from kalaro.proto import endpoints
from kalaro.proto import errors as codes
from kalaro.proto import ranked as rk
from kalaro.proto import wallet as w
from kalaro.proto.auth import GetProfile
from services.ranked import fairplay
from services.ranked.history_feed import played_hands
from services.ranked.names import NameCache
from services.ranked.queue import RankedQueue, Waiting
from services.ranked.ratings import Rating, shown_rating, tier
from services.ranked.store import BOARD_SIZE, RankedStore, RatingRow

log = logging.getLogger("kalaro.ranked")

WEEK_MS = 7 * 24 * 3600 * 1000
#: How many admin actions the fair-play report lists.
AUDIT_SHOWN = 50
MAX_REASON = 500


@dataclass
class RankedDeps:
    """What ranked's handlers are given, built once per process (bootstrap)."""

    store: RankedStore
    queue: RankedQueue
    nc: NATS
    names: NameCache
    clock: Callable[[], float] = time.time  # seconds
    #: Balance checks and history reads wait this long for the wallet or history.
    timeout: float = 5.0
    games: tuple[str, ...] = field(default_factory=game_names)

    def now_ms(self) -> int:
        return int(self.clock() * 1000)


def _game(deps: RankedDeps, game: str) -> str:
    if game not in deps.games:
        raise ServiceError(codes.BAD_REQUEST, f"unknown game {game!r}; ranked games: "
                           f"{', '.join(deps.games)}")  # fmt: skip
    return game


def _game_rating(game: str, row: RatingRow | None) -> rk.GameRating:
    rating = row.rating if row is not None else Rating()
    shown = shown_rating(rating)
    return rk.GameRating(
        game=game,
        rating=shown,
        mu=rating.mu,
        sigma=rating.sigma,
        tier=tier(shown),
        hands=rating.hands,
        last_change=rating.last_change,
    )


async def ratings(cmd: rk.GetRatings, deps: RankedDeps) -> rk.Ratings:
    rows = await deps.store.ratings_of(cmd.user_id)
    games = tuple(_game_rating(g, rows.get(g)) for g in deps.games)
    return rk.Ratings(user_id=cmd.user_id, games=games)


async def leaderboard(cmd: rk.GetLeaderboard, deps: RankedDeps) -> rk.Leaderboard:
    game = _game(deps, cmd.game)
    since = deps.now_ms() - WEEK_MS if cmd.period == "week" else None
    rows = await deps.store.board(game, since, BOARD_SIZE)
    mine = await deps.store.place_of(game, cmd.caller_id, since) if cmd.caller_id else None
    wanted = [r.user_id for r in rows] + ([mine[1].user_id] if mine else [])
    names = await deps.names.display_names(wanted, {r.user_id: r.display_name for r in rows})

    def line(rank: int, row: RatingRow) -> rk.LeaderboardRow:
        return rk.LeaderboardRow(
            rank=rank,
            user_id=row.user_id,
            display_name=names.get(row.user_id, row.display_name),
            rating=row.shown,
            tier=tier(row.shown),
            hands=row.rating.hands,
        )

    top = tuple(line(i, r) for i, r in enumerate(rows, start=1))
    me = line(*mine) if mine else None
    return rk.Leaderboard(game=game, period=cmd.period, top=top, me=me)


# --- the queue ----------------------------------------------------------------------
async def _may_queue(deps: RankedDeps, user_id: str) -> None:
    standing = await deps.store.standing(user_id)
    if standing.frozen:
        raise ServiceError(codes.FORBIDDEN, "this account is frozen: it cannot sit or queue")
    if standing.barred:
        raise ServiceError(codes.FORBIDDEN, "this account is barred from ranked play")


def seat_credits(game: str, bet: int) -> int:
    """What a seat at a ranked table of ``game`` at ``bet`` must have available: the
    default ruleset's maximum loss times the bet, as the lobby asks of a sit."""
    rules = rules_for(game)
    return int(rules.max_loss_units(rules.options({}))) * bet


async def join_queue(cmd: rk.JoinQueue, deps: RankedDeps) -> rk.QueueStatus:
    game = _game(deps, cmd.game)
    if not 1 <= cmd.bet <= 100_000:
        raise ServiceError(codes.BAD_REQUEST, "a ranked bet is 1 to 100000 credits")
    await _may_queue(deps, cmd.user_id)
    try:
        need = seat_credits(game, cmd.bet)
    except (UnknownGame, ValueError) as exc:
        raise ServiceError(codes.BAD_REQUEST, str(exc)) from None
    balance = await bus_request(
        deps.nc, endpoints.WALLET_BALANCE, w.GetBalance(user_id=cmd.user_id), timeout=deps.timeout
    )
    if balance.available < need:
        raise ServiceError(
            codes.INSUFFICIENT_FUNDS,
            f"you need {need} credits available to queue at a bet of {cmd.bet}; "
            f"you have {balance.available}",
        )
    now_ms = deps.now_ms()
    if cmd.address:
        await deps.queue.note_seen(cmd.user_id, now_ms, address=cmd.address, device_id="")
    already = await deps.queue.waiting(cmd.user_id)
    if already is not None and (already.game, already.bet) == (game, cmd.bet):
        return _waiting_status(already, now_ms)  # asked twice: still the first wait
    if await deps.queue.matching(cmd.user_id):
        raise ServiceError(
            codes.CONFLICT, "a table is being opened for you right now: wait for it, then leave"
        )
    row = (await deps.store.ratings_of(cmd.user_id)).get(game)
    rating = shown_rating(row.rating if row is not None else Rating())
    entry = Waiting(game=game, bet=cmd.bet, rating=rating, joined_ms=now_ms)
    await deps.queue.join(cmd.user_id, entry)
    return _waiting_status(entry, now_ms)


def _waiting_status(entry: Waiting, now_ms: int) -> rk.QueueStatus:
    waited = round(max(0, now_ms - entry.joined_ms) / 1000, 1)
    return rk.QueueStatus(status="waiting", game=entry.game, bet=entry.bet, waited_s=waited)


async def leave_queue(cmd: rk.LeaveQueue, deps: RankedDeps) -> rk.QueueStatus:
    await deps.queue.leave(cmd.user_id)
    return rk.QueueStatus(status="idle")


async def queue_status(cmd: rk.GetQueueStatus, deps: RankedDeps) -> rk.QueueStatus:
    entry = await deps.queue.waiting(cmd.user_id)
    if entry is not None:
        return _waiting_status(entry, deps.now_ms())
    seat = await deps.queue.seated(cmd.user_id)
    if seat is not None:
        return rk.QueueStatus(status="seated", game=seat.game, bet=seat.bet, table_id=seat.table_id)
    return rk.QueueStatus(status="idle")


# --- standing, fair play, admin actions ---------------------------------------------
async def get_standing(cmd: rk.GetStanding, deps: RankedDeps) -> rk.Standing:
    return await deps.store.standing(cmd.user_id)


async def admin_act(cmd: rk.AdminAct, deps: RankedDeps) -> rk.AdminActed:
    reason = cmd.reason.strip()
    if not reason:
        raise ServiceError(codes.BAD_REQUEST, "say why: a reason is required")
    if len(reason) > MAX_REASON:
        raise ServiceError(codes.BAD_REQUEST, f"a reason is at most {MAX_REASON} characters")
    if not cmd.user_id:
        raise ServiceError(codes.BAD_REQUEST, "name the account to act on")
    if cmd.user_id == cmd.admin_id:
        raise ServiceError(codes.FORBIDDEN, "an admin does not act on their own account")
    await _known_account(deps, cmd.user_id)
    acted = await deps.store.act(
        rk.AdminAct(admin_id=cmd.admin_id, user_id=cmd.user_id, action=cmd.action, reason=reason),
        deps.now_ms(),
    )
    if acted.standing.frozen or acted.standing.barred:
        await deps.queue.leave(cmd.user_id)  # out of the queue at once
    log.info(
        "admin %s: %s on %s (%s)", cmd.admin_id, cmd.action, cmd.user_id, reason,
        extra={"audit": True},
    )  # fmt: skip
    return acted


async def _known_account(deps: RankedDeps, user_id: str) -> None:
    """Auth knows ``user_id`` (else ``not_found``): no decision about nobody is kept."""
    try:
        await bus_request(
            deps.nc, endpoints.AUTH_PROFILE, GetProfile(user_id=user_id), timeout=deps.timeout
        )
    except RemoteError as exc:
        if exc.code == codes.NOT_FOUND:
            raise ServiceError(codes.NOT_FOUND, f"no account {user_id}") from None
        raise


async def fair_play(cmd: rk.GetFairPlay, deps: RankedDeps) -> rk.FairPlayReport:
    if not 1 <= cmd.days <= 90:
        raise ServiceError(codes.BAD_REQUEST, "days is 1 to 90")
    if cmd.game is not None:
        _game(deps, cmd.game)
    now_ms = deps.now_ms()
    note = ""
    try:
        hands = await played_hands(
            deps.nc, since_ms=now_ms - cmd.days * 86_400_000, game=cmd.game, timeout=deps.timeout
        )
    except RemoteError as exc:
        hands, note = [], f"hands could not be read from history: {exc.message}"
    users = await deps.queue.seen_users(now_ms)
    seen = await deps.queue.seen(users, now_ms)
    access = {
        u: fairplay.AccountAccess(addresses=seen.addresses[u], devices=seen.devices[u])
        for u in users
    }
    findings = tuple(
        rk.FairPlayFinding(
            kind=f.kind, accounts=f.accounts, score=f.score, detail=f.detail, hand_ids=f.hand_ids
        )
        for f in fairplay.all_findings(hands, access)
    )
    audit = tuple(await deps.store.audit_log(AUDIT_SHOWN))
    return rk.FairPlayReport(findings=findings, hands_read=len(hands), audit=audit, note=note)
