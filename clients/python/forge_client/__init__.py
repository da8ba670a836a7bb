"""Forge Python SDK: register Python functions as tools, run guarded workflows
on a Forge server over one bidirectional gRPC stream per run."""

from forge_client.client import (
    Chunk,
    Event,
    ForgeClient,
    MessageAppended,
    RunOptions,
    RunResult,
    RunStarted,
    RunStream,
    ToolCallFinished,
    ToolCallStarted,
)
from forge_client.errors import (
    BackendError,
    ConnectionLostError,
    ContextBudgetExceededError,
    ForgeError,
    InternalServerError,
    MaxIterationsError,
    PrerequisiteError,
    RequestRejectedError,
    RunFailedError,
    StepEnforcementError,
    ToolCallError,
    ToolExecutionError,
    ToolResolutionError,
    WorkflowCancelledError,
)
from forge_client.tools import Prerequisite, Tool, tool_from_function
from forge_client.workflow import Workflow

__all__ = [
    "BackendError",
    "Chunk",
    "ConnectionLostError",
    "ContextBudgetExceededError",
    "Event",
    "ForgeClient",
    "ForgeError",
    "InternalServerError",
    "MaxIterationsError",
    "MessageAppended",
    "Prerequisite",
    "PrerequisiteError",
    "RequestRejectedError",
    "RunFailedError",
    "RunOptions",
    "RunResult",
    "RunStarted",
    "RunStream",
    "StepEnforcementError",
    "Tool",
    "ToolCallError",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolExecutionError",
    "ToolResolutionError",
    "Workflow",
    "WorkflowCancelledError",
    "tool_from_function",
]
