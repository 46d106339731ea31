"""Signing in with a password, behind the throttle (:mod:`services.auth.throttle`).

The order matters: the device cookie and the throttle are checked before the slow
hash, only a failed password is counted, and a new device on an account under attack
must show the emailed one-time code *before* its password is tried (so the answer
never tells a guesser that a password was right).
"""

from __future__ import annotations

import logging

from kalaro.bus import ServiceError
from kalaro.proto import errors as codes
from kalaro.proto.auth import SignedIn, SignIn
from services.auth import devices, rules, store
from services.auth.addresses import normalize_email
from services.auth.deps import AuthDeps
from services.auth.records import Account
from services.auth.sessions import issue_pair
from services.auth.throttle import Gate

log = logging.getLogger("services.auth")

CODE_SENT = (
    "this account has had many wrong passwords lately, so a new device needs a code: "
    "enter the 6-digit code we emailed to you (it works for 10 minutes)"
)
CODE_WRONG = "that code is wrong or has expired; sign in again to get a new one"


def _known_device(deps: AuthDeps, token: str, account: Account | None) -> str:
    """The id of the device the cookie names, if it is valid and for this account."""
    if not token or account is None:
        return ""
    device = devices.read_device(
        deps.device_key, token, int(deps.clock()), deps.settings.throttle_device_days
    )
    return device.device_id if device and device.user_id == account.user_id else ""


async def _mail_code(deps: AuthDeps, email: str, account: Account | None) -> None:
    """Mail a fresh code, unless one is still live (nothing for an unknown email)."""
    if account is None or deps.mailer is None:
        return
    code = devices.new_code()
    digest = devices.code_hash(deps.device_key, account.user_id, code)
    if await deps.throttle.store_code(email, digest, devices.CODE_SECONDS):
        letter = devices.code_letter(account.display_name, code)
        await deps.mailer.send(email, letter.subject, letter.body)
        log.info("mailed a sign-in code to %s", account.user_id)


async def sign_in(req: SignIn, deps: AuthDeps) -> SignedIn:
    email = normalize_email(req.email)
    address = req.address.strip()[:64]
    if not rules.sign_in_password_fits(req.password):
        raise ServiceError(codes.INVALID_CREDENTIALS, rules.BAD_CREDENTIALS)
    async with deps.engine.connect() as conn:
        account = await store.account_by_email(conn, email)
    device_id = _known_device(deps, req.device, account)
    code = req.code.strip()
    try:
        gate = await deps.throttle.check(
            email, address, device_id=device_id, has_code=devices.plausible_code(code)
        )
    except ServiceError as exc:
        if exc.code != codes.CODE_REQUIRED:
            raise
        await _mail_code(deps, email, account)
        raise ServiceError(codes.CODE_REQUIRED, CODE_SENT) from None
    outcome = "none"
    try:
        pair = await _check_and_issue(deps, req, email, account, gate, code)
        outcome = "ok"
        return pair
    except ServiceError as exc:
        if exc.code == codes.INVALID_CREDENTIALS:
            outcome = "fail"
        raise
    finally:
        await deps.throttle.finish(gate, outcome)


async def _check_and_issue(
    deps: AuthDeps, req: SignIn, email: str, account: Account | None, gate: Gate, code: str
) -> SignedIn:
    user_id = account.user_id if account is not None else "-"
    offered = devices.code_hash(deps.device_key, user_id, code) if gate.with_code else ""
    tries = devices.CODE_TRIES
    if gate.with_code and not await deps.throttle.match_code(
        email, offered, consume=False, tries=tries
    ):
        raise ServiceError(codes.CODE_INVALID, CODE_WRONG)
    stored = account.password_hash if account is not None else None
    # verify() checks a dummy hash when there is no stored one: same answer, same time.
    matched = await deps.passwords.verify(stored, req.password)
    if not matched or stored is None or account is None:
        raise ServiceError(codes.INVALID_CREDENTIALS, rules.BAD_CREDENTIALS)
    if gate.with_code and not await deps.throttle.match_code(
        email, offered, consume=True, tries=tries
    ):
        raise ServiceError(codes.CODE_INVALID, CODE_WRONG)  # used meanwhile, elsewhere
    # Parameters were raised since this hash was made: upgrade it while we have the
    # plain password in hand (hashed before the transaction, which stays short).
    upgraded = (
        await deps.passwords.hash(req.password) if deps.passwords.needs_rehash(stored) else None
    )
    async with deps.engine.begin() as conn:
        if upgraded is not None:
            await store.update_account(conn, account.user_id, password_hash=upgraded)
        pair = await issue_pair(conn, deps, account)
    # A device that signed in is known from now on (the same id again if it was).
    device = devices.Device(account.user_id, _known_device(deps, req.device, account))
    if not device.device_id:
        device = devices.Device(account.user_id, devices.new_device_id())
    token = devices.device_token(deps.device_key, device, int(deps.clock()))
    return SignedIn(
        access_token=pair.access_token,
        refresh_token=pair.refresh_token,
        expires_in=pair.expires_in,
        user=pair.user,
        token_type=pair.token_type,
        device_token=token,
    )
