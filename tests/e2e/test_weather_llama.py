"""The 2-step weather workflow against the real llama-server + 270M model.

The model is a base model with no tool template; the grammar constraint the
server builds from the workflow is what makes it produce valid calls.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

import pytest

from forge_client import ForgeClient, MessageType, RunOptions
from forge_core.llama_host.process import free_port
from forge_server.app import ForgeServer
from tests.helpers import address, wait_for_server
from tests.integration.test_run_stream import weather_workflow

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]


async def test_weather_workflow_completes_with_tools_run_in_the_client(
    llama_forge: ForgeServer,
) -> None:
    ran: list[str] = []
    async with ForgeClient(address(llama_forge)) as client:
        info = await client.server_info()
        result = await client.run(
            weather_workflow(ran),
            "What's the weather in Paris?",
            options=RunOptions(stream_chunks=True),
        )
    assert info.backend == "llama-server"
    assert info.model.endswith(".gguf")
    assert info.context_budget_tokens == 4096
    assert result.terminal_tool == "report_weather"
    assert ran[0] == "get_weather:Paris"
    assert ran[-1].startswith("report_weather:")
    assert result.value["city"] == "Paris"
    # Timings come from llama-server itself.
    assert result.usage.model_calls == result.iterations >= 2
    assert result.usage.prompt_tokens > 0 and result.usage.completion_tokens > 0
    calls = [m for m in result.transcript if m.type == MessageType.TOOL_CALL]
    assert calls[0].tool_calls[0].name == "get_weather"


async def test_python_example_runs_against_the_server(llama_forge: ForgeServer) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(ROOT / "examples/python/weather.py"),
        "--address", address(llama_forge),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 240)
    assert proc.returncode == 0, err.decode()
    assert "Weather report for Paris" in out.decode()


async def test_forge_server_default_starts_managed_llama_server(tmp_path: Path) -> None:
    """What `make run` does: no backend flags -> bundled binary + bundled model."""
    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "forge_server", "--port", str(port), "--slots", "1",
        "--ctx-size", "2048",
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        await wait_for_server(f"127.0.0.1:{port}", 240)
        async with ForgeClient(f"127.0.0.1:{port}") as client:
            info = await client.server_info()
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = await asyncio.wait_for(proc.communicate(), 60)
    log = stderr.decode()
    assert proc.returncode == 0, log
    assert (info.backend, info.backend_mode, info.slots) == ("llama-server", "managed", 1)
    assert info.context_budget_tokens == 2048
    assert info.model == "gemma-3-270m-q4_k_m.gguf"
    # The start-up log names the address, backend, model and budget.
    assert f"listening on 127.0.0.1:{port}" in log
    assert "context_budget=2048 tokens" in log
    assert "gemma-3-270m-q4_k_m.gguf" in log
