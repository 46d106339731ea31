"""Tongits in the rules help: the words for its options and rulesets, and its payout
tables built from the constants the scoring pays by. Read by :mod:`kalaro.games.rulesdata`.
"""

from __future__ import annotations

from typing import Any

from kalaro.games.tongits.options import TABLE_A, TABLE_B, Options, max_secret_sets

TITLE = "Tongits"
RULESET_LABELS = {"kalaro": "KaLaro", "classic": "Classic"}
# option field -> (label, help, what None means)
FIELDS: dict[str, tuple[str, str, str | None]] = {
    "deadwood": ("Deadwood counts", "Which cards left in hand count at the end.", None),
    "draw_tie": ("Draw call tie", "Who wins a tie between the caller and a fighter.", None),
    "stock_out_tie": ("Stock-out tie", "How a tie at stock out is settled.", None),
    "sapaw_blocks_call": (
        "Sapaw blocks a Draw call",
        "A lay-off on your melds since your last turn blocks your Draw call.",
        None,
    ),
    "secret_sets": (
        "Secret four-card sets",
        "A four-card set may be exposed face down.",
        None,
    ),
    "payments": ("Payments", "Which payout table the table pays by.", None),
    "fight_seconds": ("Fight/Fold answer time (s)", "Seconds to answer a Draw call.", None),
    "turn_seconds": ("Turn clock (s)", "Seconds per turn; empty: no clock.", "off"),
    "away_after_timeouts": (
        "Time-outs before away",
        "Time-outs in a row that mark a player away.",
        None,
    ),
}
# an enum option's value -> its label
CHOICES: dict[str, str] = {
    "hand": "every card left in hand",
    "outside_melds": "only cards outside melds",
    "caller": "the caller wins",
    "fighter": "the fighter wins",
    "split": "tied winners split",
    "last_drawer": "the last drawer, else next in turn",
    "table_a": "table A",
    "table_b": "table B",
}


def payouts(options: Options) -> dict[str, Any]:
    """The payout table ``options`` pays by."""
    if options.payments == "table_a":
        a = TABLE_A
        draw = a["draw"]
        return {
            "caption": "Table A: each loser pays the winner, × bet",
            "head": ["ending", "loser not burned", "loser burned"],
            "rows": [
                ["Tongits", str(a["tongits"]["not_burned"]), str(a["tongits"]["burned"])],
                ["Stock out", str(a["stock_out"]["not_burned"]), str(a["stock_out"]["burned"])],
                [
                    "Draw won by the caller",
                    f"fighter {draw['fight']}, folder {draw['fold']}",
                    str(draw["burned"]),
                ],
                [
                    "Draw won by a fighter",
                    f"caller {draw['caller']}, other fighter {draw['fight']}, "
                    f"folder {draw['fold']}",
                    str(draw["burned"]),
                ],
            ],
        }
    b = TABLE_B
    rows = [
        ["Base (stock out, or a Draw call nobody fought)", str(b["base"])],
        [
            "Tongits, or a fought Draw call won (instead of the base)",
            str(b["tongits_or_challenged"]),
        ],
        ["Each ace in the winner's hand or own melds", f"+{b['per_ace']}"],
        ["The loser is burned", f"+{b['burned']}"],
    ]
    if max_secret_sets(options):
        rows.insert(2, ["Each secret four-card set of the winner's", f"+{b['per_secret_set']}"])
    return {
        "caption": "Table B: each loser pays the winner, × bet",
        "head": ["", "units"],
        "rows": rows,
    }
