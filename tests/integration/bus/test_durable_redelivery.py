"""A message handed to a consumer whose connection then died is delivered again soon.

When a NATS node is killed, a pull request's reply subject dies with its connection,
and JetStream counts the message as delivered until its ack wait runs out; the chaos
test saw a settlement held up for the whole 30 s that used to be.
"""

from __future__ import annotations

import asyncio
import time

import msgspec
from nats.aio.client import Client as NATS
from nats.js.api import AckPolicy, ConsumerConfig, StreamConfig

from kalaro.bus.jetstream import ACK_WAIT_SECONDS, DurableConsumer
from kalaro.bus.runner import connect
from kalaro.devstack import NatsServer


class Note(msgspec.Struct):
    text: str


async def test_an_unacked_delivery_comes_again_within_the_ack_wait(
    nats_server: NatsServer, nc: NATS, unique: str
) -> None:
    js = nc.jetstream()
    stream, subject, durable = f"S{unique}", f"{unique}.notes", f"d{unique}"
    await js.add_stream(StreamConfig(name=stream, subjects=[f"{unique}.>"]))
    # An older deployment made the durable with a 30 s ack wait.
    await js.add_consumer(
        stream,
        ConsumerConfig(
            durable_name=durable, ack_policy=AckPolicy.EXPLICIT, ack_wait=30.0,
            filter_subject=subject,
        ),
    )  # fmt: skip
    await js.publish(subject, msgspec.json.encode(Note("settle h1")))
    # A replica fetches it and dies before acking (its node was killed).
    doomed = await connect(nats_server.url, "doomed")
    sub = await doomed.jetstream().pull_subscribe(subject, durable=durable, stream=stream)
    assert len(await sub.fetch(1, timeout=2)) == 1
    await doomed.close()

    got: list[Note] = []
    arrived = asyncio.Event()

    async def handle(note: Note) -> None:
        got.append(note)
        arrived.set()

    consumer = DurableConsumer(
        nc, stream=stream, subject=subject, durable=durable, message_type=Note, handler=handle
    )
    started = time.monotonic()
    await consumer.start()
    try:
        info = await js.consumer_info(stream, durable)
        assert info.config.ack_wait == ACK_WAIT_SECONDS  # the old durable was brought up to date
        # Delivered again after the new ack wait, not the old 30 s (generous bound).
        await asyncio.wait_for(arrived.wait(), timeout=20)
        assert got == [Note("settle h1")]
        assert time.monotonic() - started < 20
    finally:
        await consumer.stop()
        await js.delete_stream(stream)
