"""Runs every conformance case (tests/conformance/cases/*.json) with the Python SDK
against the real `forge-server` process, started with the scripted backend on
the case directory. The Go and TypeScript SDKs run the same files.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from forge_client import (
    Approval,
    ApprovalDecided,
    ApprovalRequested,
    Chunk,
    Compacted,
    Event,
    ForgeClient,
    ForgeError,
    Message,
    MessageAppended,
    MessageType,
    Queued,
    Role,
    RunCompleted,
    RunFailedError,
    RunOptions,
    RunStarted,
    ToolCall,
    ToolCallCancelled,
    ToolCallFinished,
    ToolCallStarted,
    ToolOutputScreened,
    ToolResolutionError,
    ToolUnreachableError,
    Workflow,
    add_mcp_tools,
    current_tool_call,
)
from forge_client.tools import Prerequisite
from forge_core.llama_host.process import free_port
from tests.helpers import wait_for_server

CASES_DIR = Path(__file__).parent / "cases"
CASES = sorted(CASES_DIR.glob("*.json"))


@pytest.fixture(scope="module")
async def conformance_server() -> AsyncIterator[str]:
    port = free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "forge_server",
        "--backend", "scripted", "--script", str(CASES_DIR), "--port", str(port),
        stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    try:
        await wait_for_server(f"127.0.0.1:{port}", 60)
        yield f"127.0.0.1:{port}"
    finally:
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), 30)


class ScriptedTools:
    """Client-side tool handlers that follow a case's behaviour lists."""

    def __init__(self, behaviours: dict[str, list[dict[str, Any]]]) -> None:
        self.behaviours = behaviours
        self.calls: dict[str, int] = {}
        # The run's id as its run_started event gave it (returns_context).
        self.run_id = ""

    def handler(self, name: str) -> Any:
        async def run(args: dict[str, Any]) -> str:
            steps = self.behaviours[name]
            index = self.calls.get(name, 0)
            self.calls[name] = index + 1
            step = steps[min(index, len(steps) - 1)]
            if "sleep_ms" in step:
                await asyncio.sleep(step["sleep_ms"] / 1000)
            if "raises" in step:
                raise RuntimeError(step["raises"])
            if "raises_resolution" in step:
                raise ToolResolutionError(step["raises_resolution"])
            if "raises_unreachable" in step:
                raise ToolUnreachableError(step["raises_unreachable"])
            if step.get("returns_context"):
                call = current_tool_call()
                assert call is not None, "a tool function runs without its call's context"
                run = "same_run" if call.run_id == self.run_id else f"run {call.run_id!r}"
                return f"{call.call_id}|{call.tool_name}|{run}"
            return str(step.get("returns", ""))

        return run


def build_workflow(case: dict[str, Any], tools: ScriptedTools, *, steps: bool = True) -> Workflow:
    """The case's workflow; `steps=False` leaves required and terminal tools
    to the caller (a case's MCP tools are registered in between)."""
    spec = case["workflow"]
    wf = Workflow(
        spec["name"],
        spec.get("description", ""),
        system_prompt=spec.get("system_prompt", ""),
        respond_tool=spec.get("respond_tool", False),
    )
    for tool in spec["tools"]:
        wf.add_schema_tool(
            tool["name"],
            tool.get("description", ""),
            tool.get("parameters", {"type": "object", "properties": {}}),
            tools.handler(tool["name"]),
            prerequisites=[
                Prerequisite(p["tool"], p.get("match_arg", ""))
                for p in tool.get("prerequisites", [])
            ],
            destructive=tool.get("destructive", False),
            read_only=tool.get("read_only", False),
            idempotent=tool.get("idempotent", False),
        )
    if steps:
        apply_steps(wf, case)
    return wf


def apply_steps(wf: Workflow, case: dict[str, Any]) -> None:
    wf.require(*case["workflow"].get("required_steps", []))
    wf.terminal(*case["workflow"].get("terminal_tools", []))


MCP_KEYS = {
    "tools", "page_size", "include", "exclude", "prefix", "destructive", "read_only",
    "idempotent", "timeout_ms",
}  # fmt: skip


async def add_case_mcp_tools(
    wf: Workflow, case_file: Path, spec: dict[str, Any], stack: AsyncExitStack
) -> None:
    """Start the case's MCP server (mcp_case_server.py) over stdio and
    register its tools with add_mcp_tools, as the case's `mcp` key says."""
    assert set(spec) <= MCP_KEYS, set(spec) - MCP_KEYS
    params = StdioServerParameters(
        command=sys.executable,
        args=[str(CASES_DIR.parent / "mcp_case_server.py"), str(case_file)],
    )
    read, write = await stack.enter_async_context(stdio_client(params))
    session = await stack.enter_async_context(ClientSession(read, write))
    await session.initialize()
    await add_mcp_tools(
        wf,
        session,
        include=spec.get("include"),
        exclude=spec.get("exclude", ()),
        prefix=spec.get("prefix", ""),
        destructive=spec.get("destructive"),
        read_only=spec.get("read_only"),
        idempotent=spec.get("idempotent"),
        timeout_s=spec.get("timeout_ms", 60_000) / 1000,
    )


OPTION_KEYS = {
    "max_iterations", "max_retries", "max_tool_errors", "tool_timeout_ms", "stream_chunks",
    "parallel_tool_calls", "temperature", "max_tokens", "reasoning_replay", "compaction",
    "context_budget_tokens", "priority", "cancel_on_preempt", "guardrails",
    "approve_destructive_calls",
}  # fmt: skip
GUARDRAIL_KEYS = {
    "disable_constrained_decoding", "disable_rescue", "disable_retry_nudges",
    "disable_step_enforcement", "disable_error_recovery", "disable_compaction",
    "disable_coercion", "disable_repeat_guard", "disable_loop_breaking",
    "disable_parameter_docs", "disable_grounding", "disable_tool_relevance",
    "disable_destructive_policy", "disable_result_binding", "disable_number_bounds",
    "enforcement",
}  # fmt: skip


def build_options(raw: dict[str, Any]) -> RunOptions:
    """Every option key a case may use; an unknown key fails the case rather
    than being silently ignored."""
    assert set(raw) <= OPTION_KEYS, set(raw) - OPTION_KEYS
    guards = raw.get("guardrails", {})
    assert set(guards) <= GUARDRAIL_KEYS, set(guards) - GUARDRAIL_KEYS
    return RunOptions(
        max_iterations=raw.get("max_iterations"),
        max_retries=raw.get("max_retries"),
        max_tool_errors=raw.get("max_tool_errors"),
        tool_timeout_s=raw["tool_timeout_ms"] / 1000 if "tool_timeout_ms" in raw else None,
        stream_chunks=raw.get("stream_chunks", False),
        parallel_tool_calls=raw.get("parallel_tool_calls", False),
        temperature=raw.get("temperature"),
        max_tokens=raw.get("max_tokens"),
        reasoning_replay=raw.get("reasoning_replay", "keep_last"),
        compaction_strategy=raw.get("compaction", "tiered"),
        context_budget_tokens=raw.get("context_budget_tokens"),
        priority=raw.get("priority", 0),
        cancel_on_preempt=raw.get("cancel_on_preempt", False),
        constrained_decoding=not guards.get("disable_constrained_decoding", False),
        rescue=not guards.get("disable_rescue", False),
        retry_nudges=not guards.get("disable_retry_nudges", False),
        step_enforcement=not guards.get("disable_step_enforcement", False),
        error_recovery=not guards.get("disable_error_recovery", False),
        compaction=not guards.get("disable_compaction", False),
        coercion=not guards.get("disable_coercion", False),
        repeat_guard=not guards.get("disable_repeat_guard", False),
        loop_breaking=not guards.get("disable_loop_breaking", False),
        parameter_docs=not guards.get("disable_parameter_docs", False),
        grounding=not guards.get("disable_grounding", False),
        tool_relevance=not guards.get("disable_tool_relevance", False),
        destructive_policy=not guards.get("disable_destructive_policy", False),
        result_binding=not guards.get("disable_result_binding", False),
        number_bounds=not guards.get("disable_number_bounds", False),
        approve_destructive_calls=raw.get("approve_destructive_calls", False),
        enforcement=guards.get("enforcement", "both"),
    )


class ScriptedApprovals:
    """The client's approval decisions per tool: each request takes the
    next entry, the last one repeats."""

    def __init__(self, decisions: dict[str, list[dict[str, Any]]]) -> None:
        self.decisions = decisions
        self.seen: dict[str, int] = {}

    def __call__(self, request: ApprovalRequested) -> Approval:
        entries = self.decisions.get(request.tool_name)
        if not entries:
            return Approval(False, "no approval scripted")
        n = self.seen.get(request.tool_name, 0)
        self.seen[request.tool_name] = n + 1
        entry = entries[min(n, len(entries) - 1)]
        return Approval(bool(entry["approve"]), entry.get("reason", ""))


def prior_message(raw: dict[str, Any]) -> Message:
    return Message(
        role=Role[raw["role"].upper()],
        type=MessageType[raw["type"].upper()],
        content=raw.get("content", ""),
        tool_calls=tuple(
            ToolCall(c["id"], c["name"], json.dumps(c["arguments"]))
            for c in raw.get("tool_calls", [])
        ),
        tool_call_id=raw.get("tool_call_id", ""),
        tool_name=raw.get("tool_name", ""),
    )


def type_name(value: MessageType) -> str:
    return value.name.lower()


# ── expect.events (README, "Events") ─────────────────────────────────────

# The canonical kinds the Python SDK surfaces and the fields of each (kinds
# without canonical fields can be expected by kind only); an expected kind or
# field outside them fails the case instead of never matching.
CANONICAL_FIELDS: dict[str, frozenset[str]] = {
    "run_started": frozenset({"run_id"}),
    "chunk": frozenset(),
    "tool_call_started": frozenset({"call_id", "tool_name", "arguments"}),
    "tool_call_finished": frozenset({"call_id", "tool_name", "error"}),
    "tool_call_cancelled": frozenset({"call_id", "reason"}),
    "approval_requested": frozenset({"call_id", "tool_name", "arguments"}),
    "approval_decided": frozenset({"call_id", "tool_name", "approved"}),
    "tool_output_screened": frozenset(),
    "message_appended": frozenset({"index", "type"}),
    "compacted": frozenset({"messages_before", "messages_after"}),
    "queued": frozenset(),
    "run_completed": frozenset({"terminal_tool"}),
}


def canonical(event: Event) -> dict[str, Any]:
    """`event` as {kind, fields} under the suite's SDK-neutral names."""
    fields: dict[str, Any]
    match event:
        case RunStarted():
            kind, fields = "run_started", {"run_id": event.run_id}
        case Chunk():
            kind, fields = "chunk", {}
        case ToolCallStarted():
            kind = "tool_call_started"
            fields = {
                "call_id": event.call_id,
                "tool_name": event.tool_name,
                "arguments": event.arguments,
            }
        case ToolCallFinished():
            kind = "tool_call_finished"
            fields = {
                "call_id": event.call_id,
                "tool_name": event.tool_name,
                "error": event.error is not None,
            }
        case ToolCallCancelled():
            kind, fields = "tool_call_cancelled", {"call_id": event.call_id, "reason": event.reason}
        case ApprovalRequested():
            kind = "approval_requested"
            fields = {
                "call_id": event.call_id,
                "tool_name": event.tool_name,
                "arguments": event.arguments,
            }
        case ApprovalDecided():
            kind = "approval_decided"
            fields = {
                "call_id": event.call_id,
                "tool_name": event.tool_name,
                "approved": event.approved,
            }
        case ToolOutputScreened():
            kind, fields = "tool_output_screened", {}
        case MessageAppended():
            kind = "message_appended"
            fields = {"index": event.index, "type": type_name(event.message.type)}
        case Compacted():
            kind = "compacted"
            fields = {
                "messages_before": event.messages_before,
                "messages_after": event.messages_after,
            }
        case Queued():
            kind, fields = "queued", {}
        case RunCompleted():
            kind, fields = "run_completed", {"terminal_tool": event.result.terminal_tool}
        case _:
            raise AssertionError(f"{type(event).__name__} has no canonical kind")
    assert set(fields) == CANONICAL_FIELDS[kind], kind
    return {"kind": kind, "fields": fields}


def match_events(want: list[dict[str, Any]], got: list[dict[str, Any]]) -> str:
    """Empty when `want` is an ordered subsequence of `got` (same kind, every
    expected field present and equal), else what did not match."""
    rest = iter(got)
    for i, entry in enumerate(want):
        kind, fields = entry["kind"], entry.get("fields", {})
        if kind not in CANONICAL_FIELDS:
            return f"entry {i}: the Python SDK surfaces no {kind!r} events"
        if unknown := set(fields) - CANONICAL_FIELDS[kind]:
            return f"entry {i}: the Python SDK's {kind} events have no fields {sorted(unknown)}"
        if not any(
            g["kind"] == kind
            and all(k in g["fields"] and g["fields"][k] == v for k, v in fields.items())
            for g in rest
        ):
            return f"entry {i} {json.dumps(entry)} not found in order"
    return ""


CASE_DATA = {c.stem: json.loads(c.read_text()) for c in CASES}


@pytest.mark.parametrize("name", sorted(CASE_DATA))
async def test_conformance_case(conformance_server: str, name: str) -> None:
    case = CASE_DATA[name]
    assert case["name"] == name
    expect = case["expect"]
    client_spec = case.get("client", {})
    tools = ScriptedTools(client_spec.get("tools", {}))
    wf = build_workflow(case, tools, steps=False)
    cancel_after = client_spec.get("cancel_after_tool_calls")

    tool_calls: list[dict[str, Any]] = []
    approval_requests: list[dict[str, Any]] = []
    approvals = client_spec.get("approvals")
    message_types: list[str] = []
    surfaced: list[dict[str, Any]] = []
    outcome: dict[str, Any] = {}
    async with AsyncExitStack() as stack:
        if "mcp" in case:
            await add_case_mcp_tools(wf, CASES_DIR / f"{name}.json", case["mcp"], stack)
        # After the MCP tools: steps and terminal tools may name them.
        apply_steps(wf, case)
        client = await stack.enter_async_context(ForgeClient(conformance_server))
        stream = client.start(
            wf,
            case["user_message"],
            prior_messages=[prior_message(m) for m in case.get("prior_messages", [])],
            options=build_options(case.get("options", {})),
            # Absent: no approver, so the SDK's default (deny) is what runs.
            approve=ScriptedApprovals(approvals) if approvals is not None else None,
        )
        try:
            async for event in stream:
                surfaced.append(canonical(event))
                if isinstance(event, RunStarted):
                    tools.run_id = event.run_id
                if isinstance(event, ToolCallStarted):
                    tool_calls.append({"name": event.tool_name, "args": event.arguments})
                    if cancel_after is not None and len(tool_calls) == cancel_after:
                        await stream.cancel("conformance case asked to cancel")
                elif isinstance(event, ApprovalRequested):
                    approval_requests.append({"name": event.tool_name, "args": event.arguments})
                elif isinstance(event, MessageAppended):
                    message_types.append(type_name(event.message.type))
        except RunFailedError as err:
            assert isinstance(err, ForgeError), "a run's error is the SDK's ForgeError"
            outcome = {
                "outcome": "failed",
                "failure_reason": err.reason,
                "details": err.details,
                "iterations": err.iterations,
                "transcript": err.transcript,
            }
        else:
            assert stream.result is not None
            assert surfaced[-1]["kind"] == "run_completed", "run_completed is the last event"
            outcome = {
                "outcome": "completed",
                "terminal_tool": stream.result.terminal_tool,
                "result": stream.result.output,
                "iterations": stream.result.iterations,
                "transcript": stream.result.transcript,
            }

    assert outcome["outcome"] == expect["outcome"], outcome
    for key in ("terminal_tool", "result", "failure_reason", "iterations"):
        if key in expect:
            assert outcome[key] == expect[key], key
    for key, value in expect.get("details", {}).items():
        assert outcome["details"].get(key) == value, (key, outcome["details"])
    if "tool_calls" in expect:
        assert tool_calls == expect["tool_calls"]
    if "approval_requests" in expect:
        assert approval_requests == expect["approval_requests"]
    if "message_types" in expect:
        assert message_types == expect["message_types"]
    if "events" in expect:
        mismatch = match_events(expect["events"], surfaced)
        assert not mismatch, (
            mismatch + "\nsurfaced events:\n" + "\n".join(json.dumps(e) for e in surfaced)
        )
    contents = "\n".join(m.content for m in outcome["transcript"])
    for needle in expect.get("transcript_contains", []):
        assert needle in contents, needle


def test_event_matcher() -> None:
    call = {"call_id": "c1", "tool_name": "t"}
    got = [
        {"kind": "run_started", "fields": {"run_id": "r"}},
        {"kind": "tool_call_started", "fields": {**call, "arguments": {"a": [1]}}},
        {"kind": "tool_call_finished", "fields": {**call, "error": False}},
    ]
    started = {"kind": "tool_call_started", "fields": {"arguments": {"a": [1]}}}
    finished = {"kind": "tool_call_finished", "fields": {"error": False}}
    assert match_events([], got) == ""
    assert match_events([started, finished], got) == ""
    assert "entry 1" in match_events([finished, started], got)  # order matters
    assert "entry 0" in match_events([{"kind": "run_started", "fields": {"run_id": "x"}}], got)
    assert "no 'tool_call'" in match_events([{"kind": "tool_call", "fields": {}}], got)
    assert "no fields ['output']" in match_events(
        [{"kind": "tool_call_finished", "fields": {"output": ""}}], got
    )
