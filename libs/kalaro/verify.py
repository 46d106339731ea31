"""Check a finished (or voided) hand from what the server revealed: ``kalaro verify HAND.json``.

Before the deal the server published ``sha256(server_seed)``; players added their own
entropy when they tapped Ready; at the end the server revealed the seed. From the
hand record (options, dealer, revealed seed, entropy, every action) anyone can:

1. check the commitment: the revealed seed hashes to what was published before;
2. re-derive the deal: the seeded shuffle of (seed, entropy) deals exactly the cards
   or tiles each seat was dealt;
3. replay every action through the same pure rules and get the same result and the
   same payments.

A voided hand (cancelled after its deal) is checked the same way up to its last
recorded action: every action must be legal, the hand must not be over after them (a
hand that had ended could not have been voided), and nobody paid: no result, every
payment 0.
"""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec

from kalaro.games.registry import UnknownGame
from kalaro.proto.engine import HandRecord
from kalaro.replay import ReplayError, replay, rules_of


class Check(msgspec.Struct, frozen=True):
    name: str
    ok: bool
    detail: str


class Report(msgspec.Struct, frozen=True):
    hand_id: str
    checks: tuple[Check, ...]

    @property
    def ok(self) -> bool:
        return all(check.ok for check in self.checks)


def _plain(value: Any) -> Any:
    """Compare as JSON sees it: a record read from a file has lists where state has tuples."""
    return msgspec.json.decode(msgspec.json.encode(value))


def verify_hand(record: HandRecord) -> Report:
    checks: list[Check] = []

    def check(name: str, ok: bool, detail: str) -> bool:
        checks.append(Check(name, ok, detail))
        return ok

    try:
        server_seed = bytes.fromhex(record.server_seed)
    except ValueError:
        check("commitment", False, "the revealed server seed is not hex")
        return Report(record.hand_id, tuple(checks))
    digest = hashlib.sha256(server_seed).hexdigest()
    check(
        "commitment",
        digest == record.seed_commitment,
        f"sha256(server seed) = {digest[:16]}…, published before the deal "
        f"{record.seed_commitment[:16]}…",
    )
    try:
        rules, _ = rules_of(record)
    except (UnknownGame, ValueError) as exc:
        check("options", False, str(exc))
        return Report(record.hand_id, tuple(checks))

    steps = replay(record)
    state = next(steps).state
    dealt = rules.dealt(state)
    claimed = tuple(tuple(hand) for hand in record.initial_hands)
    check(
        "deal",
        dealt == claimed,
        "every seat was dealt what the seed and entropy deal"
        if dealt == claimed
        else f"re-derived deal {dealt} differs from the record {claimed}",
    )
    try:
        for step in steps:
            state = step.state
    except ReplayError as exc:
        check("replay", False, str(exc))
        return Report(record.hand_id, tuple(checks))
    if record.voided:
        return _check_voided(record, rules.is_over(state), checks)
    result = rules.result(state)
    if not check("replay", result is not None, f"{len(record.actions)} actions replayed"):
        return Report(record.hand_id, tuple(checks))
    check(
        "result",
        _plain(result) == _plain(record.result),
        "the replayed result equals the announced one"
        if _plain(result) == _plain(record.result)
        else "the replayed result differs from the announced one",
    )
    credits = tuple(units * record.bet for units in result.payments)
    check(
        "payments",
        credits == tuple(record.payments),
        f"payments in credits {list(credits)} vs announced {list(record.payments)}",
    )
    return Report(record.hand_id, tuple(checks))


def _check_voided(record: HandRecord, over: bool, checks: list[Check]) -> Report:
    """The end of a voided hand's checks: its actions are replayed (all legal)."""
    checks.append(
        Check(
            "replay",
            not over,
            f"{len(record.actions)} actions replayed; the hand was still in play when voided"
            if not over
            else "these actions end the hand: it could not have been voided",
        )
    )
    no_result = record.result is None
    checks.append(
        Check(
            "result",
            no_result,
            "voided: no result, as announced" if no_result else "a voided hand announces a result",
        )
    )
    unpaid = len(record.payments) == len(record.players) and not any(record.payments)
    checks.append(
        Check(
            "payments",
            unpaid,
            f"voided: nobody paid, announced {list(record.payments)}"
            if unpaid
            else f"a voided hand announces payments {list(record.payments)}",
        )
    )
    return Report(record.hand_id, tuple(checks))


def main(path: str) -> int:
    """Verify the hand record in ``path`` (``-`` for standard input); print each check."""
    import sys

    data = sys.stdin.buffer.read() if path == "-" else open(path, "rb").read()  # noqa: SIM115
    try:
        record = msgspec.json.decode(data, type=HandRecord)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        print(f"not a hand record: {exc}", file=sys.stderr)
        return 2
    report = verify_hand(record)
    for item in report.checks:
        print(f"{'✓' if item.ok else '✗'} {item.name}: {item.detail}")
    voided = " (voided: nobody paid)" if record.voided else ""
    print(f"hand {report.hand_id}: {'VERIFIED' if report.ok else 'FAILED'}{voided}")
    return 0 if report.ok else 1
