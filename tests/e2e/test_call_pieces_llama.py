"""Calls in pieces (backends/llama/pieces.py) on the real llama-server and model.

Every call made in pieces must be a complete call of an allowed tool whose
arguments satisfy its JSON Schema, at T=0 and T=0.8, for a flat tool (keys
written by Forge, values by the model), for nested ones (an array of
objects, a nested object with optional keys: keys Forge's at every depth)
and for a parallel batch (each call in pieces, the model's `,` or `]`
deciding whether another follows). The requests the backend makes show
which way each call went.
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from typing import Any
from urllib.parse import urlsplit

import httpx
import jsonschema
import pytest

from forge_core.backends.base import ChatRequest
from forge_core.backends.llama.server import LlamaServerBackend
from forge_core.calls import ChunkType, StreamChunk
from forge_core.messages import Message, MessageRole, MessageType
from forge_core.workflow import ToolSpec
from tests.e2e.test_grammar_llama import TOOLS

pytestmark = pytest.mark.e2e


def paths(backend: LlamaServerBackend) -> list[str]:
    """The paths of every request the backend sends from now on: through its
    httpx client, and through the pieces' `/completion` client."""
    seen: list[str] = []

    async def hook(request: httpx.Request) -> None:
        seen.append(request.url.path)

    backend._http.event_hooks["request"].append(hook)
    completions = backend._completions
    send = completions._request

    def sending(body: dict[str, Any]) -> AbstractAsyncContextManager[Any]:
        seen.append(urlsplit(completions.url).path)
        return send(body)

    completions._request = sending  # type: ignore[method-assign,assignment]
    return seen


def request(
    user: str,
    allowed: list[str],
    temperature: float,
    tools: list[ToolSpec] = TOOLS,
    parallel: bool = False,
) -> ChatRequest:
    return ChatRequest(
        run_id=f"pieces-{temperature}-{'-'.join(allowed)}",
        workflow_name="travel",
        messages=[
            Message(MessageRole.SYSTEM, "Book travel and shop.", MessageType.SYSTEM_PROMPT),
            Message(MessageRole.USER, user, MessageType.USER_INPUT),
        ],
        tools=tools,
        allowed=allowed,
        temperature=temperature,
        parallel=parallel,
    )


@pytest.mark.parametrize("temperature", [0.0, 0.8])
async def test_calls_in_pieces_are_complete_and_valid(
    llama_backend: LlamaServerBackend, temperature: float
) -> None:
    schemas = {t.name: t.parameters for t in TOOLS}
    sent = paths(llama_backend)
    chunks: list[StreamChunk] = []

    async def sink(chunk: StreamChunk) -> None:
        chunks.append(chunk)

    for allowed in (["search_flights"], ["search_flights", "add_items"], ["add_items"]):
        sent.clear()
        chunks.clear()
        reply = await llama_backend.complete(
            request("Book two seats from Oslo to Rome, and add a lamp.", allowed, temperature),
            sink,
        )
        assert isinstance(reply.response, list), reply.raw_text
        (call,) = reply.response
        assert call.name in allowed
        jsonschema.validate(call.args, schemas[call.name])
        # Made in pieces, never by the whole-call grammar's chat request:
        # at least one request for each required value Forge cannot list.
        assert "/v1/chat/completions" not in sent
        free = 2 if call.name == "search_flights" else 1
        assert sent.count("/completion") >= free
        # The deltas streamed are the call's text, in order.
        deltas = "".join(c.content for c in chunks if c.type == ChunkType.TOOL_CALL_DELTA)
        assert deltas == reply.raw_text
        assert chunks[-1].type == ChunkType.FINAL


async def test_whole_call_grammar_when_pieces_are_off(llama_backend: LlamaServerBackend) -> None:
    llama_backend.call_pieces = False
    sent = paths(llama_backend)
    reply = await llama_backend.complete(
        request("Book two seats from Oslo to Rome.", ["search_flights"], 0.0), None
    )
    assert isinstance(reply.response, list)
    assert sent.count("/v1/chat/completions") == 1
    assert "/completion" not in sent


# A nested object with an optional key inside and outside, and an array of
# objects: every shape Forge walks key by key.
SHIP = ToolSpec(
    "ship_parcel",
    "Ship a parcel",
    {
        "type": "object",
        "properties": {
            "to": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "maxLength": 30},
                    "street": {"type": "string", "maxLength": 40},
                    "floor": {"type": "integer"},
                },
                "required": ["city", "street"],
            },
            "parcels": {
                "type": "array",
                "minItems": 1,
                "maxItems": 3,
                "items": {
                    "type": "object",
                    "properties": {"kg": {"type": "number"}, "label": {"type": "string"}},
                    "required": ["kg"],
                },
            },
            "express": {"type": "boolean"},
        },
        "required": ["to", "parcels"],
    },
)


@pytest.mark.parametrize("temperature", [0.0, 0.8])
async def test_a_nested_object_call_is_made_in_pieces(
    llama_backend: LlamaServerBackend, temperature: float
) -> None:
    sent = paths(llama_backend)
    reply = await llama_backend.complete(
        request(
            "Ship a 2 kg parcel to Kiln Street 4 in Bergen.",
            ["ship_parcel"],
            temperature,
            tools=[SHIP],
        ),
        None,
    )
    assert isinstance(reply.response, list), reply.raw_text
    (call,) = reply.response
    assert call.name == "ship_parcel"
    jsonschema.validate(call.args, SHIP.parameters)
    assert "/v1/chat/completions" not in sent
    # At least the city, the street and one parcel's weight were the model's.
    assert sent.count("/completion") >= 3


@pytest.mark.parametrize("temperature", [0.0, 0.8])
async def test_a_parallel_batch_is_made_in_pieces(
    llama_backend: LlamaServerBackend, temperature: float
) -> None:
    schemas = {t.name: t.parameters for t in TOOLS}
    sent = paths(llama_backend)
    chunks: list[StreamChunk] = []

    async def sink(chunk: StreamChunk) -> None:
        chunks.append(chunk)

    reply = await llama_backend.complete(
        request(
            "Book two seats from Oslo to Rome, and add a lamp to the cart.",
            ["search_flights", "add_items"],
            temperature,
            parallel=True,
        ),
        sink,
    )
    assert isinstance(reply.response, list), reply.raw_text
    assert 1 <= len(reply.response) <= 8
    for call in reply.response:
        assert call.name in schemas
        jsonschema.validate(call.args, schemas[call.name])
    assert reply.raw_text.startswith("[") and reply.raw_text.endswith("]")
    assert "/v1/chat/completions" not in sent
    deltas = "".join(c.content for c in chunks if c.type == ChunkType.TOOL_CALL_DELTA)
    assert deltas == reply.raw_text
    assert chunks[-1].type == ChunkType.FINAL
