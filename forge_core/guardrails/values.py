"""The value guardrails (registry.py's `VALUE_GUARDRAILS`) as one plug-in.

Each value guardrail reads the turn's facts and says which values a
parameter takes (guardrails/__init__.py, `ValueGuardrail`); this plug-in
hands their merged say to the turn: preferred values and array items,
the decline paths' members while the run is declining, and the tools that
cannot be called yet because a required id has no value of its kind.
Switch: `grounding` (they shape values under a grammar as grounding does).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from forge_core.guardrails.decline import declining_members
from forge_core.guardrails.protocol import BaseGuardrail, narrowed
from forge_core.guardrails.registry import preferred_values

if TYPE_CHECKING:
    from forge_core.backends.base import ChatRequest
    from forge_core.run_state import RunState


class ValueGuardrails(BaseGuardrail):
    name = "values"
    switch = "grounding"

    def shape(self, state: RunState, request: ChatRequest) -> None:
        if not state.opts.grounding:
            return
        preferred = preferred_values(state.turn_facts())
        if state.declining:
            terminals = [t for t in state.wf.tools if t.name in state.wf.terminal_set]
            for key, members in declining_members(terminals).items():
                preferred.values.setdefault(key, members)
        request.preferred_values, request.preferred_items = preferred.values, preferred.items
        request.preferred_reasons = preferred.reasons
        if preferred.blocked:
            # A tool whose required id has no value of its kind yet.
            narrowed(state, request, preferred.blocked)
