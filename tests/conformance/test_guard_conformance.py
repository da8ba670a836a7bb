"""Runs every Guard conformance case (tests/conformance/guard_cases/*.json, see
the README's "Guard cases") with the Python SDK's ForgeClient.guard against
the real `forge-server` process. The Go and TypeScript SDKs run the same files.
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

from forge_client import (
    ForgeClient,
    GuardCalls,
    GuardDone,
    GuardRetry,
    GuardVerdict,
    Message,
    MessageType,
    RequestRejectedError,
    Role,
    RunFailedError,
    ToolCall,
)
from forge_core.llama_host.process import free_port
from tests.conformance.test_conformance import (
    CASES_DIR,
    ScriptedTools,
    build_options,
    build_workflow,
)
from tests.helpers import wait_for_server

GUARD_CASES_DIR = Path(__file__).parent / "guard_cases"
CASE_DATA = {c.stem: json.loads(c.read_text()) for c in sorted(GUARD_CASES_DIR.glob("*.json"))}

CASE_KEYS = {"name", "description", "workflow", "options", "messages", "steps"}
STEP_KEYS = {"reply_text", "reply_tool_calls", "expect", "results"}
EXPECT_KEYS = {
    "verdict", "calls", "attempt", "message_types", "reason_contains", "terminal_tool", "result",
    "terminal_call_id", "failure_reason", "details", "code", "reason", "field",
}  # fmt: skip
MESSAGE_KEYS = {"role", "type", "content", "tool_calls", "tool_call_id", "tool_name"}


@pytest.fixture(scope="module")
async def guard_server() -> AsyncIterator[str]:
    # Guard never asks the backend for a reply: the scripted one (given the
    # run cases' scripts, which it needs to start) stays idle.
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


def case_message(raw: dict[str, Any]) -> Message:
    assert set(raw) <= MESSAGE_KEYS, set(raw) - MESSAGE_KEYS
    return Message(
        role=Role[raw["role"].upper()],
        type=MessageType[raw.get("type", "unspecified").upper()],
        content=raw.get("content", ""),
        tool_calls=tuple(
            ToolCall(c["id"], c["name"], json.dumps(c["arguments"]))
            for c in raw.get("tool_calls", [])
        ),
        tool_call_id=raw.get("tool_call_id", ""),
        tool_name=raw.get("tool_name", ""),
    )


def outcome_of(verdict: GuardVerdict) -> dict[str, Any]:
    """The verdict under the case format's names."""
    match verdict:
        case GuardCalls():
            calls = [
                {
                    "id": c.call_id,
                    "name": c.tool_name,
                    "args": c.arguments,
                    "coercions": [x.path for x in c.coercions],
                }
                for c in verdict.calls
            ]
            return {"verdict": "calls", "calls": calls}
        case GuardRetry():
            return {
                "verdict": "retry",
                "attempt": verdict.attempt,
                "reason": verdict.reason,
                "message_types": [m.type.name.lower() for m in verdict.messages],
            }
        case GuardDone():
            return {
                "verdict": "done",
                "terminal_tool": verdict.terminal_tool,
                "result": verdict.result,
                "terminal_call_id": verdict.terminal_call_id,
            }


def check(step: int, expect: dict[str, Any], got: dict[str, Any]) -> None:
    where = f"step {step}: {json.dumps(got)}"
    assert set(expect) <= EXPECT_KEYS, set(expect) - EXPECT_KEYS
    assert got["verdict"] == expect["verdict"], where
    if "calls" in expect:
        assert len(got["calls"]) == len(expect["calls"]), where
        for want, call in zip(expect["calls"], got["calls"], strict=True):
            for key in ("id", "name", "args", "coercions"):
                if key in want:
                    assert call[key] == want[key], f"{key}: {where}"
    for key in ("attempt", "message_types", "terminal_tool", "result", "terminal_call_id"):
        if key in expect:
            assert got[key] == expect[key], f"{key}: {where}"
    if "reason_contains" in expect:
        assert expect["reason_contains"] in got["reason"], where
    for key in ("failure_reason", "code", "reason", "field"):
        if key in expect and expect["verdict"] in ("failed", "rejected"):
            assert got[key] == expect[key], f"{key}: {where}"
    for key, value in expect.get("details", {}).items():
        assert got["details"].get(key) == value, f"details.{key}: {where}"


@pytest.mark.parametrize("name", sorted(CASE_DATA))
async def test_guard_conformance_case(guard_server: str, name: str) -> None:
    case = CASE_DATA[name]
    assert case["name"] == name
    assert set(case) <= CASE_KEYS, set(case) - CASE_KEYS
    wf = build_workflow(case, ScriptedTools({}))
    options = build_options(case.get("options", {}))
    history = [case_message(m) for m in case["messages"]]
    steps = case["steps"]
    async with ForgeClient(guard_server) as client:
        for i, step in enumerate(steps):
            assert set(step) <= STEP_KEYS, set(step) - STEP_KEYS
            got: dict[str, Any]
            verdict: GuardVerdict | None = None
            try:
                verdict = await client.guard(
                    wf,
                    history,
                    reply_text=step.get("reply_text", ""),
                    reply_tool_calls=[
                        ToolCall(c["id"], c["name"], json.dumps(c["arguments"]))
                        for c in step.get("reply_tool_calls", [])
                    ],
                    options=options,
                )
                got = outcome_of(verdict)
            except RunFailedError as err:
                got = {"verdict": "failed", "failure_reason": err.reason, "details": err.details}
            except RequestRejectedError as err:
                got = {
                    "verdict": "rejected",
                    "code": err.code,
                    "reason": err.reason,
                    "field": err.field,
                }
            check(i, step["expect"], got)
            # Carry the conversation on as a caller's loop would.
            if isinstance(verdict, GuardRetry):
                history += verdict.messages
            elif isinstance(verdict, GuardCalls):
                results = step.get("results")
                if results is None:
                    assert i == len(steps) - 1, f"step {i}: a calls verdict needs results"
                    continue
                assert len(results) == len(verdict.calls), f"step {i}: one result per call"
                history.append(verdict.message)
                for call, result in zip(verdict.calls, results, strict=True):
                    assert set(result) <= {"output", "error"}, result
                    history.append(
                        call.result_message(result.get("output", ""), error=result.get("error"))
                    )
