"""Email addresses: exactly one mailbox, in one canonical form.

An address becomes a ``To`` header and an SMTP recipient, so anything that could read
as more than one mailbox (``a,b@x`` , ``a;b@x``, ``"a b"@x``, ``a(comment)@x``,
``a<b>@x``, a CR or LF) is refused, not cleaned up. Two levels:

* :func:`normalize_email` — any address we store or look up (people, the operator's
  admin, bots under their reserved domain): one dot-atom local part (RFC 5322 ``atext``
  and single dots), a host name, lower-cased. Special-use domains (``.test``,
  ``.invalid``) pass: the operator and the bots service name those.
* :func:`person_email` — an address a person gives us (sign-up, Google, password
  reset): the above, and the ``email-validator`` package's full syntax check, with
  deliverability (DNS) checks off: no quoted local parts, no domain literals, no
  internationalized local parts (no SMTPUTF8 needed to reach it), no special-use
  domains; an internationalized domain is stored in its ASCII (punycode) form.
"""

from __future__ import annotations

import re

from email_validator import EmailNotValidError, validate_email

from kalaro.errors import ServiceError
from kalaro.proto import errors as codes

MAX_EMAIL = 254
# RFC 5322 dot-atom: atext runs joined by single dots. No quotes, commas, semicolons,
# colons, parentheses, angle brackets, spaces or controls: one mailbox, nothing else.
_ATEXT = r"[a-z0-9!#$%&'*+/=?^_`{|}~-]+"
_LOCAL = rf"{_ATEXT}(?:\.{_ATEXT})*"
_HOST = r"(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}"
# The lookahead bounds the local part at 64 characters.
_EMAIL = re.compile(rf"(?=[^@]{{1,64}}@){_LOCAL}@{_HOST}")

INVALID = "enter one valid email address, like name@example.com"


def _refused(reason: str = "") -> ServiceError:
    return ServiceError(codes.BAD_REQUEST, f"{INVALID} ({reason})" if reason else INVALID)


def normalize_email(raw: str) -> str:
    """The canonical (trimmed, lower-cased) form of one address, or ``bad_request``."""
    email = raw.strip().lower()
    if len(email) > MAX_EMAIL or not _EMAIL.fullmatch(email):
        raise _refused()
    return email


def person_email(raw: str) -> str:
    """A person's address, checked by ``email-validator`` (no DNS) and canonical:
    lower-cased, its domain in ASCII. Refused with the validator's reason."""
    try:
        checked = validate_email(
            raw.strip(),
            check_deliverability=False,
            allow_smtputf8=False,
            allow_quoted_local=False,
            allow_domain_literal=False,
            allow_display_name=False,
            allow_empty_local=False,
        )
    except EmailNotValidError as exc:
        raise _refused(str(exc).rstrip(".")) from exc
    return normalize_email(checked.ascii_email or checked.normalized)
