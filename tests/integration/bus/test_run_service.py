"""``run_service``: what every service's ``__main__`` runs. A bootstrap's deps reach its
handlers (``handle(cmd, deps)``), its hooks and background tasks start after the
endpoints serve and stop before NATS drains, and what it opened is closed at the end."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass

import msgspec
import pytest
from nats.aio.client import Client as NATS

from kalaro.bus import Route, Service, request, route
from kalaro.bus.runner import Running, run_service
from kalaro.devstack import NatsServer
from kalaro.proto.endpoints import Endpoint
from kalaro.settings import Settings, load_settings


class Greet(msgspec.Struct, kw_only=True):
    name: str


class Greeting(msgspec.Struct, kw_only=True):
    text: str


@dataclass
class Deps:
    salutation: str


async def greet(cmd: Greet, deps: Deps) -> Greeting:
    return Greeting(text=f"{deps.salutation}, {cmd.name}")


async def test_a_bootstrapped_service_serves_its_deps_then_drains_in_order(
    nats_server: NatsServer, nc: NATS, unique: str
) -> None:
    endpoint = Endpoint(f"test.{unique}.greet", Greet, Greeting)
    routes: list[Route[Deps]] = [route(endpoint, greet)]
    events: list[str] = []
    stop = asyncio.Event()

    async def background() -> None:
        events.append("background started")
        try:
            await asyncio.Event().wait()
        finally:
            events.append("background cancelled")

    async def bootstrap(
        settings: Settings, bus: NATS, resources: contextlib.AsyncExitStack
    ) -> Running:
        async def closed() -> None:
            events.append("resource closed")

        resources.push_async_callback(closed)

        async def started() -> None:
            events.append("on_start")

        async def stopped() -> None:
            events.append("on_stop")

        return Running(
            Service(f"greeter-{unique}").bind(routes, Deps("Mabuhay")),
            on_start=[started],
            background=[background],
            on_stop=[stopped],
        )

    settings = load_settings({}, nats_url=nats_server.url, health_port=-1)
    running = asyncio.create_task(run_service(f"greeter-{unique}", bootstrap, settings, stop=stop))
    for _ in range(100):
        if "background started" in events:
            break
        await asyncio.sleep(0.05)
    reply = await request(nc, endpoint, Greet(name="Ana"))
    assert reply == Greeting(text="Mabuhay, Ana")
    stop.set()
    await asyncio.wait_for(running, 10)
    assert events == [
        "on_start",
        "background started",
        "background cancelled",
        "on_stop",
        "resource closed",
    ]


def test_a_subject_without_its_declaration_is_refused(unique: str) -> None:
    async def bound(cmd: Greet) -> Greeting:
        return await greet(cmd, Deps("Hi"))

    with pytest.raises(TypeError, match="Endpoint"):
        Service("old").add(f"test.{unique}", bound)  # type: ignore[arg-type]
