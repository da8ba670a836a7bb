"""Id shapes the integrator wrote into the tools' descriptions: "Bookings
under a phone number, with booking refs (KB-.....)", "Every court's slots
on a date, with slot ids (PT-.....)", "Book a round by its tee time id (e.g.
TT-2210)", and a parameter's own "The member's id (GM-....)".

A run that holds both kinds of id (the user's bookings and the day's
slots) gave a small model nothing to tell a booking ref from a slot id:
neither result labels its ids, and their letters abbreviate no word of the
parameters. The description did say which is which. So each parenthesised
shape (letters, then `-` or `_`, then anything) belongs to the noun right
before it ("booking refs" -> booking; "its id" -> the noun the tool's name
ends with), and an id parameter of that noun (`booking_ref`) has the ids
that start with those letters and separator as its own, as if a result
had labelled them (provenance.py).
"""

from __future__ import annotations

import re
from typing import Any

from forge_core.guardrails.text import GENERIC, stems, topic_stems

# "booking refs (KB-.....)", "its tee time id (e.g. TT-2210)": up to three
# words, then the shape in parentheses.
_SHAPE_NOTE = re.compile(
    r"((?:[A-Za-z']+\s+){0,3})\(\s*(?:e\.g\.,?\s*|eg\s+|like\s+|such as\s+)?"
    r"([A-Za-z]{1,6})([-_])[^()]*\)"
)
# Date and time templates are no id's letters ("(YYYY-MM-DD)").
_TEMPLATES = frozenset("YYYY YY MM DD HH".split())
# Words between a shape's noun and the shape that name nothing.
_NAMING_NOTHING = frozenset(
    stems(
        "a an the its their his her your our my with and or of for by to on in at "
        "returns return gives s"
    )
)


def _nouns(before: str, tool_name: str) -> tuple[str, ...]:
    """The noun a shape belongs to: the last word before it that is no
    generic word, else the last noun of the tool's name."""
    said = [s for s in stems(before) if s not in _NAMING_NOTHING and s not in GENERIC]
    if said:
        return (said[-1],)
    own = topic_stems(tool_name)[1:]
    return own[-1:]


def _prefixes(text: str) -> list[tuple[str, str]]:
    """(text before, letters and separator) of each shape `text` writes."""
    return [
        (m.group(1), m.group(2) + m.group(3))
        for m in _SHAPE_NOTE.finditer(text)
        if m.group(2).upper() not in _TEMPLATES
    ]


def described_prefixes(tools: list[Any]) -> dict[str, set[str]]:
    """Each noun's id prefixes, as the tools' descriptions write them."""
    out: dict[str, set[str]] = {}
    for tool in tools:
        for before, prefix in _prefixes(str(getattr(tool, "description", "") or "")):
            for noun in _nouns(before, tool.name):
                out.setdefault(noun, set()).add(prefix)
    return out


def own_prefixes(param: str, schema: dict[str, Any], nouns: dict[str, set[str]]) -> set[str]:
    """The prefixes a parameter's ids are described with: in its own
    description, else those of its head noun."""
    own = {prefix for _, prefix in _prefixes(str(schema.get("description", "")))}
    if own:
        return own
    topic = topic_stems(param)
    if not topic:
        return set()
    head = topic[-1]
    # "membership ids (GM-.....)" are `member_id`'s too.
    return {
        prefix
        for noun, prefixes in nouns.items()
        if noun == head or (min(len(noun), len(head)) >= 4 and noun.startswith(head))
        for prefix in prefixes
    }


def shaped(value: str, prefixes: set[str]) -> bool:
    """`value` starts with one of `prefixes`, and more follows."""
    return any(value.startswith(p) and len(value) > len(p) for p in prefixes)
