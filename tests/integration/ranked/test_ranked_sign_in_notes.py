"""The gateway's "seen from" notes (services/gateway/notify.py) after real password
sign-ins through a real gateway and auth service: two accounts signing in on one
browser share a device id in ranked's eyes, and the address is the client's."""

from __future__ import annotations

import asyncio

from nats.aio.client import Client as NATS
from nats.aio.msg import Msg

from kalaro.bus.codec import decode
from kalaro.proto import ranked as rk
from kalaro.proto import subjects
from services.gateway.notify import device_id_of
from tests.integration.gateway.test_auth_gateway import Stack
from tests.integration.gateway.test_auth_gateway import stack as stack  # the fixture
from tests.integration.ranked.ranked_helpers import eventually


async def test_two_accounts_on_one_browser_are_noted_with_one_device(
    nc: NATS,
    stack: Stack,
) -> None:
    notes: list[rk.SeenFrom] = []

    async def on_note(msg: Msg) -> None:
        notes.append(decode(msg.data, rk.SeenFrom))

    sub = await nc.subscribe(subjects.RANKED_SEEN, cb=on_note)
    try:
        _, first = await stack.sign_up("ana")  # this client's cookie jar is the browser
        ana = first["user"]["user_id"]
        browser_device = device_id_of(stack.direct.cookies.get("kalaro_device", path="/api/auth"))
        assert browser_device, "auth issued a device cookie"
        _, second = await stack.sign_up("ben")
        ben = second["user"]["user_id"]

        async def both_noted() -> bool:
            return {ana, ben} <= {n.user_id for n in notes}

        await eventually(both_noted)
        await asyncio.sleep(0.1)
        ana_devices = {n.device_id for n in notes if n.user_id == ana}
        ben_devices = {n.device_id for n in notes if n.user_id == ben}
        assert browser_device in ana_devices
        assert browser_device in ben_devices, "ben signed in with ana's device cookie"
        assert {n.address for n in notes if n.user_id in (ana, ben)} == {"127.0.0.1"}
    finally:
        await sub.unsubscribe()


def test_device_ids_are_read_from_well_formed_cookies_only() -> None:
    good = "v1.user.0123456789abcdef0123456789abcdef.1700000000.mac"
    assert device_id_of(good) == "0123456789abcdef0123456789abcdef"
    for bad in ("", "v2.user.0123456789abcdef0123456789abcdef.1.mac", "v1.user.short.1.mac", "x"):
        assert device_id_of(bad) == ""
