"""Whole records page by page, oldest first: a player's (all of them) or a day's (an
admin's export). The gateway streams the pages; each page is one short query."""

from __future__ import annotations

import msgspec
from sqlalchemy import and_, or_, select
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.proto.engine import HandRecord
from kalaro.proto.history import ExportHands, RecordsPage
from services.history.schema import hands, player_hands

#: Records per page: a record is a few KB, well under NATS's 1 MB message.
MAX_EXPORT_PAGE = 100

_decode_record = msgspec.json.Decoder(HandRecord).decode


async def records_page(engine: AsyncEngine, req: ExportHands) -> RecordsPage:
    """The page ``req`` asks for (its limit already checked)."""
    if req.user_id is not None:
        # The player's index orders by (finished_ms, hand_id) within the user.
        ms, hand_id = player_hands.c.finished_ms, player_hands.c.hand_id
        query = (
            select(ms, hand_id, hands.c.record)
            .join(hands, hands.c.hand_id == hand_id)
            .where(player_hands.c.user_id == req.user_id)
        )
    else:
        ms, hand_id = hands.c.finished_ms, hands.c.hand_id
        query = select(ms, hand_id, hands.c.record)
    if req.since_ms is not None:
        query = query.where(ms >= req.since_ms)
    if req.until_ms is not None:
        query = query.where(ms < req.until_ms)
    if req.after_ms is not None:
        after_id = req.after_id or ""
        query = query.where(or_(ms > req.after_ms, and_(ms == req.after_ms, hand_id > after_id)))
    query = query.order_by(ms, hand_id).limit(req.limit)
    async with engine.connect() as conn:
        rows = (await conn.execute(query)).all()
    records = tuple(_decode_record(data) for _, _, data in rows)
    if len(rows) < req.limit:
        return RecordsPage(records=records)
    return RecordsPage(records=records, last_ms=int(rows[-1][0]), last_id=str(rows[-1][1]))
