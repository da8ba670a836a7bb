"""Required steps before a terminal tool, prerequisites before their tool.

Under a grammar (Enforcement CONSTRAINT or BOTH) the turn offers only the
tools whose steps and name-only prerequisites are done (steps.py,
`StepTracker.allowed_tools`); with nudges (NUDGE or BOTH) a terminal call
made too early, or a call whose prerequisites are missing, is refused with
a correction, and too many such attempts end the run. Switch:
`step_enforcement` (Guardrails.disable_step_enforcement).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from forge_core.errors import PrerequisiteError, StepEnforcementError
from forge_core.guardrails import nudges
from forge_core.guardrails.protocol import BaseGuardrail, Refusal, each_call
from forge_core.messages import MessageType, ToolCallInfo

if TYPE_CHECKING:
    from forge_core.backends.base import ChatRequest
    from forge_core.run_state import RunState
    from forge_core.tool_execution import ToolOutcome


class StepEnforcement(BaseGuardrail):
    name = "step_enforcement"
    switch = "step_enforcement"

    def shape(self, state: RunState, request: ChatRequest) -> None:
        if state.opts.constrain_steps:
            request.allowed = state.steps.allowed_tools()

    def check(self, state: RunState, infos: list[ToolCallInfo]) -> Refusal | None:
        if not state.opts.nudge_steps:
            return None
        return premature(state, infos) or missing_prerequisites(state, infos)

    def on_result(
        self, state: RunState, call: ToolCallInfo, outcome: ToolOutcome, content: str
    ) -> None:
        if outcome.ok:
            state.steps.record(call)

    def compaction_note(self, state: RunState) -> str:
        return nudges.compaction_summary(
            state.steps.completed_names(), state.steps.pending(), state.iteration
        )


def premature(state: RunState, infos: list[ToolCallInfo]) -> Refusal | None:
    """A terminal call while required steps are pending."""
    terminal = [c.name for c in infos if c.name in state.wf.terminal_set]
    pending = state.steps.pending()
    if not terminal or not pending:
        return None
    state.premature += 1
    text = nudges.step_nudge(terminal[0], pending, tier=min(state.premature, 3))
    then = None
    if state.premature >= state.opts.max_premature_attempts:
        then = StepEnforcementError(
            f"the model called {terminal[0]!r} {state.premature} times before the "
            f"required steps {pending}",
            terminal_tool=terminal[0],
            attempts=state.premature,
            pending_steps=pending,
        )
    return Refusal(
        each_call(infos, text),
        MessageType.STEP_NUDGE,
        f"{terminal[0]!r} was called before the required steps {pending}",
        counts_as_retry=False,
        then=then,
    )


def missing_prerequisites(state: RunState, infos: list[ToolCallInfo]) -> Refusal | None:
    """Calls whose prerequisites have not run (with the matching argument)."""
    missing = {i: state.steps.missing_prerequisites(c) for i, c in enumerate(infos)}
    blocked = {i: m for i, m in missing.items() if m}
    if not blocked:
        return None
    state.prereq_violations += 1
    first = next(iter(blocked))
    texts = {
        i: nudges.prerequisite_nudge(infos[i].name, blocked[i])
        if i in blocked
        else nudges.not_executed(infos[i].name)
        for i in range(len(infos))
    }
    then = None
    if state.prereq_violations >= state.opts.max_prereq_violations:
        then = PrerequisiteError(
            f"the model kept calling {infos[first].name!r} without {blocked[first]}",
            tool_name=infos[first].name,
            violations=state.prereq_violations,
            missing_prerequisites=blocked[first],
        )
    return Refusal(
        texts,
        MessageType.PREREQUISITE_NUDGE,
        f"{infos[first].name!r} was called before its prerequisites {blocked[first]}",
        counts_as_retry=False,
        then=then,
    )
