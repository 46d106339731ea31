"""The options of a Ka Wu Xing table: the ``kawuxing`` ruleset's defaults plus house rules.

Ka Wu Xing has one ruleset (``RULES.md``). The platform's default ruleset name,
``kalaro``, is accepted as another name for it, so a table created without naming a
ruleset gets Ka Wu Xing as written; the options record ``ruleset="kawuxing"`` either way.

The hold a seat needs (``max_loss_units``) follows from these options; it is computed in
:mod:`kalaro.games.kawuxing.scoring`, next to the payments it bounds.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec


class Options(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Everything that changes how a hand plays or pays. Recorded with every hand."""

    ruleset: str = "kawuxing"
    #: Seconds every seat with a claim option gets to answer a discard (or a robbable kong).
    call_seconds: Annotated[int, msgspec.Meta(ge=1, le=120)] = 10
    #: Most a win's score items multiply to (the seed's "upper bound of one win");
    #: ``None``: no cap. Seven pairs with four identical pairs is never cut below ×16.
    cap: Annotated[int, msgspec.Meta(ge=1, le=1024)] | None = 8
    #: Kong on kong: a kong declared on the replacement tile of one's own kong scores double.
    kong_on_kong: bool = False
    #: House rule: most one loser pays in one hand, which is then also the hold. ``None``:
    #: the bound computed from the other options (nobody can lose more anyway).
    loss_limit: Annotated[int, msgspec.Meta(ge=1, le=100_000)] | None = None
    #: Seconds for a whole turn (draw and discard), auto-played on time-out; None = none.
    turn_seconds: Annotated[int, msgspec.Meta(ge=1, le=600)] | None = 30
    #: Time-outs in a row after which a seat is marked away (its timers then run 0 s).
    away_after_timeouts: Annotated[int, msgspec.Meta(ge=1, le=10)] = 2


RULESETS: dict[str, Options] = {"kawuxing": Options()}
#: Other names a table may give for a ruleset.
_ALIASES: dict[str, str] = {"kalaro": "kawuxing"}


def options_for(ruleset: str, **overrides: Any) -> Options:
    """The ruleset's options with the host's house rules applied.

    ``ValueError`` for an unknown ruleset or option, or a bad value.
    """
    try:
        preset = RULESETS[_ALIASES.get(ruleset, ruleset)]
    except KeyError:
        known = ", ".join(sorted(RULESETS))
        raise ValueError(f"unknown Ka Wu Xing ruleset {ruleset!r} (known: {known})") from None
    fields = set(Options.__struct_fields__) - {"ruleset"}
    unknown = sorted(set(overrides) - fields)
    if unknown:
        raise ValueError(
            f"unknown Ka Wu Xing option(s) {', '.join(unknown)} "
            f"(known: {', '.join(sorted(fields))})"
        )
    try:
        # Strict conversion checks every value against its field's type and limits.
        return msgspec.convert(msgspec.to_builtins(preset) | overrides, Options)
    except msgspec.ValidationError as exc:
        raise ValueError(f"bad Ka Wu Xing option value: {exc}") from None
