"""The OpenAI-compatible backend against recorded request/response shapes.

No vLLM, LM Studio or OpenAI server can run here (no network, no GPU), so the
backend talks to an httpx.MockTransport that checks the request it gets and
answers with server-sent events in the shape vLLM and the OpenAI API stream
(`chat.completion.chunk` objects, `delta.tool_calls` fragments by index, a
final `usage` chunk for `stream_options.include_usage`, then `[DONE]`).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from forge_core.backends.base import (
    BackendReply,
    ChatRequest,
    ChunkType,
    StreamChunk,
    TextResponse,
    ToolCall,
)
from forge_core.backends.native import NOT_EXECUTED
from forge_core.backends.openai_compat import OpenAICompatBackend, api_base
from forge_core.errors import BackendError, ContextBudgetExceededError
from forge_core.messages import Message, MessageRole, MessageType
from forge_core.parsing import parse_tool_calls
from tests.unit.native_history import request

Handler = Callable[[httpx.Request], httpx.Response]


def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1732000000,
        "model": "qwen3-8b",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
    }


def tool_delta(index: int, *, id: str = "", name: str = "", args: str = "") -> dict[str, Any]:
    fragment: dict[str, Any] = {"index": index, "function": {}}
    if id:
        fragment["id"] = id
        fragment["type"] = "function"
    if name:
        fragment["function"]["name"] = name
    if args:
        fragment["function"]["arguments"] = args
    return chunk({"tool_calls": [fragment]})


USAGE = {
    "id": "chatcmpl-1",
    "object": "chat.completion.chunk",
    "created": 1732000000,
    "model": "qwen3-8b",
    "choices": [],
    "usage": {
        "prompt_tokens": 412,
        "completion_tokens": 23,
        "total_tokens": 435,
        "prompt_tokens_details": {"cached_tokens": 256},
    },
}


def sse(*events: dict[str, Any] | str) -> bytes:
    lines = [f"data: {e if isinstance(e, str) else json.dumps(e)}\n\n" for e in events]
    return "".join(lines).encode()


def stream_response(*events: dict[str, Any] | str) -> httpx.Response:
    return httpx.Response(
        200, headers={"content-type": "text/event-stream"}, content=sse(*events, "[DONE]")
    )


class Server:
    """Records requests; answers each POST with the next queued response."""

    def __init__(self, *responses: httpx.Response | Handler) -> None:
        self.responses = list(responses)
        self.requests: list[httpx.Request] = []

    def __call__(self, req: httpx.Request) -> httpx.Response:
        self.requests.append(req)
        nxt = self.responses.pop(0)
        return nxt(req) if callable(nxt) else nxt

    def body(self, i: int = 0) -> Any:
        return json.loads(self.requests[i].content)


def backend(server: Server, **kw: Any) -> OpenAICompatBackend:
    return OpenAICompatBackend(
        "http://vllm.test:8000/v1",
        model="qwen3-8b",
        context_budget_tokens=32768,
        api_key=kw.pop("api_key", "sk-test"),
        transport=httpx.MockTransport(server),
        **kw,
    )


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


CALL_LOOKUP = [
    chunk({"role": "assistant", "content": ""}),
    tool_delta(0, id="chatcmpl-tool-a1", name="lookup"),
    tool_delta(0, args='{"id"'),
    tool_delta(0, args=': "7'),
    tool_delta(0, args='"}'),
    chunk({}, finish="tool_calls"),
    USAGE,
]


# ------------------------------------------------------------------ request body


async def test_request_body_tools_messages_and_headers() -> None:
    server = Server(stream_response(*CALL_LOOKUP))
    await complete(server)
    req = server.requests[0]
    assert req.method == "POST"
    assert str(req.url) == "http://vllm.test:8000/v1/chat/completions"
    assert req.headers["authorization"] == "Bearer sk-test"
    assert server.body() == {
        "model": "qwen3-8b",
        "messages": [
            {"role": "system", "content": "You are careful."},
            {"role": "user", "content": "Find order 7"},
            # "old thought" is not replayed under keep_last.
            {"role": "assistant", "content": "I will look."},
            {"role": "user", "content": "Call a tool."},
            {
                "role": "assistant",
                "content": "Need the order first.",
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "lookup", "arguments": '{"id":"7"}'},
                    },
                    {
                        "id": "call_2",
                        "type": "function",
                        "function": {"name": "notes_add", "arguments": '{"text":"x"}'},
                    },
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "order 7: shipped"},
            # No result was recorded for call_2; the orphan "stale" is gone.
            {"role": "tool", "tool_call_id": "call_2", "content": NOT_EXECUTED},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_3",
                        "type": "function",
                        "function": {"name": "submit", "arguments": '{"answer":"shipped"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_3", "content": "Call lookup before submit."},
        ],
        # Only the tools allowed this turn, dotted name made API-safe.
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "lookup",
                    "description": "Look an order up",
                    "parameters": {
                        "type": "object",
                        "properties": {"id": {"type": "string"}},
                        "required": ["id"],
                    },
                },
            },
            {
                "type": "function",
                "function": {
                    "name": "notes_add",
                    "parameters": {
                        "type": "object",
                        "properties": {"text": {"type": "string"}},
                    },
                },
            },
        ],
        "tool_choice": "required",
        "parallel_tool_calls": False,
        "temperature": 0.2,
        "max_tokens": 256,
        "stream": True,
        "stream_options": {"include_usage": True},
    }


async def test_full_reasoning_replay_folds_every_thought() -> None:
    server = Server(stream_response(*CALL_LOOKUP))
    await complete(server, request(reasoning_replay="full"))
    messages = server.body()["messages"]
    assert messages[2] == {"role": "assistant", "content": "old thought\n\nI will look."}
    assert messages[4]["content"] == "Need the order first."


async def test_no_reasoning_replay() -> None:
    server = Server(stream_response(*CALL_LOOKUP))
    await complete(server, request(reasoning_replay="none"))
    messages = server.body()["messages"]
    assert messages[4]["content"] is None
    assert "old thought" not in json.dumps(messages)


async def test_unconstrained_turn_offers_every_tool_without_tool_choice() -> None:
    server = Server(stream_response(*CALL_LOOKUP))
    await complete(server, request(allowed=[], constrained=False, parallel=True))
    body = server.body()
    assert [t["function"]["name"] for t in body["tools"]] == ["lookup", "notes_add", "submit"]
    assert body["tools"][2]["function"]["parameters"] == {
        "type": "object",
        "properties": {"answer": {"type": "string"}},
        "required": ["answer"],
    }
    assert "tool_choice" not in body
    assert body["parallel_tool_calls"] is True


async def test_a_turn_with_no_tools_sends_no_tool_fields() -> None:
    """A plain chat: the OpenAI API refuses `tools: []` and
    parallel_tool_calls without tools."""
    server = Server(stream_response(*CALL_LOOKUP))
    plain = request(allowed=[], constrained=False)
    plain.tools = []
    await complete(server, plain)
    body = server.body()
    assert not {"tools", "parallel_tool_calls", "tool_choice"} & set(body)


async def test_tool_choice_flag_off_and_no_api_key() -> None:
    server = Server(stream_response(*CALL_LOOKUP))
    await complete(server, tool_choice_required=False, api_key="")
    assert "tool_choice" not in server.body()
    assert "authorization" not in server.requests[0].headers


def test_api_base_appends_v1_only_to_a_bare_host() -> None:
    assert api_base("http://h:8000") == "http://h:8000/v1"
    assert api_base("http://h:8000/") == "http://h:8000/v1"
    assert api_base("http://h:1234/v1/") == "http://h:1234/v1"
    assert api_base("https://h/openai/v1") == "https://h/openai/v1"


# ------------------------------------------------------------------ streamed answers


async def test_arguments_split_across_chunks() -> None:
    server = Server(stream_response(*CALL_LOOKUP))
    reply, chunks = await complete(server)
    assert reply.response == [ToolCall("lookup", {"id": "7"})]
    assert reply.reasoning == ""
    assert [(c.type, c.content) for c in chunks] == [
        (ChunkType.TOOL_CALL_DELTA, "lookup"),
        (ChunkType.TOOL_CALL_DELTA, '{"id"'),
        (ChunkType.TOOL_CALL_DELTA, ': "7'),
        (ChunkType.TOOL_CALL_DELTA, '"}'),
        (ChunkType.FINAL, ""),
    ]


async def test_two_parallel_calls_interleaved_by_index() -> None:
    server = Server(
        stream_response(
            chunk({"role": "assistant"}),
            tool_delta(0, id="t0", name="lookup"),
            tool_delta(1, id="t1", name="notes_add"),
            tool_delta(1, args='{"text": "a'),
            tool_delta(0, args='{"id": '),
            tool_delta(1, args='b"}'),
            tool_delta(0, args='"9"}'),
            chunk({}, finish="tool_calls"),
            USAGE,
        )
    )
    reply, _ = await complete(server, request(parallel=True))
    # The wire name notes_add maps back to the workflow's notes.add.
    assert reply.response == [
        ToolCall("lookup", {"id": "9"}),
        ToolCall("notes.add", {"text": "ab"}),
    ]


async def test_empty_arguments_mean_no_arguments() -> None:
    server = Server(
        stream_response(tool_delta(0, id="t0", name="submit"), chunk({}, finish="tool_calls"))
    )
    reply, _ = await complete(server)
    assert reply.response == [ToolCall("submit", {})]


async def test_text_answer_with_reasoning_content() -> None:
    server = Server(
        stream_response(
            chunk({"role": "assistant", "content": ""}),
            chunk({"reasoning_content": "The user wants "}),
            chunk({"reasoning_content": "an order."}),
            chunk({"content": "Which "}),
            chunk({"content": "order?"}),
            chunk({}, finish="stop"),
            USAGE,
        )
    )
    reply, chunks = await complete(server)
    assert reply.response == TextResponse("Which order?")
    assert reply.reasoning == "The user wants an order."
    assert reply.raw_text == "Which order?"
    assert [(c.type, c.content) for c in chunks] == [
        (ChunkType.TEXT_DELTA, "Which "),
        (ChunkType.TEXT_DELTA, "order?"),
        (ChunkType.FINAL, ""),
    ]


async def test_newer_vllm_reasoning_field_and_text_beside_a_call() -> None:
    server = Server(
        stream_response(
            chunk({"reasoning": "Look it up."}),
            chunk({"content": "Checking order 7."}),
            tool_delta(0, id="t0", name="lookup", args='{"id": "7"}'),
            chunk({}, finish="tool_calls"),
        )
    )
    reply, _ = await complete(server)
    assert reply.response == [ToolCall("lookup", {"id": "7"})]
    # Text said alongside a call is kept as reasoning, not lost.
    assert reply.reasoning == "Look it up.\nChecking order 7."


async def test_usage_from_the_final_chunk() -> None:
    server = Server(stream_response(*CALL_LOOKUP))
    reply, _ = await complete(server)
    u = reply.usage
    assert (u.model_calls, u.prompt_tokens, u.completion_tokens, u.cached_prompt_tokens) == (
        1,
        412,
        23,
        256,
    )
    assert u.prompt_ms >= 0.0 and u.generation_ms >= 0.0


async def test_malformed_arguments_become_a_text_response_for_the_rescue_path() -> None:
    server = Server(
        stream_response(
            tool_delta(0, id="t0", name="lookup"),
            tool_delta(0, args='{"id": "7"'),  # never closed: the model ran out of tokens
            chunk({}, finish="length"),
        )
    )
    reply, _ = await complete(server)
    assert reply.response == TextResponse('{"tool": "lookup", "args": {"id": "7"}')
    assert reply.raw_text == '{"tool": "lookup", "args": {"id": "7"}'
    # The engine's rescue cannot make a call of it, so it costs a retry.
    assert parse_tool_calls(reply.response.content) is None


async def test_stream_ending_with_finish_reason_but_no_done_is_complete() -> None:
    body = sse(tool_delta(0, id="t0", name="submit", args='{"answer": "ok"}'))
    body += sse(chunk({}, finish="tool_calls"))
    server = Server(httpx.Response(200, content=body))
    reply, _ = await complete(server)
    assert reply.response == [ToolCall("submit", {"answer": "ok"})]


async def test_broken_stream_is_retried_once_with_a_retry_chunk() -> None:
    cut = httpx.Response(200, content=sse(tool_delta(0, id="t0", name="lookup")))
    server = Server(cut, stream_response(*CALL_LOOKUP))
    reply, chunks = await complete(server)
    assert reply.response == [ToolCall("lookup", {"id": "7"})]
    assert len(server.requests) == 2
    assert [c.type for c in chunks][:2] == [ChunkType.TOOL_CALL_DELTA, ChunkType.RETRY]


async def test_stream_broken_twice_is_a_backend_error() -> None:
    def cut(_: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=sse(chunk({"content": "hal"})))

    with pytest.raises(BackendError, match=r"without \[DONE\]"):
        await complete(Server(cut, cut))


# ------------------------------------------------------------------ errors


async def test_http_error_maps_to_backend_error() -> None:
    server = Server(
        httpx.Response(
            401,
            json={
                "error": {
                    "message": "Incorrect API key provided",
                    "type": "invalid_request_error",
                    "code": "invalid_api_key",
                }
            },
        )
    )
    with pytest.raises(BackendError, match=r"HTTP 401.*Incorrect API key") as info:
        await complete(server)
    assert info.value.details["status"] == "401"
    assert len(server.requests) == 1  # not retried


@pytest.mark.parametrize(
    "message",
    [
        # vLLM
        "This model's maximum context length is 4096 tokens. However, you requested "
        "5120 tokens (4864 in the messages, 256 in the completion).",
        # OpenAI
        "context_length_exceeded",
    ],
)
async def test_context_overflow_maps_to_context_budget_error(message: str) -> None:
    server = Server(
        httpx.Response(
            400,
            json={"object": "error", "message": message, "type": "BadRequestError", "code": 400},
        )
    )
    with pytest.raises(ContextBudgetExceededError):
        await complete(server)


async def test_error_event_inside_the_stream() -> None:
    server = Server(
        stream_response({"error": {"message": "model overloaded", "code": 503}}),
    )
    with pytest.raises(BackendError, match=r"HTTP 503.*overloaded"):
        await complete(server)


async def test_connection_failure_is_a_backend_error() -> None:
    def refuse(req: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=req)

    with pytest.raises(BackendError, match="connection refused"):
        await complete(Server(refuse, refuse))


# ------------------------------------------------------------------ start-up


async def test_connect_discovers_model_and_budget_from_models() -> None:
    seen: list[str] = []

    def models(req: httpx.Request) -> httpx.Response:
        seen.append(f"{req.method} {req.url} {req.headers.get('authorization')}")
        return httpx.Response(
            200,
            json={
                "object": "list",
                "data": [
                    {
                        "id": "Qwen/Qwen3-8B",
                        "object": "model",
                        "owned_by": "vllm",
                        "max_model_len": 40960,
                    }
                ],
            },
        )

    b = await OpenAICompatBackend.connect(
        "http://vllm.test:8000", api_key="k", transport=httpx.MockTransport(models)
    )
    info = b.info()
    await b.aclose()
    assert seen == ["GET http://vllm.test:8000/v1/models Bearer k"]
    assert (info.name, info.model, info.context_budget_tokens, info.budget_mode) == (
        "openai",
        "Qwen/Qwen3-8B",
        40960,
        "backend",
    )
    assert info.tool_call_mode == "native"


async def test_connect_with_model_and_budget_asks_nothing() -> None:
    def fail(req: httpx.Request) -> httpx.Response:
        raise AssertionError("no request expected")

    b = await OpenAICompatBackend.connect(
        "http://lmstudio.test:1234/v1",
        model="mistral-small",
        budget_tokens=16384,
        transport=httpx.MockTransport(fail),
    )
    info = b.info()
    await b.aclose()
    assert (info.model, info.context_budget_tokens, info.budget_mode) == (
        "mistral-small",
        16384,
        "manual",
    )


async def test_connect_without_max_model_len_uses_the_default_budget() -> None:
    def models(req: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"data": [{"id": "local-model", "object": "model"}]})

    b = await OpenAICompatBackend.connect(
        "http://lmstudio.test:1234/v1", model="local-model", transport=httpx.MockTransport(models)
    )
    info = b.info()
    await b.aclose()
    assert (info.context_budget_tokens, info.budget_mode) == (8192, "default")


async def test_only_text_messages_when_there_is_no_tool_history() -> None:
    msgs = [
        Message(MessageRole.SYSTEM, "S", MessageType.SYSTEM_PROMPT),
        Message(MessageRole.USER, "U", MessageType.USER_INPUT),
    ]
    server = Server(stream_response(*CALL_LOOKUP))
    await complete(server, request(msgs))
    assert server.body()["messages"] == [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "U"},
    ]
