"""Python SDK for the KaLaro gateway: REST calls and the table WebSocket.

Used by the tests, the load generator and the bots; a reference for client authors
on other platforms (the protocol page in ``docs/`` describes the same frames).

    async with KalaroClient("http://127.0.0.1:8000") as client:
        await client.sign_in("juan@example.com", "…")
        tables = await client.list_tables(game="tongits")
        async with client.table_socket() as socket:
            await socket.subscribe(tables.tables[0].table_id)

The socket runs on the ``websockets`` library; ``table_socket(transport="fast")`` opts
into the SDK's own frame reader (:mod:`kalaro.client.wire`), for load generators.

Reads and moves answered ``unavailable`` (a service restarting) are tried again with
backoff for up to a minute (``KalaroClient(..., retry=seconds or Backoff(...))``).
"""

from kalaro.client.http import ApiError, KalaroClient
from kalaro.client.retry import Backoff
from kalaro.client.socket import TableSocket

__all__ = ["ApiError", "Backoff", "KalaroClient", "TableSocket"]
