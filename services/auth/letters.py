"""What the auth service mails, as plain text built from plain values (sent by
:class:`services.auth.mail.Mailer`)."""

from __future__ import annotations

from typing import NamedTuple

from kalaro.settings import Settings


class Letter(NamedTuple):
    subject: str
    body: str


def link_base(settings: Settings) -> str:
    """Where users reach this deployment: the public URL, else the local HTTP address."""
    return (settings.public_url or f"http://{settings.http_host}:{settings.http_port}").rstrip("/")


def verify_link(base: str, token: str) -> str:
    """The web client's page for the link (its button, not the fetch, spends the token)."""
    return f"{base}/#/verify?token={token}"


def verify_letter(name: str, link: str, hours: int) -> Letter:
    body = (
        f"Hello {name},\n\nWelcome to KaLaro. Confirm that this is your email address: "
        f"open this link and press Confirm (it works once, within {hours} hours):\n\n"
        f"{link}\n\n"
        "If you did not create a KaLaro account, ignore this mail: nobody can keep an "
        "address that is not theirs.\n"
    )
    return Letter("Confirm your KaLaro email address", body)


def reset_link(base: str, token: str) -> str:
    """The web client's page for a reset link (its form, not the fetch, spends it)."""
    return f"{base}/#/reset?token={token}"


def reset_letter(name: str, link: str, minutes: int) -> Letter:
    body = (
        f"Hello {name},\n\nSomeone (perhaps you) asked to reset the password of the KaLaro "
        f"account with this email address. To choose a new password, open this link (it "
        f"works once, within {minutes} minutes):\n\n{link}\n\n"
        "Choosing a new password signs out every device signed in to this account. If you "
        "did not ask for this, ignore this mail: your password stays as it is.\n"
    )
    return Letter("Reset your KaLaro password", body)


def already_registered_letter(base: str) -> Letter:
    """To the owner of an address someone tried to sign up with again."""
    body = (
        "Hello,\n\nSomeone (perhaps you) tried to create a KaLaro account with this email "
        "address, but you already have an account. Nothing was changed.\n\n"
        f"Sign in at {base}/ with your password, or with Google if you use it. Forgot "
        f"your password? Choose a new one at {base}/#/reset\n"
    )
    return Letter("You already have a KaLaro account", body)
