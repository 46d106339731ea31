"""Schemathesis over every operation of the live gateway's own OpenAPI document.

Valid and invalid requests alike (bounded: a few examples an operation, seeded), each
with a real access token (an admin's on the admin routes, a fresh player's elsewhere):
no answer may be a 5xx, every status must be one the document lists for that operation,
and every body must match the schema it documents. A 429 from the rate limits is
documented, so it is an allowed answer, not a failure.
"""

from __future__ import annotations

import asyncio
import collections
import time
import uuid
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.checks import not_a_server_error
from schemathesis.core.result import Ok
from schemathesis.generation import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)

from kalaro.client import KalaroClient
from tests.e2e.stack import ADMIN_EMAIL, ADMIN_PASSWORD, Stack

MAX_EXAMPLES = 20
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    negative_data_rejection,
]

SETTINGS: dict[str, Any] = {
    "max_examples": MAX_EXAMPLES,
    "deadline": None,
    "derandomize": True,  # the same requests every run
    "database": None,
    "suppress_health_check": list(HealthCheck),
    "phases": [Phase.explicit, Phase.generate],
}


async def _token(stack: Stack, email: str | None = None, password: str = "") -> str:
    client = KalaroClient(stack.base_url)
    if email is None:
        unique = uuid.uuid4().hex[:10]
        await client.sign_up(f"fuzz-{unique}@example.com", "fuzz passphrase 16", "Fuzz")
    else:
        await client.sign_in(email, password)
    return client.access_token


@pytest.fixture(scope="module")
def admin_token(stack: Stack) -> str:
    return asyncio.run(_token(stack, ADMIN_EMAIL, ADMIN_PASSWORD))


def _fuzz(
    operation: Any,
    mode: GenerationMode,
    base_url: str,
    headers: dict[str, str],
    statuses: collections.Counter[int],
) -> None:
    @settings(**SETTINGS)
    @given(case=operation.as_strategy(generation_mode=mode))
    def check(case: schemathesis.Case[Any]) -> None:
        response = case.call_and_validate(
            base_url=base_url, headers=headers, checks=CHECKS, timeout=25
        )
        statuses[response.status_code] += 1

    check()


def test_every_operation_answers_as_documented(stack: Stack, admin_token: str) -> None:
    schema = schemathesis.openapi.from_url(f"{stack.base_url}/schema/openapi.json", timeout=15)
    started = time.monotonic()
    statuses: collections.Counter[int] = collections.Counter()
    operations, failures = 0, []
    for result in schema.get_all_operations():
        assert isinstance(result, Ok), (
            f"the document has an operation schemathesis cannot read: {result}"
        )
        operation = result.ok()
        operations += 1
        # A fresh player for each operation: the per-account rate limit (a documented
        # 429) then answers few of its requests, and the fuzzer reaches the handlers.
        admin = operation.path.startswith("/api/admin")
        token = admin_token if admin else asyncio.run(_token(stack))
        headers = {"Authorization": f"Bearer {token}"}
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            try:
                _fuzz(operation, mode, stack.base_url, headers, statuses)
            except Unsatisfiable:  # nothing to send wrong: no parameters and no body
                continue
            except Exception as exc:  # a failed check: collect all, then report them
                failures.append(f"{operation.method.upper()} {operation.path} ({mode}): {exc}")
    print(
        f"\nschemathesis: {operations} operations, {sum(statuses.values())} requests in "
        f"{time.monotonic() - started:.1f}s, statuses {dict(sorted(statuses.items()))}, "
        f"{len(failures)} failures"
    )
    assert operations >= 30
    assert not failures, "\n\n".join(failures)
