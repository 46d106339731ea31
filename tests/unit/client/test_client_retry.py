"""The SDK's backoff policy (``kalaro.client.retry``): pure, on a pretend clock.

No servers: the call is a function that fails a set number of times, and time passes
only when the policy sleeps, so every wait it chooses is seen exactly.
"""

from __future__ import annotations

import random

import httpx
import pytest

from kalaro.client import ApiError, KalaroClient
from kalaro.client.retry import Backoff, retryable
from kalaro.client.socket import FrameError


class Clock:
    """Time that moves only when someone sleeps (or a call takes ``call_seconds``)."""

    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


class Flaky:
    """Fails with ``error`` ``failures`` times, then answers ``"ok"``."""

    def __init__(self, clock: Clock, failures: int, error: Exception, call_seconds: float = 0):
        self.clock = clock
        self.failures = failures
        self.error = error
        self.call_seconds = call_seconds
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        self.clock.now += self.call_seconds
        if self.calls <= self.failures:
            raise self.error
        return "ok"


UNAVAILABLE = FrameError("unavailable", "no service answered on engine.tongits.act")


def test_waits_double_from_the_first_to_the_cap_each_jittered_below_its_base() -> None:
    backoff = Backoff(first=0.2, cap=5.0, jitter=0.5, rng=random.Random(1))
    bases = [0.2, 0.4, 0.8, 1.6, 3.2, 5.0, 5.0, 5.0]
    for attempt, base in enumerate(bases):
        for _ in range(50):
            assert base * 0.5 <= backoff.delay(attempt) <= base
    assert backoff.delay(10_000) <= 5.0  # no overflow however long it went on


def test_jitter_spreads_clients_that_lost_the_same_service() -> None:
    waits = {Backoff(rng=random.Random(seed)).delay(3) for seed in range(20)}
    assert len(waits) == 20
    assert Backoff(jitter=0.0).delay(3) == pytest.approx(1.6)


def test_only_nobody_answered_is_retryable() -> None:
    assert retryable(UNAVAILABLE)
    assert retryable(ApiError(503, "unavailable", "no service answered on wallet.balance"))
    assert not retryable(FrameError("stale_version", "the hand moved on"))
    assert not retryable(ApiError(409, "conflict", "seat taken"))
    assert not retryable(ApiError(500, "internal", "boom"))
    assert not retryable(TimeoutError("no reply from the gateway"))


async def test_retries_until_the_service_is_back() -> None:
    clock = Clock()
    call = Flaky(clock, failures=6, error=UNAVAILABLE)
    backoff = Backoff(deadline=60, jitter=0.0)
    assert await backoff.run(call, clock=clock, sleep=clock.sleep) == "ok"
    assert call.calls == 7
    assert clock.sleeps == pytest.approx([0.2, 0.4, 0.8, 1.6, 3.2, 5.0])


async def test_rides_out_a_restart_of_ten_seconds_and_more_than_five_tries() -> None:
    clock = Clock()
    back_at = clock.now + 10.0

    async def engine() -> str:
        if clock.now < back_at:
            raise UNAVAILABLE
        return "acked"

    backoff = Backoff(rng=random.Random(3))
    assert await backoff.run(engine, clock=clock, sleep=clock.sleep) == "acked"
    assert len(clock.sleeps) > 5
    assert clock.now - back_at < 5.0  # back within one capped wait of the service


async def test_after_the_deadline_the_error_is_raised_as_without_retries() -> None:
    clock = Clock()
    call = Flaky(clock, failures=10_000, error=UNAVAILABLE, call_seconds=0.05)
    backoff = Backoff(deadline=60, rng=random.Random(2))
    with pytest.raises(FrameError) as raised:
        await backoff.run(call, clock=clock, sleep=clock.sleep)
    assert raised.value is UNAVAILABLE
    assert 60 <= clock.now - 100.0 < 60 + 0.05 + 1e-9  # the last try starts at the deadline
    assert max(clock.sleeps) <= 5.0
    assert call.calls > 15


async def test_other_errors_are_raised_at_once() -> None:
    clock = Clock()
    stale = FrameError("stale_version", "version 7 is not current")
    call = Flaky(clock, failures=1, error=stale)
    with pytest.raises(FrameError) as raised:
        await Backoff().run(call, clock=clock, sleep=clock.sleep)
    assert raised.value is stale and call.calls == 1 and clock.sleeps == []


async def test_a_zero_deadline_turns_retries_off() -> None:
    clock = Clock()
    call = Flaky(clock, failures=1, error=UNAVAILABLE)
    with pytest.raises(FrameError):
        await Backoff(deadline=0).run(call, clock=clock, sleep=clock.sleep)
    assert call.calls == 1 and clock.sleeps == []


def test_nonsense_policies_are_refused() -> None:
    for bad in ({"deadline": -1}, {"first": 0}, {"factor": 0.5}, {"cap": 0.1}, {"jitter": 2}):
        with pytest.raises(ValueError):
            Backoff(**bad)  # type: ignore[arg-type]


# --- the REST side: which calls are tried again -----------------------------------------


def _client_behind(answers: list[int], seen: list[str]) -> KalaroClient:
    """A client whose gateway answers the statuses in ``answers`` in turn (0: the
    connection drops with no answer), over an in-memory transport: this is about the
    client's choice to try again, not about HTTP."""

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(request.method)
        status = answers.pop(0) if answers else 200
        if status == 0:
            raise httpx.RemoteProtocolError("Server disconnected without sending a response.")
        if status == 503:
            error = {"code": "unavailable", "message": "no service answered on wallet.balance"}
            return httpx.Response(503, json={"error": error})
        return httpx.Response(200, json={"user_id": "u1", "balance": 7, "held": 0, "available": 7})

    client = KalaroClient("http://gateway.test", retry=Backoff(first=0.01, cap=0.02, deadline=5))
    client._http = httpx.AsyncClient(
        base_url=client.base_url, transport=httpx.MockTransport(handle)
    )
    return client


async def test_a_read_answered_unavailable_is_tried_again() -> None:
    seen: list[str] = []
    async with _client_behind([503, 503, 503], seen) as client:
        balance = await client.balance()
    assert balance.balance == 7 and seen == ["GET"] * 4


async def test_a_write_answered_unavailable_is_raised_at_once() -> None:
    seen: list[str] = []
    async with _client_behind([503], seen) as client:
        with pytest.raises(ApiError) as refused:
            await client.request_credits(100)
    assert (refused.value.status, refused.value.code) == (503, "unavailable")
    assert seen == ["POST"]


async def test_retry_zero_raises_a_read_at_once() -> None:
    seen: list[str] = []
    async with _client_behind([503], seen) as client:
        client.retry = Backoff(deadline=0)
        with pytest.raises(ApiError):
            await client.balance()
    assert seen == ["GET"]


async def test_a_read_whose_connection_dropped_unanswered_is_tried_again() -> None:
    """A kept-alive connection the gateway closed just as it was reused (or a gateway
    restarting): nothing was answered, and a read is safe to make again."""
    seen: list[str] = []
    async with _client_behind([0, 0], seen) as client:
        balance = await client.balance()
    assert balance.balance == 7 and seen == ["GET"] * 3


async def test_a_write_whose_connection_dropped_is_raised_at_once() -> None:
    seen: list[str] = []
    async with _client_behind([0], seen) as client:
        with pytest.raises(httpx.RemoteProtocolError):
            await client.request_credits(100)
    assert seen == ["POST"]
