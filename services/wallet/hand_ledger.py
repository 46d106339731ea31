"""The ledger's operations on hands: place holds, settle, void, and apply a batch of
outcomes. Each is one SQL transaction (:func:`~services.wallet.store.transaction`).

Every operation on a hand first claims the hand's row (see
:mod:`services.wallet.hand_store`), so a void racing the holds, or a settle racing a
void, can never both apply. What an outcome does is decided by
:mod:`services.wallet.outcomes`; callers reach these through
:mod:`services.wallet.ledger`, which re-exports them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import assert_never

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

from kalaro.bus.errors import ServiceError
from kalaro.proto.wallet import HoldRequest, HoldsPlaced, Payment, SettleHand, Settlement, VoidHand
from services.wallet import hand_store, rules, store
from services.wallet import outcomes as outcome_rules
from services.wallet.outcomes import SettlePlan, SettleRun, VoidAt
from services.wallet.rules import MAX_ID, SYSTEM
from services.wallet.store import transaction


async def place_holds(
    engine: AsyncEngine,
    table_id: str,
    hand_id: str,
    requests: Sequence[HoldRequest],
    game: str = "",
) -> HoldsPlaced:
    """Hold credits on every seated player for one hand: all of them, or none.

    A hold never exceeds the player's available balance (balance minus holds). If anyone
    is short, nothing is held and the error names everyone who is. Repeating the call
    for a hand whose holds are in place returns those holds and changes nothing; a hand
    already settled or voided is a ``conflict`` (its holds are gone, and handing them
    back as if placed would let a hand start unbacked).
    """
    rules.check_holds(table_id, hand_id, requests, game)

    async def body(conn: AsyncConnection) -> HoldsPlaced:
        hand = await hand_store.load_hand(conn, hand_id)
        if hand is not None:
            placed = [(h.owner, h.amount) for h in hand.holds]
            return rules.holds_in_place(hand_id, hand.status, placed)
        at = store.now()
        await hand_store.open_hand(conn, hand_id, table_id, game, at)
        await store.claim(
            conn,
            kind="holds",
            key=f"holds:{hand_id}",
            actor=SYSTEM,
            memo=f"holds for hand {hand_id} at table {table_id}",
            hand_id=hand_id,
        )
        found = await store.lock_accounts(conn, (r.user_id for r in requests))
        rules.check_available(hand_id, requests, found)
        await hand_store.hold(conn, table_id, hand_id, requests, found, at)
        return HoldsPlaced(hand_id=hand_id, holds=tuple(requests))

    return await transaction(engine, body)


async def settle(
    engine: AsyncEngine, hand_id: str, payments: Sequence[Payment], table_id: str = ""
) -> Settlement:
    """Apply a finished hand in ONE transaction: capture holds, move credits, release the rest.

    Keyed by hand id: a repeat returns the stored answer and changes nothing; settling a
    voided hand, or re-settling with different payments, is a ``conflict``. Every player
    in ``payments`` must hold credits on this hand (they are the seated players), and
    ``payments`` must sum to zero, else ``bad_request``. A loser pays at most their hold
    (see :func:`~services.wallet.outcomes.cap_payments`). Players who hold credits on
    the hand but appear in no payment just get their hold back.
    """
    rules.check_id(hand_id, "hand_id")
    rules.check_payments(payments)

    async def body(conn: AsyncConnection) -> Settlement:
        hand = await hand_store.load_hand(conn, hand_id)
        plan = outcome_rules.plan_settlement(hand_id, payments, table_id, hand)
        match plan:
            case Settlement():
                return plan
            case SettlePlan():
                return (await hand_store.write_settlements(conn, [plan]))[hand_id]
            case _:
                assert_never(plan)

    return await transaction(engine, body)


async def apply_outcomes(
    engine: AsyncEngine, outcomes: Sequence[SettleHand | VoidHand]
) -> list[Settlement | ServiceError]:
    """Settle or void a batch of hands in ONE transaction; one answer per outcome, in order.

    Each outcome gets what :func:`settle` or :func:`void` would answer on its own: the
    settlement, or the refusal (``bad_request``, ``conflict``) it would raise. A refused
    outcome writes nothing, and the others still apply. A hand twice in the batch is
    applied once (the second gets the first's answer, or a ``conflict`` if its payments
    differ), exactly as a repeat would. One commit for the lot is what makes a batch
    cheap: consecutive settlements are checked with one query and written with one
    statement per table. Anything other than a refusal (the database failing) fails the
    whole batch and nothing of it is written.
    """
    steps = outcome_rules.batch_steps(outcomes)

    async def body(conn: AsyncConnection) -> list[Settlement | ServiceError]:
        answers: list[Settlement | ServiceError | None] = [None] * len(outcomes)
        for step in steps:
            match step:
                case SettleRun():
                    await _settle_run(conn, step, answers)
                case VoidAt():
                    try:
                        rules.check_id(step.void.hand_id, "hand_id")
                        answers[step.index] = await _void_in(
                            conn, step.void.hand_id, step.void.table_id
                        )
                    except ServiceError as exc:  # raised before any write: the batch stays clean
                        answers[step.index] = exc
                case _:
                    assert_never(step)
        assert all(a is not None for a in answers)
        return [a for a in answers if a is not None]

    return await transaction(engine, body)


async def _settle_run(
    conn: AsyncConnection, run: SettleRun, answers: list[Settlement | ServiceError | None]
) -> None:
    wanted = (o.hand_id for _, o in run.settles if 0 < len(o.hand_id) <= MAX_ID)
    planned = outcome_rules.plan_run(run, await hand_store.load_hands(conn, wanted))
    plans = list(planned.plans.values())
    written = await hand_store.write_settlements(conn, plans) if plans else {}
    for index, answer in planned.answers.items():
        answers[index] = answer
    for index, hand_id in planned.written.items():
        answers[index] = written[hand_id]


async def void(
    engine: AsyncEngine,
    hand_id: str,
    table_id: str = "",
    *,
    why: str = "",
    actor: str = SYSTEM,
) -> Settlement:
    """Release every hold of a cancelled hand; no credits move.

    Voiding a hand that has no holds (yet) still records it, so holds that arrive late
    for it are refused rather than stranded. A repeat returns the stored answer; a
    settled hand cannot be voided (``conflict``). ``why`` and ``actor`` are recorded on
    the transaction (the reconciler says why it released a hold nobody decided).
    """
    rules.check_id(hand_id, "hand_id")

    async def body(conn: AsyncConnection) -> Settlement:
        return await _void_in(conn, hand_id, table_id, why=why, actor=actor)

    return await transaction(engine, body)


async def _void_in(
    conn: AsyncConnection, hand_id: str, table_id: str, *, why: str = "", actor: str = SYSTEM
) -> Settlement:
    """The body of :func:`void`; its refusal is raised before it writes anything."""
    hand = await hand_store.load_hand(conn, hand_id)
    answer = outcome_rules.void_answer(hand_id, hand)
    if answer is not None:
        return answer
    table = table_id or (hand.table_id if hand else "")
    tx_id = await store.claim(
        conn,
        kind="void",
        key=outcome_rules.outcome_key(hand_id),
        actor=actor,
        memo=outcome_rules.void_memo(hand_id, table, why),
        hand_id=hand_id,
    )
    if hand is None:
        await hand_store.void_tombstone(conn, hand_id, table, tx_id)
        return Settlement(hand_id=hand_id, status="voided", payments=(), tx_id=tx_id)
    await hand_store.close_hand(conn, hand_id, "voided", tx_id)
    await store.post(conn, tx_id, {}, {h.account_id: h.amount for h in hand.holds})
    await hand_store.release_holds(conn, hand_id)
    return Settlement(hand_id=hand_id, status="voided", payments=(), tx_id=tx_id)
