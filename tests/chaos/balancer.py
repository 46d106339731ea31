"""A tiny TCP load balancer: new connections round-robin over the backends that accept.

Clients (HTTP and WebSocket alike) connect to one port; each new connection is piped to
the next gateway in turn, skipping one that refuses (a killed gateway). When a backend
dies its connections are closed, so clients reconnect, and land on a live gateway.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import Counter


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while True:
        data = await reader.read(65536)
        if not data:
            return
        writer.write(data)
        await writer.drain()


class Balancer:
    def __init__(self, backends: list[int], host: str = "127.0.0.1") -> None:
        self.backends = list(backends)
        self.host = host
        self.port = 0
        self.accepted: Counter[int] = Counter()  # backend port -> connections it took
        self.refused: Counter[int] = Counter()  # backend port -> connections it refused
        self._next = 0
        self._server: asyncio.Server | None = None
        self._links: set[asyncio.Task[None]] = set()

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def start(self) -> Balancer:
        self._server = await asyncio.start_server(self._handle, self.host, 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._links):
            task.cancel()
        for task in list(self._links):
            with contextlib.suppress(BaseException):
                await task
        if self._server is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)

    async def _connect(self) -> tuple[int, asyncio.StreamReader, asyncio.StreamWriter] | None:
        first = self._next
        self._next += 1
        for i in range(len(self.backends)):
            port = self.backends[(first + i) % len(self.backends)]
            try:
                reader, writer = await asyncio.wait_for(asyncio.open_connection(self.host, port), 2)
            except (OSError, TimeoutError):
                self.refused[port] += 1
                continue
            self.accepted[port] += 1
            return port, reader, writer
        return None

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._links.add(task)
        backend_writer: asyncio.StreamWriter | None = None
        try:
            picked = await self._connect()
            if picked is None:
                return  # every gateway is down: the client sees a closed connection
            _port, backend_reader, backend_writer = picked
            both = [
                asyncio.create_task(_pipe(reader, backend_writer)),
                asyncio.create_task(_pipe(backend_reader, writer)),
            ]
            try:
                # Either side closing (or failing) ends the link: a dead gateway's clients
                # must notice at once and reconnect through another one.
                await asyncio.wait(both, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for t in both:
                    t.cancel()
                for t in both:
                    with contextlib.suppress(BaseException):
                        await t
        except Exception:
            pass
        finally:
            for w in (writer, backend_writer):
                if w is not None:
                    with contextlib.suppress(Exception):
                        w.close()
            self._links.discard(task)
