"""Ollama over its native `/api/chat` API.

Native tool calling: the tools go in `tools` (only the ones allowed this turn),
the answer streams back as NDJSON with whole calls in `message.tool_calls`
(arguments as JSON objects, not strings) and reasoning in `message.thinking`.
Ollama silently truncates a prompt longer than its `num_ctx` (2048 or 4096
by default), so every request sets `options.num_ctx` to the context budget,
which is read from `/api/show` at start-up.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

import httpx

from forge_core.backends.base import BackendInfo, BackendReply, ChatRequest
from forge_core.backends.native import (
    BrokenStream,
    PartialCall,
    ReplyStream,
    offered_tools,
    status_error,
    tool_parameters,
    wire_history,
    with_retries,
)
from forge_core.calls import ChunkSink, ChunkType, Usage
from forge_core.errors import BackendError, ForgeError
from forge_core.llama_host.hardware import GIB, Gpu, detect_gpus, vram_tier_budget
from forge_core.messages import Message, MessageRole
from forge_core.modes import BudgetMode, ToolCallMode, resolvable_budget_mode

log = logging.getLogger(__name__)

DEFAULT_URL = "http://127.0.0.1:11434"


class OllamaBackend:
    name = "ollama"

    def __init__(
        self,
        base_url: str,
        *,
        model: str,
        context_budget_tokens: int,
        budget_mode: str = BudgetMode.BACKEND,
        budget_source: str = "",
        think: bool | None = None,
        timeout_s: float = 600.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        # None: let Ollama decide; True/False: sent as `think`.
        self.think = think
        self._info = BackendInfo(
            name=self.name,
            model=model,
            context_budget_tokens=context_budget_tokens,
            budget_mode=budget_mode,
            backend_mode="external",
            url=self.base_url,
            tool_call_mode=ToolCallMode.NATIVE,
            budget_source=budget_source,
        )
        self._http = httpx.AsyncClient(
            base_url=self.base_url,
            timeout=httpx.Timeout(timeout_s, connect=10.0),
            transport=transport,
        )

    @classmethod
    async def connect(
        cls,
        base_url: str,
        *,
        model: str,
        budget_mode: str = BudgetMode.BACKEND,
        manual_budget_tokens: int = 0,
        think: bool | None = None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> OllamaBackend:
        """Read the model's context length from `/api/show`.

        With budget mode "manual" the budget is `manual_budget_tokens`, capped
        at what the model supports.
        """
        show = await read_show(base_url.rstrip("/"), model, transport)
        budget, source = ollama_budget(
            context_length(show), budget_mode, manual_budget_tokens, detect_gpus()
        )
        return cls(
            base_url,
            model=model,
            context_budget_tokens=budget,
            budget_mode=budget_mode,
            budget_source=source,
            think=think,
            transport=transport,
        )

    def info(self) -> BackendInfo:
        return self._info

    async def aclose(self) -> None:
        await self._http.aclose()

    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": to_ollama_messages(request),
            "tools": [
                {
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": tool_parameters(t),
                    },
                }
                for t in offered_tools(request)
            ],
            "stream": True,
            "options": {
                "num_ctx": self._info.context_budget_tokens,
                "temperature": request.temperature,
                "num_predict": request.max_tokens,
            },
        }
        if self.think is not None:
            body["think"] = self.think
        return body

    async def complete(self, request: ChatRequest, on_chunk: ChunkSink | None) -> BackendReply:
        body = self.request_body(request)
        return await with_retries(
            lambda: self._stream(body, on_chunk),
            on_chunk,
            retry_on=(httpx.TransportError, BrokenStream),
            fail=lambda exc: BackendError(
                f"ollama at {self.base_url} failed: {exc}", retriable=True, url=self.base_url
            ),
            log=log,
            what="ollama stream",
        )

    async def _stream(self, body: dict[str, Any], on_chunk: ChunkSink | None) -> BackendReply:
        # Ollama reports its own timings (_read_usage): no record_timing().
        out = ReplyStream(on_chunk)
        calls: list[PartialCall] = []
        finished = False
        async with self._http.stream("POST", "/api/chat", json=body) as resp:
            if resp.status_code != 200:
                await resp.aread()
                raise http_error(resp.status_code, _error_text(resp.text))
            async for line in resp.aiter_lines():
                if not line.strip():
                    continue
                try:
                    event = json.loads(line)
                except ValueError as exc:
                    raise BrokenStream(f"undecodable stream line {line[:200]!r}") from exc
                if event.get("error"):
                    raise http_error(500, str(event["error"]))
                message = event.get("message") or {}
                if message.get("thinking"):
                    out.reasoning.append(message["thinking"])
                if message.get("content"):
                    await out.add_text(message["content"])
                for raw in message.get("tool_calls") or []:
                    call = _partial(raw)
                    calls.append(call)
                    await out.emit(ChunkType.TOOL_CALL_DELTA, call.name)
                    await out.emit(ChunkType.TOOL_CALL_DELTA, call.raw_arguments)
                if event.get("done"):
                    _read_usage(out.usage, event)
                    finished = True
                    break
        if not finished:
            raise BrokenStream("stream ended before done")
        return await out.reply(calls)


def _partial(raw: dict[str, Any]) -> PartialCall:
    function = raw.get("function") or {}
    call = PartialCall(id=str(raw.get("id") or ""), name=str(function.get("name") or ""))
    args = function.get("arguments")
    if isinstance(args, dict):
        call.decoded = args
    elif isinstance(args, str):  # not Ollama's shape, but seen from some templates
        call.arguments.append(args)
    elif args is not None:
        call.arguments.append(json.dumps(args))
    return call


def to_ollama_messages(request: ChatRequest) -> list[dict[str, Any]]:
    """The engine's history as Ollama chat messages."""
    history, _ = wire_history(request)
    return [_ollama_message(m) for m in history]


def _ollama_message(msg: Message) -> dict[str, Any]:
    if msg.role is MessageRole.TOOL:
        return {"role": "tool", "content": msg.content, "tool_name": msg.tool_name}
    if msg.role is MessageRole.ASSISTANT and msg.tool_calls:
        return {
            "role": "assistant",
            "content": msg.content,
            "tool_calls": [
                {"function": {"name": c.name, "arguments": c.args}} for c in msg.tool_calls
            ],
        }
    return {"role": msg.role.value, "content": msg.content}


def _read_usage(usage: Usage, done: dict[str, Any]) -> None:
    usage.prompt_tokens = int(done.get("prompt_eval_count") or 0)
    usage.completion_tokens = int(done.get("eval_count") or 0)
    usage.prompt_ms = float(done.get("prompt_eval_duration") or 0) / 1e6
    usage.generation_ms = float(done.get("eval_duration") or 0) / 1e6


def _error_text(body: str) -> str:
    try:
        data = json.loads(body)
    except ValueError:
        return body
    return str(data.get("error", body)) if isinstance(data, dict) else body


def http_error(status: int, body: str) -> ForgeError:
    return status_error(status, body, "ollama")


async def read_show(
    base_url: str, model: str, transport: httpx.AsyncBaseTransport | None = None
) -> dict[str, Any]:
    try:
        async with httpx.AsyncClient(base_url=base_url, timeout=10.0, transport=transport) as http:
            resp = await http.post("/api/show", json={"model": model})
            if resp.status_code != 200:
                raise BackendError(
                    f"ollama at {base_url} cannot show model {model!r}: "
                    f"HTTP {resp.status_code} {_error_text(resp.text)[:300]}",
                    url=base_url,
                    status=resp.status_code,
                )
            show: dict[str, Any] = resp.json()
            return show
    except (httpx.HTTPError, ValueError) as exc:
        raise BackendError(f"cannot read {base_url}/api/show: {exc}", url=base_url) from exc


_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d+)\s*$", re.MULTILINE)


def context_length(show: dict[str, Any]) -> int:
    """The context to run the model with, from an `/api/show` answer.

    A `num_ctx` set in the model's Modelfile wins (someone chose it for this
    machine); otherwise the model's trained `<arch>.context_length`.
    """
    configured = _NUM_CTX.search(str(show.get("parameters") or ""))
    if configured:
        return int(configured.group(1))
    info = show.get("model_info") or {}
    arch = info.get("general.architecture")
    value = info.get(f"{arch}.context_length") if arch else None
    if value is None:
        value = next((v for k, v in info.items() if k.endswith(".context_length")), None)
    if not isinstance(value, int) or value <= 0:
        raise BackendError("ollama /api/show reports no <arch>.context_length for the model")
    return value


def ollama_budget(
    model_max: int, mode: str, manual_tokens: int, gpus: tuple[list[Gpu], str]
) -> tuple[int, str]:
    """(budget, how it was resolved) for Ollama, as the reference library does.

    backend: the model's context length (/api/show). manual: the given count,
    capped at it. forge-full: the VRAM tier of the largest GPU (<24 GiB 4096,
    24-48 GiB 32768, more 262144), capped at the model; forge-fast: half of
    that. With no GPU visible the VRAM modes fall back to the model's own
    context length and say so.
    """
    mode = resolvable_budget_mode(mode, manual_tokens)
    if mode is BudgetMode.MANUAL:
        return min(manual_tokens, model_max), "manual"
    if mode in (BudgetMode.FORGE_FULL, BudgetMode.FORGE_FAST):
        found, why = gpus
        if not found:
            return (
                model_max,
                f"context length {model_max} from /api/show ({why}; {mode} needs VRAM)",
            )
        vram = max(g.vram_total_bytes for g in found)
        budget = min(vram_tier_budget(vram), model_max)
        if mode is BudgetMode.FORGE_FAST:
            budget //= 2
        return budget, f"{mode}: VRAM tier for {vram / GIB:.0f} GiB ({found[0].name})"
    return model_max, f"context length {model_max} from /api/show"
