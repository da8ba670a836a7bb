"""Values shaped like the schema's example: "Queue name, e.g. billing-queue"
takes the request's `orders-queue`, never the example itself.

A small model copies an example (`billing-queue`) or decorates it
(`queue/billing-queue`). grounding.shaped_values covers examples with digits
(a time, a date); this covers names built of parts: a value of the
conversation with the example's separators in the same places and at least
one part in common ("orders-queue" for "billing-queue", "eu-west-2" for
"us-east-1", "orders.v2" for "payments.v2"), the request's before the
results'. The example itself is a value only where the conversation has it.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from forge_core.guardrails import (
    Preferred,
    TurnFacts,
    decide,
    first_found,
    parameters,
    undecided,
)
from forge_core.guardrails.grounding import schema_examples

_SEPARATORS = re.compile(r"[-_./:]")
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-_./:]*[A-Za-z0-9]")
_EXAMPLE = re.compile(
    r"(?:\be\.g\.,?|\bfor example\b,?|\bsuch as\b|\blike\b)\s+['\"`]?([A-Za-z0-9][^\s,;)'\"`]*)",
    re.IGNORECASE,
)


def _examples(schema: dict[str, Any]) -> list[str]:
    """Every example the schema shows, with or without digits."""
    out = list(schema_examples(schema))
    out += [m.group(1).rstrip(".:") for m in _EXAMPLE.finditer(str(schema.get("description", "")))]
    return [e for e in dict.fromkeys(out) if _SEPARATORS.search(e)]


def _skeleton(value: str) -> tuple[list[str], list[str]]:
    return _SEPARATORS.findall(value), [p.lower() for p in _SEPARATORS.split(value)]


def shaped_like(example: str, text: str) -> list[str]:
    seps, parts = _skeleton(example)
    out = []
    for token in _TOKEN.findall(text):
        their_seps, their_parts = _skeleton(token)
        if token != example and their_seps == seps and set(their_parts) & set(parts):
            out.append(token)
    return out


def _shaped_like_any(examples: list[str], text: str) -> list[str]:
    return [v for e in examples for v in shaped_like(e, text)]


class ExampleShapes:
    name = "example_shapes"

    def prefer(self, facts: TurnFacts, out: Preferred) -> None:
        results = [t for _, t in reversed(facts.results)]
        for tool in facts.workflow.tools:
            for name, schema in parameters(tool):
                key = f"{tool.name}.{name}"
                if schema.get("type") != "string" or "enum" in schema or not undecided(out, key):
                    continue
                examples = _examples(schema)
                if not examples:
                    continue
                read = functools.partial(_shaped_like_any, examples)
                decide(out, key, first_found((facts.requests, results), read), self.name)
