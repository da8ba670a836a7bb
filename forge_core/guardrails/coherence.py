"""A report's values come from the record it reports.

A history lists several records with the same fields: "1. Visit SV-26, passed,
pressure 1.4 bar, next due 2027-03-02. 2. Visit SV-25, passed, pressure
1.1 bar." Once a report's id is settled (the visit SV-26, by its label),
a small model still takes the pressure or the date from another record:
every number and date of the result is admissible to the grammar.

After the other value guardrails have spoken, for each terminal tool whose
parameters settled one id-like value that a result writes (the *anchor*),
every other parameter of that tool still offered several values keeps those
the anchor's own entry writes: the coarsest of its line, its sentence, its
`;`/`,` part (entries.py's levels) that holds no other record's id, in a
result that lists other records of the anchor's shape. Where the anchor's
entry writes none of them, nothing changes. Numbers match however the
result groups their digits ("1,250" is 1250).
"""

from __future__ import annotations

import re
from typing import Any

from forge_core.guardrails import Preferred, TurnFacts, parameters
from forge_core.guardrails.entries import levels
from forge_core.guardrails.grounding import id_shape

NAME = "record_coherence"


def _written(value: Any, text: str) -> bool:
    """Whether `text` writes `value`: strings as they are, numbers with or
    without thousands separators."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        number = f"{value:,}" if isinstance(value, int) else f"{value:,.10g}"
        plain = number.replace(",", "")
        grouped = re.escape(number).replace(",", ",?")
        return bool(re.search(rf"(?<![\d.,]){grouped}(?![\d]|[.,]\d)", text)) or bool(
            re.search(rf"(?<![\d.,]){re.escape(plain)}(?![\d]|[.,]\d)", text)
        )
    return isinstance(value, str) and bool(value) and value in text


def _id_like(value: str) -> bool:
    """A record's id: letters and digits together ("SV-26-0412", "LB-5521")."""
    return any(c.isdigit() for c in value) and any(c.isalpha() for c in value)


def _anchors(facts: TurnFacts, out: Preferred, keys: list[str]) -> list[str]:
    """The id-like values this tool's parameters settled on, that a result writes."""
    found = []
    for key in keys:
        values = out.values.get(key, [])
        if len(values) == 1 and isinstance(values[0], str) and _id_like(values[0]):
            value = values[0]
            if any(value in text for _, text in facts.results):
                found.append(value)
    return found


def _lists_others(anchor: str, text: str) -> bool:
    """Whether `text` lists other records beside the anchor's: ids of its
    shape ("SV-25-0390" beside "SV-26-0412")."""
    shape = id_shape(anchor)
    return any(
        token != anchor and id_shape(token) == shape
        for token in re.findall(r"[A-Za-z0-9][\w-]*[A-Za-z0-9]", text)
    )


def _own_entry(values: list[Any], anchor: str, texts: list[str]) -> list[Any]:
    for text in texts:
        if anchor not in text or not _lists_others(anchor, text):
            # Only a listing of records has an entry that is the anchor's.
            continue
        for parts in levels(text):
            own = [p for p in parts if anchor in p]
            if not own or any(_lists_others(anchor, p) for p in own):
                # Not yet down to the anchor's own record.
                continue
            kept = [v for v in values if any(_written(v, p) for p in own)]
            return kept if kept else values
    return values


def cohere(facts: TurnFacts, out: Preferred) -> None:
    """Narrow each terminal tool's offered values to its anchor's entry."""
    texts = [text for _, text in reversed(facts.results)]
    for tool in facts.workflow.tools:
        if not facts.is_terminal(tool.name):
            continue
        keys = list(dict.fromkeys(f"{tool.name}.{n}" for n, _ in parameters(tool)))
        anchors = _anchors(facts, out, keys)
        if not anchors:
            continue
        for key in keys:
            values = out.values.get(key, [])
            if len(values) < 2:
                continue
            narrowed = values
            for anchor in anchors:
                narrowed = _own_entry(narrowed, anchor, texts)
            if len(narrowed) < len(values):
                out.values[key] = narrowed
                out.reasons[key] = f"{out.reasons.get(key, '')}+{NAME}".lstrip("+")
