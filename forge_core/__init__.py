"""Forge's engine: workflows, the guarded agentic loop and model backends.

Nothing in this package knows about gRPC; the server adapts it to the wire.
"""

from forge_core.errors import FailureReason, ForgeError
from forge_core.hooks import RunHooks
from forge_core.loop import Approval, Approver, RunResult, run_workflow
from forge_core.messages import Message, MessageRole, MessageType, ToolCallInfo
from forge_core.workflow import Prerequisite, RunOptions, ToolSpec, Workflow, WorkflowError

__all__ = [
    "Approval",
    "Approver",
    "FailureReason",
    "ForgeError",
    "Message",
    "MessageRole",
    "MessageType",
    "Prerequisite",
    "RunHooks",
    "RunOptions",
    "RunResult",
    "ToolCallInfo",
    "ToolSpec",
    "Workflow",
    "WorkflowError",
    "run_workflow",
]
