"""The reconciler's choice for an open hand, given what its engine said (pure)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from kalaro.proto.engine import HandOutcomeReport
from services.wallet.reconciler import OpenHand, decide, payments_of

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def _hand(age_seconds: float) -> OpenHand:
    return OpenHand("h1", "t1", "tongits", NOW - timedelta(seconds=age_seconds))


def _report(status: str) -> HandOutcomeReport:
    return HandOutcomeReport(hand_id="h1", status=status)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("status", "age", "step"),
    [
        ("finished", 1, "settle"),
        ("cancelled", 1, "void"),
        ("playing", 10_000, "wait"),  # a long hand is not a lost one
        ("unknown", 599, "wait"),
        ("unknown", 600, "release"),
    ],
)
def test_each_outcome_has_its_step(status: str, age: float, step: str) -> None:
    assert decide(_hand(age), _report(status), NOW, release_after=600) == step


def test_no_answer_never_releases() -> None:
    assert decide(_hand(10**6), None, NOW, release_after=600) == "wait"


def test_payments_pair_players_with_credits() -> None:
    report = HandOutcomeReport(
        hand_id="h1", status="finished", players=("a", "b", "c"), payments=(20, -10, -10)
    )
    assert [(p.user_id, p.amount) for p in payments_of(report)] == [
        ("a", 20),
        ("b", -10),
        ("c", -10),
    ]
