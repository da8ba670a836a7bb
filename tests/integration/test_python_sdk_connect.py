"""The Python SDK and a server it cannot reach: one warning, then a clear
error naming the address after `connect_timeout_s`, not 30 s of silent
retries. Real servers on loopback; the unreachable one is a free port with
nothing listening."""

from __future__ import annotations

import asyncio
import logging

import pytest

from forge_client import (
    ConnectionLostError,
    Event,
    ForgeClient,
    RunCompleted,
    ServerUnreachableError,
    ToolCallContext,
    Workflow,
    current_tool_call,
)
from forge_core.backends.scripted import ScriptedBackend
from forge_core.llama_host.process import free_port
from forge_server.app import ServerOptions
from tests.helpers import address, running_server
from tests.integration.test_run_stream import WEATHER_SCRIPT, weather_workflow

# Bounds the tests' waits only (the old SDK tried for 30 s).
HANG_S = 25


async def test_a_run_against_no_server_fails_naming_the_address(
    caplog: pytest.LogCaptureFixture,
) -> None:
    address = f"127.0.0.1:{free_port()}"
    caplog.set_level(logging.WARNING, logger="forge_client")
    async with ForgeClient(address, connect_timeout_s=1.0) as client:
        with pytest.raises(ServerUnreachableError) as failed:
            await asyncio.wait_for(client.run(weather_workflow([]), "Weather?"), HANG_S)
        # A second run on the same client: no second warning.
        with pytest.raises(ServerUnreachableError):
            await asyncio.wait_for(client.run(weather_workflow([]), "Weather?"), HANG_S)
    assert f"no Forge server answered at {address} within 1s" in str(failed.value)
    assert isinstance(failed.value, ConnectionLostError)  # what callers catch already
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    assert address in warnings[0].getMessage()


async def test_a_server_that_starts_within_the_timeout_is_reached() -> None:
    port = free_port()
    backend = ScriptedBackend(scripts={"weather": WEATHER_SCRIPT})
    async with ForgeClient(f"127.0.0.1:{port}", connect_timeout_s=20.0) as client:
        run = asyncio.ensure_future(client.run(weather_workflow([]), "Weather in Paris?"))
        await asyncio.sleep(1.0)  # the client is retrying by now
        assert not run.done()
        async with running_server(backend, ServerOptions(host="127.0.0.1", port=port)):
            result = await asyncio.wait_for(run, HANG_S)
    assert result.terminal_tool == "report_weather"


async def test_a_server_that_answered_once_is_a_restart_not_unreachable() -> None:
    """Once the server has answered, a run that cannot reach it is a break
    (a restart, a failover) with the reattach deadline, not 'unreachable'."""
    port = free_port()
    backend = ScriptedBackend(scripts={"weather": WEATHER_SCRIPT})
    async with ForgeClient(
        f"127.0.0.1:{port}", connect_timeout_s=1.0, reattach_deadline_s=2.0
    ) as client:
        async with running_server(backend, ServerOptions(host="127.0.0.1", port=port)):
            await client.run(weather_workflow([]), "Weather in Paris?")
        with pytest.raises(ConnectionLostError) as failed:
            await asyncio.wait_for(client.run(weather_workflow([]), "Weather?"), HANG_S)
    assert not isinstance(failed.value, ServerUnreachableError)


async def test_wait_for_ready_waits_for_a_server_that_starts_later() -> None:
    """wait_for_ready (gRPC's wait_for_ready, as Go's WithWaitForServer and
    TypeScript's waitForReady): the call waits for the server to come up
    instead of failing at once, then returns its ServerInfo."""
    port = free_port()
    backend = ScriptedBackend(scripts={"weather": WEATHER_SCRIPT})
    async with ForgeClient(f"127.0.0.1:{port}") as client:
        ready = asyncio.ensure_future(client.wait_for_ready(timeout_s=HANG_S))
        await asyncio.sleep(1.0)  # nothing listens yet: still waiting, not failed
        assert not ready.done()
        async with running_server(backend, ServerOptions(host="127.0.0.1", port=port)):
            info = await asyncio.wait_for(ready, HANG_S)
    assert info.backend


async def test_wait_for_ready_names_the_address_when_no_server_comes() -> None:
    address = f"127.0.0.1:{free_port()}"
    async with ForgeClient(address) as client:
        with pytest.raises(ServerUnreachableError) as failed:
            await asyncio.wait_for(client.wait_for_ready(timeout_s=0.5), HANG_S)
    assert f"no Forge server answered at {address} within 0.5s" in str(failed.value)


async def test_a_synchronous_tool_reads_its_call_and_the_run_ends_with_run_completed() -> None:
    """current_tool_call() in a sync tool (run in a worker thread: the
    context travels with it), None outside a call; RunCompleted is the last
    event and carries the run's result."""
    backend = ScriptedBackend(scripts={"weather": WEATHER_SCRIPT})
    seen: list[ToolCallContext | None] = []
    wf = Workflow("weather", "Look up weather and report it.")

    @wf.tool(required=True)
    def get_weather(city: str) -> str:
        """Get current weather for a city."""
        seen.append(current_tool_call())
        return f"72F and sunny in {city}"

    @wf.tool(terminal=True)
    def report_weather(city: str, weather: str) -> str:
        """Report the weather."""
        seen.append(current_tool_call())
        return weather

    events: list[Event] = []
    async with running_server(backend) as server, ForgeClient(address(server)) as client:
        result = await client.run(wf, "Weather in Paris?", on_event=events.append)
    assert [(c.call_id, c.tool_name, c.run_id) for c in seen if c is not None] == [
        ("call_1", "get_weather", result.run_id),
        ("call_2", "report_weather", result.run_id),
    ]
    assert current_tool_call() is None
    assert isinstance(events[-1], RunCompleted) and events[-1].result is result
