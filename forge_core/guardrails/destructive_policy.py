"""Destructive tools only when the user asks for them, and one at a time.

Which tools are destructive, and which the user's words ask for, is
destructive.py's reading. A destructive tool (or one that changes
something, when the request only asks a question) the user did not ask for
is left out of the grammar and refused when an unconstrained backend calls
it anyway; pending required steps always stay. A destructive call in a
batch with other calls is sent back to be made alone, and with
`approve_destructive_calls` each waits for the caller's approval
(`hold_destructive`). Switch: `destructive_policy`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from forge_core.errors import ToolExecutionError
from forge_core.guardrails import nudges
from forge_core.guardrails.destructive import asked_for, unasked_writes
from forge_core.guardrails.protocol import BaseGuardrail, Refusal, narrowed
from forge_core.messages import MessageType, ToolCallInfo
from forge_core.tool_execution import Approval, Approver, ToolErrorKind, ToolOutcome

if TYPE_CHECKING:
    from forge_core.backends.base import ChatRequest
    from forge_core.run_state import RunState


class DestructivePolicy(BaseGuardrail):
    name = "destructive_policy"
    switch = "destructive_policy"

    def shape(self, state: RunState, request: ChatRequest) -> None:
        if state.opts.destructive_policy:
            unasked = unasked_destructive(state) | unasked_write_tools(state)
            if unasked:
                narrowed(state, request, unasked)

    def check(self, state: RunState, infos: list[ToolCallInfo]) -> Refusal | None:
        """A destructive call the user did not ask for never runs (the
        grammar leaves it out; this catches unconstrained backends)."""
        if not (state.destructive and state.opts.destructive_policy):
            return None
        unasked = unasked_destructive(state)
        refused = {i for i, c in enumerate(infos) if c.name in unasked}
        if not refused:
            return None
        others = [t.name for t in state.wf.tools if t.name not in unasked]
        return Refusal(
            {
                i: nudges.destructive_not_asked(c.name, others)
                if i in refused
                else nudges.not_executed(c.name)
                for i, c in enumerate(infos)
            },
            MessageType.RETRY_NUDGE,
            f"the model called the destructive tool {infos[min(refused)].name!r}, "
            "which the user did not ask for",
        )


def unasked_write_tools(state: RunState) -> set[str]:
    """Tools that change something the request does not ask for
    (guardrails/destructive.py), minus pending required steps."""
    if state.unasked_write_tools is None:
        terminal = set(state.wf.terminal_set)
        # A required step stays offered once done: a hold that was refused
        # is held again.
        spared = terminal | set(state.wf.required_steps)
        state.unasked_write_tools = unasked_writes(
            state.wf.tools, spared, "\n".join(state.user_texts()), ends=bool(terminal)
        )
    return state.unasked_write_tools - set(state.steps.pending())


def unasked_destructive(state: RunState) -> set[str]:
    """Destructive tools the user's words do not ask for, minus pending
    required steps (the workflow itself asks for those)."""
    if state.asked_destructive is None:
        asked = state.user_texts()
        wf = state.wf
        # In a workflow that ends, a side tool's action is asked for in its
        # own words only.
        side = state.destructive - set(wf.terminal_set) - set(wf.required_steps)
        state.asked_destructive = asked_for(
            wf.tools,
            state.destructive,
            "\n".join(asked),
            frozenset(side if wf.terminal_set else ()),
        )
    return state.destructive - state.asked_destructive - set(state.steps.pending())


async def hold_destructive(
    state: RunState, infos: list[ToolCallInfo], approver: Approver | None
) -> dict[str, ToolOutcome]:
    """Outcomes of the destructive calls that do not run now: those sent
    back to run alone, and those the caller did not approve."""
    held: dict[str, ToolOutcome] = {}
    destructive = [c for c in infos if c.name in state.destructive]
    if not destructive:
        return held
    if state.opts.destructive_policy and len(infos) > 1:
        # Alone: with other calls in the batch none runs; a batch of only
        # destructive calls runs its first.
        keep = destructive[0] if len(destructive) == len(infos) else None
        for call in destructive:
            if call is not keep:
                held[call.call_id] = ToolOutcome(
                    output=nudges.destructive_alone(call.name), deferred=True
                )
    if state.opts.approve_destructive_calls:
        for call in destructive:
            if call.call_id in held:
                continue
            if approver is None:
                decision = Approval(False, "no approver is connected to this run")
            else:
                decision = await approver(call, state.iteration)
            if not decision.approved:
                if call.name in state.denied:
                    # Told once that it was not approved, the model asked
                    # again: a denial is not counted as a tool error, so
                    # it would ask until max_iterations.
                    raise ToolExecutionError(
                        f"the caller did not approve {call.name!r} and the model asked "
                        "for it again",
                        tool_name=call.name,
                        denied=True,
                    )
                state.denied.add(call.name)
                held[call.call_id] = ToolOutcome(
                    error=nudges.approval_denied(call.name, decision.reason),
                    error_kind=ToolErrorKind.RESOLUTION,
                )
    return held
