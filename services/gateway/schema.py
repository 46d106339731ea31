"""``python -m services.gateway.schema OUT``: write the OpenAPI document for the docs.

Clients on other platforms generate their models from it; the same schema is served
live at ``/schema/openapi.json``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from kalaro.settings import load_settings
from services.gateway.app import create_app


def openapi_document() -> dict[str, object]:
    app = create_app(load_settings())
    schema: dict[str, object] = app.openapi_schema.to_schema()
    return schema


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else Path("docs/openapi.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(openapi_document(), indent=2, sort_keys=True) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
