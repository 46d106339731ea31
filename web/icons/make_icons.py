"""Draw the app icons (``python web/icons/make_icons.py``): stdlib only (zlib, struct).

A white heart on KaLaro green. ``icon-192.png`` and ``icon-512.png`` have rounded
corners; ``maskable-512.png`` fills the square and keeps the heart inside the central
safe zone (a circle of 80% of the width) so any mask shape leaves it whole.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

GREEN = (0x13, 0x6F, 0x3F)
WHITE = (0xFF, 0xFF, 0xFF)
SAMPLES = 3  # per axis, for smooth edges


def _heart(x: float, y: float) -> bool:
    """Inside the heart curve (x² + y² − 1)³ ≤ x²y³, for x, y in about [-1.3, 1.3]."""
    a = x * x + y * y - 1
    return a * a * a - x * x * y * y * y <= 0


def _inside_rounded(px: float, py: float, size: int, radius: float) -> bool:
    cx = min(max(px, radius), size - radius)
    cy = min(max(py, radius), size - radius)
    return (px - cx) ** 2 + (py - cy) ** 2 <= radius * radius


def draw(size: int, *, maskable: bool) -> bytes:
    heart_scale = size * (0.24 if maskable else 0.30)  # heart half-width in pixels
    radius = 0 if maskable else size * 0.2
    rows = []
    step = 1 / SAMPLES
    for py in range(size):
        row = bytearray([0])  # filter: none
        for px in range(size):
            bg = heart = 0
            for sy in range(SAMPLES):
                for sx in range(SAMPLES):
                    fx, fy = px + (sx + 0.5) * step, py + (sy + 0.5) * step
                    if maskable or _inside_rounded(fx, fy, size, radius):
                        bg += 1
                        # Centred, y up, nudged down so the heart sits optically centred.
                        hx = (fx - size / 2) / heart_scale
                        hy = -(fy - size / 2 - size * 0.02) / heart_scale
                        if _heart(hx, hy):
                            heart += 1
            total = SAMPLES * SAMPLES
            t = heart / max(bg, 1)
            colour = [round(g + (w - g) * t) for g, w in zip(GREEN, WHITE, strict=True)]
            row += bytes([*colour, round(255 * bg / total)])
        rows.append(bytes(row))
    return png(size, size, b"".join(rows))


def png(width: int, height: int, raw: bytes) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def main() -> None:
    here = Path(__file__).parent
    for name, size, maskable in [
        ("icon-192.png", 192, False),
        ("icon-512.png", 512, False),
        ("maskable-512.png", 512, True),
    ]:
        (here / name).write_bytes(draw(size, maskable=maskable))
        print(f"wrote {here / name}")


if __name__ == "__main__":
    main()
