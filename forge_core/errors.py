"""Why a run can fail. Each error carries a stable reason and facts for clients."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from forge_core.calls import Usage
    from forge_core.messages import Message


class FailureReason(StrEnum):
    """Stable UPPER_SNAKE reasons; the proto's FailureReason has the same names."""

    TOOL_CALL = "TOOL_CALL"
    TOOL_EXECUTION = "TOOL_EXECUTION"
    STEP_ENFORCEMENT = "STEP_ENFORCEMENT"
    PREREQUISITE = "PREREQUISITE"
    MAX_ITERATIONS = "MAX_ITERATIONS"
    CANCELLED = "CANCELLED"
    BACKEND = "BACKEND"
    CONTEXT_BUDGET_EXCEEDED = "CONTEXT_BUDGET_EXCEEDED"
    INTERNAL = "INTERNAL"
    # Set by the server, not the loop: its drain period ended before the run.
    SHUTTING_DOWN = "SHUTTING_DOWN"


class ForgeError(Exception):
    """A run ended unsuccessfully. `transcript` is filled in by the loop."""

    reason: FailureReason = FailureReason.INTERNAL

    def __init__(self, message: str, **details: object) -> None:
        super().__init__(message)
        self.message = message
        self.details: dict[str, str] = {k: _detail(v) for k, v in details.items()}
        self.transcript: list[Message] = []
        self.iterations = 0
        self.usage: Usage | None = None


def _detail(value: object) -> str:
    if isinstance(value, list | tuple | set | frozenset):
        return ",".join(str(v) for v in value)
    return str(value)


class ToolCallError(ForgeError):
    reason = FailureReason.TOOL_CALL


class ToolExecutionError(ForgeError):
    reason = FailureReason.TOOL_EXECUTION


class StepEnforcementError(ForgeError):
    reason = FailureReason.STEP_ENFORCEMENT


class PrerequisiteError(ForgeError):
    reason = FailureReason.PREREQUISITE


class MaxIterationsError(ForgeError):
    reason = FailureReason.MAX_ITERATIONS


class WorkflowCancelledError(ForgeError):
    reason = FailureReason.CANCELLED


class BackendError(ForgeError):
    """The model backend failed to answer.

    `retriable`: whether another backend (or the same one later) may well
    answer the same request: the server was unreachable, timed out, overloaded
    or broken (see is_retriable). None leaves it to the HTTP status, if any.
    """

    reason = FailureReason.BACKEND

    def __init__(self, message: str, *, retriable: bool | None = None, **details: object) -> None:
        super().__init__(message, **details)
        self.retriable = retriable


class ContextBudgetExceededError(ForgeError):
    reason = FailureReason.CONTEXT_BUDGET_EXCEEDED


def retriable_status(status: int) -> bool:
    """An HTTP status that says the server, not the request, is the problem:
    5xx, 429 (rate limited) and 408 (request timeout)."""
    return status >= 500 or status in (408, 429)


def is_retriable(exc: BaseException) -> bool:
    """Whether a failed model call may succeed on another backend.

    Retriable: connection refused or reset, timeouts, HTTP 5xx / 429 / 408, a
    managed llama-server that died. Not: an error answer about the request
    itself (other 4xx), a conversation that does not fit the context, a
    cancelled run, anything that is not a backend failure (a bug would only
    repeat on the next backend).
    """
    if isinstance(exc, BackendError):
        if exc.retriable is not None:
            return exc.retriable
        status = exc.details.get("status", "")
        if status.isdigit():
            return retriable_status(int(status))
        return _caused_by_io(exc)
    if isinstance(exc, ForgeError):
        return False
    return isinstance(exc, OSError | TimeoutError)


def _caused_by_io(exc: BaseException) -> bool:
    seen: set[int] = set()
    cause = exc.__cause__
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, OSError | TimeoutError):
            return True
        seen.add(id(cause))
        cause = cause.__cause__
    return False
