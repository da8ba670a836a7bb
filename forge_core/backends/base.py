"""The backend interface and the types that cross it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from forge_core.messages import Message
from forge_core.workflow import ToolSpec


@dataclass(frozen=True)
class ToolCall:
    """A tool call as the model produced it (not yet validated)."""

    name: str
    args: dict[str, Any]


@dataclass(frozen=True)
class TextResponse:
    """The model answered with text instead of a tool call."""

    content: str


LLMResponse = list[ToolCall] | TextResponse


class ChunkType(StrEnum):
    TEXT_DELTA = "text_delta"
    TOOL_CALL_DELTA = "tool_call_delta"
    FINAL = "final"
    RETRY = "retry"


@dataclass(frozen=True)
class StreamChunk:
    type: ChunkType
    content: str = ""


ChunkSink = Callable[[StreamChunk], Awaitable[None]]


@dataclass(frozen=True)
class IterationUsage:
    iteration: int
    prompt_tokens: int
    cached_prompt_tokens: int
    prompt_ms: float
    generation_ms: float
    slot: int = -1

    @property
    def cache_hit_ratio(self) -> float:
        return self.cached_prompt_tokens / self.prompt_tokens if self.prompt_tokens else 0.0


@dataclass
class Usage:
    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    prompt_ms: float = 0.0
    generation_ms: float = 0.0
    # For one backend call: the server slot it ran on (-1 when unknown).
    slot: int = -1
    iterations: list[IterationUsage] = field(default_factory=list)

    @property
    def cache_hit_ratio(self) -> float:
        return self.cached_prompt_tokens / self.prompt_tokens if self.prompt_tokens else 0.0

    def record(self, iteration: int, call: Usage) -> None:
        """Add one model call's usage, keeping its per-iteration line."""
        self.add(call)
        self.iterations.append(
            IterationUsage(
                iteration=iteration,
                prompt_tokens=call.prompt_tokens,
                cached_prompt_tokens=call.cached_prompt_tokens,
                prompt_ms=call.prompt_ms,
                generation_ms=call.generation_ms,
                slot=call.slot,
            )
        )

    def add(self, other: Usage) -> None:
        self.model_calls += other.model_calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cached_prompt_tokens += other.cached_prompt_tokens
        self.prompt_ms += other.prompt_ms
        self.generation_ms += other.generation_ms


@dataclass
class ChatRequest:
    run_id: str
    workflow_name: str
    messages: list[Message]
    # Every tool of the workflow, in a stable order (described in the prompt).
    tools: list[ToolSpec]
    # Names the model may call in this turn; the constraint admits only these.
    allowed: list[str]
    constrained: bool = True
    temperature: float = 0.0
    max_tokens: int = 512
    # Admit several calls in one turn (a JSON array in constrained mode).
    parallel: bool = False
    # "none" | "keep_last" | "full": which REASONING messages go back to the model.
    reasoning_replay: str = "keep_last"
    # Slot scheduling (llama-server): lower runs first.
    priority: int = 0
    cancel_on_preempt: bool = False
    # Told the run's queue position while it waits for a slot (0: got one),
    # and whether it waits because it was preempted.
    on_queue: Callable[[int, bool], Awaitable[None]] | None = None
    # Prompt mode: describe each parameter (enum, required, default, description).
    parameter_docs: bool = True
    # Calls that failed earlier in the run, (name, args): a grammar-constrained
    # backend leaves them out of what the model can write where it can.
    excluded_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    # Values seen in the conversation that grounded parameters are limited to
    # (grounding.py); None: grounding off.
    grounded_values: list[str] | None = None
    # "tool.param" -> the only values that parameter now takes: the tool
    # rejected a value for its format, and these are it in that format.
    grounded_formats: dict[str, list[str]] = field(default_factory=dict)
    # Parameter name -> the candidates the conversation labels as its kind
    # ("Order Q-58" for order_id): that parameter prefers them.
    grounded_labels: dict[str, list[str]] = field(default_factory=dict)


@dataclass
class BackendReply:
    response: LLMResponse
    usage: Usage = field(default_factory=Usage)
    # The raw text the model produced, kept for transcripts of failed attempts.
    raw_text: str = ""
    # Chain-of-thought the backend reported separately (e.g. reasoning_content).
    reasoning: str = ""
    # Generation stopped at max_tokens (finish_reason "length").
    truncated: bool = False


@dataclass
class BackendInfo:
    name: str
    model: str
    context_budget_tokens: int
    slots: int = 1
    budget_mode: str = "backend"
    backend_mode: str = ""
    url: str = ""
    tool_call_mode: str = ""
    budget_source: str = ""
    kv_cache_type: str = ""


@runtime_checkable
class RunTracking(Protocol):
    """A backend that keeps per-run state (e.g. slot affinity) to drop at the end."""

    def forget_run(self, run_id: str) -> None: ...


@runtime_checkable
class TokenCounting(Protocol):
    """A backend that can count a request's prompt tokens the way the model will."""

    async def count_tokens(self, request: ChatRequest) -> int: ...


class Backend(Protocol):
    """Something that turns a conversation into the model's next response."""

    def info(self) -> BackendInfo: ...

    async def complete(self, request: ChatRequest, on_chunk: ChunkSink | None) -> BackendReply:
        """One model call. Raises forge_core.errors.BackendError on failure."""
        ...

    async def aclose(self) -> None: ...
