"""Password hashing (argon2id) and the password policy.

Hashing uses argon2id at OWASP's minimum profile or above (m=19456 KiB, t=2, p=1).
It is deliberately slow and memory-hungry, so it runs in a worker thread (the event
loop keeps serving) behind a semaphore (a burst of sign-ins cannot allocate
19 MiB × hundreds of requests at once).
"""

from __future__ import annotations

import asyncio
import os
import secrets
import string

from argon2 import PasswordHasher, Type
from argon2.exceptions import InvalidHashError, VerificationError

MIN_LENGTH = 10
MAX_LENGTH = 128
MIN_DISTINCT = 5

MEMORY_COST_KIB = 19456
TIME_COST = 2
PARALLELISM = 1

# Bases that show up in every leaked-password list; digits or symbols tacked on the
# end do not rescue them ("Password123!").
_COMMON_BASES = frozenset(
    {
        "password",
        "passw0rd",
        "qwerty",
        "qwertyuiop",
        "asdfghjkl",
        "letmein",
        "welcome",
        "iloveyou",
        "admin",
        "administrator",
        "abcdef",
        "abcdefgh",
        "abcdefghij",
        "kalaro",
        "tongits",
        "mahjong",
    }
)


def _classes(password: str) -> int:
    return sum(
        (
            any(c.islower() for c in password),
            any(c.isupper() for c in password),
            any(c.isdigit() for c in password),
            any(not c.isalnum() for c in password),
        )
    )


def policy_problem(password: str, email: str = "") -> str | None:
    """Why ``password`` is too weak, in words for the user; ``None`` when it is fine."""
    if len(password) < MIN_LENGTH:
        return f"use at least {MIN_LENGTH} characters"
    if len(password) > MAX_LENGTH:
        return f"use at most {MAX_LENGTH} characters"
    if _classes(password) < 2:
        return "mix at least two kinds of characters (lower case, upper case, digits, symbols)"
    if len(set(password)) < MIN_DISTINCT:
        return f"use at least {MIN_DISTINCT} different characters"
    lowered = password.lower()
    if email and (lowered == email.lower() or lowered == email.lower().split("@", 1)[0]):
        return "do not use your email address as your password"
    if lowered.strip(string.digits + string.punctuation + " ") in _COMMON_BASES:
        return "that password is too common; choose something less guessable"
    return None


def generate_password() -> str:
    """A random password (about 143 bits) that satisfies the policy."""
    while True:
        candidate = secrets.token_urlsafe(24)
        if policy_problem(candidate) is None:
            return candidate


class Passwords:
    """argon2id hashing and verification off the event loop."""

    def __init__(self, hasher: PasswordHasher | None = None, max_concurrent: int = 0) -> None:
        self._hasher = hasher or PasswordHasher(
            time_cost=TIME_COST,
            memory_cost=MEMORY_COST_KIB,
            parallelism=PARALLELISM,
            type=Type.ID,
        )
        self._slots = asyncio.Semaphore(max_concurrent or max(2, os.cpu_count() or 2))
        self._dummy: str | None = None

    async def hash(self, password: str) -> str:
        async with self._slots:
            return await asyncio.to_thread(self._hasher.hash, password)

    async def verify(self, stored: str | None, password: str) -> bool:
        """Whether ``password`` matches ``stored``.

        With no stored hash (unknown email, Google-only account) a dummy hash is
        checked anyway, so the answer takes as long as for a real account and the
        timing does not reveal which emails exist.
        """
        if stored is None:
            if self._dummy is None:
                self._dummy = await self.hash(secrets.token_urlsafe(16))
            await self._verify(self._dummy, password)
            return False
        return await self._verify(stored, password)

    async def _verify(self, stored: str, password: str) -> bool:
        async with self._slots:
            try:
                return await asyncio.to_thread(self._hasher.verify, stored, password)
            except (VerificationError, InvalidHashError):
                return False

    def needs_rehash(self, stored: str) -> bool:
        """True when ``stored`` was made with weaker parameters than we use now."""
        try:
            return self._hasher.check_needs_rehash(stored)
        except InvalidHashError:
            return True
