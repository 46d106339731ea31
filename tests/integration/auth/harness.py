"""Helpers for the auth integration tests: a handle on the running service, a movable
clock, and a stand-in for Google's signing key (tests sign ID tokens themselves).
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default
from pathlib import Path
from typing import Any, TypeVar, cast

import jwt
import pytest
import sqlalchemy as sa
from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey
from jwt.algorithms import RSAAlgorithm
from nats.aio.client import Client as NATS

from kalaro.bus import RemoteError, request
from kalaro.proto import subjects
from kalaro.proto.auth import SignIn, SignUp, SignUpAccepted, TokenPair
from kalaro.settings import Settings, load_settings
from services.auth.accounts import AuthDeps

GOOGLE_CLIENT_ID = "kalaro-tests.apps.googleusercontent.com"
GOOGLE_ISSUER = "https://accounts.google.com"
PASSWORD = "Kulay-Ube-42"
T = TypeVar("T")


class Clock:
    """Real time plus an offset the test can move forward (refresh-token expiry)."""

    def __init__(self) -> None:
        self.offset = 0.0

    def __call__(self) -> float:
        return time.time() + self.offset


@dataclass
class GoogleKeys:
    """An RSA key standing in for one of Google's, and the JWKS that publishes it."""

    key: RSAPrivateKey
    kid: str = "test-google-key-1"

    def jwks(self) -> dict[str, Any]:
        jwk = json.loads(RSAAlgorithm.to_jwk(self.key.public_key()))
        jwk.update(kid=self.kid, alg="RS256", use="sig")
        return {"keys": [jwk]}

    def id_token(
        self,
        *,
        sub: str,
        email: str,
        now: float,
        name: str = "Juan dela Cruz",
        aud: str = GOOGLE_CLIENT_ID,
        iss: str = GOOGLE_ISSUER,
        lifetime: int = 3600,
        email_verified: object = True,
        key: RSAPrivateKey | None = None,
        kid: str | None = None,
    ) -> str:
        claims = {
            "iss": iss,
            "aud": aud,
            "azp": aud,
            "sub": sub,
            "email": email,
            "email_verified": email_verified,
            "name": name,
            "iat": int(now),
            "exp": int(now) + lifetime,
        }
        return jwt.encode(
            claims, key or self.key, algorithm="RS256", headers={"kid": kid or self.kid}
        )


@dataclass
class AuthHarness:
    nc: NATS
    deps: AuthDeps
    settings: Settings
    clock: Clock
    google: GoogleKeys
    unique: str
    _names: int = field(default=0)

    def email(self, name: str = "player") -> str:
        self._names += 1
        return f"{name}{self._names}.{self.unique}@example.com"

    async def call(self, subject: str, message: Any, reply_type: type[T]) -> T:
        return await request(self.nc, subject, message, reply_type)

    async def refused(self, subject: str, message: Any, reply_type: type[Any]) -> RemoteError:
        """The error a request is answered with (fails the test if it succeeds)."""
        with pytest.raises(RemoteError) as err:
            await request(self.nc, subject, message, reply_type)
        return err.value

    async def sign_up(
        self, email: str | None = None, password: str = PASSWORD, name: str = "Juan"
    ) -> TokenPair:
        """Sign up (answered ``check_email``), then sign in with the password."""
        email = email or self.email()
        accepted = await self.call(
            subjects.AUTH_SIGN_UP,
            SignUp(email=email, password=password, display_name=name),
            SignUpAccepted,
        )
        assert accepted.status == "check_email"
        return await self.call(
            subjects.AUTH_SIGN_IN, SignIn(email=email, password=password), TokenPair
        )

    def mails(self, to: str) -> list[EmailMessage]:
        """The mails written for ``to`` under var/mail/ (no SMTP server in tests), oldest first."""
        found = []
        for path in sorted(Path(self.settings.var_dir, "mail").glob("*.eml")):
            msg = message_from_bytes(path.read_bytes(), policy=default)
            if msg["To"] == to:
                found.append(cast(EmailMessage, msg))
        return found

    def link(self, to: str) -> str:
        """The verification token in the latest mail to ``to`` that has one."""
        for mail in reversed(self.mails(to)):
            match = re.search(r"/#/verify\?token=([A-Za-z0-9_-]+)", mail.get_content())
            if match:
                return match.group(1)
        raise AssertionError(f"no verification link was mailed to {to}")

    async def count(self, table: str) -> int:
        async with self.deps.engine.connect() as conn:
            return int(await conn.scalar(sa.text(f"SELECT COUNT(*) FROM {table}")) or 0)

    async def column(self, table: str, column: str, user_id: str) -> Any:
        key = "id" if table == "auth_users" else "user_id"
        async with self.deps.engine.connect() as conn:
            return await conn.scalar(
                sa.text(f"SELECT {column} FROM {table} WHERE {key} = :u"), {"u": user_id}
            )


def auth_settings(database_url: str, tmp_path: Path, jwks_file: Path) -> Settings:
    # An empty environment: the developer's KALARO_* variables must not leak in.
    return load_settings(
        {},
        database_url=database_url,
        var_dir=str(tmp_path),
        jwt_private_key_file=str(tmp_path / "keys" / "jwt-ed25519.pem"),
        jwt_issuer="kalaro-test",
        jwt_audience="kalaro-clients-test",
        access_token_seconds=300,
        refresh_token_days=30,
        google_client_id=GOOGLE_CLIENT_ID,
        google_jwks_file=str(jwks_file),
        throttle_max_failures=3,
        throttle_max_delay_seconds=2,
        throttle_account_max_failures=5,
        throttle_address_max_failures=8,
        throttle_device_max_failures=3,
        throttle_window_seconds=60,
    )
