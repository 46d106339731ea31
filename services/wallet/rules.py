"""The wallet's request rules: limits, validation and what a transfer or a hold may do.

Pure functions over plain values and Structs: no SQL, no clock, no I/O, so each rule is
tested alone (``tests/unit/wallet``). The store reads and locks the rows a rule needs,
the rule decides (or refuses with a :class:`~kalaro.bus.ServiceError`), and
:mod:`services.wallet.ledger` writes what it decided, in the same transaction. What a
settlement or a void does is in :mod:`services.wallet.outcomes`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from kalaro.errors import ServiceError
from kalaro.proto import errors as codes
from kalaro.proto.wallet import Balance, HoldRequest, HoldsPlaced, Payment

MAX_CREDIT_REQUEST = 1_000_000
# Ceiling for any single amount (hold, payment, admin grant): far below anything that
# could overflow a BIGINT when summed, far above any real table stake.
MAX_AMOUNT = 1_000_000_000
MAX_PAGE = 200
MAX_ID = 128
MAX_TEXT = 500
MAX_REQUEST_KEY = 64  # an admin client's retry key (a UUID is 36)
MAX_GAME = 32
MAX_AUDIT_HOLDS = 100  # open holds listed by the audit, oldest first

SYSTEM = "system"  # the actor of everything no person asked for


# --- validation ----------------------------------------------------------------------


def bad(message: str) -> ServiceError:
    return ServiceError(codes.BAD_REQUEST, message)


def check_id(value: str, field: str) -> None:
    if not value or len(value) > MAX_ID:
        raise bad(f"{field} must be 1 to {MAX_ID} characters")


def check_user(value: str, field: str = "user_id") -> None:
    check_id(value, field)
    if value.startswith("@"):
        raise bad(f"{field} may not start with '@' (reserved for the house)")


def check_text(value: str, field: str, *, required: bool = False) -> None:
    if len(value) > MAX_TEXT:
        raise bad(f"{field} must be at most {MAX_TEXT} characters")
    if required and not value.strip():
        raise bad(f"{field} is required")


def check_page(limit: int, offset: int = 0) -> None:
    if not 1 <= limit <= MAX_PAGE:
        raise bad(f"limit must be between 1 and {MAX_PAGE}, got {limit}")
    if offset < 0:
        raise bad(f"offset must not be negative, got {offset}")


def check_payments(payments: Sequence[Payment]) -> None:
    seen: set[str] = set()
    for payment in payments:
        check_user(payment.user_id, "payments.user_id")
        if payment.user_id in seen:
            raise bad(f"{payment.user_id} appears twice in payments (they must be net)")
        seen.add(payment.user_id)
        if abs(payment.amount) > MAX_AMOUNT:
            raise bad(f"payment of {payment.amount} for {payment.user_id} is out of range")
    total = sum(p.amount for p in payments)
    if total != 0:
        raise bad(f"payments must sum to zero, they sum to {total}")


def check_welcome(user_id: str, amount: int) -> None:
    check_user(user_id)
    # The amount comes from settings, not from a caller: a bad one is a bug, not a refusal.
    if not 0 <= amount <= MAX_AMOUNT:
        raise ValueError(f"welcome grant must be between 0 and {MAX_AMOUNT}, not {amount}")


def check_history(user_id: str, limit: int, before: int | None) -> None:
    check_user(user_id)
    check_page(limit)
    if before is not None and before < 1:
        raise bad(f"before must be a positive entry id, got {before}")


def check_approved_grant(
    approval_id: str, user_id: str, amount: int, admin_id: str, memo: str
) -> None:
    check_id(approval_id, "approval_id")
    check_user(user_id)
    check_user(admin_id, "admin_id")
    if not 0 < amount <= MAX_CREDIT_REQUEST:
        raise bad(f"amount must be between 1 and {MAX_CREDIT_REQUEST}, got {amount}")
    check_text(memo, "memo")


def check_adjustment(
    admin_id: str, user_id: str, amount: int, reason: str, kind: str, request_key: str
) -> None:
    check_user(admin_id, "admin_id")
    if len(request_key) > MAX_REQUEST_KEY or not request_key.isascii():
        raise bad(f"request_key must be at most {MAX_REQUEST_KEY} ASCII characters")
    check_user(user_id)
    check_text(reason, "reason", required=True)
    if kind == "grant" and amount <= 0:
        raise bad(f"a grant must be positive, got {amount} (use kind 'adjust' to take back)")
    if kind == "adjust" and amount == 0:
        raise bad("an adjustment must not be zero")
    if kind not in ("grant", "adjust"):
        raise bad(f"kind must be 'grant' or 'adjust', got {kind!r}")
    if abs(amount) > MAX_AMOUNT:
        raise bad(f"amount must be at most {MAX_AMOUNT} either way, got {amount}")


def check_holds(table_id: str, hand_id: str, requests: Sequence[HoldRequest], game: str) -> None:
    check_id(table_id, "table_id")
    check_id(hand_id, "hand_id")
    if len(game) > MAX_GAME:
        raise bad(f"game must be at most {MAX_GAME} characters")
    if not requests:
        raise bad("holds must name at least one player")
    seen: set[str] = set()
    for r in requests:
        check_user(r.user_id, "holds.user_id")
        if r.user_id in seen:
            raise bad(f"{r.user_id} appears twice in holds")
        seen.add(r.user_id)
        if not 0 < r.amount <= MAX_AMOUNT:
            raise bad(f"hold for {r.user_id} must be between 1 and {MAX_AMOUNT}, got {r.amount}")


# --- accounts and transfers ------------------------------------------------------------


class Account(msgspec.Struct, frozen=True, kw_only=True):
    """One account row as read (and usually locked) in the current transaction."""

    id: int
    owner: str
    balance: int
    held: int

    @property
    def available(self) -> int:
        return self.balance - self.held


def balance_of(user_id: str, account: Account | None) -> Balance:
    if account is None:
        return Balance(user_id=user_id, balance=0, held=0, available=0)
    return Balance(
        user_id=user_id, balance=account.balance, held=account.held, available=account.available
    )


def transfer_from_house(user: Account, user_id: str, amount: int) -> Balance:
    """The player's balance after ``amount`` moves from the house to them; a negative
    amount goes back to the house, but never more than they have available."""
    if user.available + amount < 0:
        raise ServiceError(
            codes.INSUFFICIENT_FUNDS,
            f"cannot take {-amount} from {user_id}: only {user.available} available",
        )
    return Balance(
        user_id=user_id,
        balance=user.balance + amount,
        held=user.held,
        available=user.available + amount,
    )


def check_repeated_adjustment(
    tx_id: int,
    earlier: tuple[str, str, int | None],
    kind: str,
    reason: str,
    amount: int,
) -> None:
    """An admin's request key came back: it must name the adjustment it made before.

    ``earlier`` is that transaction's kind, memo and what it moved for the player.
    """
    if earlier != (kind, reason[:MAX_TEXT], amount):
        raise ServiceError(
            codes.CONFLICT,
            f"request key already used for another adjustment (transaction {tx_id})",
        )


# --- holds -----------------------------------------------------------------------------


def check_available(
    hand_id: str, requests: Sequence[HoldRequest], found: Mapping[str, Account]
) -> None:
    """All holds of a hand fit the players' available balances, or none is placed: the
    refusal names everyone who is short (as data too, for the lobby)."""
    short = []
    for r in requests:
        account = found.get(r.user_id)
        available = account.available if account else 0
        if available < r.amount:
            short.append((r.user_id, f"{r.user_id} (available {available}, needs {r.amount})"))
    if short:
        raise ServiceError(
            codes.INSUFFICIENT_FUNDS,
            "cannot hold for hand "
            f"{hand_id}, not enough available: {', '.join(said for _, said in short)}",
            user_ids=tuple(user_id for user_id, _ in short),
        )


def short_hold(hand_id: str, user_id: str) -> ServiceError:
    """The second guard's refusal: the conditional UPDATE of a hold matched nothing."""
    return ServiceError(
        codes.INSUFFICIENT_FUNDS,
        f"cannot hold for hand {hand_id}, not enough available: {user_id}",
        user_ids=(user_id,),
    )


def holds_in_place(hand_id: str, status: str, placed: Sequence[tuple[str, int]]) -> HoldsPlaced:
    """A repeated PlaceHolds: the holds already placed (owner, amount), unless the hand
    is settled or voided, whose holds are gone (handing them back as if placed would
    let a hand start unbacked)."""
    if status != "open":
        raise ServiceError(codes.CONFLICT, f"hand {hand_id} is already {status}")
    return HoldsPlaced(
        hand_id=hand_id,
        holds=tuple(HoldRequest(user_id=owner, amount=amount) for owner, amount in placed),
    )
