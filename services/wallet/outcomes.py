"""What a hand's outcome does to the books: settlement and void decisions, capping,
and how a batch of outcomes is cut into runs. Pure: no SQL, no clock, no I/O.

Each hand has one row in ``wallet_settlements``: inserted ``open`` with its holds,
then moved to ``settled`` or ``voided``. The store reads that row and its holds as a
:class:`Hand`; the functions here decide from it whether an outcome is a repeat (the
stored answer), a refusal (raised before anything is written, so a refusal inside a
batch leaves the batch's transaction clean) or a plan for the store to write.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import assert_never

import msgspec

from kalaro.bus.errors import ServiceError
from kalaro.proto import errors as codes
from kalaro.proto.wallet import Payment, SettleHand, Settlement, VoidHand
from services.wallet.rules import bad, check_id, check_payments

# The ledger's logger: these lines were always the ledger's, and dashboards filter on it.
log = logging.getLogger("kalaro.wallet.ledger")


class Hold(msgspec.Struct, frozen=True, kw_only=True):
    id: int
    owner: str
    account_id: int
    amount: int


class Hand(msgspec.Struct, frozen=True, kw_only=True):
    status: str  # open, settled, voided
    table_id: str
    requested: tuple[Payment, ...]
    answer: Settlement | None  # the stored answer once settled or voided
    holds: tuple[Hold, ...]  # in the order they were placed


_payments_json = msgspec.json.Decoder(tuple[Payment, ...])


def decode_payments(stored: str | bytes) -> tuple[Payment, ...]:
    return _payments_json.decode(stored)


def encode_payments(payments: Iterable[Payment]) -> str:
    return msgspec.json.encode(tuple(payments)).decode()


def outcome_key(hand_id: str) -> str:
    """The one idempotency key of a hand's outcome, settlement or void alike: the
    database itself refuses a second outcome for a hand (with the hand's row)."""
    return f"outcome:{hand_id}"


def net(payments: Iterable[Payment]) -> list[tuple[str, int]]:
    return sorted((p.user_id, p.amount) for p in payments)


def cap_payments(payments: Sequence[Payment], held: Mapping[str, int]) -> tuple[Payment, ...]:
    """Payments as applied: no loser pays more than their hold on the hand.

    The engines' maximum-loss rule should make an over-ask impossible, but the wallet
    does not rely on it. A loser asked for more than they hold pays exactly their hold;
    the winners' receipts then shrink so the hand still sums to zero. The shortfall is
    shared in proportion to what each winner was owed, by the largest remainder method:
    each winner first gets ``floor(owed * paid / owed_total)``, then the credits still
    to hand out go one each to the winners with the largest remainders (earlier in
    ``payments`` first on ties). No winner ever gets more than they were owed, and
    payments that need no capping come back unchanged.
    """
    paid = {p.user_id: min(-p.amount, held.get(p.user_id, 0)) for p in payments if p.amount < 0}
    paid_total = sum(paid.values())
    owed = {p.user_id: p.amount for p in payments if p.amount > 0}
    owed_total = sum(owed.values())
    received = dict(owed)
    if paid_total != owed_total:
        shares = {u: divmod(a * paid_total, owed_total) for u, a in owed.items()}
        received = {u: q for u, (q, _r) in shares.items()}
        left = paid_total - sum(received.values())
        # sorted() is stable: among equal remainders, earlier winners come first.
        for user in sorted(owed, key=lambda u: -shares[u][1])[:left]:
            received[user] += 1
    return tuple(
        Payment(
            user_id=p.user_id,
            amount=-paid[p.user_id] if p.amount < 0 else received.get(p.user_id, 0),
        )
        for p in payments
    )


# --- settlement --------------------------------------------------------------------------


class SettlePlan(msgspec.Struct, frozen=True, kw_only=True):
    """A settlement checked and ready to write (see :func:`plan_settlement`)."""

    hand_id: str
    memo: str
    requested: tuple[Payment, ...]
    applied: tuple[Payment, ...]
    holds: tuple[Hold, ...]


def _settled_with_other_payments(hand_id: str) -> ServiceError:
    log.error("hand %s: settlement refused: settled before with other payments", hand_id)
    return ServiceError(codes.CONFLICT, f"hand {hand_id} was already settled with other payments")


def plan_settlement(
    hand_id: str, payments: Sequence[Payment], table_id: str, hand: Hand | None
) -> Settlement | SettlePlan:
    """The stored answer of a settled hand, or what settling it writes; refusals raise."""
    if hand is None:
        raise bad(f"hand {hand_id} has no holds to settle")
    if hand.answer is not None:
        if hand.status != "settled":
            log.error(
                "hand %s: settlement refused: the hand was voided (transaction %s); "
                "one outcome per hand",
                hand_id,
                hand.answer.tx_id,
            )
            raise ServiceError(codes.CONFLICT, f"hand {hand_id} was voided; cannot settle it")
        if net(hand.requested) != net(payments):
            raise _settled_with_other_payments(hand_id)
        return hand.answer
    seated = hand.holds
    by_owner = {h.owner: h for h in seated}
    unseated = [p.user_id for p in payments if p.user_id not in by_owner]
    if unseated:
        raise bad(f"no hold on hand {hand_id} for: {', '.join(unseated)}")
    applied = cap_payments(payments, {h.owner: h.amount for h in seated})
    if applied != tuple(payments):
        log.warning("hand %s: payments capped at holds: %s -> %s", hand_id, payments, applied)
    memo = f"hand {hand_id} at table {table_id or hand.table_id}"
    return SettlePlan(
        hand_id=hand_id, memo=memo, requested=tuple(payments), applied=applied, holds=seated
    )


class SettlementWrites(msgspec.Struct, frozen=True, kw_only=True):
    """The rows settling some hands writes, summed per account over the hands."""

    entries: list[dict[str, int]]  # tx_id, account_id, amount
    deltas: dict[int, int]  # account id -> change of balance
    releases: dict[int, int]  # account id -> credits no longer held
    holds: list[dict[str, object]]  # _hold, _status, _captured


def settlement_writes(plans: Sequence[SettlePlan], tx_ids: Mapping[str, int]) -> SettlementWrites:
    """Each plan's double entry (its moves must sum to zero), and what becomes of its
    holds: captured for what a loser paid, released for everyone else."""
    lines: list[dict[str, int]] = []
    deltas: dict[int, int] = {}
    releases: dict[int, int] = {}
    hold_rows: list[dict[str, object]] = []
    for plan in plans:
        tx_id = tx_ids[plan.hand_id]
        by_owner = {h.owner: h for h in plan.holds}
        moves = {by_owner[p.user_id].account_id: p.amount for p in plan.applied}
        if sum(moves.values()) != 0:
            raise ValueError(f"transaction {tx_id} does not balance: {moves}")
        lines += [{"tx_id": tx_id, "account_id": a, "amount": x} for a, x in moves.items() if x]
        for account, amount in moves.items():
            deltas[account] = deltas.get(account, 0) + amount
        captured = {p.user_id: -p.amount for p in plan.applied if p.amount < 0}
        for h in plan.holds:
            releases[h.account_id] = releases.get(h.account_id, 0) + h.amount
            hold_rows.append(
                {
                    "_hold": h.id,
                    "_status": "captured" if captured.get(h.owner) else "released",
                    "_captured": captured.get(h.owner, 0),
                }
            )
    return SettlementWrites(entries=lines, deltas=deltas, releases=releases, holds=hold_rows)


# --- void ----------------------------------------------------------------------------------


def void_answer(hand_id: str, hand: Hand | None) -> Settlement | None:
    """The stored answer of a voided hand, or None when voiding it is to be written; a
    settled hand cannot be voided (raised before anything is written)."""
    if hand is None or hand.answer is None:
        return None
    if hand.status != "voided":
        log.error(
            "hand %s: void refused: the hand was settled (transaction %s); one outcome per hand",
            hand_id,
            hand.answer.tx_id,
        )
        raise ServiceError(codes.CONFLICT, f"hand {hand_id} was settled; cannot void it")
    return hand.answer


def void_memo(hand_id: str, table: str, why: str) -> str:
    return f"hand {hand_id} at table {table} voided" + (f": {why}" if why else "")


# --- batches -------------------------------------------------------------------------------


class SettleRun(msgspec.Struct, frozen=True, kw_only=True):
    """Consecutive settlements of a batch, checked with one query, written together."""

    settles: tuple[tuple[int, SettleHand], ...]  # (index in the batch, outcome)


class VoidAt(msgspec.Struct, frozen=True, kw_only=True):
    index: int
    void: VoidHand


def batch_steps(outcomes: Sequence[SettleHand | VoidHand]) -> list[SettleRun | VoidAt]:
    """A batch in the order it applies: each void after the settlements before it."""
    steps: list[SettleRun | VoidAt] = []
    run: list[tuple[int, SettleHand]] = []
    for index, outcome in enumerate(outcomes):
        match outcome:
            case SettleHand():
                run.append((index, outcome))
            case VoidHand():
                if run:
                    steps.append(SettleRun(settles=tuple(run)))
                    run = []
                steps.append(VoidAt(index=index, void=outcome))
            case _:
                assert_never(outcome)
    if run:
        steps.append(SettleRun(settles=tuple(run)))
    return steps


class RunPlan(msgspec.Struct, frozen=True, kw_only=True):
    """What a run of settlements comes to before anything is written."""

    answers: dict[int, Settlement | ServiceError]  # index -> answer known already
    plans: dict[str, SettlePlan]  # hand -> what to write, once per hand
    written: dict[int, str]  # index -> hand whose written settlement answers it


def plan_run(run: SettleRun, known: Mapping[str, Hand]) -> RunPlan:
    """Plan each settlement of a run as :func:`plan_settlement` would alone. A hand
    twice in the run is planned once: the repeat gets the first one's answer, or a
    ``conflict`` if its payments differ, exactly as a repeat after it would."""
    answers: dict[int, Settlement | ServiceError] = {}
    plans: dict[str, SettlePlan] = {}
    written: dict[int, str] = {}
    for index, outcome in run.settles:
        try:
            check_id(outcome.hand_id, "hand_id")
            check_payments(outcome.payments)
            first = plans.get(outcome.hand_id)
            if first is not None:  # a repeat within the batch: as a repeat after it
                if net(first.requested) != net(outcome.payments):
                    raise _settled_with_other_payments(outcome.hand_id)
                written[index] = outcome.hand_id
                continue
            plan = plan_settlement(
                outcome.hand_id, outcome.payments, outcome.table_id, known.get(outcome.hand_id)
            )
        except ServiceError as exc:
            answers[index] = exc
            continue
        match plan:
            case Settlement():
                answers[index] = plan
            case SettlePlan():
                plans[outcome.hand_id] = plan
                written[index] = outcome.hand_id
            case _:
                assert_never(plan)
    return RunPlan(answers=answers, plans=plans, written=written)
