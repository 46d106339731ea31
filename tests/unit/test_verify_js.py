"""The browser's fairness check (web/verify.js, run here under Node) agrees with
``kalaro verify`` (libs/kalaro/verify.py) on whole hands of every game, and both reject
the same tampering. The e2e tier does the same on hands played through the stack
(tests/e2e/test_hand_history.py)."""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import msgspec
import pytest

from kalaro.games.base import derive_seed, pick
from kalaro.games.registry import rules_for
from kalaro.proto.engine import HandRecord
from kalaro.verify import verify_hand
from tests.unit.hand_records import play

VERIFY_JS = Path(__file__).resolve().parents[2] / "web" / "verify.js"
# Reads a JSON list of records on stdin, prints a JSON list of reports.
_RUNNER = f"""
import {{ verifyHand }} from {json.dumps(VERIFY_JS.as_uri())};
let text = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => (text += chunk));
process.stdin.on("end", () => console.log(JSON.stringify(JSON.parse(text).map(verifyHand))));
"""
GAMES = ["tongits", "mahjong", "kawuxing"]


def js_verify(records: list[Any]) -> list[dict[str, Any]]:
    """Run web/verify.js on plain-JSON records (HandRecord structs or dicts)."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed: cannot run web/verify.js")
    out = subprocess.run(
        [node, "--input-type=module", "-e", _RUNNER],
        input=msgspec.json.encode(records), capture_output=True, check=True, timeout=60,
    )  # fmt: skip
    reports: list[dict[str, Any]] = json.loads(out.stdout)
    return reports


def by_name(report: dict[str, Any]) -> dict[str, bool]:
    return {c["name"]: c["ok"] for c in report["checks"]}


def test_sha256_and_seed_derivation_match_python() -> None:
    # Hashes of odd lengths around the 55/56/64-byte padding edges, and the derived seed.
    node = shutil.which("node")
    if node is None:
        pytest.skip("Node.js is not installed: cannot run web/verify.js")
    sizes = [0, 1, 55, 56, 63, 64, 65, 119, 120, 1000]
    hashes = ",".join(
        f"toHex(sha256(new Uint8Array({n}).map((_, i) => (i * 7 + 3) & 255)))" for n in sizes
    )
    script = f"""
import {{ sha256, toHex, deriveSeed, fromHex, shuffled }} from {json.dumps(VERIFY_JS.as_uri())};
const out = [{hashes}];
out.push(toHex(deriveSeed(fromHex("ab".repeat(32)), ["tap-1", "ñ"])));
out.push(shuffled([...Array(52).keys()], fromHex("01".repeat(32))).join(","));
console.log(JSON.stringify(out));
"""
    run = [node, "--input-type=module", "-e", script]
    got = json.loads(subprocess.run(run, capture_output=True, check=True, timeout=30).stdout)
    from kalaro.games.base import shuffled

    want = [hashlib.sha256(bytes((i * 7 + 3) & 255 for i in range(n))).hexdigest() for n in sizes]
    want.append(derive_seed(bytes.fromhex("ab" * 32), ["tap-1", "ñ"]).hex())
    want.append(",".join(map(str, shuffled(list(range(52)), bytes.fromhex("01" * 32)))))
    assert got == want


@pytest.mark.parametrize("game", GAMES)
def test_js_and_python_agree_on_whole_hands(game: str) -> None:
    # Half with the first dealer drawn from the seed, half with it fixed (later hands).
    records = [play(game, random.Random(seed), dealer=seed % 3 if seed % 2 else None)
               for seed in range(6)]  # fmt: skip
    for record, report in zip(records, js_verify(records), strict=True):
        python = verify_hand(record)
        assert python.ok, python.checks
        assert report["ok"], report
        assert by_name(report) == {"commitment": True, "deal": True, "payments": True}


def _first_dealer(record: HandRecord) -> int:
    seed = derive_seed(bytes.fromhex(record.server_seed), record.entropy)
    return pick(seed, "dealer", rules_for(record.game).seats)


@pytest.mark.parametrize("game", GAMES)
def test_both_reject_the_same_tampering(game: str) -> None:
    record = play(game, random.Random(11))
    hands = [list(h) for h in record.initial_hands]
    j = next(j for j, t in enumerate(hands[1]) if t != hands[0][0])
    hands[0][0], hands[1][j] = hands[1][j], hands[0][0]  # swap two cards between seats
    swapped_order = [list(h) for h in record.initial_hands]
    swapped_order[1] = swapped_order[1][::-1]  # same cards, not the order dealt
    replace = msgspec.structs.replace
    zeros = bytes(32)
    tampered = {
        "commitment": replace(record, seed_commitment="00" * 32),
        "not hex": replace(record, server_seed="zz"),
        "seed": replace(
            record, server_seed=zeros.hex(), seed_commitment=hashlib.sha256(zeros).hexdigest()
        ),
        "entropy": replace(record, entropy=("x",) * len(record.entropy)),
        "hands": replace(record, initial_hands=tuple(map(tuple, hands))),
        "order": replace(record, initial_hands=tuple(map(tuple, swapped_order))),
        "dealer": replace(record, dealer=(_first_dealer(record) + 1) % 3),
        "payments": replace(
            record, payments=(record.payments[0] + 5, record.payments[1] - 5, *record.payments[2:])
        ),
    }  # fmt: skip
    reports = js_verify(list(tampered.values()))
    for (what, bad), report in zip(tampered.items(), reports, strict=True):
        python = {c.name: c.ok for c in verify_hand(bad).checks}
        js = by_name(report)
        assert not report["ok"], what
        assert not verify_hand(bad).ok, what
        # The failing check is the same one on both sides (Python stops earlier on some).
        for name in ("commitment", "deal", "payments"):
            if name in python and name in js:
                assert python[name] == js[name], (what, name, python, js)
