"""The durable streams: declared once (:func:`stream_specs`), ensured by every service.

File storage, replicated ``KALARO_STREAM_REPLICAS`` times or, unset, as many times as
the cluster has nodes, up to 3 (:mod:`kalaro.bus.replicas`), kept for an age and up
to a size from settings. Every service that publishes or consumes ensures the same
declaration (:func:`ensure_stream`); ``kalaro.bus.jetstream`` re-exports it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from dataclasses import dataclass
from typing import Any

from nats.errors import TimeoutError as NatsTimeout
from nats.js import JetStreamContext
from nats.js.api import StorageType, StreamConfig, StreamInfo
from nats.js.errors import (
    BadRequestError,
    NotFoundError,
    ServerError,
    ServiceUnavailableError,
)

from kalaro.bus import replicas as _replicas
from kalaro.proto import subjects
from kalaro.settings import Settings

log = logging.getLogger("kalaro.bus.jetstream")


@dataclass(frozen=True)
class StreamSpec:
    """What one durable stream is: its subjects and how much of it is kept."""

    name: str
    subjects: tuple[str, ...]
    max_age_seconds: float
    max_bytes: int
    #: 0: derived from the cluster when the stream is ensured (``KALARO_STREAM_REPLICAS``
    #: unset); :func:`ensure_stream` settles it before it uses :meth:`config`.
    replicas: int = 0

    def config(self) -> StreamConfig:
        return StreamConfig(
            name=self.name,
            subjects=list(self.subjects),
            num_replicas=self.replicas,
            max_age=self.max_age_seconds,
            max_bytes=self.max_bytes,
            storage=StorageType.FILE,
            # Publishers retry with the same Nats-Msg-Id; within this window JetStream
            # stores the message once (the consumers are idempotent beyond it).
            duplicate_window=min(DUPLICATE_WINDOW_SECONDS, self.max_age_seconds),
        )


DUPLICATE_WINDOW_SECONDS = 3600.0
_DAY = 86400.0


def stream_specs(settings: Settings | None = None) -> dict[str, StreamSpec]:
    """Every durable stream, declared once: each service ensures exactly these."""
    s = settings if settings is not None else Settings()
    return {
        spec.name: spec
        for spec in (
            StreamSpec(
                subjects.RESULTS_STREAM,
                (subjects.RESULTS_SUBJECTS,),
                max_age_seconds=s.results_stream_max_age_days * _DAY,
                max_bytes=s.results_stream_max_bytes,
                replicas=s.stream_replicas,
            ),
            # Records are 3-6 KB; history stores them in SQL within seconds, so the
            # stream only bridges a history outage (kept like the results).
            StreamSpec(
                subjects.RECORDS_STREAM,
                (subjects.RECORDS_SUBJECTS,),
                max_age_seconds=s.results_stream_max_age_days * _DAY,
                max_bytes=s.results_stream_max_bytes,
                replicas=s.stream_replicas,
            ),
            StreamSpec(
                subjects.EVENTS_STREAM,
                (subjects.EVENTS_SUBJECTS,),
                max_age_seconds=s.events_stream_max_age_days * _DAY,
                max_bytes=s.events_stream_max_bytes,
                replicas=s.stream_replicas,
            ),
        )
    }


class _ClusterNotReady(Exception):
    """A stream could not be placed yet: the cluster is still finding its peers."""


class _Unplaceable(Exception):
    """JetStream refused to place a stream's replicas: a cluster still finding its
    nodes, or one with too few of them (which, we cannot tell at once)."""

    def __init__(self, refusal: BaseException) -> None:
        super().__init__(str(refusal))
        self.refusal = refusal


# JetStream answers "not now" while a cluster elects leaders or moves a stream's replicas.
_TRANSIENT = (NatsTimeout, TimeoutError, ServiceUnavailableError, ServerError, _ClusterNotReady)
_ATTEMPTS = 20
#: How long a new stream's replicas may be refused before it is created with fewer: a
#: cluster that has just elected its leader refuses R3 ("no suitable peers") until it
#: knows every node, which took 3 s on a loopback cluster; a cluster really too small
#: only makes each start wait this long.
PLACEMENT_PATIENCE_SECONDS = 15.0


async def ensure_stream(
    js: JetStreamContext,
    name: str,
    subject_list: list[str] | None = None,
    *,
    settings: Settings | None = None,
) -> StreamInfo:
    """Create the stream, or bring its replicas and limits to the declared ones.

    ``name`` is one of :func:`stream_specs` (limits and replicas from ``settings``,
    defaults without); ``subject_list`` matters only for a stream not declared there.
    Replicas the server refuses are logged as an error and the stream keeps (or is
    created with) as many as it places: see :mod:`kalaro.bus.replicas`.
    Safe to call from every replica at once: creating an existing stream with the same
    configuration is a no-op, and an update to the same configuration changes nothing.
    """
    s = settings if settings is not None else Settings()
    spec = stream_specs(s).get(name)
    if spec is None:
        if not subject_list:
            raise ValueError(f"stream {name!r} is not declared; give its subjects")
        spec = StreamSpec(
            name,
            tuple(subject_list),
            max_age_seconds=s.results_stream_max_age_days * _DAY,
            max_bytes=s.results_stream_max_bytes,
        )
    # Settled once per call, logged below: what this process asks of every stream.
    target = await _replicas.replicas_target(js._nc, s)
    spec = dataclasses.replace(spec, replicas=target.replicas)
    refused_since: float | None = None
    for attempt in range(_ATTEMPTS):
        try:
            info = await _ensure(js, spec, target)
            break
        except _Unplaceable as exc:
            now = time.monotonic()
            refused_since = now if refused_since is None else refused_since
            if now - refused_since >= PLACEMENT_PATIENCE_SECONDS or attempt == _ATTEMPTS - 1:
                info = await _ensure(js, spec, target, settle=True)
                break
            log.info("stream %s: replicas not placed yet (%s); retrying", name, exc)
            await asyncio.sleep(min(2.0, 0.1 * 2**attempt))
        except _TRANSIENT as exc:
            if attempt == _ATTEMPTS - 1:
                raise
            log.info("stream %s: JetStream not ready (%r); retrying", name, exc)
            await asyncio.sleep(min(2.0, 0.1 * 2**attempt))
    else:
        raise AssertionError("unreachable")
    have = info.config.num_replicas or 1
    log.info(
        "stream %s: %d replicas (target %d from %s%s)",
        name,
        have,
        target.replicas,
        target.basis,
        "; KALARO_STREAM_REPLICAS overrides" if target.derived else "",
    )
    return info


async def _ensure(
    js: JetStreamContext, spec: StreamSpec, target: _replicas.Target, *, settle: bool = False
) -> StreamInfo:
    """One try. Replicas the server will not place raise :class:`_Unplaceable`, or with
    ``settle`` are given up on: fewer for a new stream, its own for an existing one."""
    wanted = spec.config()
    try:
        info = await js.stream_info(spec.name)
    except NotFoundError:
        try:
            return await js.add_stream(wanted)
        except (BadRequestError, ServerError) as refused:
            # Another replica created it (perhaps from an older configuration) between
            # our look-up and our create: bring that one up to date below. Or a forming
            # cluster does not know enough peers yet ("no suitable peers for placement"),
            # or the cluster is too small for these replicas.
            try:
                info = await js.stream_info(spec.name)
            except NotFoundError:
                if _replicas.placement_refused(refused):
                    if settle:
                        return await _create_with_fewer(js, spec, target, refused)
                    raise _Unplaceable(refused) from refused
                if isinstance(refused, ServerError):
                    raise
                raise _ClusterNotReady(str(refused)) from refused
    have = info.config
    changes = _differences(have, wanted, raise_only=target.derived)
    if not changes:
        return info
    if have.storage is not None and have.storage != StorageType.FILE:
        log.warning("stream %s: stored in %s, not file; left as it is", spec.name, have.storage)
        changes.pop("storage", None)
    try:
        info = await _update(js, have, changes)
    except (BadRequestError, ServerError) as refused:
        if "num_replicas" not in changes or not _replicas.placement_refused(refused):
            raise
        if not settle:
            raise _Unplaceable(refused) from refused
        # Keep the replicas it has (loudly: /readyz says so) and apply the rest.
        before = changes.pop("num_replicas")[0]
        _replicas.refused(spec.name, before, target, refused)
        info = await _update(js, have, changes) if changes else info
    else:
        if "num_replicas" in changes:
            _replicas.SHORTFALL.pop(spec.name, None)
    if changes:
        log.info(
            "stream %s updated: %s",
            spec.name,
            ", ".join(f"{field} {old} -> {new}" for field, (old, new) in changes.items()),
        )
    return info


async def _update(
    js: JetStreamContext, have: StreamConfig, changes: dict[str, tuple[Any, Any]]
) -> StreamInfo:
    return await js.update_stream(have.evolve(**{f: after for f, (_, after) in changes.items()}))


async def _create_with_fewer(
    js: JetStreamContext, spec: StreamSpec, target: _replicas.Target, refusal: BaseException
) -> StreamInfo:
    """Create the stream with as many replicas as the cluster places (fewer than
    ``target``), noting the shortfall: a stream with fewer copies loses nothing today,
    none at all stops every service. Readiness checks raise it once the nodes are there."""
    wanted = spec.config()
    for count in range(spec.replicas - 1, 0, -1):
        try:
            info = await js.add_stream(wanted.evolve(num_replicas=count))
        except (BadRequestError, ServerError) as exc:
            if not _replicas.placement_refused(exc):
                raise
            continue
        _replicas.refused(spec.name, count, target, refusal)
        return info
    raise refusal


def _differences(
    have: StreamConfig, wanted: StreamConfig, *, raise_only: bool = False
) -> dict[str, tuple[Any, Any]]:
    """The fields ``ensure_stream`` manages whose values differ (before, after).
    ``raise_only``: replicas may go up, not down (a derived count: see kalaro.bus.replicas)."""
    changes: dict[str, tuple[Any, Any]] = {}
    replicas, wanted_replicas = have.num_replicas or 1, wanted.num_replicas or 1
    if replicas < wanted_replicas or (replicas > wanted_replicas and not raise_only):
        changes["num_replicas"] = (replicas, wanted_replicas)
    assert wanted.max_age is not None and wanted.max_bytes is not None
    if not have.max_age or abs(have.max_age - wanted.max_age) > 0.001:
        changes["max_age"] = (have.max_age or 0, wanted.max_age)
    if have.max_bytes != wanted.max_bytes:
        changes["max_bytes"] = (have.max_bytes, wanted.max_bytes)
    # The window is kept at least as long as declared; a longer one is left alone.
    if have.duplicate_window + 0.001 < wanted.duplicate_window:
        changes["duplicate_window"] = (have.duplicate_window, wanted.duplicate_window)
    if have.storage not in (None, StorageType.FILE):
        changes["storage"] = (have.storage, StorageType.FILE)
    return changes
