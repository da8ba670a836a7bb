"""Distinct items in an array of objects Forge writes item by item.

An item's identifying value (a key named like an id, a reference, a code
or an e-mail) names which thing the item is about: two items about one
thing are the list run on, not two things ("the 3 panels" written as
`W1-A`, `W1-A`, `W1-A` with other counts). Where the grammar lists the
values such a key may take (the ids the conversation shows, an enum), an
item does not take one an earlier item of the same array took, and the
array ends when every listed value is taken: its source is used up.

A value the grammar does not list (an open string) is the model's own and
is left alone; so are keys that are no identity (a count, a date, a
flag), which items may well share. Once an item has its identity, its
numbers are those the entry of that id writes, where the turn carries
them (`entry_choices`; guardrails/item_entries.py).
"""

from __future__ import annotations

import json
from typing import Any

from forge_core.guardrails.grounding import is_identifier_like


def identity_keys(items: dict[str, Any]) -> list[str]:
    """The required string keys of an item schema that identify the item."""
    props = items.get("properties", {})
    required = set(items.get("required", []))
    return [
        key
        for key, schema in props.items()
        if key in required
        and isinstance(schema, dict)
        and schema.get("type", "string") == "string"
        and is_identifier_like(key)
    ]


class TakenValues:
    """The identifying values each array's earlier items took, by the path
    of the value (the array's path, "[]", the key)."""

    def __init__(self) -> None:
        self._taken: dict[tuple[str, ...], list[str]] = {}
        # The identity the item being written took, by the items' path.
        self._current: dict[tuple[str, ...], str] = {}

    def start(self, item_path: tuple[str, ...], items: dict[str, Any]) -> None:
        """A new array whose items are at `item_path` (its path and "[]"):
        nothing taken yet, at any depth below it (a batch may write the
        same tool twice)."""
        depth = len(item_path)
        for path in [p for p in self._taken if p[:depth] == item_path]:
            del self._taken[path]
        for key in identity_keys(items):
            self._taken[(*item_path, key)] = []

    def tracked(self, path: tuple[str, ...]) -> bool:
        """Whether the value at `path` identifies an item of an array."""
        return path in self._taken

    def free(self, path: tuple[str, ...], listed: list[str]) -> list[str]:
        """Those of `listed` no earlier item took at `path`."""
        taken = self._taken.get(path, [])
        return [value for value in listed if value not in taken]

    def take(self, path: tuple[str, ...], value: str) -> None:
        if path in self._taken:
            self._taken[path].append(value)
            self._current[path[:-1]] = value

    def next_item(self, item_path: tuple[str, ...]) -> None:
        """Another item begins: it has no identity yet."""
        self._current.pop(item_path, None)

    def current(self, item_path: tuple[str, ...]) -> str | None:
        """The identity (a JSON text) the item being written took, if any."""
        return self._current.get(item_path)


def entry_choices(
    schema: dict[str, Any], identity: str | None, entries: dict[str, list[str]]
) -> list[str]:
    """The numbers the entry of the item's identity writes that fit a
    number's `schema` (guardrails/item_entries.py); [] for none."""
    if identity is None or schema.get("type") not in ("integer", "number"):
        return []
    try:
        key = json.loads(identity)
    except ValueError:
        return []
    out = []
    for text in entries.get(key, []) if isinstance(key, str) else []:
        if schema["type"] == "integer" and not text.isdigit():
            continue
        value = float(text)
        if "minimum" in schema and value < schema["minimum"]:
            continue
        if "maximum" in schema and value > schema["maximum"]:
            continue
        out.append(text)
    return out
