"""What a run surfaces while it runs (events), approvals, and its result."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from forge.v1 import forge_service_pb2 as pb
from forge.v1 import workflow_pb2 as wpb
from forge_client.messages import Message, Usage


@dataclass(frozen=True)
class RunStarted:
    run_id: str
    backend: str
    model: str
    context_budget_tokens: int
    # "native", "constrained" or "prompt": how this run obtains tool calls.
    tool_call_mode: str
    # The server's fallback chain in order (`backend` first); () with one backend.
    backend_chain: tuple[str, ...] = ()
    # Seconds the server keeps the run for a reattach after its stream broke
    # (0: no journal, a broken stream ends the run).
    reattach_grace_s: int = 0


@dataclass(frozen=True)
class Reattached:
    """The run's stream broke and the SDK took the run over on a new stream
    (the same server or another replica sharing its journal). Events the old
    stream missed follow; none is delivered twice."""

    run_id: str
    # The last event (RunResponse.seq) handled before the break.
    after_seq: int
    # Reattach attempts this break took (1: the first one succeeded).
    attempts: int


@dataclass(frozen=True)
class Chunk:
    """Model output as it is generated (with RunOptions(stream_chunks=True))."""

    type: str  # "text_delta" | "tool_call_delta" | "final" | "retry"
    content: str
    iteration: int


@dataclass(frozen=True)
class Coercion:
    """A near-miss argument the server fixed before validation ("42" -> 42)."""

    # JSON Pointer to the argument, e.g. "/count".
    path: str
    original_json: str
    coerced_json: str


@dataclass(frozen=True)
class ToolCallStarted:
    call_id: str
    tool_name: str
    arguments: dict[str, Any]
    iteration: int
    coercions: tuple[Coercion, ...] = ()


@dataclass(frozen=True)
class ApprovalRequested:
    """The model asked for a destructive tool; the run's `approve` callback
    decides whether it runs (RunOptions(approve_destructive_calls=True))."""

    call_id: str
    tool_name: str
    arguments: dict[str, Any]
    iteration: int


@dataclass(frozen=True)
class Approval:
    approved: bool
    # Why not: the model reads it with the denial.
    reason: str = ""


# Returns True/False or an Approval, directly or awaitable.
Approver = Callable[[ApprovalRequested], bool | Approval | Awaitable[bool] | Awaitable[Approval]]

NO_APPROVER = "no approver is configured in this client"


@dataclass(frozen=True)
class ApprovalDecided:
    """The decision on an ApprovalRequested, as sent to the server. An approved
    call follows as a ToolCallStarted with the same call_id."""

    call_id: str
    tool_name: str
    approved: bool
    # The denial's reason as sent (the model reads it).
    reason: str = ""
    # The approver's exception, if it raised (the call was then denied).
    error: str | None = None


@dataclass(frozen=True)
class ToolCallFinished:
    call_id: str
    tool_name: str
    output: str
    # The tool's error (resolution errors included); None when it succeeded.
    error: str | None


@dataclass(frozen=True)
class ToolCallCancelled:
    """The server gave up on a call (timeout, cancel); the SDK stopped the tool."""

    call_id: str
    reason: str
    tool_name: str = ""


@dataclass(frozen=True)
class ToolOutputScreened:
    """A tool's output held secrets; the model saw it redacted ("redact") or
    not at all ("block"). The secrets themselves never come back."""

    call_id: str
    tool_name: str
    action: str
    secret_types: tuple[str, ...]
    secrets: int
    iteration: int


@dataclass(frozen=True)
class MessageAppended:
    """A message the run added to the conversation; persist the non-transient
    ones to continue the conversation later (pass them as prior_messages)."""

    message: Message
    index: int


@dataclass(frozen=True)
class Compacted:
    """The server shortened what the model sees (the transcript is untouched)."""

    iteration: int
    strategy: str
    phase: int
    tokens_before: int
    tokens_after: int
    messages_before: int = 0
    messages_after: int = 0


@dataclass(frozen=True)
class Queued:
    """The run waits for a model slot (position 0: it has one again)."""

    position: int
    iteration: int
    preempted: bool


@dataclass
class RunResult:
    terminal_tool: str
    # What the terminal tool function returned, as a Python value.
    value: Any
    # The same result as sent to the server (text).
    output: str
    iterations: int
    usage: Usage
    # The whole conversation, prior messages included.
    transcript: list[Message] = field(default_factory=list)
    run_id: str = ""


@dataclass(frozen=True)
class RunCompleted:
    """The last event of a successful run; the stream's `result` is set too."""

    result: RunResult


Event = (
    RunStarted
    | Chunk
    | ToolCallStarted
    | ApprovalRequested
    | ApprovalDecided
    | ToolCallFinished
    | ToolCallCancelled
    | ToolOutputScreened
    | MessageAppended
    | Compacted
    | Queued
    | Reattached
    | RunCompleted
)


CHUNK_NAMES = {
    pb.CHUNK_TYPE_TEXT_DELTA: "text_delta",
    pb.CHUNK_TYPE_TOOL_CALL_DELTA: "tool_call_delta",
    pb.CHUNK_TYPE_FINAL: "final",
    pb.CHUNK_TYPE_RETRY: "retry",
}


def event_from_pb(response: pb.RunResponse, kind: str | None) -> Event | None:
    """The event of a server message that needs nothing of the stream's state
    (None for a kind that is not one of them)."""
    if kind == "run_started":
        s = response.run_started
        return RunStarted(
            s.run_id,
            s.backend,
            s.model,
            s.context_budget_tokens,
            s.tool_call_mode,
            tuple(s.backend_chain),
            s.reattach_grace_s,
        )
    if kind == "chunk":
        c = response.chunk
        return Chunk(CHUNK_NAMES.get(c.type, "unknown"), c.content, c.iteration)
    if kind == "tool_output_screened":
        sc = response.tool_output_screened
        return ToolOutputScreened(
            sc.call_id,
            sc.tool_name,
            "block" if sc.action == wpb.TOOL_OUTPUT_POLICY_BLOCK else "redact",
            tuple(sc.secret_types),
            sc.secrets,
            sc.iteration,
        )
    if kind == "compacted":
        c2 = response.compacted
        return Compacted(
            c2.iteration,
            c2.strategy,
            c2.phase,
            c2.tokens_before,
            c2.tokens_after,
            c2.messages_before,
            c2.messages_after,
        )
    if kind == "queued":
        q = response.queued
        return Queued(q.position, q.iteration, q.preempted)
    return None
