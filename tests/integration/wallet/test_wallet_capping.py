"""Capping a settlement at the holds: pure arithmetic, checked over generated hands."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kalaro.proto.wallet import Payment
from services.wallet.ledger import cap_payments


@st.composite
def _hands(draw: st.DrawFn) -> tuple[list[Payment], dict[str, int]]:
    """Net payments for 2..4 players that sum to zero, and each player's hold."""
    n = draw(st.integers(2, 4))
    players = [f"p{i}" for i in range(n)]
    amounts = [draw(st.integers(-1000, 1000)) for _ in range(n - 1)]
    amounts.append(-sum(amounts))
    held = {p: draw(st.integers(1, 1000)) for p in players}
    return [Payment(user_id=p, amount=a) for p, a in zip(players, amounts, strict=True)], held


@settings(max_examples=300, deadline=None)
@given(_hands())
def test_capped_payments_stay_balanced_and_within_holds(
    hand: tuple[list[Payment], dict[str, int]],
) -> None:
    payments, held = hand
    applied = cap_payments(payments, held)

    assert [p.user_id for p in applied] == [p.user_id for p in payments]
    assert sum(p.amount for p in applied) == 0
    for asked, paid in zip(payments, applied, strict=True):
        if asked.amount < 0:  # a loser pays what was asked, up to their hold
            assert paid.amount == -min(-asked.amount, held[asked.user_id])
        else:  # a winner never gets more than was owed, nor less than nothing
            assert 0 <= paid.amount <= asked.amount
    if all(-p.amount <= held[p.user_id] for p in payments if p.amount < 0):
        assert applied == tuple(payments)


def test_shortfall_is_shared_by_largest_remainder() -> None:
    # 100 paid of 300 owed, 1:1:1 -> 33.33 each; the leftover credit goes to the first.
    payments = [
        Payment(user_id="a", amount=-300),
        Payment(user_id="b", amount=100),
        Payment(user_id="c", amount=100),
        Payment(user_id="d", amount=100),
    ]
    assert cap_payments(payments, {"a": 100}) == (
        Payment(user_id="a", amount=-100),
        Payment(user_id="b", amount=34),
        Payment(user_id="c", amount=33),
        Payment(user_id="d", amount=33),
    )
    # 5 paid of 9 owed, 2:7 -> 1.11 and 3.89: the larger remainder gets the spare credit.
    payments = [
        Payment(user_id="a", amount=-9),
        Payment(user_id="b", amount=2),
        Payment(user_id="c", amount=7),
    ]
    assert cap_payments(payments, {"a": 5}) == (
        Payment(user_id="a", amount=-5),
        Payment(user_id="b", amount=1),
        Payment(user_id="c", amount=4),
    )
