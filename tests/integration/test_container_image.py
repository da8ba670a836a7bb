"""The container image, built and run for real.

deploy/image/build.sh makes a Debian base with mmdebstrap (no registry is
reachable) and podman builds the repository's Dockerfile on it. The image is
then run as an operator would run it: it listens on 0.0.0.0, which the server
refuses without TLS or authentication, so a token file is mounted read-only
and the gRPC and metrics ports are published on loopback. From the host the
tests check health and metrics, run the weather example's workflow through
the Python SDK, check who the processes run as, and stop the container with
SIGTERM. Real everything: podman, the image's own llama-server and model.

Skipped where podman or mmdebstrap is absent (`.ci/run` installs them) or
where this machine refuses to run a container at all (the skip gives the
runtime's own message). The build takes 2-3 minutes on 2 cores the first
time; podman's layer cache makes a rebuild after a source change take about
a minute (docs/container-image.md).
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import time
import tomllib
import urllib.request
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from forge.v1 import forge_service_pb2 as pb
from forge.v1 import forge_service_pb2_grpc as pb_grpc
from forge_client import ForgeClient
from forge_core.llama_host.process import free_port

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "deploy" / "image" / "build.sh"
IMAGE = "localhost/forge-sidecar:test"
# Building (first time: base, ~450 MB of wheels, the model) and one model run.
BUILD_TIMEOUT_S = 1800
START_TIMEOUT_S = 180
STOP_TIMEOUT_S = 60
# What runc/crun/podman say when this machine cannot run containers at all
# (a sandbox without the needed privileges), as opposed to a broken image.
RUNTIME_REFUSAL = re.compile(
    r"^.*(OCI permission denied|OCI runtime error|runc create failed|crun: |"
    r"cannot set up namespace|newuidmap|cannot clone).*$",
    re.MULTILINE,
)
TOKEN = "container-test-token"


def podman_env() -> dict[str, str]:
    # The same containers.conf as build.sh: this sandbox refuses podman's
    # default rlimits (deploy/image/containers.conf says why).
    env = dict(os.environ)
    env.setdefault("CONTAINERS_CONF", str(ROOT / "deploy" / "image" / "containers.conf"))
    return env


def podman(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["podman", *args], env=podman_env(), capture_output=True, text=True, timeout=timeout
    )


def skip_if_refused(output: str) -> None:
    refusal = RUNTIME_REFUSAL.search(output)
    if refusal:
        pytest.skip(f"this machine refuses to run containers: {refusal.group(0).strip()}")


# ── packaging (no podman needed) ───────────────────────────────────────────


def test_every_package_directory_is_in_the_distribution() -> None:
    """The image installs Forge from a wheel, not editable as `make install`
    does, and setuptools puts only the listed packages in it: a subpackage
    missing from pyproject.toml is missing from the image (forge_server.journal
    was, and forge-server failed at import)."""
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    listed = set(setuptools["packages"])
    found = set()
    for name, directory in setuptools["package-dir"].items():
        for init in (ROOT / directory).rglob("__init__.py"):
            relative = init.parent.relative_to(ROOT / directory)
            found.add(".".join([name, *relative.parts]))
    assert found - listed == set(), "add these to [tool.setuptools] packages in pyproject.toml"


# ── the image ───────────────────────────────────────────────────────────────


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> str:
    for tool in ("podman", "mmdebstrap"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} not installed (apt-get install mmdebstrap podman buildah runc)")
    log = tmp_path_factory.mktemp("image") / "build.log"
    with log.open("w") as out:
        built = subprocess.run(
            [str(BUILD)],
            env={**podman_env(), "IMAGE": IMAGE},
            stdout=out,
            stderr=subprocess.STDOUT,
            timeout=BUILD_TIMEOUT_S,
        )
    text = log.read_text()
    if built.returncode != 0:
        skip_if_refused(text)
        pytest.fail(f"deploy/image/build.sh failed:\n{text[-6000:]}")
    return IMAGE


def inspect(image: str, field: str) -> str:
    return podman("image", "inspect", "--format", f"{{{{json .Config.{field}}}}}", image).stdout


@pytest.mark.timeout(BUILD_TIMEOUT_S + 60)
def test_the_image_declares_its_user_ports_and_stop_signal(image: str) -> None:
    assert inspect(image, "User").strip() == '"forge"'
    ports = inspect(image, "ExposedPorts")
    assert '"50051/tcp"' in ports and '"9090/tcp"' in ports
    # tini as PID 1 forwards SIGTERM to forge-server and passes its status on.
    assert inspect(image, "Entrypoint").strip() == '["tini","--","forge-server"]'
    assert inspect(image, "StopSignal").strip() == '"SIGTERM"'


@pytest.mark.timeout(BUILD_TIMEOUT_S + 60)
def test_the_image_refuses_a_public_port_without_tls_or_a_token(image: str) -> None:
    # The refusal comes before llama-server starts, so this takes a second.
    run = podman("run", "--rm", image)
    skip_if_refused(run.stderr)
    assert run.returncode == 1, run.stderr
    assert "refusing to listen on 0.0.0.0:50051" in run.stderr
    assert "FORGE_INSECURE=1" in run.stderr


@dataclass
class Container:
    name: str
    grpc_address: str
    metrics_url: str


def wait_until_serving(container: Container) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    with grpc.insecure_channel(container.grpc_address) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        while True:
            try:
                reply = health.Check(health_pb2.HealthCheckRequest(), timeout=2)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.RpcError:
                pass
            state = podman("inspect", "--format", "{{.State.Status}}", container.name)
            if state.stdout.strip() != "running" or time.monotonic() > deadline:
                logs = podman("logs", container.name)
                pytest.fail(
                    f"container {state.stdout.strip()}, not SERVING:\n"
                    f"{logs.stdout[-4000:]}{logs.stderr[-4000:]}"
                )
            time.sleep(0.5)


@contextmanager
def running(
    image: str, tokens: Path, run_args: Sequence[str] = (), server_args: Sequence[str] = ()
) -> Iterator[Container]:
    """The image started with the token file mounted read-only and its ports
    published on loopback, once it reports SERVING; removed on the way out."""
    grpc_port, metrics_port = free_port(), free_port()
    name = f"forge-test-{uuid.uuid4().hex[:8]}"
    started = podman(
        "run", "--detach", "--name", name,
        "--volume", f"{tokens}:/etc/forge/tokens:ro,Z",
        "--env", "FORGE_AUTH_TOKEN_FILE=/etc/forge/tokens",
        "--publish", f"127.0.0.1:{grpc_port}:50051",
        "--publish", f"127.0.0.1:{metrics_port}:9090",
        *run_args, image, *server_args,
    )  # fmt: skip
    try:
        skip_if_refused(started.stderr)
        assert started.returncode == 0, started.stderr
        container = Container(
            name, f"127.0.0.1:{grpc_port}", f"http://127.0.0.1:{metrics_port}/metrics"
        )
        wait_until_serving(container)
        yield container
    finally:
        podman("rm", "--force", "--time", "0", name)


@pytest.fixture(scope="module")
def tokens(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("auth") / "tokens"
    path.write_text(f"{TOKEN} name=container-test\n")
    # The image's user (10001) reads it through the read-only mount.
    path.chmod(0o644)
    return path


@pytest.fixture(scope="module")
def container(image: str, tokens: Path) -> Iterator[Container]:
    with running(image, tokens) as started:
        yield started


def load_weather_example() -> ModuleType:
    path = ROOT / "examples" / "python" / "weather.py"
    spec = importlib.util.spec_from_file_location("weather_example", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.e2e
@pytest.mark.timeout(BUILD_TIMEOUT_S + START_TIMEOUT_S)
def test_health_and_metrics_answer_from_the_host(container: Container) -> None:
    with grpc.insecure_channel(container.grpc_address) as channel:
        # Health stays open for probes; everything else needs the token.
        reply = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service="forge.v1.ForgeService"), timeout=5
        )
        stub = pb_grpc.ForgeServiceStub(channel)
        with pytest.raises(grpc.RpcError) as refused:
            stub.GetServerInfo(pb.GetServerInfoRequest(), timeout=5)
        info = stub.GetServerInfo(
            pb.GetServerInfoRequest(), metadata=(("authorization", f"Bearer {TOKEN}"),), timeout=5
        )
    assert reply.status == health_pb2.HealthCheckResponse.SERVING
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert (info.backend, info.backend_mode) == ("llama-server", "managed")
    assert info.model == "gemma-3-270m-q4_k_m.gguf"
    with urllib.request.urlopen(container.metrics_url, timeout=5) as response:
        metrics = response.read().decode()
    assert response.status == 200
    assert "forge_llama_device_info" in metrics


@pytest.mark.e2e
@pytest.mark.timeout(BUILD_TIMEOUT_S + START_TIMEOUT_S + 240)
async def test_the_weather_example_runs_against_the_container(container: Container) -> None:
    # The example's own workflow and tools; they run here, on the host, and
    # the model in the container asks for them over the stream.
    weather = load_weather_example()
    async with ForgeClient(container.grpc_address, token=TOKEN) as client:
        result = await client.run(weather.wf, "What's the weather in Paris?")
    assert result.terminal_tool == "report_weather"
    assert "Weather report for Paris" in str(result.value)
    assert result.usage.model_calls >= 2


@pytest.mark.e2e
@pytest.mark.timeout(BUILD_TIMEOUT_S + START_TIMEOUT_S)
def test_every_process_runs_as_the_unprivileged_user(container: Container) -> None:
    uid = podman("exec", container.name, "id", "-u")
    assert uid.stdout.strip() == "10001", uid.stderr
    top = podman("top", container.name, "user", "pid", "args")
    assert top.returncode == 0, top.stderr
    rows = [line.split(None, 2) for line in top.stdout.splitlines()[1:] if line.strip()]
    assert {user for user, _, _ in rows} == {"forge"}, top.stdout
    commands = {pid: args for _, pid, args in rows}
    assert commands["1"].startswith("tini"), top.stdout
    assert any("forge-server" in args for args in commands.values()), top.stdout
    assert any("llama-server" in args for args in commands.values()), top.stdout


@pytest.mark.e2e
@pytest.mark.timeout(BUILD_TIMEOUT_S + START_TIMEOUT_S + STOP_TIMEOUT_S)
def test_sigterm_stops_the_container_cleanly(container: Container) -> None:
    # Last in this module: it stops the shared container.
    killed = podman("kill", "--signal", "TERM", container.name)
    assert killed.returncode == 0, killed.stderr
    # `podman wait` prints the exit status; the timeout bounds the drain
    # (--shutdown-grace 10 s, then llama-server is stopped).
    waited = podman("wait", container.name, timeout=STOP_TIMEOUT_S)
    logs = podman("logs", container.name)
    assert waited.stdout.strip() == "0", logs.stderr[-4000:]
    assert "shutting down" in logs.stderr


@pytest.mark.e2e
@pytest.mark.timeout(BUILD_TIMEOUT_S + START_TIMEOUT_S + STOP_TIMEOUT_S)
def test_the_image_serves_on_a_read_only_root_without_privileges(image: str, tokens: Path) -> None:
    """As deploy/kubernetes runs it: read-only root, no capabilities, no
    privilege escalation, a writable /tmp for llama-server's slot files. The
    model was assembled at build time, so nothing else is written (no
    journal here; the manifests use PostgreSQL)."""
    lockdown = (
        "--read-only", "--tmpfs", "/tmp",
        "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
    )  # fmt: skip
    with running(image, tokens, lockdown, ["--journal", "none"]) as container:
        with grpc.insecure_channel(container.grpc_address) as channel:
            info = pb_grpc.ForgeServiceStub(channel).GetServerInfo(
                pb.GetServerInfoRequest(),
                metadata=(("authorization", f"Bearer {TOKEN}"),),
                timeout=5,
            )
        assert info.model == "gemma-3-270m-q4_k_m.gguf"
        podman("kill", "--signal", "TERM", container.name)
        waited = podman("wait", container.name, timeout=STOP_TIMEOUT_S)
        assert waited.stdout.strip() == "0", podman("logs", container.name).stderr[-4000:]
