"""`forge-server --backend A,B`: a fallback chain opened from the command line
flags, served over a real gRPC loopback server, driven by the Python SDK.

The failing backend is a real HTTP server on loopback (tests/stub_openai.py)
answering 503 and 429 before it serves; the other member is a scripted model
or a second stub.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from forge_client import Event, ForgeClient, RunStarted, Workflow
from forge_server.backend import ChainMember, open_backend, parse_chain
from forge_server.cli import backend_config
from tests.helpers import address, running_server
from tests.stub_openai import OK, stub_openai


def steps_workflow() -> Workflow:
    wf = Workflow("steps", "Do step a, then step b, then finish.")

    @wf.tool(required=True)
    def step_a() -> str:
        """Step a."""
        return "a done"

    @wf.tool(required=True, prerequisites=["step_a"])
    def step_b() -> str:
        """Step b."""
        return "b done"

    @wf.tool(terminal=True)
    def finish(summary: str) -> str:
        """Finish with a summary."""
        return summary

    return wf


def finish_when_offered(names: list[str]) -> tuple[str, dict[str, Any]]:
    return ("finish", {"summary": "done"}) if "finish" in names else (names[0], {})


async def test_503_then_429_fall_back_and_the_caller_sees_who_served(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {"steps": [{"tool_calls": [{"name": "step_a"}]}, {"tool_calls": [{"name": "step_b"}]}]}
        )
    )
    events: list[Event] = []
    with stub_openai([503, 429, OK], finish_when_offered) as stub:
        config = backend_config(
            [
                f"--backend=openai[url={stub.url} model=stub-model],scripted",
                f"--script={script}",
                "--budget-tokens=4096",
            ]
        )
        async with (
            open_backend(config) as backend,
            running_server(backend) as server,
            ForgeClient(address(server)) as client,
        ):
            result = await client.run(steps_workflow(), "Go", on_event=events.append)
            info = await client.server_info()
    [started] = [e for e in events if isinstance(e, RunStarted)]
    assert (started.backend, started.backend_chain) == ("openai", ("openai", "scripted"))
    assert result.terminal_tool == "finish"
    # Each model call names the backend that answered it.
    assert [i.backend for i in result.usage.iterations] == ["scripted", "scripted", "openai"]
    assert len(stub.requests) == 3
    remote, scripted = info.backends
    assert (remote.name, remote.url, remote.model) == ("openai", stub.url, "stub-model")
    assert (remote.calls, remote.failures, remote.consecutive_failures) == (3, 2, 0)
    assert remote.available and "429" in remote.last_error
    assert (scripted.name, scripted.calls, scripted.failures) == ("scripted", 2, 0)


async def test_a_failing_backend_cools_down_and_get_server_info_says_so() -> None:
    with stub_openai([503]) as down, stub_openai([OK], finish_when_offered) as up:
        config = backend_config(
            [
                f"--backend=openai[url={down.url}],openai[url={up.url}]",
                "--model-name=stub-model",
                "--budget-tokens=4096",
                "--fallback-failures=2",
                "--fallback-cooldown=60",
            ]
        )
        async with (
            open_backend(config) as backend,
            running_server(backend) as server,
            ForgeClient(address(server)) as client,
        ):
            wf = Workflow("finish", "Finish.")

            @wf.tool(terminal=True)
            def finish(summary: str) -> str:
                """Finish with a summary."""
                return summary

            for _ in range(3):
                result = await client.run(wf, "Go")
                assert [i.backend for i in result.usage.iterations] == ["openai"]
            info = await client.server_info()
    # Two failures in a row, then skipped for the third run.
    assert (len(down.requests), len(up.requests)) == (2, 3)
    first, second = info.backends
    assert (first.url, second.url) == (down.url, up.url)
    assert not first.available and 0 < first.cooldown_remaining_s <= 60
    assert (first.consecutive_failures, first.calls, first.failures) == (2, 2, 2)
    assert second.available and (second.calls, second.failures) == (3, 0)


async def test_a_single_backend_is_one_entry_and_no_chain(tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps({"*": [{"tool_calls": [{"name": "finish", "args": {"summary": "x"}}]}]})
    )
    events: list[Event] = []
    config = backend_config(["--backend=scripted", f"--script={script}"])
    async with (
        open_backend(config) as backend,
        running_server(backend) as server,
        ForgeClient(address(server)) as client,
    ):
        wf = Workflow("one", "Finish.")

        @wf.tool(terminal=True)
        def finish(summary: str) -> str:
            """Finish."""
            return summary

        result = await client.run(wf, "Go", on_event=events.append)
        info = await client.server_info()
    [started] = [e for e in events if isinstance(e, RunStarted)]
    assert started.backend_chain == ()
    assert [i.backend for i in result.usage.iterations] == [""]
    [only] = info.backends
    assert (only.name, only.available, only.calls) == ("scripted", True, 0)


def test_chain_syntax() -> None:
    assert parse_chain(
        "llama-server, openai[url=http://gpu:8000/v1?a=1,b=2 model=q key-env=K]"
    ) == [
        ChainMember("llama-server"),
        ChainMember(
            "openai",
            (("base_url", "http://gpu:8000/v1?a=1,b=2"), ("model_name", "q"), ("api_key_env", "K")),
        ),
    ]
    for bad in ("llama-server,nope", "openai[port=1]", "openai[url]", ""):
        with pytest.raises(ValueError):
            parse_chain(bad)
    with pytest.raises(SystemExit):
        backend_config(["--backend=llama-server,vllm"])
