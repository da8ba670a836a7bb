"""Fields the Go and TypeScript SDKs had and the Python SDK lacked (issue 17):
RunResult.run_id, ToolCallStarted.coercions, Compacted.messages_before/after.
The production server and the Python SDK; the model is a ScriptedBackend.
"""

from __future__ import annotations

import json

from forge_client import (
    Compacted,
    Event,
    ForgeClient,
    RunStarted,
    ToolCallStarted,
    Workflow,
)
from forge_core.backends.scripted import ScriptedBackend, call
from tests.helpers import address, running_server


def counting_workflow(output: str = "ok") -> Workflow:
    wf = Workflow("count", "Count things, then finish.")

    @wf.tool(required=True)
    def count(items: int) -> str:
        """Count items."""
        return output

    @wf.tool(terminal=True)
    def finish(summary: str) -> str:
        """Finish."""
        return summary

    return wf


async def test_run_id_and_coercions_reach_the_python_sdk() -> None:
    backend = ScriptedBackend(
        scripts={"count": [call("count", items="3"), call("finish", summary="done")]}
    )
    events: list[Event] = []
    async with running_server(backend) as server, ForgeClient(address(server)) as client:
        result = await client.run(counting_workflow(), "Count 3 items", on_event=events.append)
    [started] = [e for e in events if isinstance(e, RunStarted)]
    assert len(result.run_id) == 32 and result.run_id == started.run_id
    [counted] = [e for e in events if isinstance(e, ToolCallStarted) and e.tool_name == "count"]
    assert counted.arguments == {"items": 3}
    [coercion] = counted.coercions
    assert coercion.path == "/items"
    assert (json.loads(coercion.original_json), json.loads(coercion.coerced_json)) == ("3", 3)


async def test_compacted_events_carry_message_counts() -> None:
    turns = [call("count", items=n) for n in range(1, 9)] + [call("finish", summary="done")]
    backend = ScriptedBackend(scripts={"count": turns}, context_budget_tokens=1500)
    events: list[Event] = []
    async with running_server(backend) as server, ForgeClient(address(server)) as client:
        await client.run(
            counting_workflow("x " * 300), "Count in eight steps", on_event=events.append
        )
    compacted = [e for e in events if isinstance(e, Compacted)]
    assert compacted, "the run was never compacted: the test exercises nothing"
    for event in compacted:
        assert event.messages_before > event.messages_after > 0
