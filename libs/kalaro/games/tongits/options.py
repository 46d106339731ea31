"""Tongits options: one field per option in RULES.md's table, and the two rulesets.

A ruleset is a named set of option values (``kalaro``: the app's how-to-play page,
``classic``: the rules article). A host picks one and may change single options (house
rules); the full options are recorded with every hand.
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

import msgspec

DeadwoodMode = Literal["hand", "outside_melds"]
DrawTie = Literal["caller", "fighter"]
StockOutTie = Literal["split", "last_drawer"]
PaymentTable = Literal["table_a", "table_b"]


class Options(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """The options of one Tongits table.

    - ``deadwood``: ``"hand"`` counts every card left in hand; ``"outside_melds"`` only
      the cards outside the best partition of the hand into melds.
    - ``draw_tie``: who wins a tie between the caller and a fighter (two tied fighters:
      the one first in turn order after the caller, in both modes).
    - ``stock_out_tie``: ``"split"`` shares each loser's payment among the tied winners;
      ``"last_drawer"`` gives the win to the last drawer if tied, else to the tied player
      first in turn order after them.
    - ``sapaw_blocks_call``: a Draw call is blocked if anyone laid off on your melds since
      your previous turn, or you laid off on your own meld in your previous turn.
    - ``secret_sets``: a four-card set completed without the discard may be exposed face
      down.
    - ``payments``: payment table A (``kalaro``) or B (``classic``).
    - ``fight_seconds``: how long each opponent has to answer a Draw call.
    - ``turn_seconds``: the clock for a player's whole turn (draw or take, melds,
      lay-offs, discard); ``None`` turns it off. When it runs out the turn is auto-played
      (see :mod:`~kalaro.games.tongits.engine`).
    - ``away_after_timeouts``: consecutive time-outs after which a seat is marked away
      (its clock then runs out at once until it comes back).
    """

    ruleset: str = "kalaro"
    deadwood: DeadwoodMode = "hand"
    draw_tie: DrawTie = "caller"
    stock_out_tie: StockOutTie = "split"
    sapaw_blocks_call: bool = False
    secret_sets: bool = False
    payments: PaymentTable = "table_a"
    fight_seconds: Annotated[int, msgspec.Meta(ge=1, le=600)] = 20
    # new fields go last, with defaults, so stored hands still decode
    turn_seconds: Annotated[int, msgspec.Meta(ge=1, le=600)] | None = 30
    away_after_timeouts: Annotated[int, msgspec.Meta(ge=1, le=10)] = 2


RULESETS: dict[str, Options] = {
    "kalaro": Options(),
    "classic": Options(
        ruleset="classic",
        deadwood="outside_melds",
        draw_tie="fighter",
        stock_out_tie="last_drawer",
        sapaw_blocks_call=True,
        secret_sets=True,
        payments="table_b",
    ),
}


def options_for(ruleset: str, **overrides: Any) -> Options:
    """The preset options of ``ruleset`` with the host's ``overrides`` applied.

    Raises ``ValueError`` for an unknown ruleset, an unknown option or a bad value.
    """
    try:
        preset = RULESETS[ruleset]
    except KeyError:
        known = ", ".join(sorted(RULESETS))
        raise ValueError(f"unknown Tongits ruleset {ruleset!r} (known: {known})") from None
    fields = set(Options.__struct_fields__) - {"ruleset"}
    unknown = sorted(set(overrides) - fields)
    if unknown:
        raise ValueError(
            f"unknown Tongits option(s) {', '.join(unknown)} (known: {', '.join(sorted(fields))})"
        )
    merged = msgspec.to_builtins(preset) | overrides
    try:
        # strict conversion checks every value against the field's type and limits
        return msgspec.convert(merged, Options)
    except msgspec.ValidationError as exc:
        raise ValueError(f"bad Tongits option value: {exc}") from None


#: The most cards one player ever holds, counting their own melds: the dealer's 13 at the
#: deal; every later turn adds one card (a draw, or the discard taken into a meld) and
#: then discards one, so nobody ever holds more (a Tongits without a final discard ends
#: with 12 + 1 = 13 too). Cards others lay off on your melds are not yours for Table B.
MAX_CARDS_HELD = 13
_SET_SIZE = 4  # a secret set is a four-card set
_ACES = 4

#: Table A (``kalaro``): what each loser pays, × bet, by ending and the loser's part
#: (a Draw call: the loser's answer; a burned loser always pays the ``burned`` entry).
TABLE_A: Final[dict[str, dict[str, int]]] = {
    "tongits": {"not_burned": 2, "burned": 4},
    "stock_out": {"not_burned": 1, "burned": 2},
    "draw": {"caller": 2, "fight": 2, "fold": 1, "burned": 2},
}
#: Table B (``classic``): each loser pays ``base`` (``tongits_or_challenged`` instead
#: for a Tongits win or a challenged Draw won), plus the winner's bonuses and ``burned``.
TABLE_B: Final[dict[str, int]] = {
    "base": 1,
    "tongits_or_challenged": 3,
    "per_secret_set": 3,
    "per_ace": 1,
    "burned": 1,
}


def max_secret_sets(options: Options) -> int:
    """The most secret four-card sets a winner can hold: 13 // 4 = 3 when played."""
    return MAX_CARDS_HELD // _SET_SIZE if options.secret_sets else 0


def max_loss_units(options: Options) -> int:
    """The most one player can lose in one hand, in units of the bet: the hold placed
    before the deal and the credits a seat needs to sit.

    Table A: 4 (Tongits against a burned loser). Table B, its true worst case: a Tongits
    win (3) with the most secret sets a hand can hold (3 × 3, e.g. the dealer's
    ``AS AH AD AC 2S 2H 2D 2C 3S 3H 3D 3C`` all face down, the 13th card discarded),
    so all four aces counted (4), against a burned loser (1): 17 when secret sets are
    played, 8 without. Table B never adds up to more, so the engine's guard against
    charging more than the hold never cuts what the table says.
    """
    if options.payments == "table_a":
        return max(units for row in TABLE_A.values() for units in row.values())
    b = TABLE_B
    sets = b["per_secret_set"] * max_secret_sets(options)
    return b["tongits_or_challenged"] + sets + b["per_ace"] * _ACES + b["burned"]
