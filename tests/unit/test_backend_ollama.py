"""The Ollama backend against recorded request/response shapes.

No Ollama server can run here (no network, no models), so the backend talks to
an httpx.MockTransport that checks the request it gets and answers in the
shapes Ollama's `/api/chat` streams (NDJSON lines with `message.content`,
`message.thinking` and whole `message.tool_calls` whose arguments are
objects, then a `done` line with the eval counts and nanosecond durations) and
`/api/show` returns (`model_info` with `<arch>.context_length`, `parameters`).
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
from forge_core.backends.ollama import OllamaBackend, context_length
from forge_core.errors import BackendError, ContextBudgetExceededError
from forge_core.parsing import parse_tool_calls
from tests.unit.native_history import request

Handler = Callable[[httpx.Request], httpx.Response]
STAMP = "2025-05-27T22:54:58.100509Z"


def line(content: str = "", *, thinking: str = "", tool_calls: Any = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if thinking:
        message["thinking"] = thinking
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    return {"model": "qwen3:8b", "created_at": STAMP, "message": message, "done": False}


DONE = {
    "model": "qwen3:8b",
    "created_at": STAMP,
    "message": {"role": "assistant", "content": ""},
    "done_reason": "stop",
    "done": True,
    "total_duration": 2181095167,
    "load_duration": 14547042,
    "prompt_eval_count": 186,
    "prompt_eval_duration": 166340709,
    "eval_count": 49,
    "eval_duration": 1999404500,
}


def ndjson(*events: dict[str, Any]) -> httpx.Response:
    body = "".join(json.dumps(e) + "\n" for e in events)
    return httpx.Response(200, headers={"content-type": "application/x-ndjson"}, content=body)


class Server:
    def __init__(self, *responses: httpx.Response | Handler) -> None:
        self.responses = list(responses)
        self.requests: list[httpx.Request] = []

    def __call__(self, req: httpx.Request) -> httpx.Response:
        self.requests.append(req)
        nxt = self.responses.pop(0)
        return nxt(req) if callable(nxt) else nxt

    def body(self, i: int = 0) -> Any:
        return json.loads(self.requests[i].content)


async def complete(
    server: Server, req: ChatRequest | None = None, **kw: Any
) -> tuple[BackendReply, list[StreamChunk]]:
    chunks: list[StreamChunk] = []

    async def sink(c: StreamChunk) -> None:
        chunks.append(c)

    b = OllamaBackend(
        "http://ollama.test:11434/",
        model="qwen3:8b",
        context_budget_tokens=12288,
        transport=httpx.MockTransport(server),
        **kw,
    )
    try:
        reply = await b.complete(req or request(), sink)
    finally:
        await b.aclose()
    return reply, chunks


LOOKUP_CALL = [
    line(tool_calls=[{"function": {"name": "lookup", "arguments": {"id": "7"}}}]),
    DONE,
]


# ------------------------------------------------------------------ request body


async def test_request_body_tools_messages_and_num_ctx() -> None:
    server = Server(ndjson(*LOOKUP_CALL))
    await complete(server)
    assert str(server.requests[0].url) == "http://ollama.test:11434/api/chat"
    assert server.body() == {
        "model": "qwen3:8b",
        "messages": [
            {"role": "system", "content": "You are careful."},
            {"role": "user", "content": "Find order 7"},
            {"role": "assistant", "content": "I will look."},
            {"role": "user", "content": "Call a tool."},
            {
                "role": "assistant",
                "content": "Need the order first.",
                # Arguments are objects on Ollama's wire, names unchanged.
                "tool_calls": [
                    {"function": {"name": "lookup", "arguments": {"id": "7"}}},
                    {"function": {"name": "notes.add", "arguments": {"text": "x"}}},
                ],
            },
            {"role": "tool", "content": "order 7: shipped", "tool_name": "lookup"},
            {"role": "tool", "content": NOT_EXECUTED, "tool_name": "notes.add"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"function": {"name": "submit", "arguments": {"answer": "shipped"}}}
                ],
            },
            {"role": "tool", "content": "Call lookup before submit.", "tool_name": "submit"},
        ],
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
                    "name": "notes.add",
                    "description": "",
                    "parameters": {"type": "object", "properties": {"text": {"type": "string"}}},
                },
            },
        ],
        "stream": True,
        "options": {"num_ctx": 12288, "temperature": 0.2, "num_predict": 256},
    }


async def test_think_flag_is_sent_only_when_set() -> None:
    server = Server(ndjson(*LOOKUP_CALL), ndjson(*LOOKUP_CALL))
    await complete(server, think=False)
    await complete(server, request(allowed=[]))
    assert server.body(0)["think"] is False
    assert "think" not in server.body(1)
    assert [t["function"]["name"] for t in server.body(1)["tools"]] == [
        "lookup",
        "notes.add",
        "submit",
    ]


# ------------------------------------------------------------------ streamed answers


async def test_tool_call_with_object_arguments_and_usage() -> None:
    server = Server(ndjson(*LOOKUP_CALL))
    reply, chunks = await complete(server)
    assert reply.response == [ToolCall("lookup", {"id": "7"})]
    u = reply.usage
    assert (u.model_calls, u.prompt_tokens, u.completion_tokens) == (1, 186, 49)
    assert u.prompt_ms == pytest.approx(166.340709)
    assert u.generation_ms == pytest.approx(1999.4045)
    assert [(c.type, c.content) for c in chunks] == [
        (ChunkType.TOOL_CALL_DELTA, "lookup"),
        (ChunkType.TOOL_CALL_DELTA, '{"id": "7"}'),
        (ChunkType.FINAL, ""),
    ]


async def test_two_parallel_calls_across_lines() -> None:
    server = Server(
        ndjson(
            line(thinking="Both "),
            line(thinking="at once."),
            line(
                tool_calls=[
                    {
                        "id": "call_abc",
                        "function": {"index": 0, "name": "lookup", "arguments": {"id": "1"}},
                    }
                ]
            ),
            line(
                tool_calls=[
                    {
                        "id": "call_def",
                        "function": {"index": 1, "name": "notes.add", "arguments": {"text": "t"}},
                    }
                ]
            ),
            DONE,
        )
    )
    reply, _ = await complete(server)
    assert reply.response == [ToolCall("lookup", {"id": "1"}), ToolCall("notes.add", {"text": "t"})]
    assert reply.reasoning == "Both at once."


async def test_text_answer_with_thinking() -> None:
    server = Server(
        ndjson(
            line(thinking="Hmm, "),
            line(thinking="no tool fits."),
            line("Which "),
            line("order?"),
            DONE,
        )
    )
    reply, chunks = await complete(server)
    assert reply.response == TextResponse("Which order?")
    assert reply.reasoning == "Hmm, no tool fits."
    assert [(c.type, c.content) for c in chunks] == [
        (ChunkType.TEXT_DELTA, "Which "),
        (ChunkType.TEXT_DELTA, "order?"),
        (ChunkType.FINAL, ""),
    ]


async def test_malformed_string_arguments_become_a_text_response() -> None:
    server = Server(
        ndjson(line(tool_calls=[{"function": {"name": "lookup", "arguments": '{"id": 7'}}]), DONE)
    )
    reply, _ = await complete(server)
    assert reply.response == TextResponse('{"tool": "lookup", "args": {"id": 7}')
    assert parse_tool_calls(reply.response.content) is None


async def test_stream_without_done_is_retried_then_fails() -> None:
    def cut(_: httpx.Request) -> httpx.Response:
        return ndjson(line("partial"))

    server = Server(cut, ndjson(*LOOKUP_CALL))
    reply, chunks = await complete(server)
    assert reply.response == [ToolCall("lookup", {"id": "7"})]
    assert [c.type for c in chunks][:2] == [ChunkType.TEXT_DELTA, ChunkType.RETRY]
    with pytest.raises(BackendError, match="before done"):
        await complete(Server(cut, cut))


# ------------------------------------------------------------------ errors


async def test_model_not_found_maps_to_backend_error() -> None:
    server = Server(
        httpx.Response(404, json={"error": 'model "qwen9" not found, try pulling it first'})
    )
    with pytest.raises(BackendError, match='HTTP 404: model "qwen9" not found') as info:
        await complete(server)
    assert info.value.details["status"] == "404"


async def test_error_line_in_the_stream() -> None:
    server = Server(
        ndjson(line("a"), {"error": "an error was encountered while running the model"})
    )
    with pytest.raises(BackendError, match="error was encountered"):
        await complete(server)


async def test_context_error_maps_to_context_budget_error() -> None:
    server = Server(
        httpx.Response(500, json={"error": "input length exceeds the context length (4096)"})
    )
    with pytest.raises(ContextBudgetExceededError):
        await complete(server)


# ------------------------------------------------------------------ context discovery

SHOW = {
    "modelfile": "FROM qwen3:8b",
    "parameters": 'repeat_penalty 1\nstop "<|im_start|>"\ntemperature 0.6',
    "template": "{{ .Prompt }}",
    "details": {"family": "qwen3", "parameter_size": "8.2B", "quantization_level": "Q4_K_M"},
    "model_info": {
        "general.architecture": "qwen3",
        "general.parameter_count": 8190735360,
        "qwen3.context_length": 40960,
        "qwen3.embedding_length": 4096,
    },
    "capabilities": ["completion", "tools", "thinking"],
}


async def test_connect_reads_context_length_from_api_show() -> None:
    server = Server(httpx.Response(200, json=SHOW), ndjson(*LOOKUP_CALL))
    b = await OllamaBackend.connect(
        "http://ollama.test:11434", model="qwen3:8b", transport=httpx.MockTransport(server)
    )
    try:
        await b.complete(request(), None)
    finally:
        await b.aclose()
    assert str(server.requests[0].url) == "http://ollama.test:11434/api/show"
    assert server.body(0) == {"model": "qwen3:8b"}
    info = b.info()
    assert (info.name, info.model, info.context_budget_tokens, info.budget_mode) == (
        "ollama",
        "qwen3:8b",
        40960,
        "backend",
    )
    assert info.tool_call_mode == "native"
    # The discovered budget is what every request asks Ollama to allocate.
    assert server.body(1)["options"]["num_ctx"] == 40960


async def test_connect_manual_budget_is_capped_at_the_model_context() -> None:
    server = Server(httpx.Response(200, json=SHOW), httpx.Response(200, json=SHOW))
    transport = httpx.MockTransport(server)
    small = await OllamaBackend.connect(
        "http://o.test",
        model="m",
        budget_mode="manual",
        manual_budget_tokens=8192,
        transport=transport,
    )
    big = await OllamaBackend.connect(
        "http://o.test",
        model="m",
        budget_mode="manual",
        manual_budget_tokens=10**6,
        transport=transport,
    )
    await small.aclose()
    await big.aclose()
    assert small.info().context_budget_tokens == 8192
    assert small.info().budget_mode == "manual"
    assert big.info().context_budget_tokens == 40960


async def test_connect_unknown_model_fails_at_start() -> None:
    server = Server(httpx.Response(404, json={"error": "model 'nope' not found"}))
    with pytest.raises(BackendError, match=r"cannot show model 'nope'.*not found"):
        await OllamaBackend.connect(
            "http://o.test", model="nope", transport=httpx.MockTransport(server)
        )


def test_context_length_prefers_the_modelfile_num_ctx() -> None:
    assert context_length({**SHOW, "parameters": "num_ctx 16384\nstop x"}) == 16384
    assert context_length(SHOW) == 40960
    odd = {"model_info": {"llama.context_length": 131072}}
    assert context_length(odd) == 131072
    with pytest.raises(BackendError, match="context_length"):
        context_length({"model_info": {"general.architecture": "bert"}})
