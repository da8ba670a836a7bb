"""The OpenAI-compatible endpoint in front of the real llama-server + 270M
model, called with the official `openai` client: a plain tool call, the same
streamed token by token, and a named workflow driven by an ordinary
OpenAI-client loop whose tools run here.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import openai
import pytest
from google.protobuf import json_format

from forge_core.backends.llama.server import LlamaServerBackend
from forge_core.llama_host.process import ManagedLlamaServer
from forge_server.openai_app import OpenAIEndpoint, WorkflowRegistry, serve_openai
from tests.integration.test_openai_endpoint import WEATHER_TOOLS, function_calls
from tests.integration.test_run_stream import weather_workflow

pytestmark = pytest.mark.e2e

QUESTION = "What's the weather in Paris?"


@pytest.fixture
async def client(llama_server: ManagedLlamaServer) -> AsyncIterator[openai.AsyncOpenAI]:
    backend = await LlamaServerBackend.connect(llama_server.url, backend_mode="managed")
    registry = WorkflowRegistry()
    registry.register({"workflow": json_format.MessageToDict(weather_workflow([]).to_proto())})
    server = await serve_openai(OpenAIEndpoint(backend, registry), "127.0.0.1", 0)
    api = openai.AsyncOpenAI(
        base_url=f"http://127.0.0.1:{server.port}/v1", api_key="unused", timeout=300
    )
    try:
        yield api
    finally:
        await api.close()
        await server.stop()
        await backend.aclose()


async def test_a_required_tool_call_comes_back_valid(client: openai.AsyncOpenAI) -> None:
    models = await client.models.list()
    reply = await client.chat.completions.create(
        model=models.data[0].id,
        messages=[{"role": "user", "content": QUESTION}],
        tools=WEATHER_TOOLS,
        tool_choice="required",
    )
    assert models.data[0].id.endswith(".gguf")
    choice = reply.choices[0]
    assert choice.finish_reason == "tool_calls"
    calls = function_calls(choice.message)
    assert calls and calls[0].function.name in {"get_weather", "report_weather"}
    args = json.loads(calls[0].function.arguments)
    assert isinstance(args["city"], str) and args["city"]
    assert reply.usage is not None and reply.usage.prompt_tokens > 0


async def test_streaming_sends_the_call_while_the_model_writes_it(
    client: openai.AsyncOpenAI,
) -> None:
    started = time.monotonic()
    # No capitalised name: the model writes the city itself, token by token.
    # ("Paris" would be the one value the request offers a lookup's `city`,
    # which Forge writes in one piece; forge_core/guardrails/proper_names.py.)
    stream = await client.chat.completions.create(
        model="gemma",
        messages=[{"role": "user", "content": "what is the weather like in the south of france"}],
        tools=WEATHER_TOOLS[:1],
        tool_choice="required",
        stream=True,
    )
    arrivals: list[float] = []
    name, arguments, finish = "", "", None
    async for chunk in stream:
        for choice in chunk.choices:
            for delta in choice.delta.tool_calls or []:
                if delta.function and delta.function.arguments:
                    arrivals.append(time.monotonic() - started)
                name += (delta.function.name or "") if delta.function else ""
                arguments += (delta.function.arguments or "") if delta.function else ""
            finish = choice.finish_reason or finish
    done = time.monotonic() - started
    assert name == "get_weather"
    assert isinstance(json.loads(arguments)["city"], str)
    assert finish == "tool_calls"
    # Token by token, not one blob at the end.
    assert len(arrivals) >= 3, arrivals
    assert arrivals[0] < done


async def test_a_named_workflow_runs_to_its_terminal_tool_from_a_plain_loop(
    client: openai.AsyncOpenAI,
) -> None:
    """What a caller's existing OpenAI loop does, with Forge's steps enforced
    across its requests."""
    tools: dict[str, Any] = {
        "get_weather": lambda city: f"72F and sunny in {city}",
        "report_weather": lambda city, weather: f"Weather report for {city}: {weather}",
    }
    messages: list[Any] = [{"role": "user", "content": QUESTION}]
    ran: list[str] = []
    for _ in range(8):
        reply = await client.chat.completions.create(
            model="gemma", messages=messages, extra_headers={"X-Forge-Workflow": "weather"}
        )
        message = reply.choices[0].message
        if reply.choices[0].finish_reason == "stop":
            break
        messages.append(message.model_dump(exclude_none=True))
        for tool_call in function_calls(message):
            ran.append(tool_call.function.name)
            output = tools[tool_call.function.name](**json.loads(tool_call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": tool_call.id, "content": output})
    assert reply.choices[0].finish_reason == "stop"
    assert ran[0] == "get_weather" and ran[-1] == "report_weather"
    assert (message.content or "").startswith("Weather report for")


async def test_plain_chat_streams_text_and_a_dropped_stream_frees_the_slot(
    client: openai.AsyncOpenAI,
) -> None:
    """No tools: the model's own words, no respond call. A client that goes
    away after the first of them must not keep the server's only slot (its
    model call was cancelled twice, the second time while it waited for the
    first, and the slot's lease was never given back: every later request
    waited forever)."""
    messages: list[Any] = [{"role": "user", "content": "Say hello to the team."}]
    stream = await client.chat.completions.create(
        model="forge", messages=messages, max_tokens=64, stream=True
    )
    first = ""
    async for chunk in stream:
        if chunk.choices and chunk.choices[0].delta.content:
            first = chunk.choices[0].delta.content
            break
    await stream.close()
    assert first and not first.lstrip().startswith("{")
    reply = await asyncio.wait_for(
        client.chat.completions.create(model="forge", messages=messages, max_tokens=16), 120
    )
    assert reply.choices[0].message.content
    assert (reply.model_extra or {})["forge"]["plain"] is True
