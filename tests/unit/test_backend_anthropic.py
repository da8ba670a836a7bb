"""The Anthropic backend against recorded request/response shapes.

The Anthropic API cannot be reached here (no network, no key), so the real
`anthropic` SDK client is given an HTTP client over a MockTransport (the SDK
uses httpx2, pydantic's httpx fork, so the transport is httpx2.MockTransport)
that checks the `/v1/messages` request and answers with the server-sent events
the Messages API streams: message_start (with usage), content_block_start /
_delta / _stop for text, tool_use (input_json_delta fragments) and thinking,
message_delta (output usage), message_stop, and `error` events.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import anthropic
import httpx2
import pytest

from forge_core.backends.anthropic_backend import AnthropicBackend
from forge_core.backends.base import (
    BackendReply,
    ChatRequest,
    ChunkType,
    StreamChunk,
    TextResponse,
    ToolCall,
)
from forge_core.backends.native import NOT_EXECUTED
from forge_core.errors import BackendError, ContextBudgetExceededError
from forge_core.messages import Message, MessageRole, MessageType, ToolCallInfo
from forge_core.parsing import parse_tool_calls
from tests.unit.native_history import request

Handler = Callable[[httpx2.Request], httpx2.Response]
MODEL = "claude-sonnet-5-5"


def sse(*events: dict[str, Any]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


def start(input_tokens: int = 472, cache_read: int = 100) -> dict[str, Any]:
    return {
        "type": "message_start",
        "message": {
            "id": "msg_01XFDUDYJgAACzvnptvVoYEL",
            "type": "message",
            "role": "assistant",
            "content": [],
            "model": MODEL,
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {
                "input_tokens": input_tokens,
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": cache_read,
                "output_tokens": 2,
            },
        },
    }


def block_start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def delta(index: int, d: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": d}


def text_delta(index: int, text: str) -> dict[str, Any]:
    return delta(index, {"type": "text_delta", "text": text})


def json_delta(index: int, partial: str) -> dict[str, Any]:
    return delta(index, {"type": "input_json_delta", "partial_json": partial})


def tool_start(index: int, id: str, name: str) -> dict[str, Any]:
    return block_start(index, {"type": "tool_use", "id": id, "name": name, "input": {}})


def stop(index: int) -> dict[str, Any]:
    return {"type": "content_block_stop", "index": index}


def end(output_tokens: int = 89, reason: str = "tool_use") -> list[dict[str, Any]]:
    return [
        {
            "type": "message_delta",
            "delta": {"stop_reason": reason, "stop_sequence": None},
            "usage": {"output_tokens": output_tokens},
        },
        {"type": "message_stop"},
    ]


def streamed(*events: dict[str, Any]) -> httpx2.Response:
    return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=sse(*events))


LOOKUP_CALL = [
    start(),
    tool_start(0, "toolu_01A", "lookup"),
    json_delta(0, ""),
    json_delta(0, '{"id": '),
    json_delta(0, '"7"}'),
    stop(0),
    *end(),
]


class Server:
    def __init__(self, *responses: httpx2.Response | Handler) -> None:
        self.responses = list(responses)
        self.requests: list[httpx2.Request] = []

    def __call__(self, req: httpx2.Request) -> httpx2.Response:
        self.requests.append(req)
        nxt = self.responses.pop(0)
        return nxt(req) if callable(nxt) else nxt

    def body(self, i: int = 0) -> Any:
        return json.loads(self.requests[i].content)


def backend(server: Server, **kw: Any) -> AnthropicBackend:
    client = anthropic.AsyncAnthropic(
        api_key="sk-ant-test",
        base_url="http://anthropic.test",
        max_retries=0,
        http_client=httpx2.AsyncClient(transport=httpx2.MockTransport(server)),
    )
    return AnthropicBackend(model=MODEL, client=client, **kw)


async def complete(
    server: Server, req: ChatRequest | None = None, **kw: Any
) -> tuple[BackendReply, list[StreamChunk]]:
    chunks: list[StreamChunk] = []

    async def sink(c: StreamChunk) -> None:
        chunks.append(c)

    b = backend(server, **kw)
    try:
        reply = await b.complete(req or request(), sink)
    finally:
        await b.aclose()
    return reply, chunks


# ------------------------------------------------------------------ request body


async def test_request_body_system_tools_and_paired_history() -> None:
    server = Server(streamed(*LOOKUP_CALL))
    await complete(server)
    req = server.requests[0]
    assert str(req.url) == "http://anthropic.test/v1/messages"
    assert req.headers["authorization"] == "Bearer sk-ant-test"
    assert "anthropic-version" in req.headers
    assert server.body() == {
        "model": MODEL,
        "max_tokens": 256,
        "system": "You are careful.",
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "Find order 7"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "I will look."}]},
            {"role": "user", "content": [{"type": "text", "text": "Call a tool."}]},
            {
                "role": "assistant",
                "content": [
                    # The replayed reasoning leads the tool-call turn it produced.
                    {"type": "text", "text": "Need the order first."},
                    {"type": "tool_use", "id": "call_1", "name": "lookup", "input": {"id": "7"}},
                    {
                        "type": "tool_use",
                        "id": "call_2",
                        "name": "notes_add",
                        "input": {"text": "x"},
                    },
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "call_1", "content": "order 7: shipped"},
                    # call_2 had no result: a synthetic error answers it; the
                    # orphan result for call_0 is dropped.
                    {
                        "type": "tool_result",
                        "tool_use_id": "call_2",
                        "content": NOT_EXECUTED,
                        "is_error": True,
                    },
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "call_3",
                        "name": "submit",
                        "input": {"answer": "shipped"},
                    }
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "call_3",
                        "content": "Call lookup before submit.",
                    }
                ],
            },
        ],
        "tools": [
            {
                "name": "lookup",
                "description": "Look an order up",
                "input_schema": {
                    "type": "object",
                    "properties": {"id": {"type": "string"}},
                    "required": ["id"],
                },
            },
            {
                "name": "notes_add",
                "input_schema": {"type": "object", "properties": {"text": {"type": "string"}}},
            },
        ],
        "tool_choice": {"type": "any", "disable_parallel_tool_use": True},
        "stream": True,
    }


async def test_merging_reordering_and_a_trailing_unanswered_call() -> None:
    a, u = MessageRole.ASSISTANT, MessageRole.USER
    msgs = [
        Message(MessageRole.SYSTEM, "Sys.", MessageType.SYSTEM_PROMPT),
        Message(u, "go", MessageType.USER_INPUT),
        Message(a, "", MessageType.TOOL_CALL, tool_calls=[ToolCallInfo("c1", "lookup", {})]),
        # A user message between the call and its result.
        Message(u, "hurry", MessageType.RETRY_NUDGE),
        Message(MessageRole.TOOL, "ok", MessageType.TOOL_RESULT, tool_call_id="c1"),
        Message(u, "again", MessageType.RETRY_NUDGE),
        Message(a, "", MessageType.TEXT_RESPONSE),  # empty: nothing to send
        Message(a, "thinking aloud", MessageType.TEXT_RESPONSE),
        Message(a, "", MessageType.TOOL_CALL, tool_calls=[ToolCallInfo("c2", "lookup", {})]),
        # The transcript ends before c2 was answered.
    ]
    server = Server(streamed(*LOOKUP_CALL))
    await complete(server, request(msgs))
    body = server.body()
    assert body["system"] == "Sys."
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "go"}]},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "c1", "name": "lookup", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "c1", "content": "ok"},
                {"type": "text", "text": "hurry"},
                {"type": "text", "text": "again"},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "thinking aloud"},
                {"type": "tool_use", "id": "c2", "name": "lookup", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "c2",
                    "content": NOT_EXECUTED,
                    "is_error": True,
                }
            ],
        },
    ]
    roles = [m["role"] for m in body["messages"]]
    assert all(x != y for x, y in itertools.pairwise(roles))


async def test_unconstrained_parallel_turn_uses_auto_and_every_tool() -> None:
    server = Server(streamed(*LOOKUP_CALL))
    await complete(server, request(allowed=[], constrained=False, parallel=True))
    body = server.body()
    assert body["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": False}
    assert [t["name"] for t in body["tools"]] == ["lookup", "notes_add", "submit"]


async def test_a_turn_with_no_tools_sends_no_tool_fields() -> None:
    """A plain chat: the API refuses a tool_choice without tools."""
    server = Server(streamed(*LOOKUP_CALL))
    plain = request(allowed=[], constrained=False)
    plain.tools = []
    await complete(server, plain)
    assert not {"tools", "tool_choice"} & set(server.body())


async def test_tool_choice_any_can_be_switched_off() -> None:
    server = Server(streamed(*LOOKUP_CALL))
    await complete(server, tool_choice_any=False)
    assert server.body()["tool_choice"]["type"] == "auto"


# ------------------------------------------------------------------ streamed answers


async def test_tool_use_input_split_across_deltas() -> None:
    server = Server(streamed(*LOOKUP_CALL))
    reply, chunks = await complete(server)
    assert reply.response == [ToolCall("lookup", {"id": "7"})]
    assert [(c.type, c.content) for c in chunks] == [
        (ChunkType.TOOL_CALL_DELTA, "lookup"),
        (ChunkType.TOOL_CALL_DELTA, '{"id": '),
        (ChunkType.TOOL_CALL_DELTA, '"7"}'),
        (ChunkType.FINAL, ""),
    ]


async def test_two_parallel_tool_uses_with_text_and_thinking() -> None:
    server = Server(
        streamed(
            start(),
            block_start(0, {"type": "thinking", "thinking": "", "signature": ""}),
            delta(0, {"type": "thinking_delta", "thinking": "Both are "}),
            delta(0, {"type": "thinking_delta", "thinking": "needed."}),
            delta(0, {"type": "signature_delta", "signature": "EqQBCgIYAhIM"}),
            stop(0),
            block_start(1, {"type": "text", "text": ""}),
            text_delta(1, "Looking up and noting."),
            stop(1),
            tool_start(2, "toolu_01", "lookup"),
            json_delta(2, '{"id": "1"}'),
            stop(2),
            tool_start(3, "toolu_02", "notes_add"),
            json_delta(3, '{"text"'),
            json_delta(3, ': "n"}'),
            stop(3),
            *end(),
        )
    )
    reply, chunks = await complete(server, request(parallel=True))
    assert reply.response == [ToolCall("lookup", {"id": "1"}), ToolCall("notes.add", {"text": "n"})]
    assert reply.reasoning == "Both are needed.\nLooking up and noting."
    assert (ChunkType.TEXT_DELTA, "Looking up and noting.") in [(c.type, c.content) for c in chunks]


async def test_text_answer() -> None:
    server = Server(
        streamed(
            start(),
            block_start(0, {"type": "text", "text": ""}),
            text_delta(0, "Which "),
            text_delta(0, "order?"),
            stop(0),
            *end(7, "end_turn"),
        )
    )
    reply, chunks = await complete(server)
    assert reply.response == TextResponse("Which order?")
    assert reply.reasoning == ""
    assert [(c.type, c.content) for c in chunks] == [
        (ChunkType.TEXT_DELTA, "Which "),
        (ChunkType.TEXT_DELTA, "order?"),
        (ChunkType.FINAL, ""),
    ]


async def test_usage_from_message_start_and_message_delta() -> None:
    server = Server(streamed(*LOOKUP_CALL))
    reply, _ = await complete(server)
    u = reply.usage
    # input 472 + 100 read from the prompt cache.
    assert (u.model_calls, u.prompt_tokens, u.cached_prompt_tokens, u.completion_tokens) == (
        1,
        572,
        100,
        89,
    )


async def test_truncated_tool_input_becomes_a_text_response() -> None:
    server = Server(
        streamed(
            start(),
            tool_start(0, "toolu_01", "lookup"),
            json_delta(0, '{"id": "12'),
            stop(0),
            *end(256, "max_tokens"),
        )
    )
    reply, _ = await complete(server)
    assert reply.response == TextResponse('{"tool": "lookup", "args": {"id": "12}')
    assert parse_tool_calls(reply.response.content) is None


async def test_tool_use_without_input_means_no_arguments() -> None:
    server = Server(streamed(start(), tool_start(0, "toolu_01", "submit"), stop(0), *end()))
    reply, _ = await complete(server)
    assert reply.response == [ToolCall("submit", {})]


# ------------------------------------------------------------------ errors


def error_response(status: int, kind: str, message: str) -> httpx2.Response:
    return httpx2.Response(
        status, json={"type": "error", "error": {"type": kind, "message": message}}
    )


async def test_api_error_maps_to_backend_error() -> None:
    server = Server(error_response(401, "authentication_error", "invalid x-api-key"))
    with pytest.raises(BackendError, match=r"HTTP 401.*invalid x-api-key") as info:
        await complete(server)
    assert info.value.details["status"] == "401"


async def test_prompt_too_long_maps_to_context_budget_error() -> None:
    server = Server(
        error_response(400, "invalid_request_error", "prompt is too long: 208432 tokens > 200000")
    )
    with pytest.raises(ContextBudgetExceededError, match="prompt is too long"):
        await complete(server)


async def test_error_event_mid_stream() -> None:
    server = Server(
        streamed(
            start(),
            block_start(0, {"type": "text", "text": ""}),
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        )
    )
    with pytest.raises(BackendError, match="Overloaded"):
        await complete(server)


async def test_connection_failure_is_a_backend_error() -> None:
    def refuse(req: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("connection refused", request=req)

    with pytest.raises(BackendError, match="anthropic API call failed"):
        await complete(Server(refuse))


async def test_stream_cut_before_message_stop_is_retried_once() -> None:
    def cut(_: httpx2.Request) -> httpx2.Response:
        return streamed(start(), tool_start(0, "toolu_01", "lookup"))

    server = Server(cut, streamed(*LOOKUP_CALL))
    reply, chunks = await complete(server)
    assert reply.response == [ToolCall("lookup", {"id": "7"})]
    assert [c.type for c in chunks][:2] == [ChunkType.TOOL_CALL_DELTA, ChunkType.RETRY]
    with pytest.raises(BackendError, match="without message_stop"):
        await complete(Server(cut, cut))


class _ResetMidway(httpx2.AsyncByteStream):
    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield sse(start(), tool_start(0, "toolu_01", "lookup"))
        raise httpx2.ReadError("connection reset by peer")


async def test_transport_error_mid_stream_is_a_backend_error() -> None:
    def reset(_: httpx2.Request) -> httpx2.Response:
        return httpx2.Response(
            200, headers={"content-type": "text/event-stream"}, stream=_ResetMidway()
        )

    server = Server(reset, reset)
    with pytest.raises(BackendError, match="connection reset by peer"):
        await complete(server)
    assert len(server.requests) == 2


def test_info_reports_native_mode_and_the_default_budget() -> None:
    b = AnthropicBackend(model=MODEL, api_key="k")
    info = b.info()
    assert (info.name, info.model, info.context_budget_tokens, info.tool_call_mode) == (
        "anthropic",
        MODEL,
        200_000,
        "native",
    )
