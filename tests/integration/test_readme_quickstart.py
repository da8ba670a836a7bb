"""The README's Python quick start, as a reader pastes it, against a real Forge
server on loopback (scripted backend: the model's turns are fixed so the
outcome is too). The README promises that this code runs; the weather
examples have their own test (test_examples.py), this one keeps the shorter
copy in the README honest.
"""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

from forge_core.backends.scripted import ScriptedBackend, call
from tests.helpers import address, running_server

ROOT = Path(__file__).resolve().parents[2]


def readme_block(section: str, language: str) -> str:
    """The first ```language block under the README heading `section`."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index(f"\n## {section}\n")
    match = re.compile(rf"^```{language}\n(.*?)^```$", re.DOTALL | re.MULTILINE).search(
        readme, start
    )
    assert match is not None, f"no {language} block under '## {section}'"
    return match.group(1)


async def test_the_python_quick_start_runs_as_written(tmp_path: Path) -> None:
    code = readme_block("Python quick start", "python")
    assert '"127.0.0.1:50051"' in code  # the address `make run` serves
    backend = ScriptedBackend(
        scripts={
            "weather": [
                call("get_weather", city="Paris"),
                call("report_weather", city="Paris", weather="72°F and sunny in Paris"),
            ]
        }
    )
    async with running_server(backend) as server:
        script = tmp_path / "quick_start.py"
        script.write_text(code.replace("127.0.0.1:50051", address(server)), encoding="utf-8")
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            str(script),
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, err.decode()
    lines = out.decode().splitlines()
    # on_event=print shows the events; the last line is result.value.
    assert any("ToolCallStarted" in line and "get_weather" in line for line in lines), lines
    assert lines[-1] == "Weather report for Paris: 72°F and sunny in Paris"
