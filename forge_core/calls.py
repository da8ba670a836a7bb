"""What one model call produces: tool calls or text, stream chunks, token usage.

These value types sit below everything that handles a model's answer (the
backends, the rescue parser, the errors that carry usage, the loop), so each
of them imports this module rather than the backend interface
(forge_core/backends/base.py, which re-exports them).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    """A tool call as the model produced it (not yet validated)."""

    name: str
    args: dict[str, Any]
    # The id the model or the caller gave the call ("" lets the loop number
    # it): a caller's own loop keeps its ids across Guard requests.
    id: str = field(default="", compare=False)


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
    # Which backend of a fallback chain served the call ("" without a chain).
    backend: str = ""

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
    # For one backend call: which backend of a fallback chain served it ("":
    # no chain; fallback.py sets it).
    backend: str = ""
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
                backend=call.backend,
            )
        )

    def add(self, other: Usage) -> None:
        self.model_calls += other.model_calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cached_prompt_tokens += other.cached_prompt_tokens
        self.prompt_ms += other.prompt_ms
        self.generation_ms += other.generation_ms
