"""Where a lookup's thing is, said in the words before it: `find_locker`'s
`location` for "the staff room locker is jammed" is "staff room".

A lookup takes a descriptor of the thing it finds (its location, site or
place), and the request names the thing with that descriptor in front of
it: "the plant room boiler", "our back office printer". Nothing labels
the descriptor as a location, so no other rule offers it, and a small model
writes placeholders. A string parameter named as such a descriptor, of a
tool whose name names the thing (`find_locker`: locker), takes the words
the request puts between a determiner ("the", "our", "my") and the thing,
less the words the tool's name and description also use ("staff" of "a
staff locker"). Only where the request says it one way.
"""

from __future__ import annotations

import re
from typing import Any

from forge_core.guardrails import Preferred, TurnFacts, decide, parameters, undecided
from forge_core.guardrails.text import stem, stems, words
from forge_core.workflow import ToolSpec

# Parameters that hold where a thing is.
_DESCRIPTORS = frozenset("location place site area spot position where".split())
# The verbs of a lookup's name.
_LOOKUPS = frozenset(stems("find get lookup look search locate check fetch show read identify"))
# Words of a tool's name that name no thing.
_GENERIC = frozenset(
    stems(
        "get find search lookup look up list check fetch read show by for of id ids details "
        "info information status record records data all"
    )
)
_DETERMINERS = "the|our|my|your|their|his|her|this|that|a|an"
_BREAKS = "of|in|at|on|for|with|to|from|by|and|or|is|was|are|it"
# One to four words between the determiner and the thing, none of them
# another determiner or a word that ends a noun phrase.
_PHRASE = r"\b(?:{d})\s+((?:(?!(?:{d}|{b})\b)[A-Za-z][\w'-]*\s+){{1,4}}?){thing}\b"


def _things(tool: ToolSpec) -> list[str]:
    """The words of a tool's name that name what it finds (`find_locker`: locker)."""
    said = words(tool.name)
    if len(said) < 2 or stem(said[0]) not in _LOOKUPS:
        return []
    return [w for w in said[1:] if stem(w) not in _GENERIC]


def _descriptor(name: str, schema: dict[str, Any]) -> bool:
    if schema.get("type") != "string" or {"enum", "format", "pattern"} & set(schema):
        return False
    said = set(words(name))
    return bool(said & _DESCRIPTORS) and not said & {"id", "code", "number", "ref"}


def modifiers(tool: ToolSpec, requests: list[str]) -> list[str]:
    """The descriptors the requests put before the thing `tool` finds."""
    own = set(stems(f"{tool.name} {tool.description}"))
    found: list[str] = []
    for thing in _things(tool):
        pattern = re.compile(
            _PHRASE.format(d=_DETERMINERS, b=_BREAKS, thing=re.escape(thing) + "s?"), re.IGNORECASE
        )
        for text in requests:
            for m in pattern.finditer(text):
                said = m.group(1).split()
                while said and stem(said[-1]) in own:
                    said.pop()
                while said and stem(said[0]) in own:
                    said.pop(0)
                if said:
                    found.append(" ".join(said))
    return list(dict.fromkeys(found))


class ObjectModifiers:
    name = "object_modifiers"

    def prefer(self, facts: TurnFacts, out: Preferred) -> None:
        for tool in facts.workflow.tools:
            descriptors = [n for n, s in parameters(tool) if _descriptor(n, s)]
            if len(descriptors) != 1:
                continue
            key = f"{tool.name}.{descriptors[0]}"
            if not undecided(out, key):
                continue
            found = modifiers(tool, facts.requests)
            if len(found) == 1:
                decide(out, key, found, self.name)
