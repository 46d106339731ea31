"""Rendezvous shares of engine partitions (services/engine/assign.py): pure."""

from __future__ import annotations

from kalaro.proto import endpoints
from kalaro.proto.subjects import ENGINE_PARTITIONS, partition_of
from services.engine.assign import assignment, owner_of, share_of

REPLICAS = [f"engine-{i}" for i in range(5)]


def test_every_partition_has_exactly_one_owner_and_shares_partition_them() -> None:
    owners = assignment(REPLICAS[:3], ENGINE_PARTITIONS)
    assert sorted(owners) == list(range(ENGINE_PARTITIONS))
    shares = [share_of(r, REPLICAS[:3], ENGINE_PARTITIONS) for r in REPLICAS[:3]]
    assert sum(len(s) for s in shares) == ENGINE_PARTITIONS
    assert frozenset().union(*shares) == frozenset(range(ENGINE_PARTITIONS))


def test_shares_are_balanced_over_many_partitions() -> None:
    partitions = 3000
    for n in (2, 3, 5):
        counts = [len(share_of(r, REPLICAS[:n], partitions)) for r in REPLICAS[:n]]
        mean = partitions / n
        assert all(0.85 * mean < c < 1.15 * mean for c in counts), (n, counts)


def test_every_replica_gets_some_of_the_real_partitions() -> None:
    for n in (2, 3):
        assert all(share_of(r, REPLICAS[:n], ENGINE_PARTITIONS) for r in REPLICAS[:n])


def test_a_replica_joining_takes_only_partitions_it_wins() -> None:
    before = assignment(REPLICAS[:3], ENGINE_PARTITIONS)
    after = assignment(REPLICAS[:4], ENGINE_PARTITIONS)
    moved = {p for p in before if before[p] != after[p]}
    assert moved  # the newcomer gets a share...
    assert all(after[p] == REPLICAS[3] for p in moved)  # ...and nothing else moves


def test_a_replica_leaving_gives_up_only_its_own_partitions() -> None:
    before = assignment(REPLICAS[:4], ENGINE_PARTITIONS)
    after = assignment([r for r in REPLICAS[:4] if r != REPLICAS[1]], ENGINE_PARTITIONS)
    moved = {p for p in before if before[p] != after[p]}
    assert moved == {p for p, r in before.items() if r == REPLICAS[1]}


def test_the_answer_is_the_same_whatever_the_order_and_empty_without_replicas() -> None:
    assert assignment(REPLICAS[:3], 64) == assignment(list(reversed(REPLICAS[:3])), 64)
    assert assignment([], 8) == {}
    assert owner_of(0, []) is None
    assert share_of("gone", REPLICAS[:2], 64) == frozenset()  # a draining replica


def test_partition_of_is_stable_and_in_range() -> None:
    # CRC-32: the same in every process (Python's str hash is salted per process).
    assert partition_of("table-1") == partition_of("table-1")
    assert partition_of("abc", 1000) == 891568578 % 1000
    seen = {partition_of(f"t{i}") for i in range(2000)}
    assert seen == set(range(ENGINE_PARTITIONS))


def test_per_table_requests_are_routed_to_their_partition_subject() -> None:
    act = endpoints.engine_act("tongits")
    routed = endpoints.to_owner(act, "table-9")
    assert routed.subject == f"engine.tongits.act.{partition_of('table-9')}"
    assert routed.owned and not act.owned
    assert (routed.request, routed.reply, routed.idempotent) == (act.request, act.reply, False)
    assert endpoints.to_owner(act, "table-9") is routed  # built once per partition


def test_partitions_in_a_log_line_are_written_as_spans() -> None:
    from services.engine.ownership import spans

    assert spans([5, 0, 1, 2, 7, 8]) == "0-2,5,7-8"
    assert spans(range(32)) == "0-31"
    assert spans([3]) == "3"
    assert spans([]) == ""
    assert spans([1, 3, 5]) == "1,3,5"
