"""What the request says together about one item of a list of objects.

A request that lists several things says each one's details in its own
sentence: "We've got mice in the cellar. Last night the chef saw a
cockroach in the kitchen." The grammar lets each item's `pest` and `area`
be any member the request names (mentions.py), and the model, writing the
items one by one, paired the cockroaches with the cellar. So, for the
items of an array of objects, each enum member the request names is read
with the members of the item's other enum keys named in the same sentences:
once an item has taken `area: "kitchen"`, its `pest` is one named beside
the kitchen, where one is (backends/llama/pieces.py `value`).

The same holds for an item's numbers: "I'm Priya Nair, thirty-four, and I
weigh sixty-one kilos; my brother Arjun Nair is twenty-nine" gives the
item about Arjun Nair the numbers of the part that names him
(`request_segments`, read by the writer once an item has taken a name).

A member is named here as mentions.py names an item's member: by its words
or by its gist ("the owls" for `owl_pair`), never by a word of the tool's
own name. Only the request's sentences count, and only where the pairing
tells: a sentence naming every member of a key says nothing about which
goes with which.
"""

from __future__ import annotations

import json
import re
from typing import Any

from forge_core.guardrails import parameters
from forge_core.guardrails.mentions import named_members, partly_named
from forge_core.guardrails.quantities import in_digits
from forge_core.guardrails.text import stems
from forge_core.workflow import ToolSpec

# Where one sentence of a request ends; a dash or a semicolon joins what
# belongs together ("The ridge needs replacing too - it's the same reed").
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
# Where the part of a sentence about one thing may end: a list of people
# is often one sentence, each person's part ending at a semicolon.
_SEGMENT = re.compile(r"(?<=[.!?;])\s+|\n+")


def request_segments(requests: list[str]) -> list[str]:
    """The request's sentences, cut at semicolons too, with numbers written
    in words as digits ("thirty-four" -> "34"; text2num)."""
    return [in_digits(s) for text in requests for s in _SEGMENT.split(text) if s.strip()]


def context_key(key: str, member: str) -> str:
    """How an item's taken member is looked up: its key and its JSON text."""
    return f"{key}={member}"


def _enum_keys(items: dict[str, Any]) -> dict[str, list[Any]]:
    """An item schema's string keys with an enum of two or more members."""
    props = items.get("properties")
    out: dict[str, list[Any]] = {}
    for key, schema in (props if isinstance(props, dict) else {}).items():
        members = schema.get("enum") if isinstance(schema, dict) else None
        if isinstance(members, list) and len(members) > 1:
            out[key] = members
    return out


def _named(members: list[Any], sentence: str, not_gists: frozenset[str]) -> list[Any]:
    partly = partly_named(members, [sentence], not_gists)
    named = named_members(members, sentence)
    return [m for m in members if m in named or m in partly]


def _item_schemas(tool: ToolSpec) -> list[dict[str, Any]]:
    out = []
    for _, schema in parameters(tool):
        items = schema.get("items")
        if schema.get("type") == "array" and isinstance(items, dict):
            out.append(items)
    return out


def item_context(tools: list[ToolSpec], requests: list[str]) -> dict[str, dict[str, list[str]]]:
    """`context_key(key, member)` -> {another enum key of the same items:
    the members (JSON texts) named in the request's sentences that name
    `member`}, for the items of every array of objects of `tools`."""
    sentences = [s for text in requests for s in _SENTENCE.split(text) if s.strip()]
    out: dict[str, dict[str, list[str]]] = {}
    for tool in tools:
        not_gists = frozenset(stems(tool.name))
        for items in _item_schemas(tool):
            keys = _enum_keys(items)
            named = {
                key: [_named(members, s, not_gists) for s in sentences]
                for key, members in keys.items()
            }
            for key, members in keys.items():
                for member in members:
                    found = _beside(key, member, named, {k: len(v) for k, v in keys.items()})
                    if found:
                        out.setdefault(context_key(key, json.dumps(member)), {}).update(found)
    return out


def _beside(
    key: str, member: Any, named: dict[str, list[list[Any]]], sizes: dict[str, int]
) -> dict[str, list[str]]:
    """The members of each other key named in the sentences naming `member`
    of `key`, where they are fewer than all that key's members named
    anywhere (else the sentences tell nothing about the pairing)."""
    found: dict[str, list[str]] = {}
    where = [i for i, said in enumerate(named[key]) if member in said]
    for other, per_sentence in named.items() if where else ():
        if other == key:
            continue
        beside = list(dict.fromkeys(m for i in where for m in per_sentence[i]))
        anywhere = {m for said in per_sentence for m in said}
        if beside and len(beside) < len(anywhere) and len(beside) < sizes[other]:
            found[other] = [json.dumps(m) for m in beside]
    return found
