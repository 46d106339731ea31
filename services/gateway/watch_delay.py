"""Spectators of a ranked table see it late (issue 34), so watching cannot help a player.

A ranked table's audience frames are held back by :data:`DELAY_MOVES` moves: each new
audience frame releases the one that many moves older. Every turn of every game is at
least two moves (a draw and a discard), so a spectator is always at least one whole
turn behind the players. When the hand is over (the table is no longer playing) what
was held is released at once: the hand's result is public then anyway.

A spectator who arrives mid-hand is shown the newest frame already released, never the
engine's current view. Seated players are never delayed.
"""

from __future__ import annotations

from collections import deque

#: Moves a ranked table's spectators are behind its players.
DELAY_MOVES = 3


class AudienceDelay:
    """The audience frames of one ranked table not yet shown to its spectators."""

    def __init__(self, moves: int = DELAY_MOVES) -> None:
        self.moves = moves
        self._held: deque[bytes] = deque()
        self.shown: bytes | None = None  # the newest frame released (for newcomers)

    def hold(self, frame: bytes) -> bytes | None:
        """Hold ``frame``; the frame it releases (``moves`` older), if any."""
        self._held.append(frame)
        if len(self._held) <= self.moves:
            return None
        self.shown = self._held.popleft()
        return self.shown

    def release(self) -> list[bytes]:
        """Everything held, oldest first (the hand is over)."""
        out = list(self._held)
        self._held.clear()
        if out:
            self.shown = out[-1]
        return out

    def forget(self) -> None:
        """A new hand: nothing of the last one is shown to newcomers."""
        self._held.clear()
        self.shown = None
