"""Shanten by cuts: how far a hand of tiles is from sets and the eyes (shared by the bots).

A hand is cut group by group (a suit of 9 kinds, where runs exist, or a group of
honours) into sets, partial sets and eyes; a group's *front* is the set of its cuts
that no other cut beats in every count. Fronts are interned as small ints so that
folding two groups' fronts and scoring a front for a number of sets are dictionary
look-ups on int keys: a bot tries hundreds of one-tile changes per decision. The memo
tables (``group_ids``, ``folds``, ``values``) are public so a bot's hot loop can read
them directly; they only hold hand shapes, bounded in number, and are cleared past
:data:`MEMO_LIMIT`.
"""

from __future__ import annotations

from collections.abc import Iterable

Cut = tuple[int, int, int]  # (sets, partial sets, eyes)


def pareto(cuts: Iterable[Cut]) -> tuple[Cut, ...]:
    """The cuts no other cut beats in every count (shanten only improves with each)."""
    unique = set(cuts)
    return tuple(
        sorted(
            c
            for c in unique
            if not any(o != c and o[0] >= c[0] and o[1] >= c[1] and o[2] >= c[2] for o in unique)
        )
    )


# Memos (see the module docstring): a group's counts -> its interned front, folds of two
# fronts, and a front's shanten per number of sets.
MEMO_LIMIT = 500_000
_front_memo: dict[tuple[int, ...], tuple[Cut, ...]] = {}
fronts: list[tuple[Cut, ...]] = []
_front_ids: dict[tuple[Cut, ...], int] = {}
group_ids: dict[tuple[int, ...], int] = {}
folds: dict[tuple[int, int], int] = {}
values: dict[tuple[int, int], int] = {}


def group_front(counts: tuple[int, ...]) -> tuple[Cut, ...]:
    """The best cuts of one group's counts (9 counts: a suit, where chows exist).

    The lowest tile present is in a pong, a chow, the eyes, a partial set, or alone;
    each choice recurses on what is left, memoised by the remaining counts.
    """
    known = _front_memo.get(counts)
    if known is not None:
        return known
    i = next((k for k, c in enumerate(counts) if c), None)
    if i is None:
        return ((0, 0, 0),)
    n = len(counts)
    runs = n == 9
    out: list[Cut] = []

    def sub(taken: dict[int, int], dm: int, dt: int, dh: int) -> None:
        rest = list(counts)
        for k, c in taken.items():
            rest[k] -= c
        for m, t, h in group_front(tuple(rest)):
            if h + dh <= 1:
                out.append((m + dm, t + dt, h + dh))

    c = counts[i]
    if c >= 3:
        sub({i: 3}, 1, 0, 0)
    if c >= 2:
        sub({i: 2}, 0, 0, 1)
        sub({i: 2}, 0, 1, 0)
    if runs:
        if i + 2 < n and counts[i + 1] and counts[i + 2]:
            sub({i: 1, i + 1: 1, i + 2: 1}, 1, 0, 0)
        if i + 1 < n and counts[i + 1]:
            sub({i: 1, i + 1: 1}, 0, 1, 0)
        if i + 2 < n and counts[i + 2]:
            sub({i: 1, i + 2: 1}, 0, 1, 0)
    sub({i: 1}, 0, 0, 0)
    if len(_front_memo) >= MEMO_LIMIT:
        _front_memo.clear()
    best = _front_memo[counts] = pareto(out)
    return best


def _intern(front: tuple[Cut, ...]) -> int:
    known = _front_ids.get(front)
    if known is None:
        known = _front_ids[front] = len(fronts)
        fronts.append(front)
    return known


def group_id(key: tuple[int, ...]) -> int:
    """The interned front of one group's counts."""
    known = group_ids.get(key)
    if known is None:
        if len(group_ids) >= MEMO_LIMIT:
            group_ids.clear()
        known = group_ids[key] = _intern(group_front(key))
    return known


def fold(a: int, b: int) -> int:
    """The best cuts of two groups together (at most one pair of eyes in all)."""
    known = folds.get((a, b))
    if known is None:
        x, y = fronts[a], fronts[b]
        front = pareto(
            (p[0] + q[0], p[1] + q[1], p[2] + q[2]) for p in x for q in y if p[2] + q[2] <= 1
        )
        if len(folds) >= MEMO_LIMIT:
            folds.clear()
        known = folds[(a, b)] = _intern(front)
    return known


def value(front: int, sets: int) -> int:
    """Shanten of a whole hand's best cuts when it must make ``sets`` sets."""
    known = values.get((front, sets))
    if known is None:
        best = max(2 * m + max(0, min(t, sets - m)) + h for m, t, h in fronts[front])
        if len(values) >= MEMO_LIMIT:
            values.clear()
        known = values[(front, sets)] = 2 * sets - best
    return known
