"""Entries of a listing by the availability the request asks for: "every
kayak you have in size M that's free" leaves out the one "booked until
2031-04-02"; "each filter you've run out of" keeps only the ones "out of
stock".

Listings state whether each entry can be had (available, in stock, free;
out of stock, booked, on hire, sold out), and requests say which they
want, in words the entries do not share ("free" for "available", "run out
of" for "out of stock"), so `entries.described` cannot match them by
their words. A negation a few words before the state flips it ("nothing
that's in stock"), not one that negates something else ("I don't mind
which one, as long as it's free"). Where the request asks for one state only, the values
whose entry states the other are left out; all of them where that would
leave none.
"""

from __future__ import annotations

import re

from forge_core.guardrails.text import clauses

AVAILABLE, GONE = "available", "gone"

# What a request asks for. "Free" only as a state, not "feel free",
# "free of charge", "gluten-free" nor "free delivery".
_WANTS = {
    AVAILABLE: re.compile(
        r"(?<![\w-])(?:(?<!feel )free(?! of\b| delivery| shipping| parking| trial)"
        r"|available|in stock|vacant|unbooked|not (?:booked|taken|reserved|on hire)"
        r"|(?:nobody|no one|no-one)(?:'s| has) (?:taken|booked|claimed)|untaken|unfilled)\b",
        re.IGNORECASE,
    ),
    GONE: re.compile(
        r"\b(?:out of stock|run out|ran out|sold out|unavailable|on back-?order|not in stock"
        r"|currently out|out on hire|(?:fully )?booked up)\b",
        re.IGNORECASE,
    ),
}
# What an entry states; the first that matches.
_STATES = (
    (
        GONE,
        re.compile(
            r"\b(?:out of stock|sold out|unavailable|not available|(?:fully )?booked|reserved"
            r"|taken|filled|on loan|on hire|in use|occupied|waitlist|back-?order(?:ed)?)\b"
            r"|\bOUT\b",
            re.IGNORECASE,
        ),
    ),
    (AVAILABLE, re.compile(r"\b(?:available|in stock|free|vacant|unoccupied)\b", re.I)),
)
_NEGATION = re.compile(r"\b(?:no|not|nothing|none|never|without|don't|do not)\b", re.I)
# Negations that negate no state: "I don't mind which one that's free".
_NO_NEGATION = re.compile(
    r"\b(?:(?:don't|do not|doesn't|does not|wouldn't) (?:mind|care)|no matter|not sure"
    r"|never mind|not fussy)\b",
    re.IGNORECASE,
)
# How many words before a state a negation reaches ("nothing that's in
# stock", "none of them booked").
_NEGATION_REACH = 6


def _negated(before: str) -> bool:
    """Whether the words right before a state negate it."""
    near = " ".join(_NO_NEGATION.sub(" ", before).split()[-_NEGATION_REACH:])
    return bool(_NEGATION.search(near))


def wanted_state(requests: list[str]) -> str | None:
    """The one availability the requests ask for, or None."""
    wanted = set()
    for text in requests:
        for clause in clauses(text):
            for state, pattern in _WANTS.items():
                for m in pattern.finditer(clause):
                    negated = _negated(clause[: m.start()])
                    if negated and state == AVAILABLE and m.group(0).lower().startswith("not "):
                        negated = False  # "not booked" is the phrase itself
                    wanted.add((GONE if state == AVAILABLE else AVAILABLE) if negated else state)
    return wanted.pop() if len(wanted) == 1 else None


def entry_state(entry: str) -> str | None:
    for state, pattern in _STATES:
        if pattern.search(entry):
            return state
    return None


def by_availability(values: list[str], entries: dict[str, str], requests: list[str]) -> list[str]:
    """`values` less those whose entry (`entries`: value -> its own entry)
    states the availability the request does not ask for; all of them
    where none or every one would go."""
    wanted = wanted_state(requests)
    if wanted is None:
        return values
    states = {v: entry_state(entries.get(v, "")) for v in values}
    if wanted == GONE:
        kept = [v for v in values if states[v] == GONE]
    else:
        kept = [v for v in values if states[v] != GONE]
    return kept if 0 < len(kept) < len(values) else values
