"""Guard verdicts: one guard decision for a caller that runs its own loop and
its own model calls (ForgeClient.guard). Plain frozen dataclasses, like the
rest of the SDK's types; forge_client.client does the RPC."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from forge.v1 import forge_service_pb2 as pb
from forge_client.convert import message_from_pb
from forge_client.errors import ForgeError
from forge_client.events import Coercion
from forge_client.messages import Message, MessageType, Role, ToolCall

# How a failed tool call reads in the conversation: the server counts a tool
# result starting with this as an error, not an output.
TOOL_ERROR_PREFIX = "[ToolError] "
# ...and a failed call whose arguments were valid but found nothing (the
# ToolResolutionError of a Run): fed back to the model, not counted against
# max_tool_errors, as in a Run.
TOOL_RESOLUTION_PREFIX = TOOL_ERROR_PREFIX + "[resolution] "


@dataclass(frozen=True)
class GuardedCall:
    """One validated, coerced tool call for the caller to run."""

    call_id: str
    tool_name: str
    arguments: dict[str, Any]
    # The arguments as the server wrote them (exact integers).
    arguments_json: str
    # Near-miss arguments the server fixed before validation.
    coercions: tuple[Coercion, ...] = ()

    def result_message(
        self, output: str = "", *, error: str | None = None, resolution: bool = False
    ) -> Message:
        """The tool message recording this call's result for the next guard
        request: `output`, or with `error` a failed call ("[ToolError] ...");
        `resolution=True` marks an error that found no data for valid
        arguments (what ToolResolutionError means in a Run), which the
        server then does not count as a tool failure either."""
        prefix = TOOL_RESOLUTION_PREFIX if resolution else TOOL_ERROR_PREFIX
        return Message(
            role=Role.TOOL,
            type=MessageType.TOOL_RESULT,
            content=prefix + error if error is not None else output,
            tool_call_id=self.call_id,
            tool_name=self.tool_name,
        )


@dataclass(frozen=True)
class GuardCalls:
    """Run these calls, then append `message` and one `result_message` per call."""

    calls: tuple[GuardedCall, ...]

    @property
    def message(self) -> Message:
        """The assistant message recording the calls (with their ids)."""
        return Message(
            role=Role.ASSISTANT,
            type=MessageType.TOOL_CALL,
            tool_calls=tuple(
                ToolCall(c.call_id, c.tool_name, c.arguments_json) for c in self.calls
            ),
        )


@dataclass(frozen=True)
class GuardRetry:
    """Run nothing: append `messages` (the rejected attempt and its
    correction, transient) and ask the model again."""

    messages: tuple[Message, ...]
    # Why the reply was rejected, in words.
    reason: str
    # Consecutive rejected attempts so far; past the retry budget the next
    # rejection raises a RunFailedError instead.
    attempt: int


@dataclass(frozen=True)
class GuardDone:
    """The terminal tool returned: the run is complete."""

    terminal_tool: str
    result: str
    terminal_call_id: str


GuardVerdict = GuardCalls | GuardRetry | GuardDone


def verdict_from_pb(msg: pb.GuardResponse) -> GuardVerdict | pb.RunFailed:
    """The SDK's verdict, or the RunFailed for the caller to raise."""
    kind = msg.WhichOneof("verdict")
    if kind == "calls":
        return GuardCalls(tuple(_call(c) for c in msg.calls.calls))
    if kind == "retry":
        r = msg.retry
        return GuardRetry(tuple(message_from_pb(m) for m in r.messages), r.reason, r.attempt)
    if kind == "done":
        d = msg.done
        return GuardDone(d.terminal_tool, d.result, d.terminal_call_id)
    if kind == "failed":
        return msg.failed
    raise ForgeError("the server's Guard answer holds no verdict")


def _call(request: pb.ToolCallRequest) -> GuardedCall:
    try:
        arguments = json.loads(request.arguments_json or "{}")
    except ValueError:
        arguments = {}
    return GuardedCall(
        request.call_id,
        request.tool_name,
        arguments if isinstance(arguments, dict) else {},
        request.arguments_json or "{}",
        tuple(Coercion(c.path, c.original_json, c.coerced_json) for c in request.coercions),
    )
