"""The numbers each listed thing's entry writes, for the items of an array.

A booking of several listed things ("PEN-3a: 140 x hens", "PEN-3b: 26 x
ducks") takes each item's counts from that thing's own entry: a small
model writing the items one by one put 1, 2, 3 ... or 100 beside each id.
For every id-like candidate a result writes at the head of its line (the
id it starts with), the plain numbers that line writes after it (not a
date's, an id's or a clock time's parts) are that id's entry numbers; the
call's writer (backends/llama/pieces.py) offers them to an item's number
once the item's identity is chosen.

Only where the request writes no number of its own: then the user's
numbers ("40 tulips and 15 irises") are the items' counts, not the
listing's (a pot size, a price).
"""

from __future__ import annotations

import re
from functools import lru_cache

from forge_core.guardrails.grounding import extract_candidates

# A number on its own: not a part of a date, id, time, range or grouped number.
_PLAIN_NUMBER = re.compile(r"(?<![\w.,:/-])\d+(?:\.\d+)?(?![\w:/-]|[.,]\d)")
# A year beside a month ("May-June 2027"), which counts nothing.
_YEAR = re.compile(r"^(?:1[89]|20)\d\d$")
_REQUEST_NUMBER = re.compile(r"(?<![\w.,:/-])\d+(?:[.,]\d+)?(?![\w:/-])")


def entry_numbers(results: list[str], requests: list[str]) -> dict[str, list[str]]:
    """id -> the numbers its entry writes (as JSON texts), for ids at the
    head of their lines; {} where the request writes a number itself."""
    if any(_REQUEST_NUMBER.search(text) for text in requests):
        return {}
    out: dict[str, list[str]] = {}
    for text in results:
        for key, numbers in _entries_of(text):
            out.setdefault(key, list(numbers))
    return out


@lru_cache(maxsize=512)
def _entries_of(text: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(id, its numbers) for each line of one result that starts with an
    id: read once per result, not once per turn."""
    out = []
    for line in text.splitlines():
        # The id the line starts with (after a bullet); bare numbers are
        # counts here, not ids.
        opening = line.lstrip(" -*\u2022\t")
        ids = [
            c
            for c in extract_candidates([line])
            if opening.startswith(c) and not c.replace(".", "").isdigit()
        ]
        if not ids:
            continue
        rest = line[line.find(ids[0]) + len(ids[0]) :]
        numbers = plain_numbers(rest)
        if numbers:
            out.append((ids[0], tuple(dict.fromkeys(numbers))))
    return tuple(out)


def plain_numbers(text: str) -> list[str]:
    """The numbers `text` writes on their own (not a date's, an id's or a
    clock time's parts, nor a year)."""
    return [n for n in _PLAIN_NUMBER.findall(text) if not _YEAR.match(n)]
