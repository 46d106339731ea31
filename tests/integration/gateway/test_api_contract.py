"""The API does what its document says, at a real gateway (uvicorn, the session's NATS
and Redis, the real lobby; the auth service's key set stood in).

- Who may call a route is settled before its body is read: a player posting anything at
  all to an admin or host route gets the same 403, never a 400 that names fields.
- A body is read only as ``application/json``: anything else is 415 and changes nothing.
- A wrong method is 405 with ``Allow``; every answer, errors and refused WebSocket
  handshakes too, carries the security headers.
- Values the document forbids are refused: a trailing newline after a pattern, a
  ``before`` of 0, a negative seat, control characters.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest

from services.gateway.limits import security_headers
from tests.integration.gateway.test_wsserver import handshake, raw
from tests.integration.gateway.world import World

#: Bodies a caller might probe a route's schema with: wrong fields, wrong types, not JSON.
PROBES = [b'{"nonsense": true}', b"[1, 2]", b'{"seat": "x", "amount": -1}', b"not json", b""]
JSON = {"content-type": "application/json"}


@pytest.fixture
def gateway_settings() -> dict[str, Any]:
    # The rate limits off: these tests ask many routes quickly, and a 429 is not the point.
    return {"rest_user_rate": 0, "rest_address_rate": 0}


@pytest.fixture
async def http(world: World) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(base_url=f"http://{world.url}", timeout=15) as client:
        yield client


async def _document(http: httpx.AsyncClient) -> dict[str, Any]:
    doc: dict[str, Any] = (await http.get("/schema/openapi.json")).json()
    return doc


def _operations(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (method.upper(), path, op)
        for path, item in doc["paths"].items()
        for method, op in item.items()
    ]


def _roles(op: dict[str, Any]) -> list[str]:
    return [role for need in op.get("security", ()) for role in need.get("bearer", ())]


async def _table(http: httpx.AsyncClient, world: World, **fields: Any) -> str:
    body = {"game": "tongits", "bet": 0, **fields}
    created = await http.post("/api/tables", json=body, headers=world.headers("Hostess", "host"))
    assert created.status_code == 201, created.text
    table_id: str = created.json()["table"]["table_id"]
    return table_id


def _url(path: str, table_id: str) -> str:
    return (
        path.replace("{table_id}", table_id)
        .replace("{request_id}", "cr_1")
        .replace("{approval_id}", "ap_1")
        .replace("{user_id}", "u_1")
        .replace("{game}", "tongits")
        .replace("{hand_id}", "h_1")
    )


def _has_security_headers(response: httpx.Response) -> None:
    for name, value in security_headers(response.url.path):
        assert response.headers.get(name.decode()) == value.decode(), (response.url, name)


async def test_a_player_gets_the_same_403_from_every_admin_and_host_route_whatever_the_body(
    http: httpx.AsyncClient, world: World
) -> None:
    doc = await _document(http)
    table_id = await _table(http, world)
    player = {**world.headers("Pat"), **JSON}
    guarded = [(m, p, op) for m, p, op in _operations(doc) if _roles(op)]
    assert {p for _, p, _ in guarded} >= {
        "/api/admin/grants",
        "/api/admin/users",
        "/api/tables/{table_id}/deal",
        "/api/tables/{table_id}/remove",
        "/api/tables/{table_id}/bots",
    }
    for method, path, op in guarded:
        answers = set()
        for body in PROBES:
            url = _url(path, table_id)
            response = await http.request(method, url, content=body, headers=player)
            assert response.status_code == 403, (method, path, body, response.text)
            assert response.json()["error"]["code"] == "forbidden"
            _has_security_headers(response)
            answers.add(response.content)
        assert len(answers) == 1, (method, path, answers)  # the body changed nothing
        # No token at all: 401, and again the body is never read.
        anonymous = await http.request(method, _url(path, table_id), content=b"[1]", headers=JSON)
        assert anonymous.status_code == 401, (method, path, anonymous.text)
        assert "requestBody" not in op or b"data" not in anonymous.content
    # The same player may send those bodies where they may call: there, they are 400s.
    sit = await http.post(f"/api/tables/{table_id}/sit", content=PROBES[0], headers=player)
    assert sit.status_code == 400 and "nonsense" in sit.text


async def test_a_body_not_sent_as_json_is_415_and_changes_nothing(
    http: httpx.AsyncClient, world: World
) -> None:
    doc = await _document(http)
    table_id = await _table(http, world)
    callers = {
        "admin": world.headers("Root", "admin"),
        "host": world.headers("Hostess", "host"),
        "table-host": world.headers("Hostess", "host"),
    }
    posted = 0
    for method, path, op in _operations(doc):
        if "requestBody" not in op:
            continue
        roles = _roles(op)
        caller = callers[roles[0]] if roles else world.headers("Pat")
        for kind in ("text/plain", "application/x-www-form-urlencoded", "text/plain; a=json"):
            body = b'{"enabled": false, "seat": 0, "approve": true, "reason": "x"}'
            headers = {**caller, "content-type": kind}
            url = _url(path, table_id)
            response = await http.request(method, url, content=body, headers=headers)
            assert response.status_code == 415, (method, path, kind, response.text)
            assert response.json()["error"]["code"] == "unsupported_media_type"
            _has_security_headers(response)
        posted += 1
    assert posted >= 15
    # Nothing happened: chat is still on, nobody sat down.
    table = await http.get(f"/api/tables/{table_id}", headers=world.headers("Pat"))
    assert table.json()["chat_enabled"] is True
    assert table.json()["seats"] == [None] * len(table.json()["seats"])
    # Sent as JSON, the same body acts.
    chat = await http.post(
        f"/api/tables/{table_id}/chat-setting",
        json={"enabled": False},
        headers=callers["table-host"],
    )
    assert chat.status_code == 200 and chat.json()["chat_enabled"] is False


async def test_a_wrong_method_is_405_with_allow_and_its_own_code(http: httpx.AsyncClient) -> None:
    for method, path, allowed in [
        ("DELETE", "/api/wallet", {"GET"}),
        ("PUT", "/api/tables/t_1/sit", {"POST"}),
        ("PATCH", "/api/auth/sign-in", {"POST"}),
    ]:
        response = await http.request(method, path)
        assert response.status_code == 405, (method, path, response.text)
        assert response.json()["error"]["code"] == "method_not_allowed"
        assert allowed <= {m.strip() for m in response.headers["allow"].split(",")}
        _has_security_headers(response)


async def test_what_the_document_forbids_is_refused(http: httpx.AsyncClient, world: World) -> None:
    table_id = await _table(http, world)
    player, admin = world.headers("Pat"), world.headers("Root", "admin")
    for path in ("/api/hands/tongits%0A/h_1", "/api/hands/tongits%0A/h_1/replay"):
        response = await http.get(path, headers=player)
        assert response.status_code == 400, (path, response.text)
    refused: list[tuple[str, str, dict[str, str], dict[str, Any] | None, dict[str, Any]]] = [
        ("GET", "/api/wallet/history", player, None, {"before": 0}),
        ("GET", "/api/admin/users/u_1/ledger", admin, None, {"before": 0}),
        ("GET", "/api/admin/users", admin, None, {"q": "ana\x07"}),
        ("GET", "/api/admin/users", admin, None, {"q": "ana\n"}),
        ("POST", f"/api/tables/{table_id}/sit", player, {"seat": -1}, {}),
        ("POST", f"/api/tables/{table_id}/ready", player, {"entropy": "dice\n"}, {}),
        ("POST", f"/api/tables/{table_id}/ready", player, {"entropy": "\x1b[2J"}, {}),
        ("POST", f"/api/tables/{table_id}/sit", player, {"seat": 0, "extra": 1}, {}),
        ("POST", "/api/admin/grants", admin,
         {"user_id": "u_1", "amount": 5, "reason": "r", "request_key": "a\n"}, {}),
        ("POST", "/api/practice", player, {"game": "tongits\n"}, {}),
    ]  # fmt: skip
    for method, path, headers, body, params in refused:
        response = await http.request(method, path, json=body, params=params, headers=headers)
        assert response.status_code == 400, (method, path, body, params, response.text)
        assert response.json()["error"]["code"] == "bad_request"
    # Nobody sat: the refusals changed nothing.
    table = (await http.get(f"/api/tables/{table_id}", headers=player)).json()
    assert table["seats"] == [None] * len(table["seats"])


async def test_every_kind_of_answer_carries_the_security_headers(
    http: httpx.AsyncClient, world: World
) -> None:
    player = world.headers("Pat")
    for method, path, headers, status in [
        ("GET", "/healthz", {}, 200),
        ("GET", "/api/nowhere", {}, 404),
        ("GET", "/api/me", {}, 401),
        ("GET", "/api/admin/audit", player, 403),
        ("GET", "/api/wallet/history?limit=0", player, 400),
        ("GET", "/ws", {}, 426),
    ]:
        response = await http.request(method, path, headers=headers)
        assert response.status_code == status, (path, response.text)
        _has_security_headers(response)
    # A refused WebSocket handshake is written straight to the socket: it has them too.
    for request, status in [
        (handshake(version="8"), b"426"),
        (handshake(path="/elsewhere"), b"404"),
        (handshake(key="short"), b"400"),
    ]:
        async with raw(world, request) as client:
            answer = await asyncio.wait_for(client.reader.read(), 5)
        head = answer.split(b"\r\n\r\n")[0].lower()
        assert head.startswith(b"http/1.1 " + status), answer
        for name, value in security_headers("/ws"):
            assert (name + b": " + value).lower() in head, (request, name)


async def test_options_lists_every_method_of_the_route(http: httpx.AsyncClient) -> None:
    # Litestar's own answer listed only the first controller's methods (POST, not GET).
    for path, methods in [("/api/tables", {"GET", "POST"}), ("/api/wallet", {"GET"})]:
        response = await http.options(path)
        assert response.status_code == 204, response.text
        assert {m.strip() for m in response.headers["allow"].split(",")} == {*methods, "OPTIONS"}
        _has_security_headers(response)


async def test_an_integral_float_is_an_integer_and_nothing_else_is_converted(
    http: httpx.AsyncClient, world: World
) -> None:
    """JSON Schema, the document's language, calls 1.0 an integer: so does the gateway.
    A string or a fraction is still no number."""
    table_id = await _table(http, world)
    player = world.headers("Pat")
    for wrong in (b'{"seat": "1"}', b'{"seat": 1.5}', b'{"seat": true}'):
        response = await http.post(
            f"/api/tables/{table_id}/sit", content=wrong, headers={**player, **JSON}
        )
        assert response.status_code == 400, (wrong, response.text)
    sat = await http.post(
        f"/api/tables/{table_id}/sit", content=b'{"seat": 1.0}', headers={**player, **JSON}
    )
    assert sat.status_code == 200, sat.text
    assert sat.json()["seats"][1]["display_name"] == "Pat"
