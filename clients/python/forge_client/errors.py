"""Errors the SDK raises, one class per way a run can end badly."""

from __future__ import annotations

from typing import Any

import grpc
from google.rpc import error_details_pb2, status_pb2

from forge.v1 import forge_service_pb2 as pb
from forge_client.convert import message_from_pb, usage_from_pb
from forge_client.messages import Message, Usage


class ForgeError(Exception):
    """Base class of every error this SDK raises."""


class ToolResolutionError(Exception):
    """Raise from a tool when the arguments were fine but found nothing.

    The model sees the message and can try other arguments; unlike other
    exceptions it does not count toward the run's tool-error limit.
    """


class ToolUnreachableError(Exception):
    """Raise from a tool when what it calls could not be reached or its answer
    never came back (a lost connection, a timeout in transit): whether it took
    effect is unknown.

    The server makes the call once more when the tool is read-only or
    idempotent (`read_only=True`, `idempotent=True` at registration); else,
    and when that fails too, the model sees the message, told that the
    effect is unknown. Counts toward the tool-error limit.
    """


class RunFailedError(ForgeError):
    """The server ended the run unsuccessfully; `transcript` has what happened."""

    reason_code: str = "UNSPECIFIED"

    def __init__(
        self,
        message: str,
        *,
        reason: str,
        details: dict[str, str],
        iterations: int,
        transcript: list[Message],
        usage: Usage,
    ) -> None:
        super().__init__(f"{reason}: {message}")
        self.message = message
        self.reason = reason
        self.details = details
        self.iterations = iterations
        self.transcript = transcript
        self.usage = usage


class ToolCallError(RunFailedError):
    """The model kept answering without a valid tool call."""


class ToolExecutionError(RunFailedError):
    """Tools kept failing and the model did not recover."""


class StepEnforcementError(RunFailedError):
    """The model kept calling a terminal tool before the required steps."""


class PrerequisiteError(RunFailedError):
    """The model kept calling tools whose prerequisites were not met."""


class MaxIterationsError(RunFailedError):
    """No terminal tool within the run's iteration limit."""


class WorkflowCancelledError(RunFailedError):
    """The run was cancelled."""


class BackendError(RunFailedError):
    """The model server failed or could not be reached."""


class ContextBudgetExceededError(RunFailedError):
    """The conversation no longer fits the model's context."""


class InternalServerError(RunFailedError):
    """A bug in the server."""


class ShuttingDownError(RunFailedError):
    """The server shut down before the run ended; retrying elsewhere is safe."""


_BY_REASON: dict[int, type[RunFailedError]] = {
    pb.FAILURE_REASON_TOOL_CALL: ToolCallError,
    pb.FAILURE_REASON_TOOL_EXECUTION: ToolExecutionError,
    pb.FAILURE_REASON_STEP_ENFORCEMENT: StepEnforcementError,
    pb.FAILURE_REASON_PREREQUISITE: PrerequisiteError,
    pb.FAILURE_REASON_MAX_ITERATIONS: MaxIterationsError,
    pb.FAILURE_REASON_CANCELLED: WorkflowCancelledError,
    pb.FAILURE_REASON_BACKEND: BackendError,
    pb.FAILURE_REASON_CONTEXT_BUDGET_EXCEEDED: ContextBudgetExceededError,
    pb.FAILURE_REASON_INTERNAL: InternalServerError,
    pb.FAILURE_REASON_SHUTTING_DOWN: ShuttingDownError,
}


def run_failed(msg: pb.RunFailed, streamed: list[Message] | None = None) -> RunFailedError:
    """The typed error for `msg`; `streamed` (the messages received as
    message_appended) stands in for a transcript the server omitted."""
    cls = _BY_REASON.get(msg.reason, RunFailedError)
    reason = pb.FailureReason.Name(msg.reason).removeprefix("FAILURE_REASON_")
    return cls(
        msg.message,
        reason=reason,
        details=dict(msg.details),
        iterations=msg.iterations,
        transcript=(
            list(streamed or [])
            if msg.transcript_omitted
            else [message_from_pb(m) for m in msg.transcript]
        ),
        usage=usage_from_pb(msg.usage),
    )


class RequestRejectedError(ForgeError):
    """The server refused a request (bad workflow, protocol misuse, busy).

    `reason` is the stable ErrorInfo reason (e.g. INVALID_WORKFLOW) and
    `field` the offending field (e.g. workflow.terminal_tools[0]).
    """

    def __init__(self, code: str, reason: str, field: str, message: str) -> None:
        # UNAUTHENTICATED's reason is its code: said once.
        said = code if reason in ("", code) else f"{code} {reason}"
        super().__init__(f"{said}: {message}")
        self.code = code
        self.reason = reason
        self.field = field
        self.message = message


class ConnectionLostError(ForgeError):
    """The stream to the server broke before the run ended."""


class ServerUnreachableError(ConnectionLostError):
    """No Forge server answered at the client's address within its
    connect_timeout_s (nothing listens there, or it is still starting)."""


class McpServerError(ForgeError):
    """An MCP server's tools could not be listed (add_mcp_tools): the session
    is closed, the server is gone or did not answer. Raised before any run."""


class McpToolError(Exception):
    """Raised by an MCP tool's callable: the server answered `isError`, or the
    call timed out or lost its connection. Like any tool exception it becomes
    a tool error the model sees; the message names the cause."""


def rpc_error(exc: grpc.aio.AioRpcError) -> Exception:
    """The SDK's error for a failed RPC: ConnectionLostError when the
    transport failed, else the server's refusal (RequestRejectedError)."""
    rejected = rejected_error(exc.code(), exc.details() or "", exc.trailing_metadata())
    # A typed reason means the server refused (e.g. SHUTTING_DOWN,
    # AUTH_UNAVAILABLE); without one, the transport failed.
    if (
        exc.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED)
        and not rejected.reason
    ):
        return ConnectionLostError(f"{exc.code().name}: {exc.details()}")
    return rejected


def rejected_error(code: grpc.StatusCode, details: str, trailers: Any) -> RequestRejectedError:
    """A status with its google.rpc.ErrorInfo (reason, field) from the trailers."""
    reason, field_path = "", ""
    for key, value in trailers or ():
        if key != "grpc-status-details-bin":
            continue
        status = status_pb2.Status.FromString(value)
        for detail in status.details:
            info = error_details_pb2.ErrorInfo()
            if detail.Unpack(info):
                reason = info.reason
                field_path = info.metadata.get("field", "")
    return RequestRejectedError(code.name, reason, field_path, details)
