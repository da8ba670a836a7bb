"""Long-running client tools: keepalive pings and server-side give-ups."""

from __future__ import annotations

import asyncio

from forge_client import Event, ForgeClient, RunOptions, ToolCallCancelled, Workflow
from forge_core.backends.scripted import ScriptedBackend, call
from tests.helpers import address, running_server


async def test_a_tool_outlasting_several_keepalive_pings_does_not_kill_the_run() -> None:
    """gRPC's default server policy answers pings more often than every 5 min
    (without data flowing) with GOAWAY too_many_pings; the SDK pings every
    keepalive_s while a slow tool runs, so the server must accept that."""
    backend = ScriptedBackend(scripts={"slow": [call("crunch", n=1)]})
    wf = Workflow("slow")

    @wf.tool(terminal=True)
    async def crunch(n: int) -> str:
        """A slow computation."""
        await asyncio.sleep(16)
        return "done"

    async with (
        running_server(backend) as server,
        ForgeClient(address(server), keepalive_s=5) as client,
    ):
        result = await client.run(wf, "go")
    assert result.value == "done"


async def test_server_give_up_on_a_call_stops_the_tool_in_the_client() -> None:
    backend = ScriptedBackend(
        scripts={"timeout": [call("wait", n=1), call("wait", n=2), call("finish", x="ok")]}
    )
    wf = Workflow("timeout")
    stopped: list[int] = []

    @wf.tool(required=True)
    async def wait(n: int) -> str:
        """Waits."""
        if n == 2:
            return "quick"
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            stopped.append(n)
            raise
        return "slow"

    @wf.tool(terminal=True)
    def finish(x: str) -> str:
        """Finish."""
        return x

    events: list[Event] = []
    async with running_server(backend) as server, ForgeClient(address(server)) as client:
        result = await client.run(
            wf, "go", options=RunOptions(tool_timeout_s=0.3), on_event=events.append
        )
    assert result.value == "ok"
    assert stopped == [1]
    cancelled = [e for e in events if isinstance(e, ToolCallCancelled)]
    assert [c.call_id for c in cancelled] == ["call_1"]
    assert "0.3s" in cancelled[0].reason
