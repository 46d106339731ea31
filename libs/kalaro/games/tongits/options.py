"""Tongits options: one field per option in RULES.md's table, and the two rulesets.

A ruleset is a named set of option values (``kalaro``: the app's how-to-play page,
``classic``: the rules article). A host picks one and may change single options (house
rules); the full options are recorded with every hand.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

DeadwoodMode = Literal["hand", "outside_melds"]
DrawTie = Literal["caller", "fighter"]
StockOutTie = Literal["split", "last_drawer"]
PaymentTable = Literal["table_a", "table_b"]


class Options(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
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


#: Table B's worst case that the cap is sized for: a Tongits (or challenged draw) win
#: of 3, four aces, a burned loser, and (when secret sets are played) one secret set.
_TABLE_B_BASE_MAX = 3
_TABLE_B_ACES_MAX = 4
_TABLE_B_SECRET_SET = 3
_BURNED_SURCHARGE = 1
_TABLE_A_MAX = 4  # Tongits against a burned loser


def max_loss_units(options: Options) -> int:
    """The most one player can lose in one hand, in units of the bet.

    The engine caps every loser's payment at this (it is the hold placed before the
    deal). Table A: 4. Table B: 3 + 4 aces + 1 burned = 8, plus 3 (one secret
    four-card set) when secret sets are played = 11; the rarer hands that would owe more
    (two or more secret sets) are capped.
    """
    if options.payments == "table_a":
        return _TABLE_A_MAX
    secret = _TABLE_B_SECRET_SET if options.secret_sets else 0
    return _TABLE_B_BASE_MAX + _TABLE_B_ACES_MAX + _BURNED_SURCHARGE + secret
