"""Ka Wu Xing in the rules help: the words for its options and ruleset, and its score
items and kong scores built from the constants the scoring pays by. Read by
:mod:`kalaro.games.rulesdata`.
"""

from __future__ import annotations

from typing import Any

from kalaro.games.kawuxing.items import BIG_ITEM, ITEM_MULTIPLIERS
from kalaro.games.kawuxing.options import Options
from kalaro.games.kawuxing.scoring import KONG_UNITS, SHOW_FACTOR

TITLE = "Ka Wu Xing"
RULESET_LABELS = {"kawuxing": "Ka Wu Xing"}
# option field -> (label, help, what None means)
FIELDS: dict[str, tuple[str, str, str | None]] = {
    "call_seconds": ("Claim window (s)", "Seconds to answer a discard.", None),
    "cap": ("Score cap (×)", "Most a win's items multiply to; empty: no cap.", "no cap"),
    "kong_on_kong": (
        "Kong on kong",
        "A kong on your own kong's replacement scores double.",
        None,
    ),
    "loss_limit": (
        "Loss limit (units)",
        "Most one loser pays in a hand; empty: the computed bound.",
        "computed",
    ),
    "turn_seconds": ("Turn clock (s)", "Seconds per turn; empty: no clock.", "off"),
    "away_after_timeouts": (
        "Time-outs before away",
        "Time-outs in a row that mark a player away.",
        None,
    ),
}
CHOICES: dict[str, str] = {}  # no enum options

_ITEM_LABELS = {
    "all_triplets": "All Triplets",
    "exposed_tile_hog": "Exposed Tile Hog",
    "concealed_tile_hog": "Concealed Tile Hog",
    "seven_pairs": "Seven Pairs",
    "seven_pairs_two_identical": "Seven Pairs with 2 Identical Pairs",
    "seven_pairs_four_identical": "Seven Pairs with 4 Identical Pairs",
    "big_three_dragons": "Big 3 Dragons",
    "small_three_dragons": "Small 3 Dragons",
    "win_on_kong": "Win on Kong (after a visible kong)",
    "fire_on_kong": "Fire on Kong (after a visible kong)",
    "rob_a_kong": "Rob a Kong",
    "pure_one_suit": "Pure One Suit",
    "one_in_hand": "One in Hand",
    "ka_wu_xing": "Ka Wu Xing (win on the closed 5)",
    "win_on_last_tile": "Win on Last Tile",
}


def payouts(options: Options) -> dict[str, Any]:
    """The score items, the kong scores and how ``options`` caps them."""
    rows = [[_ITEM_LABELS[name], f"×{units}"] for name, units in ITEM_MULTIPLIERS.items()]
    kongs = [
        ["Exposed kong (from the discarder)", str(KONG_UNITS["exposed"])],
        ["Concealed kong (from each other player)", str(KONG_UNITS["concealed"])],
        ["Extended kong (from each other player)", str(KONG_UNITS["extended"])],
    ]
    cap = (
        f"Items multiply; the product is capped at ×{options.cap} "
        f"(×{ITEM_MULTIPLIERS[BIG_ITEM]} for {_ITEM_LABELS[BIG_ITEM]})."
        if options.cap is not None
        else "Items multiply; no cap."
    )
    return {
        "caption": "Score items (they multiply, base ×1)",
        "head": ["item", "×"],
        "rows": rows,
        "kongs": {"caption": "Kong scores, units × bet", "head": ["kong", "units"], "rows": kongs},
        "notes": [
            cap,
            "Win on a discard: the discarder pays the multiplier; self-draw: each other "
            "player pays it. A chicken hand (no item) wins only by self-draw.",
            f"Show Hand: × {SHOW_FACTOR} for a shown winner and for a shown loser, after "
            "the cap. Kong scores are paid also in a drawn hand, never doubled.",
        ],
    }
