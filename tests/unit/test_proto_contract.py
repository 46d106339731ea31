"""The bus contract's shape: keyword-only messages, and every request subject declared
once as an endpoint."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import msgspec
import pytest

import kalaro.proto
from kalaro.proto import endpoints, subjects
from kalaro.proto.endpoints import Endpoint

_MODULES = [
    importlib.import_module(f"kalaro.proto.{m.name}")
    for m in pkgutil.iter_modules(kalaro.proto.__path__)
]
_STRUCTS = sorted(
    {
        (cls.__module__, cls.__qualname__): cls
        for mod in _MODULES
        for cls in vars(mod).values()
        if inspect.isclass(cls)
        and issubclass(cls, msgspec.Struct)
        and cls.__module__ == mod.__name__
    }.items()
)


@pytest.mark.parametrize("struct", [c for _, c in _STRUCTS], ids=[".".join(k) for k, _ in _STRUCTS])
def test_every_message_is_built_by_keyword(struct: type[msgspec.Struct]) -> None:
    # Positional construction let swapped strings type-check (two user ids, say).
    params = inspect.signature(struct).parameters.values()
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in params), struct
    if struct.__struct_fields__:
        with pytest.raises(TypeError):
            struct(*(None for _ in struct.__struct_fields__))


def test_every_request_subject_has_one_endpoint() -> None:
    declared = {
        ep.subject: name for name, ep in vars(endpoints).items() if isinstance(ep, Endpoint)
    }
    # Broadcasts and stream subjects carry no reply, so they have no endpoint.
    request_subjects = {
        value
        for name, value in vars(subjects).items()
        if name.isupper()
        and isinstance(value, str)
        and value.split(".")[0] in {"auth", "wallet", "lobby", "bots"}
    } - {subjects.AUTH_REVOKED}
    assert request_subjects - declared.keys() == set()
    for name, subject in declared.items():
        assert getattr(subjects, name, subject) == subject, name  # same name as the subject


def test_engine_endpoints_are_per_game_and_typed() -> None:
    act = endpoints.engine_act("tongits")
    assert act.subject == subjects.engine_act("tongits")
    assert endpoints.engine_act("tongits") is act  # built once per game
    assert endpoints.engine_view("mahjong").subject == subjects.engine_view("mahjong")


def test_every_error_code_has_an_http_status_and_unknown_ones_are_not_500() -> None:
    from kalaro.proto import errors

    declared = {
        v
        for k, v in vars(errors).items()
        if k.isupper() and isinstance(v, str) and k != "HTTP_ERROR"
    }
    assert declared - errors.HTTP_STATUS.keys() == set()  # HTTP_ERROR: the SDK's own
    assert 400 <= errors.http_status("some_code_from_a_newer_service") < 500
