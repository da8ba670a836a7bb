"""The previous batch again, unchanged, is refused.

Small models often call a finished step again instead of moving on; the
repeat would waste a tool call and usually loops until max_iterations. The
refused tools are also left out of the next turn's grammar, and a batch
that repeats a lookup that found nothing is refused with what it found.
Duplicates within one reply are dropped. Switch: `repeat_guard`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from forge_core.guardrails import nudges
from forge_core.guardrails.failed_calls import call_signature
from forge_core.guardrails.protocol import BaseGuardrail, Refusal, each_call, narrowed
from forge_core.messages import MessageType, ToolCallInfo
from forge_core.tool_execution import ToolErrorKind

if TYPE_CHECKING:
    from forge_core.backends.base import ChatRequest, ToolCall
    from forge_core.run_state import RunState
    from forge_core.tool_execution import ToolOutcome


class RepeatGuard(BaseGuardrail):
    name = "repeat_guard"
    switch = "repeat_guard"

    def shape(self, state: RunState, request: ChatRequest) -> None:
        if state.banned:
            # Only for the turn right after a repeat was rejected: the grammar
            # then cannot produce the same call a third time.
            narrowed(state, request, state.banned)
            state.banned = set()

    def filter_calls(self, state: RunState, calls: list[ToolCall]) -> list[ToolCall]:
        return distinct(calls) if state.opts.repeat_guard else calls

    def check(self, state: RunState, infos: list[ToolCallInfo]) -> Refusal | None:
        if not state.opts.repeat_guard:
            return None
        repeated = [(c.name, c.args) for c in infos]
        if state.last_unresolved and repeated == state.last_unresolved:
            hint = nudges.repeated_unresolved([c.name for c in infos], state.last_unresolved_errors)
            return Refusal(
                each_call(infos, hint),
                MessageType.RETRY_NUDGE,
                f"the model repeated a lookup of {infos[0].name!r} that found nothing",
            )
        if not state.last_success or repeated != state.last_success:
            return None
        hint = nudges.repeated_call(
            [c.name for c in infos], state.steps.pending(), sorted(state.wf.terminal_set)
        )
        state.banned = {c.name for c in infos}
        count_repeated_success(state)
        return Refusal(
            each_call(infos, hint),
            MessageType.RETRY_NUDGE,
            f"the model repeated {infos[0].name!r} with the same arguments",
        )

    def on_batch(
        self, state: RunState, infos: Sequence[ToolCallInfo], outcomes: Sequence[ToolOutcome]
    ) -> None:
        ran = all(o.ok and not o.deferred for o in outcomes)
        state.last_success = [(c.name, c.args) for c in infos] if ran else []
        unresolved = all(not o.ok and o.error_kind is ToolErrorKind.RESOLUTION for o in outcomes)
        state.last_unresolved = [(c.name, c.args) for c in infos] if unresolved else []
        state.last_unresolved_errors = [o.error or "" for o in outcomes] if unresolved else []


def count_repeated_success(state: RunState) -> None:
    """The model asked again for what it has; the second time (with loop
    breaking) the next turn offers only what finishes."""
    state.repeated_successes += 1
    if state.opts.loop_breaking and state.repeated_successes >= 2:
        state.steer_to_finish = True


def distinct(calls: list[ToolCall]) -> list[ToolCall]:
    """A batch without exact duplicates: the same call twice in one turn is a
    model stuttering (a parallel array it did not know how to end)."""
    seen: set[str] = set()
    out = []
    for call in calls:
        sig = call_signature(call.name, call.args)
        if sig not in seen:
            seen.add(sig)
            out.append(call)
    return out
