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
    assert schemas["CreateTableBody"]["additionalProperties"] is False
    history = doc["paths"]["/api/wallet/history"]["get"]
    (before,) = [p for p in history["parameters"] if p["name"] == "before"]
    assert {"minimum": 1, "maximum": 2**53, "type": "integer"} in before["schema"]["oneOf"]
    for item in doc["paths"].values():
        for operation in item.values():
            limited = operation["responses"].get("429")
            if limited is not None:
                assert "Retry-After" in limited["headers"]
