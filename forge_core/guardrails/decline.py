"""A decline path: when no tool serves the request, the run ends through a
terminal tool, declining, instead of calling every tool in turn.

A parcel assistant asked for a poem tracked parcel "string: 1"; a crew
desk asked to move money called every tool it had, then closed the request
as handled. Before any tool has returned, the request is *out
of scope* when no tool other than the decline paths (and not withheld, such
as an unasked destructive tool) shares a distinctive word with it: a stem
of its name, description or parameter names that not every such tool has
(every tool of a crew desk takes a `crew_id`; "crew" tells none of them
apart). The decline paths (`decline_paths`) are a terminal tool that says it
declines, one with a declining enum member, or the respond tool. The turn
then offers only those, and an enum of theirs that has a declining member
("declined_out_of_scope", "rejected", "unsupported") takes it.

The request is out of scope too when every such tool needs a number
(a required integer or number with no enum and no default) and the
request writes none: not in digits, not in words, and no word of time
("next week", "Friday") a number could be read from. Asked "What is the
boiling point of tin?" with only `convert_temperature(value, ...)`, no
call can carry the user's values.

A workflow without a decline path is not changed, nor a turn while a
required step is pending.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from forge_core.guardrails import parameters
from forge_core.guardrails.quantities import in_digits
from forge_core.guardrails.relevance import tool_document
from forge_core.guardrails.text import contains_run, stems
from forge_core.workflow import ToolSpec

# Phrases that say "declined", as runs of stems.
_DECLINING = [
    stems(p)
    for p in ("decline", "out of scope", "unsupported", "reject", "refuse", "not supported")
]
# Words that say nothing about what a tool is for.
_STOP = frozenset(
    stems(
        "a an the of to in on for by with from and or is are be it its this that get set "
        "give use using return returns please my your our me you i we can could would "
        "should do does id ids"
    )
)


def _declines(said: tuple[str, ...]) -> bool:
    return any(contains_run(said, phrase) for phrase in _DECLINING)


def _terms(text: str) -> set[str]:
    return {s for s in stems(text) if s not in _STOP and not s.isdigit()}


def out_of_scope(
    callable_tools: list[ToolSpec], request: str, terminals: Sequence[ToolSpec] = ()
) -> bool:
    """No callable tool, nor a terminal one (a request may ask for an
    outcome outright: "restart it"), shares a distinctive word with
    `request`."""
    if not callable_tools or not request.strip():
        return False
    docs = {t.name: _terms(tool_document(t)) for t in [*callable_tools, *terminals]}
    common = set.intersection(*docs.values()) if len(docs) > 1 else set()
    wanted = _terms(request)
    return not any((doc - common) & wanted for doc in docs.values())


# Words a number may be read from: times, dates, multiples.
_NUMBER_WORDS = re.compile(
    r"\b(?:today|tonight|tomorrow|yesterday|weeks?|months?|years?|days?|hours?|minutes?|"
    r"annual(?:ly)?|monthly|weekly|daily|decade|century|dozen|half|double|twice|triple|once|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|january|february|march|april|"
    r"june|july|august|september|october|november|december)\b",
    re.IGNORECASE,
)


def lacks_numbers(tools: list[ToolSpec], request: str) -> bool:
    """Every tool needs a number the request does not write."""
    if not tools or not request.strip():
        return False
    if re.search(r"\d", in_digits(request)) or _NUMBER_WORDS.search(request):
        return False
    return all(_needs_a_number(t) for t in tools)


def _needs_a_number(tool: ToolSpec) -> bool:
    props = tool.parameters.get("properties") or {}
    return any(
        isinstance(schema := props.get(name), dict)
        and schema.get("type") in ("integer", "number")
        and "enum" not in schema
        and "default" not in schema
        for name in tool.parameters.get("required") or []
    )


def decline_paths(terminals: list[ToolSpec], respond_tool: str) -> list[str]:
    """The terminal tools a run may decline through: one that says so
    ("Decline a request that is not about shipping"), one with a declining
    enum member, or the respond tool. A workflow without one has no decline
    path, and a request it cannot serve is left to the other guardrails."""
    out = []
    for tool in terminals:
        said = stems(f"{tool.name} {tool.description}")
        if tool.name == respond_tool or _declines(said) or declining_members([tool]):
            out.append(tool.name)
    return out


def only_declines(terminals: list[ToolSpec], respond_tool: str) -> bool:
    """Every terminal tool is itself a decline ("decline_enquiry"; not the
    respond tool, nor a tool with a declining enum member, which also ends
    a run that was served): such a workflow can only end by declining, so
    no other tool can serve its request."""
    return bool(terminals) and all(
        t.name != respond_tool and bool(set(stems(t.name)) & _DECLINE_NAMES) for t in terminals
    )


# A tool named for declining the request itself ("decline_enquiry",
# "refuse"), not for an action that rejects something ("reject_samples").
_DECLINE_NAMES = frozenset(stems("decline declined refuse refusal"))


def declining_members(tools: list[ToolSpec]) -> dict[str, list[Any]]:
    """Per enum parameter of `tools` ("tool.param"): its declining members."""
    out: dict[str, list[Any]] = {}
    for tool in tools:
        for name, schema in parameters(tool):
            members = schema.get("enum")
            if not isinstance(members, list):
                continue
            found = [m for m in members if isinstance(m, str) and _declines(stems(m))]
            if found and len(found) < len(members):
                out[f"{tool.name}.{name}"] = found
    return out
