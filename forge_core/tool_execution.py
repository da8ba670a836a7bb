"""The contract between the engine and whoever runs the tools.

The loop hands validated calls to a ToolExecutor and reads back one
ToolOutcome per call; before a destructive call it may ask an Approver. The
server's stream executor (server/forge_server/executor.py), the benchmarks'
scripted tools and the tests implement this contract without importing the
loop itself (forge_core/loop.py re-exports these names).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol

from forge_core.messages import ToolCallInfo


class ToolErrorKind(StrEnum):
    HARD = "hard"
    # Valid arguments that did not resolve to data: fed back, not counted.
    RESOLUTION = "resolution"
    # The result never came back (a lost connection, a timeout in transit):
    # whether the call took effect is unknown. The loop tries a read-only or
    # idempotent tool once more; the model sees it as a hard error.
    UNREACHABLE = "unreachable"


@dataclass(frozen=True)
class ToolOutcome:
    output: str = ""
    error: str | None = None
    error_kind: ToolErrorKind = ToolErrorKind.HARD
    # Not run, by the engine's choice (a destructive call sent back to be
    # made alone): `output` says why; neither a success nor a failure.
    deferred: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None


class ToolExecutor(Protocol):
    """Runs a batch of validated calls; returns one outcome per call, in order."""

    async def execute(self, calls: list[ToolCallInfo], iteration: int) -> list[ToolOutcome]: ...


@dataclass(frozen=True)
class Approval:
    approved: bool
    reason: str = ""


# Asked before a destructive call runs (RunOptions.approve_destructive_calls):
# (the validated call, iteration) -> the caller's decision.
Approver = Callable[[ToolCallInfo, int], Awaitable[Approval]]
