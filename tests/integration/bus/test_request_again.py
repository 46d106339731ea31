"""A paused replica keeps its NATS subscription and takes its share of requests without
answering: an idempotent request is sent again while unanswered, so it still gets its
answer from the live replica; any other request is lost with the paused one's share.

Two replicas of a service in one queue group on a real nats-server: one answers here,
the other is a separate process, frozen with SIGSTOP (as a long GC pause or a stalled
VM would freeze it) while the requests are made.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from collections.abc import AsyncIterator

import msgspec
import pytest
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from prometheus_client import REGISTRY

from kalaro.bus import RemoteError, request
from kalaro.bus.client import RESEND_BURST
from kalaro.bus.codec import encode
from kalaro.devstack import NatsServer
from kalaro.proto.endpoints import Endpoint

QUEUE = "replicas"
REQUESTS = 40
TIMEOUT = 1.0
#: The slow service's callers wait longer: its answers come between the last resend
#: (at 3/4 of this) and the end, with room to spare on a busy machine.
SLOW_TIMEOUT = 4.0


class Ping(msgspec.Struct, frozen=True, kw_only=True):
    n: int


class Pong(msgspec.Struct, frozen=True, kw_only=True):
    n: int


# A replica as a process of its own (a Pong is a Ping echoed); once it says READY it is
# frozen and answers nothing.
REPLICA = """
import asyncio, sys
import nats

async def main():
    nc = await nats.connect(sys.argv[1])
    async def answer(msg):
        await msg.respond(msg.data)
    await nc.subscribe(sys.argv[2], queue=sys.argv[3], cb=answer)
    await nc.flush()
    print("READY", flush=True)
    await asyncio.Event().wait()

asyncio.run(main())
"""


@pytest.fixture
async def frozen_replica(nats_server: NatsServer, nc: NATS, unique: str) -> AsyncIterator[str]:
    subject = f"test.{unique}.ping"

    async def answer(msg: Msg) -> None:
        await msg.respond(encode(Pong(n=msgspec.json.decode(msg.data, type=Ping).n)))

    live = await nc.subscribe(subject, queue=QUEUE, cb=answer)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-c", REPLICA, nats_server.url, subject, QUEUE,
        stdout=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        assert process.stdout is not None
        line = await asyncio.wait_for(process.stdout.readline(), 20)
        assert line.strip() == b"READY", line
        process.send_signal(signal.SIGSTOP)
        yield subject
    finally:
        process.send_signal(signal.SIGCONT)
        process.kill()
        await process.wait()
        await live.unsubscribe()


async def _answered(
    nc: NATS, endpoint: Endpoint[Ping, Pong], count: int = REQUESTS, timeout: float = TIMEOUT
) -> int:
    async def one(n: int) -> str:
        try:
            reply = await request(nc, endpoint, Ping(n=n), timeout=timeout)
        except RemoteError as exc:
            return exc.code
        return "answered" if reply == Pong(n=n) else f"wrong answer {reply}"

    outcomes = await asyncio.gather(*(one(n) for n in range(count)))
    assert set(outcomes) <= {"answered", "unavailable"}, outcomes
    return outcomes.count("answered")


def _asked_again(subject: str) -> float:
    value = REGISTRY.get_sample_value("kalaro_requests_asked_again_total", {"subject": subject})
    return value or 0.0


async def test_an_idempotent_request_reaches_the_live_replica_past_a_paused_one(
    nc: NATS, frozen_replica: str, caplog: pytest.LogCaptureFixture
) -> None:
    subject = frozen_replica
    before = _asked_again(subject)
    caplog.set_level(logging.WARNING, logger="kalaro.bus")
    # NATS picks a queue member at random for each message. Sent once, about half of
    # the requests go to the paused replica (at most 8 of 40 lost: odds ~1e-4); sent up
    # to four times, about 1 in 16 (so at least 32 of 40 answered: odds ~1e-4).
    once = await _answered(nc, Endpoint(subject, Ping, Pong))
    assert once <= REQUESTS - 9, f"only {REQUESTS - once} of {REQUESTS} lost: no replica paused?"
    again = await _answered(nc, Endpoint(subject, Ping, Pong, idempotent=True))
    assert again >= REQUESTS - 8, f"{REQUESTS - again} of {REQUESTS} idempotent requests lost"
    print(f"answered with one replica paused: {once}/{REQUESTS} sent once, {again} sent again")
    assert _asked_again(subject) > before
    assert f"no answer on {subject} within" in caplog.text


async def test_a_slow_service_is_not_flooded_with_resends(nc: NATS, unique: str) -> None:
    # Alive but slow: every answer comes after three quarters of the caller's time, so
    # every request would be sent four times; the subject's budget keeps the copies to
    # its burst here (and to one per request over time).
    subject = f"test.{unique}.slow"
    received = 0

    answering: set[asyncio.Task[None]] = set()

    async def answer_late(msg: Msg) -> None:
        await asyncio.sleep(SLOW_TIMEOUT * 0.85)
        await msg.respond(encode(Pong(n=msgspec.json.decode(msg.data, type=Ping).n)))

    async def slow(msg: Msg) -> None:  # each request answered late, all at once
        nonlocal received
        received += 1
        task = asyncio.create_task(answer_late(msg))
        answering.add(task)
        task.add_done_callback(answering.discard)

    sub = await nc.subscribe(subject, cb=slow)
    requests = 3 * int(RESEND_BURST)
    try:
        slow_endpoint = Endpoint(subject, Ping, Pong, idempotent=True)
        answered = await _answered(nc, slow_endpoint, requests, SLOW_TIMEOUT)
    finally:
        await sub.unsubscribe()
    assert answered == requests
    assert requests < received <= requests + RESEND_BURST, received  # not 4 x requests
