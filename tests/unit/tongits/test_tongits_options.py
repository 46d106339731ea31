"""Options, the two rulesets, and the maximum loss per hand."""

from __future__ import annotations

import msgspec
import pytest

from kalaro.games.tongits import RULESETS, Options, max_loss_units, options_for


def test_kalaro_preset_matches_the_rules_table() -> None:
    o = options_for("kalaro")
    assert o.ruleset == "kalaro"
    assert o.deadwood == "hand"
    assert o.draw_tie == "caller"
    assert o.stock_out_tie == "split"
    assert o.sapaw_blocks_call is False
    assert o.secret_sets is False
    assert o.payments == "table_a"
    assert o.fight_seconds == 20


def test_classic_preset_matches_the_rules_table() -> None:
    o = options_for("classic")
    assert o.ruleset == "classic"
    assert o.deadwood == "outside_melds"
    assert o.draw_tie == "fighter"
    assert o.stock_out_tie == "last_drawer"
    assert o.sapaw_blocks_call is True
    assert o.secret_sets is True
    assert o.payments == "table_b"
    assert o.fight_seconds == 20


def test_overrides_are_house_rules_on_a_preset() -> None:
    o = options_for("kalaro", secret_sets=True, fight_seconds=30)
    assert o.ruleset == "kalaro"
    assert o.secret_sets is True
    assert o.fight_seconds == 30
    assert o.payments == "table_a"


@pytest.mark.parametrize(
    ("ruleset", "overrides", "match"),
    [
        ("poker", {}, "unknown Tongits ruleset 'poker'"),
        ("kalaro", {"jokers": True}, "unknown Tongits option"),
        ("kalaro", {"deadwood": "some"}, "bad Tongits option value"),
        ("kalaro", {"secret_sets": "yes"}, "bad Tongits option value"),
        ("classic", {"fight_seconds": 0}, "bad Tongits option value"),
        ("classic", {"payments": "table_c"}, "bad Tongits option value"),
    ],
)
def test_bad_rulesets_and_options_are_refused(
    ruleset: str, overrides: dict[str, object], match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        options_for(ruleset, **overrides)


def test_max_loss_units() -> None:
    assert max_loss_units(options_for("kalaro")) == 4
    # 3 (Tongits) + 3 x 3 for three secret sets (13 cards held) + 4 aces + 1 burned
    assert max_loss_units(options_for("classic")) == 17
    assert max_loss_units(options_for("classic", secret_sets=False)) == 8
    assert max_loss_units(options_for("kalaro", payments="table_b")) == 8


def test_options_serialise_and_reject_unknown_fields() -> None:
    for preset in RULESETS.values():
        data = msgspec.json.encode(preset)
        assert msgspec.json.decode(data, type=Options) == preset
    with pytest.raises(msgspec.ValidationError):
        msgspec.json.decode(b'{"ruleset":"kalaro","jokers":true}', type=Options)
