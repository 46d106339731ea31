"""A request to a table's owner (``Endpoint.owned``) that finds nobody subscribed, as
while a partition changes hands, is sent again until an owner answers; any other
request finding nobody fails at once. On a real nats-server."""

from __future__ import annotations

import asyncio

import msgspec
import pytest
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg

from kalaro.bus import RemoteError, request
from kalaro.bus.codec import encode
from kalaro.proto import errors as codes
from kalaro.proto.endpoints import Endpoint


class Ping(msgspec.Struct, frozen=True, kw_only=True):
    n: int


async def _owner_arrives(nc: NATS, subject: str, after: float, seen: list[int]) -> None:
    await asyncio.sleep(after)

    async def answer(msg: Msg) -> None:
        seen.append(msgspec.json.decode(msg.data, type=Ping).n)
        await msg.respond(encode(Ping(n=seen[-1] + 1)))

    await nc.subscribe(subject, cb=answer)
    await nc.flush()


async def test_an_owned_request_waits_for_an_owner_and_is_received_once(
    nc: NATS, unique: str
) -> None:
    owned = Endpoint(f"{unique}.act.3", Ping, Ping, owned=True)
    seen: list[int] = []
    arriving = asyncio.create_task(_owner_arrives(nc, owned.subject, 0.4, seen))
    reply = await request(nc, owned, Ping(n=41), timeout=2.0)
    await arriving
    assert reply == Ping(n=42)
    assert seen == [41]  # the sends before the owner reached nobody: it got one


async def test_without_an_owner_for_good_it_gives_up_and_others_fail_at_once(
    nc: NATS, unique: str
) -> None:
    with pytest.raises(RemoteError) as owned_exc:
        await request(nc, Endpoint(f"{unique}.act.4", Ping, Ping, owned=True), Ping(n=1))
    assert owned_exc.value.code == codes.UNAVAILABLE
    loop = asyncio.get_running_loop()
    started = loop.time()
    with pytest.raises(RemoteError) as plain_exc:
        await request(nc, Endpoint(f"{unique}.plain", Ping, Ping), Ping(n=1), timeout=30.0)
    assert plain_exc.value.code == codes.UNAVAILABLE
    # NATS said "no responders" and the request failed then, not when its 30 s ran out.
    assert loop.time() - started < 10
