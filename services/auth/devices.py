"""Device cookies and emailed one-time codes: pure functions, no I/O.

A **device cookie** (OWASP's "device cookie" against online guessing) says "this browser
signed in to this account before": ``v1.<user id>.<device id>.<issued, unix s>.<mac>``,
an HMAC-SHA256 over the rest with a key derived from the JWT signing key (so it needs
no secret of its own, and rotating that key forgets every device). The gateway keeps it
in an HttpOnly cookie limited to ``/api/auth``; the page's script never sees it.

A **one-time code** is 6 digits, mailed when a device the account does not know signs
in while the account is under attack. Only its HMAC is stored (in Redis, for
:data:`CODE_SECONDS`), and it works once.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from typing import NamedTuple

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

from services.auth.letters import Letter

#: How long an emailed code works.
CODE_SECONDS = 600
#: Wrong codes one mailed code survives before it is withdrawn (a new one is mailed).
CODE_TRIES = 5
_ID = re.compile(r"^[0-9a-f]{32}$")
_USER = re.compile(r"^[0-9A-Za-z_-]{1,64}$")
_CODE = re.compile(r"^[0-9]{6}$")


def secret_key(signing_key: Ed25519PrivateKey) -> bytes:
    """The HMAC key for device cookies and codes, derived from the JWT signing key."""
    raw = signing_key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
    return hashlib.sha256(b"kalaro device cookie v1\0" + raw).digest()


def _mac(key: bytes, text: str) -> str:
    digest = hmac.new(key, text.encode(), hashlib.sha256).digest()[:18]
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


class Device(NamedTuple):
    user_id: str
    device_id: str


def new_device_id() -> str:
    return secrets.token_hex(16)


def device_token(key: bytes, device: Device, now_s: int) -> str:
    body = f"v1.{device.user_id}.{device.device_id}.{now_s}"
    return f"{body}.{_mac(key, body)}"


def read_device(key: bytes, token: str, now_s: int, max_age_days: int) -> Device | None:
    """The device a cookie names, if its MAC is ours and it is not older than allowed."""
    parts = token.split(".")
    if len(token) > 200 or len(parts) != 5 or parts[0] != "v1":
        return None
    _, user_id, device_id, issued, mac = parts
    if not _USER.match(user_id) or not _ID.match(device_id) or not issued.isdigit():
        return None
    if not hmac.compare_digest(mac, _mac(key, ".".join(parts[:4]))):
        return None
    if not 0 <= now_s - int(issued) <= max_age_days * 86_400:
        return None
    return Device(user_id, device_id)


def new_code() -> str:
    return f"{secrets.randbelow(1_000_000):06d}"


def plausible_code(code: str) -> bool:
    return bool(_CODE.match(code))


def code_hash(key: bytes, user_id: str, code: str) -> str:
    """What is stored for a code: bound to its account, useless without the key."""
    return hmac.new(key, f"code\0{user_id}\0{code}".encode(), hashlib.sha256).hexdigest()


def code_letter(name: str, code: str) -> Letter:
    minutes = CODE_SECONDS // 60
    body = (
        f"Hello {name},\n\nSomeone is signing in to your KaLaro account from a device it "
        "has not seen before, and there have been many wrong passwords for it lately.\n\n"
        f"If it is you, enter this code on the sign-in page (it works once, within "
        f"{minutes} minutes):\n\n    {code}\n\n"
        "If it is not you, ignore this mail: without the code nobody can sign in on a new "
        "device, and your own devices are not affected. Consider changing your password.\n"
    )
    return Letter(f"Your KaLaro sign-in code: {code}", body)
