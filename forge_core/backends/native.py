"""What the native tool-calling backends (OpenAI-compatible, Ollama, Anthropic) share.

These backends hand the tools to the server as structured definitions and get
structured calls back, so the engine's history has to be replayed in the same
shape: every assistant tool call answered by exactly one tool result, reasoning
folded into the assistant turn it belongs to, tool names the API accepts.

They also stream their replies the same way (ReplyStream: text, reasoning,
usage and timing, the chunks sent on; then `finish`), retry a stream that
broke with `with_retries` (llama-server's backend uses it too) and map an
error answer with `status_error`.
"""

from __future__ import annotations

import copy
import json
import logging
import re
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from forge_core.backends.base import BackendReply, ChatRequest
from forge_core.calls import (
    ChunkSink,
    ChunkType,
    LLMResponse,
    StreamChunk,
    TextResponse,
    ToolCall,
    Usage,
)
from forge_core.errors import BackendError, ContextBudgetExceededError, ForgeError
from forge_core.messages import Message, MessageRole, MessageType
from forge_core.parsing import split_reasoning
from forge_core.prompting import replayed_reasoning
from forge_core.workflow import ToolSpec

# The answer a tool call gets on the wire when the history holds none for it
# (compaction dropped it, or the transcript was cut after the call).
NOT_EXECUTED = "[Not executed] no result was recorded for this tool call."


def offered_tools(request: ChatRequest) -> list[ToolSpec]:
    """The tools offered this turn: the allowed ones, or all when none are named."""
    if not request.allowed:
        return list(request.tools)
    allowed = set(request.allowed)
    return [t for t in request.tools if t.name in allowed] or list(request.tools)


def tool_parameters(spec: ToolSpec) -> dict[str, Any]:
    """The tool's JSON Schema as an object schema (what every tools API requires)."""
    schema = copy.deepcopy(spec.parameters)
    schema.setdefault("type", "object")
    if schema.get("type") == "object":
        schema.setdefault("properties", {})
    return schema


def fold_reasoning(messages: list[Message], policy: str) -> list[Message]:
    """Drop REASONING messages, folding the replayed ones into the content of the
    assistant message that follows them (the tool-call turn they led to).

    Which ones are replayed follows the same policy as the prompt-injected
    path (prompting.replayed_reasoning); reasoning with no assistant message
    after it is dropped.
    """
    keep = replayed_reasoning(messages, policy)
    out: list[Message] = []
    pending: list[str] = []
    for i, msg in enumerate(messages):
        if msg.type is MessageType.REASONING:
            if i in keep and msg.content.strip():
                pending.append(msg.content.strip())
            continue
        if msg.role is MessageRole.ASSISTANT and pending:
            content = "\n\n".join([*pending, msg.content] if msg.content else pending)
            msg = replace(msg, content=content)
            pending = []
        elif msg.role is MessageRole.ASSISTANT:
            pending = []
        out.append(msg)
    return out


def pair_tool_results(messages: list[Message]) -> tuple[list[Message], set[str]]:
    """Make every assistant tool call answered by exactly one tool message.

    The tool messages answering an assistant message's calls are moved right
    after it, in call order; a call with no answer before the next assistant
    message gets a synthetic NOT_EXECUTED result (its id is in the returned
    set); tool messages that answer no call of the preceding assistant message
    (orphans) are dropped. Other messages keep their order.
    """
    out: list[Message] = []
    synthesized: set[str] = set()
    i, n = 0, len(messages)
    while i < n:
        msg = messages[i]
        i += 1
        if msg.role is MessageRole.TOOL:
            continue  # orphan: no assistant tool call before it
        out.append(msg)
        if msg.role is not MessageRole.ASSISTANT or not msg.tool_calls:
            continue
        end = i
        while end < n and messages[end].role is not MessageRole.ASSISTANT:
            end += 1
        run = messages[i:end]
        answers: dict[str, Message] = {}
        for m in run:
            if m.role is MessageRole.TOOL and m.tool_call_id not in answers:
                answers[m.tool_call_id] = m
        for call in msg.tool_calls:
            answer = answers.get(call.call_id)
            if answer is None:
                answer = Message(
                    MessageRole.TOOL,
                    NOT_EXECUTED,
                    MessageType.TOOL_RESULT,
                    step_index=msg.step_index,
                    tool_call_id=call.call_id,
                    tool_name=call.name,
                    transient=True,
                )
                synthesized.add(call.call_id)
            out.append(answer)
        out.extend(m for m in run if m.role is not MessageRole.TOOL)
        i = end
    return out, synthesized


def wire_history(request: ChatRequest) -> tuple[list[Message], set[str]]:
    """The request's messages ready for a native tools API (see the two steps)."""
    return pair_tool_results(fold_reasoning(request.messages, request.reasoning_replay))


_WIRE_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def _sanitize(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", name)[:64] or "_"


class ToolNames:
    """Tool names as APIs that only accept `^[A-Za-z0-9_-]{1,64}$` see them.

    Forge allows dots in tool names; OpenAI and Anthropic reject them. Names
    that already fit are sent unchanged; others get a sanitized, unique wire
    name that maps back when the model calls it.
    """

    def __init__(self, names: Iterable[str]) -> None:
        names = list(names)
        self._wire: dict[str, str] = {}
        self._local: dict[str, str] = {}
        taken = {n for n in names if _WIRE_NAME.match(n)}
        for name in names:
            if _WIRE_NAME.match(name):
                wire = name
            else:
                base = wire = _sanitize(name)
                k = 2
                while wire in taken:
                    suffix = f"_{k}"
                    wire = base[: 64 - len(suffix)] + suffix
                    k += 1
                taken.add(wire)
            self._wire[name] = wire
            self._local[wire] = name

    def wire(self, name: str) -> str:
        return self._wire.get(name) or (name if _WIRE_NAME.match(name) else _sanitize(name))

    def local(self, wire: str) -> str:
        return self._local.get(wire, wire)


@dataclass
class PartialCall:
    """A tool call being assembled from stream fragments."""

    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)
    # Set when the backend delivers arguments already decoded (Ollama).
    decoded: dict[str, Any] | None = None

    @property
    def raw_arguments(self) -> str:
        if self.decoded is not None:
            return json.dumps(self.decoded, ensure_ascii=False)
        return "".join(self.arguments)


def parse_arguments(raw: str) -> dict[str, Any] | None:
    """Decoded JSON object arguments; "" means no arguments; None if malformed."""
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def calls_as_text(calls: list[PartialCall]) -> str:
    """The calls in the engine's `{"tool", "args"}` text form, arguments as sent.

    Malformed arguments are kept verbatim, so the rescue path sees exactly what
    the model produced.
    """
    lines = []
    for c in calls:
        name = json.dumps(c.name, ensure_ascii=False)
        args = c.raw_arguments.strip() or "{}"
        lines.append(f'{{"tool": {name}, "args": {args}}}')
    return "\n".join(lines)


@dataclass(frozen=True)
class Finished:
    response: LLMResponse
    raw_text: str
    reasoning: str


def finish(
    text: str, reasoning: str, calls: list[PartialCall], names: ToolNames | None = None
) -> Finished:
    """Turn a finished stream into the engine's response.

    - no calls: a TextResponse with the text (the engine rescues calls from it);
    - calls whose arguments all decode: the calls; text said alongside them is
      kept as reasoning (split off any <think> block first);
    - any call with malformed arguments: a TextResponse holding the text and
      the calls verbatim, so the engine's rescue or retry path handles it.
    """
    for c in calls:
        if names is not None:
            c.name = names.local(c.name)
    rendered = calls_as_text(calls)
    raw = "\n".join(p for p in (text, rendered) if p)
    if not calls:
        return Finished(TextResponse(text), raw, reasoning)
    parsed: list[ToolCall] = []
    for c in calls:
        args = c.decoded if c.decoded is not None else parse_arguments(c.raw_arguments)
        if args is None or not c.name:
            return Finished(TextResponse(raw), raw, reasoning)
        parsed.append(ToolCall(name=c.name, args=args))
    thought, rest = split_reasoning(text)
    reasoning = "\n".join(r for r in (reasoning, thought, rest) if r)
    return Finished(parsed, raw, reasoning)


_CONTEXT_ERROR = re.compile(
    r"context_length_exceeded|maximum context length|context length|context window"
    r"|exceed_context_size|exceeds the available context size|prompt is too long"
    r"|exceed context limit",
    re.IGNORECASE,
)


def is_context_error(text: str) -> bool:
    """Whether an error body says the prompt does not fit the model's context."""
    return bool(_CONTEXT_ERROR.search(text))


def status_error(
    status: int,
    body: str,
    who: str,
    *,
    context_error: Callable[[str], bool] = is_context_error,
) -> ForgeError:
    """The error for an HTTP error answer from `who`: ContextBudgetExceededError
    when the body says the prompt does not fit (`context_error`), else
    BackendError."""
    if context_error(body):
        return ContextBudgetExceededError(
            f"the conversation no longer fits the model's context: {body[:300]}", status=status
        )
    return BackendError(f"{who} answered HTTP {status}: {body[:500]}", status=status)


# A stream that breaks after it started is tried this many times in all.
STREAM_ATTEMPTS = 2

T = TypeVar("T")


class BrokenStream(Exception):
    """The reply stream broke off or could not be read: worth another try."""


async def with_retries(
    stream: Callable[[], Awaitable[T]],
    on_chunk: ChunkSink | None,
    *,
    retry_on: tuple[type[Exception], ...],
    fail: Callable[[Exception], ForgeError],
    log: logging.Logger,
    what: str,
    attempts: int = STREAM_ATTEMPTS,
    before_retry: Callable[[], Awaitable[None]] | None = None,
) -> T:
    """`stream()`, tried again after a `retry_on` failure up to `attempts` times
    in all; the last failure raises `fail(exc)`.

    Before each retry the sink gets a RETRY chunk (what was streamed so far is
    void) and `before_retry` runs (llama-server: wait out a restart). Other
    exceptions pass through at once.
    """
    for attempt in range(1, attempts + 1):
        try:
            return await stream()
        except retry_on as exc:
            if attempt == attempts:
                raise fail(exc) from exc
            log.warning("%s failed (%s); retrying", what, exc)
            if on_chunk is not None:
                await on_chunk(StreamChunk(ChunkType.RETRY))
            if before_retry is not None:
                await before_retry()
    raise AssertionError("unreachable")


class ReplyStream:
    """One streamed reply as it arrives: text and reasoning pieces, usage, the
    time to the first output, and the chunks forwarded to the caller's sink."""

    def __init__(self, on_chunk: ChunkSink | None) -> None:
        self.on_chunk = on_chunk
        self.text: list[str] = []
        self.reasoning: list[str] = []
        self.usage = Usage(model_calls=1)
        self.started = time.monotonic()
        self.first: float | None = None

    def output_started(self) -> None:
        """Note the first output: the prompt has been evaluated by now."""
        if self.first is None:
            self.first = time.monotonic()

    async def emit(self, kind: ChunkType, piece: str) -> None:
        if self.on_chunk is not None and piece:
            await self.on_chunk(StreamChunk(kind, piece))

    async def add_text(self, piece: str) -> None:
        self.text.append(piece)
        await self.emit(ChunkType.TEXT_DELTA, piece)

    def record_timing(self) -> None:
        """Split the wall time at the first output into prompt and generation
        time, for servers that report no timings of their own."""
        ended = time.monotonic()
        first = self.first if self.first is not None else ended
        self.usage.prompt_ms = (first - self.started) * 1000.0
        self.usage.generation_ms = (ended - first) * 1000.0

    async def reply(self, calls: list[PartialCall], names: ToolNames | None = None) -> BackendReply:
        """The finished stream as the engine's reply; the sink gets FINAL first."""
        if self.on_chunk is not None:
            await self.on_chunk(StreamChunk(ChunkType.FINAL))
        done = finish("".join(self.text), "".join(self.reasoning), calls, names)
        return BackendReply(
            response=done.response,
            usage=self.usage,
            raw_text=done.raw_text,
            reasoning=done.reasoning,
        )
