"""What a run tells its caller while it goes, in one object (RunHooks).

run_workflow and resume_run take a RunHooks instead of one keyword argument
per callback; a caller sets the callbacks it wants and leaves the rest None.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from forge_core.backends.base import StreamChunk
from forge_core.context import CompactionResult
from forge_core.guardrails.screening import Screening
from forge_core.messages import Message, ToolCallInfo
from forge_core.tool_execution import Approver

MessageSink = Callable[[Message, int], Awaitable[None]]
IterationChunkSink = Callable[[StreamChunk, int], Awaitable[None]]
CompactionSink = Callable[[CompactionResult, int], Awaitable[None]]
# (queue position, preempted, iteration) while the run waits for a model slot.
QueueSink = Callable[[int, bool, int], Awaitable[None]]
# (call, what replaced its output, iteration): a tool output held secrets.
ScreenSink = Callable[[ToolCallInfo, Screening, int], Awaitable[None]]


@dataclass(frozen=True)
class RunHooks:
    """The run's callbacks; each None is not called.

    `on_message`: a message appended to the transcript (and its index);
    `on_chunk`: streamed model output; `on_compact`: the context was
    compacted; `on_queue`: the run waits for a model slot; `on_screen`: a
    tool output held secrets; `approver`: asked before a call that needs
    approval runs (None: such calls are refused).
    """

    on_message: MessageSink | None = None
    on_chunk: IterationChunkSink | None = None
    on_compact: CompactionSink | None = None
    on_queue: QueueSink | None = None
    on_screen: ScreenSink | None = None
    approver: Approver | None = None


NO_HOOKS = RunHooks()
