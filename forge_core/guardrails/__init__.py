"""Guardrails that shape a turn's values: one module each, one interface.

The engine's older guardrails (grounding.py, binding.py, value_pools.py)
offer a parameter every value of a kind the conversation holds, and the
model picks. A small model picks badly: the caller's e-mail for a
`member_id` the lookup returned, 10000 for "120 dollars", `on_schedule` for
a ferry the result calls late (issue 34). The guardrails here
add *provenance*: where a value came from (the request, which tool's
result, the error of a failed call) and what names it there (a label, a
unit, an enum member's words). Where that evidence singles out some values,
the parameter takes only those; where it does not, nothing changes.

Each guardrail is a `ValueGuardrail`: it reads a `TurnFacts` (the request,
the successful results, the failed calls, the workflow) and returns, per
parameter ("tool.param"), the values the evidence supports, as JSON values
(`values`) or as a source list for an array's items (`items`). The loop
merges them (registry.py's `preferred_values`) into the turn's ChatRequest; the grammar
builder admits only those values where it is handed any (grammar_builder.py,
`Builder.preferred`). The first guardrail in `VALUE_GUARDRAILS` that speaks
for a parameter wins: the order is the strength of the evidence.

Nothing here names a tool, a parameter or a value of any workflow: the
rules read names, descriptions, units, calendar words and labels.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from forge_core.workflow import ToolSpec, Workflow


@dataclass(frozen=True)
class FailedValue:
    """A call that failed: which tool, with which arguments, and the error."""

    tool: str
    args: dict[str, Any]
    error: str


@dataclass(frozen=True)
class TurnFacts:
    """What a value guardrail reads: the workflow, the user's messages, the
    successful results ((tool, output), oldest first) and the failed calls
    (oldest first)."""

    workflow: Workflow
    requests: list[str]
    results: list[tuple[str, str]]
    failures: list[FailedValue] = field(default_factory=list)
    # The arguments of the calls that ran ((tool, args), oldest first).
    sent: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def tool(self, name: str) -> ToolSpec | None:
        return next((t for t in self.workflow.tools if t.name == name), None)

    def is_terminal(self, tool: str) -> bool:
        return tool in self.workflow.terminal_set


@dataclass
class Preferred:
    """Per parameter ("tool.param"): the only values it takes (`values`), or
    the items an array takes, each once and in this order (`items`)."""

    values: dict[str, list[Any]] = field(default_factory=dict)
    items: dict[str, list[str]] = field(default_factory=dict)
    # "tool.param" -> the guardrail that decided it (events, tests, ablation).
    reasons: dict[str, str] = field(default_factory=dict)
    # Tools that cannot be called yet: a required id has no value of its kind.
    blocked: set[str] = field(default_factory=set)
    # "tool.param" -> the most items an array of objects takes: the count
    # the request states ("my two children").
    counts: dict[str, int] = field(default_factory=dict)


class ValueGuardrail(Protocol):
    """One source of evidence for a turn's values."""

    name: str

    def prefer(self, facts: TurnFacts, out: Preferred) -> None:
        """Add what the evidence supports for parameters `out` does not
        decide yet; leave the others alone."""


# A result that says it found nothing or refused: "No free cabins on that
# voyage.", "Claim refused: check the cabin id", "Unknown account".
_NOTHING = re.compile(
    r"^\W*(?:no|none|nothing|not found|unknown|invalid|cannot|can't|could not|unable)\b"
    r"|^[^.;:\n]{0,60}\b(?:refused|rejected|denied|not found|does not exist|doesn't exist)\b",
    re.IGNORECASE,
)


def reports_nothing(output: str) -> bool:
    """Whether a successful tool result reads as nothing found or refused."""
    return bool(_NOTHING.search(output.strip()))


def parameters(tool: ToolSpec, depth: int = 0) -> list[tuple[str, dict[str, Any]]]:
    """A tool's named properties, nested ones too ("tool.days" for a
    `schedule.days`, and for the objects of an array, `guests[].name`, as
    the grammar keys them), and those of anyOf/oneOf/allOf branches."""
    out: list[tuple[str, dict[str, Any]]] = []

    def walk(schema: Any, level: int) -> None:
        if not isinstance(schema, dict) or level > 8:
            return
        for key in ("anyOf", "oneOf", "allOf"):
            # A branch's properties are the object's too ("deliver" with
            # an address, "collect" with a branch).
            for branch in schema.get(key) or ():
                walk(branch, level + 1)
        for name, sub in (schema.get("properties") or {}).items():
            if isinstance(sub, dict):
                out.append((name, sub))
                walk(sub, level + 1)
                items = sub.get("items")
                if sub.get("type") == "array" and isinstance(items, dict):
                    walk(items, level + 1)

    walk(tool.parameters, depth)
    return out


def parent_keys(tool: ToolSpec) -> dict[str, str]:
    """Each nested property's object key, where one object holds it:
    `amount` -> `balance_due` for a `balance_due: {amount, currency}`."""
    out: dict[str, str] = {}
    shared: set[str] = set()

    def walk(schema: Any, parent: str, level: int) -> None:
        if not isinstance(schema, dict) or level > 8:
            return
        for name, sub in (schema.get("properties") or {}).items():
            if not isinstance(sub, dict):
                continue
            if parent:
                if name in out and out[name] != parent:
                    shared.add(name)
                out.setdefault(name, parent)
            walk(sub, name, level + 1)

    walk(tool.parameters, "", 0)
    return {k: v for k, v in out.items() if k not in shared}


def flat_args(args: dict[str, object], depth: int = 0) -> dict[str, object]:
    """A call's arguments with those of its nested objects beside them, by
    their own names as the grammar keys them (`permit.reference` is
    `reference`); a name two objects share is left out."""
    out: dict[str, object] = {}
    seen: set[str] = set()
    for key, value in args.items():
        inner = flat_args(value, depth + 1) if isinstance(value, dict) and depth < 3 else {}
        for name, leaf in [(key, value), *inner.items()]:
            if name in seen:
                out.pop(name, None)
            else:
                out[name] = leaf
            seen.add(name)
    return out


def undecided(out: Preferred, key: str) -> bool:
    return key not in out.values and key not in out.items


def first_found(sources: Iterable[list[str]], find: Callable[[str], Iterable[Any]]) -> list[Any]:
    """What `find` reads in the first source (a list of texts) that has
    anything, each value once: the request before the results, or the
    reverse for a report."""
    for source in sources:
        found = list(dict.fromkeys(v for text in source for v in find(text)))
        if found:
            return found
    return []


def sent_elsewhere(facts: TurnFacts, param: str) -> set[str]:
    """The strings calls that ran sent as another parameter and never as
    `param`: one value does not fill two different parameters (the card
    number a lookup took is not the donor id it returned)."""
    mine = {v for _, args in facts.sent for k, v in args.items() if k == param}
    return {
        v
        for _, args in facts.sent
        for k, v in args.items()
        if k != param and isinstance(v, str) and v not in mine
    }


def decide(out: Preferred, key: str, values: list[Any], reason: str) -> None:
    """Record a guardrail's values for `key`, when it found any."""
    if values:
        out.values[key] = values
        out.reasons[key] = reason
