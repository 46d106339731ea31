"""kalaro.wsframes against the ``websockets`` library's own framing: what we write is
byte for byte what it would write, and what it writes (masked, as a client) we read,
at every size of length field and split at every awkward place."""

from __future__ import annotations

import pytest
from websockets.frames import Frame, Opcode

from kalaro.wsframes import (
    BINARY,
    CLOSE,
    PONG,
    TEXT,
    FrameReader,
    close_code,
    close_payload,
    control_frame,
    text_frame,
)

SIZES = (0, 1, 125, 126, 1000, 65535, 65536, 200_000)


def test_server_frames_are_what_websockets_would_write() -> None:
    for size in SIZES:
        data = ("é" * size).encode()[:size]
        assert text_frame(data) == Frame(Opcode.TEXT, data).serialize(mask=False, extensions=[])
    close = Frame(Opcode.CLOSE, close_payload(1012, "restart")).serialize(mask=False, extensions=[])
    assert control_frame(CLOSE, close_payload(1012, "restart")) == close
    assert close_code(close_payload(4401)) == 4401 and close_code(b"") == 1005


def reader(max_size: int = 1 << 20) -> tuple[FrameReader, list[tuple[int, bytes]], list[int]]:
    messages: list[tuple[int, bytes]] = []
    errors: list[int] = []
    frames = FrameReader(
        masked=True,
        max_size=max_size,
        on_message=lambda op, data: messages.append((op, data)),
        on_control=lambda op, data: messages.append((op, data)),
        on_error=lambda code, why: errors.append(code),
    )
    return frames, messages, errors


@pytest.mark.parametrize("chunk", [1, 7, 1 << 20])
def test_masked_client_frames_of_every_size_arrive_whole_however_split(chunk: int) -> None:
    frames, messages, errors = reader()
    stream = b"".join(
        Frame(Opcode.TEXT, b"x" * size).serialize(mask=True, extensions=[]) for size in SIZES
    ) + Frame(Opcode.BINARY, b"\x00\xff").serialize(mask=True, extensions=[])
    buffer = bytearray()
    for start in range(0, len(stream), chunk):
        buffer += stream[start : start + chunk]
        frames.feed(buffer)
    assert not buffer and not errors
    assert messages == [(TEXT, b"x" * size) for size in SIZES] + [(BINARY, b"\x00\xff")]


def test_a_fragmented_message_over_max_size_is_refused_before_it_is_whole() -> None:
    frames, messages, errors = reader(max_size=100)
    buffer = bytearray()
    for _ in range(3):  # 3 x 40 bytes, none of them final
        buffer += Frame(Opcode.CONT if messages or errors or _ else Opcode.TEXT, b"y" * 40,
                        fin=False).serialize(mask=True, extensions=[])  # fmt: skip
        frames.feed(buffer)
    assert errors == [1009] and not messages
    buffer += Frame(Opcode.TEXT, b"late").serialize(mask=True, extensions=[])
    frames.feed(buffer)
    assert not messages  # a failed reader reads nothing more


def test_a_control_frame_is_cut_to_125_bytes_and_says_so() -> None:
    frame = control_frame(PONG, b"z" * 200)
    assert frame[1] == 125 and len(frame) == 2 + 125  # the header tells the truth
    seen: list[tuple[int, bytes]] = []
    client = FrameReader(
        masked=False,
        max_size=1 << 10,
        on_message=lambda op, data: seen.append((op, data)),
        on_control=lambda op, data: seen.append((op, data)),
        on_error=lambda code, why: seen.append((code, why.encode())),
    )
    client.feed(bytearray(frame))
    assert seen == [(PONG, b"z" * 125)]
