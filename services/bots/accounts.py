"""Bot accounts: who the bots are, and one signed-in session per account.

A bot is an ordinary account with the roles ``player`` and ``bot``. Its email and name
come from its index in the pool; its password is derived from the service's secret
(HMAC), so every replica sharing the secret can sign the same bots in, and nothing
needs storing. The auth service creates the account (or resets its password to the
derived one) over the internal ``auth.bots.create``; from there on a bot uses only the
gateway, like any player: it signs in, calls the REST routes with its access token,
refreshes the token before it runs out, and keeps one WebSocket for all its tables.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from nats.aio.client import Client as NATS

from kalaro.bus import request
from kalaro.client import ApiError, KalaroClient, TableSocket
from kalaro.proto import endpoints
from kalaro.proto import errors as codes
from kalaro.proto.auth import BOT_EMAIL_DOMAIN, CreateBot, UserProfile

log = logging.getLogger("kalaro.bots")

T = TypeVar("T")

#: Bot names, from the seed's single-player table (Jhat, Angie, Kling) and friends.
NAMES: tuple[str, ...] = (
    "Angie", "Jhat", "Kling", "Bong", "Inday", "Dodong", "Nene", "Toto",
    "Ising", "Pining", "Caloy", "Bebang", "Andoy", "Luz", "Tomas", "Minda",
)  # fmt: skip

#: Seconds a ping may take before the socket is taken for dead and replaced.
PING_TIMEOUT = 10.0


@dataclass(frozen=True)
class Credentials:
    index: int
    email: str
    display_name: str
    password: str


def credentials(secret: bytes, index: int) -> Credentials:
    """Bot ``index``'s email, name and password (derived from ``secret``)."""
    email = f"bot-{index:02d}@{BOT_EMAIL_DOMAIN}"
    name = NAMES[index % len(NAMES)]
    if index >= len(NAMES):
        name = f"{name} {index // len(NAMES) + 1}"
    digest = hmac.new(secret, email.encode(), hashlib.sha256).digest()
    password = base64.urlsafe_b64encode(digest).rstrip(b"=").decode()
    return Credentials(index, email, name, password)


class BotAccount:
    """One bot's session: an SDK client for REST and one socket for all its tables.

    ``start`` is idempotent and safe to call from many tasks: the first call creates
    the account (once per process), signs in and opens the socket.
    """

    def __init__(
        self,
        creds: Credentials,
        nc: NATS,
        gateway_url: str,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.creds = creds
        self._nc = nc
        self._gateway_url = gateway_url
        self._clock = clock
        self._client = KalaroClient(gateway_url)
        self._socket: TableSocket | None = None
        self._lock = asyncio.Lock()
        self._created = False
        self._signed_at = 0.0

    @property
    def name(self) -> str:
        return self.creds.display_name

    @property
    def user_id(self) -> str | None:
        return self._client.tokens.user.user_id if self._client.tokens else None

    async def start(self) -> None:
        """Signed in (the account created first, once per process)."""
        async with self._lock:
            if self._client.tokens is None:
                await self._sign_in()

    async def create(self) -> None:
        """The account exists at auth, with our password (asked once per process)."""
        async with self._lock:
            if not self._created:
                await self._ensure_account()
                self._created = True

    async def socket(self) -> TableSocket:
        """The account's socket, opened on first use."""
        await self.start()
        async with self._lock:
            if self._socket is None:
                self._socket = await self._open_socket([])
            return self._socket

    async def drop_socket(self) -> None:
        """Close the socket of an account with no tables left (it would only idle)."""
        async with self._lock:
            socket, self._socket = self._socket, None
        if socket is not None:
            with contextlib.suppress(Exception):
                await socket.close()

    async def rest(self, call: Callable[[KalaroClient], Awaitable[T]]) -> T:
        """Make a REST call with a fresh token; sign in again once if it was refused."""
        await self.start()
        await self._refresh_if_old()
        try:
            return await call(self._client)
        except ApiError as exc:
            if exc.status != 401:
                raise
        async with self._lock:
            await self._sign_in()
        return await call(self._client)

    async def heartbeat(self) -> None:
        """Keep the session alive: refresh an ageing token; replace a dead socket.

        The gateway drops sockets that stay silent, and a socket whose reader died
        would leave the bot deaf, so a ping that gets no answer means a new socket
        (subscribed to the same tables: each brings a full view).
        """
        await self._refresh_if_old()
        socket = self._socket
        if socket is None:
            return
        try:
            await asyncio.wait_for(socket.ping(), PING_TIMEOUT)
            return
        except Exception as exc:
            log.warning("bot %s: socket unresponsive (%r); reconnecting", self.name, exc)
        async with self._lock:
            if self._socket is not socket:
                return  # replaced meanwhile
            tables = list(socket.tables)
            with contextlib.suppress(Exception):
                await socket.close()
            self._socket = None
            self._socket = await self._open_socket(tables)

    async def close(self) -> None:
        if self._socket is not None:
            with contextlib.suppress(Exception):
                await self._socket.close()
            self._socket = None
        await self._client.close()

    # --- internals ------------------------------------------------------------------------

    async def _ensure_account(self) -> UserProfile:
        c = self.creds
        return await request(
            self._nc,
            endpoints.AUTH_CREATE_BOT,
            CreateBot(email=c.email, display_name=c.display_name, password=c.password),
            timeout=10,
        )

    async def _sign_in(self) -> None:
        if not self._created:
            await self._ensure_account()
            self._created = True
        try:
            await self._client.sign_in(self.creds.email, self.creds.password)
        except ApiError as exc:
            if exc.code != codes.INVALID_CREDENTIALS:
                raise
            # Another replica with another secret reset the password: take it back.
            await self._ensure_account()
            await self._client.sign_in(self.creds.email, self.creds.password)
        self._signed_at = self._clock()

    async def _refresh_if_old(self) -> None:
        tokens = self._client.tokens
        if tokens is None or self._clock() - self._signed_at < tokens.expires_in / 2:
            return
        async with self._lock:
            if self._client.tokens is not tokens:
                return  # refreshed by another task meanwhile
            try:
                await self._client.refresh()
                self._signed_at = self._clock()
            except ApiError:
                await self._sign_in()

    async def _open_socket(self, tables: list[str]) -> TableSocket:
        # The SDK's default transport (the websockets library), not the load generator's.
        socket: TableSocket = self._client.table_socket(reconnect=True, keep_frames=False)
        await socket.connect()
        for table_id in tables:
            try:
                await socket.subscribe(table_id)
            except Exception:
                log.warning("bot %s: could not resubscribe to %s", self.name, table_id)
        return socket
