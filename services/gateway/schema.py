"""``python -m services.gateway.schema [DIR]``: write the API documents for the docs.

``openapi.json`` (REST, also served live at ``/schema/openapi.json``) and
``kalaro-messages.json`` (JSON Schema of every client-facing message: REST bodies,
WebSocket frames, each game's actions, views and results; also served at
``/api/schema/messages``). Clients on other platforms generate their models from them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from kalaro.proto.schema import message_schema
from kalaro.settings import load_settings
from services.gateway.app import create_app


def openapi_document() -> dict[str, object]:
    app = create_app(load_settings())
    schema: dict[str, object] = app.openapi_schema.to_schema()
    return schema


def _write(path: Path, document: object) -> None:
    path.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n")
    print(f"wrote {path}")


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else Path("docs/schema")
    out.mkdir(parents=True, exist_ok=True)
    _write(out / "openapi.json", openapi_document())
    _write(out / "kalaro-messages.json", message_schema())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
