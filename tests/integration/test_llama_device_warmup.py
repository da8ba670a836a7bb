"""Device awareness and warm-up with the real bundled llama-server (issue 19,
items 3 and 5).

This machine has no GPU: the bundled Vulkan build lists no device, so every
real report here is "CPU". NVML is replaced by a fake where a GPU must be
seen; the GPU listing's parsing is tested in tests/unit/test_llama_devices.py.
"""

from __future__ import annotations

import asyncio
import logging
import subprocess
import sys
from dataclasses import replace

import grpc
import httpx
import pytest

from forge.v1 import forge_service_pb2 as pb
from forge.v1 import forge_service_pb2_grpc as pb_grpc
from forge_core.llama_host.devices import CPU, UNKNOWN, list_devices, parse_device_list
from forge_core.llama_host.hardware import GIB, Gpu
from forge_core.llama_host.install import bundled_binary, bundled_model, launch_env
from forge_core.llama_host.process import LlamaServerConfig, ManagedLlamaServer
from forge_server.app import ServerOptions
from forge_server.backend import BackendConfig, llama_device, open_backend
from tests.helpers import address, running_server
from tests.integration.test_metrics import scrape


def small_config(**overrides: object) -> LlamaServerConfig:
    config = LlamaServerConfig(
        model_path=bundled_model(), binary=bundled_binary(), ctx_size=1024, slots=1, threads=1
    )
    return replace(config, **overrides)  # type: ignore[arg-type]


async def test_real_list_devices_output_of_the_bundled_binary_means_cpu() -> None:
    binary = bundled_binary()
    out = await asyncio.to_thread(
        subprocess.run,
        [str(binary), "--list-devices"],
        env=launch_env(binary),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    text = out.stdout + out.stderr
    assert "Available devices:" in text
    assert parse_device_list(text) == []
    assert await list_devices(binary, launch_env(binary)) == []
    server = ManagedLlamaServer(small_config())
    server.listed_devices = await list_devices(binary, launch_env(binary))
    assert server.device().device == CPU


async def llama_counters(url: str) -> dict[str, float]:
    async with httpx.AsyncClient(base_url=url) as http:
        resp = await http.get("/metrics")
    resp.raise_for_status()
    counters = {}
    for line in resp.text.splitlines():
        if line.startswith("llamacpp:"):
            name, value = line.split()
            counters[name] = float(value)
    return counters


async def test_a_managed_server_is_warmed_up_before_it_counts_as_ready(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """llama-server's own counters, read the moment start() returns, show the
    warm-up's decode; a server started without warm-up shows none (the
    control that proves the counters would tell)."""
    counts = {}
    for warm in (True, False):
        server = ManagedLlamaServer(small_config(extra_args=["--metrics"], warm_up=warm))
        with caplog.at_level(logging.INFO, logger="forge_core.llama_host.process"):
            await server.start()
        try:
            counts[warm] = await llama_counters(server.url)
            if warm:
                # The slot was erased: a prompt starting like the warm-up's reuses nothing.
                async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
                    resp = await http.post(
                        "/completion",
                        json={"prompt": "Hello there", "n_predict": 1, "cache_prompt": True},
                    )
                assert resp.json()["timings"]["cache_n"] == 0
        finally:
            await server.stop()
    assert counts[True]["llamacpp:n_decode_total"] >= 1
    assert counts[True]["llamacpp:tokens_predicted_total"] >= 1
    assert counts[False]["llamacpp:n_decode_total"] == 0
    took = [r.getMessage() for r in caplog.records if "warm-up took" in r.getMessage()]
    assert len(took) == 1


async def test_server_info_and_metrics_report_the_device_and_warn_about_an_unused_gpu(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A real managed llama-server (CPU) behind the real loopback gRPC server;
    NVML is a fake that sees an H100 (no GPU in CI), so the mismatch warning
    must be logged, once. An external server on the same llama-server reports
    "unknown": /props does not name the device."""
    monkeypatch.setattr(
        "forge_core.llama_host.devices.detect_gpus",
        lambda: ([Gpu("NVIDIA H100 80GB HBM3", 80 * GIB, 78 * GIB)], ""),
    )
    config = BackendConfig(ctx_size=1024, slots=1, threads=1)
    with caplog.at_level(logging.WARNING):
        async with open_backend(config) as backend:
            options = ServerOptions(host="127.0.0.1", port=0, metrics_port=0)
            async with running_server(backend, options) as server:
                async with grpc.aio.insecure_channel(address(server)) as channel:
                    info = await pb_grpc.ForgeServiceStub(channel).GetServerInfo(
                        pb.GetServerInfoRequest()
                    )
                metrics = await scrape(server)
            async with open_backend(replace(config, llama_url=backend.info().url)) as ext:
                external = llama_device(ext)
    assert info.llama_device == CPU
    assert list(info.llama_devices) == []
    assert metrics[("forge_llama_device_info", (("device", CPU),))] == 1
    assert external is not None and external.device == UNKNOWN
    warnings = [r.getMessage() for r in caplog.records if "NVML sees" in r.getMessage()]
    assert len(warnings) == 1
    assert "libvulkan1" in warnings[0]


async def run_check(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "forge_server", "--check", "--ctx-size", "1024", "--slots", "1",
        "--threads", "1", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 240)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_check_prints_the_cpu_device_and_exits_0_with_the_bundled_model() -> None:
    code, out, err = await run_check()
    assert code == 0, err
    lines = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
    assert lines["backend"].startswith("llama-server (managed)")
    assert lines["device"].startswith("CPU")
    assert lines["model"] == bundled_model().name
    assert lines["context (n_ctx)"].startswith("1024 per slot")
    assert lines["budget"].startswith("1024 tokens")
    assert lines["slots"] == "1"
    assert "warm-up took" in err


async def test_check_fails_with_a_clear_message_on_a_bad_model_or_url() -> None:
    code, out, err = await run_check("--model", "/nonexistent/model.gguf")
    assert code != 0
    assert "/nonexistent/model.gguf does not exist" in err
    assert "device:" not in out
    code, out, err = await run_check("--llama-url", "http://127.0.0.1:9")
    assert code != 0
    assert "cannot read http://127.0.0.1:9/props" in err
