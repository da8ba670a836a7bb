"""llama-server (llama.cpp) over its OpenAI-compatible HTTP API.

The model gets the tools in its system prompt and a `response_format` JSON
Schema that llama-server compiles into a grammar, so every answer is a
well-formed `{"tool", "args"}` object for one of the tools allowed this turn.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import httpx

from forge_core.backends.base import (
    BackendInfo,
    BackendReply,
    ChatRequest,
    ChunkSink,
    ChunkType,
    LLMResponse,
    StreamChunk,
    TextResponse,
    Usage,
)
from forge_core.backends.openai_compat import OpenAICompatBackend
from forge_core.constraint import tool_call_schema
from forge_core.errors import BackendError, ContextBudgetExceededError, ForgeError
from forge_core.grammar import build_grammar
from forge_core.parsing import parse_response
from forge_core.prompting import to_chat_messages

log = logging.getLogger(__name__)

# A stream that breaks mid-way is retried this many times before the run fails.
STREAM_ATTEMPTS = 2


class LlamaServerBackend:
    name = "llama-server"

    def __init__(
        self,
        base_url: str,
        *,
        model: str,
        context_budget_tokens: int,
        slots: int,
        budget_mode: str,
        backend_mode: str,
        tool_call_mode: str = "constrained",
        timeout_s: float = 600.0,
    ) -> None:
        if tool_call_mode not in ("constrained", "prompt", "native"):
            raise ValueError(f"llama-server tool-call mode {tool_call_mode!r} is not supported")
        # Native mode is llama-server's OpenAI-compatible tool calling (--jinja
        # templates): the same wire protocol as any OpenAI-compatible server.
        self._native = (
            OpenAICompatBackend(
                f"{base_url.rstrip('/')}/v1",
                model=model,
                context_budget_tokens=context_budget_tokens,
                budget_mode=budget_mode,
                timeout_s=timeout_s,
            )
            if tool_call_mode == "native"
            else None
        )
        self.base_url = base_url.rstrip("/")
        self._info = BackendInfo(
            name=self.name,
            model=model,
            context_budget_tokens=context_budget_tokens,
            slots=slots,
            budget_mode=budget_mode,
            backend_mode=backend_mode,
            url=self.base_url,
            tool_call_mode=tool_call_mode,
        )
        # One pooled client per backend: a connection per run would cost a
        # TCP handshake on every model call.
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            timeout=httpx.Timeout(timeout_s, connect=10.0),
            limits=httpx.Limits(max_connections=max(4, slots * 2)),
        )

    @classmethod
    async def connect(
        cls,
        base_url: str,
        *,
        budget_mode: str = "backend",
        manual_budget_tokens: int = 0,
        backend_mode: str = "external",
        tool_call_mode: str = "auto",
    ) -> LlamaServerBackend:
        """Read the context size, slot count and template caps from /props."""
        props = await read_props(base_url)
        if tool_call_mode == "auto":
            tool_call_mode = choose_tool_call_mode(props)
        n_ctx, slots, model = parse_props(props)
        budget = n_ctx
        if budget_mode == "manual":
            if manual_budget_tokens <= 0:
                raise ValueError("budget mode 'manual' needs a positive token count")
            budget = min(manual_budget_tokens, n_ctx)
        return cls(
            base_url,
            model=model,
            context_budget_tokens=budget,
            slots=slots,
            budget_mode=budget_mode,
            backend_mode=backend_mode,
            tool_call_mode=tool_call_mode,
        )

    def info(self) -> BackendInfo:
        return self._info

    async def aclose(self) -> None:
        await self._http.aclose()
        if self._native is not None:
            await self._native.aclose()

    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "messages": to_chat_messages(
                request.messages,
                request.tools,
                parallel=request.parallel,
                reasoning_replay=request.reasoning_replay,
            ),
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
            "stream": True,
            "cache_prompt": True,
        }
        if self.constrains(request):
            allowed = [t for t in request.tools if t.name in set(request.allowed)] or request.tools
            grammar = build_grammar(allowed, parallel=request.parallel)
            if grammar is not None:
                body["grammar"] = grammar
            else:
                # A schema the compact grammar cannot express: let llama-server
                # derive the grammar from the JSON Schema instead.
                schema = tool_call_schema(allowed, parallel=request.parallel)
                body["response_format"] = {
                    "type": "json_schema",
                    "json_schema": {"name": "tool_call", "schema": schema},
                }
        return body

    def constrains(self, request: ChatRequest) -> bool:
        return request.constrained and self._info.tool_call_mode == "constrained"

    async def complete(self, request: ChatRequest, on_chunk: ChunkSink | None) -> BackendReply:
        if self._native is not None:
            return await self._native.complete(request, on_chunk)
        body = self.request_body(request)
        delta_type = ChunkType.TOOL_CALL_DELTA if self.constrains(request) else ChunkType.TEXT_DELTA
        for attempt in range(1, STREAM_ATTEMPTS + 1):
            try:
                return await self._stream(body, delta_type, on_chunk, self.constrains(request))
            except (httpx.TransportError, _BrokenStream) as exc:
                if attempt == STREAM_ATTEMPTS:
                    raise BackendError(
                        f"llama-server at {self.base_url} failed: {exc}", url=self.base_url
                    ) from exc
                log.warning("llama-server stream failed (%s); retrying", exc)
                if on_chunk is not None:
                    await on_chunk(StreamChunk(ChunkType.RETRY))
        raise AssertionError("unreachable")

    async def _stream(
        self,
        body: dict[str, Any],
        delta_type: ChunkType,
        on_chunk: ChunkSink | None,
        constrained: bool,
    ) -> BackendReply:
        text: list[str] = []
        reasoning: list[str] = []
        usage = Usage(model_calls=1)
        finished = False
        async with self._http.stream("POST", "/v1/chat/completions", json=body) as resp:
            if resp.status_code != 200:
                await resp.aread()
                raise _http_error(resp.status_code, resp.text)
            async for line in resp.aiter_lines():
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    finished = True
                    break
                event = json.loads(data)
                if "error" in event:
                    raise _http_error(500, json.dumps(event["error"]))
                for choice in event.get("choices", []):
                    delta = choice.get("delta", {})
                    if delta.get("reasoning_content"):
                        reasoning.append(delta["reasoning_content"])
                    piece = delta.get("content")
                    if piece:
                        text.append(piece)
                        if on_chunk is not None:
                            await on_chunk(StreamChunk(delta_type, piece))
                if "timings" in event:
                    _add_timings(usage, event["timings"])
        if not finished:
            raise _BrokenStream("stream ended without [DONE]")
        if on_chunk is not None:
            await on_chunk(StreamChunk(ChunkType.FINAL))
        raw = "".join(text)
        # Constrained output is the call itself; anything else (free text, a
        # call truncated by max_tokens) goes to the engine's rescue/retry path.
        calls = parse_response(raw, rescue=False).calls if constrained else None
        response: LLMResponse = calls if calls else TextResponse(raw)
        return BackendReply(
            response=response, usage=usage, raw_text=raw, reasoning="".join(reasoning)
        )


class _BrokenStream(Exception):
    pass


def _add_timings(usage: Usage, timings: dict[str, Any]) -> None:
    cache_n = int(timings.get("cache_n", 0))
    usage.prompt_tokens += int(timings.get("prompt_n", 0)) + cache_n
    usage.cached_prompt_tokens += cache_n
    usage.completion_tokens += int(timings.get("predicted_n", 0))
    usage.prompt_ms += float(timings.get("prompt_ms", 0.0))
    usage.generation_ms += float(timings.get("predicted_ms", 0.0))


def _http_error(status: int, body: str) -> ForgeError:
    if "exceed_context_size" in body or "exceeds the available context size" in body:
        return ContextBudgetExceededError(
            f"the conversation no longer fits the model's context: {body[:300]}",
            status=status,
        )
    return BackendError(f"llama-server answered HTTP {status}: {body[:500]}", status=status)


async def read_props(base_url: str) -> dict[str, Any]:
    try:
        async with httpx.AsyncClient(base_url=base_url, timeout=10.0) as http:
            resp = await http.get("/props")
            resp.raise_for_status()
            props: dict[str, Any] = resp.json()
            return props
    except (httpx.HTTPError, ValueError) as exc:
        raise BackendError(f"cannot read {base_url}/props: {exc}", url=base_url) from exc


def choose_tool_call_mode(props: dict[str, Any]) -> str:
    """`auto`: native tool calling when the model's chat template supports it
    (/props chat_template_caps), otherwise the grammar-constrained mode.

    A template without tool support makes llama-server's native path fall back
    to free generation (measured with the bundled Gemma 3 270M: no call at all),
    whereas the constrained mode cannot produce anything but a valid call.
    """
    caps = props.get("chat_template_caps") or {}
    mode = (
        "native"
        if caps.get("supports_tool_calls") and caps.get("supports_tools")
        else "constrained"
    )
    log.info(
        "llama-server chat template %s tool calls: tool-call mode %s",
        "supports" if mode == "native" else "does not support",
        mode,
    )
    return mode


def parse_props(props: dict[str, Any]) -> tuple[int, int, str]:
    """(context tokens per slot, slot count, model name) from /props."""
    try:
        n_ctx = int(props["default_generation_settings"]["n_ctx"])
    except (KeyError, TypeError, ValueError) as exc:
        raise BackendError("llama-server /props has no default_generation_settings.n_ctx") from exc
    slots = int(props.get("total_slots", 1) or 1)
    model_path = str(props.get("model_path") or props.get("model_alias") or "unknown")
    return n_ctx, slots, Path(model_path).name
