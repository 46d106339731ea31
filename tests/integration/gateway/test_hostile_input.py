"""Hostile input at a real gateway (uvicorn, the session's NATS and Redis, the real
lobby; the auth service's key set stood in): every bad request gets a clear 4xx with
the standard error body, nothing logs a traceback, and the socket survives a bad frame.
"""

from __future__ import annotations

import asyncio
import logging

import httpx
import msgspec
import pytest
import websockets
from nats.aio.client import Client as NATS

from kalaro.bus import Service, ServiceError
from kalaro.bus.redislink import RedisLink
from kalaro.devstack import NatsServer
from kalaro.proto import endpoints
from kalaro.proto.wallet import Balance, GetBalance
from services.gateway.limits import MAX_DEPTH, scan, too_deep
from tests.integration.gateway.world import World, world_of

DEEP = b"[" * 1000 + b"]" * 1000


def assert_bad_request(response: httpx.Response, status: int = 400) -> str:
    assert response.status_code == status, (response.status_code, response.text)
    body = response.json()
    assert set(body) == {"error"} and body["error"]["code"] == "bad_request", body
    message: str = body["error"]["message"]
    return message


def no_traceback(caplog: pytest.LogCaptureFixture) -> None:
    assert not [r for r in caplog.records if r.exc_info], [r.getMessage() for r in caplog.records]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_a_deeply_nested_body_is_a_400_signed_in_or_not(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    body = b'{"email": "a@example.com", "password": ' + DEEP + b"}"
    async with httpx.AsyncClient(base_url=f"http://{world.url}") as http:
        response = await http.post(
            "/api/auth/sign-in", content=body, headers={"content-type": "application/json"}
        )
        assert "nested deeper" in assert_bad_request(response)
        table = b'{"game": "tongits", "bet": 0, "options": {"x": ' + DEEP + b"}}"
        response = await http.post(
            "/api/tables/", content=table,
            headers={"content-type": "application/json", **world.headers("Host", "host")},
        )  # fmt: skip
        assert "nested deeper" in assert_bad_request(response)
        # Too big is refused too (before reading on), still with the standard body.
        big = b'{"email": "' + b"a" * 100_000 + b'", "password": "x"}'
        response = await http.post(
            "/api/auth/sign-in", content=big, headers={"content-type": "application/json"}
        )
        assert_bad_request(response, 413)
    no_traceback(caplog)
    assert [r for r in caplog.records if "nested deeper" in r.getMessage()]


async def test_a_string_bet_makes_no_table(world: World) -> None:
    host = world.headers("Host", "host")
    async with httpx.AsyncClient(base_url=f"http://{world.url}", headers=host) as http:
        response = await http.post("/api/tables/", json={"game": "tongits", "bet": "10"})
        assert "bet" in assert_bad_request(response)
        listed = (await http.get("/api/tables/")).json()
        mine = [t for t in listed["tables"] if t["host_id"] == f"Host-{world.unique}"]
        assert mine == []
        # The same body with a number is fine.
        response = await http.post("/api/tables/", json={"game": "tongits", "bet": 10})
        assert response.status_code == 201, response.text


async def test_huge_integers_in_the_query_are_a_400(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    huge = "99999999999999999999999"
    async with httpx.AsyncClient(base_url=f"http://{world.url}") as http:
        player, admin = world.headers("Ana"), world.headers("Root", "admin")
        for path, headers in (
            (f"/api/wallet/history?before={huge}", player),
            ("/api/wallet/history?before=-1", player),
            (f"/api/wallet/history?limit={huge}", player),
            (f"/api/admin/approvals?offset={huge}", admin),
            ("/api/admin/approvals?kind=everything", admin),
            ("/api/admin/approvals?status=lost", admin),
            (f"/api/tables/?limit={huge}", player),
        ):
            assert_bad_request(await http.get(path, headers=headers))
    no_traceback(caplog)


async def test_a_deep_frame_gets_an_error_with_its_ref_and_the_socket_lives(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    bearer = {"Authorization": f"Bearer {world.token('Ana')}"}
    async with websockets.connect(f"ws://{world.url}/ws", additional_headers=bearer) as ws:
        assert msgspec.json.decode(await ws.recv())["type"] == "welcome"
        await ws.send(b'{"type": "ping", "ref": 7, "x": ' + DEEP + b"}")
        error = msgspec.json.decode(await ws.recv())
        assert error["type"] == "error" and error["code"] == "bad_request", error
        assert error["ref"] == 7 and "nested deeper" in error["message"]
        # An unreadable frame (wrong type) also echoes its ref.
        await ws.send('{"type": "nonsense", "ref": 8}')
        error = msgspec.json.decode(await ws.recv())
        assert error["type"] == "error" and error["ref"] == 8, error
        await ws.send('{"type": "ping", "ref": 9}')
        assert msgspec.json.decode(await ws.recv()) == {"type": "pong", "ref": 9}
    no_traceback(caplog)


async def test_the_socket_takes_its_token_from_the_subprotocol(world: World) -> None:
    protocols = ["kalaro.bearer", world.token("Ben")]
    async with websockets.connect(
        f"ws://{world.url}/ws",
        subprotocols=protocols,  # type: ignore[arg-type]
    ) as ws:
        assert ws.subprotocol == "kalaro.bearer"
        assert msgspec.json.decode(await ws.recv())["type"] == "welcome"


SECURITY = {
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
}


async def test_security_headers_on_api_web_client_and_errors(world: World) -> None:
    async with httpx.AsyncClient(base_url=f"http://{world.url}") as http:
        for path in ("/api/config", "/", "/app.js", "/api/nowhere", "/api/me/"):
            response = await http.get(path)
            for name, value in SECURITY.items():
                assert response.headers.get(name) == value, (path, name)
            csp = response.headers["content-security-policy"]
            assert "frame-ancestors 'none'" in csp
            assert "script-src 'self'" in csp and "unsafe-inline" not in csp, csp
        docs = await http.get("/schema/swagger")
        assert docs.status_code == 200
        assert docs.headers["content-security-policy"] == "frame-ancestors 'none'"


async def test_bursting_past_the_per_user_limit_is_a_429(
    nc: NATS, redis: RedisLink, nats_server: NatsServer, unique: str
) -> None:
    async with (
        world_of(nc, redis, nats_server, unique, rest_user_rate=0.5, rest_user_burst=5) as world,
        httpx.AsyncClient(base_url=f"http://{world.url}") as http,
    ):
        ana, ben = world.headers("Ana"), world.headers("Ben")
        statuses = [(await http.get("/api/tables/", headers=ana)).status_code for _ in range(8)]
        assert statuses[:5] == [200] * 5 and statuses[5:] == [429] * 3, statuses
        refused = await http.get("/api/tables/", headers=ana)
        assert refused.status_code == 429
        assert int(refused.headers["retry-after"]) >= 1
        assert refused.json()["error"]["code"] == "throttled"
        # Another user from the same address is not held back by Ana.
        assert (await http.get("/api/tables/", headers=ben)).status_code == 200


async def test_bursting_past_the_per_address_limit_is_a_429(
    nc: NATS, redis: RedisLink, nats_server: NatsServer, unique: str
) -> None:
    async with (
        world_of(
            nc, redis, nats_server, unique, rest_address_rate=0.5, rest_address_burst=3
        ) as world,
        httpx.AsyncClient(base_url=f"http://{world.url}") as http,
    ):
        statuses = [(await http.get("/api/config")).status_code for _ in range(5)]
        assert statuses == [200, 200, 200, 429, 429], statuses
        refused = await http.get("/api/schema/messages")
        assert refused.status_code == 429 and refused.headers["retry-after"]
        # A liveness probe from the same address is never refused.
        assert (await http.get("/healthz")).status_code == 200


async def test_the_server_log_never_shows_a_token(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    # uvicorn's loggers do not propagate to the root, where caplog listens.
    loggers = [logging.getLogger(n) for n in ("uvicorn.access", "uvicorn.error")]
    for logger in loggers:
        logger.addHandler(caplog.handler)
    try:
        caplog.set_level(logging.INFO)
        token = world.token("Ana")
        async with websockets.connect(f"ws://{world.url}/ws?token={token}") as ws:
            assert msgspec.json.decode(await ws.recv())["type"] == "welcome"
        async with websockets.connect(f"ws://{world.url}/ws?token={token}x") as ws:
            assert msgspec.json.decode(await ws.recv())["type"] == "error"  # refused, and logged
        async with httpx.AsyncClient(base_url=f"http://{world.url}") as http:
            await http.get(f"/api/config?token={token}&x=1")
        await asyncio.sleep(0.1)
    finally:
        for logger in loggers:
            logger.removeHandler(caplog.handler)
    server = ("uvicorn", "kalaro", "litestar")  # (httpx, the test's client, logs its URLs)
    lines = [r.getMessage() for r in caplog.records if r.name.startswith(server)]
    assert [line for line in lines if "refused" in line or "token" in line.lower()], lines
    assert not [line for line in lines if token in line], lines
    assert [line for line in lines if "/api/config?token=[redacted]&x=1" in line], lines


def test_the_depth_scan_skips_strings_and_finds_the_top_level_ref() -> None:
    assert scan(b'{"a": "[[[[\\"[[[", "ref": 3, "b": [[1]]}') == (3, 3)
    assert scan(b'{"x": {"ref": 5}, "ref" : -2}') == (2, -2)
    assert scan(b"[]") == (1, None)
    assert not too_deep(b"[" * MAX_DEPTH + b"]" * MAX_DEPTH)
    assert too_deep(b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1))
    assert not too_deep(b'{"s": "' + b"[" * 100 + b'"}')


async def test_an_error_code_the_gateway_does_not_know_is_a_4xx_with_that_code(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    # A newer wallet, mid-upgrade, refuses with a code this gateway has never heard of.
    wallet = Service("hostile-test-wallet")

    async def balance(_: GetBalance) -> Balance:
        raise ServiceError("brand_new_refusal", "no balance for you today")

    wallet.add(endpoints.WALLET_BALANCE, balance)
    await wallet.start(world.nc)
    caplog.set_level(logging.INFO)
    try:
        async with httpx.AsyncClient(base_url=f"http://{world.url}") as http:
            response = await http.get("/api/wallet/", headers=world.headers("Payer"))
    finally:
        await wallet.stop()
    assert response.status_code == 400, response.text
    assert response.json() == {
        "error": {"code": "brand_new_refusal", "message": "no balance for you today"}
    }
    no_traceback(caplog)
