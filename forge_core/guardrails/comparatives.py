"""Entries a request picks by comparing them: "the bigger of your
canoes", "the cheapest mouse", "the shorter walk", "the earliest
slot".

A listing writes each entry's size, price, length or time ("CN-2:
open canoe, 2 seats, 40.00 GBP"; "river_path: 6 km"), and the request
names none of them: it compares. No word of the request is in the entry it
means, so `entries.described` leaves them tied and a small model takes the
first. Here a comparative or superlative the request writes (only those
forms: "a long weekend" or "a small group" compares nothing) picks, of the
tied entries that each write the quantity it compares, the one with the
least or the most of it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from forge_core.guardrails.quantities import in_digits, measures
from forge_core.guardrails.times import times_in

_MEASURE = re.compile(r"^(-?[\d.]+)([a-z_]+)$")
# Each family's size in one unit of its kind, where several units measure it.
_LENGTH = {"km": 1000.0, "mile": 1609.0, "meter": 1.0, "foot": 0.3048}
_DURATION = {"hour": 60.0, "minute": 1.0, "day": 1440.0}
_WEIGHT = {"kg": 1.0, "gram": 0.001}
_MONEY = frozenset("eur usd gbp jpy chf".split())
_SIZE = {"litre": 1.0, "square_metre": 1.0, "square_foot": 0.0929}
# "6 seats", "a 7-seater", "sleeps 4", "up to 8 people".
_CAPACITY = re.compile(
    r"\b(\d{1,4})[\s-]*(?:seats?|seater|berths?|places|people|persons|guests|riders|players)\b"
    r"|\bsleeps\s+(\d{1,3})\b",
    re.IGNORECASE,
)


def _summed(entry: str, units: dict[str, float]) -> float | None:
    """The entry's quantity in those units, its parts added ("1 h 30 min")."""
    total, found = 0.0, False
    for token in measures(entry):
        m = _MEASURE.match(token)
        if m and m.group(2) in units:
            total += float(m.group(1)) * units[m.group(2)]
            found = True
    return total if found else None


def _money(entry: str) -> float | None:
    amounts = [
        float(m.group(1))
        for t in measures(entry)
        if (m := _MEASURE.match(t)) and m.group(2) in _MONEY
    ]
    return min(amounts) if amounts else None


def _capacity(entry: str) -> float | None:
    found = [int(a or b) for a, b in _CAPACITY.findall(in_digits(entry))]
    return float(max(found)) if found else _summed(entry, _SIZE)


def _clock(entry: str) -> float | None:
    found = times_in(entry)
    return float(found[0][0] * 60 + found[0][1]) if found else None


def _length(entry: str) -> float | None:
    return _summed(entry, _LENGTH)


def _duration(entry: str) -> float | None:
    return _summed(entry, _DURATION)


def _weight(entry: str) -> float | None:
    return _summed(entry, _WEIGHT)


Reading = Callable[[str], float | None]
# (the words, what they compare, whether the least is meant); the first
# reading that every tied entry writes decides.
_COMPARISONS: tuple[tuple[re.Pattern[str], tuple[Reading, ...], bool], ...] = (
    (re.compile(r"\bshort(?:er|est)\b", re.I), (_length, _duration), True),
    (re.compile(r"\blong(?:er|est)\b", re.I), (_length, _duration), False),
    (re.compile(r"\b(?:quick(?:er|est)|fast(?:er|est))\b", re.I), (_duration,), True),
    (
        re.compile(r"\b(?:cheap(?:er|est)|least expensive|less expensive|lowest price)\b", re.I),
        (_money,),
        True,
    ),
    (
        re.compile(r"\b(?:dear(?:er|est)|pricier|priciest|most expensive|more expensive)\b", re.I),
        (_money,),
        False,
    ),
    (re.compile(r"\b(?:bigg(?:er|est)|larg(?:er|est))\b", re.I), (_capacity,), False),
    (re.compile(r"\bsmall(?:er|est)\b", re.I), (_capacity,), True),
    (re.compile(r"\bheav(?:ier|iest)\b", re.I), (_weight,), False),
    (re.compile(r"\blight(?:er|est)\b", re.I), (_weight,), True),
    (re.compile(r"\bearliest\b", re.I), (_clock,), True),
)


def compared(values: list[str], entries: dict[str, str], requests: list[str]) -> list[str]:
    """Of tied `values`, the one whose own entry (`entries`) has the least
    or the most of what the request's comparative compares; all of them
    where the request compares nothing, or not every entry writes it."""
    if len(values) < 2 or not all(v in entries for v in values):
        return values
    text = " ".join(requests)
    for pattern, readings, least in _COMPARISONS:
        if not pattern.search(text):
            continue
        for read in readings:
            sizes = {v: read(entries[v]) for v in values}
            known = {v: s for v, s in sizes.items() if s is not None}
            if len(known) < len(values) or len(set(known.values())) < 2:
                continue
            best = (min if least else max)(known.values())
            return [v for v in values if known[v] == best]
    return values
