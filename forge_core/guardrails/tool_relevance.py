"""Of many tools, only those the request is about.

With more than relevance.MAX_RELEVANT_TOOLS non-terminal tools, the turn
offers only those BM25 ranks relevant to the request (relevance.py) or the
last result names; terminal tools and pending required steps always stay.
Before any tool has returned, of several terminal tools only those the
request asks for, and only the workflow's decline paths when no other tool
serves the request (decline.py). Switch: `tool_relevance`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from forge_core.guardrails.decline import decline_paths, lacks_numbers, only_declines, out_of_scope
from forge_core.guardrails.destructive_policy import unasked_destructive
from forge_core.guardrails.protocol import BaseGuardrail
from forge_core.guardrails.relevance import MAX_RELEVANT_TOOLS, asked_among, relevant
from forge_core.workflow import RESPOND_TOOL

if TYPE_CHECKING:
    from forge_core.backends.base import ChatRequest
    from forge_core.run_state import RunState


class ToolRelevance(BaseGuardrail):
    name = "tool_relevance"
    switch = "tool_relevance"

    def shape(self, state: RunState, request: ChatRequest) -> None:
        if not state.opts.tool_relevance:
            return
        allowed = narrow_to_relevant(state, request.allowed)
        if not state.results:
            allowed = narrow_terminals(state, allowed)
            allowed = decline_if_out_of_scope(state, allowed)
        request.allowed = allowed


def narrow_to_relevant(state: RunState, allowed: list[str]) -> list[str]:
    """Of many tools, only those relevant to the request (relevance.py);
    terminal tools and pending required steps always stay."""
    base = allowed or state.all_tools()
    always = state.wf.terminal_set | set(state.steps.pending()) | {RESPOND_TOOL}
    # Ranked over the workflow's tools, not what this turn allows: when
    # the relevant tool is left out for a turn (it just repeated), the
    # distractors do not come back with it.
    candidates = [t for t in state.wf.tools if t.name not in always]
    if len(candidates) <= MAX_RELEVANT_TOOLS:
        return allowed
    keep = relevant(candidates, state.relevance_query())
    if keep is None:
        return allowed
    # A result may point at the next tool by name ("call confirm_order").
    results = state.scan()[1]
    named = {t.name for t in candidates if results and t.name in results[-1]}
    narrowed = [name for name in base if name in keep or name in always or name in named]
    return narrowed or allowed


def decline_if_out_of_scope(state: RunState, allowed: list[str]) -> list[str]:
    """Only the workflow's decline paths when no other tool the run may
    call serves the request (guardrails/decline.py); nothing changes
    while a required step is pending or where there is no decline path."""
    state.declining = False
    if state.steps.pending():
        return allowed
    terminals = [t for t in state.wf.tools if t.name in state.wf.terminal_set]
    paths = set(decline_paths(terminals, RESPOND_TOOL))
    if not paths:
        return allowed
    withheld = unasked_destructive(state) if state.opts.destructive_policy else set()
    others = [
        t
        for t in state.wf.tools
        if t.name not in paths and t.name != RESPOND_TOOL and t.name not in withheld
    ]
    query = state.relevance_query()
    # A workflow that can only end by declining, and requires no step,
    # declines at once: no other tool can serve it.
    ends_declining = not state.wf.required_steps and only_declines(terminals, RESPOND_TOOL)
    if not (ends_declining or out_of_scope(others, query) or lacks_numbers(others, query)):
        return allowed
    base = allowed or state.all_tools()
    finish = [n for n in base if n in paths]
    state.declining = bool(finish)
    return finish or allowed


def narrow_terminals(state: RunState, allowed: list[str]) -> list[str]:
    """Before any tool has returned, only the terminal tools the request
    asks for (relevance.asked_among), when it asks for any; pending
    required steps always stay."""
    if state.asked_terminals is None:
        terminals = [
            t for t in state.wf.tools if t.name in state.wf.terminal_set and t.name != RESPOND_TOOL
        ]
        state.asked_terminals = asked_among(terminals, "\n".join(state.user_texts()))
    if not state.asked_terminals:
        return allowed
    unasked = (set(state.wf.terminal_set) - state.asked_terminals - set(state.steps.pending())) - {
        RESPOND_TOOL
    }
    base = allowed or state.all_tools()
    return [name for name in base if name not in unasked] or allowed
