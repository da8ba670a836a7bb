"""Numbers the conversation can account for.

Under a grammar an integer has at most one digit more than the longest
number in the user's messages and tool results (at least 3); until the
first result a numeric parameter takes the numbers the request gives; a
parallel first turn makes a call for every number the request writes
(value_pools.py), and no more calls than the request lists (batch_size.py).
Switch: `number_bounds`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from forge_core.grammar import MAX_CALLS
from forge_core.guardrails.batch_size import listed_calls
from forge_core.guardrails.protocol import BaseGuardrail
from forge_core.guardrails.value_pools import min_parallel_calls, number_digits

if TYPE_CHECKING:
    from forge_core.backends.base import ChatRequest
    from forge_core.run_state import RunState


class NumberBounds(BaseGuardrail):
    name = "number_bounds"
    switch = "number_bounds"

    def shape(self, state: RunState, request: ChatRequest) -> None:
        if not state.opts.number_bounds:
            return
        request.number_digits = number_digits(state.grounding_texts())
        request.number_values = state.request_numbers()
        if request.parallel and request.number_values:
            # Enough calls for every number the request writes.
            allowed = set(request.allowed or state.all_tools())
            request.min_calls = min_parallel_calls(
                [t for t in state.wf.tools if t.name in allowed], state.user_texts()
            )
        if request.parallel:
            listed = listed_calls(state.user_texts(), MAX_CALLS)
            request.max_calls = max(listed, request.min_calls) if listed else 0
