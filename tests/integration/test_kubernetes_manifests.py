"""deploy/kubernetes: every manifest is valid against pinned Kubernetes
versions' schemas, offline (kubernetes-validate ships them; nothing is
downloaded), and the settings that only work together do.

The invariants read the Deployment as forge-server would: its container args
and environment (plus the Dockerfile's ENV) go through forge-server's own
argument parser, so a renamed flag or a changed default fails here, not in a
cluster.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import kubernetes_validate  # type: ignore[import-untyped]
import pytest
import yaml

from forge_server.app import SHUTDOWN_CLOSE_S
from forge_server.cli import build_parser
from forge_server.exposure import check_exposure

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy" / "kubernetes"
# The oldest Kubernetes the manifests claim (native gRPC probes need 1.27;
# 1.30 is the oldest release still commonly supported) and a current one.
KUBERNETES_VERSIONS = ("1.30", "1.34")
# Not applied by kustomize: copied and filled in by the operator.
EXAMPLES = {"secret.example.yaml"}
# After the drain's grace: closing the transport (SHUTDOWN_CLOSE_S) and
# stopping the managed llama-server (SIGTERM, SIGKILL after 10 s).
LLAMA_STOP_S = 10.0

Manifest = dict[str, Any]


def manifest_files() -> list[Path]:
    return sorted(p for p in DEPLOY.rglob("*.yaml") if p.name != "kustomization.yaml")


def load(path: Path) -> list[Manifest]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]


def all_manifests() -> Iterator[tuple[Path, Manifest]]:
    for path in manifest_files():
        for doc in load(path):
            yield path, doc


def one(kind: str, name: str, directory: Path = DEPLOY) -> Manifest:
    found = [
        doc
        for path in sorted(directory.glob("*.yaml"))
        for doc in load(path)
        if doc.get("kind") == kind and doc["metadata"]["name"] == name
    ]
    assert len(found) == 1, f"expected one {kind}/{name} in {directory}, found {len(found)}"
    return found[0]


@pytest.fixture
def deployment() -> Manifest:
    return one("Deployment", "forge")


def pod_spec(deployment: Manifest) -> Manifest:
    spec: Manifest = deployment["spec"]["template"]["spec"]
    return spec


def forge_container(deployment: Manifest) -> Manifest:
    (container,) = [c for c in pod_spec(deployment)["containers"] if c["name"] == "forge"]
    found: Manifest = container
    return found


def image_env() -> dict[str, str]:
    """The FORGE_* variables the Dockerfile's ENV instructions set."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    env: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("ENV "):
            env.update(re.findall(r"\b(FORGE_[A-Z_]+)=(\S+)", line))
    assert env, "no FORGE_* ENV in the Dockerfile"
    return env


def server_args(deployment: Manifest, monkeypatch: pytest.MonkeyPatch) -> Any:
    """forge-server's parsed configuration in the container: the image's ENV,
    the container's env (values from Secrets as placeholders) and its args."""
    for name in list(os.environ):
        if name.startswith("FORGE_"):
            monkeypatch.delenv(name)
    env = image_env()
    for var in forge_container(deployment).get("env", []):
        env[var["name"]] = var["value"] if "value" in var else f"<{var['valueFrom']}>"
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return build_parser().parse_args(forge_container(deployment).get("args", []))


def selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


# ── schemas ────────────────────────────────────────────────────────────────


def test_the_manifests_are_found() -> None:
    kinds = {doc["kind"] for _, doc in all_manifests()}
    assert {
        "Deployment",
        "Service",
        "PodDisruptionBudget",
        "Secret",
        "ServiceAccount",
        "NetworkPolicy",
        "StatefulSet",
    } <= kinds


@pytest.mark.parametrize("version", KUBERNETES_VERSIONS)
def test_every_manifest_is_valid_against_the_kubernetes_schemas(version: str) -> None:
    checked = 0
    for path, doc in all_manifests():
        try:
            kubernetes_validate.validate(doc, version, strict=True)
        except kubernetes_validate.ValidationError as exc:
            where = "/".join(str(p) for p in exc.path)
            pytest.fail(f"{path.relative_to(ROOT)} {doc['kind']}: {where}: {exc.message}")
        checked += 1
    assert checked >= 8


def test_strict_validation_rejects_an_unknown_field(deployment: Manifest) -> None:
    # Strict schemas forbid fields Kubernetes does not know: a misspelt
    # setting would otherwise be dropped silently by the API server.
    pod_spec(deployment)["terminationGracePeriodSecond"] = 50
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, KUBERNETES_VERSIONS[0], strict=True)


def test_the_schemas_ship_with_the_package() -> None:
    # Validation reads only the schemas inside the installed package (no
    # network): every pinned version must be among them.
    from kubernetes_validate import utils

    shipped = {utils.major_minor(v) for v in utils.all_versions()}
    assert set(KUBERNETES_VERSIONS) <= shipped


# ── kustomize ──────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    "directory", sorted({p.parent for p in DEPLOY.rglob("kustomization.yaml")}), ids=str
)
def test_kustomization_lists_every_manifest(directory: Path) -> None:
    kustomization = yaml.safe_load((directory / "kustomization.yaml").read_text())
    resources = set(kustomization["resources"])
    for resource in resources:
        assert (directory / resource).exists(), resource
    present = {p.name for p in directory.glob("*.yaml")} - {"kustomization.yaml"}
    assert resources == present - EXAMPLES


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl not installed")
@pytest.mark.parametrize("directory", [DEPLOY, DEPLOY / "try-it"], ids=["base", "try-it"])
def test_kustomize_builds(directory: Path) -> None:
    out = subprocess.run(
        ["kubectl", "kustomize", str(directory)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    docs = [d for d in yaml.safe_load_all(out) if d]
    for doc in docs:
        kubernetes_validate.validate(doc, KUBERNETES_VERSIONS[0], strict=True)


# ── the Deployment as forge-server reads it ────────────────────────────────


def test_several_replicas_roll_without_losing_capacity(deployment: Manifest) -> None:
    assert deployment["spec"]["replicas"] >= 2
    rolling = deployment["spec"]["strategy"]["rollingUpdate"]
    assert rolling["maxUnavailable"] == 0


def test_the_server_starts_with_this_configuration(
    deployment: Manifest, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = server_args(deployment, monkeypatch)
    assert args.host == "0.0.0.0"
    # Plaintext on the pod IP needs a token file, TLS or --insecure: the
    # token file from the Secret is what lets it start.
    assert args.auth_token_file is not None
    assert not args.insecure
    check_exposure(f"{args.host}:{args.port}", args.tls_cert is not None, True, args.insecure)
    mounts = {m["mountPath"]: m for m in forge_container(deployment)["volumeMounts"]}
    volumes = {v["name"]: v for v in pod_spec(deployment)["volumes"]}
    mount = mounts[str(args.auth_token_file.parent)]
    items = volumes[mount["name"]]["secret"]["items"]
    assert args.auth_token_file.name in {i["path"] for i in items}


def test_termination_grace_outlasts_the_drain(
    deployment: Manifest, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = server_args(deployment, monkeypatch)
    spec = pod_spec(deployment)
    pre_stop = forge_container(deployment)["lifecycle"]["preStop"]["exec"]["command"]
    assert pre_stop[0] == "sleep"
    needed = float(pre_stop[1]) + args.shutdown_grace + SHUTDOWN_CLOSE_S + LLAMA_STOP_S
    assert args.shutdown_grace > 0
    assert spec["terminationGracePeriodSeconds"] > needed


def test_probes_are_grpc_health_checks_on_the_grpc_port(
    deployment: Manifest, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = server_args(deployment, monkeypatch)
    container = forge_container(deployment)
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports["grpc"] == args.port
    assert ports["metrics"] == args.metrics_port
    for kind in ("startupProbe", "readinessProbe", "livenessProbe"):
        probe = container[kind]
        assert probe["grpc"] == {"port": args.port, "service": ""}, kind
    # The gRPC port opens only once the model is loaded.
    startup = container["startupProbe"]
    assert startup["periodSeconds"] * startup["failureThreshold"] >= 120
    # A draining replica answers NOT_SERVING: liveness must not kill it first.
    liveness = container["livenessProbe"]
    assert (
        liveness["periodSeconds"] * liveness["failureThreshold"]
        >= pod_spec(deployment)["terminationGracePeriodSeconds"]
    )


def test_the_journal_url_comes_from_a_secret(deployment: Manifest) -> None:
    container = forge_container(deployment)
    (journal,) = [v for v in container["env"] if v["name"] == "FORGE_JOURNAL"]
    assert "value" not in journal
    assert journal["valueFrom"]["secretKeyRef"]["name"] == "forge-secrets"
    # No URL in the args (retention flags name the journal, not where it is).
    assert not any(a.startswith("--journal=") or "postgres" in a for a in container.get("args", []))


def test_the_example_secrets_hold_every_key_the_pods_read(deployment: Manifest) -> None:
    refs = {
        v["valueFrom"]["secretKeyRef"]["key"]
        for v in forge_container(deployment)["env"]
        if "secretKeyRef" in v.get("valueFrom", {})
    }
    refs |= {
        item["key"]
        for v in pod_spec(deployment)["volumes"]
        if "secret" in v
        for item in v["secret"]["items"]
    }
    example = one("Secret", "forge-secrets")
    assert refs <= set(example["stringData"])
    assert all("REPLACE_ME" in value for value in example["stringData"].values())
    try_it = one("Secret", "forge-secrets", DEPLOY / "try-it")
    assert refs <= set(try_it["stringData"])


def test_the_try_it_journal_points_at_the_try_it_postgres() -> None:
    secret = one("Secret", "forge-secrets", DEPLOY / "try-it")["stringData"]
    url = urlsplit(secret["journal-url"])
    assert url.scheme == "postgresql"
    assert url.hostname == one("Service", "forge-postgres", DEPLOY / "try-it")["metadata"]["name"]
    assert url.password == secret["postgres-password"]


def test_the_pod_runs_unprivileged_on_a_read_only_root(deployment: Manifest) -> None:
    spec = pod_spec(deployment)
    container = forge_container(deployment)
    uid = re.search(r"useradd .*--uid (\d+)", (ROOT / "Dockerfile").read_text())
    assert uid is not None
    assert spec["securityContext"]["runAsUser"] == int(uid.group(1))
    assert spec["securityContext"]["runAsNonRoot"] is True
    assert spec["automountServiceAccountToken"] is False
    security = container["securityContext"]
    assert security["readOnlyRootFilesystem"] is True
    assert security["allowPrivilegeEscalation"] is False
    assert security["capabilities"]["drop"] == ["ALL"]
    # The managed llama-server's slot files go to a temporary directory.
    volumes = {v["name"]: v for v in spec["volumes"]}
    (tmp,) = [m for m in container["volumeMounts"] if m["mountPath"] == "/tmp"]
    assert "emptyDir" in volumes[tmp["name"]]


# ── Services, disruption budget, network policy ────────────────────────────


def test_the_headless_service_selects_the_replicas(deployment: Manifest) -> None:
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    container_ports = {p["name"]: p["containerPort"] for p in forge_container(deployment)["ports"]}
    headless = one("Service", "forge-headless")
    assert headless["spec"]["clusterIP"] == "None"
    assert headless["spec"].get("publishNotReadyAddresses", False) is False
    for name in ("forge-headless", "forge"):
        service = one("Service", name)
        assert selects(service["spec"]["selector"], labels), name
        for port in service["spec"]["ports"]:
            assert port["targetPort"] in container_ports, (name, port)
            assert port["port"] == container_ports[port["targetPort"]], (name, port)
    assert [p["port"] for p in headless["spec"]["ports"]] == [container_ports["grpc"]]


def test_the_disruption_budget_covers_the_replicas(deployment: Manifest) -> None:
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    pdb = one("PodDisruptionBudget", "forge")["spec"]
    assert selects(pdb["selector"]["matchLabels"], labels)
    assert pdb["selector"]["matchLabels"] == deployment["spec"]["selector"]["matchLabels"]
    if "maxUnavailable" in pdb:
        assert pdb["maxUnavailable"] == 1
    else:
        assert 1 <= pdb["minAvailable"] < deployment["spec"]["replicas"]


def test_the_network_policy_admits_the_served_ports(deployment: Manifest) -> None:
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    policy = one("NetworkPolicy", "forge")["spec"]
    assert selects(policy["podSelector"]["matchLabels"], labels)
    admitted = {p["port"] for rule in policy["ingress"] for p in rule["ports"]}
    assert admitted == {p["name"] for p in forge_container(deployment)["ports"]}
