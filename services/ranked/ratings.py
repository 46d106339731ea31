"""Ratings of ranked hands: Weng-Lin (Plackett-Luce, the ``openskill`` library).

Each player has, per game, a Bayesian rating: ``mu`` (the skill we believe) and
``sigma`` (how unsure we are). One rated hand is one Plackett-Luce match of single-
player teams, ranked by its order of finish: the winner(s) first, the others by what
they were paid (more is better), equal payments sharing a place.

What a player sees is the conservative number ``mu - 3 * sigma`` (openskill's
``ordinal``: we are ~99.9 % sure the skill is at least that), scaled to a friendly range:
``shown = round(1000 + 40 * ordinal)``, never below 0. A newcomer (mu 25, sigma 25/3)
shows 1000; an average regular (sigma ~1.5) about 1,800; a clear winner 2,100 and more.
Sigma never grows at a hand (openskill's ``limit_sigma``), so the winner's shown number
never falls; as sigma shrinks, a loser's can rise a little when the loss was expected.

Only ranked hands are rated, and :func:`unrated_reason` is the one place that says so.
:func:`rate_hand` is a pure function of (current ratings, record): the same inputs give
the same new ratings, and a rating remembers the last hand applied to it, so replaying
that hand is refused (the store still keeps rated hand ids for exactly-once).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec
from openskill.models import PlackettLuce

from kalaro.proto.engine import HandRecord

_MODEL = PlackettLuce()  # openskill's defaults: mu 25, sigma 25/3, beta 25/6, tau 25/300

MU: float = _MODEL.mu
SIGMA: float = _MODEL.sigma
DISPLAY_BASE = 1000
DISPLAY_SCALE = 40

#: Tier names by the lowest shown rating that reaches them, lowest first. English
#: names; the web translates by name (see :func:`tier`).
TIERS: tuple[tuple[str, int], ...] = (
    ("Bronze", 0),
    ("Silver", 1300),
    ("Gold", 1600),
    ("Platinum", 1850),
    ("Diamond", 2000),
    ("Master", 2150),
)


class Rating(msgspec.Struct, frozen=True, kw_only=True):
    """One player's rating in one game (a newcomer's is the default)."""

    mu: float = MU
    sigma: float = SIGMA
    hands: int = 0  # rated hands so far
    last_change: int = 0  # signed change of the shown number at the last rated hand
    last_hand_id: str = ""  # the last hand applied: applying it again is refused


class RatingChange(msgspec.Struct, frozen=True, kw_only=True):
    """What one rated hand did to one player's rating."""

    user_id: str
    game: str
    hand_id: str
    place: int  # 1 = won; equal payments share a place (1, 2, 2)
    before: Rating
    after: Rating
    shown: int  # the new shown rating
    change: int  # shown after - shown before (signed)
    tier: str  # of the new shown rating


class NotRateable(ValueError):
    """The record is not one to rate; ``reason`` says why (for a log line)."""

    def __init__(self, hand_id: str, reason: str) -> None:
        super().__init__(f"hand {hand_id} is not rated: {reason}")
        self.reason = reason


def shown_rating(rating: Rating) -> int:
    """The number a player sees: ``1000 + 40 * (mu - 3 sigma)``, rounded, at least 0."""
    return max(0, round(DISPLAY_BASE + DISPLAY_SCALE * (rating.mu - 3 * rating.sigma)))


def tier(shown: int) -> str:
    """The tier name of a shown rating (an English name, also the key to translate)."""
    name = TIERS[0][0]
    for tier_name, floor in TIERS:
        if shown >= floor:
            name = tier_name
    return name


def _winners(result: Any) -> frozenset[int]:
    # The record's result is the game's Result as JSON: Tongits and Ka Wu Xing list
    # ``winners``; Mahjong has one ``winner`` (null on a drawn wall).
    if not isinstance(result, dict):
        return frozenset()
    winners = result.get("winners")
    if isinstance(winners, list):
        return frozenset(w for w in winners if isinstance(w, int))
    winner = result.get("winner")
    return frozenset((winner,)) if isinstance(winner, int) else frozenset()


def finish_places(record: HandRecord) -> tuple[int, ...]:
    """Each seat's place (1 = best): winners first, then by payment, more is better.

    Equal keys share a place and the next place skips (1, 2, 2 / 1, 1, 3), as players
    count places."""
    winners = _winners(record.result)
    keys = [(seat not in winners, -paid) for seat, paid in enumerate(record.payments)]
    return tuple(1 + sum(other < key for other in keys) for key in keys)


def unrated_reason(record: HandRecord) -> str | None:
    """Why ``record`` is not rated, or None when it is: the one rule for rateable hands.

    Rated: a ranked table's decided hand, no practice, not private, not voided, no bot,
    two or more distinct players with a payment each, and an order of finish (a drawn
    hand where nobody won or paid says nothing about skill)."""
    if not record.ranked:
        return "not a ranked table"
    if record.practice:
        return "a practice hand"
    if record.private:
        return "a private table"
    if record.voided:
        return "a voided hand"
    if any(p.is_bot for p in record.players):
        return "a bot played"
    if len(record.players) < 2:
        return "fewer than two players"
    if len({p.user_id for p in record.players}) != len(record.players):
        return "one player held two seats"
    if len(record.payments) != len(record.players):
        return "payments do not match the seats"
    if len(set(finish_places(record))) == 1:
        return "no order of finish (a drawn hand)"
    return None


def is_rateable(record: HandRecord) -> bool:
    return unrated_reason(record) is None


def rate_hand(current: Mapping[str, Rating], record: HandRecord) -> tuple[RatingChange, ...]:
    """Rate one hand: each seat's change, in seat order, from ``current`` (user id ->
    that player's rating in ``record.game``; a missing player is a newcomer).

    Raises :class:`NotRateable` for a record :func:`unrated_reason` refuses, or one
    already applied to a player's current rating (their ``last_hand_id``)."""
    reason = unrated_reason(record)
    if reason is None and any(
        current[p.user_id].last_hand_id == record.hand_id
        for p in record.players
        if p.user_id in current
    ):
        reason = "already applied to these ratings"
    if reason is not None:
        raise NotRateable(record.hand_id, reason)
    before = [current.get(p.user_id, Rating()) for p in record.players]
    places = finish_places(record)
    teams = [[_MODEL.rating(mu=r.mu, sigma=r.sigma)] for r in before]
    # limit_sigma: tau's added uncertainty never leaves sigma above where it was, so a
    # winner's shown number cannot fall (nor a loser's rise from tau alone).
    rated = _MODEL.rate(teams, ranks=[float(p) for p in places], limit_sigma=True)
    changes = []
    for player, old, place, (new,) in zip(record.players, before, places, rated, strict=True):
        shown_before = shown_rating(old)
        after = Rating(
            mu=new.mu,
            sigma=new.sigma,
            hands=old.hands + 1,
            last_change=0,
            last_hand_id=record.hand_id,
        )
        shown = shown_rating(after)
        after = msgspec.structs.replace(after, last_change=shown - shown_before)
        changes.append(
            RatingChange(
                user_id=player.user_id,
                game=record.game,
                hand_id=record.hand_id,
                place=place,
                before=old,
                after=after,
                shown=shown,
                change=shown - shown_before,
                tier=tier(shown),
            )
        )
    return tuple(changes)


__all__ = [
    "MU",
    "SIGMA",
    "TIERS",
    "NotRateable",
    "Rating",
    "RatingChange",
    "finish_places",
    "is_rateable",
    "rate_hand",
    "shown_rating",
    "tier",
    "unrated_reason",
]
