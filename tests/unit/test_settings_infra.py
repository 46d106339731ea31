"""Settings for the infrastructure: NATS server lists, stream limits, the production switch."""

from __future__ import annotations

import msgspec
import pytest

from kalaro.bus.jetstream import stream_specs
from kalaro.proto import subjects
from kalaro.settings import load_settings, nats_servers, production_problem


def test_the_nats_url_may_list_several_servers() -> None:
    settings = load_settings({"KALARO_NATS_URL": "nats://a:4222, nats://b:4222,nats://c:4222"})
    assert nats_servers(settings.nats_url) == ["nats://a:4222", "nats://b:4222", "nats://c:4222"]
    assert nats_servers("nats://127.0.0.1:4222") == ["nats://127.0.0.1:4222"]
    assert nats_servers(load_settings({"NATS_URL": "nats://x:1,"}).nats_url) == ["nats://x:1"]
    with pytest.raises(ValueError):
        nats_servers(" , ")


def test_stream_replicas_and_limits_come_from_the_environment() -> None:
    defaults = stream_specs(load_settings({}))
    results = defaults[subjects.RESULTS_STREAM]
    assert results.replicas == 0  # derived from the cluster when ensured
    assert results.max_age_seconds == 7 * 86400
    assert results.max_bytes == 1024**3
    assert results.config().duplicate_window == 3600

    settings = load_settings(
        {
            "KALARO_STREAM_REPLICAS": "3",
            "KALARO_RESULTS_STREAM_MAX_AGE_DAYS": "14",
            "KALARO_EVENTS_STREAM_MAX_BYTES": "1000000",
        }
    )
    specs = stream_specs(settings)
    assert {spec.replicas for spec in specs.values()} == {3}
    assert specs[subjects.RESULTS_STREAM].max_age_seconds == 14 * 86400
    assert specs[subjects.EVENTS_STREAM].max_bytes == 1_000_000
    assert specs[subjects.EVENTS_STREAM].subjects == (subjects.EVENTS_SUBJECTS,)
    # A stream kept less than an hour gets a duplicate window as short as it is kept.
    short = stream_specs(load_settings({"KALARO_RESULTS_STREAM_MAX_AGE_DAYS": "0.01"}))
    assert short[subjects.RESULTS_STREAM].config().duplicate_window == pytest.approx(864)


def test_production_needs_an_explicit_database_url() -> None:
    production = {"KALARO_ENV": "production"}
    problem = production_problem(load_settings(production), production)
    assert problem is not None and "KALARO_DATABASE_URL" in problem

    for name in ("KALARO_DATABASE_URL", "DATABASE_URL"):
        env = {**production, name: "postgresql+asyncpg://kalaro@db/kalaro"}
        assert production_problem(load_settings(env), env) is None
    # An empty value is not a database either.
    env = {**production, "DATABASE_URL": " "}
    assert production_problem(load_settings(env), env) is not None

    # Development (the default) keeps the SQLite fallback.
    assert production_problem(load_settings({}), {}) is None
    assert load_settings({}).database_url.startswith("sqlite")


def test_an_unknown_environment_is_refused() -> None:
    with pytest.raises(msgspec.ValidationError):
        load_settings({"KALARO_ENV": "prod"})
