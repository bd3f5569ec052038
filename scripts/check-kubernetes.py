#!/usr/bin/env python3
"""Checks deploy/kubernetes/switchboard.yaml against the server it deploys (no cluster needed).

What a wrong manifest would break, checked against the code rather than against itself:
- every environment variable it sets is one the server reads (crates/server/src/config.rs);
- the probes are the server's (/healthz alive, /readyz ready) on the container's port;
- each node keeps DATA_DIR on its own volume (a StatefulSet volume claim mounted there);
- the Services and the disruption budget select the pods, the ingress names a Service port;
- the pods run as the image's numeric user (Dockerfile), so runAsNonRoot can be verified;
- the grace period outlasts the server's own SHUTDOWN_TIMEOUT, so a stop flushes the ledger.
"""

import os
import re
import sys

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MANIFEST = os.path.join(ROOT, "deploy", "kubernetes", "switchboard.yaml")
CONFIG_RS = os.path.join(ROOT, "crates", "server", "src", "config.rs")
DOCKERFILE = os.path.join(ROOT, "Dockerfile")
# Variables the container sets that are not the server's own.
NOT_SERVER_ENV = {"TZ"}
# The keys the manifest's instructions put in the Secret.
SECRET_KEYS = {"SESSION_SECRET", "SQL_DSN", "REDIS_CONN_STRING", "METRICS_TOKEN"}

errors = []


def check(cond, msg):
    if not cond:
        errors.append(msg)


with open(CONFIG_RS, encoding="utf-8") as f:
    config_rs = f.read()
server_env = set(re.findall(r'env = "([A-Z_]+)"', config_rs))
shutdown = re.search(r'env = "SHUTDOWN_TIMEOUT".*?default_value_t = (\d+)', config_rs, re.S)
shutdown_timeout = int(shutdown.group(1)) if shutdown else None
with open(DOCKERFILE, encoding="utf-8") as f:
    user = re.findall(r"^USER\s+(\S+)\s*$", f.read(), re.M)

with open(MANIFEST, encoding="utf-8") as f:
    docs = [d for d in yaml.safe_load_all(f) if d]
by_kind = {}
for d in docs:
    by_kind.setdefault(d["kind"], []).append(d)

for kind in ("ConfigMap", "StatefulSet", "Service", "PodDisruptionBudget", "Ingress"):
    check(kind in by_kind, f"no {kind}")
if errors:
    sys.exit("\n".join(errors))

config = by_kind["ConfigMap"][0]
sts = by_kind["StatefulSet"][0]
pod = sts["spec"]["template"]
labels = pod["metadata"]["labels"]
spec = pod["spec"]
(container,) = spec["containers"]

# Environment.
env_names = set(config["data"]) | {e["name"] for e in container.get("env", [])} | SECRET_KEYS
unknown = sorted(env_names - server_env - NOT_SERVER_ENV)
check(not unknown, f"variables the server does not read: {unknown}")
check(
    {"configMapRef": {"name": config["metadata"]["name"]}} in container["envFrom"],
    "the container does not take the ConfigMap",
)
check(any("secretRef" in e for e in container["envFrom"]), "the container takes no Secret")

# Probes on the server's endpoints and the container's port.
port_names = {p["name"]: p["containerPort"] for p in container["ports"]}
env_port = next((e["value"] for e in container.get("env", []) if e["name"] == "PORT"), "3000")
check(port_names.get("http") == int(env_port), "the http port is not the server's PORT")
for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz"),
                    ("startupProbe", "/healthz")):
    get = container.get(probe, {}).get("httpGet", {})
    check(get.get("path") == path, f"{probe} is not GET {path}")
    check(get.get("port") in port_names, f"{probe} names no container port")

# Each node keeps DATA_DIR on its own volume.
data_dir = config["data"].get("DATA_DIR")
check(data_dir, "DATA_DIR is not set")
claims = {c["metadata"]["name"] for c in sts["spec"].get("volumeClaimTemplates", [])}
mounts = {m["mountPath"]: m["name"] for m in container.get("volumeMounts", [])}
check(mounts.get(data_dir) in claims, f"DATA_DIR ({data_dir}) is not on a per-node volume claim")
check(sts["spec"]["replicas"] >= 2, "fewer than two nodes")
check(sts["spec"]["selector"]["matchLabels"].items() <= labels.items(),
      "the StatefulSet's selector does not match its pods")

# Services, disruption budget and ingress select what exists.
services = {s["metadata"]["name"]: s for s in by_kind["Service"]}
check(sts["spec"]["serviceName"] in services, "the StatefulSet's serviceName is not a Service")
check(services[sts["spec"]["serviceName"]]["spec"].get("clusterIP") == "None",
      "the StatefulSet's Service is not headless")
for name, s in services.items():
    check(s["spec"]["selector"].items() <= labels.items(), f"Service {name} selects no pod")
    for p in s["spec"]["ports"]:
        check(p["targetPort"] in port_names, f"Service {name} targets no container port")
pdb = by_kind["PodDisruptionBudget"][0]
check(pdb["spec"]["selector"]["matchLabels"].items() <= labels.items(), "the budget selects no pod")
for rule in by_kind["Ingress"][0]["spec"]["rules"]:
    for path in rule["http"]["paths"]:
        backend = path["backend"]["service"]
        target = services.get(backend["name"])
        check(target is not None, f"the ingress names no Service {backend['name']}")
        if target:
            check(backend["port"].get("name") in {p["name"] for p in target["spec"]["ports"]},
                  "the ingress names no port of its Service")

# The image's user, and a stop that outlasts the server's own grace.
run_as = spec.get("securityContext", {}).get("runAsUser")
check(user and user[-1].isdigit(), "the Dockerfile's USER is not numeric")
check(user and str(run_as) == user[-1], f"runAsUser {run_as} is not the image's user {user}")
grace = spec.get("terminationGracePeriodSeconds", 30)
check(shutdown_timeout is not None and grace > shutdown_timeout,
      f"terminationGracePeriodSeconds {grace} does not outlast SHUTDOWN_TIMEOUT {shutdown_timeout}")

if errors:
    print("deploy/kubernetes/switchboard.yaml:", file=sys.stderr)
    for e in errors:
        print("  " + e, file=sys.stderr)
    sys.exit(1)
print("deploy/kubernetes/switchboard.yaml: valid")
