"""Unit tests for reading tool calls out of text, the grammar constraint schema
and the parts of the llama-server backend that need no server."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

import jsonschema
import pytest

from forge_core.backends.base import ChatRequest, ToolCall
from forge_core.backends.llama.chat_stream import http_error
from forge_core.backends.llama.props import parse_props
from forge_core.backends.llama.server import LlamaServerBackend
from forge_core.constraint import tool_call_schema
from forge_core.errors import BackendError, ContextBudgetExceededError, FailureReason
from forge_core.messages import Message, MessageRole, MessageType, ToolCallInfo
from forge_core.parsing import parse_tool_calls
from forge_core.workflow import ToolSpec

FETCH = ToolSpec(
    "fetch",
    "Fetch a record by id",
    {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
)
SUBMIT = ToolSpec(
    "submit",
    "Submit the final answer",
    {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "SubmitArgs",
        "type": "object",
        "properties": {"answer": {"type": "string"}, "score": {"type": "integer"}},
        "required": ["answer"],
    },
)
PING = ToolSpec("ping")
TOOLS = [FETCH, SUBMIT, PING]


# --------------------------------------------------------------------------- parsing


def test_bare_json_call() -> None:
    assert parse_tool_calls('{"tool": "fetch", "args": {"id": "1"}}') == [
        ToolCall("fetch", {"id": "1"})
    ]


def test_surrounding_whitespace_is_ignored() -> None:
    assert parse_tool_calls('\n  {"tool": "ping", "args": {}}  \n') == [ToolCall("ping", {})]


def test_fenced_json_inside_prose() -> None:
    reply = (
        "Let me look that up first.\n"
        "```json\n"
        '{"tool": "fetch", "args": {"id": "42"}}\n'
        "```\n"
        "I will report back afterwards."
    )
    assert parse_tool_calls(reply) == [ToolCall("fetch", {"id": "42"})]


def test_name_arguments_shape() -> None:
    assert parse_tool_calls('{"name": "fetch", "arguments": {"id": "9"}}') == [
        ToolCall("fetch", {"id": "9"})
    ]


def test_arguments_given_as_a_json_string() -> None:
    raw = json.dumps({"name": "fetch", "arguments": json.dumps({"id": "9"})})
    assert parse_tool_calls(raw) == [ToolCall("fetch", {"id": "9"})]


def test_arguments_string_that_is_not_an_object_is_no_call() -> None:
    assert parse_tool_calls('{"name": "fetch", "arguments": "not json"}') is None
    assert parse_tool_calls('{"name": "fetch", "arguments": "[1, 2]"}') is None


def test_missing_args_means_empty_args() -> None:
    assert parse_tool_calls('{"tool": "ping"}') == [ToolCall("ping", {})]


@pytest.mark.parametrize(
    "answer",
    ["close } only", "open { only", "} then {", 'escaped quote \\" and }', "{{{", 'quote " and }'],
)
def test_braces_inside_strings_do_not_confuse_the_scanner(answer: str) -> None:
    call_json = json.dumps({"tool": "submit", "args": {"answer": answer}})
    reply = f"Calling: {call_json} ok"
    assert parse_tool_calls(reply) == [ToolCall("submit", {"answer": answer})]


def test_nested_objects_in_prose() -> None:
    reply = 'Do it: {"tool": "submit", "args": {"answer": "x", "meta": {"a": {"b": 1}}}}.'
    assert parse_tool_calls(reply) == [ToolCall("submit", {"answer": "x", "meta": {"a": {"b": 1}}})]


def test_two_objects_in_one_text() -> None:
    reply = (
        'First {"tool": "fetch", "args": {"id": "1"}} and then '
        '{"tool": "fetch", "args": {"id": "2"}}.'
    )
    assert parse_tool_calls(reply) == [
        ToolCall("fetch", {"id": "1"}),
        ToolCall("fetch", {"id": "2"}),
    ]


def test_newline_separated_calls() -> None:
    # The format the scripted backend and the prompt history use for batches.
    reply = '{"tool": "fetch", "args": {"id": "1"}}\n{"tool": "ping", "args": {}}'
    assert parse_tool_calls(reply) == [ToolCall("fetch", {"id": "1"}), ToolCall("ping", {})]


def test_json_array_of_calls() -> None:
    reply = '[{"tool": "fetch", "args": {"id": "1"}}, {"name": "ping", "arguments": {}}]'
    assert parse_tool_calls(reply) == [ToolCall("fetch", {"id": "1"}), ToolCall("ping", {})]


def test_non_call_objects_are_skipped() -> None:
    reply = 'Stats: {"count": 3}. Call: {"tool": "ping", "args": {}}. Bad: {not json}'
    assert parse_tool_calls(reply) == [ToolCall("ping", {})]


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "The record looks fine to me.",
        '{"answer": 42}',
        '{"tool": "", "args": {}}',
        '{"tool": 5, "args": {}}',
        '{"tool": "fetch", "args": [1]}',
        '{"tool": "fetch", "args": {"id": "1"}',  # unterminated
        "[1, 2, 3]",
        "null",
    ],
)
def test_no_call(reply: str) -> None:
    assert parse_tool_calls(reply) is None


def test_stray_brace_in_prose_does_not_hide_a_call() -> None:
    reply = 'Set notation uses { for sets. {"tool": "fetch", "args": {"id": "1"}}'
    assert parse_tool_calls(reply) == [ToolCall("fetch", {"id": "1"})]


# --------------------------------------------------------------------------- constraint


def test_one_branch_per_tool_with_const_names() -> None:
    schema = tool_call_schema(TOOLS)
    branches = schema["anyOf"]
    assert [b["properties"]["tool"] for b in branches] == [
        {"const": "fetch"},
        {"const": "submit"},
        {"const": "ping"},
    ]
    for branch in branches:
        assert branch["type"] == "object"
        assert branch["required"] == ["tool", "args"]
        assert branch["additionalProperties"] is False


def test_args_schema_is_closed_and_cleaned() -> None:
    fetch, submit, ping = tool_call_schema(TOOLS)["anyOf"]
    assert fetch["properties"]["args"] == {
        "type": "object",
        "properties": {"id": {"type": "string"}},
        "required": ["id"],
        "additionalProperties": False,
    }
    submit_args = submit["properties"]["args"]
    assert "$schema" not in submit_args and "title" not in submit_args
    assert submit_args["additionalProperties"] is False
    assert ping["properties"]["args"] == {
        "type": "object",
        "properties": {},
        "additionalProperties": False,
    }


def test_explicit_additional_properties_is_kept() -> None:
    open_tool = ToolSpec("open", parameters={"type": "object", "additionalProperties": True})
    schema = tool_call_schema([open_tool])
    assert schema["properties"]["args"]["additionalProperties"] is True


def test_tool_parameters_are_not_mutated() -> None:
    before = json.loads(json.dumps(SUBMIT.parameters))
    tool_call_schema(TOOLS)
    assert SUBMIT.parameters == before


def test_single_tool_has_no_any_of() -> None:
    schema = tool_call_schema([FETCH])
    assert "anyOf" not in schema
    assert schema["properties"]["tool"] == {"const": "fetch"}


def test_schema_is_a_valid_json_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(tool_call_schema(TOOLS))
    jsonschema.Draft202012Validator.check_schema(tool_call_schema([FETCH]))


@pytest.mark.parametrize(
    "instance",
    [
        {"tool": "fetch", "args": {"id": "1"}},
        {"tool": "submit", "args": {"answer": "x"}},
        {"tool": "submit", "args": {"answer": "x", "score": 3}},
        {"tool": "ping", "args": {}},
    ],
)
def test_schema_accepts_valid_calls(instance: dict[str, Any]) -> None:
    jsonschema.validate(instance, tool_call_schema(TOOLS))


@pytest.mark.parametrize(
    "instance",
    [
        {"tool": "delete_all", "args": {}},  # unknown tool
        {"tool": "fetch", "args": {}},  # missing required arg
        {"tool": "fetch", "args": {"id": 1}},  # wrong type
        {"tool": "fetch", "args": {"id": "1", "extra": True}},  # invented key
        {"tool": "ping", "args": {"x": 1}},
        {"tool": "fetch", "args": {"id": "1"}, "why": "because"},  # extra top-level key
        {"tool": "fetch"},  # no args
        {"name": "fetch", "arguments": {"id": "1"}},
    ],
)
def test_schema_rejects_invalid_calls(instance: dict[str, Any]) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(instance, tool_call_schema(TOOLS))


def test_single_tool_schema_rejects_other_tools() -> None:
    schema = tool_call_schema([FETCH])
    jsonschema.validate({"tool": "fetch", "args": {"id": "1"}}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"tool": "ping", "args": {}}, schema)


def test_parameters_with_local_refs_survive_nesting() -> None:
    tool = ToolSpec(
        "tag",
        parameters={
            "type": "object",
            "properties": {"label": {"$ref": "#/$defs/Label"}},
            "required": ["label"],
            "$defs": {"Label": {"type": "string", "maxLength": 8}},
        },
    )
    assert tool.validator.is_valid({"label": "ok"})  # the loop itself copes
    schema = tool_call_schema([tool, PING])
    jsonschema.validate({"tool": "tag", "args": {"label": "ok"}}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"tool": "tag", "args": {"label": 5}}, schema)


# --------------------------------------------------------------------------- llama-server


@pytest.fixture
async def backend() -> AsyncIterator[LlamaServerBackend]:
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


def conversation() -> list[Message]:
    return [
        Message(MessageRole.SYSTEM, "You audit records.", MessageType.SYSTEM_PROMPT),
        Message(MessageRole.USER, "Check record 1 and 2.", MessageType.USER_INPUT),
        Message(
            MessageRole.ASSISTANT,
            "",
            MessageType.TOOL_CALL,
            step_index=1,
            tool_calls=[
                ToolCallInfo("call_1_0", "fetch", {"id": "1"}),
                ToolCallInfo("call_1_1", "fetch", {"id": "2"}),
            ],
        ),
        Message(MessageRole.TOOL, "row 1", MessageType.TOOL_RESULT, 1, [], "call_1_0", "fetch"),
        Message(MessageRole.TOOL, "row 2", MessageType.TOOL_RESULT, 1, [], "call_1_1", "fetch"),
    ]


def chat_request(allowed: list[str], constrained: bool = True, **kw: Any) -> ChatRequest:
    return ChatRequest(
        run_id="r",
        workflow_name="wf",
        messages=kw.pop("messages", conversation()),
        tools=TOOLS,
        allowed=allowed,
        constrained=constrained,
        **kw,
    )


def test_backend_info(backend: LlamaServerBackend) -> None:
    info = backend.info()
    assert (info.name, info.model, info.context_budget_tokens, info.slots) == (
        "llama-server",
        "m",
        100,
        1,
    )
    assert info.url == "http://127.0.0.1:1"
    assert info.tool_call_mode == "constrained"


def test_request_body_basics(backend: LlamaServerBackend) -> None:
    body = backend.request_body(chat_request(["fetch"], temperature=0.3, max_tokens=77))
    assert body["temperature"] == 0.3
    assert body["max_tokens"] == 77
    assert body["stream"] is True
    assert body["cache_prompt"] is True


def grammar_calls(body: dict[str, Any]) -> list[str]:
    """The tool names the `call` rule of a compact GBNF grammar admits."""
    rules = dict(line.split(" ::= ", 1) for line in body["grammar"].splitlines())
    alternatives = [alt.strip() for alt in rules["call"].split("|")]
    names = []
    for alt in alternatives:
        match = re.search(r'"\\"tool\\"" sp ":" sp "\\"([^\\]+)\\""', rules[alt])
        assert match, rules[alt]
        names.append(match.group(1))
    return names


def test_grammar_only_admits_allowed_tools(backend: LlamaServerBackend) -> None:
    body = backend.request_body(chat_request(["fetch", "ping"]))
    assert "response_format" not in body
    assert grammar_calls(body) == ["fetch", "ping"]


def test_single_allowed_tool(backend: LlamaServerBackend) -> None:
    assert grammar_calls(backend.request_body(chat_request(["submit"]))) == ["submit"]


def test_empty_allowed_list_falls_back_to_every_tool(backend: LlamaServerBackend) -> None:
    body = backend.request_body(chat_request([]))
    assert grammar_calls(body) == ["fetch", "submit", "ping"]


def test_schema_outside_the_grammar_subset_uses_response_format(
    backend: LlamaServerBackend,
) -> None:
    pattern_tool = ToolSpec(
        "code",
        parameters={
            "type": "object",
            # allOf: a shape the grammar does not write (a pattern now has a rule).
            "properties": {"code": {"allOf": [{"type": "string"}, {"maxLength": 3}]}},
            "required": ["code"],
        },
    )
    request = chat_request(["code"])
    request.tools = [*request.tools, pattern_tool]
    body = backend.request_body(request)
    assert "grammar" not in body
    schema = body["response_format"]["json_schema"]["schema"]
    jsonschema.validate({"tool": "code", "args": {"code": "ABC"}}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"tool": "fetch", "args": {"id": "1"}}, schema)


def test_no_response_format_when_unconstrained(backend: LlamaServerBackend) -> None:
    body = backend.request_body(chat_request([], constrained=False))
    assert "response_format" not in body and "grammar" not in body
    body = backend.request_body(chat_request(["fetch"], constrained=False))
    assert "response_format" not in body and "grammar" not in body


def test_system_prompt_lists_every_tool(backend: LlamaServerBackend) -> None:
    # Only 'fetch' is allowed this turn, but the model is told about all tools.
    messages = backend.request_body(chat_request(["fetch"]))["messages"]
    system = messages[0]
    assert system["role"] == "system"
    assert system["content"].startswith("You audit records.")
    assert "- fetch(id: string): Fetch a record by id" in system["content"]
    # score is optional: marked with "?" (parameter docs).
    assert "- submit(answer: string, score?: integer): Submit the final answer" in system["content"]
    assert "- ping()" in system["content"]
    assert '{"tool": "<name>", "args": {...}}' in system["content"]
    assert sum(m["role"] == "system" for m in messages) == 1


def test_system_prompt_is_added_when_missing(backend: LlamaServerBackend) -> None:
    body = backend.request_body(chat_request(["fetch"], messages=conversation()[1:]))
    messages = body["messages"]
    assert messages[0]["role"] == "system"
    assert "- fetch(id: string)" in messages[0]["content"]
    assert messages[1] == {"role": "user", "content": "Check record 1 and 2."}


def test_tool_call_messages_are_serialised_as_tool_args_json(
    backend: LlamaServerBackend,
) -> None:
    messages = backend.request_body(chat_request(["fetch"]))["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool"]
    # Two calls in one turn read back as the array form of the parallel grammar.
    assert json.loads(messages[2]["content"]) == [
        {"tool": "fetch", "args": {"id": "1"}},
        {"tool": "fetch", "args": {"id": "2"}},
    ]
    # What the model reads back parses as the calls it made.
    assert parse_tool_calls(messages[2]["content"]) == [
        ToolCall("fetch", {"id": "1"}),
        ToolCall("fetch", {"id": "2"}),
    ]
    assert messages[3] == {"role": "tool", "content": "row 1"}
    assert messages[4] == {"role": "tool", "content": "row 2"}


def test_parse_props_realistic() -> None:
    props = {
        "default_generation_settings": {"n_ctx": 2048, "temperature": 0.8},
        "total_slots": 2,
        "model_path": "/x/gemma.gguf",
        "chat_template": "...",
    }
    assert parse_props(props) == (2048, 2, "gemma.gguf")


def test_parse_props_defaults() -> None:
    props = {"default_generation_settings": {"n_ctx": "4096"}, "model_alias": "gemma"}
    assert parse_props(props) == (4096, 1, "gemma")
    assert parse_props({"default_generation_settings": {"n_ctx": 512}}) == (512, 1, "unknown")


@pytest.mark.parametrize(
    "props",
    [
        {"total_slots": 2, "model_path": "/x/gemma.gguf"},
        {"default_generation_settings": {}, "total_slots": 2},
        {"default_generation_settings": None},
        {"default_generation_settings": {"n_ctx": "lots"}},
    ],
)
def test_parse_props_without_n_ctx(props: dict[str, Any]) -> None:
    with pytest.raises(BackendError) as info:
        parse_props(props)
    assert "n_ctx" in info.value.message
    assert info.value.reason is FailureReason.BACKEND


@pytest.mark.parametrize(
    "body",
    [
        '{"error": {"code": 400, "type": "exceed_context_size_error", "message": "too long"}}',
        "the request exceeds the available context size, try increasing it",
    ],
)
def test_http_error_context_exceeded(body: str) -> None:
    err = http_error(400, body)
    assert isinstance(err, ContextBudgetExceededError)
    assert err.reason is FailureReason.CONTEXT_BUDGET_EXCEEDED
    assert err.details["status"] == "400"


def test_http_error_other() -> None:
    err = http_error(503, "Loading model" + "x" * 2000)
    assert isinstance(err, BackendError)
    assert not isinstance(err, ContextBudgetExceededError)
    assert err.reason is FailureReason.BACKEND
    assert err.details["status"] == "503"
    assert "HTTP 503" in err.message
    assert "Loading model" in err.message
    assert len(err.message) < 600
