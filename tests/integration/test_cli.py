"""`forge-server` as users start it: a separate process, stopped by a signal."""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from pathlib import Path

import pytest

from forge_client import ForgeClient
from forge_core.llama_host.process import free_port
from tests.helpers import wait_for_server
from tests.integration.test_run_stream import weather_workflow


@pytest.mark.parametrize("event_loop", ["uvloop", "asyncio"])
async def test_scripted_server_process_serves_and_shuts_down_on_sigterm(
    tmp_path: Path, event_loop: str
) -> None:
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                "weather": [
                    {"tool_calls": [{"name": "get_weather", "args": {"city": "Oslo"}}]},
                    {
                        "tool_calls": [
                            {"name": "report_weather", "args": {"city": "Oslo", "weather": "cold"}}
                        ]
                    },
                ]
            }
        )
    )
    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "forge_server",
        "--backend", "scripted", "--script", str(script), "--port", str(port),
        "--event-loop", event_loop, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        await wait_for_server(f"127.0.0.1:{port}", 60)
        ran: list[str] = []
        async with ForgeClient(f"127.0.0.1:{port}") as client:
            info = await client.server_info()
            result = await client.run(weather_workflow(ran), "Weather in Oslo?")
        assert info.backend == "scripted"
        assert ran == ["get_weather:Oslo", "report_weather:Oslo"]
        assert result.value == {"city": "Oslo", "report": "cold"}
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = await asyncio.wait_for(proc.communicate(), 30)
    log = stderr.decode()
    assert proc.returncode == 0, log
    assert f"listening on 127.0.0.1:{port}" in log
    assert f"event_loop={event_loop}" in log
    assert "shutting down" in log


async def test_help_lists_backend_budget_and_slot_flags() -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "forge_server", "--help", stdout=asyncio.subprocess.PIPE
    )
    out, _ = await proc.communicate()
    text = out.decode()
    assert proc.returncode == 0
    for flag in ("--llama-url", "--model", "--llama-binary", "--budget-mode", "--slots", "--port"):
        assert flag in text
