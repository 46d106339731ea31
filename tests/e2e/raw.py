"""A request as bytes on the wire: for answers that must be the same, byte for byte."""

from __future__ import annotations

from typing import Any

import httpx

from kalaro.client import KalaroClient


async def raw(client: KalaroClient, method: str, path: str, **kwargs: Any) -> tuple[int, bytes]:
    """Status and body of ``path`` asked with ``client``'s token (nothing parsed)."""
    headers = {"Authorization": f"Bearer {client.access_token}"}
    async with httpx.AsyncClient(base_url=client.base_url, timeout=15) as http:
        response = await http.request(method, path, headers=headers, **kwargs)
    return response.status_code, response.content
