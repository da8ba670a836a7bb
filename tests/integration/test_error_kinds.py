"""Error kinds that tell the truth (issue 36): what a failure is called
decides what the engine does next, so each kind is checked by its effect.

Real gRPC server on loopback, the Python SDK, the scripted backend.
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import grpc
import pytest

from forge.v1 import forge_service_pb2_grpc as pb_grpc
from forge_client import (
    ApprovalRequested,
    ForgeClient,
    GuardCalls,
    Message,
    Role,
    RunOptions,
    ToolCall,
    ToolExecutionError,
    Workflow,
)
from forge_client.errors import rejected_error as _rejected
from forge_core.backends.scripted import ScriptedBackend, call
from forge_core.llama_host.process import free_port
from tests.helpers import address, running_server, wait_for_server
from tests.integration.test_bad_input import start_request
from tests.integration.test_replicas import SCRIPT
from tests.integration.test_run_stream import cleanup_workflow, weather_workflow


def slow_first_workflow(asked: list[str], *, read_only: bool) -> Workflow:
    """`lookup` answers only after the server has given up on its first call."""
    wf = Workflow("slow_first", "Look something up and report it.")

    @wf.tool(read_only=read_only)
    async def lookup(q: str) -> str:
        """Look `q` up."""
        asked.append(q)
        if len(asked) == 1:
            await asyncio.sleep(30)  # cancelled when the server gives up
        return f"found {q}"

    @wf.tool(terminal=True)
    def report(text: str) -> str:
        """Report to the user."""
        return text

    return wf


SLOW_FIRST = [call("lookup", q="x"), call("report", text="done")]


async def test_a_read_only_tool_the_server_gave_up_on_is_tried_once_more() -> None:
    """A server-side timeout says nothing about whether the tool ran: it is
    UNREACHABLE, so a read-only tool is called again (under its own id)
    instead of the model being told the tool failed."""
    backend = ScriptedBackend(scripts={"slow_first": SLOW_FIRST})
    asked: list[str] = []
    async with running_server(backend) as server, ForgeClient(address(server)) as client:
        result = await client.run(
            slow_first_workflow(asked, read_only=True),
            "Look up x.",
            options=RunOptions(tool_timeout_s=0.3),
        )
    assert asked == ["x", "x"]
    (answer,) = [m for m in result.transcript if m.role == Role.TOOL and m.tool_name == "lookup"]
    assert answer.content == "found x"


async def test_a_tool_with_effects_the_server_gave_up_on_has_an_unknown_outcome() -> None:
    backend = ScriptedBackend(scripts={"slow_first": SLOW_FIRST})
    asked: list[str] = []
    async with running_server(backend) as server, ForgeClient(address(server)) as client:
        result = await client.run(
            slow_first_workflow(asked, read_only=False),
            "Look up x.",
            options=RunOptions(tool_timeout_s=0.3),
        )
    assert asked == ["x"]
    (answer,) = [m for m in result.transcript if m.role == Role.TOOL and m.tool_name == "lookup"]
    assert "within 0.3s" in answer.content
    assert "[Unknown outcome]" in answer.content


USER = Message(Role.USER, "Weather in Paris?")


@pytest.mark.parametrize("resolution", [True, False])
async def test_guard_keeps_a_resolution_error_uncounted(resolution: bool) -> None:
    """With no tool errors allowed, a hard error ends the guarded run; a
    lookup that found nothing (RESOLUTION) is fed back, as in a Run."""
    wf = weather_workflow([])
    options = RunOptions(max_tool_errors=0)
    async with running_server(ScriptedBackend()) as server, ForgeClient(address(server)) as client:
        first = await client.guard(
            wf, [USER], reply_tool_calls=[ToolCall("a", "get_weather", '{"city": "Paris"}')]
        )
        assert isinstance(first, GuardCalls)
        failed = first.calls[0].result_message(error="no city 'Paris'", resolution=resolution)
        history = [USER, first.message, failed]
        if not resolution:
            with pytest.raises(ToolExecutionError):
                await client.guard(
                    wf,
                    history,
                    options=options,
                    reply_tool_calls=[ToolCall("b", "get_weather", '{"city": "Lyon"}')],
                )
            return
        again = await client.guard(
            wf,
            history,
            options=options,
            reply_tool_calls=[ToolCall("b", "get_weather", '{"city": "Lyon"}')],
        )
    assert isinstance(again, GuardCalls)
    assert [c.tool_name for c in again.calls] == ["get_weather"]


DENIED_AGAIN_AND_AGAIN = [call("delete_logs", service=f"billing-{i}") for i in range(30)]


async def test_a_repeated_denial_ends_the_run_with_a_typed_error() -> None:
    """A denial is fed back, not counted as a tool error: a model that asks
    for the denied tool again, each time with other arguments (the same call
    repeated is caught as a repeat already), would ask until max_iterations."""
    backend = ScriptedBackend(scripts={"cleanup": DENIED_AGAIN_AND_AGAIN})
    asked: list[str] = []

    async def deny(request: ApprovalRequested) -> bool:
        asked.append(request.tool_name)
        return False

    ran: list[str] = []
    async with running_server(backend) as server, ForgeClient(address(server)) as client:
        with pytest.raises(ToolExecutionError) as failed:
            await client.run(
                cleanup_workflow(ran),
                "Delete the billing logs.",
                options=RunOptions(approve_destructive_calls=True, max_iterations=25),
                approve=deny,
            )
    assert ran == []
    assert asked == ["delete_logs", "delete_logs"]
    assert failed.value.details["tool_name"] == "delete_logs"
    assert failed.value.details["denied"] == "True"
    assert "did not approve 'delete_logs'" in failed.value.message
    assert failed.value.iterations == 2


async def test_the_scripted_backend_forgets_a_run_when_it_ends() -> None:
    backend = ScriptedBackend(
        scripts={
            "weather": [
                call("get_weather", city="Paris"),
                call("report_weather", city="Paris", weather="sunny"),
            ],
            "cleanup": DENIED_AGAIN_AND_AGAIN,
        }
    )

    async def deny(request: ApprovalRequested) -> bool:
        return False

    async with running_server(backend) as server, ForgeClient(address(server)) as client:
        for _ in range(3):
            result = await client.run(weather_workflow([]), "Weather in Paris?")
            assert result.terminal_tool == "report_weather"
        # A run that fails ends too.
        with pytest.raises(ToolExecutionError):
            await client.run(
                cleanup_workflow([]),
                "Delete the billing logs.",
                options=RunOptions(approve_destructive_calls=True),
                approve=deny,
            )
    assert backend.runs_tracked == 0


async def refusal(stub: Any) -> tuple[grpc.StatusCode, str]:
    """Open a stream, write a start, read to the end: the status it failed
    with and the reason the SDK reads in it (from the write or a read)."""
    run = stub.Run()
    try:
        await run.write(start_request())
        while (await asyncio.wait_for(run.read(), 30)) is not grpc.aio.EOF:
            pass
    except grpc.aio.AioRpcError as err:
        parsed = _rejected(err.code(), err.details() or "", err.trailing_metadata())
        return err.code(), parsed.reason
    raise AssertionError("the stream was not refused")


@pytest.mark.timeout(120)
async def test_a_stream_over_the_limit_is_refused_as_server_busy_every_time(
    tmp_path: Path,
) -> None:
    """Every client that writes its start past --max-active-runs sees
    RESOURCE_EXHAUSTED SERVER_BUSY: the server refuses once it has read the
    start, so the refusal never races with the client's write. Refused
    before it, 35 of these 200 streams got INTERNAL ("Internal error from
    Core") here, as the drain refusal did before 9f44bc3. The server runs
    as a process of its own: sharing the test's event loop, the race never
    shows."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "forge_server",
        "--backend", "scripted", "--script", str(script), "--port", str(port),
        "--journal", "none", "--max-active-runs", "2", "--start-timeout", "60",
        stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    try:
        await wait_for_server(f"127.0.0.1:{port}", 60)
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub: Any = pb_grpc.ForgeServiceStub(channel)
            # Two streams that never send their start hold the limit.
            idle = [stub.Run(), stub.Run()]
            for stream in idle:
                await stream.wait_for_connection()
            refused: list[tuple[grpc.StatusCode, str]] = []
            for _ in range(10):
                refused += await asyncio.gather(*(refusal(stub) for _ in range(20)))
            for stream in idle:
                stream.cancel()
    finally:
        proc.kill()
        await proc.wait()
    assert set(refused) == {(grpc.StatusCode.RESOURCE_EXHAUSTED, "SERVER_BUSY")}
