"""Engine replicas as real processes, for the ownership fault tests.

``EngineProcesses`` runs ``python -m services.engine --game tongits`` processes against
a 3-node NATS cluster and a Redis of the test module's own (engines use Redis's
unprefixed keys). ``Table`` plays a hand through the owner's partition subjects, as
the gateway sends moves, and counts the moves the engines acknowledged.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
from nats.aio.client import Client as NATS

from kalaro.bus import RemoteError, request
from kalaro.bus.redislink import RedisLink
from kalaro.devstack import die_with_parent
from kalaro.proto import endpoints
from kalaro.proto import errors as codes
from kalaro.proto.engine import Act, GetView, StartHand
from kalaro.proto.subjects import ENGINE_PARTITIONS, partition_of
from services.engine.slots import SlotStore
from tests.integration.engine.engine_helpers import start_message

GAME = "tongits"
#: Engines' lease in these tests: a takeover is due within 1.2 s (a lease and a tick).
LEASE_MS = 1000
ROOT = Path(__file__).resolve().parents[3]
_json = msgspec.json.Encoder()


def lease_key(partition: int) -> str:
    return f"owner:{GAME}:{partition}"


def pid_of(lease_value: str) -> int:
    """The process id in a lease's value ``<host>-<pid>-<random>:<token>``."""
    return int(lease_value.rsplit(":", 1)[0].rsplit("-", 2)[1])


async def owners(redis: RedisLink) -> dict[int, int | None]:
    """Every partition's owner, as a process id (None: no lease)."""
    values = await redis.execute("MGET", *(lease_key(p) for p in range(ENGINE_PARTITIONS)))
    return {p: None if v is None else pid_of(v.decode()) for p, v in enumerate(values)}


async def wait_until(check: Any, timeout: float, what: str) -> float:
    """Poll the async ``check`` until true; the seconds it took."""
    started = time.monotonic()
    while not await check():
        if time.monotonic() - started > timeout:
            raise AssertionError(f"not within {timeout} s: {what}")
        await asyncio.sleep(0.02)
    return time.monotonic() - started


@dataclass
class EngineProcesses:
    nats_url: str
    redis_url: str
    logs: Path
    running: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def start(self, name: str) -> int:
        env = {k: v for k, v in os.environ.items() if k not in ("NATS_URL", "REDIS_URL")}
        env.update(
            KALARO_NATS_URL=self.nats_url,
            KALARO_REDIS_URL=self.redis_url,
            KALARO_ENGINE_LEASE_MS=str(LEASE_MS),
            KALARO_VAR_DIR=str(self.logs),
            PYTHONUNBUFFERED="1",
        )
        log = open(self.logs / f"{name}.log", "ab")  # noqa: SIM115 - lives with the process
        process = subprocess.Popen(
            [sys.executable, "-m", "services.engine", "--game", GAME],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            preexec_fn=die_with_parent,
        )
        self.running[name] = process
        return process.pid

    def pid(self, name: str) -> int:
        return self.running[name].pid

    def name_of(self, pid: int) -> str:
        return next(n for n, p in self.running.items() if p.pid == pid)

    def signal(self, name: str, sig: signal.Signals) -> None:
        self.running[name].send_signal(sig)

    def kill(self, name: str) -> None:
        process = self.running.pop(name)
        process.send_signal(signal.SIGKILL)
        process.wait()

    def stop(self, name: str) -> None:
        """SIGTERM: the replica drains (gives its partitions back) and exits."""
        process = self.running.pop(name)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=20) == 0, self.log(name)

    def log(self, name: str) -> str:
        return (self.logs / f"{name}.log").read_text(errors="replace")

    def stop_all(self) -> None:
        for name in list(self.running):
            process = self.running.pop(name)
            process.send_signal(signal.SIGCONT)
            process.send_signal(signal.SIGKILL)
            process.wait()

    async def wait_owned_by(self, redis: RedisLink, names: set[str], timeout: float = 20) -> None:
        """Until every partition is owned, each by one of ``names``, and each of them
        owns some."""
        pids = {self.pid(n) for n in names}

        async def check() -> bool:
            found = await owners(redis)
            return set(found.values()) == pids

        await wait_until(check, timeout, f"partitions owned by exactly {sorted(names)}")


async def responders(nc: NATS, table_ids: dict[int, str]) -> dict[int, int]:
    """How many engine processes answer on each partition's view subject: every owner
    subscribes without a queue group, so two owners of one partition would both
    answer. Each answer is an error (no such hand), which is still an answer."""
    inbox = nc.new_inbox()
    counts = dict.fromkeys(table_ids, 0)
    by_reply = {f"{inbox}.{p}": p for p in table_ids}

    async def on_reply(msg: Any) -> None:
        counts[by_reply[msg.subject]] += 1

    sub = await nc.subscribe(f"{inbox}.*", cb=on_reply)
    for partition, table_id in table_ids.items():
        view = endpoints.to_owner(endpoints.engine_view(GAME), table_id)
        await nc.publish(
            view.subject, _json.encode(GetView(table_id=table_id)), reply=f"{inbox}.{partition}"
        )
    await asyncio.sleep(0.5)
    await sub.unsubscribe()
    return counts


def table_per_partition(prefix: str) -> dict[int, str]:
    found: dict[int, str] = {}
    i = 0
    while len(found) < ENGINE_PARTITIONS:
        found.setdefault(partition_of(f"{prefix}-{i}"), f"{prefix}-{i}")
        i += 1
    return found


@dataclass
class Table:
    """One hand, played through the owner's subjects as the gateway plays it."""

    nc: NATS
    start: StartHand
    rng: random.Random
    version: int = 0
    acked: int = 0  # moves the engines acknowledged

    @classmethod
    async def open(cls, nc: NATS, unique: str, name: str) -> Table:
        start = start_message(GAME, unique, table=name, hand=f"{name}-h")
        started = await request(
            nc, endpoints.to_owner(endpoints.engine_start(GAME), start.table_id), start
        )
        return cls(nc, start, random.Random(name), version=started.version)

    @property
    def table_id(self) -> str:
        return self.start.table_id

    @property
    def partition(self) -> int:
        return partition_of(self.table_id)

    async def move(self) -> bool:
        """One legal move by a seat that has one; False once the hand is over."""
        users = [p.user_id for p in self.start.players]
        view_of = endpoints.to_owner(endpoints.engine_view(GAME), self.table_id)
        for user in users:
            frame = await request(self.nc, view_of, GetView(table_id=self.table_id, user_id=user))
            view = msgspec.json.decode(frame.view)
            if view["phase"] == "over":  # (marking its outcome published took a version)
                return False
            assert frame.version == self.version, "a move was applied that nobody acknowledged"
            if view.get("legal"):
                action = self.rng.choice(view["legal"])
                break
        else:
            raise AssertionError("nobody has a legal move")
        message = Act(
            table_id=self.table_id,
            user_id=user,
            version=self.version,
            action=msgspec.Raw(_json.encode(action)),
        )
        try:
            acted = await request(
                self.nc, endpoints.to_owner(endpoints.engine_act(GAME), self.table_id), message
            )
        except RemoteError as exc:
            if exc.code == codes.UNAVAILABLE:  # refused while changing hands: nothing written
                return True
            raise
        assert acted.version == self.version + 1
        self.version = acted.version
        self.acked += 1
        return True

    async def check_stored(self, redis: RedisLink) -> None:
        """The slot holds exactly the acknowledged moves: none lost, none twice."""
        version, slot = await SlotStore(redis, GAME).load(self.table_id)
        assert slot is not None
        assert len(slot.actions) == self.acked
        # A finished hand's slot is written once more, to mark its outcome published.
        assert version == self.version + (1 if slot.outcome_published else 0)
