"""``/schema``: the API reference as one self-contained page (works offline).

Litestar's stock renderers load their scripts from a CDN, so without internet the page
was blank. This one embeds the OpenAPI document and a small renderer in the page: every
operation by tag with its parameters, body and responses, then every schema.
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from typing import Any

from litestar import Request
from litestar.openapi.plugins import OpenAPIRenderPlugin

_PAGE = (Path(__file__).parent / "schema_page.html").read_text()


class OfflineDocsPlugin(OpenAPIRenderPlugin):
    """The API reference page, with nothing to fetch from elsewhere."""

    def render(self, request: Request, openapi_schema: dict[str, Any]) -> bytes:  # type: ignore[type-arg]
        # "</" is escaped so no text in the schema can close the <script> element.
        embedded = json.dumps(openapi_schema).replace("</", "<\\/")
        title = html.escape(str(openapi_schema.get("info", {}).get("title", "API")))
        return _PAGE.replace("__TITLE__", title).replace("__SCHEMA__", embedded).encode()
