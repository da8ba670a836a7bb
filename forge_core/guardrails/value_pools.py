"""What a run's grammar offers each parameter, from the conversation so far.

The loop (loop.py) keeps the run's state; this module turns it into the
per-parameter values of the next constraint:
- free strings: the values shaped like the schema example, else named by the
  parameter's noun (grounding.shaped_values / grounding.named_values), the
  user's before the results', minus values that failed or that the tool
  already took (`ValuePools`); a tool with nothing left is `exhausted`;
- schema examples the conversation lacks (`unseen_examples`);
- report parameters bound to what tools returned (`bound_parameters`,
  binding.py);
- how many digits an integer may have (`number_digits`), and which numbers
  a numeric parameter takes (`number_values`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from forge_core.guardrails.binding import bound_values
from forge_core.guardrails.grounding import (
    is_grounded,
    is_identifier_like,
    named_values,
    schema_examples,
    shaped_values,
    word_examples,
)
from forge_core.workflow import ToolSpec, Workflow

# Digits an integer may always have, whatever the conversation holds.
MIN_NUMBER_DIGITS = 3
_DIGIT_RUN = re.compile(r"\d+")
_WORDS = re.compile(r"[a-z0-9]+")


def number_digits(texts: list[str]) -> int:
    """One digit more than the longest number the user or a tool wrote (a
    sum may carry), at least MIN_NUMBER_DIGITS: longer is an invented value."""
    longest = max((_longest_digits(t) for t in texts), default=0)
    return max(MIN_NUMBER_DIGITS, longest + 1)


@lru_cache(maxsize=4096)
def _longest_digits(text: str) -> int:
    return max((len(m) for m in _DIGIT_RUN.findall(text)), default=0)


# A number as people write it: "2,000", "4.18", "-3", "5%", "5 percent".
_NUMBER = re.compile(
    r"(?<![\w.])(-?\d{1,3}(?:,\d{3})+|-?\d+)(\.\d+)?(\s*%|\s*percent\b)?", re.IGNORECASE
)
_NUMBER_WORDS = {
    w: n
    for n, w in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
        "fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
} | {"thirty": 30, "forty": 40, "fifty": 50, "hundred": 100, "thousand": 1000}
_PERCENT_WORDS = ("percent", "percentage", "%")
_FRACTION_WORDS = ("decimal", "fraction")


def _literal(value: float) -> str:
    """A number as the grammar writes it: 3 for 3.0, 0.05 for 0.05."""
    value = float(value)
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return repr(round(value, 12))


@dataclass(frozen=True)
class NumberChoice:
    """What a numeric parameter may take: one of `literals` (JSON numbers)."""

    literals: list[str]


def number_values(wf: Workflow, texts: list[str]) -> dict[str, NumberChoice]:
    """Per numeric parameter ("tool.param"), the numbers the conversation
    gives, as JSON literals: digits as written (thousands separators
    dropped), number words ("three"), and a percentage as a fraction
    ("5%" -> 0.05) unless the parameter says it takes a percentage. Empty
    when the conversation has no number: nothing to ground on then."""
    plain: list[float] = []
    percents: list[float] = []
    for text in texts:
        for whole, fraction, percent in _NUMBER.findall(text):
            value = float(whole.replace(",", "") + (fraction or ""))
            (percents if percent else plain).append(value)
        plain += [
            float(_NUMBER_WORDS[w]) for w in _WORDS.findall(text.lower()) if w in _NUMBER_WORDS
        ]
    if not plain and not percents:
        return {}
    out: dict[str, NumberChoice] = {}
    for tool, name, schema in _nested_parameters(wf):
        if not isinstance(schema, dict) or schema.get("type") not in ("integer", "number"):
            continue
        if "enum" in schema or "const" in schema:
            continue
        about = f"{name} {schema.get('description', '')}".lower()
        # An integer cannot be a fraction: it takes a percentage as written;
        # so does a parameter that says it is one, unless it says decimal
        # ("as a decimal: 5% is 0.05").
        as_percent = schema.get("type") == "integer" or (
            any(w in about for w in _PERCENT_WORDS) and not any(w in about for w in _FRACTION_WORDS)
        )
        values = plain + (percents if as_percent else [p / 100 for p in percents])
        if schema.get("type") == "integer":
            values = [v for v in values if v == int(v)]
        if "default" in schema and isinstance(schema["default"], int | float):
            values.append(float(schema["default"]))
        literals = list(dict.fromkeys(_literal(v) for v in values))
        if literals:
            out[f"{tool.name}.{name}"] = NumberChoice(literals)
    return out


def written_numbers(texts: list[str]) -> Counter[str]:
    """How often `texts` write each number (as the grammar writes it; a
    percentage as written, "5%" is 5)."""
    out: Counter[str] = Counter()
    for t in texts:
        out.update(_numbers_in(t))
    return out


# Per text: a run asks about the same (growing) conversation every turn.
@lru_cache(maxsize=4096)
def _numbers_in(text: str) -> tuple[str, ...]:
    return tuple(
        _literal(float(whole.replace(",", "") + (fraction or "")))
        for whole, fraction, _ in _NUMBER.findall(text)
    )


def recombined_calls(calls: list[tuple[str, dict[str, Any]]], texts: list[str]) -> list[int]:
    """The calls of a batch (name, arguments) that only recombine numbers
    earlier calls of the same tool already used, each written once in
    `texts`: "the gcd of (45, 60) and (81, 63)" answered with a third call
    (45, 81). Each number the request writes fills one argument of one call
    of a tool; other tools may take it again (an order's status and its
    invoice)."""
    written = written_numbers(texts)
    used: dict[str, Counter[str]] = {}
    out = []
    for i, (name, args) in enumerate(calls):
        numbers = [_literal(v) for v in args.values() if _is_number(v)]
        mine = used.setdefault(name, Counter())
        if mine and numbers and all(0 < written[n] <= mine[n] for n in numbers):
            out.append(i)
            continue
        mine.update(numbers)
    return out


def min_parallel_calls(tools: list[ToolSpec], texts: list[str]) -> int:
    """The fewest calls a parallel batch needs to use every number the
    request writes: their count over the most required numeric parameters
    one call of these tools takes ("12 months of solar and 8 of wind" for a
    tool of one number: 2 calls). 1 when no tool takes a number, and when
    a tool takes an identifier as a string: the request's numbers may be
    ids then ("transfer $500 from account 12345" is one call)."""
    if any(
        isinstance(schema, dict)
        and schema.get("type") == "string"
        and (is_identifier_like(name) or is_grounded(name, schema))
        for t in tools
        for name, schema in (t.parameters.get("properties", {}) or {}).items()
    ):
        return 1
    per_call = max(
        (
            sum(
                1
                for name, schema in (t.parameters.get("properties", {}) or {}).items()
                if name in set(t.parameters.get("required", []) or [])
                and isinstance(schema, dict)
                and schema.get("type") in ("integer", "number")
            )
            for t in tools
        ),
        default=0,
    )
    if not per_call:
        return 1
    return max(1, sum(written_numbers(texts).values()) // per_call)


_NONE = object()
# The most words a string value has; a longer one is prose (invented_optionals).
MAX_VALUE_WORDS = 3


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


@lru_cache(maxsize=4096)
def _squash(text: str) -> str:
    return " ".join(_WORDS.findall(text.lower()))


def invented_optionals(
    tool: ToolSpec, args: dict[str, Any], texts: list[str], numbers: dict[str, NumberChoice]
) -> list[str]:
    """The optional arguments of a call whose values the conversation never
    gave: a string of at most MAX_VALUE_WORDS words it does not contain
    (words compared, case and punctuation aside; longer is prose), a
    number not among the ones the request gives (`numbers`:
    number_values; none are invented when it gives none), or a number
    that another argument of the call already took and the
    conversation writes once ("contribution": 20000 beside
    "initial_investment": 20000 for "an initial investment of $20000").
    Left out, the tool's own default applies instead of an invented value
    ("team": "NBA" for "find LeBron James", "year": 201 for "what did Curie
    discover in 1898?"). Booleans, enum members, lists and objects are
    choices, not values, and stay; so does the schema's default."""
    properties = tool.parameters.get("properties", {}) or {}
    required = set(tool.parameters.get("required", []) or [])
    # Built on first use: most calls have no optional argument to check.
    said = ""
    written: Counter[str] | None = None
    out = []
    for name, value in args.items():
        schema = properties.get(name)
        if name in required or not isinstance(schema, dict):
            continue
        if "enum" in schema or "const" in schema or value == schema.get("default", _NONE):
            continue
        if isinstance(value, str):
            words = _squash(value)
            said = said or " " + " ".join(_squash(t) for t in texts) + " "
            # A value is a few words; longer is prose the model wrote (a
            # summary, a note), not something it should have copied.
            if words and len(words.split()) <= MAX_VALUE_WORDS and f" {words} " not in said:
                out.append(name)
        elif _is_number(value):
            choice = numbers.get(f"{tool.name}.{name}")
            literal = _literal(value)
            taken = any(
                other != name and _is_number(v) and _literal(v) == literal
                for other, v in args.items()
            )
            # Without any number in the conversation, a number is the model's
            # own choice ("read" page 3 of "read the pages"), not an invention.
            if written is None:
                written = written_numbers(texts)
            if choice is not None and (
                literal not in choice.literals or (taken and written[literal] < 2)
            ):
                out.append(name)
    return out


def free_string(name: str, schema: Any) -> bool:
    """A plain string parameter that no other grounding rule covers."""
    return (
        isinstance(schema, dict)
        and schema.get("type") == "string"
        and not any(k in schema for k in ("enum", "const", "pattern", "format"))
        and not is_grounded(name, schema)
    )


def _parameters(wf: Workflow) -> list[tuple[ToolSpec, str, Any]]:
    return [
        (tool, name, schema)
        for tool in wf.tools
        for name, schema in (tool.parameters.get("properties", {}) or {}).items()
    ]


def _nested_parameters(wf: Workflow) -> list[tuple[ToolSpec, str, Any]]:
    """Every named property of every tool, nested ones included (the
    grammar keys a nested "max" as "tool.max" too)."""
    out: list[tuple[ToolSpec, str, Any]] = []

    def walk(tool: ToolSpec, schema: Any, depth: int) -> None:
        if not isinstance(schema, dict) or depth > 8:
            return
        for name, sub in (schema.get("properties", {}) or {}).items():
            out.append((tool, name, sub))
            walk(tool, sub, depth + 1)
        walk(tool, schema.get("items"), depth + 1)

    for tool in wf.tools:
        walk(tool, tool.parameters, 0)
    return out


def unseen_examples(wf: Workflow, texts: list[str]) -> dict[str, list[str]]:
    """Per parameter ("tool.param"), the example values its schema shows
    that the conversation does not have (grounding.schema_examples)."""
    examples = wf.memo(
        "schema_examples",
        lambda: [
            (f"{t.name}.{n}", list(dict.fromkeys(schema_examples(s) + word_examples(s))))
            for t, n, s in _parameters(wf)
        ],
    )
    out: dict[str, list[str]] = {}
    for key, shown in examples:
        unseen = [e for e in shown if not any(e in t for t in texts)]
        if unseen:
            out[key] = unseen
    return out


def bound_parameters(
    wf: Workflow,
    results: list[tuple[str, str]],
    labels_only: set[str],
    skip_grounded: bool,
) -> dict[str, list[Any]]:
    """Per terminal tool parameter ("tool.param"), the values a successful
    tool result gave for it (binding.py). Grounded identifiers keep their
    own rule when `skip_grounded`; the parameters in `labels_only` (the
    conversation names their values, as reboot_server's `server`) bind
    only to labels."""
    out: dict[str, list[Any]] = {}
    if not results:
        return out
    for tool, name, schema in _parameters(wf):
        if tool.name not in wf.terminal_set or (skip_grounded and is_grounded(name, schema)):
            continue
        key = f"{tool.name}.{name}"
        values = bound_values(name, schema, results, tool.name, labels_only=key in labels_only)
        if values:
            out[key] = list(values)
    return out


@dataclass
class Offer:
    """One turn's free-string values ("tool.param" -> values) and the tools
    with none left."""

    named: dict[str, list[str]] = field(default_factory=dict)
    shaped: dict[str, list[str]] = field(default_factory=dict)
    exhausted: set[str] = field(default_factory=set)

    def values(self) -> set[str]:
        return {v for vs in (*self.named.values(), *self.shaped.values()) for v in vs}


class ValuePools:
    """The free-string values a run's conversation offers, per parameter."""

    def __init__(self, wf: Workflow, names: set[str]) -> None:
        self.wf = wf
        # The words of the tool and parameter names (get_shipping_cost ->
        # get, exchange, rate): a compound with one names no value.
        self.schema_words = {w for n in names for w in _WORDS.findall(n.lower())}
        # "tool.param" -> string values that tool already took in a call that
        # succeeded: a repeat is refused anyway (the loop's repeat checks), so
        # a pool leaves them out (step "1" done, "2" next).
        self.used: dict[str, set[str]] = {}

    def record(self, tool: str, args: dict[str, Any]) -> None:
        """A call of `tool` with `args` succeeded."""
        for param, value in args.items():
            if isinstance(value, str):
                self.used.setdefault(f"{tool}.{param}", set()).add(value)

    def offer(self, users: list[str], others: list[str], failed: set[str]) -> Offer:
        """The values of the user's messages `users`, else of the other texts
        (tool results), for each free string parameter, minus `failed` and
        the values the tool already took. A required parameter that had
        values and has none left makes its tool `exhausted`."""
        offer = Offer()
        left: dict[str, bool] = {}
        pools: list[tuple[dict[str, list[str]], Callable[[str, Any, list[str]], list[str]]]] = [
            (offer.shaped, lambda name, schema, texts: shaped_values(schema, texts)),
            (offer.named, lambda name, schema, texts: named_values(name, texts, self.schema_words)),
        ]
        free = self.wf.memo(
            "free_strings",
            lambda: [
                (
                    name,
                    schema,
                    f"{tool.name}.{name}",
                    name in (tool.parameters.get("required") or []),
                )
                for tool, name, schema in _parameters(self.wf)
                if free_string(name, schema)
            ],
        )
        for name, schema, key, required in free:
            for out, find in pools:
                sources = [find(name, schema, users), find(name, schema, others)]
                values = self._first_left(key, sources, failed)
                if values:
                    out[key] = values
                if required and any(sources):
                    left[key] = left.get(key, False) or bool(values)
        offer.exhausted = {key.split(".", 1)[0] for key, any_left in left.items() if not any_left}
        return offer

    def _first_left(self, key: str, sources: list[list[str]], failed: set[str]) -> list[str]:
        """The first source with values left once the failed and used ones
        are out: the user's "16:45" before a result's "free from 13:00"."""
        gone = failed | self.used.get(key, set())
        for source in sources:
            values = [v for v in source if v not in gone]
            if values:
                return values
        return []
