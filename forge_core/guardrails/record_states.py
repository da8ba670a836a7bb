"""Records that are over: a lookup lists the user's bookings, jobs or
quotes, and some of them are done with ("COMPLETED", "CANCELLED
2031-02-10", "membership CLOSED 2029-09-30", "SUPERSEDED 2031-04-06").

A request to act on "my booking" or "the quote" means the one still
running: a closed record cannot be moved, approved or renewed, and the
old record a result names beside the user's current one is the
distractor. A small model takes the first id it read, often the oldest
record. So, of several values, those whose own entry says the record
ended are left out when others remain, unless the request asks about
ended records itself: it says the state ("re-open the cancelled one",
"the course I completed") or points to the past ("my last visit", "the
previous quote"). A negated state ("not yet completed") ends nothing.
"""

from __future__ import annotations

import re

# Past participles that say a record is over. Only these forms: "replaces
# KB-1" or "pick up from the depot" end nothing.
_ENDED_FORMS = frozenset(
    (
        "cancelled canceled completed closed terminated attended collected superseded "
        "expired replaced withdrawn archived lapsed voided refunded deleted retired "
        "discontinued ended finished played fulfilled redeemed inactive"
    ).split()
)
_ENDED = re.compile(rf"\b(?:{'|'.join(sorted(_ENDED_FORMS))}|no longer)\b", re.I)
# A negation right before the state: "not yet completed", "never collected".
_NEGATED = re.compile(r"\b(?:not|never|yet to be|to be)\s+(?:yet\s+)?$", re.I)
# A request that points to a past record: "my last visit", "the previous
# quote", "the old booking"; not "like you did last time".
_PAST_RECORD = re.compile(
    r"\b(?:last|previous|past|old|older|earlier|former)\s+(?!(?:time|times|week|weeks|month"
    r"|months|year|years|night|day|days|weekend|summer|winter|spring|autumn|season|minute"
    r"|minutes|hour|hours|few|couple)\b)[A-Za-z]+",
    re.IGNORECASE,
)


def _form(word: str) -> str:
    return word.lower().replace("canceled", "cancelled")


def ended_states(entry: str) -> set[str]:
    """The words (lower-cased) an entry says ended its record with, where
    no negation stands right before them."""
    return {
        _form(m.group(0)) for m in _ENDED.finditer(entry) if not _NEGATED.search(entry[: m.start()])
    }


def live_records(values: list[str], entries: dict[str, str], requests: list[str]) -> list[str]:
    """`values` less those whose own entry (`entries`) says the record
    ended, where the request neither writes that state (the participle
    itself: "cancel my booking" asks for no cancelled one) nor points to
    the past; all of them where every one would go."""
    if len(values) < 2:
        return values
    if any(_PAST_RECORD.search(text) for text in requests):
        return values
    written = {_form(w) for text in requests for w in re.findall(r"[A-Za-z]+", text)}
    ended = {v for v in values if v in entries and ended_states(entries[v]) - written}
    kept = [v for v in values if v not in ended]
    return kept or values


# An entry that waits on the user: "ESTIMATED, awaiting the client's
# sign-off", "pending your confirmation", "needs your signature".
_WAITING = re.compile(
    r"\b(?:awaiting|pending|waiting (?:for|on)|needs?|requires?)\s+(?:the\s+)?"
    r"(?:your|customer'?s?|client'?s?|owner'?s?|approval|confirmation|payment|signature"
    r"|sign-off|go-ahead|decision|acceptance|reply|response)\b",
    re.IGNORECASE,
)


def waiting_on_user(values: list[str], entries: dict[str, str]) -> list[str]:
    """Of values the request's words do not tell apart, those whose own
    entry waits on the user, where some do and others not: a customer who
    writes in ("the new estimate is fine, carry on") is about the record
    that waits for them, not the one that is ready or done."""
    waiting = [v for v in values if v in entries and _WAITING.search(entries[v])]
    return waiting if 0 < len(waiting) < len(values) else values
