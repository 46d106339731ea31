"""Exports of finished hands as one JSON file: a player's own hands, an admin's day.

The file is a JSON array of records, each exactly what ``GET /api/hands/{game}/{id}``
answers (``kalaro verify`` accepts any one of them), oldest first. It is streamed page
by page from the history service, never built in memory. The first page is asked for
before the answer starts, so history being down is a plain 503; should it fail later,
the stream stops short and the file is not valid JSON, never a valid-looking part.
Only hands history has stored are exported (a hand that ended a moment ago may not be).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Annotated

import msgspec
from litestar import Controller, Request, get
from litestar.di import Provide
from litestar.openapi import ResponseSpec
from litestar.openapi.spec import OpenAPIHeader, OpenAPIResponse, Operation, Schema
from litestar.openapi.spec.enums import OpenAPIType
from litestar.params import Parameter
from litestar.response import Stream

from kalaro.bus import request as bus_request
from kalaro.proto import endpoints
from kalaro.proto.engine import HandRecord
from kalaro.proto.history import ExportHands, RecordsPage
from services.gateway import access
from services.gateway.hand_source import HISTORY_TIMEOUT_SECONDS
from services.gateway.routes import Claims, _nc, provide_claims

log = logging.getLogger("kalaro.gateway")

#: Records per page asked of history.
EXPORT_PAGE = 50

_encode = msgspec.json.Encoder().encode

#: The header that makes the answer a download, as the document declares it.
_DISPOSITION = OpenAPIHeader(
    schema=Schema(type=OpenAPIType.STRING),
    required=True,
    description='`attachment; filename="<name>.json"`: a browser saves the answer as a file',
    example='attachment; filename="kalaro-my-hands.json"',
)


@dataclass
class _DownloadOperation(Operation):
    """An export's operation: its 200 (a :class:`ResponseSpec`, which Litestar documents
    without headers) declares ``Content-Disposition``, as the answer carries it."""

    def __post_init__(self) -> None:
        ok = (self.responses or {}).get("200")
        if isinstance(ok, OpenAPIResponse):
            ok.headers = {**(ok.headers or {}), "Content-Disposition": _DISPOSITION}


#: What the document says of an export's 200: a JSON array of records, as a download.
_AS_FILE = {
    "responses": {
        200: ResponseSpec(
            data_container=list[HandRecord],
            generate_examples=False,
            description="A JSON array of hand records, oldest first, streamed as a download"
            " (Content-Disposition: attachment)",
        )
    },
    "operation_class": _DownloadOperation,
}

Day = Annotated[
    date,
    Parameter(description="A day in UTC, YYYY-MM-DD: the hands that finished during it."),
]


async def _page(request: Request, asking: ExportHands) -> RecordsPage:  # type: ignore[type-arg]
    return await bus_request(
        _nc(request), endpoints.HISTORY_EXPORT_HANDS, asking, timeout=HISTORY_TIMEOUT_SECONDS
    )


async def _records(
    request: Request,  # type: ignore[type-arg]
    asking: ExportHands,
    first: RecordsPage,
) -> AsyncIterator[bytes]:
    """``[``, every page's records comma-separated, ``]``: one page in memory at a time."""
    yield b"["
    page, count = first, 0
    while True:
        for record in page.records:
            yield (b"," if count else b"") + _encode(record)
            count += 1
        if page.last_ms is None:
            break
        asking = msgspec.structs.replace(asking, after_ms=page.last_ms, after_id=page.last_id)
        try:
            page = await _page(request, asking)
        except Exception:
            log.warning("export stopped after %d records: history failed", count, exc_info=True)
            raise  # the body ends short: not a valid file
    yield b"]\n"


async def _export(
    request: Request,  # type: ignore[type-arg]
    asking: ExportHands,
    filename: str,
) -> Stream:
    first = await _page(request, asking)  # a failure here is still a clean error answer
    return Stream(
        _records(request, asking, first),
        media_type="application/json",
        headers={
            "Content-Disposition": f'attachment; filename="{filename}"',
            "Cache-Control": "no-store",
        },
    )


class HandsExportController(Controller):
    """Download finished hands' records as one JSON file."""

    path = "/api"
    tags = ["hands"]
    dependencies = {"claims": Provide(provide_claims)}

    @get(
        "/hands/export",
        guards=[access.SIGNED_IN],
        summary="All my finished hands' records, as one JSON file",
        description="A JSON array, oldest first, streamed; each item is what "
        "`GET /api/hands/{game}/{hand_id}` answers (`kalaro verify` accepts it).",
        media_type="application/json",
        **_AS_FILE,  # type: ignore[arg-type]
    )
    async def my_export(self, request: Request, claims: Claims) -> Stream:  # type: ignore[type-arg]
        asking = ExportHands(user_id=claims.user_id, limit=EXPORT_PAGE)
        return await _export(request, asking, "kalaro-my-hands.json")

    @get(
        "/admin/hands/export",
        guards=[access.ADMIN],
        tags=["admin"],
        summary="Every hand that finished on a day (UTC), as one JSON file",
        description="A JSON array of records, oldest first, streamed.",
        media_type="application/json",
        **_AS_FILE,  # type: ignore[arg-type]
    )
    async def day_export(
        self,
        request: Request,  # type: ignore[type-arg]
        claims: Claims,
        day: Day,
    ) -> Stream:
        start = datetime(day.year, day.month, day.day, tzinfo=UTC)
        since = int(start.timestamp() * 1000)
        until = int((start + timedelta(days=1)).timestamp() * 1000)
        asking = ExportHands(since_ms=since, until_ms=until, limit=EXPORT_PAGE)
        log.info("admin %s exports the hands of %s", claims.user_id, day.isoformat())
        return await _export(request, asking, f"kalaro-hands-{day.isoformat()}.json")
