"""Anthropic's Messages API through the official `anthropic` SDK.

Native tool calling: the tools go in `tools` with `input_schema` (only the ones
allowed this turn) and `tool_choice: {"type": "any"}` forces a call. The
history is converted to Anthropic's shape: the system prompt apart, tool calls
as `tool_use` blocks, tool results as `tool_result` blocks in the next user
message, every `tool_use` answered (native.py), strict user/assistant
alternation. The reply is streamed as raw events (text, `input_json` and
thinking deltas), so malformed tool input reaches the engine's rescue path
instead of failing inside the SDK.

`request.temperature` is not sent: the SDK's `messages.create` no longer takes
sampling parameters.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import anthropic
import httpx2

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
from forge_core.messages import MessageRole
from forge_core.modes import BudgetMode, ToolCallMode

log = logging.getLogger(__name__)

# Every current Claude model has at least this much context.
DEFAULT_CONTEXT_TOKENS = 200_000


class AnthropicBackend:
    name = "anthropic"

    def __init__(
        self,
        *,
        model: str,
        api_key: str = "",
        context_budget_tokens: int = DEFAULT_CONTEXT_TOKENS,
        budget_mode: str = BudgetMode.DEFAULT,
        base_url: str = "",
        tool_choice_any: bool = True,
        max_retries: int = 2,
        timeout_s: float = 600.0,
        client: anthropic.AsyncAnthropic | None = None,
    ) -> None:
        self.model = model
        self.tool_choice_any = tool_choice_any
        self._client = client or anthropic.AsyncAnthropic(
            api_key=api_key or None,
            base_url=base_url or None,
            max_retries=max_retries,
            timeout=timeout_s,
        )
        self._info = BackendInfo(
            name=self.name,
            model=model,
            context_budget_tokens=context_budget_tokens,
            budget_mode=budget_mode,
            backend_mode="external",
            url=str(self._client.base_url),
            tool_call_mode=ToolCallMode.NATIVE,
        )

    def info(self) -> BackendInfo:
        return self._info

    async def aclose(self) -> None:
        await self._client.close()

    def request_params(self, request: ChatRequest) -> dict[str, Any]:
        """Keyword arguments for `messages.create` (without `stream`)."""
        names = ToolNames(t.name for t in request.tools)
        system, messages = to_anthropic_messages(request, names)
        tools = [
            {
                "name": names.wire(t.name),
                **({"description": t.description} if t.description else {}),
                "input_schema": tool_parameters(t),
            }
            for t in offered_tools(request)
        ]
        forced = self.tool_choice_any and request.constrained
        params: dict[str, Any] = {
            "model": self.model,
            "max_tokens": request.max_tokens,
            "messages": messages,
            "tools": tools,
            "tool_choice": {
                "type": "any" if forced else "auto",
                "disable_parallel_tool_use": not request.parallel,
            },
        }
        if not tools:
            # A plain chat: the API refuses a tool_choice without tools.
            del params["tools"], params["tool_choice"]
        if system:
            params["system"] = system
        return params

    async def complete(self, request: ChatRequest, on_chunk: ChunkSink | None) -> BackendReply:
        params = self.request_params(request)
        names = ToolNames(t.name for t in request.tools)
        try:
            # The SDK's own retries only cover the request before the stream
            # starts; a stream that breaks after that is retried here.
            return await with_retries(
                lambda: self._stream(params, names, on_chunk),
                on_chunk,
                retry_on=(httpx2.TransportError, BrokenStream),
                fail=lambda exc: BackendError(f"anthropic stream failed: {exc}", retriable=True),
                log=log,
                what="anthropic stream",
            )
        except anthropic.APIStatusError as exc:
            raise api_error(exc.status_code, _error_body(exc)) from exc
        except anthropic.APIError as exc:
            # APIConnectionError covers refused connections and timeouts.
            raise BackendError(
                f"anthropic API call failed: {exc}",
                retriable=isinstance(exc, anthropic.APIConnectionError),
            ) from exc

    async def _stream(
        self, params: dict[str, Any], names: ToolNames, on_chunk: ChunkSink | None
    ) -> BackendReply:
        out = ReplyStream(on_chunk)
        blocks: dict[int, PartialCall] = {}
        finished = False
        stream = await self._client.messages.create(**params, stream=True)
        async with stream:
            async for event in stream:
                if event.type == "message_start":
                    _read_usage(out.usage, event.message.usage)
                elif event.type == "content_block_start":
                    out.output_started()
                    block = event.content_block
                    if block.type == "tool_use":
                        blocks[event.index] = PartialCall(id=block.id, name=block.name)
                        await out.emit(ChunkType.TOOL_CALL_DELTA, block.name)
                    elif block.type == "text" and block.text:
                        await out.add_text(block.text)
                    elif block.type == "thinking" and block.thinking:
                        out.reasoning.append(block.thinking)
                elif event.type == "content_block_delta":
                    delta = event.delta
                    if delta.type == "text_delta":
                        await out.add_text(delta.text)
                    elif delta.type == "input_json_delta" and event.index in blocks:
                        blocks[event.index].arguments.append(delta.partial_json)
                        await out.emit(ChunkType.TOOL_CALL_DELTA, delta.partial_json)
                    elif delta.type == "thinking_delta":
                        out.reasoning.append(delta.thinking)
                elif event.type == "message_delta":
                    _read_delta_usage(out.usage, event.usage)
                elif event.type == "message_stop":
                    finished = True
        if not finished:
            raise BrokenStream("the stream ended without message_stop")
        out.record_timing()
        return await out.reply([blocks[i] for i in sorted(blocks)], names)


def to_anthropic_messages(
    request: ChatRequest, names: ToolNames
) -> tuple[str, list[dict[str, Any]]]:
    """(system prompt, messages) in Anthropic's shape.

    Leading system messages become the system prompt; a later one (a summary,
    say) is sent as user text. Tool results become `tool_result` blocks of a
    user message, ahead of any text in it (the API requires that order);
    consecutive messages of one role are merged into one.
    """
    history, synthesized = wire_history(request)
    system: list[str] = []
    turns: list[dict[str, Any]] = []
    for msg in history:
        if msg.role is MessageRole.SYSTEM and not turns:
            if msg.content:
                system.append(msg.content)
            continue
        role = "assistant" if msg.role is MessageRole.ASSISTANT else "user"
        blocks: list[dict[str, Any]] = []
        if msg.role is MessageRole.TOOL:
            result: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": msg.tool_call_id,
                "content": msg.content,
            }
            if msg.tool_call_id in synthesized:
                result["is_error"] = True
            blocks.append(result)
        else:
            if msg.content.strip():
                blocks.append({"type": "text", "text": msg.content})
            blocks.extend(
                {"type": "tool_use", "id": c.call_id, "name": names.wire(c.name), "input": c.args}
                for c in msg.tool_calls
            )
        if not blocks:
            continue  # the API rejects empty content
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    for turn in turns:
        if turn["role"] == "user":
            content = turn["content"]
            turn["content"] = [b for b in content if b["type"] == "tool_result"] + [
                b for b in content if b["type"] != "tool_result"
            ]
    return "\n\n".join(system), turns


def _read_usage(usage: Usage, reported: anthropic.types.Usage) -> None:
    cache_read = reported.cache_read_input_tokens or 0
    cache_write = reported.cache_creation_input_tokens or 0
    usage.prompt_tokens = reported.input_tokens + cache_read + cache_write
    usage.cached_prompt_tokens = cache_read
    usage.completion_tokens = reported.output_tokens


def _read_delta_usage(usage: Usage, reported: anthropic.types.MessageDeltaUsage) -> None:
    # Cumulative counts; input counts only appear here on some API versions.
    usage.completion_tokens = reported.output_tokens
    if reported.input_tokens is not None:
        cache_read = reported.cache_read_input_tokens or 0
        cache_write = reported.cache_creation_input_tokens or 0
        usage.prompt_tokens = reported.input_tokens + cache_read + cache_write
        usage.cached_prompt_tokens = cache_read


def _error_body(exc: anthropic.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        return json.dumps(body)
    return str(body) if body is not None else exc.message


def api_error(status: int, body: str) -> ForgeError:
    return status_error(status, body, "anthropic API")
