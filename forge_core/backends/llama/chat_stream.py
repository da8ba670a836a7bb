"""llama-server's `/v1/chat/completions` stream (the whole call under one
grammar, or free text) and how its errors and timings read."""

from __future__ import annotations

import json
from typing import Any

import httpx

from forge_core.backends.base import BackendReply
from forge_core.backends.llama.http_client import Unavailable
from forge_core.backends.native import BrokenStream, status_error
from forge_core.calls import ChunkSink, ChunkType, LLMResponse, StreamChunk, TextResponse, Usage
from forge_core.errors import ForgeError
from forge_core.parsing import parse_response


async def stream_chat(
    http: httpx.AsyncClient,
    body: dict[str, Any],
    delta_type: ChunkType,
    on_chunk: ChunkSink | None,
    constrained: bool,
) -> BackendReply:
    """One `/v1/chat/completions` call streamed: its deltas go to `on_chunk`
    as `delta_type`; constrained output is parsed into the calls it holds."""
    text: list[str] = []
    reasoning: list[str] = []
    usage = Usage(model_calls=1)
    finished = False
    truncated = False
    async with http.stream("POST", "/v1/chat/completions", json=body) as resp:
        await raise_for_status(resp)
        async for line in resp.aiter_lines():
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                finished = True
                break
            event = json.loads(data)
            if "error" in event:
                raise http_error(500, json.dumps(event["error"]))
            for choice in event.get("choices", []):
                truncated = truncated or choice.get("finish_reason") == "length"
                delta = choice.get("delta", {})
                if delta.get("reasoning_content"):
                    reasoning.append(delta["reasoning_content"])
                piece = delta.get("content")
                if piece:
                    text.append(piece)
                    if on_chunk is not None:
                        await on_chunk(StreamChunk(delta_type, piece))
            if "timings" in event:
                add_timings(usage, event["timings"])
    if not finished:
        raise BrokenStream("stream ended without [DONE]")
    if on_chunk is not None:
        await on_chunk(StreamChunk(ChunkType.FINAL))
    raw = "".join(text)
    # Constrained output is the call itself; anything else (free text, a
    # call truncated by max_tokens) goes to the engine's rescue/retry path.
    calls = parse_response(raw, rescue=False).calls if constrained else None
    response: LLMResponse = calls if calls else TextResponse(raw)
    return BackendReply(
        response=response,
        usage=usage,
        raw_text=raw,
        reasoning="".join(reasoning),
        truncated=truncated and not calls,
    )


def add_timings(usage: Usage, timings: dict[str, Any]) -> None:
    cache_n = int(timings.get("cache_n", 0))
    usage.prompt_tokens += int(timings.get("prompt_n", 0)) + cache_n
    usage.cached_prompt_tokens += cache_n
    usage.completion_tokens += int(timings.get("predicted_n", 0))
    usage.prompt_ms += float(timings.get("prompt_ms", 0.0))
    usage.generation_ms += float(timings.get("predicted_ms", 0.0))


async def raise_for_status(resp: httpx.Response) -> None:
    """A generation request that llama-server refused: 503 (loading, restarting)
    is retried as a transport failure, anything else is the error it names."""
    if resp.status_code == 200:
        return
    await resp.aread()
    if resp.status_code == 503:
        raise Unavailable(f"HTTP 503: {resp.text[:200]}")
    raise http_error(resp.status_code, resp.text)


def http_error(status: int, body: str) -> ForgeError:
    return status_error(status, body, "llama-server", context_error=says_context_exceeded)


def says_context_exceeded(body: str) -> bool:
    # llama-server's own wording only (narrower than native.is_context_error).
    return "exceed_context_size" in body or "exceeds the available context size" in body
