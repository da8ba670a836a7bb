"""forge-eval end to end: two scenarios against the real llama-server +
Gemma 3 270M, through the session's Forge server and the Python SDK.

Asserts what the harness must get right whatever the model does (records,
model timings, the report), plus the one outcome the constrained 270M model
reliably reaches: it completes the 2-step workflow.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console

from forge_evals import cli, results
from forge_server.app import ForgeServer
from tests.helpers import address

pytestmark = pytest.mark.e2e


async def test_eval_two_scenarios_against_the_real_model(
    llama_forge: ForgeServer, tmp_path: Path
) -> None:
    out = tmp_path / "smoke.jsonl"
    argv = ["run", "--address", address(llama_forge), "--runs", "1", "--out", str(out)]
    argv += ["--scenarios", "basic_2step", "error_recovery", "--ablation", "all-on"]
    console = Console(record=True, width=200)
    code = await cli.run_command(cli.build_parser().parse_args(argv), console)
    assert code == 0, console.export_text()

    records = {r.scenario: r for r in results.load(out)}
    assert set(records) == {"basic_2step", "error_recovery"}
    for r in records.values():
        assert r.config["backend"] == "llama-server"
        assert r.config["tool_call_mode"] == "constrained"
        assert r.config_id.startswith("llama-server/gemma-3-270m")
        assert r.model_calls >= 1 and r.model_ms > 0 and r.prompt_tokens > 0
        assert r.elapsed_s > 0 and r.trace
        assert r.failure_reason in ("", "TOOL_CALL", "TOOL_EXECUTION", "MAX_ITERATIONS")

    weather = records["basic_2step"]
    assert weather.completed and weather.terminal_tool == "report_weather"
    assert weather.trace[0].startswith("get_weather(")
    # The step constraint only offers the failing lookup first: the injected
    # outage always happens.
    assert records["error_recovery"].tool_errors >= 1

    shown = console.export_text()
    assert "basic_2step" in shown and "error_recovery" in shown
    assert (tmp_path / "smoke.md").exists() and (tmp_path / "smoke.png").exists()
