"""The hands fair play reads: history's export, page by page, as
:class:`~services.ranked.fairplay.PlayedHand` summaries.

Bounded (:data:`MAX_HANDS` records read): an admin waits for the report, which must
answer in seconds; of a busier window the oldest part is read (the report says how
many hands it used, ``hands_read``; ask for fewer days to see the latest)."""

from __future__ import annotations

from nats.aio.client import Client as NATS

from kalaro.bus import request as bus_request
from kalaro.proto import endpoints
from kalaro.proto.engine import HandRecord
from kalaro.proto.history import ExportHands
from services.ranked.fairplay import PlayedHand, played_hand

MAX_HANDS = 5_000
_PAGE = 100  # history's largest export page


def played(record: HandRecord) -> PlayedHand | None:
    """A hand fair play looks at: played for credits, finished, by people."""
    if record.practice or record.voided or any(p.is_bot for p in record.players):
        return None
    return played_hand(record)


async def played_hands(
    nc: NATS, *, since_ms: int, game: str | None, timeout: float
) -> list[PlayedHand]:
    """Hands finished since ``since_ms`` (one game, or all), oldest first."""
    hands: list[PlayedHand] = []
    after_ms: int | None = None
    after_id: str | None = None
    read = 0
    while read < MAX_HANDS:
        page = await bus_request(
            nc,
            endpoints.HISTORY_EXPORT_HANDS,
            ExportHands(since_ms=since_ms, after_ms=after_ms, after_id=after_id, limit=_PAGE),
            timeout=timeout,
        )
        read += len(page.records)
        for record in page.records:
            hand = played(record)
            if hand is not None and (game is None or hand.game == game):
                hands.append(hand)
        if page.last_ms is None or page.last_id is None or not page.records:
            break
        after_ms, after_id = page.last_ms, page.last_id
    return hands
