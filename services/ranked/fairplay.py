"""Fair-play signals for admins: pure functions over summaries of played hands.

Three signals, each a :class:`Finding` that lists the hands as evidence. None of them
proves cheating; they say where an admin should look.

``sit_together``: a pair of accounts shares far more tables than chance allows. Within
one game, with ``T`` tables in the window and accounts that sat at ``t_a`` and ``t_b``
of them, random seating puts ``b`` at any one of ``a``'s tables with probability
``t_b / T``, so the number of shared tables is about Binomial(``t_a``, ``t_b / T``),
expected ``E = t_a * t_b / T``. A pair is flagged when it shared at least
``min_tables`` tables, at least ``min_ratio`` times ``E``, and the binomial tail
P(X >= observed) is below ``max_p`` divided by the number of pairs seen (a Bonferroni
correction: thousands of pairs are tested at once). Tables, not hands, are counted:
players who stay at one table for many hands met once.

``one_way_credit``: credit between a pair flows mostly one way (chip dumping). In each
hand the losers' payments go to the winners in proportion to what each won; summed over
the pair's hands, flagged when they shared ``min_hands`` hands, at least ``min_credits``
moved between them and one direction carries ``min_share`` of it.

``shared_access``: accounts that signed in from one address (in the window the caller
chose, 24 h for the queue) or one device.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from itertools import combinations

import msgspec

from kalaro.proto.engine import HandRecord


class PlayedHand(msgspec.Struct, frozen=True, kw_only=True):
    """What fair play needs of one hand (from its record): who sat, who paid what."""

    hand_id: str
    table_id: str
    game: str
    players: tuple[str, ...]  # user id per seat
    payments: tuple[int, ...]  # credits per seat (+ won, - paid)


def played_hand(record: HandRecord) -> PlayedHand:
    """The part of a hand's record that fair play reads."""
    return PlayedHand(
        hand_id=record.hand_id,
        table_id=record.table_id,
        game=record.game,
        players=tuple(p.user_id for p in record.players),
        payments=record.payments,
    )


class AccountAccess(msgspec.Struct, frozen=True, kw_only=True):
    """Where one account was seen: sign-in addresses and device ids."""

    addresses: frozenset[str] = frozenset()
    devices: frozenset[str] = frozenset()


class Finding(msgspec.Struct, frozen=True, kw_only=True):
    kind: str  # "sit_together" | "one_way_credit" | "shared_address" | "shared_device"
    accounts: tuple[str, ...]  # sorted
    score: float  # larger is more suspicious, comparable within one kind
    detail: str  # one line for the admin page
    hand_ids: tuple[str, ...]  # the evidence


def _binomial_tail(n: int, p: float, k: int) -> float:
    """P(X >= k) for X ~ Binomial(n, p), summed in log space (n is a few thousand)."""
    if k <= 0:
        return 1.0
    if k > n or p <= 0.0:
        return 0.0
    if p >= 1.0:
        return 1.0
    log_p, log_q = math.log(p), math.log1p(-p)
    total = 0.0
    for x in range(k, n + 1):
        log_pmf = (
            math.lgamma(n + 1)
            - math.lgamma(x + 1)
            - math.lgamma(n - x + 1)
            + x * log_p
            + (n - x) * log_q
        )
        total += math.exp(log_pmf)
    return min(1.0, total)


def _pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)


def sit_together(
    hands: Iterable[PlayedHand],
    *,
    min_tables: int = 6,
    min_ratio: float = 4.0,
    max_p: float = 0.01,
) -> list[Finding]:
    """Pairs sharing far more tables than random seating would (module docstring)."""
    findings: list[Finding] = []
    by_game: dict[str, list[PlayedHand]] = defaultdict(list)
    for hand in hands:
        by_game[hand.game].append(hand)
    for game, game_hands in sorted(by_game.items()):
        tables: dict[str, set[str]] = defaultdict(set)
        evidence: dict[tuple[str, str], list[str]] = defaultdict(list)
        for hand in game_hands:
            tables[hand.table_id].update(hand.players)
            for a, b in combinations(sorted(set(hand.players)), 2):
                evidence[(a, b)].append(hand.hand_id)
        at_tables: dict[str, int] = defaultdict(int)
        shared: dict[tuple[str, str], int] = defaultdict(int)
        for players in tables.values():
            for player in players:
                at_tables[player] += 1
            for pair in combinations(sorted(players), 2):
                shared[pair] += 1
        total = len(tables)
        threshold = max_p / max(1, len(shared))
        for (a, b), together in sorted(shared.items()):
            if together < min_tables:
                continue
            fewer, more = sorted((at_tables[a], at_tables[b]))
            expected = fewer * more / total
            if together < min_ratio * expected:
                continue
            tail = _binomial_tail(fewer, more / total, together)
            if tail > threshold:
                continue
            findings.append(
                Finding(
                    kind="sit_together",
                    accounts=(a, b),
                    score=together / expected,
                    detail=(
                        f"{game}: {together} tables together, {expected:.1f} expected "
                        f"by chance (P = {tail:.1e})"
                    ),
                    hand_ids=tuple(evidence[(a, b)]),
                )
            )
    return findings


def one_way_credit(
    hands: Iterable[PlayedHand],
    *,
    min_hands: int = 10,
    min_credits: int = 100,
    min_share: float = 0.9,
) -> list[Finding]:
    """Pairs between whom credit flows mostly one way (module docstring)."""
    flow: dict[tuple[str, str], float] = defaultdict(float)  # (payer, payee) -> credits
    evidence: dict[tuple[str, str], list[str]] = defaultdict(list)
    for hand in hands:
        for pair in combinations(sorted(set(hand.players)), 2):
            evidence[pair].append(hand.hand_id)
        won = sum(p for p in hand.payments if p > 0)
        if won <= 0:
            continue
        for payer, paid in zip(hand.players, hand.payments, strict=True):
            if paid >= 0:
                continue
            for payee, gain in zip(hand.players, hand.payments, strict=True):
                if gain > 0 and payee != payer:
                    flow[(payer, payee)] += -paid * gain / won
    findings: list[Finding] = []
    for (a, b), hand_ids in sorted(evidence.items()):
        if len(hand_ids) < min_hands:
            continue
        a_to_b, b_to_a = flow[(a, b)], flow[(b, a)]
        moved = a_to_b + b_to_a
        if moved < min_credits:
            continue
        payer, payee, main = (a, b, a_to_b) if a_to_b >= b_to_a else (b, a, b_to_a)
        share = main / moved
        if share < min_share:
            continue
        findings.append(
            Finding(
                kind="one_way_credit",
                accounts=(a, b),
                score=main - (moved - main),
                detail=(
                    f"{payer} -> {payee}: {main:.0f} of {moved:.0f} credits moved between "
                    f"them ({share:.0%}) over {len(hand_ids)} hands"
                ),
                hand_ids=tuple(hand_ids),
            )
        )
    return findings


def shared_access(
    access: Mapping[str, AccountAccess], hands: Iterable[PlayedHand] = ()
) -> list[Finding]:
    """Accounts seen at one address or on one device; the evidence is the hands where
    two or more of them sat together."""
    holders: dict[tuple[str, str], set[str]] = defaultdict(set)
    for user, seen in access.items():
        for address in seen.addresses:
            holders[("shared_address", address)].add(user)
        for device in seen.devices:
            holders[("shared_device", device)].add(user)
    groups = {key: users for key, users in holders.items() if len(users) > 1}
    groups_of: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for key, users in groups.items():
        for user in users:
            groups_of[user].append(key)
    together: dict[tuple[str, str], list[str]] = defaultdict(list)
    for hand in hands:
        seen_keys: dict[tuple[str, str], int] = defaultdict(int)
        for player in set(hand.players):
            for key in groups_of.get(player, ()):
                seen_keys[key] += 1
        for key, count in seen_keys.items():
            if count > 1:
                together[key].append(hand.hand_id)
    findings = []
    for (kind, value), users in sorted(groups.items()):
        hand_ids = together[(kind, value)]
        findings.append(
            Finding(
                kind=kind,
                accounts=tuple(sorted(users)),
                score=float(len(hand_ids)),
                detail=f"{len(users)} accounts on {value}; {len(hand_ids)} hands together",
                hand_ids=tuple(hand_ids),
            )
        )
    return findings


def all_findings(hands: Iterable[PlayedHand], access: Mapping[str, AccountAccess]) -> list[Finding]:
    """Every signal with its default thresholds, most suspicious first within each kind."""
    played = list(hands)
    found = [*sit_together(played), *one_way_credit(played), *shared_access(access, played)]
    return sorted(found, key=lambda f: (f.kind, -f.score, f.accounts))


__all__ = [
    "AccountAccess",
    "Finding",
    "PlayedHand",
    "all_findings",
    "one_way_credit",
    "played_hand",
    "shared_access",
    "sit_together",
]
