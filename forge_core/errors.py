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
    reason = FailureReason.BACKEND


class ContextBudgetExceededError(ForgeError):
    reason = FailureReason.CONTEXT_BUDGET_EXCEEDED
