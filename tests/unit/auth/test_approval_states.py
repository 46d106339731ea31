"""The approval state machine: every (state, action) pair, legal ones moved, the rest
refused with the code that says why."""

from __future__ import annotations

import msgspec
import pytest

from kalaro.errors import ServiceError
from kalaro.proto import errors as codes
from services.auth import approval_states as states

LEGAL = {
    ("pending", "approve"): "approved",
    ("pending", "decline"): "declined",
    ("pending", "withdraw"): "withdrawn",
    ("approved", "apply"): "applied",
}


@pytest.mark.parametrize(("status", "action"), sorted(LEGAL))
def test_each_legal_move_lands_where_the_diagram_says(status: str, action: str) -> None:
    assert states.transition(status, action) == LEGAL[status, action]  # type: ignore[arg-type]


ILLEGAL = [(s, a) for s in states.STATUSES for a in states.ACTIONS if (s, a) not in LEGAL]


@pytest.mark.parametrize(("status", "action"), ILLEGAL)
def test_every_other_move_is_refused_with_a_clear_code(status: str, action: str) -> None:
    with pytest.raises(ServiceError) as refused:
        states.transition(status, action)  # type: ignore[arg-type]
    second_decision = action in ("approve", "decline")
    want = codes.ALREADY_DECIDED if second_decision else codes.ILLEGAL_TRANSITION
    assert refused.value.code == want
    assert status in refused.value.message  # it says what the request is now
    assert codes.http_status(refused.value.code) == 409


def test_the_table_covers_every_pair_and_final_states_have_no_way_out() -> None:
    assert len(LEGAL) + len(ILLEGAL) == len(states.STATUSES) * len(states.ACTIONS) == 20
    assert states.TRANSITIONS == LEGAL
    for status in states.FINAL:
        assert not [a for a in states.ACTIONS if (status, a) in states.TRANSITIONS]


def test_decisions_and_what_is_still_owed() -> None:
    assert states.decision(True) == "approve"
    assert states.decision(False) == "decline"
    assert states.needs_applying("credits", "approved")
    assert not states.needs_applying("host_access", "approved")  # applied in its decision
    assert not states.needs_applying("credits", "applied")


@pytest.mark.parametrize(
    ("kind", "amount", "ok"),
    [
        ("credits", 1, True),
        ("credits", states.MAX_CREDITS, True),
        ("credits", 0, False),
        ("credits", -5, False),
        ("credits", states.MAX_CREDITS + 1, False),
        ("host_access", 0, True),
        ("host_access", 10, False),
    ],
)
def test_what_a_request_carries(kind: str, amount: int, ok: bool) -> None:
    if ok:
        states.check_request(kind, amount)  # type: ignore[arg-type]
        return
    with pytest.raises(ServiceError) as refused:
        states.check_request(kind, amount)  # type: ignore[arg-type]
    assert refused.value.code == codes.BAD_REQUEST


def test_only_the_requester_withdraws_and_others_learn_nothing() -> None:
    states.require_requester("ana", "ana")
    with pytest.raises(ServiceError) as refused:
        states.require_requester("ana", "ben")
    assert refused.value.code == codes.NOT_FOUND


def test_the_state_machine_imports_nothing_heavy() -> None:
    import subprocess
    import sys

    probe = (
        "import sys; import services.auth.approval_states; "
        "print(sorted(m for m in ('nats', 'sqlalchemy', 'redis') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_view_of_an_applied_credit_request() -> None:
    from services.auth.approvals import view
    from services.auth.records import ApprovalRecord

    record = ApprovalRecord(
        approval_id="ap1",
        kind="credits",
        user_id="u_ana",
        display_name="Ana",
        amount=300,
        note="for the Friday table",
        status="applied",
        created_at=1_767_225_600_000,
        decided_by="u_boss",
        decided_at=1_767_225_600_001,
        reason="ok",
        applied_at=1_767_225_600_002,
        tx_id=7,
    )
    seen = view(record)
    assert (seen.status, seen.amount, seen.tx_id, seen.decided_by) == ("applied", 300, 7, "u_boss")
    assert seen.decided_at == "2026-01-01T00:00:00.001+00:00"
    assert seen.applied_at == "2026-01-01T00:00:00.002+00:00"
    pending = view(
        msgspec.structs.replace(record, status="pending", decided_at=None, applied_at=None)
    )
    assert (pending.decided_at, pending.applied_at) == (None, None)
