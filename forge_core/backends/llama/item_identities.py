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

An item's enum key whose members the conversation names (the grammar lists
two or more, fewer than the enum: "mice in the cellar ... a cockroach in
the kitchen") counts the items: each named member is some item's, so the
array does not end before every one is taken, and an item takes one no
earlier item took (`named_key`). Once every named member is taken the
array ends: the grammar lists only the named members, so another item
could only repeat one (a model running on wrote ten more blinds of one
named type). Two items sharing a member the request names once are the
cost of that bound. Once an item has a member, its other enum keys take
the members the request names beside it, and once it has a name, its
numbers are those the part of the request naming it writes
(guardrails/item_context.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from forge_core.guardrails.grounding import is_identifier_like
from forge_core.guardrails.item_context import context_key
from forge_core.guardrails.item_entries import plain_numbers

if TYPE_CHECKING:
    from forge_core.piece_grammars import PieceGrammars


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


def named_key(
    items: dict[str, Any], listed: Callable[[str], list[str] | None]
) -> tuple[str, int] | None:
    """The required enum key of an item schema whose members the
    conversation names, and how many it names: the one with most, where the
    grammar (`listed(key)`) lists two or more and fewer than the enum."""
    props = items.get("properties", {})
    required = set(items.get("required", []))
    best: tuple[str, int] | None = None
    for key, schema in props.items():
        members = schema.get("enum") if isinstance(schema, dict) else None
        if key not in required or not isinstance(members, list):
            continue
        named = listed(key) or []
        if 2 <= len(named) < len(members) and (best is None or len(named) > best[1]):
            best = (key, len(named))
    return best


class TakenValues:
    """The identifying values each array's earlier items took, by the path
    of the value (the array's path, "[]", the key)."""

    def __init__(self) -> None:
        self._taken: dict[tuple[str, ...], list[str]] = {}
        # The identity the item being written took, by the items' path.
        self._current: dict[tuple[str, ...], str] = {}
        # The enum members it took, as `context_key`s, by the items' path.
        self._members: dict[tuple[str, ...], list[str]] = {}
        # The open strings (a name) and the numbers it took, by the items' path.
        self._named: dict[tuple[str, ...], list[str]] = {}
        self._numbers: dict[tuple[str, ...], list[str]] = {}
        # The open strings earlier items of the array took.
        self._earlier: dict[tuple[str, ...], list[str]] = {}

    def start(
        self, item_path: tuple[str, ...], items: dict[str, Any], also: tuple[str, ...] = ()
    ) -> None:
        """A new array whose items are at `item_path` (its path and "[]"):
        nothing taken yet, at any depth below it (a batch may write the
        same tool twice). `also`: more keys whose values items take in turn
        (a named enum key)."""
        depth = len(item_path)
        for path in [p for p in self._taken if p[:depth] == item_path]:
            del self._taken[path]
        for key in [*identity_keys(items), *also]:
            self._taken[(*item_path, key)] = []
        self._earlier.pop(item_path, None)

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
        """Another item begins: it has no identity yet, no members, no name."""
        self._current.pop(item_path, None)
        self._members.pop(item_path, None)
        self._earlier.setdefault(item_path, []).extend(self._named.pop(item_path, []))
        self._numbers.pop(item_path, None)

    def took_text(self, path: tuple[str, ...], value: str) -> None:
        """The item at `path[:-1]` took the open string `value` (a JSON
        text): a name or an id the request may write its numbers beside."""
        text = json.loads(value)
        # An address (an e-mail, a link) stands beside a phone's digits.
        if not isinstance(text, str) or "@" in text or "://" in text:
            return
        if len(text) >= 3 and any(c.isalpha() for c in text):
            self._named.setdefault(path[:-1], []).append(text)

    def took_number(self, path: tuple[str, ...], value: str) -> None:
        """The item at `path[:-1]` took the number `value` for one key: the
        number its name's part writes for another key is another one."""
        self._numbers.setdefault(path[:-1], []).append(value)

    def segment_choices(
        self, path: tuple[str, ...], schema: dict[str, Any], segments: list[str]
    ) -> list[str]:
        """The numbers fitting a number's `schema` that the parts of the
        request naming the item's open strings write (guardrails/item_context.py,
        `request_segments`), in the order written; [] for none."""
        names = self._named.get(path[:-1], [])
        said = [s for s in segments if any(n in s for n in names)]
        if not said or len(said) == len(segments):
            return []
        out = list(dict.fromkeys(n for s in said for n in plain_numbers(s) if _fits(schema, n)))
        taken = self._numbers.get(path[:-1], [])
        return [n for n in out if n not in taken] or out

    def others_numbers(self, path: tuple[str, ...], segments: list[str]) -> set[str]:
        """The numbers written in the parts of the request that name an
        earlier item and not this one: those are the earlier items'."""
        names = self._named.get(path[:-1], [])
        earlier = [n for n in self._earlier.get(path[:-1], []) if n not in names]
        return {
            n
            for s in segments
            if any(e in s for e in earlier) and not any(n in s for n in names)
            for n in plain_numbers(s)
        }

    def took(self, path: tuple[str, ...], schema: dict[str, Any], value: str) -> None:
        """What an item's value (a JSON text) tells about the item: an enum
        member, an open string such as a name, a number."""
        if "enum" in schema:
            self.took_member(path, value)
        elif value.startswith('"'):
            self.took_text(path, value)
        elif schema.get("type") in ("integer", "number"):
            self.took_number(path, value)

    def numbers(
        self,
        path: tuple[str, ...],
        schema: dict[str, Any],
        listed: list[str] | None,
        grammars: PieceGrammars,
    ) -> list[str] | None:
        """What an item's number at `path` may be: the numbers the entry of
        the item's identity writes (`entry_choices`), else those the part of
        the request naming the item writes (`narrowed`), else `listed`."""
        by_entry = entry_choices(schema, self.current(path[:-1]), grammars.entry_numbers)
        if by_entry:
            return by_entry
        near = self.segment_choices(path, schema, grammars.item_segments)
        if not near or "enum" in schema:
            return listed
        return narrowed(listed, near, self.others_numbers(path, grammars.item_segments))

    def took_member(self, path: tuple[str, ...], member: str) -> None:
        """The item at `path[:-1]` took `member` (a JSON text) for the enum
        key `path[-1]`."""
        self._members.setdefault(path[:-1], []).append(context_key(path[-1], member))

    def beside(
        self, path: tuple[str, ...], listed: list[str], context: dict[str, dict[str, list[str]]]
    ) -> list[str]:
        """Those of `listed` for the enum key `path[-1]` that the request
        names beside a member the item took (guardrails/item_context.py);
        `listed` itself where it names none of them."""
        for taken in self._members.get(path[:-1], []):
            near = [m for m in context.get(taken, {}).get(path[-1], []) if m in listed]
            if near:
                return near
        return listed

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
    return [t for t in entries.get(key, []) if _fits(schema, t)] if isinstance(key, str) else []


def _fits(schema: dict[str, Any], text: str) -> bool:
    """A number's text fits a number's schema (its type and bounds)."""
    if schema.get("type") not in ("integer", "number"):
        return False
    if schema["type"] == "integer" and not text.isdigit():
        return False
    value = float(text)
    if "minimum" in schema and value < schema["minimum"]:
        return False
    return not ("maximum" in schema and value > schema["maximum"])


def narrowed(listed: list[str] | None, near: list[str], others: set[str]) -> list[str] | None:
    """`listed` less the numbers not `near` the item's name, where some are;
    else `near` itself where nothing is listed or all that is listed is
    written beside earlier items (`others`: "sixty-one kilos" is the
    sister's weight, not the brother's); else `listed` (a moisture reading
    said once for every load)."""
    both = [n for n in listed or [] if n in near]
    if both:
        return both
    if listed is None or all(n in others for n in listed):
        return near
    return listed
