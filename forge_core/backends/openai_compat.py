"""Any OpenAI-compatible `/v1/chat/completions` server (vLLM, LM Studio, ...).

Native tool calling: the tools go in `tools` (OpenAI function format, only the
ones allowed this turn) with `tool_choice: "required"` when the server
supports it, and the answer comes back as streamed `delta.tool_calls`
fragments that are assembled by index. The engine's history is replayed as
assistant `tool_calls` and `tool` messages (see native.py for the pairing and
reasoning rules).
"""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import urlsplit

import httpx

from forge_core.backends.base import BackendInfo, BackendReply, ChatRequest
from forge_core.backends.native import (
    BrokenStream,
    PartialCall,
    ReplyStream,
    ToolNames,
    offered_tools,
    status_error,
    tool_parameters,
    wire_history,
    with_retries,
)
from forge_core.calls import ChunkSink, ChunkType, Usage
from forge_core.errors import BackendError, ForgeError
from forge_core.messages import Message, MessageRole
from forge_core.modes import BudgetMode, ToolCallMode

log = logging.getLogger(__name__)
# Used when neither --budget-tokens nor the server's /v1/models says more.
DEFAULT_CONTEXT_TOKENS = 8192


def api_base(base_url: str) -> str:
    """The API root requests are made under: the URL as given when it has a
    path (`http://host:8000/v1`, `https://host/openai/v1`), `<url>/v1` when it
    is a bare host (`http://host:8000`)."""
    url = base_url.rstrip("/")
    return url if urlsplit(url).path else url + "/v1"


class OpenAICompatBackend:
    name = "openai"

    def __init__(
        self,
        base_url: str,
        *,
        model: str,
        context_budget_tokens: int,
        api_key: str = "",
        tool_choice_required: bool = True,
        budget_mode: str = BudgetMode.MANUAL,
        timeout_s: float = 600.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = api_base(base_url)
        self.model = model
        self.tool_choice_required = tool_choice_required
        self._info = BackendInfo(
            name=self.name,
            model=model,
            context_budget_tokens=context_budget_tokens,
            budget_mode=budget_mode,
            backend_mode="external",
            url=self.base_url,
            tool_call_mode=ToolCallMode.NATIVE,
        )
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            headers=headers,
            timeout=httpx.Timeout(timeout_s, connect=10.0),
            transport=transport,
        )

    @classmethod
    async def connect(
        cls,
        base_url: str,
        *,
        model: str = "",
        api_key: str = "",
        budget_tokens: int = 0,
        tool_choice_required: bool = True,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> OpenAICompatBackend:
        """Fill in what was not given from the server's `/models`.

        No model name: the first model the server lists. No budget: the
        model's `max_model_len` (vLLM reports it), else DEFAULT_CONTEXT_TOKENS.
        """
        budget, mode = budget_tokens, BudgetMode.MANUAL
        if not model or budget <= 0:
            models = await _list_models(api_base(base_url), api_key, transport)
            if not model:
                if not models:
                    raise BackendError(f"{base_url} lists no models; pass a model name")
                model = str(models[0].get("id", ""))
            if budget <= 0:
                entry = next((m for m in models if m.get("id") == model), {})
                max_len = entry.get("max_model_len")
                if isinstance(max_len, int) and max_len > 0:
                    budget, mode = max_len, BudgetMode.BACKEND
                else:
                    budget, mode = DEFAULT_CONTEXT_TOKENS, BudgetMode.DEFAULT
        return cls(
            base_url,
            model=model,
            context_budget_tokens=budget,
            api_key=api_key,
            tool_choice_required=tool_choice_required,
            budget_mode=mode,
            transport=transport,
        )

    def info(self) -> BackendInfo:
        return self._info

    async def aclose(self) -> None:
        await self._http.aclose()

    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        names = ToolNames(t.name for t in request.tools)
        tools = [
            {
                "type": "function",
                "function": {
                    "name": names.wire(t.name),
                    **({"description": t.description} if t.description else {}),
                    "parameters": tool_parameters(t),
                },
            }
            for t in offered_tools(request)
        ]
        body: dict[str, Any] = {
            "model": self.model,
            "messages": to_openai_messages(request, names),
            "tools": tools,
            "parallel_tool_calls": request.parallel,
            "temperature": request.temperature,
            "max_tokens": request.max_tokens,
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if not tools:
            # A plain chat (the OpenAI endpoint's, with no tools): the OpenAI
            # API refuses an empty `tools` and parallel_tool_calls without one.
            del body["tools"], body["parallel_tool_calls"]
        elif self.tool_choice_required and request.constrained:
            body["tool_choice"] = "required"
        return body

    async def complete(self, request: ChatRequest, on_chunk: ChunkSink | None) -> BackendReply:
        body = self.request_body(request)
        names = ToolNames(t.name for t in request.tools)
        return await with_retries(
            lambda: self._stream(body, names, on_chunk),
            on_chunk,
            retry_on=(httpx.TransportError, BrokenStream),
            fail=lambda exc: BackendError(
                f"{self.base_url} failed: {exc}", retriable=True, url=self.base_url
            ),
            log=log,
            what="chat completion stream",
        )

    async def _stream(
        self, body: dict[str, Any], names: ToolNames, on_chunk: ChunkSink | None
    ) -> BackendReply:
        out = ReplyStream(on_chunk)
        calls: dict[int, PartialCall] = {}
        finished = False
        async with self._http.stream("POST", "/chat/completions", json=body) as resp:
            if resp.status_code != 200:
                await resp.aread()
                raise http_error(resp.status_code, resp.text)
            async for line in resp.aiter_lines():
                if not line.startswith("data:"):
                    continue
                data = line[5:].strip()
                if data == "[DONE]":
                    finished = True
                    break
                try:
                    event = json.loads(data)
                except ValueError as exc:
                    raise BrokenStream(f"undecodable stream event {data[:200]!r}") from exc
                if "error" in event:
                    err = event["error"]
                    status = err.get("code") if isinstance(err, dict) else None
                    raise http_error(status if isinstance(status, int) else 500, json.dumps(err))
                if event.get("usage"):
                    _read_usage(out.usage, event["usage"])
                for choice in event.get("choices") or []:
                    out.output_started()
                    if choice.get("finish_reason"):
                        finished = True
                    delta = choice.get("delta") or {}
                    thought = delta.get("reasoning_content") or delta.get("reasoning")
                    if thought:
                        out.reasoning.append(thought)
                    if delta.get("content"):
                        await out.add_text(delta["content"])
                    for pos, fragment in enumerate(delta.get("tool_calls") or []):
                        index = fragment.get("index", pos)
                        call = calls.setdefault(index, PartialCall())
                        if fragment.get("id") and not call.id:
                            call.id = fragment["id"]
                        function = fragment.get("function") or {}
                        name = function.get("name")
                        # Some servers repeat the whole name in every fragment.
                        if name and name != call.name:
                            call.name += name
                            await out.emit(ChunkType.TOOL_CALL_DELTA, name)
                        if function.get("arguments"):
                            call.arguments.append(function["arguments"])
                            await out.emit(ChunkType.TOOL_CALL_DELTA, function["arguments"])
        if not finished:
            raise BrokenStream("stream ended without [DONE] or a finish_reason")
        out.record_timing()
        return await out.reply([calls[i] for i in sorted(calls)], names)


def to_openai_messages(request: ChatRequest, names: ToolNames) -> list[dict[str, Any]]:
    """The engine's history as OpenAI chat messages (native tool-call shape)."""
    history, _ = wire_history(request)
    return [_openai_message(m, names) for m in history]


def _openai_message(msg: Message, names: ToolNames) -> dict[str, Any]:
    if msg.role is MessageRole.TOOL:
        return {"role": "tool", "tool_call_id": msg.tool_call_id, "content": msg.content}
    if msg.role is MessageRole.ASSISTANT and msg.tool_calls:
        return {
            "role": "assistant",
            "content": msg.content or None,
            "tool_calls": [
                {
                    "id": c.call_id,
                    "type": "function",
                    "function": {"name": names.wire(c.name), "arguments": c.arguments_json()},
                }
                for c in msg.tool_calls
            ],
        }
    return {"role": msg.role.value, "content": msg.content}


def _read_usage(usage: Usage, data: dict[str, Any]) -> None:
    """The last usage report wins (servers send it once, in the final chunk)."""
    usage.prompt_tokens = int(data.get("prompt_tokens") or 0)
    usage.completion_tokens = int(data.get("completion_tokens") or 0)
    details = data.get("prompt_tokens_details") or {}
    usage.cached_prompt_tokens = int(details.get("cached_tokens") or 0)


def http_error(status: int, body: str) -> ForgeError:
    return status_error(status, body, "chat completions")


async def _list_models(
    base: str, api_key: str, transport: httpx.AsyncBaseTransport | None
) -> list[dict[str, Any]]:
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        async with httpx.AsyncClient(
            base_url=base, headers=headers, timeout=10.0, transport=transport
        ) as http:
            resp = await http.get("/models")
            resp.raise_for_status()
            data = resp.json().get("data")
    except (httpx.HTTPError, ValueError, AttributeError) as exc:
        raise BackendError(f"cannot read {base}/models: {exc}", url=base) from exc
    return [m for m in data if isinstance(m, dict)] if isinstance(data, list) else []
