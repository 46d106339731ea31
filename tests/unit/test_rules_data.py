"""The web client's rules help (web/views/rules-data.js) is generated from the engines:
it must match them exactly, and every form field's bounds must be the engine's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kalaro.games.registry import rules_for
from kalaro.games.rulesdata import render, rules_data

ROOT = Path(__file__).resolve().parents[2]
DATA = rules_data()


def test_the_committed_rules_data_is_what_the_engines_generate() -> None:
    committed = (ROOT / "web/views/rules-data.js").read_text(encoding="utf-8")
    assert committed == render(), (
        "web/views/rules-data.js is stale: run "
        "`python -m kalaro.games.rulesdata web/views/rules-data.js`"
    )


def test_holds_and_presets_are_the_engines() -> None:
    assert DATA["tongits"]["rulesets"]["classic"]["hold"] == 17
    for game, entry in DATA.items():
        rules = rules_for(game)
        for name, ruleset in entry["rulesets"].items():
            options = rules.options_for(name)
            assert ruleset["options"] == rules.options_dict(options)
            assert ruleset["hold"] == rules.max_loss_units(options)


def _cases() -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (game, ruleset, field)
        for game, entry in DATA.items()
        for ruleset in entry["rulesets"]
        for field in entry["fields"]
    ]


@pytest.mark.parametrize(("game", "ruleset", "field"), _cases())
def test_every_form_field_takes_exactly_what_the_engine_takes(
    game: str, ruleset: str, field: dict[str, Any]
) -> None:
    rules = rules_for(game)
    name = field["name"]
    good: list[Any]
    bad: list[Any]
    if field["kind"] == "bool":
        good, bad = [True, False], ["yes"]
    elif field["kind"] == "int":
        good, bad = [field["min"], field["max"]], [field["min"] - 1, field["max"] + 1]
    elif field["kind"] == "enum":
        good, bad = [value for value, _ in field["choices"]], ["nope"]
    else:  # points: one entry changed, at its bounds
        entry = next(iter(field["defaults"]))
        good = [{entry: field["min"]}, {entry: field["max"]}]
        bad = [{entry: field["max"] + 1}, {"No such entry": 1}]
    if field.get("nullable"):
        good.append(None)
    for value in good:
        # the one mix the engine refuses: special hands without a points table
        extra: dict[str, Any] = {"points": {}} if name == "special_hands" else {}
        if name == "points" and value is None:
            extra = {"special_hands": False}
        rules.options_for(ruleset, **{name: value}, **extra)
    for value in bad:
        with pytest.raises(ValueError):
            rules.options_for(ruleset, **{name: value})
