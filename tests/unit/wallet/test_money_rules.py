"""The wallet's request rules: validation, transfers and holds (pure, no database)."""

from __future__ import annotations

from contextlib import AbstractContextManager

import pytest

from kalaro.bus import ServiceError
from kalaro.proto import errors as codes
from kalaro.proto.wallet import Balance, HoldRequest, HoldsPlaced, Payment
from services.wallet import rules
from services.wallet.rules import MAX_AMOUNT, MAX_TEXT, Account


def _pay(**amounts: int) -> list[Payment]:
    return [Payment(user_id=user, amount=amount) for user, amount in amounts.items()]


def _account(owner: str, balance: int, held: int = 0, id: int = 1) -> Account:
    return Account(id=id, owner=owner, balance=balance, held=held)


def _refused(
    code: str, match: str = ""
) -> AbstractContextManager[pytest.ExceptionInfo[ServiceError]]:
    return pytest.raises(ServiceError, match=f"^{code}: .*{match}")


def test_payments_must_be_net_in_range_and_sum_to_zero() -> None:
    rules.check_payments(_pay(ana=-30, ben=10, cris=20))
    rules.check_payments([])  # nothing moves: allowed (everyone just gets their hold back)
    with _refused(codes.BAD_REQUEST, "sum to 5"):
        rules.check_payments(_pay(ana=-5, ben=10))
    with _refused(codes.BAD_REQUEST, "appears twice"):
        rules.check_payments([Payment(user_id="ana", amount=1), Payment(user_id="ana", amount=-1)])
    with _refused(codes.BAD_REQUEST, "out of range"):
        rules.check_payments(_pay(ana=-(MAX_AMOUNT + 1), ben=MAX_AMOUNT + 1))
    with _refused(codes.BAD_REQUEST, "reserved for the house"):
        rules.check_payments([Payment(user_id="@house", amount=0)])


def test_ids_texts_and_pages() -> None:
    with _refused(codes.BAD_REQUEST, "hand_id must be 1 to 128"):
        rules.check_id("", "hand_id")
    with _refused(codes.BAD_REQUEST, "1 to 128"):
        rules.check_id("x" * 129, "hand_id")
    rules.check_text("x" * MAX_TEXT, "note")
    with _refused(codes.BAD_REQUEST, "at most 500"):
        rules.check_text("x" * (MAX_TEXT + 1), "note")
    with _refused(codes.BAD_REQUEST, "reason is required"):
        rules.check_text("  ", "reason", required=True)
    with _refused(codes.BAD_REQUEST, "limit"):
        rules.check_page(0)
    with _refused(codes.BAD_REQUEST, "offset"):
        rules.check_page(10, -1)
    with _refused(codes.BAD_REQUEST, "before must be a positive"):
        rules.check_history("ana", 10, 0)


def test_welcome_amount_out_of_range_is_a_bug_not_a_refusal() -> None:
    rules.check_welcome("ana", 0)
    with pytest.raises(ValueError, match="welcome grant"):
        rules.check_welcome("ana", -1)
    with _refused(codes.BAD_REQUEST, "reserved"):
        rules.check_welcome("@house", 10)


def test_approved_grants() -> None:
    rules.check_approved_grant("ap1", "ana", rules.MAX_CREDIT_REQUEST, "boss", "ok")
    for amount in (0, rules.MAX_CREDIT_REQUEST + 1):
        with _refused(codes.BAD_REQUEST, "amount must be between 1"):
            rules.check_approved_grant("ap1", "ana", amount, "boss", "")
    with _refused(codes.BAD_REQUEST, "admin_id"):
        rules.check_approved_grant("ap1", "ana", 5, "@root", "")


@pytest.mark.parametrize(
    ("amount", "kind", "request_key", "match"),
    [
        (0, "grant", "", "a grant must be positive"),
        (-5, "grant", "", "a grant must be positive"),
        (0, "adjust", "", "must not be zero"),
        (5, "bonus", "", "kind must be 'grant' or 'adjust'"),
        (MAX_AMOUNT + 1, "grant", "", "at most"),
        (-(MAX_AMOUNT + 1), "adjust", "", "at most"),
        (5, "grant", "k" * 65, "request_key"),
        (5, "grant", "clé", "request_key"),
    ],
)
def test_adjustments_refused(amount: int, kind: str, request_key: str, match: str) -> None:
    with _refused(codes.BAD_REQUEST, match):
        rules.check_adjustment("boss", "ana", amount, "why", kind, request_key)


def test_adjustments_allowed() -> None:
    rules.check_adjustment("boss", "ana", 5, "bonus", "grant", "")
    rules.check_adjustment("boss", "ana", -5, "oops", "adjust", "a" * 64)


def test_a_repeated_request_key_must_name_the_same_adjustment() -> None:
    long_reason = "r" * (MAX_TEXT + 20)  # stored cut to the column
    rules.check_repeated_adjustment(7, ("grant", "r" * MAX_TEXT, 50), "grant", long_reason, 50)
    for earlier in (("adjust", "why", 50), ("grant", "other", 50), ("grant", "why", 40)):
        with _refused(codes.CONFLICT, "transaction 7"):
            rules.check_repeated_adjustment(7, earlier, "grant", "why", 50)


def test_balance_of_a_player_without_an_account_is_zero() -> None:
    assert rules.balance_of("ana", None) == Balance(user_id="ana", balance=0, held=0, available=0)
    assert rules.balance_of("ana", _account("ana", 100, 30)).available == 70


def test_transfer_may_take_back_only_what_is_available() -> None:
    ana = _account("ana", balance=100, held=30)
    assert rules.transfer_from_house(ana, "ana", 50) == Balance(
        user_id="ana", balance=150, held=30, available=120
    )
    assert rules.transfer_from_house(ana, "ana", -70).available == 0
    with _refused(codes.INSUFFICIENT_FUNDS, "cannot take 71 from ana: only 70 available"):
        rules.transfer_from_house(ana, "ana", -71)


def test_holds_requests_are_checked_before_anything_is_read() -> None:
    one = [HoldRequest(user_id="ana", amount=10)]
    rules.check_holds("t1", "h1", one, "tongits")
    with _refused(codes.BAD_REQUEST, "at least one player"):
        rules.check_holds("t1", "h1", [], "")
    with _refused(codes.BAD_REQUEST, "appears twice in holds"):
        rules.check_holds("t1", "h1", one + one, "")
    with _refused(codes.BAD_REQUEST, "must be between 1"):
        rules.check_holds("t1", "h1", [HoldRequest(user_id="ana", amount=0)], "")
    with _refused(codes.BAD_REQUEST, "game must be at most"):
        rules.check_holds("t1", "h1", one, "g" * 33)
    with _refused(codes.BAD_REQUEST, "table_id"):
        rules.check_holds("", "h1", one, "")


def test_holds_all_or_none_naming_everyone_short() -> None:
    requests = [
        HoldRequest(user_id="ana", amount=50),
        HoldRequest(user_id="ben", amount=50),
        HoldRequest(user_id="cris", amount=50),
    ]
    found = {"ana": _account("ana", 100, 60), "ben": _account("ben", 50, id=2)}
    with pytest.raises(ServiceError) as caught:
        rules.check_available("h1", requests, found)
    assert caught.value.code == codes.INSUFFICIENT_FUNDS
    assert caught.value.user_ids == ("ana", "cris")  # cris has no account: 0 available
    assert "ana (available 40, needs 50), cris (available 0, needs 50)" in caught.value.message
    rules.check_available("h1", requests[1:2], found)  # ben has exactly enough


def test_repeated_holds_answer_with_what_is_in_place_unless_the_hand_is_over() -> None:
    placed = [("ana", 10), ("ben", 20)]
    assert rules.holds_in_place("h1", "open", placed) == HoldsPlaced(
        hand_id="h1",
        holds=(HoldRequest(user_id="ana", amount=10), HoldRequest(user_id="ben", amount=20)),
    )
    for status in ("settled", "voided"):
        with _refused(codes.CONFLICT, f"already {status}"):
            rules.holds_in_place("h1", status, placed)
