"""Server frames for one user, from any service: ``users.notify.<user_id>``.

One plain subscription per gateway process (every gateway gets every notice: a user's
sockets may be open on any of them); each notice goes to that user's sockets here. The
ranked queue sends ``seated`` this way (issue 34). A notice that is not a server frame
of the protocol is dropped, so nothing unknown reaches a client.

Also the "seen from" note (:func:`note_sign_in`): after a password sign-in the gateway
tells the ranked service the client's address and the device cookie it came with, so
two accounts used from one address or browser are never seated at one ranked table.
"""

from __future__ import annotations

import logging

from nats.aio.client import Client as NATS
from nats.aio.msg import Msg
from nats.aio.subscription import Subscription

from kalaro.bus.codec import decoder, encode
from kalaro.proto import ranked as rk
from kalaro.proto import subjects, ws
from services.gateway.hub import Hub

log = logging.getLogger("kalaro.gateway")

_frame = decoder(ws.AnyServerFrame)


async def subscribe_notifications(nc: NATS, hub: Hub) -> Subscription:
    prefix = subjects.user_notify("")

    async def on_notice(msg: Msg) -> None:
        user_id = msg.subject[len(prefix) :]
        try:
            _frame.decode(msg.data)
        except Exception:
            log.warning("dropped a notice for %s that is not a server frame", user_id)
            return
        # Notices are rare (one per seating): a scan of this process's sockets is fine.
        for conn in [c for c in hub.connections if c.user_id == user_id]:
            conn.push(msg.data)

    return await nc.subscribe(subjects.USER_NOTIFY_ALL, cb=on_notice)


def device_id_of(cookie: str) -> str:
    """The device id a device cookie names (``v1.<user>.<device>.<issued>.<mac>``, see
    services/auth/devices.py), unverified: the gateway does not hold its key. A forged
    one can only keep its sender apart from someone at ranked tables."""
    parts = cookie.split(".")
    if len(parts) != 5 or parts[0] != "v1" or len(parts[2]) != 32:
        return ""
    return parts[2]


async def note_sign_in(
    nc: NATS, user_id: str, address: str, sent_cookie: str, new_cookie: str
) -> None:
    """Tell ranked where ``user_id`` signed in from: the address, the device the
    browser's cookie named (another account's, if someone else signed in there before)
    and the device auth issued now. Fire and forget: a lost note loses one signal."""
    devices = {device_id_of(sent_cookie), device_id_of(new_cookie)} - {""}
    notes = [rk.SeenFrom(user_id=user_id, address=address, device_id=d) for d in sorted(devices)]
    if not notes:
        notes = [rk.SeenFrom(user_id=user_id, address=address)]
    try:
        for note in notes:
            await nc.publish(subjects.RANKED_SEEN, encode(note))
    except Exception:
        log.warning("could not send the sign-in note for %s", user_id, exc_info=True)
