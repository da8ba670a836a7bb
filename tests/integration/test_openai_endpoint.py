"""The OpenAI-compatible endpoint on a real loopback uvicorn, called with the
official `openai` client: tools, streaming, named workflows whose steps span
requests, and OpenAI-shaped errors. The model is a ScriptedBackend whose
responder answers from what the loop sent (the real model is in
tests/e2e/test_openai_llama.py).
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
from google.protobuf import json_format
from openai.types.chat import ChatCompletionMessage
from openai.types.chat import ChatCompletionMessageFunctionToolCall as FunctionCall
from prometheus_client.parser import text_string_to_metric_families

from forge_core.backends.base import ChatRequest
from forge_core.backends.scripted import ScriptedBackend, Turn, call, text
from forge_core.llama_host.process import free_port
from forge_core.messages import Message, MessageRole, MessageType
from forge_core.prompting import to_chat_messages
from forge_server.auth import Authenticator, TokenFile
from forge_server.openai_app import OpenAIEndpoint, WorkflowRegistry, serve_openai
from tests.helpers import wait_for_server
from tests.integration.test_run_stream import weather_workflow

WEATHER_TOOLS: list[Any] = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Current weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "report_weather",
            "description": "Report the weather.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}, "weather": {"type": "string"}},
                "required": ["city", "weather"],
            },
        },
    },
]


def function_calls(message: ChatCompletionMessage) -> list[FunctionCall]:
    """The message's tool calls, all of them function calls."""
    calls = message.tool_calls or []
    assert all(isinstance(c, FunctionCall) for c in calls)
    return [c for c in calls if isinstance(c, FunctionCall)]


def weather_model(request: ChatRequest, index: int) -> Turn:
    """Reports first (too early when a step is required); looks the weather
    up when told to or when nothing was looked up yet and it may not report."""
    results = [m for m in request.messages if m.type is MessageType.TOOL_RESULT]
    nudged = any(m.type is MessageType.STEP_NUDGE for m in request.messages)
    if request.allowed == ["respond"] or (results and results[-1].tool_name == "get_weather"):
        if "respond" in request.allowed or (
            not request.allowed and request.tools[-1].name == "respond"
        ):
            return call("respond", message="It is 21C in Paris.")
        return call("report_weather", city="Paris", weather=results[-1].content if results else "?")
    if nudged or index > 0:
        return call("get_weather", city="Paris")
    return call("report_weather", city="Paris", weather="sunny")


@asynccontextmanager
async def endpoint(
    responder: Any = weather_model, registry: WorkflowRegistry | None = None
) -> AsyncIterator[tuple[openai.AsyncOpenAI, ScriptedBackend, str]]:
    backend = ScriptedBackend(responder=responder)
    server = await serve_openai(
        OpenAIEndpoint(backend, registry or WorkflowRegistry()), "127.0.0.1", 0
    )
    base = f"http://127.0.0.1:{server.port}/v1"
    client = openai.AsyncOpenAI(base_url=base, api_key="unused", max_retries=0)
    try:
        yield client, backend, base
    finally:
        await client.close()
        await server.stop()


def registry_with_weather() -> WorkflowRegistry:
    registry = WorkflowRegistry()
    proto = weather_workflow([]).to_proto()
    registry.register({"workflow": json_format.MessageToDict(proto)})
    return registry


async def test_models_lists_the_backend_model() -> None:
    async with endpoint() as (client, _, _):
        models = await client.models.list()
    assert [m.id for m in models.data] == ["scripted"]


async def test_tool_calls_come_back_as_standard_tool_calls() -> None:
    async with endpoint(lambda r, i: call("get_weather", city="Paris")) as (client, _, _):
        reply = await client.chat.completions.create(
            model="forge",
            messages=[{"role": "user", "content": "Weather in Paris?"}],
            tools=WEATHER_TOOLS,
            tool_choice="required",
        )
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls"
    (tool_call,) = function_calls(choice.message)
    assert tool_call.function.name == "get_weather"
    assert json.loads(tool_call.function.arguments) == {"city": "Paris"}
    assert tool_call.id.startswith("call_")
    assert reply.usage is not None
    assert (reply.model_extra or {})["forge"]["model_calls"] == 1


async def test_a_text_answer_beside_tools_comes_back_as_content() -> None:
    async with endpoint(lambda r, i: call("respond", message="Hello there.")) as (client, _, _):
        reply = await client.chat.completions.create(
            model="forge", messages=[{"role": "user", "content": "Say hello"}], tools=WEATHER_TOOLS
        )
    assert reply.choices[0].message.content == "Hello there."
    assert reply.choices[0].finish_reason == "stop"
    assert not reply.choices[0].message.tool_calls


async def test_plain_chat_goes_straight_to_the_model() -> None:
    """No tools: one unconstrained call with no tool and no respond tool, its
    text the answer; an earlier answer goes back to the model as the text it
    was, not as a respond call."""
    async with endpoint(lambda r, i: text("Hello there.")) as (client, backend, _):
        reply = await client.chat.completions.create(
            model="forge",
            messages=[
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Hi"},
                {"role": "assistant", "content": "Hello."},
                {"role": "user", "content": "Say hello again"},
            ],
        )
        none = await client.chat.completions.create(
            model="forge",
            messages=[{"role": "user", "content": "Say hello"}],
            tools=WEATHER_TOOLS,
            tool_choice="none",
        )
    assert reply.choices[0].message.content == "Hello there."
    assert reply.choices[0].finish_reason == "stop"
    assert none.choices[0].message.content == "Hello there."
    first, second = backend.requests
    for sent in (first, second):
        assert (sent.constrained, sent.tools, sent.allowed) == (False, [], [])
    assert [(m.role.value, m.type.value, m.content) for m in first.messages] == [
        ("system", "system_prompt", "Be brief."),
        ("user", "user_input", "Hi"),
        ("assistant", "text_response", "Hello."),
        ("user", "user_input", "Say hello again"),
    ]
    forge = (reply.model_extra or {})["forge"]
    assert forge["model_calls"] == 1 and forge["plain"] is True


def test_a_plain_prompt_has_no_tool_instructions() -> None:
    """What llama-server gets for a plain chat: the conversation as sent,
    not a system prompt asking for a JSON tool call."""
    messages = [
        Message(MessageRole.SYSTEM, "Be brief.", MessageType.SYSTEM_PROMPT),
        Message(MessageRole.USER, "Hi", MessageType.USER_INPUT),
    ]
    assert to_chat_messages(messages, []) == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
    ]
    assert to_chat_messages(messages[1:], []) == [{"role": "user", "content": "Hi"}]


async def test_invalid_replies_are_retried_invisibly() -> None:
    """An unknown tool and then schema-invalid arguments: the client only sees
    the third, valid call."""
    turns = [call("get_forecast", city="Paris"), call("get_weather", town="Paris")]

    def model(request: ChatRequest, index: int) -> Turn:
        return turns[index] if index < len(turns) else call("get_weather", city="Paris")

    async with endpoint(model) as (client, backend, _):
        reply = await client.chat.completions.create(
            model="forge",
            messages=[{"role": "user", "content": "Weather in Paris?"}],
            tools=WEATHER_TOOLS,
        )
    (tool_call,) = function_calls(reply.choices[0].message)
    assert json.loads(tool_call.function.arguments) == {"city": "Paris"}
    assert (reply.model_extra or {})["forge"]["model_calls"] == 3
    # The corrections went to the model, not to the client.
    assert any(m.type is MessageType.RETRY_NUDGE for m in backend.requests[-1].messages)


async def test_a_named_workflow_enforces_its_steps_across_requests() -> None:
    async with endpoint(registry=registry_with_weather()) as (client, _backend, _):
        messages: list[Any] = [{"role": "user", "content": "Weather in Paris?"}]
        first = await client.chat.completions.create(
            model="forge", messages=messages, extra_headers={"X-Forge-Workflow": "weather"}
        )
        # The model tried to report first; the step nudge made it look up.
        (lookup,) = function_calls(first.choices[0].message)
        assert lookup.function.name == "get_weather"
        messages += [
            first.choices[0].message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": lookup.id, "content": "21C in Paris"},
        ]
        second = await client.chat.completions.create(
            model="forge", messages=messages, metadata={"forge_workflow": "weather"}
        )
        (report,) = function_calls(second.choices[0].message)
        assert report.function.name == "report_weather"
        # Only one model call: the step done in the first request counted.
        assert (second.model_extra or {})["forge"]["model_calls"] == 1
        messages += [
            second.choices[0].message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": report.id, "content": "reported"},
        ]
        done = await client.chat.completions.create(
            model="forge", messages=messages, extra_headers={"X-Forge-Workflow": "weather"}
        )
    assert done.choices[0].finish_reason == "stop"
    assert done.choices[0].message.content == "reported"
    forge = (done.model_extra or {})["forge"]
    assert forge["done"] == {"terminal_tool": "report_weather", "terminal_call_id": report.id}
    assert forge["model_calls"] == 0


async def test_streaming_sends_tool_call_deltas_that_accumulate_to_the_call() -> None:
    async with endpoint(lambda r, i: call("get_weather", city="Paris")) as (client, _, _):
        stream = await client.chat.completions.create(
            model="forge",
            messages=[{"role": "user", "content": "Weather in Paris?"}],
            tools=WEATHER_TOOLS,
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = [chunk async for chunk in stream]
    name, arguments, finish, ids = "", "", None, set()
    for chunk in chunks:
        for choice in chunk.choices:
            for delta in choice.delta.tool_calls or []:
                assert delta.index == 0
                ids.add(delta.id) if delta.id else None
                name += (delta.function.name or "") if delta.function else ""
                arguments += (delta.function.arguments or "") if delta.function else ""
            finish = choice.finish_reason or finish
    assert (name, json.loads(arguments), finish) == ("get_weather", {"city": "Paris"}, "tool_calls")
    assert len(ids) == 1
    assert chunks[-1].usage is not None and chunks[-1].usage.prompt_tokens >= 0
    # No retry marker: nothing streamed had to be taken back.
    assert not any("retry" in (c.model_extra or {}).get("forge", {}) for c in chunks)


async def test_streaming_a_refused_attempt_is_marked_and_replaced() -> None:
    """The first attempt streams, then fails validation: a `forge.retry` chunk,
    then the accepted call from index 0 again."""

    async with endpoint(_town_then_rome) as (_client, _, base):
        async with httpx.AsyncClient() as http:
            body = {
                "model": "forge",
                "messages": [{"role": "user", "content": "Weather in Rome?"}],
                "tools": WEATHER_TOOLS,
                "stream": True,
            }
            async with http.stream("POST", f"{base}/chat/completions", json=body) as resp:
                assert resp.headers["content-type"].startswith("text/event-stream")
                events = [
                    json.loads(line[6:])
                    async for line in resp.aiter_lines()
                    if line.startswith("data: {")
                ]
    kinds = []
    for event in events:
        if "retry" in event.get("forge", {}):
            kinds.append("retry")
        for delta in event["choices"][0]["delta"].get("tool_calls", []) if event["choices"] else []:
            if "id" in delta:
                kinds.append(delta["function"]["name"])
    assert kinds == ["get_weather", "retry", "get_weather"]
    after = events[next(i for i, e in enumerate(events) if "retry" in e.get("forge", {})) :]
    args = "".join(
        d["function"].get("arguments", "")
        for e in after
        if e["choices"]
        for d in e["choices"][0]["delta"].get("tool_calls", [])
    )
    assert json.loads(args) == {"city": "Rome"}
    assert events[-1]["choices"][0]["finish_reason"] == "tool_calls"


async def test_streaming_a_text_answer_sends_content() -> None:
    async with endpoint(lambda r, i: call("respond", message='Say "hi" \\ bye')) as (
        client,
        _,
        _,
    ):
        stream = await client.chat.completions.create(
            model="forge",
            messages=[{"role": "user", "content": "Greet me"}],
            tools=WEATHER_TOOLS,
            stream=True,
        )
        content = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
    assert content == 'Say "hi" \\ bye'


async def test_streaming_a_plain_chat_sends_the_models_text() -> None:
    async with endpoint(lambda r, i: text('Say "hi" \\ bye')) as (client, _, _):
        stream = await client.chat.completions.create(
            model="forge",
            messages=[{"role": "user", "content": "Greet me"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = [c async for c in stream]
    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert content == 'Say "hi" \\ bye'
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices]
    assert finishes[-1] == "stop"
    assert chunks[-1].usage is not None


@pytest.mark.parametrize(
    ("body", "status", "param"),
    [
        ({"model": "forge", "messages": []}, 400, "messages"),
        ({"model": "forge", "messages": [{"role": "user", "content": "hi"}], "n": 2}, 400, "n"),
        (
            {
                "model": "forge",
                "messages": [{"role": "user", "content": "hi"}],
                "tools": [
                    {"type": "function", "function": {"name": "f", "parameters": {"type": "array"}}}
                ],
            },
            400,
            "tools[0].function.parameters",
        ),
        (
            {
                "model": "forge",
                "messages": [
                    {"role": "user", "content": "hi"},
                    {"role": "tool", "tool_call_id": "nope", "content": "x"},
                ],
            },
            400,
            "messages[1].tool_call_id",
        ),
        (
            {
                "model": "forge",
                "messages": [{"role": "user", "content": "hi"}],
                "metadata": {"forge_workflow": "missing"},
            },
            404,
            "metadata.forge_workflow",
        ),
        (
            {
                "model": "forge",
                "messages": [{"role": "user", "content": "hi"}],
                "tools": WEATHER_TOOLS,
                "tool_choice": {"type": "function", "function": {"name": "nope"}},
            },
            400,
            "tool_choice",
        ),
        # Field paths in one style, brackets for indexes, whichever check
        # refused the field.
        (
            {
                "model": "forge",
                "messages": [{"role": "user", "content": "hi"}, {"role": "robot"}],
            },
            400,
            "messages[1].role",
        ),
        (
            {"model": "forge", "messages": [{"role": "user", "content": 5}]},
            400,
            "messages[0].content",
        ),
        (
            {
                "model": "forge",
                "messages": [
                    {"role": "user", "content": "hi"},
                    {"role": "assistant", "tool_calls": [{"id": "c1", "function": {}}]},
                ],
            },
            400,
            "messages[1].tool_calls[0].function.name",
        ),
        (
            {
                "model": "forge",
                "messages": [
                    {"role": "user", "content": "hi"},
                    {
                        "role": "assistant",
                        "tool_calls": [
                            {"id": "", "function": {"name": "get_weather", "arguments": "{}"}}
                        ],
                    },
                ],
                "tools": WEATHER_TOOLS,
            },
            400,
            "messages[1].tool_calls[0].id",
        ),
        ({"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}, 404, "model"),
    ],
)
async def test_bad_requests_get_openai_shaped_errors(
    body: dict[str, Any], status: int, param: str
) -> None:
    async with endpoint() as (client, _, _):
        with pytest.raises(openai.APIStatusError) as failed:
            await client.chat.completions.create(**body)
        err = failed.value
        assert err.status_code == status
        assert isinstance(err.body, dict) and err.body["param"] == param
        assert err.body["message"]
        # The endpoint keeps serving.
        assert (await client.models.list()).data


@pytest.mark.parametrize("model", ["scripted", "SCRIPTED", "forge", ""])
async def test_the_served_model_and_its_aliases_are_answered(model: str) -> None:
    async with endpoint(lambda r, i: text("hi")) as (_, _, base):
        async with httpx.AsyncClient() as http:
            resp = await http.post(
                f"{base}/chat/completions",
                json={"model": model, "messages": [{"role": "user", "content": "hi"}]},
            )
    assert resp.status_code == 200, resp.text
    assert resp.json()["model"] == "scripted"


@pytest.mark.parametrize("stream", [False, True])
async def test_an_unknown_model_is_404_model_not_found(stream: bool) -> None:
    """As OpenAI answers it, before anything reaches the model; a name the
    served id only starts with in the middle of a word is not it."""
    async with endpoint(lambda r, i: text("hi")) as (client, backend, _):
        for model in ("gpt-4o", "script"):
            with pytest.raises(openai.NotFoundError) as failed:
                await client.chat.completions.create(
                    model=model, messages=[{"role": "user", "content": "hi"}], stream=stream
                )
            body = failed.value.body
            assert isinstance(body, dict)
            assert (body["code"], body["param"], body["type"]) == (
                "model_not_found",
                "model",
                "invalid_request_error",
            )
            assert repr(model) in body["message"] and "'scripted'" in body["message"]
    assert not backend.requests


async def test_a_model_that_never_answers_validly_is_a_422_guardrail_error() -> None:
    async with endpoint(lambda r, i: text("no idea")) as (client, _, _):
        with pytest.raises(openai.UnprocessableEntityError) as failed:
            await client.chat.completions.create(
                model="forge",
                messages=[{"role": "user", "content": "Weather?"}],
                tools=WEATHER_TOOLS,
                tool_choice="required",
            )
    assert isinstance(failed.value.body, dict) and failed.value.body["code"] == "tool_call"


async def test_workflows_register_over_http() -> None:
    async with endpoint() as (_, _, base):
        async with httpx.AsyncClient() as http:
            proto = json_format.MessageToDict(weather_workflow([]).to_proto())
            put = await http.put(f"{base}/forge/workflows/weather", json={"workflow": proto})
            assert put.status_code == 200
            listed = await http.get(f"{base}/forge/workflows")
            assert listed.json()["data"] == ["weather"]
            bad = await http.put(
                f"{base}/forge/workflows/broken",
                json={"workflow": {"name": "broken", "tools": [], "terminalTools": ["x"]}},
            )
            assert bad.status_code == 400
            assert bad.json()["error"]["param"].startswith("workflow")


async def test_bearer_tokens_guard_the_endpoint(tmp_path: Path) -> None:
    """The gRPC server's tokens apply: no or a wrong key is a 401."""
    tokens = tmp_path / "tokens"
    tokens.write_text("s3cret name=ci\n")
    backend = ScriptedBackend(responder=lambda r, i: text("hi"))
    endpoint_ = OpenAIEndpoint(backend, auth=Authenticator(TokenFile(tokens)))
    server = await serve_openai(endpoint_, "127.0.0.1", 0)
    base = f"http://127.0.0.1:{server.port}/v1"
    try:
        wrong = openai.AsyncOpenAI(base_url=base, api_key="guess", max_retries=0)
        with pytest.raises(openai.AuthenticationError):
            await wrong.models.list()
        right = openai.AsyncOpenAI(base_url=base, api_key="s3cret", max_retries=0)
        reply = await right.chat.completions.create(
            model="forge", messages=[{"role": "user", "content": "hi"}]
        )
        assert reply.choices[0].message.content == "hi"
        await wrong.close()
        await right.close()
    finally:
        await server.stop()


def _town_then_rome(request: ChatRequest, index: int) -> Turn:
    return call("get_weather", town="Paris") if index == 0 else call("get_weather", city="Rome")


async def test_accepted_stream_mode_suits_the_sdks_stream_helper() -> None:
    """X-Forge-Stream: accepted holds each turn until the guardrails accept
    it: a refused attempt never reaches the client, so the official SDK's
    accumulating helper gets the right call."""
    async with endpoint(_town_then_rome) as (client, _, _):
        async with client.chat.completions.stream(
            model="forge",
            messages=[{"role": "user", "content": "Weather in Rome?"}],
            tools=WEATHER_TOOLS,
            extra_headers={"X-Forge-Stream": "accepted"},
        ) as stream:
            raw = [event async for event in stream if event.type == "chunk"]
            final = await stream.get_final_completion()
    assert not any("retry" in (e.chunk.model_extra or {}).get("forge", {}) for e in raw)
    (tool_call,) = final.choices[0].message.tool_calls or []
    assert tool_call.function.name == "get_weather"
    assert json.loads(tool_call.function.arguments) == {"city": "Rome"}


async def test_a_bad_stream_mode_or_unknown_header_workflow_names_the_header() -> None:
    async with endpoint() as (client, _, _):
        with pytest.raises(openai.BadRequestError) as bad_mode:
            await client.chat.completions.create(
                model="forge",
                messages=[{"role": "user", "content": "hi"}],
                extra_headers={"X-Forge-Stream": "sometimes"},
            )
        with pytest.raises(openai.NotFoundError) as missing:
            await client.chat.completions.create(
                model="forge",
                messages=[{"role": "user", "content": "hi"}],
                extra_headers={"X-Forge-Workflow": "missing"},
            )
    assert isinstance(bad_mode.value.body, dict)
    assert bad_mode.value.body["param"] == "X-Forge-Stream"
    assert isinstance(missing.value.body, dict)
    assert missing.value.body["param"] == "X-Forge-Workflow"


async def test_requests_are_counted_in_metrics_and_the_log_gives_its_url(tmp_path: Path) -> None:
    """forge-server as started by users: the endpoint's requests appear in the
    gRPC server's /metrics by route and status, and the startup log says
    where /metrics is."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"chat": [{"text": "Hello."}]}))
    port, oport, mport = free_port(), free_port(), free_port()
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "forge_server",
        "--backend", "scripted", "--script", str(script), "--port", str(port),
        "--openai-port", str(oport), "--metrics-port", str(mport),
        stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        await wait_for_server(f"127.0.0.1:{port}", 60)
        base = f"http://127.0.0.1:{oport}/v1"
        async with httpx.AsyncClient() as http:
            hello = {"model": "forge", "messages": [{"role": "user", "content": "hi"}]}
            ok = await http.post(f"{base}/chat/completions", json=hello)
            unknown = await http.post(f"{base}/chat/completions", json={**hello, "model": "gpt-4o"})
            await http.get(f"{base}/models")
            scraped = await http.get(f"http://127.0.0.1:{mport}/metrics")
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = await asyncio.wait_for(proc.communicate(), 30)
    assert ok.json()["choices"][0]["message"]["content"] == "Hello."
    assert unknown.status_code == 404
    samples = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(scraped.text)
        for s in family.samples
    }
    counted = "forge_openai_requests_total"
    assert samples[(counted, (("route", "chat_completions"), ("status", "200")))] == 1
    assert samples[(counted, (("route", "chat_completions"), ("status", "404")))] == 1
    assert samples[(counted, (("route", "models"), ("status", "200")))] == 1
    assert f"metrics on http://127.0.0.1:{mport}/metrics" in stderr.decode()
