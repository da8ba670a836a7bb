"""The weather examples as a first user runs them, in Python, Go and
TypeScript, against a real `forge-server` process (scripted backend) that
requires a bearer token.

The script makes the model answer in text, then call the terminal tool too
early, before it does it right: each refused attempt must be shown as what
it was (no empty `!! correction:` line). Without a token the example prints
the refusal as one line naming UNAUTHENTICATED once, not a stack trace; the
token works from `--token` and, through each SDK, from $FORGE_TOKEN.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from forge_core.llama_host.process import free_port
from tests.helpers import wait_for_server

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "s3cret-example"
SCRIPT = {
    "weather": [
        {"text": "I think it is sunny."},
        {"tool_calls": [{"name": "report_weather", "args": {"city": "Paris", "weather": "x"}}]},
        {"tool_calls": [{"name": "get_weather", "args": {"city": "Paris"}}]},
        {
            "tool_calls": [
                {"name": "report_weather", "args": {"city": "Paris", "weather": "72F sunny"}}
            ]
        },
    ]
}


@pytest.fixture(scope="module")
async def server(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[str]:
    tmp = tmp_path_factory.mktemp("examples")
    (tmp / "script.json").write_text(json.dumps(SCRIPT))
    (tmp / "tokens").write_text(f"{TOKEN} name=examples\n")
    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "forge_server", "--backend", "scripted",
        "--script", str(tmp / "script.json"), "--port", str(port),
        "--auth-token-file", str(tmp / "tokens"), "--journal", "none",
        stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    try:
        await wait_for_server(f"127.0.0.1:{port}", 60)
        yield f"127.0.0.1:{port}"
    finally:
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), 30)


async def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 300)
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def _env(token: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "FORGE_TOKEN"}
    if token is not None:
        env["FORGE_TOKEN"] = token
    return env


async def _example(tmp: Path, language: str) -> tuple[list[str], Path]:
    """The command that runs the weather example, built once if it needs it."""
    if language == "python":
        return [sys.executable, str(ROOT / "examples/python/weather.py")], ROOT
    if language == "go":
        go = shutil.which("go")
        if go is None:
            pytest.skip("go is not installed (make install-go)")
        binary = tmp / "weather"
        rc, out, err = await _run(
            [go, "build", "-o", str(binary), "./weather"], ROOT / "examples/go", _env(None)
        )
        assert rc == 0, out + err
        return [str(binary)], ROOT
    npm = shutil.which("npm")
    sdk = ROOT / "clients/typescript"
    if npm is None or not (sdk / "node_modules").is_dir():
        pytest.skip("node/npm or the TypeScript SDK's node_modules are missing (make install)")
    # What the README tells a user to run; builds what is stale first.
    return [npm, "run", "--silent", "example", "--"], sdk


@pytest.mark.parametrize("language", ["python", "go", "typescript"])
async def test_the_weather_example_shows_refusals_and_takes_a_token(
    server: str, language: str, tmp_path: Path
) -> None:
    argv, cwd = await _example(tmp_path, language)
    argv = [*argv, "--address", server]

    rc, out, err = await _run(argv, cwd, _env(None))
    assert rc == 1, out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].upper().count("UNAUTHENTICATED") == 1, lines[0]
    assert "bearer token" in lines[0]

    rc, out, err = await _run(argv, cwd, _env(TOKEN))
    assert rc == 0, out + err
    assert "Weather report for Paris: 72F sunny" in out
    shown = [line.strip() for line in out.splitlines() if line.strip().startswith("!!")]
    assert shown[0] == "!! refused answer: I think it is sunny."
    assert shown[1].startswith("!! correction: Your last answer was not a tool call.")
    assert shown[2].startswith("!! refused call: report_weather(")
    assert '"weather":"x"' in shown[2].replace(" ", "")
    assert shown[3].startswith("!! correction: [StepEnforcementError]")
    assert all(line.split(":", 1)[1].strip() for line in shown), shown

    rc, out, err = await _run([*argv, "--token", TOKEN], cwd, _env("wrong"))
    assert rc == 0, out + err
    assert "Weather report for Paris" in out
