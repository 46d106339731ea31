"""Encoders and decoders, built once per type and reused (msgspec's advice)."""

from __future__ import annotations

from typing import Any

import msgspec

_encoder = msgspec.json.Encoder()


def encode(message: Any) -> bytes:
    return _encoder.encode(message)


_decoders: dict[Any, msgspec.json.Decoder[Any]] = {}


def decoder(type_: Any) -> msgspec.json.Decoder[Any]:
    """A JSON decoder for ``type_``, built on first use and kept.

    Internal consumers ignore unknown fields, so services upgrade one at a time.
    """
    found = _decoders.get(type_)
    if found is None:
        found = _decoders[type_] = msgspec.json.Decoder(type_)
    return found


def decode(data: bytes, type_: type[Any]) -> Any:
    return decoder(type_).decode(data)
