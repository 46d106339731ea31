"""How many copies of each JetStream stream to keep: the setting, or the cluster's size.

``KALARO_STREAM_REPLICAS`` unset (or 0): ``min(3, nodes in the NATS cluster)``, so a
3-node cluster keeps three copies without anyone remembering to say so, and one
server keeps one. Set, it is used as it is (and an existing stream is brought to it,
down as well as up). A derived count only ever raises a stream's replicas: while a
node is down the cluster looks smaller, and that must not shrink an R3 stream.

When the server refuses the replicas (too few nodes able to hold them) for longer than a
forming cluster would, an existing stream keeps what it has and a new one is created
with as many as the server places: the refusal is logged as an error, kept in
:data:`SHORTFALL` (so it is logged once, not on every probe), and
``/readyz`` of the services that own the stream says not ready, with the reason, until
a later check raises it (:func:`check_replicas`, run by every readiness probe).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from dataclasses import dataclass
from typing import Any

from nats.aio.client import Client as NATS
from nats.js import JetStreamContext
from nats.js.errors import APIError

from kalaro.settings import Settings

log = logging.getLogger("kalaro.bus.jetstream")

#: At most this many copies by default: three survive one node's loss with a quorum
#: left; more only slow every write down.
MAX_DERIVED = 3

#: Streams with fewer replicas than wanted because the server refused: name -> why.
SHORTFALL: dict[str, str] = {}

# JetStream's answers meaning "these replicas cannot be placed" (nats-server error
# codes): no suitable peers, insufficient resources, storage or memory exhausted,
# replicas > 1 on a server that is not clustered, replicas not updatable (old servers).
_PLACEMENT_CODES = frozenset({10005, 10023, 10047, 10028, 10074, 10061})

_INFO_TIMEOUT = 1.0


@dataclass(frozen=True)
class Target:
    """The replicas a stream should have, and where that number came from (logged)."""

    replicas: int
    derived: bool
    basis: str


def placement_refused(exc: BaseException) -> bool:
    """Whether a JetStream error says the replicas cannot be placed (not "try later")."""
    return isinstance(exc, APIError) and exc.err_code in _PLACEMENT_CODES


def cluster_size(info: dict[str, Any]) -> tuple[int, str]:
    """Nodes in the cluster of the server that sent ``info`` (its INFO), and a phrase
    saying how that was found.

    Why INFO: every client may read it, with no system account and no permission on
    ``$SYS`` or ``$JS.API`` beyond its own (JetStream's account info has no cluster
    size; a stream's info names only that stream's peers; creating with R3 and falling
    back cannot tell a cluster still forming from one too small). A server without a
    cluster has no ``cluster`` name. A clustered one lists in ``connect_urls`` the client
    address of every node it has a route to, itself included: one per node, or several
    for a node listening on 0.0.0.0 of a host with several addresses. That over-count
    is harmless from 3 nodes up (we take at most 3); a 2-node cluster on such hosts
    gets 3 refused, keeps fewer and says so (set ``KALARO_STREAM_REPLICAS=2`` or the
    servers' ``client_advertise``). A node that is down is not listed: the count is low
    only while it is, and a derived count never lowers a stream's replicas.
    """
    if not info.get("cluster"):
        return 1, "one NATS server, no cluster"
    urls = set(info.get("connect_urls") or ())
    if not urls:
        # ``no_advertise``: the nodes are not listed. Assume the usual three; should
        # the cluster be smaller, the server refuses and we keep fewer, loudly.
        return MAX_DERIVED, "a NATS cluster that does not advertise its nodes (3 assumed)"
    return len(urls), f"a {len(urls)}-node NATS cluster"


async def server_info(nc: NATS) -> dict[str, Any]:
    """The connected server's INFO as it is now.

    nats-py keeps the INFO of its first connect only (the server's later INFO updates,
    as nodes join and leave, go to its server pool), and a service that connected while
    the cluster was forming would count one node for ever. A new TCP connection gets a
    fresh INFO: the server sends it first, before any TLS or authentication, and we
    close without logging in. Should that fail, the INFO of the connect."""
    url = nc.connected_url
    if url is not None and url.scheme in ("nats", "tls") and url.hostname:
        writer = None
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(url.hostname, url.port or 4222), _INFO_TIMEOUT
            )
            line = await asyncio.wait_for(reader.readline(), _INFO_TIMEOUT)
            if line.startswith(b"INFO "):
                info = json.loads(line[5:])
                if isinstance(info, dict):
                    return info
        except (OSError, TimeoutError, ValueError) as exc:
            log.debug("reading %s's INFO failed: %r", url.hostname, exc)
        finally:
            if writer is not None:
                writer.close()
                with contextlib.suppress(Exception):
                    await writer.wait_closed()
    return dict(nc._server_info)


async def replicas_target(nc: NATS, settings: Settings) -> Target:
    """The replicas every stream should have: the setting when set, else derived."""
    if settings.stream_replicas > 0:
        return Target(settings.stream_replicas, derived=False, basis="KALARO_STREAM_REPLICAS")
    nodes, basis = cluster_size(await server_info(nc))
    return Target(min(MAX_DERIVED, nodes), derived=True, basis=basis)


def refused(name: str, have: int, target: Target, exc: BaseException) -> str:
    """Note (and log, when new) that ``name`` could not get its replicas; the reason."""
    reason = (
        f"{name} has {have} of {target.replicas} replicas ({target.basis}): "
        f"the server did not grant more: {getattr(exc, 'description', None) or exc!r}"
    )
    if SHORTFALL.get(name) != reason:
        log.error(
            "stream %s: %s; a node's loss can lose its messages. Add NATS nodes, or set "
            "KALARO_STREAM_REPLICAS to what the cluster can hold",
            name,
            reason,
        )
    SHORTFALL[name] = reason
    return reason


async def check_replicas(nc: NATS, name: str, settings: Settings, timeout: float = 1.5) -> None:
    """A readiness check: the stream exists and has its replicas, or gets them now.

    Raises (with the reason, for ``/readyz``) when it has fewer and the server refuses
    more. Reads the cluster's size only while the stream has fewer than 3 copies."""
    js: JetStreamContext = nc.jetstream(timeout=timeout)
    info = await js.stream_info(name)
    have = info.config.num_replicas or 1
    if settings.stream_replicas <= 0 and have >= MAX_DERIVED:
        SHORTFALL.pop(name, None)
        return
    target = await replicas_target(nc, settings)
    if have >= target.replicas:
        # A set count is applied as it is at start only (it may lower the stream);
        # readiness asks for at least that many.
        SHORTFALL.pop(name, None)
        return
    try:
        await js.update_stream(info.config.evolve(num_replicas=target.replicas))
    except Exception as exc:
        raise RuntimeError(refused(name, have, target, exc)) from exc
    SHORTFALL.pop(name, None)
    log.warning(
        "stream %s: replicas raised %d -> %d (%s)", name, have, target.replicas, target.basis
    )
