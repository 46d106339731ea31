"""uvicorn's WebSocket protocol, with text frames to clients written in one step.

Every move fans out as several text frames, and uvicorn hands each one to
``websockets``' sans-I/O protocol, whose framing (state checks, a ``Frame`` object,
``serialize`` into a buffer, ``data_to_send``) cost about a tenth of the gateway's CPU
at 500 bench tables. A server's frame is just a header and the unmasked payload, so
while the connection is plainly open (handshake done, no close begun, not paused by
flow control, no extension such as permessage-deflate) this class writes that itself.
Everything else, including every error path, is uvicorn's own ``send``.
"""

from __future__ import annotations

from typing import Any

from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol
from websockets.protocol import State


def text_frame(data: bytes) -> bytes:
    """A final, unmasked text frame (RFC 6455 section 5.2) carrying ``data``."""
    size = len(data)
    if size < 126:
        return bytes((0x81, size)) + data
    if size < 1 << 16:
        return b"\x81\x7e" + size.to_bytes(2, "big") + data
    return b"\x81\x7f" + size.to_bytes(8, "big") + data


class TextFrameWebSocketProtocol(WebSocketsSansIOProtocol):
    async def send(self, message: Any) -> None:
        text = message.get("text") if message["type"] == "websocket.send" else None
        if (
            text is not None
            and self.handshake_complete
            and not self.close_sent
            and not self.disconnected
            and self.initial_response is None
            and self.writable.is_set()
            and self.conn.state is State.OPEN
            and not self.conn.extensions
        ):
            self.transport.write(text_frame(text.encode()))
            return
        await super().send(message)
