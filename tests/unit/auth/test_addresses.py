"""Email addresses name exactly one mailbox: the checks, and the ``To`` header built from one."""

from __future__ import annotations

from email import message_from_bytes
from email.policy import default
from pathlib import Path

import pytest

from kalaro.proto import errors as codes
from kalaro.settings import load_settings
from services.auth import addresses
from services.auth.mail import Mailer, recipient
from tests.unit.auth.auth_helpers import refused

# Each would have made one address read as two recipients, a comment or a new header.
SMUGGLING = [
    "ana,eve@example.com",
    "ana;eve@example.com",
    "ana:eve@example.com",
    "ana(eve)@example.com",
    "ana<eve@example.com>",
    "<ana@example.com>",
    "ana>@example.com",
    '"ana eve"@example.com',
    '"ana,eve"@example.com',
    "ana@example.com\r\nBcc: eve@example.com",
    "ana@example.com\nBcc: eve@example.com",
    "ana\r\n@example.com",
    "ana@example.com, eve@example.com",
    "Ana <ana@example.com>",
]


@pytest.mark.parametrize("raw", SMUGGLING)
def test_anything_but_one_plain_mailbox_is_refused(raw: str) -> None:
    for check in (addresses.normalize_email, addresses.person_email):
        assert "one valid email address" in refused(codes.BAD_REQUEST, check, raw)


def test_a_person_address_is_canonical() -> None:
    assert addresses.person_email("  Ana.Cruz+kalaro@Example.COM ") == "ana.cruz+kalaro@example.com"
    # An internationalized domain is stored as the ASCII name mail servers use.
    assert addresses.person_email("ana@exämple.com") == "ana@xn--exmple-cua.com"
    assert addresses.person_email("o'brien@example.ph") == "o'brien@example.ph"


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("ana@example", "period"),
        ("ana@[192.0.2.1]", "bracketed"),
        ("ána@example.com", "Internationalized"),
        ("ana..cruz@example.com", "period"),
        ("ana@kalaro.invalid", "special-use"),
    ],
)
def test_a_person_address_refusal_says_why(raw: str, reason: str) -> None:
    assert reason in refused(codes.BAD_REQUEST, addresses.person_email, raw)


def test_operator_and_bot_addresses_may_use_reserved_domains() -> None:
    assert addresses.normalize_email("Root@Kalaro.Test") == "root@kalaro.test"
    assert addresses.normalize_email("seven@bots.kalaro.invalid") == "seven@bots.kalaro.invalid"


def test_the_to_header_is_the_one_address(tmp_path: Path) -> None:
    mailer = Mailer(load_settings({}, var_dir=str(tmp_path)))
    msg = mailer.message("ana@example.com", "Hi", "Body")
    parsed = message_from_bytes(bytes(msg), policy=default)
    assert [a.addr_spec for a in parsed["To"].addresses] == ["ana@example.com"]
    assert parsed["Bcc"] is None and parsed["Cc"] is None


@pytest.mark.parametrize(
    "raw", ["ana,eve@example.com", "ana(x)@example.com", "a@example.com\r\nBcc: e@example.com"]
)
def test_the_mailer_refuses_to_build_a_header_from_more(raw: str) -> None:
    with pytest.raises(ValueError):
        recipient(raw)


async def test_a_letter_that_cannot_be_addressed_is_not_written(tmp_path: Path) -> None:
    mailer = Mailer(load_settings({}, var_dir=str(tmp_path)))
    await mailer.send("ana,eve@example.com", "Hi", "Body")
    assert not mailer.directory.exists() or not any(mailer.directory.iterdir())
    await mailer.send("ana@example.com", "Hi", "Body")
    assert len(list(mailer.directory.iterdir())) == 1


async def test_a_written_letter_is_logged_by_its_path_never_its_link(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # A mailed link is a bearer token (it verifies an address or resets a password).
    mailer = Mailer(load_settings({}, var_dir=str(tmp_path)))
    token = "tok-3f9a1c77e2b04d1e"
    with caplog.at_level("DEBUG"):
        await mailer.send("ana@example.com", "Confirm", f"Open http://x/#/verify?token={token}")
    (path,) = mailer.directory.iterdir()
    assert str(path) in caplog.text
    assert token not in caplog.text
