"""The wallet's durable JetStream consumers (its request handlers are in
:mod:`~services.wallet.handlers`, bound in :mod:`~services.wallet.bootstrap`).

Two consumers make sure nothing is lost while the wallet is down:

* ``RESULTS`` (``results.>``): hand outcomes from the engines, settled or voided. The
  ledger is keyed by hand id, so a redelivery (or a duplicate that slipped past
  JetStream's dedupe window) changes nothing.
* ``EVENTS`` (``events.auth.user_registered``): each new user's welcome grant, once.

A message the ledger refuses for good (``bad_request``, ``conflict``) is logged and
acknowledged: redelivering it would only fail again. Anything else (the database is
down) is left unacknowledged so JetStream delivers it again.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from nats.aio.client import Client as NATS
from nats.js import JetStreamContext
from prometheus_client import Histogram
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.bus import ServiceError
from kalaro.bus.jetstream import DurableConsumer, batch_ages, ensure_stream, message_age
from kalaro.proto import errors as codes
from kalaro.proto import subjects
from kalaro.proto.auth import UserRegistered
from kalaro.proto.wallet import (
    HandOutcome,
    SettleHand,
)
from kalaro.settings import Settings
from services.wallet import ledger
from services.wallet.handlers import apply_outcome

log = logging.getLogger("kalaro.wallet")

SERVICE_NAME = "wallet"

SETTLEMENT_LAG = Histogram(
    "kalaro_settlement_lag_seconds",
    "From a hand's result reaching JetStream (the hand finished) to its settlement",
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300),
)


async def ensure_streams(js: JetStreamContext, settings: Settings | None = None) -> None:
    """Create the streams the wallet consumes, or bring them up to their declared
    replicas and limits (every replica may call this)."""
    await ensure_stream(js, subjects.RESULTS_STREAM, settings=settings)
    await ensure_stream(js, subjects.EVENTS_STREAM, settings=settings)


def _log_refusal(what: str, exc: ServiceError, message: Any) -> None:
    """A ledger refusal is final: logged here, and the message acknowledged."""
    if exc.code == codes.CONFLICT:
        return  # a second outcome for a hand: the ledger has logged why, once
    log.error("%s refused for good, acknowledged: %s: %r", what, exc, message)


def _acking_refusals(
    what: str, handle: Callable[[Any], Awaitable[object]]
) -> Callable[[Any], Awaitable[None]]:
    """Wrap a consumer handler: a ledger refusal is final, so log it and let it be acked."""

    async def handler(message: Any) -> None:
        try:
            await handle(message)
        except ServiceError as exc:
            _log_refusal(what, exc, message)

    return handler


def _outcome_batches(
    engine: AsyncEngine,
) -> Callable[[list[HandOutcome]], Awaitable[list[BaseException | None]]]:
    """The results consumer's batch handler: every outcome of a fetch in one transaction.

    The consumer acks each message only after this returns, i.e. after the commit; a
    crash in between redelivers them and the ledger's ``outcome:<hand>`` keys make the
    repeat change nothing. Should the batch itself fail (not a refusal: say a row that
    breaks a constraint), each outcome is applied on its own, so one bad message cannot
    hold up the others, and only what fails again is redelivered.
    """
    single = _acking_refusals("hand outcome", lambda m: apply_outcome(engine, m))

    async def handle(messages: list[HandOutcome]) -> list[BaseException | None]:
        try:
            answers = await ledger.apply_outcomes(engine, messages)
        except Exception:
            log.warning("a batch of %d outcomes failed; one by one", len(messages), exc_info=True)
            results: list[BaseException | None] = []
            for message in messages:
                try:
                    await single(message)
                except Exception as exc:
                    results.append(exc)
                else:
                    results.append(None)
            return results
        for message, answer, age in zip(
            messages, answers, batch_ages() or [None] * len(messages), strict=True
        ):
            if isinstance(answer, ServiceError):
                _log_refusal("hand outcome", answer, message)
            elif isinstance(message, SettleHand) and age is not None:
                SETTLEMENT_LAG.observe(age)  # the result stored (hand finished) -> settled
        return [None] * len(messages)

    return handle


async def start_consumers(
    nc: NATS,
    engine: AsyncEngine,
    settings: Settings,
    *,
    results_durable: str = subjects.WALLET_RESULTS_CONSUMER,
    results_subject: str = subjects.RESULTS_SUBJECTS,
    users_durable: str = subjects.WALLET_USERS_CONSUMER,
) -> list[DurableConsumer]:
    """Ensure the streams, then start the hand-outcome and new-user consumers.

    The durable names (and the results filter) are parameters only so tests sharing one
    nats-server can keep their consumers apart; services use the defaults.
    """
    await ensure_streams(nc.jetstream(), settings)

    async def outcome(message: HandOutcome) -> None:
        await apply_outcome(engine, message)
        if isinstance(message, SettleHand) and (lag := message_age()) is not None:
            SETTLEMENT_LAG.observe(lag)  # the result stored (hand finished) -> settled

    async def registered(message: UserRegistered) -> None:
        await ledger.welcome_grant(engine, message.user_id, settings.welcome_grant)

    consumers = [
        DurableConsumer(
            nc,
            stream=subjects.RESULTS_STREAM,
            subject=results_subject,
            durable=results_durable,
            message_type=HandOutcome,
            handler=_acking_refusals("hand outcome", outcome),
            batch_handler=_outcome_batches(engine),
        ),
        DurableConsumer(
            nc,
            stream=subjects.EVENTS_STREAM,
            subject=subjects.USER_REGISTERED,
            durable=users_durable,
            message_type=UserRegistered,
            handler=_acking_refusals("welcome grant", registered),
        ),
    ]
    for consumer in consumers:
        await consumer.start()
    return consumers


async def stop_consumers(consumers: list[DurableConsumer]) -> None:
    for consumer in consumers:
        await consumer.stop()
