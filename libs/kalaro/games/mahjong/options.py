"""The options of a Filipino Mahjong table: a ruleset's defaults plus the host's changes.

Three rulesets (``RULES.md``):

- ``kalaro``: the app's own rules — 5 sets + 1 pair, fixed payments (``points`` None);
- ``joker``: the single-player seed's game — jokers, Seven Pairs, Eskalera, hidden
  ("secret") concealed kangs, the passed-win block, and payments by win category from
  a points table;
- ``pinoy``: ``joker`` plus everything beyond both seeds — robbing the kang, special
  hands (ambisyon) and a shorter turn clock (20 s).

Every ruleset runs a turn clock (``turn_seconds``, 30 s; None = off) with auto-play on
time-out, and marks a seat away after ``away_after_timeouts`` time-outs in a row.

A ruleset is only a set of defaults: a host may change any option (house rules), e.g.
robbing the kang at a ``kalaro`` table. The one combination refused is special hands without
a points table (their payouts live in it).

The points table (:class:`Points`) is keyed by the names players read: the seed's 22
win categories, spelled exactly as the seed spells them, then the extras (the other
losers' share of a discard win, the kang bonus) and the special hands. A host's
``points`` override changes single entries of the ruleset's table.
"""

from __future__ import annotations

from typing import Annotated, Any, Final

import msgspec

#: Units one entry of the points table may be (a loser's bill is capped anyway).
Units = Annotated[int, msgspec.Meta(ge=0, le=100)]

#: The seed's win categories, in the seed's order, named exactly as the seed names them.
CATEGORIES: Final[tuple[str, ...]] = (
    "Win by Discard Regular",
    "Win by Discard Eskalera",
    "Win by Discard Seven Pairs",
    "Win by Discard Before the Fifth",
    "Win by Discard Before the Fifth Eskalera",
    "Win by Discard Before the Fifth Seven Pairs",
    "Win by Draw Regular",
    "Win by Draw Eskalera",
    "Win by Draw Seven Pairs",
    "Win by Draw Before the Fifth",
    "Win by Draw Before the Fifth Eskalera",
    "Win by Draw Before the Fifth Seven Pairs",
    "Win by Draw Joker Eye",
    "Win by Draw Joker Eye Eskalera",
    "Win by Draw Joker Eye Seven Pairs",
    "Win by Draw Joker Eye Before the Fifth",
    "Win by Draw Joker Eye Before the Fifth Eskalera",
    "Win by Draw Joker Eye Before the Fifth Seven Pairs",
    "Bisaklat triple Joker win before the first draw",
    "Bisaklat Regular",
    "Bisaklat Eskalera",
    "Bisaklat Seven Pairs",
)
TRIPLE_JOKER: Final = "Bisaklat triple Joker win before the first draw"

#: Special hands (ambisyon), ``pinoy``: each adds its points to every loser's bill.
SPECIAL_HANDS: Final[tuple[str, ...]] = (
    "All Pongs",
    "Pure One Suit",
    "All Honours",
    "Big Three Dragons",
    "Small Three Dragons",
    "Concealed Hand",
)
OTHER_PLAYER: Final = "Each other player (by Discard)"
KANG_BONUS: Final = "Each kang of the winner"


def _field(name: str) -> str:
    return name.lower().replace(" ", "_").replace("(", "").replace(")", "")


# Python field name -> the name players read (the encoded key).
_NAMES: dict[str, str] = {
    _field(name): name for name in (*CATEGORIES, OTHER_PLAYER, KANG_BONUS, *SPECIAL_HANDS)
}


class Points(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, rename=_NAMES):
    """Units × bet per entry; encoded (and overridden) by the names players read.

    A category's entry is what the discarder pays on a win by Discard, and what every
    loser pays on a win by Draw or a Bisaklat. Defaults: Regular 2; Seven Pairs or
    Eskalera +2; Before the Fifth +2; Joker Eye +1; Bisaklat 8, or 10 with a pattern.
    """

    win_by_discard_regular: Units = 2
    win_by_discard_eskalera: Units = 4
    win_by_discard_seven_pairs: Units = 4
    win_by_discard_before_the_fifth: Units = 4
    win_by_discard_before_the_fifth_eskalera: Units = 6
    win_by_discard_before_the_fifth_seven_pairs: Units = 6
    win_by_draw_regular: Units = 2
    win_by_draw_eskalera: Units = 4
    win_by_draw_seven_pairs: Units = 4
    win_by_draw_before_the_fifth: Units = 4
    win_by_draw_before_the_fifth_eskalera: Units = 6
    win_by_draw_before_the_fifth_seven_pairs: Units = 6
    win_by_draw_joker_eye: Units = 3
    win_by_draw_joker_eye_eskalera: Units = 5
    win_by_draw_joker_eye_seven_pairs: Units = 5
    win_by_draw_joker_eye_before_the_fifth: Units = 5
    win_by_draw_joker_eye_before_the_fifth_eskalera: Units = 7
    win_by_draw_joker_eye_before_the_fifth_seven_pairs: Units = 7
    bisaklat_triple_joker_win_before_the_first_draw: Units = 8
    bisaklat_regular: Units = 8
    bisaklat_eskalera: Units = 10
    bisaklat_seven_pairs: Units = 10
    #: On a win by Discard, what each loser other than the discarder pays.
    each_other_player_by_discard: Units = 1
    #: Per kang the winner holds (claimed, concealed or added), from every loser.
    each_kang_of_the_winner: Units = 1
    all_pongs: Units = 2
    pure_one_suit: Units = 4
    all_honours: Units = 6
    big_three_dragons: Units = 4
    small_three_dragons: Units = 2
    concealed_hand: Units = 1

    def units(self, name: str) -> int:
        """The entry called ``name`` (a category, an extra or a special hand)."""
        value: int = getattr(self, _FIELDS[name])
        return value

    def table(self) -> dict[str, int]:
        """Every entry by the name players read, in the documented order."""
        return {name: self.units(name) for name in POINT_NAMES}


_FIELDS: dict[str, str] = {name: field for field, name in _NAMES.items()}
#: Every key of the points table, in the documented order.
POINT_NAMES: Final[tuple[str, ...]] = (*CATEGORIES, OTHER_PLAYER, KANG_BONUS, *SPECIAL_HANDS)
DEFAULT_POINTS: Final = Points()


class Options(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """Everything that changes how a hand plays or pays. Recorded with every hand."""

    ruleset: str = "kalaro"
    #: Seconds every seat with a claim option gets to answer a discard.
    call_seconds: Annotated[int, msgspec.Meta(ge=1, le=120)] = 10
    #: Most units one loser pays in one hand; the hold is at most this.
    cap_units: Annotated[int, msgspec.Meta(ge=1, le=100)] = 10
    #: After the deal a wall tile is revealed; the other three of its kind are wild.
    jokers: bool = False
    #: Seven pairs + one set, fully concealed, as a winning pattern.
    seven_pairs: bool = False
    #: Eskalera (1-2-3, 4-5-6, 7-8-9 of one suit) + the rest complete, as a pattern.
    eskalera: bool = False
    #: Concealed kangs stay face down to the others until the hand ends.
    secret_kangs: bool = False
    #: Passing a winning tile blocks wins on others' tiles until one's next draw.
    passed_win_blocks: bool = False
    #: A player may win on the tile another adds to an exposed pong.
    robbing_the_kang: bool = False
    #: Special hands (ambisyon, :data:`SPECIAL_HANDS`) add their points to the bill.
    special_hands: bool = False
    #: Seconds for a whole turn (draw and discard), auto-played on time-out; None = none.
    turn_seconds: Annotated[int, msgspec.Meta(ge=1, le=600)] | None = 30
    #: Payments by win category from this table; None = the ``kalaro`` payments.
    points: Points | None = None
    #: Time-outs in a row after which a seat is marked away (its timers then run 0 s).
    away_after_timeouts: Annotated[int, msgspec.Meta(ge=1, le=10)] = 2


_JOKER = Options(
    ruleset="joker",
    jokers=True,
    seven_pairs=True,
    eskalera=True,
    secret_kangs=True,
    passed_win_blocks=True,
    points=DEFAULT_POINTS,
)
RULESETS: dict[str, Options] = {
    "kalaro": Options(),
    "joker": _JOKER,
    "pinoy": msgspec.structs.replace(
        _JOKER, ruleset="pinoy", robbing_the_kang=True, special_hands=True, turn_seconds=20
    ),
}


def options_for(ruleset: str, **overrides: Any) -> Options:
    """The ruleset's options with the host's house rules applied.

    ``points`` may name only the entries to change (``{"Win by Draw Regular": 3}``);
    the others keep the ruleset's values (the documented defaults when the ruleset has
    no table). ``points=None`` means the ``kalaro`` payments. ``ValueError`` for an
    unknown ruleset, option or points entry, a bad value, or options that do not go
    together.
    """
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
    merged = msgspec.to_builtins(preset) | overrides
    points = overrides.get("points")
    if isinstance(points, Points):
        merged["points"] = msgspec.to_builtins(points)
    elif isinstance(points, dict):
        names = [name for name in points if name not in POINT_NAMES]
        if names:
            raise ValueError(
                f"unknown Mahjong points entr{'ies' if len(names) > 1 else 'y'} "
                f"{', '.join(map(repr, names))} (known: {', '.join(POINT_NAMES)})"
            )
        merged["points"] = msgspec.to_builtins(preset.points or DEFAULT_POINTS) | points
    try:
        # Strict conversion checks every value against its field's type and limits.
        options = msgspec.convert(merged, Options)
    except msgspec.ValidationError as exc:
        raise ValueError(f"bad Mahjong option value: {exc}") from None
    check_options(options)
    return options


def check_options(options: Options) -> None:
    """``ValueError`` if ``options`` cannot be played (unknown ruleset, or a bad mix)."""
    if options.ruleset not in RULESETS:
        raise ValueError(f"unknown Mahjong ruleset {options.ruleset!r}")
    if options.special_hands and options.points is None:
        raise ValueError(
            "Mahjong option 'special_hands' needs a points table for the payouts: "
            "set 'points' (an empty {} takes the defaults) or use the 'pinoy' ruleset"
        )


# The most kangs a winning hand of each pattern can hold: 5 sets + pair may all be
# kangs; Eskalera's three runs leave two sets; Seven Pairs is fully concealed, no melds.
_MOST_KANGS = {"Regular": 5, "Eskalera": 2, "Seven Pairs": 0}


def _pattern_of(category: str) -> str:
    for pattern in ("Eskalera", "Seven Pairs"):
        if category.endswith(pattern):
            return pattern
    return "Regular"


def possible_category(category: str, options: Options) -> bool:
    """Whether a hand under ``options`` can end in ``category``."""
    pattern = _pattern_of(category)
    if (pattern == "Eskalera" and not options.eskalera) or (
        pattern == "Seven Pairs" and not options.seven_pairs
    ):
        return False
    return options.jokers or ("Joker" not in category)


def most_special_units(points: Points) -> int:
    """The most special hands can add to one bill, over the combinations that can happen.

    All Honours excludes Pure One Suit and stands in for All Pongs (counted instead);
    Big Three Dragons stands in for Small; dragons are honours, so no Pure One Suit
    with either; Concealed Hand goes with anything.
    """
    dragons = max(points.units("Big Three Dragons"), points.units("Small Three Dragons"))
    honours = points.units("All Honours")
    pongs = points.units("All Pongs")
    pure = points.units("Pure One Suit")
    return points.units("Concealed Hand") + max(honours + dragons, pongs + dragons, pure + pongs)


def largest_bill(options: Options, points: Points) -> int:
    """The most one loser can owe before the cap, over every category ``options`` allow."""
    specials = most_special_units(points) if options.special_hands else 0
    kang = points.units(KANG_BONUS)
    other = points.units(OTHER_PLAYER)
    bills = [0]
    for category in CATEGORIES:
        if not possible_category(category, options):
            continue
        kangs = _MOST_KANGS[_pattern_of(category)] * kang
        base = points.units(category)
        if category.startswith("Win by Discard"):
            base = max(base, other)  # the discarder, or any other loser
        bills.append(base + kangs + specials)
    return max(bills)


def max_loss_units(options: Options) -> int:
    """Most one player can lose in one hand, in units of the bet (the hold).

    ``kalaro`` payments: the cap (10 by default; the payments themselves reach at most
    2 + 5 kangs = 7). A points table: the largest bill its categories, kang bonus and
    special hands allow (:func:`largest_bill`), never above the cap. The engine charges
    no loser more than the cap, so this bounds every payment.
    """
    if options.points is None:
        return options.cap_units
    return min(options.cap_units, largest_bill(options, options.points))
