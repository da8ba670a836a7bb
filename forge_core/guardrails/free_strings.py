"""Free strings take the values the conversation offers.

A free string parameter takes the conversation's values shaped like its
schema example, else the values the conversation calls by the parameter's
noun (value_pools.py, `ValuePools.offer`), minus failed ones and those the
tool already took; a tool with none left is not offered, and while a
refused terminal call's missing values are still offered the terminal
tools wait. Switch: `grounding`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from forge_core.guardrails.protocol import BaseGuardrail, narrowed

if TYPE_CHECKING:
    from forge_core.backends.base import ChatRequest
    from forge_core.messages import ToolCallInfo
    from forge_core.run_state import RunState
    from forge_core.tool_execution import ToolOutcome


class FreeStrings(BaseGuardrail):
    name = "free_strings"
    switch = "grounding"

    def shape(self, state: RunState, request: ChatRequest) -> None:
        if not state.opts.grounding:
            return
        texts = state.grounding_texts()
        users = set(state.user_texts())
        offer = state.pools.offer(
            [t for t in texts if t in users],
            [t for t in texts if t not in users],
            state.failed_strings(),
        )
        request.named_values, request.shaped_values = offer.named, offer.shaped
        if offer.exhausted:
            # Every value the conversation offers this tool is used up.
            narrowed(state, request, offer.exhausted - set(state.steps.pending()))
        if state.opts.loop_breaking and state.finish_blockers & offer.values():
            # A terminal call was refused for what is still to do, and
            # some of it is still offered: finish after it.
            narrowed(state, request, set(state.wf.terminal_set))

    def on_result(
        self, state: RunState, call: ToolCallInfo, outcome: ToolOutcome, content: str
    ) -> None:
        if outcome.ok:
            state.pools.record(call.name, call.args)
