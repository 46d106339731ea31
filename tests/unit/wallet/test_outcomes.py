"""What a hand's outcome does to the books: capping, settlement and void decisions, the
rows a settlement writes, and how a batch is cut into runs (pure, no database)."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kalaro.bus import ServiceError
from kalaro.proto import errors as codes
from kalaro.proto.wallet import Payment, SettleHand, Settlement, VoidHand
from services.wallet import outcomes
from services.wallet.outcomes import Hand, Hold, SettlePlan, SettleRun, VoidAt, cap_payments


def _pay(**amounts: int) -> tuple[Payment, ...]:
    return tuple(Payment(user_id=user, amount=amount) for user, amount in amounts.items())


def _holds(**amounts: int) -> tuple[Hold, ...]:
    # Account ids follow seat order: ana 1, ben 2, ...; hold ids 10 times that.
    return tuple(
        Hold(id=10 * n, owner=user, account_id=n, amount=amount)
        for n, (user, amount) in enumerate(amounts.items(), start=1)
    )


def _open(**held: int) -> Hand:
    return Hand(status="open", table_id="t1", requested=(), answer=None, holds=_holds(**held))


def _closed(
    status: Literal["settled", "voided"], payments: tuple[Payment, ...] = (), tx_id: int = 9
) -> Hand:
    answer = Settlement(hand_id="h1", status=status, payments=payments, tx_id=tx_id)
    return Hand(status=status, table_id="t1", requested=payments, answer=answer, holds=())


def _refused(
    code: str, match: str = ""
) -> AbstractContextManager[pytest.ExceptionInfo[ServiceError]]:
    return pytest.raises(ServiceError, match=f"^{code}: .*{match}")


# --- capping -------------------------------------------------------------------------------


def test_payments_within_holds_come_back_unchanged() -> None:
    payments = _pay(ana=-50, ben=20, cris=30)
    assert cap_payments(payments, {"ana": 50, "ben": 50, "cris": 50}) == payments


def test_a_loser_pays_at_most_their_hold_and_winners_share_the_shortfall() -> None:
    # ana owes 100 but holds 10: ben and cris were owed 50 each, so get 5 each.
    assert cap_payments(_pay(ana=-100, ben=50, cris=50), {"ana": 10}) == _pay(
        ana=-10, ben=5, cris=5
    )
    # 7 credits for owed 1:1:1: 2 each, the one left goes to the earliest winner.
    assert cap_payments(_pay(ana=-9, ben=3, cris=3, dan=3), {"ana": 7}) == _pay(
        ana=-7, ben=3, cris=2, dan=2
    )


@given(
    st.lists(st.integers(min_value=1, max_value=1000), min_size=1, max_size=4),
    st.lists(st.integers(min_value=1, max_value=1000), min_size=1, max_size=4),
    st.lists(st.integers(min_value=0, max_value=1000), min_size=4, max_size=4),
)
def test_capped_payments_sum_to_zero_and_never_overpay(
    losses: list[int], owed_parts: list[int], held: list[int]
) -> None:
    # Winners are owed exactly what the losers lose, split in the given proportions.
    total = sum(losses)
    weights = sum(owed_parts)
    owed = [total * w // weights for w in owed_parts]
    owed[0] += total - sum(owed)
    payments = [Payment(user_id=f"l{i}", amount=-x) for i, x in enumerate(losses)] + [
        Payment(user_id=f"w{i}", amount=x) for i, x in enumerate(owed) if x
    ]
    holds = {f"l{i}": h for i, h in enumerate(held)}
    applied = cap_payments(payments, holds)
    assert sum(p.amount for p in applied) == 0
    assert [p.user_id for p in applied] == [p.user_id for p in payments]
    for asked, paid in zip(payments, applied, strict=True):
        if asked.amount < 0:
            assert paid.amount == -min(-asked.amount, holds[asked.user_id])
        else:
            assert 0 <= paid.amount <= asked.amount


# --- settlement ----------------------------------------------------------------------------


def test_settling_an_open_hand_plans_the_capped_payments() -> None:
    hand = _open(ana=40, ben=40)
    plan = outcomes.plan_settlement("h1", _pay(ana=-50, ben=50), "", hand)
    assert plan == SettlePlan(
        hand_id="h1",
        memo="hand h1 at table t1",  # the hand's own table when the outcome names none
        requested=_pay(ana=-50, ben=50),
        applied=_pay(ana=-40, ben=40),
        holds=hand.holds,
    )
    assert isinstance(outcomes.plan_settlement("h1", (), "t9", hand), SettlePlan)


def test_settlement_refusals() -> None:
    with _refused(codes.BAD_REQUEST, "no holds to settle"):
        outcomes.plan_settlement("h1", (), "", None)
    with _refused(codes.BAD_REQUEST, "no hold on hand h1 for: cris"):
        outcomes.plan_settlement("h1", _pay(ana=-5, cris=5), "", _open(ana=10, ben=10))
    with _refused(codes.CONFLICT, "was voided"):
        outcomes.plan_settlement("h1", (), "", _closed("voided"))


def test_a_repeated_settlement_answers_with_the_stored_one_if_the_payments_match() -> None:
    hand = _closed("settled", _pay(ana=-5, ben=5))
    # Same net payments in another order: a repeat.
    assert outcomes.plan_settlement("h1", _pay(ben=5, ana=-5), "", hand) == hand.answer
    with _refused(codes.CONFLICT, "already settled with other payments"):
        outcomes.plan_settlement("h1", _pay(ana=-6, ben=6), "", hand)


def test_settlement_writes_sum_per_account_and_capture_only_what_losers_paid() -> None:
    first = outcomes.plan_settlement(
        "h1", _pay(ana=-30, ben=30), "", _open(ana=50, ben=50, cris=50)
    )
    second = outcomes.plan_settlement("h2", _pay(ana=10, ben=-10), "", _open(ana=20, ben=20))
    assert isinstance(first, SettlePlan) and isinstance(second, SettlePlan)
    writes = outcomes.settlement_writes([first, second], {"h1": 101, "h2": 102})
    assert writes.entries == [
        {"tx_id": 101, "account_id": 1, "amount": -30},
        {"tx_id": 101, "account_id": 2, "amount": 30},
        {"tx_id": 102, "account_id": 1, "amount": 10},
        {"tx_id": 102, "account_id": 2, "amount": -10},
    ]
    assert writes.deltas == {1: -20, 2: 20}
    assert writes.releases == {1: 70, 2: 70, 3: 50}
    assert writes.holds == [
        {"_hold": 10, "_status": "captured", "_captured": 30},
        {"_hold": 20, "_status": "released", "_captured": 0},
        {"_hold": 30, "_status": "released", "_captured": 0},
        {"_hold": 10, "_status": "released", "_captured": 0},
        {"_hold": 20, "_status": "captured", "_captured": 10},
    ]


def test_settlement_writes_refuse_a_plan_that_does_not_balance() -> None:
    plan = SettlePlan(
        hand_id="h1", memo="", requested=(), applied=_pay(ana=-5), holds=_holds(ana=10)
    )
    with pytest.raises(ValueError, match="does not balance"):
        outcomes.settlement_writes([plan], {"h1": 1})


# --- void ----------------------------------------------------------------------------------


def test_void_decisions() -> None:
    assert outcomes.void_answer("h1", None) is None  # recorded as a tombstone
    assert outcomes.void_answer("h1", _open(ana=10)) is None  # released
    voided = _closed("voided")
    assert outcomes.void_answer("h1", voided) == voided.answer
    with _refused(codes.CONFLICT, "was settled; cannot void it"):
        outcomes.void_answer("h1", _closed("settled"))
    assert outcomes.void_memo("h1", "t1", "") == "hand h1 at table t1 voided"
    assert outcomes.void_memo("h1", "t1", "lost") == "hand h1 at table t1 voided: lost"
    assert outcomes.outcome_key("h1") == "outcome:h1"


# --- batches -------------------------------------------------------------------------------


def _settle(hand_id: str, payments: tuple[Payment, ...] = ()) -> SettleHand:
    return SettleHand(hand_id=hand_id, payments=payments)


def test_a_batch_applies_each_void_after_the_settlements_before_it() -> None:
    a, b, d = _settle("a"), _settle("b"), _settle("d")
    c, e, f = VoidHand(hand_id="c"), VoidHand(hand_id="e"), VoidHand(hand_id="f")
    assert outcomes.batch_steps([a, b, c, d, e, f]) == [
        SettleRun(settles=((0, a), (1, b))),
        VoidAt(index=2, void=c),
        SettleRun(settles=((3, d),)),
        VoidAt(index=4, void=e),
        VoidAt(index=5, void=f),
    ]
    assert outcomes.batch_steps([]) == []


def test_a_run_plans_each_hand_once_and_answers_repeats_and_refusals() -> None:
    pay = _pay(ana=-5, ben=5)
    run = SettleRun(
        settles=(
            (0, _settle("h1", pay)),
            (1, _settle("", pay)),  # refused: no hand id
            (2, _settle("h1", _pay(ben=5, ana=-5))),  # a repeat: same net payments
            (3, _settle("h1", _pay(ana=-6, ben=6))),  # a repeat with other payments
            (4, _settle("h2", pay)),  # settled before: its stored answer
            (5, _settle("h3", pay)),  # unknown hand
        )
    )
    settled = _closed("settled", pay)
    planned = outcomes.plan_run(run, {"h1": _open(ana=10, ben=10), "h2": settled})
    assert list(planned.plans) == ["h1"]
    assert planned.written == {0: "h1", 2: "h1"}
    assert planned.answers[4] == settled.answer
    refused = {i: a for i, a in planned.answers.items() if isinstance(a, ServiceError)}
    assert {i: e.code for i, e in refused.items()} == {
        1: codes.BAD_REQUEST,
        3: codes.CONFLICT,
        5: codes.BAD_REQUEST,
    }
