"""ForgeService.Guard: one guard decision for a caller that owns its loop.

The request is parsed the way Run's `start` is (same field checks, same
status codes); the decision is forge_core.replay.next_turn, i.e. the loop
itself replaying the conversation, so a Guard caller and a Run get the same
answers.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import grpc

from forge.v1 import forge_service_pb2 as pb
from forge_core.backends.base import BackendReply
from forge_core.errors import ForgeError
from forge_core.messages import Message
from forge_core.replay import (
    ConversationError,
    TurnCalls,
    TurnRetry,
    Verdict,
    calls_reply,
    next_turn,
    text_reply,
)
from forge_core.workflow import RunOptions, Workflow, WorkflowError
from forge_server.convert import (
    message_to_pb,
    options_from_pb,
    prior_from_pb,
    reason_to_pb,
    tool_call_to_pb,
    usage_to_pb,
    workflow_from_pb,
)
from forge_server.errors import RequestRejected


@dataclass
class GuardInput:
    workflow: Workflow
    options: RunOptions
    messages: list[Message]
    reply: BackendReply | None


def parse_guard(msg: pb.GuardRequest) -> GuardInput:
    """Raises WorkflowError naming the field (INVALID_WORKFLOW)."""
    if not msg.HasField("workflow"):
        raise WorkflowError("workflow", "is required")
    workflow = workflow_from_pb(msg.workflow)
    options = options_from_pb(msg.options)
    messages = prior_from_pb(msg.messages, "messages")
    if msg.reply_text and msg.reply_tool_calls:
        raise WorkflowError("reply_tool_calls", "give reply_text or reply_tool_calls, not both")
    reply: BackendReply | None = None
    if msg.reply_tool_calls:
        for i, call in enumerate(msg.reply_tool_calls):
            if not call.name:
                raise WorkflowError(f"reply_tool_calls[{i}].name", "must not be empty")
        reply = calls_reply([(c.id, c.name, c.arguments_json) for c in msg.reply_tool_calls])
    elif msg.reply_text:
        reply = text_reply(msg.reply_text)
    return GuardInput(workflow, options, messages, reply)


async def decide(msg: pb.GuardRequest, default_secrets_policy: str) -> pb.GuardResponse:
    """The verdict for `msg`; RequestRejected for input that cannot be read."""
    try:
        # Schemas compile off the event loop, as for Run.
        parsed = await asyncio.to_thread(parse_guard, msg)
    except WorkflowError as exc:
        raise RequestRejected(
            grpc.StatusCode.INVALID_ARGUMENT, "INVALID_WORKFLOW", exc.field, str(exc)
        ) from exc
    if not parsed.workflow.tool_output_secrets:
        parsed.workflow.tool_output_secrets = default_secrets_policy
    try:
        verdict = await next_turn(
            parsed.workflow, parsed.messages, options=parsed.options, reply=parsed.reply
        )
    except ConversationError as exc:
        field = exc.field_path
        if field == "reply":
            field = "reply_text"
        raise RequestRejected(
            grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST", field, f"{field}: {exc.message}"
        ) from exc
    except ForgeError as exc:
        return pb.GuardResponse(
            failed=pb.RunFailed(
                reason=reason_to_pb(exc.reason),
                message=str(exc),
                details=exc.details,
                iterations=exc.iterations,
                usage=usage_to_pb(exc.usage),
            )
        )
    return verdict_to_pb(verdict)


def verdict_to_pb(verdict: Verdict) -> pb.GuardResponse:
    if isinstance(verdict, TurnCalls):
        return pb.GuardResponse(
            calls=pb.GuardCalls(
                calls=[tool_call_to_pb(c, verdict.iteration) for c in verdict.calls]
            )
        )
    if isinstance(verdict, TurnRetry):
        return pb.GuardResponse(
            retry=pb.GuardRetry(
                messages=[message_to_pb(m) for m in verdict.messages],
                reason=verdict.reason,
                attempt=verdict.attempt,
            )
        )
    result = verdict.result
    return pb.GuardResponse(
        done=pb.GuardDone(
            terminal_tool=result.terminal_tool,
            result=result.result,
            terminal_call_id=result.terminal_call_id,
        )
    )
