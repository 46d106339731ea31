"""A table's body in the document, one variant per game: its rulesets by name and its
house-rule options, each with the bounds of the game's own ``Options`` Struct (what
``Game.options`` enforces), and no other option name.

``CreateTableBody`` and ``PracticeBody`` take ``options`` as a plain object (the game
is known only once the body is read); the document says what each game accepts.
"""

from __future__ import annotations

import copy
from typing import Any

import msgspec

from kalaro.games.registry import game_names, rules_for

_REF = "#/components/schemas/{name}"
#: The body Structs whose ``ruleset`` and ``options`` depend on their ``game``.
BY_GAME = ("CreateTableBody", "PracticeBody")


def _title(game: str) -> str:
    return "".join(part.capitalize() for part in game.split("_"))


def game_options() -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """Each game's options object (``ruleset`` left out: the body names it), and the
    component schemas they refer to, named after their game (``MahjongPoints``)."""
    by_game: dict[str, dict[str, Any]] = {}
    components: dict[str, Any] = {}
    for game in game_names():
        prefix = _title(game)
        options_type = type(rules_for(game).options_for(_rulesets(game)[0]))
        (top,), defs = msgspec.json.schema_components(
            [options_type], ref_template=f"#/components/schemas/{prefix}{{name}}"
        )
        components.update({f"{prefix}{name}": schema for name, schema in defs.items()})
        options = copy.deepcopy(defs[top["$ref"].rsplit("/", 1)[1].removeprefix(prefix)])
        options["properties"].pop("ruleset", None)
        options.pop("title", None)
        options.pop("description", None)
        options["additionalProperties"] = False
        options["required"] = []
        by_game[game] = options
        components.pop(f"{prefix}{options_type.__name__}", None)
    return by_game, components


def _rulesets(game: str) -> list[str]:
    return list(rules_for(game).rulesets)


def _accepted(game: str, names: list[str]) -> list[str]:
    """The names the game takes as a ruleset: its own, and any alias among ``names``
    (Ka Wu Xing takes "kalaro", the body's default, as its one ruleset)."""
    accepted = _rulesets(game)
    for name in names:
        try:
            rules_for(game).options_for(name)
        except ValueError:
            continue
        if name not in accepted:
            accepted.append(name)
    return accepted


def by_game(body: dict[str, Any], options: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """``body`` (msgspec's schema of a table's body) as one variant per game."""
    variants = []
    for game in game_names():
        variant = copy.deepcopy(body)
        variant.pop("title", None)
        variant.pop("description", None)
        properties = variant["properties"]
        properties["game"] = {"enum": [game]}
        ruleset = properties["ruleset"]
        every = [name for other in game_names() for name in _rulesets(other)]
        rulesets = _accepted(game, [*every, ruleset.get("default", "")])
        ruleset["enum"] = rulesets
        for bound in ("minLength", "maxLength"):
            ruleset.pop(bound, None)
        if ruleset.get("default") not in rulesets:  # the body's default is not this game's
            ruleset.pop("default", None)
            variant["required"] = sorted({*variant.get("required", ()), "ruleset"})
        properties["options"] = {**options[game], "default": {}}
        variant["title"] = f"{body.get('title', 'Body')} ({game})"
        variants.append(variant)
    documented = {"oneOf": variants}
    for key in ("title", "description"):
        if key in body:
            documented[key] = body[key]
    return documented
