"""How many stream replicas a server's INFO asks for (kalaro.bus.replicas, pure parts)."""

from __future__ import annotations

from nats.js.errors import BadRequestError, ServiceUnavailableError

from kalaro.bus.replicas import MAX_DERIVED, cluster_size, placement_refused


def test_a_server_without_a_cluster_is_one_node() -> None:
    assert cluster_size({"server_id": "x", "jetstream": True})[0] == 1
    # A lone server lists itself to clients only when clustered; its URL changes nothing.
    assert cluster_size({"connect_urls": ["10.0.0.1:4222"]})[0] == 1


def test_a_cluster_counts_the_client_urls_of_its_nodes() -> None:
    urls = ["10.0.0.1:4222", "10.0.0.2:4222", "10.0.0.3:4222"]
    nodes, basis = cluster_size({"cluster": "kalaro", "connect_urls": urls})
    assert (nodes, basis) == (3, "a 3-node NATS cluster")
    # The same URL twice is one node; a node that is down is simply not listed.
    assert cluster_size({"cluster": "kalaro", "connect_urls": [*urls[:2], urls[0]]})[0] == 2
    assert cluster_size({"cluster": "kalaro", "connect_urls": [*urls, "10.0.0.4:4222"]})[0] == 4


def test_a_cluster_that_does_not_advertise_its_nodes_is_assumed_to_have_three() -> None:
    nodes, basis = cluster_size({"cluster": "kalaro"})
    assert nodes == MAX_DERIVED == 3
    assert "assumed" in basis


def test_only_placement_answers_count_as_refusals() -> None:
    assert placement_refused(BadRequestError(code=400, err_code=10005, description="no peers"))
    assert placement_refused(BadRequestError(code=500, err_code=10074, description="standalone"))
    assert not placement_refused(BadRequestError(code=400, err_code=10065, description="overlap"))
    assert not placement_refused(ServiceUnavailableError(code=503))
    assert not placement_refused(TimeoutError())
