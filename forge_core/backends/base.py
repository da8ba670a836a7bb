"""The backend interface and the types that cross it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

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


@dataclass
class Usage:
    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    prompt_ms: float = 0.0
    generation_ms: float = 0.0

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


@dataclass
class BackendReply:
    response: LLMResponse
    usage: Usage = field(default_factory=Usage)
    # The raw text the model produced, kept for transcripts of failed attempts.
    raw_text: str = ""
    # Chain-of-thought the backend reported separately (e.g. reasoning_content).
    reasoning: str = ""


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


class Backend(Protocol):
    """Something that turns a conversation into the model's next response."""

    def info(self) -> BackendInfo: ...

    async def complete(self, request: ChatRequest, on_chunk: ChunkSink | None) -> BackendReply:
        """One model call. Raises forge_core.errors.BackendError on failure."""
        ...

    async def aclose(self) -> None: ...
