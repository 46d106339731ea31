"""Every value a client sends that a pattern checks refuses a trailing newline.

Python's ``$`` matches before a final ``\\n`` too: ``tongits\\n`` once passed the game's
pattern and reached a NATS subject (a 500), and ``request_key: "a\\n"`` passed the
grant's. Each pattern found here, in the REST bodies and in the routes' parameters, is
tried with a value it accepts and that value plus a newline.
"""

from __future__ import annotations

import re
from typing import Any, get_args

import msgspec
import pytest
from hypothesis import find
from hypothesis import strategies as st

from kalaro.games.registry import game_names
from kalaro.proto import api
from kalaro.proto import lobby as lb
from kalaro.settings import load_settings
from services.gateway import routes_admin
from services.gateway.app import create_app


def _struct_patterns(struct: type[msgspec.Struct]) -> list[tuple[str, str, Any]]:
    found = []
    info = msgspec.inspect.type_info(struct)
    assert isinstance(info, msgspec.inspect.StructType)
    for field in info.fields:
        kinds = (
            field.type.types if isinstance(field.type, msgspec.inspect.UnionType) else [field.type]
        )
        for kind in kinds:
            if isinstance(kind, msgspec.inspect.StrType) and kind.pattern:
                found.append((f"{struct.__name__}.{field.name}", kind.pattern, struct))
    return found


def _body_patterns() -> list[tuple[str, str, Any]]:
    structs = [
        v
        for v in (*vars(api).values(), *vars(routes_admin).values())
        if isinstance(v, type) and issubclass(v, msgspec.Struct)
    ]
    return [found for struct in structs for found in _struct_patterns(struct)]


def _parameter_patterns() -> list[tuple[str, str, Any]]:
    app = create_app(load_settings())
    found = []
    for route in app.routes:
        for handler in getattr(route, "route_handlers", ()):
            signature = getattr(handler, "parsed_fn_signature", None)
            for name, field in (signature.parameters if signature else {}).items():
                pattern = getattr(field.kwarg_definition, "pattern", None)
                if pattern:
                    found.append((f"{route.path} {name}", pattern, None))
    return found


PATTERNS = _body_patterns() + _parameter_patterns()


def test_the_patterns_are_found() -> None:
    names = {name for name, _, _ in PATTERNS}
    assert {"AdjustBody.request_key", "ReadyBody.entropy"} <= names
    assert any(name.endswith(" q") for name in names)


@pytest.mark.parametrize(("name", "pattern", "struct"), PATTERNS, ids=[p[0] for p in PATTERNS])
def test_a_trailing_newline_is_refused(name: str, pattern: str, struct: Any) -> None:
    value = find(st.from_regex(pattern), lambda s: len(s) < 20)
    assert re.search(pattern, value), (name, value)
    assert re.search(pattern, value + "\n") is None, (name, pattern)
    assert pattern.endswith("$(?!\\n)"), f"{name}: build it with kalaro.proto.api.whole()"
    if struct is not None:  # and the field's own type, as msgspec decodes a body
        (kind,) = [f.type for f in msgspec.structs.fields(struct) if f.name == name.split(".")[1]]
        assert msgspec.convert(value, kind) == value
        with pytest.raises(msgspec.ValidationError):
            msgspec.convert(value + "\n", kind)


def test_the_hand_routes_know_every_game() -> None:
    # The path's game is an enum (no pattern to get wrong): the registry's games.
    assert set(get_args(lb.Game)) == set(game_names())
