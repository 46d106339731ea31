"""deploy/observability: alert rules and the Grafana dashboard use real KaLaro metrics."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
OBS = ROOT / "deploy" / "observability"

# Metric name -> type. Histograms are queried through their _bucket/_sum/_count series.
METRICS = {
    "kalaro_request_seconds": "histogram",
    "kalaro_requests_total": "counter",
    "kalaro_requests_asked_again_total": "counter",
    "kalaro_event_loop_lag_seconds": "histogram",
    "kalaro_gc_pause_seconds": "histogram",
    "kalaro_wallet_oldest_hold_seconds": "gauge",
    "kalaro_settlement_lag_seconds": "histogram",
    "kalaro_consumer_pending": "gauge",
    "kalaro_gateway_open_sockets": "gauge",
    "kalaro_engine_active_hands": "gauge",
}


def referenced(expr: str) -> set[str]:
    """The KaLaro metric names in a PromQL expression (series suffixes stripped)."""
    names = set()
    for name in re.findall(r"\bkalaro_[a-z_]+", expr):
        for suffix in ("_bucket", "_sum", "_count"):
            base = name.removesuffix(suffix)
            if base != name and METRICS.get(base) == "histogram":
                name = base
                break
        names.add(name)
    return names


def check_expr(expr: str, where: str) -> set[str]:
    names = referenced(expr)
    assert names or re.search(r"\bup\{", expr), f"{where}: no KaLaro metric in {expr!r}"
    unknown = names - set(METRICS)
    assert not unknown, f"{where}: unknown metrics {unknown}"
    for name in names:
        if METRICS[name] == "histogram":
            assert re.search(rf"{name}_(bucket|sum|count)\b", expr), f"{where}: bare {name}"
    assert expr.count("(") == expr.count(")"), f"{where}: unbalanced parentheses"
    return names


def rules() -> list[dict[str, object]]:
    spec = yaml.safe_load((OBS / "alerts.yaml").read_text())
    return [rule for group in spec["groups"] for rule in group["rules"]]


def test_alert_rules_reference_known_metrics_and_are_complete() -> None:
    seen: set[str] = set()
    names = [rule["alert"] for rule in rules()]
    assert len(names) == len(set(names))
    for rule in rules():
        where = str(rule["alert"])
        seen |= check_expr(str(rule["expr"]), where)
        assert rule["labels"]["severity"] in ("warning", "critical"), where  # type: ignore[index]
        assert rule["annotations"]["summary"], where  # type: ignore[index]
    assert seen == set(METRICS), f"metrics without an alert: {set(METRICS) - seen}"


def test_the_checker_catches_an_unknown_metric() -> None:
    with pytest.raises(AssertionError, match="unknown metrics"):
        check_expr("rate(kalaro_no_such_metric_total[5m]) > 1", "test")


def test_alert_rules_pass_promtool_where_it_is_installed() -> None:
    promtool = shutil.which("promtool")
    if promtool is None:
        pytest.skip("promtool is not installed (Debian: prometheus); the YAML checks above ran")
    result = subprocess.run(
        [promtool, "check", "rules", str(OBS / "alerts.yaml")],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr


def test_dashboard_panels_query_known_metrics() -> None:
    dashboard = json.loads((OBS / "grafana-dashboard.json").read_text())
    assert dashboard["uid"] and dashboard["title"]
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids))
    seen: set[str] = set()
    for panel in dashboard["panels"]:
        assert panel["targets"], panel["title"]
        for target in panel["targets"]:
            seen |= check_expr(target["expr"], panel["title"])
    assert seen == set(METRICS), f"metrics without a panel: {set(METRICS) - seen}"
