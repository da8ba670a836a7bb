"""The value guardrails (registry.py's `VALUE_GUARDRAILS`) as one plug-in.

Each value guardrail reads the turn's facts and says which values a
parameter takes (guardrails/__init__.py, `ValueGuardrail`); this plug-in
hands their merged say to the turn: preferred values and array items,
the most items of an array of objects the request counts,
the decline paths' members while the run is declining, the tools' optional
keys no text of the conversation can fill taken out (unfounded_keys.py), and the tools that
cannot be called yet because a required id has no value of its kind.
Switch: `grounding` (they shape values under a grammar as grounding does).
"""

from __future__ import annotations

import copy
import dataclasses
from typing import TYPE_CHECKING, Any

from forge_core.guardrails.decline import declining_members
from forge_core.guardrails.protocol import BaseGuardrail, narrowed
from forge_core.guardrails.registry import preferred_values
from forge_core.guardrails.unfounded_keys import without_unfounded
from forge_core.workflow import ToolSpec

if TYPE_CHECKING:
    from forge_core.backends.base import ChatRequest
    from forge_core.run_state import RunState


# A count the request writes is the array's length, not only its most
# (bench.value_ablation `exact_counts`).
EXACT_COUNTS = True


def bounded(tool: ToolSpec, counts: dict[str, int]) -> ToolSpec:
    """`tool` with each array of objects the request counts ("two
    children") taking that many items (its `maxItems` and `minItems`):
    where the request writes how many, the model does not decide."""
    mine = {k.split(".", 1)[1]: n for k, n in counts.items() if k.startswith(f"{tool.name}.")}
    if not mine:
        return tool
    parameters = copy.deepcopy(tool.parameters)

    def walk(schema: Any) -> None:
        if not isinstance(schema, dict):
            return
        for name, sub in (schema.get("properties") or {}).items():
            if isinstance(sub, dict) and name in mine and sub.get("type") == "array":
                sub["maxItems"] = min(int(sub.get("maxItems", mine[name])), mine[name])
                low = int(sub.get("minItems", 0))
                sub["minItems"] = sub["maxItems"] if EXACT_COUNTS else min(low, sub["maxItems"])
            walk(sub)
        walk(schema.get("items"))

    walk(parameters)
    return dataclasses.replace(tool, parameters=parameters)


class ValueGuardrails(BaseGuardrail):
    name = "values"
    switch = "grounding"

    def shape(self, state: RunState, request: ChatRequest) -> None:
        if not state.opts.grounding:
            return
        facts = state.turn_facts()
        preferred = preferred_values(facts)
        if state.declining:
            terminals = [t for t in state.wf.tools if t.name in state.wf.terminal_set]
            for key, members in declining_members(terminals).items():
                preferred.values.setdefault(key, members)
        request.preferred_values, request.preferred_items = preferred.values, preferred.items
        request.preferred_reasons = preferred.reasons
        if preferred.counts:
            request.tools = [bounded(t, preferred.counts) for t in request.tools]
        # Optional keys no text of the conversation can fill (an SMS number
        # nobody gave) are not offered: the model would invent their values.
        texts = [state.wf.system_prompt, *facts.requests, *(text for _, text in facts.results)]
        texts += [f.error for f in facts.failures]
        request.tools = [without_unfounded(t, texts) for t in request.tools]
        if preferred.blocked:
            # A tool whose required id has no value of its kind yet.
            narrowed(state, request, preferred.blocked)
