"""Unit tests for prompt-mode chat messages (reasoning replay, the parallel
form), the parallel grammar schema and how llama-server requests use them."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

import jsonschema
import pytest

from forge_core import constraint
from forge_core.backends.base import ChatRequest
from forge_core.backends.llama.server import LlamaServerBackend
from forge_core.messages import Message, MessageRole, MessageType, ToolCallInfo
from forge_core.prompting import to_chat_messages
from forge_core.workflow import ToolSpec

FETCH = ToolSpec(
    "fetch",
    "Fetch a record by id",
    {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
)
SUBMIT = ToolSpec(
    "submit",
    "Submit the final answer",
    {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]},
)
PING = ToolSpec("ping")
TOOLS = [FETCH, SUBMIT, PING]


def tool_call(call_id: str, name: str, args: dict[str, Any], step: int) -> Message:
    return Message(
        MessageRole.ASSISTANT,
        "",
        MessageType.TOOL_CALL,
        step_index=step,
        tool_calls=[ToolCallInfo(call_id, name, args)],
    )


def tool_result(call_id: str, name: str, content: str, step: int) -> Message:
    return Message(MessageRole.TOOL, content, MessageType.TOOL_RESULT, step, [], call_id, name)


def reasoning(content: str) -> Message:
    return Message(MessageRole.ASSISTANT, content, MessageType.REASONING)


def conversation() -> list[Message]:
    """Two turns, each with reasoning, then a third reasoning before a text reply."""
    return [
        Message(MessageRole.SYSTEM, "You audit records.", MessageType.SYSTEM_PROMPT),
        Message(MessageRole.USER, "Check record 1.", MessageType.USER_INPUT),
        reasoning("R1: fetch it"),
        tool_call("call_1", "fetch", {"id": "1"}, 1),
        tool_result("call_1", "fetch", "row 1", 1),
        reasoning("R2: now check"),
        tool_call("call_2", "ping", {}, 2),
        tool_result("call_2", "ping", "pong", 2),
        reasoning("R3: just talk"),
        Message(MessageRole.ASSISTANT, "All good.", MessageType.TEXT_RESPONSE),
    ]


def think(text: str) -> str:
    return f"<think>\n{text}\n</think>\n"


FETCH_JSON = json.dumps({"tool": "fetch", "args": {"id": "1"}})
PING_JSON = json.dumps({"tool": "ping", "args": {}})


# --------------------------------------------------------------------------- reasoning replay


def assistant_contents(out: list[dict[str, Any]]) -> list[str]:
    return [m["content"] for m in out if m["role"] == "assistant"]


def test_reasoning_is_never_a_separate_message() -> None:
    for policy in ("none", "keep_last", "full"):
        out = to_chat_messages(conversation(), TOOLS, reasoning_replay=policy)
        assert [m["role"] for m in out] == [
            "system",
            "user",
            "assistant",
            "tool",
            "assistant",
            "tool",
            "assistant",
        ]
        for m in out:
            if m["role"] != "assistant":
                assert "R1" not in m["content"] and "R3" not in m["content"]


def test_replay_none_drops_all_reasoning() -> None:
    out = to_chat_messages(conversation(), TOOLS, reasoning_replay="none")
    assert assistant_contents(out) == [FETCH_JSON, PING_JSON, "All good."]
    assert not any("<think>" in m["content"] for m in out)


def test_replay_keep_last_folds_only_the_last_reasoning() -> None:
    out = to_chat_messages(conversation(), TOOLS, reasoning_replay="keep_last")
    assert assistant_contents(out) == [
        FETCH_JSON,
        PING_JSON,
        think("R3: just talk") + "All good.",
    ]


def test_replay_keep_last_is_the_default() -> None:
    assert to_chat_messages(conversation(), TOOLS) == to_chat_messages(
        conversation(), TOOLS, reasoning_replay="keep_last"
    )


def test_replay_keep_last_folds_into_a_tool_call() -> None:
    messages = conversation()[:8]  # ends after the ping result: R2 is the last reasoning
    out = to_chat_messages(messages, TOOLS, reasoning_replay="keep_last")
    assert assistant_contents(out) == [FETCH_JSON, think("R2: now check") + PING_JSON]


def test_replay_full_folds_every_reasoning_into_its_own_turn() -> None:
    out = to_chat_messages(conversation(), TOOLS, reasoning_replay="full")
    assert assistant_contents(out) == [
        think("R1: fetch it") + FETCH_JSON,
        think("R2: now check") + PING_JSON,
        think("R3: just talk") + "All good.",
    ]


def test_trailing_reasoning_without_a_following_turn_is_dropped() -> None:
    messages = [*conversation()[:5], reasoning("R-last")]
    out = to_chat_messages(messages, TOOLS, reasoning_replay="full")
    assert [m["role"] for m in out] == ["system", "user", "assistant", "tool"]
    assert not any("R-last" in m["content"] for m in out)


def test_reasoning_is_not_carried_past_the_turn_it_belongs_to() -> None:
    out = to_chat_messages(conversation(), TOOLS, reasoning_replay="full")
    # Each think block appears exactly once.
    joined = "\n".join(m["content"] for m in out)
    for r in ("R1: fetch it", "R2: now check", "R3: just talk"):
        assert joined.count(r) == 1


# --------------------------------------------------------------------------- parallel form


def test_parallel_renders_a_single_call_as_an_array() -> None:
    out = to_chat_messages(conversation(), TOOLS, parallel=True, reasoning_replay="none")
    calls = [m["content"] for m in out if m["role"] == "assistant"][:2]
    assert [json.loads(c) for c in calls] == [
        [{"tool": "fetch", "args": {"id": "1"}}],
        [{"tool": "ping", "args": {}}],
    ]


def test_without_parallel_a_single_call_is_an_object() -> None:
    out = to_chat_messages(conversation(), TOOLS, parallel=False, reasoning_replay="none")
    first = next(m["content"] for m in out if m["role"] == "assistant")
    assert json.loads(first) == {"tool": "fetch", "args": {"id": "1"}}


def test_parallel_tool_prompt_asks_for_an_array() -> None:
    parallel = to_chat_messages(conversation(), TOOLS, parallel=True)[0]["content"]
    single = to_chat_messages(conversation(), TOOLS, parallel=False)[0]["content"]
    assert "JSON array" in parallel
    assert "exactly one JSON object" not in parallel
    assert "exactly one JSON object" in single
    assert "JSON array" not in single
    assert parallel.startswith("You audit records.")
    assert "- fetch(id: string): Fetch a record by id" in parallel


# --------------------------------------------------------------------------- parallel schema


def test_parallel_schema_is_a_bounded_array() -> None:
    schema = constraint.tool_call_schema(TOOLS, parallel=True)
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["type"] == "array"
    assert schema["minItems"] == 1
    assert schema["maxItems"] == constraint.MAX_PARALLEL_CALLS
    assert schema["items"] == constraint.tool_call_schema(TOOLS)


@pytest.mark.parametrize(
    "instance",
    [
        [{"tool": "fetch", "args": {"id": "1"}}],
        [{"tool": "submit", "args": {"answer": "x"}}],
        [{"tool": "ping", "args": {}}],
        [
            {"tool": "fetch", "args": {"id": "1"}},
            {"tool": "fetch", "args": {"id": "2"}},
            {"tool": "ping", "args": {}},
        ],
    ],
)
def test_parallel_schema_admits_each_tools_calls(instance: list[dict[str, Any]]) -> None:
    jsonschema.validate(instance, constraint.tool_call_schema(TOOLS, parallel=True))


@pytest.mark.parametrize(
    "instance",
    [
        [],
        {"tool": "fetch", "args": {"id": "1"}},  # a bare object is not the array form
        [{"tool": "nope", "args": {}}],
        [{"tool": "fetch", "args": {}}],
        [{"tool": "fetch", "args": {"id": "1"}}, {"tool": "ping", "args": {"x": 1}}],
        [{"tool": "ping", "args": {}}] * (constraint.MAX_PARALLEL_CALLS + 1),
    ],
)
def test_parallel_schema_rejects(instance: Any) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(instance, constraint.tool_call_schema(TOOLS, parallel=True))


def test_parallel_schema_accepts_the_maximum() -> None:
    calls = [{"tool": "ping", "args": {}}] * constraint.MAX_PARALLEL_CALLS
    jsonschema.validate(calls, constraint.tool_call_schema(TOOLS, parallel=True))


def test_parallel_schema_with_a_single_tool() -> None:
    schema = constraint.tool_call_schema([FETCH], parallel=True)
    jsonschema.validate([{"tool": "fetch", "args": {"id": "1"}}], schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate([{"tool": "ping", "args": {}}], schema)


def test_parallel_schema_keeps_local_refs_resolvable() -> None:
    tag = ToolSpec(
        "tag",
        parameters={
            "type": "object",
            "properties": {"label": {"$ref": "#/$defs/Label"}},
            "required": ["label"],
            "$defs": {"Label": {"type": "string", "maxLength": 4}},
        },
    )
    schema = constraint.tool_call_schema([tag, PING], parallel=True)
    jsonschema.validate([{"tool": "tag", "args": {"label": "ok"}}], schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate([{"tool": "tag", "args": {"label": "far too long"}}], schema)


# --------------------------------------------------------------------------- llama-server body


@pytest.fixture
async def constrained_backend() -> AsyncIterator[LlamaServerBackend]:
    b = LlamaServerBackend(
        "http://127.0.0.1:1",
        model="m",
        context_budget_tokens=100,
        slots=1,
        budget_mode="backend",
        backend_mode="external",
    )
    try:
        yield b
    finally:
        await b.aclose()


@pytest.fixture
async def prompt_backend() -> AsyncIterator[LlamaServerBackend]:
    b = LlamaServerBackend(
        "http://127.0.0.1:1",
        model="m",
        context_budget_tokens=100,
        slots=1,
        budget_mode="backend",
        backend_mode="external",
        tool_call_mode="prompt",
    )
    try:
        yield b
    finally:
        await b.aclose()


def chat_request(**kw: Any) -> ChatRequest:
    return ChatRequest(
        run_id="r",
        workflow_name="wf",
        messages=kw.pop("messages", conversation()),
        tools=kw.pop("tools", TOOLS),
        allowed=kw.pop("allowed", []),
        **kw,
    )


def test_unknown_tool_call_mode_is_refused() -> None:
    with pytest.raises(ValueError):
        LlamaServerBackend(
            "http://127.0.0.1:1",
            model="m",
            context_budget_tokens=100,
            slots=1,
            budget_mode="backend",
            backend_mode="external",
            tool_call_mode="bogus",
        )


def test_prompt_mode_never_sends_a_constraint(prompt_backend: LlamaServerBackend) -> None:
    assert prompt_backend.info().tool_call_mode == "prompt"
    for tools in (TOOLS, [*TOOLS, PATTERN_TOOL]):  # grammar path and schema fallback
        for parallel in (False, True):
            body = prompt_backend.request_body(
                chat_request(constrained=True, parallel=parallel, tools=tools)
            )
            assert "response_format" not in body
            assert "grammar" not in body
            # The tools are still described in the prompt.
            assert "- fetch(id: string)" in body["messages"][0]["content"]


# A keyword outside the compact grammar's subset: the backend falls back to a
# response_format JSON Schema.
PATTERN_TOOL = ToolSpec(
    "code",
    parameters={
        "type": "object",
        # allOf: a shape the grammar does not write (a pattern now has a rule).
        "properties": {"code": {"allOf": [{"type": "string"}, {"maxLength": 3}]}},
        "required": ["code"],
    },
)


def grammar_rules(body: dict[str, Any]) -> dict[str, str]:
    lines = body["grammar"].splitlines()
    return dict(line.split(" ::= ", 1) for line in lines)


def test_constrained_mode_single_call_grammar(constrained_backend: LlamaServerBackend) -> None:
    body = constrained_backend.request_body(chat_request(constrained=True))
    assert "response_format" not in body
    assert grammar_rules(body)["root"] == "call"


def test_constrained_parallel_grammar_is_the_array_form(
    constrained_backend: LlamaServerBackend,
) -> None:
    body = constrained_backend.request_body(
        chat_request(constrained=True, parallel=True, allowed=["fetch", "ping"])
    )
    assert "response_format" not in body
    root = grammar_rules(body)["root"]
    # "[" call ("," call){0,n-1} "]": one to n calls.
    assert root.startswith('"[" sp call ')
    assert root.endswith(' sp "]"')
    bound = re.search(r'\(sp "," sp call\)\{0,(\d+)\}', root)
    assert bound is not None, root
    # The same bound as the JSON-Schema form the backend falls back to.
    assert int(bound.group(1)) + 1 == constraint.MAX_PARALLEL_CALLS
    # The prompt and the history use the same array form.
    assert "JSON array" in body["messages"][0]["content"]
    first_call = next(m for m in body["messages"] if m["role"] == "assistant")
    assert isinstance(json.loads(first_call["content"].rsplit("\n", 1)[-1]), list)


def test_constrained_fallback_response_format_single_call(
    constrained_backend: LlamaServerBackend,
) -> None:
    body = constrained_backend.request_body(
        chat_request(constrained=True, tools=[*TOOLS, PATTERN_TOOL], allowed=["code", "ping"])
    )
    assert "grammar" not in body
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema.get("type") != "array"
    jsonschema.validate({"tool": "code", "args": {"code": "ABC"}}, schema)


def test_constrained_parallel_response_format_is_the_array_form(
    constrained_backend: LlamaServerBackend,
) -> None:
    body = constrained_backend.request_body(
        chat_request(
            constrained=True,
            parallel=True,
            tools=[*TOOLS, PATTERN_TOOL],
            allowed=["code", "ping"],
        )
    )
    assert "grammar" not in body
    schema = body["response_format"]["json_schema"]["schema"]
    assert schema == constraint.tool_call_schema([PING, PATTERN_TOOL], parallel=True)
    jsonschema.validate(
        [{"tool": "code", "args": {"code": "ABC"}}, {"tool": "ping", "args": {}}], schema
    )
    for bad in (
        [],
        {"tool": "ping", "args": {}},
        [{"tool": "submit", "args": {"answer": "x"}}],
        [{"tool": "ping", "args": {}}] * (constraint.MAX_PARALLEL_CALLS + 1),
    ):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


def test_request_body_applies_the_reasoning_replay_policy(
    constrained_backend: LlamaServerBackend,
) -> None:
    full = constrained_backend.request_body(chat_request(reasoning_replay="full"))["messages"]
    none = constrained_backend.request_body(chat_request(reasoning_replay="none"))["messages"]
    assert sum("<think>" in m["content"] for m in full) == 3
    assert sum("<think>" in m["content"] for m in none) == 0
