"""Options a description lists for a free string: `venue` of "The
rules for a venue (theatre, arena, club)", `priority` described
"One of low, normal or high".

Integrators often list a parameter's values in prose instead of an
`enum`. A small model then copies the whole list into the value
("theatre, arena, club") or writes something else. A string
parameter without an enum whose own description lists three or more short
options (in parentheses, after "one of" or "values:", or as the whole
description), or whose tool's description lists them right after the
parameter's name (or its name and a colon), is read by enum_mentions
(mentions.py) as if it had that enum: it takes the options the
conversation names, and is left alone where the conversation names none
or all of them. The schema is not changed: a
list in prose guides, it does not validate. Examples ("e.g. a, b, c",
"such as") are no closed list and are not read. A string without an enum
whose name another tool's enum parameter has takes that enum the same way
(`sibling_members`): one API, one vocabulary.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from forge_core.guardrails import parameters
from forge_core.guardrails.text import words

if TYPE_CHECKING:
    from forge_core.workflow import ToolSpec

# A list's place: in parentheses, after "one of" or "values:" (and the like),
# to the end of its sentence.
_PLACES = re.compile(
    r"\(([^()]{3,160})\)|\bone of\b:?\s*([^.;()]{3,160})"
    r"|\b(?:values?|options?|allowed|accepted|valid|possible|supported)\b[^:.;()]{0,12}:\s*"
    r"([^.;()]{3,160})",
    re.IGNORECASE,
)
_SPLIT = re.compile(r"\s*(?:,|/|\|)\s*(?:or\s+|and\s+)?|\s+or\s+", re.IGNORECASE)
# One option: a word or two, as an enum member would be.
_OPTION = re.compile(r"(?=[^ ]*[A-Za-z])[A-Za-z0-9][\w-]*(?: [A-Za-z][\w-]*)?")
_EXAMPLES = re.compile(r"^\s*(?:e\.g\.|eg\b|for example|for instance|such as|like)", re.IGNORECASE)
# Parameters that hold prose: a list in their description says what to write about.
_PROSE = frozenset(
    "note notes message comment comments description details summary reason text body "
    "instructions explanation query".split()
)
MIN_OPTIONS = 3
MAX_OPTIONS = 12


def _options(text: str, least: int = MIN_OPTIONS) -> list[str] | None:
    """The options `text` (one list's stretch) lists, at least `least`, or None."""
    if _EXAMPLES.search(text):
        return None
    parts = [p.strip().strip("'\"`") for p in _SPLIT.split(text.strip())]
    if not least <= len(parts) <= MAX_OPTIONS:
        return None
    if not all(_OPTION.fullmatch(p) for p in parts):
        return None
    lowered = [p.lower() for p in parts]
    return parts if len(set(lowered)) == len(parts) else None


def _lists(text: str) -> list[list[str]]:
    out = []
    for m in _PLACES.finditer(text):
        found = _listed(m, text)
        if found:
            out.append(found)
    return out


def _listed(m: re.Match[str], text: str) -> list[str] | None:
    # "such as: a, b, c", "e.g. (a, b, c)": examples, not a closed list.
    if _EXAMPLES_BEFORE.search(text[max(0, m.start() - 16) : m.start()]):
        return None
    return _options(next(g for g in m.groups() if g is not None))


_EXAMPLES_BEFORE = re.compile(r"(?:e\.g\.|for example|for instance|such as|like)\W*$", re.I)


def described_options(name: str, schema: dict[str, Any], tool_description: str) -> list[str]:
    """The options the parameter's description lists, else those its tool's
    description lists right after the parameter's name; [] for none."""
    if schema.get("type") != "string" or "enum" in schema or "format" in schema:
        return []
    if set(words(name)) & _PROSE:
        return []
    own = str(schema.get("description", ""))
    lists = _lists(own)
    if not lists and (whole := _options(own.rstrip("."))):
        lists = [whole]
    if len(lists) == 1:
        return lists[0]
    said = words(name)
    if lists or not said:
        return []
    # The name's last word, then the list: "for a venue (a, b, c)".
    label = re.escape(said[-1])
    near = re.compile(rf"\b{label}s?\b(?:\s*:)?[^.;()]{{0,12}}?(?=\(|\bone of\b)", re.I)
    found = []
    for m in near.finditer(tool_description):
        place = _PLACES.match(tool_description, m.end())
        if place is not None and (options := _listed(place, tool_description)):
            found.append(options)
    if not found:
        # "delivery_state: booked, loaded or delivered", "Priority: low
        # or high": the name, a colon and the list.
        # Written under the parameter's own name, two options are a list,
        # and what a parenthesis says of one is no option ("pickup (at the
        # depot) or post").
        named = "[ _-]".join(re.escape(w) for w in said)
        plain = re.sub(r"\s*\([^()]*\)", "", tool_description)
        for m in re.finditer(rf"\b{named}\s*:\s*([^.;()]{{3,160}})", plain, re.I):
            if options := _options(m.group(1), least=2):
                found.append(options)
        for m in re.finditer(rf"\b{label}\s*:\s*([^.;()]{{3,160}})", tool_description, re.I):
            if not found and (options := _options(m.group(1))):
                found.append(options)
    return found[0] if len(found) == 1 else []


def sibling_members(name: str, schema: dict[str, Any], tools: list[ToolSpec]) -> list[Any]:
    """The enum another tool gives a parameter of the same name, for a
    string without one: `service_level` of a quote takes the
    members the booking tool lists for its `service_level`; [] where no
    other tool, or tools that disagree, give one."""
    if schema.get("type") != "string" or "enum" in schema or "format" in schema:
        return []
    enums = {
        json.dumps(sub["enum"])
        for tool in tools
        for other, sub in parameters(tool)
        if other == name and isinstance(sub.get("enum"), list) and len(sub["enum"]) > 1
    }
    return json.loads(enums.pop()) if len(enums) == 1 else []
