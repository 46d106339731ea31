"""What the auth functions are given: :class:`AuthDeps`, built once per process (see
:func:`services.auth.bootstrap.build_deps`), and the callbacks to the rest of the system."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy.ext.asyncio import AsyncEngine

from kalaro.proto.auth import UserRegistered
from kalaro.proto.wallet import Adjusted, GrantApproved
from kalaro.settings import Settings
from kalaro.tokens import public_jwks
from services.auth.devices import secret_key
from services.auth.google import GoogleVerifier
from services.auth.mail import Mailer
from services.auth.passwords import Passwords
from services.auth.records import Account
from services.auth.rules import registered
from services.auth.throttle import Throttle

log = logging.getLogger("services.auth")

Publisher = Callable[[UserRegistered], Awaitable[None]]
# Revokes a session's access tokens at once: (session id, user id).
Revoker = Callable[[str, str], Awaitable[None]]
# Asks the wallet to grant approved credits (exactly once per approval id).
CreditGranter = Callable[[GrantApproved], Awaitable[Adjusted]]


@dataclass(frozen=True)
class AuthDeps:
    """Everything the auth functions need, built once per process (see bootstrap.build_deps)."""

    engine: AsyncEngine
    passwords: Passwords
    throttle: Throttle
    signing_key: Ed25519PrivateKey
    settings: Settings
    google: GoogleVerifier | None = None
    on_registered: Publisher | None = None
    on_revoked: Revoker | None = None
    clock: Callable[[], float] = time.time
    mailer: Mailer | None = None
    # None: credits approved here stay approved-not-applied (no wallet to ask).
    grant_credits: CreditGranter | None = None
    jwks: tuple[dict[str, str], ...] = field(init=False)
    kid: str = field(init=False)
    # Signs device cookies and hashes one-time codes (services.auth.devices).
    device_key: bytes = field(init=False)

    def __post_init__(self) -> None:
        jwks = tuple(public_jwks(self.signing_key))
        object.__setattr__(self, "jwks", jwks)
        object.__setattr__(self, "kid", jwks[0]["kid"])
        object.__setattr__(self, "device_key", secret_key(self.signing_key))
        if self.mailer is None:
            object.__setattr__(self, "mailer", Mailer(self.settings))

    def now_ms(self) -> int:
        return int(self.clock() * 1000)


async def announce(publish: Publisher | None, account: Account) -> None:
    """Tell the rest of the system about a new account; never fail the sign-up over it."""
    if publish is None:
        return
    try:
        await publish(registered(account))
    except Exception:
        # The wallet also grants the welcome credits on demand, so this is recoverable.
        log.warning("could not publish UserRegistered for %s", account.user_id, exc_info=True)


async def revoke_access(deps: AuthDeps, family_id: str, user_id: str) -> None:
    """End a session's access tokens now (the gateways' denylist), not at their expiry."""
    if deps.on_revoked is not None:
        await deps.on_revoked(family_id, user_id)
