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
