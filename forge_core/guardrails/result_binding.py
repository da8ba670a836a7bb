"""A report parameter takes what a result gave.

Under a grammar, a terminal tool's parameter that a successful tool result
answers (the result labels it, or the parameter is what a tool looks up)
only takes the values that result gave (binding.py; value_pools.py,
`bound_parameters`). Switch: `result_binding`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from forge_core.guardrails.protocol import BaseGuardrail
from forge_core.guardrails.value_pools import bound_parameters

if TYPE_CHECKING:
    from forge_core.backends.base import ChatRequest
    from forge_core.run_state import RunState


class ResultBinding(BaseGuardrail):
    name = "result_binding"
    switch = "result_binding"

    def shape(self, state: RunState, request: ChatRequest) -> None:
        if state.opts.result_binding:
            request.bound_values = bound_parameters(
                state.wf,
                state.results,
                labels_only=set(request.named_values) | set(request.shaped_values),
                skip_grounded=state.opts.grounding,
            )
