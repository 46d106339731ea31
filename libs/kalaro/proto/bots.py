"""Messages of the bots service (subjects ``bots.*``).

The lobby asks the bots service to seat a bot (``SeatBot``) after keeping that seat for
one; the bots service picks one of its bot accounts, sits it down through the gateway
(the REST route and the WebSocket every player uses) and plays it until the table
closes or the bot is removed. Bots are players with the ``bot`` role: the lobby lets
them sit only at zero-bet tables, in seats kept for a bot.
"""

from __future__ import annotations

import msgspec


class SeatBot(msgspec.Struct, frozen=True, kw_only=True):
    """Lobby → bots: sit a bot in ``seat`` (kept for a bot by the lobby) and play it."""

    table_id: str
    seat: int
    game: str = ""  # lets the bots service refuse a game it has no policy for at once


class BotSeated(msgspec.Struct, frozen=True, kw_only=True):
    table_id: str
    seat: int
    user_id: str
    display_name: str
