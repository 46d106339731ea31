"""The one log format: JSON lines with the bound ids, repeats held back, secrets
redacted, and the format chosen by KALARO_ENV / KALARO_LOG_FORMAT."""

from __future__ import annotations

import asyncio
import io
import json
import logging

import pytest

from kalaro import logs


def _logger(fmt: str = "json", clock: object = None) -> tuple[logging.Logger, io.StringIO]:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(
        logs.JsonFormatter("wallet") if fmt == "json" else logs.TextFormatter("wallet")
    )
    handler.addFilter(logs.RepeatFilter(clock=clock) if clock else logs.RepeatFilter())
    logger = logging.getLogger(f"kalaro.test.{id(stream)}")
    logger.handlers = [handler]
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    return logger, stream


def _lines(stream: io.StringIO) -> list[dict[str, str]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def test_a_json_line_has_the_fields_and_the_bound_ids() -> None:
    logger, stream = _logger()
    logger.info("plain %s", "line")
    with logs.bound(request="r-1", hand="h-9", table="t-3"):
        try:
            raise ValueError("boom")
        except ValueError:
            logger.exception("settling failed")
    logger.warning("after", extra={"hand_id": "h-extra"})
    first, second, third = _lines(stream)
    assert set(first) == {"ts", "level", "service", "logger", "msg"}
    assert first["msg"] == "plain line" and first["level"] == "INFO"
    assert first["service"] == "wallet" and first["logger"] == logger.name
    assert first["ts"].endswith("Z") and "T" in first["ts"]
    assert (second["request_id"], second["hand_id"], second["table_id"]) == ("r-1", "h-9", "t-3")
    assert second["exc"].startswith("Traceback") and "ValueError: boom" in second["exc"]
    assert "request_id" not in third and third["hand_id"] == "h-extra"  # unbound again


async def test_ids_stay_with_their_task() -> None:
    seen: dict[str, str | None] = {}

    async def handle(name: str) -> None:
        logs.bind_from(
            type("M", (), {"table_id": f"t-{name}", "hand_id": ""})(),
            {logs.REQUEST_HEADER: f"r-{name}"},
        )
        await asyncio.sleep(0.01)
        seen[name] = f"{logs.request_id.get()}/{logs.table_id.get()}/{logs.hand_id.get()}"

    await asyncio.gather(handle("a"), handle("b"))
    assert seen == {"a": "r-a/t-a/None", "b": "r-b/t-b/None"}
    assert logs.request_id.get() is None


def test_request_ids_are_unique_and_go_into_headers() -> None:
    async def mint() -> tuple[str, dict[str, str] | None]:
        rid = logs.new_request_id()
        return rid, logs.outgoing_headers({"Nats-Msg-Id": "m"})

    (one, headers), (two, _) = asyncio.run(mint()), asyncio.run(mint())
    assert one != two
    assert headers == {"Nats-Msg-Id": "m", logs.REQUEST_HEADER: one}
    assert logs.outgoing_headers() is None  # nothing bound here


def test_repeated_errors_are_held_back_and_counted() -> None:
    now = [0.0]
    logger, stream = _logger(clock=lambda: now[0])
    for _ in range(60):  # an outage: the same failure every 0.5 s for 30 s
        try:
            raise ConnectionError("redis down")
        except ConnectionError:
            logger.warning("fetch failed, retrying", exc_info=True)
        logger.error("another kind")
        now[0] += 0.5
    logger.warning("fetch failed, retrying")  # not the same: no exception
    now[0] += 0.5
    try:
        raise ConnectionError("redis down")
    except ConnectionError:
        logger.warning("fetch failed, retrying", exc_info=True)
    lines = _lines(stream)
    messages = [line["msg"] for line in lines]
    assert messages.count("fetch failed, retrying") == 2  # the first, and the plain one
    assert messages.count("another kind") == 1
    assert "another kind (repeated 59 times in 30 s)" not in messages  # not logged again yet
    assert messages[-1] == "fetch failed, retrying (repeated 59 times in 30 s)"
    assert sum("exc" in line for line in lines) == 2  # two tracebacks, not sixty-one


def test_info_lines_are_never_held_back() -> None:
    logger, stream = _logger()
    for _ in range(5):
        logger.info("same")
    assert len(_lines(stream)) == 5


@pytest.mark.parametrize(
    "secret_text",
    [
        "GET /ws?token=abc.def.ghi HTTP/1.1",
        "Authorization: Bearer s3cr3t-value",
        '{"refresh_token": "rt-0123456789"}',
        "password=hunter2&x=1",
        "eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiJ1In0.c2lnbmF0dXJl",
        "connecting to nats://kalaro:n4ts-pw@nats-0:4222",
        "redis+sentinel://:r3dis-pw@h1:26379,h2:26379/kalaro/0",
        "postgresql+asyncpg://kalaro:pg-pw@db/kalaro",
    ],
)
def test_secrets_are_redacted_in_messages_and_tracebacks(secret_text: str) -> None:
    logger, stream = _logger()
    logger.warning("saw %s", secret_text)
    try:
        raise RuntimeError(secret_text)
    except RuntimeError:
        logger.exception("failed")
    out = stream.getvalue()
    secrets = ("abc.def.ghi", "s3cr3t-value", "rt-0123456789", "hunter2", "c2lnbmF0dXJl")
    for secret in (*secrets, "n4ts-pw", "r3dis-pw", "pg-pw"):
        assert secret not in out
    assert "[redacted]" in out


def test_text_format_is_one_readable_line_with_ids() -> None:
    logger, stream = _logger("text")
    with logs.bound(request="r-7"):
        logger.info("hello %d", 3)
    line = stream.getvalue().strip()
    assert "INFO wallet" in line and "hello 3" in line and "[request_id=r-7]" in line


def test_the_format_follows_the_environment() -> None:
    assert logs.log_format({}) == "text"
    assert logs.log_format({"KALARO_ENV": "production"}) == "json"
    assert logs.log_format({"KALARO_ENV": "production", "KALARO_LOG_FORMAT": "text"}) == "text"
    assert logs.log_format({"KALARO_LOG_FORMAT": "json"}) == "json"
    with pytest.raises(ValueError, match="KALARO_LOG_FORMAT"):
        logs.log_format({"KALARO_LOG_FORMAT": "xml"})


def test_setup_sends_uvicorn_through_the_same_format() -> None:
    stream = io.StringIO()
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    try:
        logs.setup("gateway", env={"KALARO_ENV": "production"}, stream=stream)
        logging.getLogger("uvicorn.error").warning("from uvicorn")
        (line,) = _lines(stream)
        assert (line["service"], line["logger"], line["msg"]) == (
            "gateway", "uvicorn.error", "from uvicorn",
        )  # fmt: skip
    finally:
        root.handlers[:] = saved[0]
        root.setLevel(saved[1])
