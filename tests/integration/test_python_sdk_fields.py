"""Fields the Go and TypeScript SDKs had and the Python SDK lacked (issue 17):
RunResult.run_id, ToolCallStarted.coercions, Compacted.messages_before/after.
The production server and the Python SDK; the model is a ScriptedBackend.
"""

from __future__ import annotations

import json

from forge.v1 import messages_pb2 as mpb
from forge_client import (
    Compacted,
    Event,
    ForgeClient,
    IterationUsage,
    Message,
    MessageAppended,
    MessageType,
    Role,
    RunStarted,
    ServerInfo,
    ToolCall,
    ToolCallStarted,
    Usage,
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


async def test_transcripts_usage_and_server_info_are_the_sdks_own_types() -> None:
    backend = ScriptedBackend(
        scripts={"count": [call("count", items=2), call("finish", summary="2")]}
    )
    events: list[Event] = []
    async with running_server(backend) as server, ForgeClient(address(server)) as client:
        info = await client.server_info()
        first = await client.run(counting_workflow(), "Count 2 items", on_event=events.append)
        # A transcript goes back as prior messages as it is; so does a
        # protobuf message (what earlier releases returned).
        legacy = mpb.Message(role=mpb.ROLE_USER, content="Earlier: hello")
        persisted = [m for m in first.transcript if not m.transient]
        second = await client.run(counting_workflow(), "Again", prior_messages=[legacy, *persisted])
    assert isinstance(info, ServerInfo) and info.backend == "scripted"
    assert isinstance(first.usage, Usage) and first.usage.model_calls == 2
    assert all(isinstance(u, IterationUsage) for u in first.usage.iterations)
    assert all(isinstance(m, Message) for m in first.transcript)
    appended = [e.message for e in events if isinstance(e, MessageAppended)]
    assert first.transcript == appended
    assert [m.type for m in first.transcript] == [
        MessageType.SYSTEM_PROMPT,
        MessageType.USER_INPUT,
        MessageType.TOOL_CALL,
        MessageType.TOOL_RESULT,
        MessageType.TOOL_CALL,
        MessageType.TOOL_RESULT,
    ]
    tool_call = first.transcript[2]
    assert tool_call.role == Role.ASSISTANT and tool_call.step_index == 1
    [count] = tool_call.tool_calls
    assert isinstance(count, ToolCall) and json.loads(count.arguments_json) == {"items": 2}
    # The terminal result is put back in its message (the server sends it once).
    assert (first.transcript[-1].role, first.transcript[-1].content) == (Role.TOOL, "2")
    # The contract's numbers still compare equal, for code written against
    # protobuf (mypy flags the comparison, which is the nudge to migrate).
    assert first.transcript[2].type == mpb.MESSAGE_TYPE_TOOL_CALL  # type: ignore[comparison-overlap]
    assert (second.transcript[1].role, second.transcript[1].content) == (
        Role.USER,
        "Earlier: hello",
    )
    assert second.transcript[2 : 2 + len(persisted)] == persisted
