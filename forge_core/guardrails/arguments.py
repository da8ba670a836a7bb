"""A call must name a known tool with arguments its JSON Schema accepts.

Near misses are repaired first (coercion.py: "42" for an integer, a
list's repeated items dropped; switch `coercion`), and, under grounding,
optional arguments whose value the conversation never gave are dropped so
the tool's default applies
(value_pools.py, `invented_optionals`). Whatever still fails is refused
with the schema's best error. Not switchable: an invalid call never runs.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from jsonschema.exceptions import best_match

from forge_core.guardrails import nudges
from forge_core.guardrails.coercion import (
    coerce_arguments,
    cut_runaways,
    drop_echoed_lines,
    drop_repeated_items,
    drop_restated_items,
)
from forge_core.guardrails.protocol import BaseGuardrail, Refusal
from forge_core.guardrails.value_pools import invented_optionals
from forge_core.messages import MessageType, ToolCallInfo

if TYPE_CHECKING:
    from forge_core.run_state import RunState


class Arguments(BaseGuardrail):
    name = "arguments"
    switch = ""

    def check(self, state: RunState, infos: list[ToolCallInfo]) -> Refusal | None:
        """Unknown tools and schema-invalid arguments never reach the client.
        Repaired calls replace their entries of `infos`."""
        problems: dict[int, str] = {}
        texts = state.grounding_texts()
        numbers = state.request_numbers() if state.opts.grounding else {}
        for i, call in enumerate(infos):
            spec = state.wf.tool(call.name)
            if spec is None:
                problems[i] = nudges.unknown_tool(call.name, state.tool_names)
                continue
            # Most calls are valid as they come: one validation pass then.
            valid = spec.validator.is_valid(call.args)
            if state.opts.coercion and not valid:
                args, coercions = coerce_arguments(spec.validator, call.args)
                if coercions:
                    call = infos[i] = replace(call, args=args, coercions=tuple(coercions))
            if state.opts.coercion:
                # A string that ran on into one digit goes, or ends there.
                args, cut = cut_runaways(spec.parameters, call.args)
                if cut:
                    call = infos[i] = replace(call, args=args, coercions=(*call.coercions, *cut))
                    valid = spec.validator.is_valid(call.args)
                # A list runs on repeating its items: the repeats go.
                args, dropped = drop_repeated_items(spec.validator, call.args)
                # ... or restating one thing with its numbers counted up.
                args, restated = drop_restated_items(spec.validator, spec.parameters, args)
                # ... and a second line that echoes the first is none.
                args, echoed = drop_echoed_lines(spec.validator, spec.parameters, args)
                dropped = [*dropped, *restated, *echoed]
                if dropped:
                    coerced = (*call.coercions, *dropped)
                    call = infos[i] = replace(call, args=args, coercions=coerced)
                    valid = spec.validator.is_valid(call.args)
            invented: list[str] = []
            if state.opts.grounding:
                # Optional values the conversation never gave: the tool's
                # default instead of an invention.
                invented = invented_optionals(spec, call.args, texts, numbers)
                if invented:
                    args = {k: v for k, v in call.args.items() if k not in invented}
                    call = infos[i] = replace(call, args=args)
            if valid and not invented:
                continue
            error = best_match(spec.validator.iter_errors(call.args))
            if error is not None:
                where = "/".join(str(p) for p in error.absolute_path) or "(root)"
                problems[i] = nudges.invalid_arguments(call.name, f"at '{where}': {error.message}")
        if not problems:
            return None
        return Refusal(
            {i: problems.get(i, nudges.not_executed(c.name)) for i, c in enumerate(infos)},
            MessageType.RETRY_NUDGE,
            next(iter(problems.values())),
        )
