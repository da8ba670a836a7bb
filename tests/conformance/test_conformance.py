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
from pathlib import Path
from typing import Any

import pytest

from forge.v1 import messages_pb2 as mpb
from forge_client import (
    Approval,
    ApprovalRequested,
    ForgeClient,
    MessageAppended,
    RunFailedError,
    RunOptions,
    ToolCallStarted,
    ToolResolutionError,
    Workflow,
)
from forge_client.tools import Prerequisite
from forge_core.llama_process import free_port
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
            return str(step.get("returns", ""))

        return run


def build_workflow(case: dict[str, Any], tools: ScriptedTools) -> Workflow:
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
        )
    wf.require(*spec.get("required_steps", []))
    wf.terminal(*spec.get("terminal_tools", []))
    return wf


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
    "disable_destructive_policy", "enforcement",
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


def prior_message(raw: dict[str, Any]) -> mpb.Message:
    msg = mpb.Message(
        role=mpb.Role.Value(f"ROLE_{raw['role'].upper()}"),
        type=mpb.MessageType.Value(f"MESSAGE_TYPE_{raw['type'].upper()}"),
        content=raw.get("content", ""),
        tool_call_id=raw.get("tool_call_id", ""),
        tool_name=raw.get("tool_name", ""),
    )
    for c in raw.get("tool_calls", []):
        msg.tool_calls.append(
            mpb.ToolCall(id=c["id"], name=c["name"], arguments_json=json.dumps(c["arguments"]))
        )
    return msg


def type_name(value: mpb.MessageType.ValueType) -> str:
    return mpb.MessageType.Name(value).removeprefix("MESSAGE_TYPE_").lower()


CASE_DATA = {c.stem: json.loads(c.read_text()) for c in CASES}


@pytest.mark.parametrize("name", sorted(CASE_DATA))
async def test_conformance_case(conformance_server: str, name: str) -> None:
    case = CASE_DATA[name]
    assert case["name"] == name
    expect = case["expect"]
    client_spec = case.get("client", {})
    tools = ScriptedTools(client_spec.get("tools", {}))
    wf = build_workflow(case, tools)
    cancel_after = client_spec.get("cancel_after_tool_calls")

    tool_calls: list[dict[str, Any]] = []
    approval_requests: list[dict[str, Any]] = []
    approvals = client_spec.get("approvals")
    message_types: list[str] = []
    outcome: dict[str, Any] = {}
    async with ForgeClient(conformance_server) as client:
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
                if isinstance(event, ToolCallStarted):
                    tool_calls.append({"name": event.tool_name, "args": event.arguments})
                    if cancel_after is not None and len(tool_calls) == cancel_after:
                        await stream.cancel("conformance case asked to cancel")
                elif isinstance(event, ApprovalRequested):
                    approval_requests.append({"name": event.tool_name, "args": event.arguments})
                elif isinstance(event, MessageAppended):
                    message_types.append(type_name(event.message.type))
        except RunFailedError as err:
            outcome = {
                "outcome": "failed",
                "failure_reason": err.reason,
                "details": err.details,
                "iterations": err.iterations,
                "transcript": err.transcript,
            }
        else:
            assert stream.result is not None
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
    contents = "\n".join(m.content for m in outcome["transcript"])
    for needle in expect.get("transcript_contains", []):
        assert needle in contents, needle
