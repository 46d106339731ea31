"""Filipino Mahjong in the rules help: the words for its options and rulesets, and its
payout tables built from the constants the scoring pays by. Read by
:mod:`kalaro.games.rulesdata`.
"""

from __future__ import annotations

from typing import Any

from kalaro.games.mahjong.options import (
    CATEGORIES,
    KANG_BONUS,
    OTHER_PLAYER,
    POINT_NAMES,
    SPECIAL_HANDS,
    Options,
    possible_category,
)
from kalaro.games.mahjong.scoring import KALARO_PAYMENTS

TITLE = "Filipino Mahjong"
RULESET_LABELS = {"kalaro": "KaLaro", "joker": "Joker", "pinoy": "Pinoy"}
# option field -> (label, help, what None means)
FIELDS: dict[str, tuple[str, str, str | None]] = {
    "call_seconds": ("Claim window (s)", "Seconds to answer a discard.", None),
    "cap_units": ("Most one loser pays", "Units × bet; also the hold.", None),
    "jokers": ("Jokers", "Three tiles of a revealed kind are wild.", None),
    "seven_pairs": ("Seven Pairs", "7 pairs + 1 set wins.", None),
    "eskalera": ("Eskalera", "1-2-3, 4-5-6, 7-8-9 of one suit wins.", None),
    "secret_kangs": ("Secret kangs", "Concealed kangs stay face down.", None),
    "passed_win_blocks": (
        "Passing a win blocks wins",
        "Until your next draw, after passing a winning tile.",
        None,
    ),
    "robbing_the_kang": ("Robbing the kang", "Win on a tile added to a pong.", None),
    "special_hands": ("Special hands", "Ambisyon add their points (needs points).", None),
    "turn_seconds": ("Turn clock (s)", "Seconds per turn; empty: no clock.", "off"),
    "points": (
        "Points table",
        "Pay by win category; off: the KaLaro payments.",
        "KaLaro payments",
    ),
    "away_after_timeouts": (
        "Time-outs before away",
        "Time-outs in a row that mark a player away.",
        None,
    ),
}
CHOICES: dict[str, str] = {}  # no enum options


def payouts(options: Options) -> dict[str, Any]:
    """The payments (or the points table) ``options`` pays by."""
    cap = f"A loser pays at most {options.cap_units} units in a hand."
    if options.points is None:
        p = KALARO_PAYMENTS
        rows = [
            [
                "Win on a discard",
                f"the discarder {p['discarder']}, each other player {p['other_loser']}",
            ],
            ["Self-draw", f"{p['self_draw']} from each player"],
            ["Each kang of the winner", f"+{p['kang']} from each player"],
        ]
        return {"caption": "Payments, × bet", "head": ["", "units"], "rows": rows, "notes": [cap]}
    table = options.points.table()
    names = [n for n in CATEGORIES if possible_category(n, options)]
    names += [OTHER_PLAYER, KANG_BONUS]
    if options.special_hands:
        names += list(SPECIAL_HANDS)
    assert set(names) <= set(POINT_NAMES)
    return {
        "caption": "Points by win category, × bet",
        "head": ["category", "units"],
        "rows": [[name, str(table[name])] for name in names],
        "notes": [
            "A win by Discard is paid by the discarder (each other player pays the "
            "'Each other player' entry); a win by Draw or a Bisaklat by every player.",
            cap,
        ],
    }
