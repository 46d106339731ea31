"""Device cookies and one-time codes (services/auth/devices.py): pure functions."""

from __future__ import annotations

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from services.auth import devices
from services.auth.devices import Device

KEY = devices.secret_key(Ed25519PrivateKey.generate())
ANA = Device("a" * 32, devices.new_device_id())
NOW = 1_800_000_000


def test_a_cookie_names_its_account_and_device() -> None:
    token = devices.device_token(KEY, ANA, NOW)
    assert devices.read_device(KEY, token, NOW + 86_400, 180) == ANA


def test_a_tampered_forged_or_foreign_cookie_is_no_device() -> None:
    token = devices.device_token(KEY, ANA, NOW)
    body, _, mac = token.rpartition(".")
    other_key = devices.secret_key(Ed25519PrivateKey.generate())
    swapped_user = token.replace("a" * 32, "b" * 32)
    for bad in (
        f"{body}.{mac[:-1]}{'A' if mac[-1] != 'A' else 'B'}",
        swapped_user,
        devices.device_token(other_key, ANA, NOW),
        "",
        "v1.a.b.c",
        "v2" + token[2:],
        token + "." + mac,
        "v1." + "a" * 32 + ".not-hex." + str(NOW) + ".x",
    ):
        assert devices.read_device(KEY, bad, NOW, 180) is None, bad


def test_a_cookie_expires() -> None:
    token = devices.device_token(KEY, ANA, NOW)
    assert devices.read_device(KEY, token, NOW + 180 * 86_400, 180) == ANA
    assert devices.read_device(KEY, token, NOW + 180 * 86_400 + 1, 180) is None
    assert devices.read_device(KEY, token, NOW - 1, 180) is None  # from the future


def test_codes_are_six_digits_and_their_hash_is_bound_to_the_account() -> None:
    codes = {devices.new_code() for _ in range(50)}
    assert all(devices.plausible_code(c) for c in codes) and len(codes) > 40
    assert not devices.plausible_code("12345") and not devices.plausible_code("12345a")
    code = devices.new_code()
    assert devices.code_hash(KEY, "u1", code) == devices.code_hash(KEY, "u1", code)
    assert devices.code_hash(KEY, "u1", code) != devices.code_hash(KEY, "u2", code)
    assert code not in devices.code_hash(KEY, "u1", code)


def test_the_code_letter_shows_the_code_and_its_life() -> None:
    letter = devices.code_letter("Ana", "012345")
    assert "012345" in letter.subject and "\n    012345\n" in letter.body
    assert "10 minutes" in letter.body
