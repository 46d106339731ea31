"""Limits a player meets through the gateway: one balance covers the tables they sit at
with a bet (``committed_elsewhere``, 409), and practice tables per player
(``practice_limit``, 409). Each refusal names what it is about and changes nothing."""

from __future__ import annotations

import httpx

from tests.e2e.test_accounts import bearer, error_code, sign_up, wait_for_balance
from tests.e2e.test_hosting import _host


def test_a_second_table_with_a_bet_waits_until_the_first_is_left(
    http: httpx.Client, unique: str
) -> None:
    host = bearer(_host(http, f"{unique}-m")["access_token"])
    player = sign_up(http, f"{unique}-m", "Staker")
    token = player["access_token"]
    assert wait_for_balance(http, token, 1000)["balance"] == 1000  # one table of 600, not two
    me = bearer(token)
    tables = []
    for _ in range(2):
        created = http.post("/api/tables", json={"game": "tongits", "bet": 150}, headers=host)
        assert created.status_code == 201, created.text
        assert created.json()["table"]["max_loss"] == 600
        tables.append(created.json()["table"]["table_id"])
    first, second = (f"/api/tables/{t}" for t in tables)

    assert http.post(f"{first}/sit", json={}, headers=me).status_code == 200
    over = http.post(f"{second}/sit", json={}, headers=me)
    assert (over.status_code, error_code(over)) == (409, "committed_elsewhere"), over.text
    assert tables[0] in over.json()["error"]["message"]
    assert http.get(second, headers=me).json()["seats"] == [None, None, None]

    assert http.post(f"{first}/leave", json={}, headers=me).status_code == 200
    sat = http.post(f"{second}/sit", json={}, headers=me)
    assert sat.status_code == 200, sat.text


def test_practice_tables_per_player_are_limited(http: httpx.Client, unique: str) -> None:
    me = bearer(sign_up(http, f"{unique}-p", "Practiser")["access_token"])
    made = []
    for game in ("tongits", "mahjong", "kawuxing"):
        created = http.post("/api/practice", json={"game": game}, headers=me)
        assert created.status_code == 201, created.text
        made.append(created.json()["table"]["table_id"])
    over = http.post("/api/practice", json={"game": "tongits"}, headers=me)
    assert (over.status_code, error_code(over)) == (409, "practice_limit"), over.text
    message = over.json()["error"]["message"]
    assert "3 practice tables" in message and all(t in message for t in made)

    # Leaving one ends it, and a new one may open.
    left = http.post(f"/api/tables/{made[0]}/leave", json={}, headers=me)
    assert left.status_code == 200 and left.json()["status"] == "ended", left.text
    again = http.post("/api/practice", json={"game": "tongits"}, headers=me)
    assert again.status_code == 201, again.text
