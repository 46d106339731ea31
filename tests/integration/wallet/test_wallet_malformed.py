"""Malformed or invalid bodies get a clear ``bad_request`` and change nothing."""

from __future__ import annotations

from sqlalchemy import func, select

from kalaro.bus.client import ERROR_HEADER
from kalaro.bus.codec import decode
from kalaro.proto import errors as codes
from kalaro.proto import subjects
from kalaro.proto.errors import ErrorReply
from kalaro.proto.wallet import GetHistory, History, HoldRequest, HoldsPlaced, PlaceHolds
from services.wallet.schema import holds, settlements, transactions
from tests.integration.wallet.wallet_helpers import Wallet

# (subject, raw body, a phrase the error message must contain)
_MALFORMED = [
    (subjects.WALLET_BALANCE, b"not json", "malformed request"),
    (subjects.WALLET_BALANCE, b"{}", "missing required field `user_id`"),
    (subjects.WALLET_BALANCE, b'{"user_id": 42}', "Expected `str`"),
    (subjects.WALLET_BALANCE, b'{"user_id": ""}', "user_id must be 1 to 128"),
    (subjects.WALLET_WELCOME_GRANT, b"[]", "malformed request"),
    (subjects.WALLET_WELCOME_GRANT, b'{"user_id": "@house"}', "reserved"),
    (subjects.WALLET_HISTORY, b'{"user_id": "u", "limit": 0}', "limit must be between"),
    (subjects.WALLET_HISTORY, b'{"user_id": "u", "limit": "ten"}', "Expected `int`"),
    (subjects.WALLET_GRANT_APPROVED, b'{"approval_id": "a"}', "missing required field"),
    (
        subjects.WALLET_GRANT_APPROVED,
        b'{"approval_id": "a", "user_id": "u", "amount": "100", "admin_id": "x"}',
        "Expected `int`",
    ),
    (
        subjects.WALLET_GRANT_APPROVED,
        b'{"approval_id": "a", "user_id": "u", "amount": -1, "admin_id": "x"}',
        "amount must be",
    ),
    (subjects.WALLET_ADJUST, b'{"admin_id": "a", "user_id": "u", "amount": 5}', "`reason`"),
    (
        subjects.WALLET_ADJUST,
        b'{"admin_id": "a", "user_id": "u", "amount": 5, "reason": "r", "kind": "steal"}',
        "Invalid enum value",
    ),
    (subjects.WALLET_PLACE_HOLDS, b'{"table_id": "t", "hand_id": "h", "holds": []}', "at least"),
    (
        subjects.WALLET_PLACE_HOLDS,
        b'{"table_id": "t", "hand_id": "h", "holds": [{"user_id": "u", "amount": -5}]}',
        "must be between 1 and",
    ),
    (
        subjects.WALLET_PLACE_HOLDS,
        b'{"table_id": "t", "hand_id": "h", "holds": {"user_id": "u"}}',
        "Expected `array`",
    ),
    (subjects.WALLET_SETTLE, b'{"hand_id": "h", "payments": [{"user_id": "u"}]}', "`amount`"),
    (
        subjects.WALLET_SETTLE,
        b'{"hand_id": "h", "payments": [{"user_id": "u", "amount": -5}]}',
        "sum to zero",
    ),
    (subjects.WALLET_VOID, b'{"hand_id": ""}', "hand_id must be 1 to 128"),
    (subjects.WALLET_VOID, b'{"hand_id": "' + b"h" * 200 + b'"}', "hand_id must be 1 to 128"),
]


async def _snapshot(wallet: Wallet, users: list[str]) -> object:
    async with wallet.engine.connect() as conn:
        counts = [
            await conn.scalar(select(func.count()).select_from(t))
            for t in (transactions, holds, settlements)
        ]
    return (
        await wallet.audit(),
        counts,
        [await wallet.balance(u) for u in users],
        [await wallet.call(subjects.WALLET_HISTORY, GetHistory(user_id=u), History) for u in users],
    )


async def test_malformed_bodies_get_a_clear_error_and_change_nothing(
    wallet: Wallet, unique: str
) -> None:
    users = ["u", "h", f"{unique}-a"]  # the names the bodies above use, and a bystander
    for user in users:
        await wallet.fund(user, 500)
    await wallet.call(
        subjects.WALLET_PLACE_HOLDS,
        PlaceHolds(
            table_id="t",
            hand_id="h-real",
            holds=(
                HoldRequest(user_id="u", amount=100),
                HoldRequest(user_id=f"{unique}-a", amount=100),
            ),
        ),
        HoldsPlaced,
    )
    before = await _snapshot(wallet, users)

    for subject, body, phrase in _MALFORMED:
        reply = await wallet.nc.request(subject, body, timeout=5)
        assert reply.headers is not None, (subject, body, reply.data)
        assert reply.headers.get(ERROR_HEADER) == codes.BAD_REQUEST, (subject, body, reply.data)
        error = decode(reply.data, ErrorReply)
        assert error.code == codes.BAD_REQUEST
        assert phrase in error.message, (subject, body, error.message)

    assert await _snapshot(wallet, users) == before
