"""WebSocket frames (RFC 6455 section 5), read and written by both ends of our sockets.

The SDK's fast reader (:mod:`kalaro.client.wire`) and the gateway's ``/ws`` server
(:mod:`services.gateway.wsserver`) parse frames with one :class:`FrameReader`; they
differ only in which side masks. ``websockets``' generator-based parser cost a fifth of
a load generator's CPU, and a parser object per socket several KiB of an idle gateway
socket; this one is a few byte reads per frame and a handful of slots.

What the reader enforces, for either side: fragments are joined in order; control
frames are at most 125 bytes and never fragmented; reserved bits (no extension is
negotiated on our sockets) and unknown opcodes are protocol errors (1002); frames
from a client must be masked and frames from a server must not (1002); a message over
``max_size`` is refused (1009) before its bytes are kept; a text message that is not
UTF-8 is refused (1007).
"""

from __future__ import annotations

from collections.abc import Callable

from websockets.speedups import apply_mask

FIN = 0x80
MASKED = 0x80
RESERVED = 0x70
CONT, TEXT, BINARY, CLOSE, PING, PONG = 0x0, 0x1, 0x2, 0x8, 0x9, 0xA
PROTOCOL_ERROR, BAD_DATA, TOO_BIG = 1002, 1007, 1009
MAX_CONTROL = 125


def frame_header(opcode: int, size: int) -> bytes:
    """A final, unmasked (server) frame's header for a ``size``-byte payload."""
    if size < 126:
        return bytes((FIN | opcode, size))
    if size < 1 << 16:
        return bytes((FIN | opcode, 126)) + size.to_bytes(2, "big")
    return bytes((FIN | opcode, 127)) + size.to_bytes(8, "big")


def text_frame(data: bytes) -> bytes:
    """A final, unmasked (server) text frame carrying ``data`` (UTF-8 already)."""
    return frame_header(TEXT, len(data)) + data


def control_frame(opcode: int, payload: bytes = b"") -> bytes:
    """An unmasked (server) close, ping or pong frame."""
    payload = payload[:MAX_CONTROL]  # a control frame carries at most 125 bytes
    return frame_header(opcode, len(payload)) + payload


def close_payload(code: int, reason: str = "") -> bytes:
    """A close frame's body: the code, then as much of the reason as fits."""
    return code.to_bytes(2, "big") + reason.encode()[: MAX_CONTROL - 2]


def close_code(payload: bytes) -> int:
    """The code a close frame carries (1005, "none", when it has no body)."""
    if len(payload) < 2:
        return 1005
    return int.from_bytes(payload[:2], "big")


class FrameReader:
    """Frames out of a byte buffer: messages to ``on_message``, control frames to
    ``on_control``, and a broken rule once to ``on_error`` (after which it reads nothing).

    ``masked`` is True on the server side (a client must mask every frame), False on the
    client side. ``on_message(opcode, payload)`` gets TEXT or BINARY with the whole
    message; a TEXT message is checked to be UTF-8 first unless ``check_text`` is False
    (the caller decodes it anyway and fails it with :meth:`fail` if it is not).
    """

    __slots__ = (
        "_check_text",
        "_fragments",
        "_masked",
        "failed",
        "max_size",
        "on_control",
        "on_error",
        "on_message",
    )

    def __init__(
        self,
        *,
        masked: bool,
        max_size: int,
        on_message: Callable[[int, bytes], None],
        on_control: Callable[[int, bytes], None],
        on_error: Callable[[int, str], None],
        check_text: bool = True,
    ) -> None:
        self._masked = masked
        self._check_text = check_text
        self.max_size = max_size
        self.on_message = on_message
        self.on_control = on_control
        self.on_error = on_error
        self._fragments: list[bytes] | None = None  # a message begun and not finished
        self.failed = False  # the peer broke the protocol, or closed: read nothing more

    def feed(self, buffer: bytearray) -> None:
        """Take every complete frame off the front of ``buffer`` (the rest stays)."""
        start, size = 0, len(buffer)
        mask_size = 4 if self._masked else 0
        while size - start >= 2 and not self.failed:
            first, second = buffer[start], buffer[start + 1]
            if bool(second & MASKED) != self._masked or first & RESERVED:
                side = "an unmasked frame from a client" if self._masked else "a masked frame"
                self.fail(PROTOCOL_ERROR, f"{side} or reserved bits")
                break
            length, head = second & 0x7F, 2
            if length == 126:
                if size - start < 4:
                    break
                length, head = int.from_bytes(buffer[start + 2 : start + 4], "big"), 4
            elif length == 127:
                if size - start < 10:
                    break
                length, head = int.from_bytes(buffer[start + 2 : start + 10], "big"), 10
            if length > self.max_size:
                self.fail(TOO_BIG, f"message over {self.max_size} bytes")
                break
            stop = start + head + mask_size + length
            if stop > size:
                break  # the rest of this frame is still on its way
            payload = bytes(buffer[start + head + mask_size : stop])
            if mask_size:
                payload = apply_mask(payload, bytes(buffer[start + head : start + head + 4]))
            self._on_frame(first & FIN, first & 0x0F, payload)
            start = stop
        del buffer[:start]

    def _on_frame(self, fin: int, opcode: int, payload: bytes) -> None:
        if opcode in (TEXT, BINARY, CONT):
            fragments = self._fragments
            if (opcode == CONT) != (fragments is not None):
                self.fail(PROTOCOL_ERROR, "fragments out of order")
                return
            if not fin:
                if fragments is None:
                    self._fragments = fragments = [bytes((opcode,))]  # the first says the kind
                fragments.append(payload)
                if sum(map(len, fragments)) - 1 > self.max_size:
                    self.fail(TOO_BIG, f"message over {self.max_size} bytes")
                return
            if fragments is not None:
                opcode = fragments[0][0]
                payload = b"".join((*fragments[1:], payload))
                self._fragments = None
            if opcode == TEXT and self._check_text:
                try:
                    payload.decode()
                except UnicodeDecodeError:
                    self.fail(BAD_DATA, "a message that is not UTF-8")
                    return
            self.on_message(opcode, payload)
        elif opcode in (CLOSE, PING, PONG):
            if not fin or len(payload) > MAX_CONTROL:
                self.fail(PROTOCOL_ERROR, "a fragmented or oversized control frame")
                return
            if opcode == CLOSE:
                self.failed = True  # nothing counts after a close frame
            self.on_control(opcode, payload)
        else:
            self.fail(PROTOCOL_ERROR, f"unknown opcode {opcode}")

    def fail(self, code: int, reason: str) -> None:
        """Stop reading, and tell ``on_error`` why (once)."""
        if self.failed:
            return
        self.failed = True
        self.on_error(code, reason)
