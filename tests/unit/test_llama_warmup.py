"""Warm-up against a stand-in llama-server (issue 19, item 5): a small
Python HTTP server started as the binary, so the order of requests and a
failing warm-up can be seen; the real server's warm-up is tested in
tests/integration/test_llama_device_warmup.py.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path

import pytest

from forge_core.llama_host.process import WARM_UP_BATCHES, LlamaServerConfig, ManagedLlamaServer

FAKE = """#!{python}
import json, os, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
if "--list-devices" in sys.argv:
    print("Available devices:")
    print({devices!r}, end="")
    sys.exit(0)
port = int(sys.argv[sys.argv.index("--port") + 1])
journal = {journal!r}
with open(journal + ".env", "w") as f:
    json.dump({{k: v for k, v in os.environ.items() if "SHADER" in k}}, f)

class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status):
        with open(journal, "a") as f:
            f.write(self.command + " " + self.path + "\\n")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(json.dumps({{}}).encode())

    def do_GET(self):
        self.answer(200)

    def do_POST(self):
        self.answer({completion_status} if self.path == "/completion" else 200)

HTTPServer(("127.0.0.1", port), Handler).serve_forever()
"""


def fake_server(
    tmp_path: Path, completion_status: int, devices: str = ""
) -> tuple[LlamaServerConfig, Path]:
    journal = tmp_path / "requests.txt"
    binary = tmp_path / "llama-server"
    binary.write_text(
        FAKE.format(
            python=sys.executable,
            journal=str(journal),
            completion_status=completion_status,
            devices=devices,
        )
    )
    binary.chmod(0o755)
    model = tmp_path / "model.gguf"
    model.write_bytes(b"GGUF")
    config = LlamaServerConfig(model_path=model, binary=binary, startup_timeout_s=30)
    return config, journal


def seen_env(journal: Path) -> dict[str, str]:
    """The shader-cache variables the fake llama-server was started with."""
    seen: dict[str, str] = json.loads(journal.with_name(journal.name + ".env").read_text())
    return seen


async def test_warm_up_comes_after_health_and_before_start_returns(tmp_path: Path) -> None:
    config, journal = fake_server(tmp_path, 200)
    server = ManagedLlamaServer(config)
    await server.start()
    try:
        requests = journal.read_text().splitlines()
    finally:
        await server.stop()
    assert requests[-2:] == ["POST /completion", "POST /slots/0?action=erase"]
    assert requests.count("POST /completion") == 1
    assert requests[0] == "GET /health"
    assert server.warm_up_s is not None
    assert server.listed_devices == []
    assert server.device().device == "CPU"


async def test_a_failed_warm_up_is_logged_not_fatal(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    config, journal = fake_server(tmp_path, 500)
    server = ManagedLlamaServer(config)
    with caplog.at_level(logging.WARNING, logger="forge_core.llama_host.process"):
        await server.start()
    try:
        assert server.running
        await server.wait_ready(5)
    finally:
        await server.stop()
    assert "POST /completion" in journal.read_text().splitlines()
    assert server.warm_up_s is None
    assert any("warm-up failed" in r.getMessage() for r in caplog.records)


async def test_on_a_gpu_the_warm_up_also_evaluates_each_batch_size(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A listed Vulkan device (a sample line: CI has no GPU): the warm-up
    then evaluates prompts of every size in WARM_UP_BATCHES, before ready,
    and logs how long they took and which were slowest."""
    gpu = "  Vulkan0: NVIDIA H200 (143771 MiB, 143139 MiB free)\n"
    config, journal = fake_server(tmp_path, 200, devices=gpu)
    server = ManagedLlamaServer(config)
    with caplog.at_level(logging.INFO, logger="forge_core.llama_host.process"):
        await server.start()
    try:
        requests = journal.read_text().splitlines()
    finally:
        await server.stop()
    assert server.device().device.startswith("Vulkan0")
    assert requests.count("POST /completion") == 1 + len(WARM_UP_BATCHES)
    assert requests[-1] == "POST /slots/0?action=erase"
    lines = [r.getMessage() for r in caplog.records if "GPU warm-up" in r.getMessage()]
    assert len(lines) == 1 and f"{len(WARM_UP_BATCHES)} prompt sizes" in lines[0]
    assert lines[0].count(" tokens ") == 4, lines[0]


async def test_the_gpu_shader_cache_lives_under_forge_cache_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """llama-server starts with the drivers' shader caches under Forge's
    cache directory (a volume that outlives a container keeps the compiled
    Vulkan pipelines: 74.6 s to SERVING with an empty cache on an H200,
    9.4 s with a kept one, bench/RESULTS.md §29), the folders made."""
    for key in ("__GL_SHADER_DISK_CACHE_PATH", "MESA_SHADER_CACHE_DIR", "__GL_SHADER_DISK_CACHE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("FORGE_CACHE_DIR", str(tmp_path / "cache"))
    config, journal = fake_server(tmp_path, 200)
    server = ManagedLlamaServer(config)
    await server.start()
    await server.stop()
    env = seen_env(journal)
    nvidia = tmp_path / "cache" / "gpu-shaders" / "nvidia"
    assert env["__GL_SHADER_DISK_CACHE_PATH"] == str(nvidia) and nvidia.is_dir()
    assert env["__GL_SHADER_DISK_CACHE"] == "1"
    assert env["__GL_SHADER_DISK_CACHE_SKIP_CLEANUP"] == "1"
    assert env["MESA_SHADER_CACHE_DIR"] == str(tmp_path / "cache" / "gpu-shaders" / "mesa")


async def test_an_operators_shader_cache_settings_win(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    own = tmp_path / "own-shaders"
    monkeypatch.setenv("__GL_SHADER_DISK_CACHE_PATH", str(own))
    monkeypatch.setenv("__GL_SHADER_DISK_CACHE", "0")
    monkeypatch.setenv("FORGE_CACHE_DIR", str(tmp_path / "cache"))
    config, journal = fake_server(tmp_path, 200)
    server = ManagedLlamaServer(config)
    await server.start()
    await server.stop()
    env = seen_env(journal)
    assert env["__GL_SHADER_DISK_CACHE_PATH"] == str(own)
    assert env["__GL_SHADER_DISK_CACHE"] == "0"
    assert not (tmp_path / "cache" / "gpu-shaders" / "nvidia").exists()
