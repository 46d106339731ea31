"""Bot accounts at the auth service: ``auth.bots.create`` (internal) and sign-in.

The bots service derives each bot's password from its secret and asks auth to create
the bot, or to make that its password; then the bot signs in like anyone.
"""

from __future__ import annotations

from email import message_from_bytes
from email.message import EmailMessage
from email.policy import default
from pathlib import Path

import msgspec
import pytest
from nats.aio.client import Client as NATS
from nats.aio.msg import Msg

from kalaro.bus import RemoteError, request
from kalaro.proto import errors as codes
from kalaro.proto import subjects
from kalaro.proto.approvals import RequestApproval
from kalaro.proto.auth import (
    BOT_EMAIL_DOMAIN,
    CreateBot,
    EmailVerified,
    SignIn,
    SignUp,
    SignUpAccepted,
    TokenPair,
    UserProfile,
    VerifyEmail,
)
from kalaro.tokens import verify_access_token
from services.auth.accounts import AuthDeps
from services.bots.accounts import credentials

SECRET = b"a secret the bots service keeps"


async def create(nc: NATS, message: CreateBot) -> UserProfile:
    return await request(nc, subjects.AUTH_CREATE_BOT, message, UserProfile, timeout=10)


async def refused(nc: NATS, subject: str, message: msgspec.Struct, reply: type) -> RemoteError:
    with pytest.raises(RemoteError) as error:
        await request(nc, subject, message, reply, timeout=10)
    return error.value


def bot(index: int, unique: str, secret: bytes = SECRET) -> CreateBot:
    creds = credentials(secret, index)
    email = creds.email.replace("@", f"-{unique}@")
    return CreateBot(email=email, display_name=creds.display_name, password=creds.password)


def mailed_token(var_dir: str) -> str:
    """The verification token in the one mail written under ``var_dir``."""
    [path] = Path(var_dir, "mail").glob("*.eml")
    letter = message_from_bytes(path.read_bytes(), policy=default)
    assert isinstance(letter, EmailMessage)
    return letter.get_content().split("/#/verify?token=")[1].split()[0]


async def test_a_bot_is_created_once_and_signs_in_with_the_bot_role(
    nc: NATS, auth: AuthDeps, unique: str
) -> None:
    announced: list[Msg] = []

    async def heard(msg: Msg) -> None:
        announced.append(msg)

    sub = await nc.subscribe(subjects.USER_REGISTERED, cb=heard)
    message = bot(1, unique)
    profile = await create(nc, message)
    assert profile.roles == ("player", "bot") and profile.display_name == "Jhat"
    again = await create(nc, message)  # the bots service asks on every start
    assert again == profile
    pair = await request(
        nc, subjects.AUTH_SIGN_IN, SignIn(email=message.email, password=message.password), TokenPair
    )
    assert pair.user.user_id == profile.user_id
    keys = auth.jwks
    claims = verify_access_token(
        pair.access_token, list(keys), auth.settings.jwt_issuer, auth.settings.jwt_audience
    )
    assert claims.roles == ("player", "bot")
    # No UserRegistered for a bot (so no welcome grant: bots never hold credits); a
    # person verifying their email after it is announced, so the listener did listen.
    person = f"ana-{unique}@example.com"
    await request(
        nc,
        subjects.AUTH_SIGN_UP,
        SignUp(email=person, password="Kulay-Ube-42", display_name="Ana"),
        SignUpAccepted,
    )
    token = mailed_token(auth.settings.var_dir)
    await request(nc, subjects.AUTH_VERIFY_EMAIL, VerifyEmail(token=token), EmailVerified)
    await nc.flush()
    await sub.unsubscribe()
    heard_of = [msgspec.json.decode(m.data)["email"] for m in announced]
    assert heard_of == [person]
    error = await refused(
        nc,
        subjects.AUTH_REQUEST_APPROVAL,
        RequestApproval(user_id=profile.user_id, kind="host_access"),
        object,
    )
    assert error.code == codes.FORBIDDEN


async def test_a_new_secret_resets_the_bot_password(nc: NATS, auth: AuthDeps, unique: str) -> None:
    old = bot(2, unique)
    new = bot(2, unique, secret=b"another replica's secret")
    assert old.email == new.email and old.password != new.password
    first = await create(nc, old)
    second = await create(nc, new)
    assert second.user_id == first.user_id
    error = await refused(
        nc, subjects.AUTH_SIGN_IN, SignIn(email=old.email, password=old.password), TokenPair
    )
    assert error.code == codes.INVALID_CREDENTIALS
    pair = await request(
        nc, subjects.AUTH_SIGN_IN, SignIn(email=new.email, password=new.password), TokenPair
    )
    assert pair.user.user_id == first.user_id


async def test_bot_accounts_cannot_touch_people(nc: NATS, auth: AuthDeps, unique: str) -> None:
    person = f"juan-{unique}@example.com"
    await request(
        nc,
        subjects.AUTH_SIGN_UP,
        SignUp(email=person, password="Kulay-Ube-42", display_name="Juan"),
        SignUpAccepted,
    )
    strong = "x" * 40
    error = await refused(
        nc,
        subjects.AUTH_CREATE_BOT,
        CreateBot(email=person, display_name="Juan", password=strong),
        UserProfile,
    )
    assert error.code == codes.BAD_REQUEST and BOT_EMAIL_DOMAIN in error.message
    # Nobody can sign up under the bots' domain (and so take a bot's address first).
    squat = SignUp(
        email=f"bot-99-{unique}@{BOT_EMAIL_DOMAIN}", password="Kulay-Ube-42", display_name="Sneaky"
    )
    error = await refused(nc, subjects.AUTH_SIGN_UP, squat, TokenPair)
    assert error.code == codes.BAD_REQUEST
    short = CreateBot(
        email=f"bot-98-{unique}@{BOT_EMAIL_DOMAIN}", display_name="Bot", password="too-short"
    )
    error = await refused(nc, subjects.AUTH_CREATE_BOT, short, UserProfile)
    assert error.code == codes.WEAK_PASSWORD


def test_bot_credentials_are_derived_from_the_secret() -> None:
    a, b = credentials(SECRET, 0), credentials(SECRET, 0)
    assert a == b and a.email == f"bot-00@{BOT_EMAIL_DOMAIN}" and len(a.password) >= 40
    assert credentials(b"other", 0).password != a.password
    assert credentials(SECRET, 16).display_name == "Angie 2"  # past the names: numbered
