"""The bots service gets its accounts ready before it answers ``bots.seat``.

After ``make run`` the first practice table once failed: the bots service was still
creating its bot accounts (hashing their passwords) when the lobby asked for bots, and
the lobby's wait ran out. Now the service creates every account first (asking again while
the auth service is itself starting) and only then registers ``bots.seat``; until then
nobody answers and the lobby asks again (see ``tests/integration/lobby``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from nats.aio.client import Client as NATS

from kalaro.bus import RemoteError, request
from kalaro.bus.redislink import RedisLink
from kalaro.proto import errors as codes
from kalaro.proto import subjects
from kalaro.proto.auth import SignIn, TokenPair
from kalaro.proto.bots import BotSeated, SeatBot
from services.bots.accounts import credentials
from services.bots.bootstrap import build_service
from services.bots.service import Bots
from services.bots.settings import MIN_POOL_SIZE, BotSettings
from tests.integration.bots.conftest import auth_service

SECRET = b"the bots' secret in this test"


async def test_seat_is_answered_only_once_every_account_exists(
    nc: NATS, redis: RedisLink, database_url: str, tmp_path: Path, unique: str
) -> None:
    # No lobby and no gateway (nothing listens on port 9): seating fails fast, which is
    # enough to tell "answered" from "nobody answers".
    settings = BotSettings(
        "http://127.0.0.1:9", SECRET, pool_size=MIN_POOL_SIZE, redis_prefix=f"test:{unique}:bots:"
    )
    bots = Bots(nc, redis, settings, replica=f"{unique}-r")
    service = build_service(bots)

    async def start() -> None:  # as services/bots/__main__.py does: accounts, then serve
        await bots.prepare(retry_pause=0.1)
        await service.start(nc)

    starting = asyncio.create_task(start())
    try:
        # The auth service is not up yet: the accounts cannot exist, nobody answers.
        await asyncio.sleep(0.5)
        assert not starting.done()
        with pytest.raises(RemoteError) as silent:
            await request(
                nc, subjects.BOTS_SEAT, SeatBot(table_id="t", seat=1, game="tongits"), BotSeated
            )
        assert silent.value.code == codes.UNAVAILABLE
        assert "no service answered" in silent.value.message
        async with auth_service(nc, redis, database_url, tmp_path, unique):
            await asyncio.wait_for(starting, 60)
            # Every account of the pool exists, with the password derived from the secret.
            for index in range(MIN_POOL_SIZE):
                creds = credentials(SECRET, index)
                signed = await request(
                    nc,
                    subjects.AUTH_SIGN_IN,
                    SignIn(email=creds.email, password=creds.password),
                    TokenPair,
                )
                assert signed.user.roles == ("player", "bot")
                assert signed.user.display_name == creds.display_name
            # And now bots.seat answers (here: no lobby to ask about the table, it says).
            with pytest.raises(RemoteError) as answered:
                await request(
                    nc, subjects.BOTS_SEAT, SeatBot(table_id="t", seat=1, game="tongits"), BotSeated
                )
            assert answered.value.code == codes.UNAVAILABLE
            assert subjects.LOBBY_GET_TABLE in answered.value.message
    finally:
        starting.cancel()
        await asyncio.gather(starting, return_exceptions=True)
        await service.stop()
        await bots.stop()
