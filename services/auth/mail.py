"""Outgoing mail: an SMTP server named in settings, or files under ``var/mail/``.

With ``smtp_url`` empty (development, ``make run``) every mail is written as one
``.eml`` file under ``<var_dir>/mail/`` and its path is logged, so a developer can
open it and follow its link without a mail server. A link is never logged: it is a
bearer token (it verifies an address or resets a password). Sending never fails a
request: a mail that could not be sent is logged (the user can ask for another).
"""

from __future__ import annotations

import asyncio
import logging
import smtplib
import time
import uuid
from email.headerregistry import Address
from email.message import EmailMessage
from pathlib import Path
from urllib.parse import unquote, urlsplit

from kalaro.settings import Settings

log = logging.getLogger("services.auth.mail")


def recipient(to: str) -> Address:
    """``to`` as one header address, or ``ValueError``: the header must name exactly the
    mailbox we validated (a comment, a second address or a line break would not)."""
    address = Address(addr_spec=to)
    if address.addr_spec != to:
        raise ValueError("not exactly one plain address")
    return address


class Mailer:
    def __init__(self, settings: Settings) -> None:
        self.smtp_url = settings.smtp_url.strip()
        self.mail_from = settings.mail_from
        self.directory = Path(settings.var_dir, "mail")

    def message(self, to: str, subject: str, body: str) -> EmailMessage:
        msg = EmailMessage()
        msg["From"] = self.mail_from
        msg["To"] = recipient(to)
        msg["Subject"] = subject
        msg["Message-ID"] = f"<{uuid.uuid4().hex}@kalaro>"
        msg.set_content(body)
        return msg

    async def send(self, to: str, subject: str, body: str) -> None:
        try:
            msg = self.message(to, subject, body)
            if self.smtp_url:
                await asyncio.to_thread(self._smtp, msg)
            else:
                path = await asyncio.to_thread(self._file, msg)
                log.info("mail to %s written to %s", to, path)
        except Exception:
            log.exception("could not send mail %r to %s", subject, to)

    def _file(self, msg: EmailMessage) -> Path:
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / f"{int(time.time() * 1000)}-{uuid.uuid4().hex[:8]}.eml"
        path.write_bytes(bytes(msg))
        return path

    def _smtp(self, msg: EmailMessage) -> None:
        url = urlsplit(self.smtp_url)
        host = url.hostname or "localhost"
        if url.scheme == "smtps":
            smtp: smtplib.SMTP = smtplib.SMTP_SSL(host, url.port or 465, timeout=10)
        else:
            smtp = smtplib.SMTP(host, url.port or 25, timeout=10)
        with smtp:
            if url.scheme == "smtp+starttls":
                smtp.starttls()
            if url.username:
                smtp.login(unquote(url.username), unquote(url.password or ""))
            smtp.send_message(msg)
