"""The installable app and the offline API docs, as the stack's gateway serves them.

The manifest, icons, service worker and offline page come with the right content types;
every file the service worker pre-caches exists; and ``/schema`` is one self-contained
page (no script, style or font from another origin), so it works without internet.
"""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path

import httpx

from tests.e2e.stack import Stack


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_manifest_and_icons(stack: Stack, http: httpx.Client) -> None:
    index = http.get("/").text
    assert '<link rel="manifest" href="manifest.webmanifest">' in index
    response = http.get("/manifest.webmanifest")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/manifest+json")
    manifest = response.json()
    assert manifest["display"] == "standalone" and manifest["start_url"].startswith("/")
    sizes = {}
    for icon in manifest["icons"]:
        image = http.get(f"/{icon['src']}")
        assert image.status_code == 200 and image.headers["content-type"] == "image/png"
        assert png_size(image.content) == tuple(map(int, icon["sizes"].split("x")))
        sizes.setdefault(icon["purpose"], set()).add(icon["sizes"])
    assert sizes == {"any": {"192x192", "512x512"}, "maskable": {"512x512"}}


def test_service_worker_and_offline_page(stack: Stack, http: httpx.Client) -> None:
    worker = http.get("/sw.js")
    assert worker.status_code == 200
    assert "javascript" in worker.headers["content-type"]
    # Served from the root, so its default scope is the whole app; the page's CSP lets a
    # same-origin worker and manifest load (default-src 'self', no worker-src override).
    csp = http.get("/").headers["content-security-policy"]
    assert "default-src 'self'" in csp and "worker-src" not in csp
    listed = re.search(r"const SHELL = \[(.*?)\];", worker.text, re.S)
    assert listed is not None
    shell = re.findall(r'"([^"]+)"', listed[1])
    assert "offline.html" in shell and "index.html" in shell
    # Every script and stylesheet of the app is in the shell, or the installed app breaks
    # offline on the first view that imports a file somebody added later.
    web = Path(__file__).resolve().parents[2] / "web"
    app_files = {
        str(p.relative_to(web))
        for p in [*web.glob("*.js"), *web.glob("*.css"), *web.glob("views/*.js")]
        if p.name != "sw.js"
    }
    assert app_files <= set(shell), sorted(app_files - set(shell))
    for path in shell:
        assert http.get(f"/{path}").status_code == 200, path
    offline = http.get("/offline.html")
    assert offline.status_code == 200 and offline.headers["content-type"].startswith("text/html")
    assert "You're offline" in offline.text
    assert "<script" not in offline.text  # the page must work with nothing but itself + CSS


def test_schema_page_is_self_contained(stack: Stack, http: httpx.Client) -> None:
    page = http.get("/schema")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    html = page.text
    # Nothing loads from another origin: no src/href to http(s), no @import.
    assert not re.search(r"""(src|href)\s*=\s*["']https?://""", html), "external asset"
    assert "@import" not in html
    embedded = re.search(r'<script type="application/json" id="openapi">(.*?)</script>', html, re.S)
    assert embedded is not None
    document = json.loads(embedded[1])
    assert "/api/hands" in document["paths"] and "/api/wallet" in document["paths"]
