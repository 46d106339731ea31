"""The published schemas in docs/schema/ are what the code generates (run `make schema`)."""

from __future__ import annotations

import json
from pathlib import Path

from kalaro.proto.schema import message_schema
from services.gateway.schema import openapi_document

DOCS = Path(__file__).resolve().parents[2] / "docs" / "schema"


def _plain(document: object) -> object:
    return json.loads(json.dumps(document, sort_keys=True))


def test_message_schema_is_published_as_generated() -> None:
    published = json.loads((DOCS / "kalaro-messages.json").read_text())
    assert published == _plain(message_schema()), "stale docs/schema: run `make schema`"
    frames = published["websocket"]["client_frame"]["discriminator"]["mapping"]
    assert {"subscribe", "act", "ready", "deal", "chat", "ping"} <= set(frames)


def test_openapi_document_is_published_as_generated() -> None:
    published = json.loads((DOCS / "openapi.json").read_text())
    assert published == _plain(openapi_document()), "stale docs/schema: run `make schema`"
    assert "/api/tables/{table_id}/sit" in published["paths"]


def test_the_document_states_the_limits_litestar_leaves_out() -> None:
    """Strict bodies refuse unknown fields, optional integers keep their lower bound, and
    a 429 names Retry-After: a client generated from the document gets them right."""
    import json
    from pathlib import Path

    doc = json.loads(Path("docs/schema/openapi.json").read_text())
    schemas = doc["components"]["schemas"]
    assert schemas["SitBody"]["additionalProperties"] is False
    assert all(v["additionalProperties"] is False for v in schemas["CreateTableBody"]["oneOf"])
    history = doc["paths"]["/api/wallet/history"]["get"]
    (before,) = [p for p in history["parameters"] if p["name"] == "before"]
    assert {"minimum": 1, "maximum": 2**53, "type": "integer"} in before["schema"]["oneOf"]
    for item in doc["paths"].values():
        for operation in item.values():
            limited = operation["responses"].get("429")
            if limited is not None:
                assert "Retry-After" in limited["headers"]


def test_each_body_is_documented_as_msgspec_enforces_it() -> None:
    """The body schemas are msgspec's own (the one place that checks them): bounds on an
    optional seat, ``additionalProperties: false``, the trailing-newline guard."""
    import msgspec

    from kalaro.proto import api

    doc = _plain(openapi_document())
    assert isinstance(doc, dict)
    schemas = doc["components"]["schemas"]
    _, exact = msgspec.json.schema_components(
        [api.SitBody, api.AddBotBody, api.AdjustBody, api.ReadyBody],
        ref_template="#/components/schemas/{name}",
    )
    for name, schema in exact.items():
        for field in schema["properties"].values():  # Litestar writes no null default
            if field.get("default", 0) is None:
                del field["default"]
        assert schemas[name] == _plain(schema), name
    seat = schemas["SitBody"]["properties"]["seat"]["anyOf"][0]
    assert seat == {"type": "integer", "minimum": 0, "maximum": 7}
    bodies = [s for n, s in schemas.items() if n.endswith("Body") and n != "ErrorBody"]
    variants = [v for s in bodies for v in s.get("oneOf", [s])]
    assert len(bodies) >= 15 and all(v["additionalProperties"] is False for v in variants)


def test_a_tables_rulesets_and_options_are_its_games() -> None:
    """One variant per game: its rulesets by name, its options (no other name) with the
    bounds of the game's own Options Struct."""
    from msgspec.structs import fields

    from kalaro.games.registry import game_names, rules_for

    doc = _plain(openapi_document())
    assert isinstance(doc, dict)
    for body in ("CreateTableBody", "PracticeBody"):
        variants = doc["components"]["schemas"][body]["oneOf"]
        assert [v["properties"]["game"]["enum"] for v in variants] == [[g] for g in game_names()]
        for game, variant in zip(game_names(), variants, strict=True):
            rules = rules_for(game)
            named = variant["properties"]["ruleset"]["enum"]
            assert set(rules.rulesets) <= set(named)
            for name in named:  # each one the game takes (an alias too)
                rules.options_for(name)
            options = variant["properties"]["options"]
            names = {f.name for f in fields(type(rules.options_for(next(iter(rules.rulesets)))))}
            assert set(options["properties"]) == names - {"ruleset"}
            assert options["additionalProperties"] is False
    kawuxing = doc["components"]["schemas"]["CreateTableBody"]["oneOf"][2]
    assert kawuxing["properties"]["ruleset"]["enum"] == ["kawuxing", "kalaro"]  # an alias


def test_every_signed_in_operation_names_the_bearer_scheme_and_its_roles() -> None:
    doc = _plain(openapi_document())
    assert isinstance(doc, dict)
    assert doc["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"
    needs = {
        (method, path): [r for s in op.get("security", ()) for r in s["bearer"]]
        for path, item in doc["paths"].items()
        for method, op in item.items()
        if op.get("security")
    }
    assert len(needs) >= 35
    for (method, path), roles in needs.items():
        if path.startswith("/api/admin"):
            assert roles == ["admin"], (method, path)
    assert needs[("post", "/api/tables")] == ["admin", "host"]
    assert needs[("post", "/api/tables/{table_id}/deal")] == ["table-host"]
    assert needs[("get", "/api/me")] == []
    assert needs[("post", "/api/me/verification-link")] == []
    anonymous = {
        p for p, item in doc["paths"].items() for op in item.values() if "security" not in op
    }
    assert anonymous == {
        "/api/auth/sign-up", "/api/auth/sign-in", "/api/auth/google", "/api/auth/refresh",
        "/api/auth/sign-out", "/api/auth/verify", "/api/auth/verify/resend",
        "/api/auth/password-reset", "/api/auth/password-reset/confirm", "/api/config",
        "/healthz", "/api/schema/messages",
    }  # fmt: skip


def test_the_exports_document_their_download_header() -> None:
    """Both exports answer 200 with ``Content-Disposition: attachment`` (a browser saves
    a file): the document says so beside the array of records it carries."""
    doc = _plain(openapi_document())
    assert isinstance(doc, dict)
    for path in ("/api/hands/export", "/api/admin/hands/export"):
        ok = doc["paths"][path]["get"]["responses"]["200"]
        header = ok["headers"]["Content-Disposition"]
        assert header["required"] is True and header["schema"] == {"type": "string"}, path
        assert header["example"].startswith("attachment; filename="), path
        assert ok["content"]["application/json"]["schema"]["type"] == "array", path
