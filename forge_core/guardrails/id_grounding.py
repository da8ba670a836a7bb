"""Identifiers only from the conversation.

Under a grammar, a parameter named like an id (or marked
"x-forge-grounded") takes only values seen in the user's messages and tool
results (grounding.py finds them): first what a failed call's error showed
the format to be, a parameter's own labelled values ("Order Q-58" for
order_id) before the rest; a number the request calls a phone only for a
phone's parameter; an error's HTTP status for none. A schema example the conversation lacks is not
a value, and extra calls of a batch that only recombine the request's
numbers are dropped (value_pools.py). Switch: `grounding`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from forge_core.guardrails import parameters
from forge_core.guardrails.error_values import error_status
from forge_core.guardrails.grounding import extract_candidates, labelled
from forge_core.guardrails.item_context import item_context, request_segments
from forge_core.guardrails.item_entries import entry_numbers
from forge_core.guardrails.phones import labelled_phones
from forge_core.guardrails.protocol import BaseGuardrail
from forge_core.guardrails.value_pools import recombined_calls, unseen_examples

if TYPE_CHECKING:
    from forge_core.backends.base import ChatRequest, ToolCall
    from forge_core.run_state import RunState


class Grounding(BaseGuardrail):
    name = "grounding"
    switch = "grounding"

    def shape(self, state: RunState, request: ChatRequest) -> None:
        if not state.opts.grounding:
            return
        texts = state.grounding_texts()
        # The user's words first, then the newest results: when there are
        # more candidates than the grammar takes, the oldest results'
        # go (a closing code in the last of six listings stays).
        users = set(state.user_texts())
        recent = [t for t in texts if t in users] + [t for t in reversed(texts) if t not in users]
        seen = extract_candidates(recent, state.placeholder_names())
        statuses = error_statuses(state)
        seen = [v for v in seen if v not in statuses]
        request.grounded_values = grounded_values(state, seen)
        request.grounded_formats = grounded_formats(state)
        request.grounded_labels = grounded_labels(state, texts, seen)
        request.phone_values = sorted({p for t in state.user_texts() for p in labelled_phones(t)})
        request.entry_numbers = entry_numbers([t for t in texts if t not in users], list(users))
        request.item_context = item_context(state.wf.tools, state.user_texts())
        request.item_segments = request_segments(state.user_texts())
        request.unseen_examples = unseen_examples(state.wf, texts)
        if statuses:
            # No string starts with an error's status: a 4xx, then it grown.
            for tool in state.wf.tools:
                for name, schema in parameters(tool):
                    if schema.get("type") == "string":
                        key = f"{tool.name}.{name}"
                        request.unseen_examples[key] = [
                            *request.unseen_examples.get(key, []),
                            *sorted(statuses),
                        ]

    def filter_calls(self, state: RunState, calls: list[ToolCall]) -> list[ToolCall]:
        if not state.opts.grounding or len(calls) <= 1:
            return calls
        # Extra calls that only recombine the request's numbers: a
        # parallel array the model did not know how to end.
        echoes = set(recombined_calls([(c.name, c.args) for c in calls], state.user_texts()))
        return [c for i, c in enumerate(calls) if i not in echoes]


def error_statuses(state: RunState) -> set[str]:
    """The HTTP statuses failed calls' errors start with that the user never
    wrote: a status is no value of any parameter."""
    found = {s for f in state.failed.values() if (s := error_status(f.error))}
    said = " ".join(state.user_texts())
    return {s for s in found if s not in said}


def grounded_values(state: RunState, seen: list[str]) -> list[str]:
    """Candidates from what the user said and what tools returned (`seen`);
    never from the model's own calls or from nudges. First what the
    errors' examples suggest (a failed value in the expected format)."""
    repaired = [c for f in state.failed.values() for cs in f.reshaped.values() for c in cs]
    return list(dict.fromkeys(repaired + seen))


def grounded_labels(state: RunState, texts: list[str], seen: list[str]) -> dict[str, list[str]]:
    """Per grounded parameter, the candidates the conversation labels as
    its kind ("Order Q-58" for order_id; grounding.labelled)."""
    # A value that already failed is no label's answer, for any tool.
    failed = state.failed_strings()
    candidates = [c for c in seen if c not in failed]
    out: dict[str, list[str]] = {}
    for name in state.grounded_parameters:
        found = labelled(candidates, texts, name)
        if found:
            out[name] = found
    return out


def grounded_formats(state: RunState) -> dict[str, list[str]]:
    """Where a tool rejected a value's format: that parameter takes only
    its failed values rewritten in the format the error showed."""
    out: dict[str, list[str]] = {}
    for f in state.failed.values():
        for param, candidates in f.reshaped.items():
            key = f"{f.name}.{param}"
            out[key] = list(dict.fromkeys(out.get(key, []) + candidates))
    return out
