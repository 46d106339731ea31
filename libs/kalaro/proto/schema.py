"""JSON Schema of every client-facing message, generated from the Structs.

Clients on other platforms build their models from this document: the REST bodies
and replies, both directions of the WebSocket protocol, and each game's actions,
views and results (what arrives inside a ``view`` or ``result`` frame).
``make schema`` writes it to ``docs/schema/kalaro-messages.json``.
"""

from __future__ import annotations

from typing import Any

import msgspec

from kalaro.games.registry import game_names, rules_for
from kalaro.proto import api, approvals, auth, lobby, wallet, ws

REST_TYPES: tuple[Any, ...] = (
    api.SignUpBody, api.SignInBody, api.GoogleSignInBody, api.RefreshBody,
    api.HostAccessBody, api.CreditsBody, api.DecisionBody, api.AdjustBody,
    api.CreateTableBody, api.SitBody, api.ReadyBody, api.LeaveAfterHandBody,
    api.RemovePlayerBody, api.ChatSettingBody, api.PracticeBody, api.AddBotBody,
    api.ErrorBody, api.PublicConfig,
    auth.TokenPair, auth.UserProfile,
    approvals.Approval, approvals.ApprovalList, approvals.ApprovalTrail,
    wallet.Balance, wallet.History, wallet.Adjusted, wallet.AuditReport,
    lobby.TableInfo, lobby.TableList, lobby.TableCreated,
)  # fmt: skip

WEBSOCKET_TYPES: tuple[Any, ...] = (ws.AnyClientFrame, ws.AnyServerFrame)


def game_types() -> dict[str, tuple[Any, ...]]:
    """Per game: its action union, view and result."""
    out: dict[str, tuple[Any, ...]] = {}
    for name in game_names():
        rules = rules_for(name)
        out[name] = (rules.action_type, rules.view_type, rules.result_type)
    return out


def message_schema() -> dict[str, Any]:
    """One document: named roots per area, every type under ``$defs``."""
    games = game_types()
    every: list[Any] = [*REST_TYPES, *WEBSOCKET_TYPES]
    for types in games.values():
        every.extend(types)
    roots, defs = msgspec.json.schema_components(every, ref_template="#/$defs/{name}")
    it = iter(roots)
    rest = {t.__name__: next(it) for t in REST_TYPES}
    websocket = {"client_frame": next(it), "server_frame": next(it)}
    per_game = {name: {"action": next(it), "view": next(it), "result": next(it)} for name in games}
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "KaLaro client messages",
        "rest": rest,
        "websocket": websocket,
        "games": per_game,
        "$defs": defs,
    }
