"""The options of a Filipino Mahjong table: a ruleset's defaults plus the host's changes.

Only the ``kalaro`` ruleset is implemented. The toggles the ``joker`` and ``pinoy``
rulesets will switch on already exist as fields (off), so tables, lobby records and
hand histories keep one shape when they arrive; turning one on today is refused with a
clear "not yet supported" error rather than silently ignored.
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec


class Options(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Everything that changes how a hand plays or pays. Recorded with every hand."""

    ruleset: str = "kalaro"
    #: Seconds every seat with a claim option gets to answer a discard.
    call_seconds: Annotated[int, msgspec.Meta(ge=1, le=120)] = 10
    #: Most units one loser pays in one hand; also the hold and seat requirement.
    cap_units: Annotated[int, msgspec.Meta(ge=1, le=100)] = 10
    # -- not yet supported (``joker`` / ``pinoy`` rulesets); must stay off ----------
    #: A revealed indicator makes the other three tiles of its kind wild.
    jokers: bool = False
    #: Seven pairs + one set as a winning pattern.
    seven_pairs: bool = False
    #: Eskalera (1-2-3, 4-5-6, 7-8-9 of one suit) as a winning pattern.
    eskalera: bool = False
    #: Concealed kangs stay face down until someone wins.
    secret_kangs: bool = False
    #: Passing a winning discard blocks wins on discards until one's next draw.
    passed_win_blocks: bool = False
    #: A player may win on the tile another adds to an exposed pong.
    robbing_the_kang: bool = False
    #: Special hands (ambisyon) from a documented list.
    special_hands: bool = False
    #: Per-turn timer with auto-play on time-out; ``None`` means no turn timer.
    turn_seconds: Annotated[int, msgspec.Meta(ge=1, le=600)] | None = None


#: The toggles of later rulesets, with the only value accepted today.
_NOT_YET_SUPPORTED: dict[str, object] = {
    "jokers": False,
    "seven_pairs": False,
    "eskalera": False,
    "secret_kangs": False,
    "passed_win_blocks": False,
    "robbing_the_kang": False,
    "special_hands": False,
    "turn_seconds": None,
}

RULESETS: dict[str, Options] = {"kalaro": Options()}
_PLANNED_RULESETS = ("joker", "pinoy")


def options_for(ruleset: str, **overrides: Any) -> Options:
    """The ruleset's options with the host's house rules applied.

    ``ValueError`` for an unknown ruleset or option, a bad value, or a toggle that is
    not yet supported.
    """
    if ruleset in _PLANNED_RULESETS:
        raise ValueError(f"Mahjong ruleset {ruleset!r} is not yet supported (only 'kalaro')")
    try:
        preset = RULESETS[ruleset]
    except KeyError:
        known = ", ".join(sorted(RULESETS))
        raise ValueError(f"unknown Mahjong ruleset {ruleset!r} (known: {known})") from None
    fields = set(Options.__struct_fields__) - {"ruleset"}
    unknown = sorted(set(overrides) - fields)
    if unknown:
        raise ValueError(
            f"unknown Mahjong option(s) {', '.join(unknown)} (known: {', '.join(sorted(fields))})"
        )
    try:
        # Strict conversion checks every value against its field's type and limits.
        options = msgspec.convert(msgspec.to_builtins(preset) | overrides, Options)
    except msgspec.ValidationError as exc:
        raise ValueError(f"bad Mahjong option value: {exc}") from None
    check_supported(options)
    return options


def check_supported(options: Options) -> None:
    """``ValueError`` if ``options`` turn on something the engine cannot play yet."""
    if options.ruleset not in RULESETS:
        raise ValueError(f"Mahjong ruleset {options.ruleset!r} is not yet supported")
    for name, off in _NOT_YET_SUPPORTED.items():
        if getattr(options, name) != off:
            raise ValueError(f"Mahjong option {name!r} is not yet supported")


def max_loss_units(options: Options) -> int:
    """Most one player can lose in one hand, in units of the bet (the hold).

    Under ``kalaro`` payments a loser owes at most 2 + 5 kangs = 7 units, so the cap
    (10 by default) is the binding bound the wallet holds, with room for the
    ``pinoy`` special hands.
    """
    return options.cap_units
