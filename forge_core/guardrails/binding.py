"""Bound report values: a terminal tool's parameter copies what a tool returned.

A small model that has the answer in hand still writes something else into
the report: a looked-up rate reported as "USD", or `total=":{"` after
"... total 96.40 EUR" (measured with Gemma 3 270M, bench/RESULTS.md §7). The value was in a tool
result; the model only had to copy it. Grounding (grounding.py) covers
identifiers; this covers the report's values.

A parameter of a *terminal* tool is bound when a successful tool result
answers it, by one of two clear rules:
- **label**: the result names the parameter right before a value
  ("total 96.40 EUR" for `total`, "balance: 1284.50 USD" for `balance`;
  the value runs to the end of its clause), or right after a number
  ("3 items" for `items`);
- **subject**: the parameter's name is what a tool that succeeded looks up,
  i.e. the end of that tool's name after at least one word (`cost` for
  `get_shipping_cost`, `forecast` for `get_forecast`); its latest result,
  whole or by clause, is the value;
- **report**: else, the parameter is what the terminal tool itself reports
  (`summary` for `submit_summary`): the last result, whole or by clause.

A label, when there is one, is the answer; else the subject's result. A
number that adds things up (`total`, or "the sum over ..." in its
description) with neither takes the sum of what a tool that ran several
times returned, one number per result. A bound parameter takes only those
values: strings as written, integers and
numbers as the numbers in them. Parameters with an enum, const, pattern or
format, and grounded identifiers (grounding.py), keep their own rules.
Only terminal tools: they report what was found, while other tools' inputs
come from the request.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

MAX_BOUND_VALUE = 200
MAX_BOUND_VALUES = 16

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_WORD = re.compile(r"[a-z0-9]+")
# Where a labelled value ends: a clause break, a sentence end, a bracket.
_CLAUSE_END = re.compile(r",\s|;|\.\s|\.$|\n|\s\(|\)")
_CLAUSE_SPLIT = re.compile(r"(?:,|;|:)\s+|\.\s+|\n+")
_NUMBER = re.compile(r"[-+]?\d{1,3}(?:,\d{3})+(?:\.\d+)?|[-+]?\d+(?:\.\d+)?")


def name_words(name: str) -> list[str]:
    """`get_shipping_cost` -> [get, shipping, cost]; `closingCode` -> [closing, code]."""
    return _WORD.findall(_CAMEL.sub(" ", name).lower())


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def is_subject(param: str, tool: str) -> bool:
    """`param` names what `tool` looks up: the tool's name ends with the
    parameter's words after at least one more word (get_forecast/forecast).
    Number counts: list_orders returns orders, not the `order`."""
    p, t = name_words(param), name_words(tool)
    return bool(p) and len(t) > len(p) and t[-len(p) :] == p


def labelled_values(param: str, text: str) -> list[str]:
    """Values `text` labels with the parameter's name: the name as written
    (a plural, "Services: a, b", introduces a list, not the value), then
    optionally `:`, `=`, "is" or "of", then the value up to the end of its
    clause ("total 96.40 EUR, status unpaid" -> "96.40 EUR"
    for `total`); or a number right before the name, one word between at
    most ("3 items", "14 open tickets")."""
    words = name_words(param)
    if not words:
        return []
    label = r"[\s_-]+".join(re.escape(w) for w in words)
    pattern = re.compile(
        rf"(?<![A-Za-z0-9])(?:{label})(?:\s*[:=]\s*|\s+(?:is|of|was)\s+|\s+)(?=\S)",
        re.IGNORECASE,
    )
    out: list[str] = []
    # Or a count written before its noun: "3 items", "14 open tickets".
    counted = re.compile(
        rf"(?<![\w.,-])(\d[\d,]*(?:\.\d+)?)\s+(?:[A-Za-z]+\s+)?(?:{label})s?(?![A-Za-z0-9])",
        re.IGNORECASE,
    )
    for match in counted.finditer(text):
        if match.group(1) not in out:
            out.append(match.group(1))
    for match in pattern.finditer(text):
        rest = text[match.end() :]
        end = _CLAUSE_END.search(rest)
        value = (rest[: end.start()] if end else rest).strip().strip("'\"`")
        if value and len(value) <= MAX_BOUND_VALUE and value not in out:
            out.append(value)
    return out


def result_values(text: str) -> list[str]:
    """A result as a report may quote it: whole (without its final period),
    what follows a leading "Subject:", and each clause of that."""
    whole = text.strip()
    out = [whole, whole.rstrip(".").strip()]
    head, sep, tail = whole.partition(": ")
    if sep and len(head.split()) <= 4:
        # "ACME last trade: 123.45 USD": the head names, the tail answers.
        out.append(tail.rstrip(".").strip())
        whole = tail
    out.extend(c.strip().rstrip(".") for c in _CLAUSE_SPLIT.split(whole))
    return [v for v in dict.fromkeys(out) if v and len(v) <= MAX_BOUND_VALUE]


def numbers_of(values: Iterable[str], integer: bool) -> list[int | float]:
    """The numbers written in `values` ("3,000 EUR" -> 3000), in order."""
    out: list[int | float] = []
    for value in values:
        for match in _NUMBER.finditer(value):
            raw = match.group(0).replace(",", "")
            number: int | float = float(raw) if "." in raw else int(raw)
            if integer and not float(number).is_integer():
                continue
            number = int(number) if integer else number
            if number not in out:
                out.append(number)
    return out


def bindable(schema: Any) -> str | None:
    """The JSON type a parameter binds as, or None when its schema has its
    own rule (enum, const, pattern, format, a grounding annotation)."""
    if not isinstance(schema, dict):
        return None
    if any(k in schema for k in ("enum", "const", "pattern", "format", "x-forge-grounded")):
        return None
    kind = schema.get("type")
    return kind if kind in ("string", "integer", "number") else None


# The last word of a parameter's name that is the label a result writes
# ("current_status" -> "status").
_HEADS = frozenset("status state stage code outcome result grade rating level".split())
# A unit a parameter's name ends in (`balance_eur`, `weight_kg`).
_UNITS = frozenset(
    "gbp eur usd chf jpy aud cad pct percent kg g km m cm mm mins minutes hours days".split()
)


def bound_values(
    param: str,
    schema: Any,
    results: list[tuple[str, str]],
    tool: str = "",
    labels_only: bool = False,
) -> list[str] | list[int | float]:
    """The values `param` of terminal tool `tool` may take given the
    successful `results` so far ((tool name, output), oldest first); []
    when nothing binds it. `labels_only`: the conversation names the
    parameter's values itself, so only a label binds it."""
    kind = bindable(schema)
    if kind is None or not results:
        return []
    found: list[str] = []
    for _, output in reversed(results):
        found.extend(labelled_values(param, output))
    said = name_words(param)
    if not found and len(said) > 1 and said[-1] in _UNITS:
        # `balance_eur` where the result says "balance 90.00 EUR": the
        # unit is the value's, not the label's.
        unit = re.compile(rf"([-+]?[\d,]*\d(?:\.\d+)?)\s*{said[-1]}\b", re.IGNORECASE)
        for _, output in reversed(results):
            for value in labelled_values("_".join(said[:-1]), output):
                # The number the unit follows, not the rest of the clause.
                if (measured := unit.match(value)) is not None:
                    found.append(measured.group(1))
    if not found and len(said) > 1 and said[-1] in _HEADS:
        # `current_status` where the result says "status ON_HOLD": the
        # label's head names it when the whole name is not written.
        for _, output in reversed(results):
            found.extend(labelled_values(said[-1], output))
    if labels_only and not found:
        return []
    if not found:
        # A label is the precise answer; the subject's whole result is the
        # fallback ("1 USD = 0.92 EUR" for `rate`).
        latest: dict[str, str] = {}
        for name, output in results:
            latest[name] = output
        for name, output in reversed(list(latest.items())):
            if is_subject(param, name):
                found.extend(result_values(output))
    if not found and kind != "string" and is_total(param, schema):
        sums = totals(results, integer=kind == "integer")
        if sums:
            return sums
    if not found and tool and is_subject(param, tool):
        # The report's own subject (submit_summary's `summary`): what the last
        # lookup returned.
        found.extend(result_values(results[-1][1]))
    values = list(dict.fromkeys(found))[:MAX_BOUND_VALUES]
    if kind == "string":
        return values
    return numbers_of(values, integer=kind == "integer")[:MAX_BOUND_VALUES]


_TOTAL_WORDS = frozenset({"total", "sum", "overall", "combined", "altogether"})


def is_total(param: str, schema: Any) -> bool:
    """A number that adds things up: named so (`total`, `sum`,
    `total_cost`), or described so ("The sum over all the offices")."""
    words = set(name_words(param)) | set(
        _WORD.findall(str(schema.get("description", "")).lower())
        if isinstance(schema, dict)
        else []
    )
    return bool(words & _TOTAL_WORDS)


def totals(results: list[tuple[str, str]], integer: bool) -> list[int | float]:
    """The sums a total may be: for each tool that succeeded more than once,
    the sum of the one number each of its results holds ("Lyon office: 14
    open tickets." + "Paris office: 9 ..." -> 23)."""
    by_tool: dict[str, list[str]] = {}
    for tool, output in results:
        by_tool.setdefault(tool, []).append(output)
    out: list[int | float] = []
    for outputs in by_tool.values():
        if len(outputs) < 2:
            continue
        numbers = [numbers_of([o], integer=False) for o in outputs]
        if any(len(n) != 1 for n in numbers):
            continue
        total = sum(n[0] for n in numbers)
        if integer and not float(total).is_integer():
            continue
        value: int | float = int(total) if integer else round(total, 10)
        if value not in out:
            out.append(value)
    return out
