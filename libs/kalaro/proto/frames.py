"""What an engine publishes after each write: one message per table per move.

A :class:`TableFrames` carries every seat's client frame and, while someone watches,
the audience's, each already encoded once as the client will receive it (a JSON
``HandView``). It is published on ``subjects.table_frames``; each gateway process
holds one subscription per table and hands each socket only its own part
(:func:`part_for`). The message carries every seat's private view, so it never leaves
the trusted backend: a gateway reads it, a socket only ever gets its slice.

It is msgpack, not JSON: the parts are bytes, kept whole (no base64, no re-encoding).
"""

from __future__ import annotations

import msgspec


class TableFrames(msgspec.Struct, frozen=True, kw_only=True, array_like=True):
    """One move's frames for one table (an engine → gateway message, internal)."""

    version: int  # the hand's version these frames show
    seats: tuple[bytes, ...]  # index = seat: that seat's own frame, for its sockets only
    audience: bytes | None = None  # the spectators' frame; None: nobody was watching


_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(TableFrames)


def encode_frames(frames: TableFrames) -> bytes:
    return _encoder.encode(frames)


def decode_frames(data: bytes) -> TableFrames:
    return _decoder.decode(data)


def part_for(frames: TableFrames, seat: int | None) -> bytes | None:
    """What a socket of ``seat`` (None: a spectator) receives of ``frames``; None:
    nothing (no audience frame was built, or no such seat)."""
    if seat is None:
        return frames.audience
    if 0 <= seat < len(frames.seats):
        return frames.seats[seat]
    return None
