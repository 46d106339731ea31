"""Display names for the leaderboards, from auth (the name a player chose may change),
kept a minute per process so a board asked for often costs auth little."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Mapping

from nats.aio.client import Client as NATS

from kalaro.bus import request as bus_request
from kalaro.proto import endpoints
from kalaro.proto.auth import GetProfile

NAME_TTL_SECONDS = 60.0
_MAX_KEPT = 10_000


class NameCache:
    def __init__(
        self,
        nc: NATS | None,
        *,
        timeout: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._nc = nc  # None: no auth to ask (unit tests): the stored names are used
        self._timeout = timeout
        self._clock = clock
        self._kept: dict[str, tuple[float, str]] = {}

    async def display_names(
        self, user_ids: Iterable[str], fallback: Mapping[str, str]
    ) -> dict[str, str]:
        """Each user's display name as auth has it; if auth does not answer in time,
        the name ``fallback`` holds (the one their last rated hand showed)."""
        now = self._clock()
        wanted = list(dict.fromkeys(user_ids))
        names = {u: kept[1] for u in wanted if (kept := self._kept.get(u)) and kept[0] > now}
        missing = [u for u in wanted if u not in names]
        if missing and self._nc is not None:
            nc = self._nc
            found = await asyncio.gather(
                *(
                    bus_request(
                        nc, endpoints.AUTH_PROFILE, GetProfile(user_id=u), timeout=self._timeout
                    )
                    for u in missing
                ),
                return_exceptions=True,
            )
            if len(self._kept) > _MAX_KEPT:
                self._kept.clear()
            for user_id, profile in zip(missing, found, strict=True):
                if isinstance(profile, BaseException):
                    continue
                names[user_id] = profile.display_name
                self._kept[user_id] = (now + NAME_TTL_SECONDS, profile.display_name)
        for user_id in wanted:
            names.setdefault(user_id, fallback.get(user_id, ""))
        return names
