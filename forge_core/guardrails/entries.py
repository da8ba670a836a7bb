"""Which entries of a listing the request describes.

A lookup lists several things, each with an id and some words: "Pepper
(collie, kennel no. K-310) and Bramble (pug, kennel no. K-311)", "Kiln
A: KL-1 idle; KL-2 firing; KL-3 firing", "Monday run: CR-11, CR-12. Tuesday
run: CR-20, CR-21." The request says which it means with some of those
words ("Bramble goes home", "the firing kilns", "the Tuesday crates").
A small model takes the first id it read, or all of them.

`described` reads the listing from its coarsest parts to its finest:
lines, sentences, then `;`-, `,`- and "and"-separated entries outside
parentheses (so "(pug, kennel no. K-311)" stays with "Bramble"). At
the first level where the entries holding the values share the request's
words unequally, the values whose entries share the most are the ones
meant; where every entry shares as much (or nothing), a finer level is
read; the values that level keeps are then told apart by the rest of
what the request says ("five kilos" and then "the organic one";
a quantity with a unit matches however it is written: "5 kg"). A word
the entry negates ("no crane hook") is not shared, and an
entry that says what the request leaves out ("apart from the milk") is
not meant; nor is one whose availability ("sold out") is not the one the
request asks for ("still free"; availability.py), nor one whose record
is over ("CANCELLED", "SUPERSEDED"; record_states.py); where words tell
none apart, the one that waits on the user ("awaiting the customer's
approval") is meant, or the one a comparative picks ("the bigger one",
"the cheapest"; comparatives.py). Before words, a clock
time the request states picks the entries that write it ("the half past
two tour": "14:30 tour T-2"). The request's sentences that name the list's kind ("send the Saturday
*tickets*") speak first: a request often names what it does not want
too ("I'm keeping Friday"). Read as a list's items (`ListReading`), the
entries are first held to the periods, clock and amount bounds the request
states and left without what it says no to (entry_filters.py).
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterable
from datetime import date

from forge_core.guardrails.availability import by_availability
from forge_core.guardrails.comparatives import compared
from forge_core.guardrails.entry_filters import (
    ListReading,
    in_named_periods,
    negation_free,
    not_on_refused_days,
    not_said_no_to,
    on_named_weekdays,
    with_room_for,
    within_amount_bounds,
    within_clock_bounds,
    within_labelled_ranges,
    without_bounds,
)
from forge_core.guardrails.quantities import measured_as, measures, party_size, quantities
from forge_core.guardrails.record_states import live_records, waiting_on_user
from forge_core.guardrails.text import stem, stems
from forge_core.guardrails.times import times_in

# A sentence ends at . ! ? before a capital or a digit, unless the word
# before the stop is a short abbreviation ("no. K-311", "Dr. Abara").
_SENTENCE_END = re.compile(
    r"(?<![\s(][A-Za-z])(?<![\s(][A-Za-z]{2})(?<![\s(][A-Za-z]{3})[.!?]\s+(?=[A-Z0-9])"
)
_NEGATORS = frozenset({"no", "not", "without", "non", "never"})
# A negation and the (up to two) words it covers: "no crane hook".
_NEGATED = re.compile(r"\b(?:no|not|without|non|never)\b((?:[ -]+[A-Za-z]+){1,2})", re.I)
_SEMICOLON = re.compile(r";")
_COMMA = re.compile(r",|\s+and\s+|\s+&\s+")
# Where a request's clause ends: "send the Saturday tickets - I'm keeping Friday".
_CLAUSE_END = re.compile(r"[.;!?]\s+|,\s+|\s+[-\u2013\u2014]\s+|\s+but\s+")
# A limit an entry states: "max 11 m", "up to 8 guests", "at most 20 kg".
_LIMIT = re.compile(
    r"\b(?:max(?:imum)?|up to|at most|no more than|limit)\.?:?\s*"
    r"(\d+(?:\.\d+)?)\s*-?\s*([A-Za-z]+)",
    re.IGNORECASE,
)
_LETTER_A = re.compile(r"(?<![.!?]\s)(?<!^)\bA\b")
# A code that mixes letters and digits: "A3-07", "x2", "B1-12".
_CODE = re.compile(r"\b(?=[\w-]*[A-Za-z])(?=[\w-]*\d)[A-Za-z0-9]+(?:[-_/.][A-Za-z0-9]+)*\b")
# The longest code ("r2", "C14") that describes an entry when a request
# writes it too.
SHORT_CODE = 4
# A list's heading: "Batch B-7, 6 samples: ...", "Dock House (S-2): ...".
_HEADING = re.compile(r"^(?:[^:()]|\([^()]*\)){0,80}:\s+")


def _outside_parentheses(text: str, separators: re.Pattern[str]) -> list[str]:
    """`text` split at `separators` that stand outside (), [] and {}."""
    depth, start, parts = 0, 0, []
    for match in re.finditer(r"[()\[\]{}]|" + separators.pattern, text):
        token = match.group(0)
        if token in "([{":
            depth += 1
        elif token in ")]}":
            depth = max(0, depth - 1)
        elif depth == 0:
            parts.append(text[start : match.start()])
            start = match.end()
    parts.append(text[start:])
    return [p for p in parts if p.strip()]


def levels(text: str) -> Iterable[list[str]]:
    """The text's parts at each level, coarsest first; each level splits
    the parts of the one before."""
    parts = [line for line in text.splitlines() if line.strip()]
    yield parts
    parts = [p for line in parts for p in _outside_parentheses(line, _SENTENCE_END)]
    yield parts
    for separators in (_SEMICOLON, _COMMA):
        # The finer entries of a list drop the list's heading.
        parts = [
            _HEADING.sub("", p, count=1)
            for part in parts
            for p in _outside_parentheses(part, separators)
        ]
        yield parts


_DAY_NAMES = {name[:3].lower(): name for name in calendar.day_name}
_DAY_ABBREVIATION = re.compile(r"\b(?:Mon|Tues?|Wed|Thu(?:rs?)?|Fri|Sat|Sun)\b\.?")


def _affirmed(entry: str, values: Iterable[str]) -> set[str]:
    """The stems an entry says (values and numbers aside) and the
    quantities it writes with units, less the words it negates ("no crane
    hook": neither crane nor hook)."""
    sizes = measures(entry)
    for value in values:
        entry = entry.replace(value, " ")
    # Codes of letters and digits ("bin A3-07") say nothing of the entry
    # as words; a letter on its own does ("lift B"). A short code is kept
    # whole, for a request that writes it ("the r2 one").
    codes = {c.lower() for c in _CODE.findall(entry) if len(c) <= SHORT_CODE}
    entry = _CODE.sub(" ", entry)
    # "Tue 2026-03-10" is Tuesday's.
    entry = _DAY_ABBREVIATION.sub(lambda m: _DAY_NAMES[m.group(0)[:3].lower()], entry)
    said = {w for w in stems(entry) if not w.isdigit()} - _NEGATORS
    said |= bare_numbers(entry)
    said |= codes
    return (said | _day_parts(entry) | sizes | labelled_numbers(entry)) - _negated_words(entry)


# A number of three digits or more standing alone: "the 740" for the entry
# "stoneware, 2031-03-04, 740"; not a date's, a time's, a price's decimals
# or an id's digits.
_BARE_NUMBER = re.compile(r"(?<![\w.:/,-])(\d{3,6})(?![\w:/-]|[.,]\d)")


def bare_numbers(text: str) -> set[str]:
    """The bare numbers `text` writes, as "#740" (no stem looks like it)."""
    return {f"#{m.group(1)}" for m in _BARE_NUMBER.finditer(text)}


# "size 9", "deck 3", "row no. 5": a number its word names.
_LABELLED_NUMBER = re.compile(r"\b([A-Za-z]{3,})\s+(?:no\.?\s*)?(\d{1,4})(?![\w:.,/-]\d|\w)")


def labelled_numbers(text: str) -> set[str]:
    """The numbers `text` writes right after a word that names them, as
    "size 9": what tells a size 9 entry from a size 10 one."""
    return {
        f"{stem(word)} {number}"
        for word, number in _LABELLED_NUMBER.findall(text)
        if stem(word) not in _FUNCTION and word.lower() not in _MONTH_WORDS
    }


_MONTH_WORDS = frozenset(m.lower() for m in (*calendar.month_name, *calendar.month_abbr) if m)


# The part of the day a window of time starts in ("18:00-22:00" is
# evening); a single time is an event's ("deployed 08:12"), no window.
_CLOCK_START = re.compile(
    r"(?<![\d:])([01]?\d|2[0-3]):[0-5]\d\s*[-\u2013]\s*(?:[01]?\d|2[0-3]):[0-5]\d"
)


def _day_parts(entry: str) -> set[str]:
    """The part of the day an entry's window of time starts in, so that
    "this evening" describes the window "18:00-22:00"."""
    m = _CLOCK_START.search(entry)
    if m is None:
        return set()
    hour = int(m.group(1))
    part = "morning" if hour < 12 else "afternoon" if hour < 17 else "evening"
    return {stem(part)}


def _negated_words(entry: str) -> set[str]:
    out: set[str] = set()
    for match in _NEGATED.finditer(entry):
        out.update(stems(match.group(1)))
    return out


# Words that describe no entry ("so", "the", "from").
_FUNCTION = frozenset(
    (
        *stems(
            "the an so is it its my me we our you your i ve of at for with by be are was "
            "this that from to and or as please can could would will just"
        ),
        # What contractions leave ("that's", "we'd", "owner's"): no word of an entry.
        *("s", "d", "t", "m", "ll", "re"),
    )
)


_ADDRESS = re.compile(r"\S+@\S+|\bhttps?://\S+")


def _request_words(requests: list[str], topic: tuple[str, ...]) -> list[set[str]]:
    """The request's words to match, strongest first: its clauses, then its
    sentences, that name the list's kind (`topic`), then all of it."""
    # An e-mail address or a web address names no entry ("rob.hale@mail.example"
    # is no word for Rob's ticket).
    requests = [_ADDRESS.sub(" ", text) for text in requests]
    # "a" is the article unless a capital A stands alone ("lift A").
    article = set() if any(_LETTER_A.search(text) for text in requests) else {"a"}
    every = {s for text in requests for s in stems(text) if not s.isdigit()} - article - _FUNCTION
    # "five kilos" describes the entry "5 kg"; "a size 9" the entry "size 9".
    every |= {
        m
        for text in requests
        for m in measures(without_bounds(text)) | labelled_numbers(text) | bare_numbers(text)
    }
    # "the r2 one" describes the entry "(r2, 2031-05-02)".
    every |= {c.lower() for text in requests for c in _CODE.findall(text) if len(c) <= SHORT_CODE}
    out: list[set[str]] = []
    if topic:
        for separators in (_CLAUSE_END, _SENTENCE_END):
            naming = {
                s
                for text in requests
                for part in _outside_parentheses(text, separators)
                if topic[-1] in stems(part)
                for s in stems(part)
                if not s.isdigit()
            }
            naming -= article | _FUNCTION
            naming |= {
                m
                for text in requests
                for part in _outside_parentheses(text, separators)
                if topic[-1] in stems(part)
                for m in measures(without_bounds(part))
            }
            if naming and naming not in out:
                out.append(naming)
    return [*out, every] if every not in out else out


def _within_limits(values: list[str], texts: list[str], requests: list[str]) -> list[str]:
    """`values` less those whose entry states a limit the request exceeds
    ("bay B-2 (max 6 m)" for "our 7-metre van"); all of them when
    every one would go."""
    exceeded: set[str] = set()
    for text in texts:
        entries = list(levels(text))[-1]
        for value in values:
            for entry in (e for e in entries if value in e):
                for number, unit in _LIMIT.findall(entry.replace(value, " ")):
                    families, counted = measured_as(unit)
                    if not families and not counted:
                        continue
                    asked = [
                        q
                        for request in requests
                        for q in quantities(request, families, counted, integer=False)
                    ]
                    if any(q > float(number) for q in asked):
                        exceeded.add(value)
    kept = [v for v in values if v not in exceeded]
    return kept or values


# What a request leaves out: "apart from the milk", "except the blue one".
_EXCLUDING = re.compile(
    r"\b(?:(?:apart from|except(?: for)?|other than|but not|besides|excluding|leave out|"
    r"not including)\s+(?:the\s+|my\s+|our\s+|that\s+)?"
    # "leave the rent as it is", "keep my gym": what stays as it is.
    r"|(?:leave|keep|(?:don't|do not) touch)\s+(?:the|my|our)\s+"
    # "Oak only, no Pine": a name said no to.
    r"|(?-i:\b(?:[Nn]o|[Nn]ot)\s+(?=[A-Z]))"
    # "Not the jigsaw though": a thing said no to, at a sentence's start.
    r"|(?:^|(?<=[.!?;]\s)|(?<=\s-\s))(?:but\s+)?not\s+(?:the|my|our|that|those)\s+)"
    r"((?:[A-Za-z][\w-]*\s*){1,3})",
    re.IGNORECASE,
)
_FILLER = frozenset(stems("just one ones that this it them one please and or out alone as though"))
# What says the thing named before it stays: "the small kiln in June stays
# as it is", "the raku one is mine, so leave that one"; not "could Rufus
# stay with you" nor "Short Stay is fine".
_KEPT = re.compile(
    r"\b(?:(?:stays?|remains?|(?:is|are) fine) (?:as (?:it is|they are|is)|put|unchanged"
    r"|the same)"
    r"|leave (?:that|those|it|them)(?! (?:one |ones )?(?:out|off)\b)(?: one| ones)?(?: alone| be)?"
    r"|keep (?:that|those|it|them)(?: one| ones)?"
    # "the Friday lesson still stands", "Monday's is still on", "Jo
    # and I are still coming".
    r"|still (?:stands?|on|going ahead|happening|coming)"
    r"|(?:is|are|am) still (?:on|going ahead|happening|coming))\b",
    re.IGNORECASE,
)


def _kept_aside(requests: list[str]) -> set[str]:
    """The stems of what a clause says stays as it is, said right before
    the words that say so ("the raku one is mine, so leave that one": the
    clause before a bare "so"), and said nowhere else in the request (the
    large kiln to shorten and the small kiln to keep are both "kilns")."""
    kept: set[str] = set()
    for i, text in enumerate(requests):
        for m in _KEPT.finditer(text):
            before = text[: m.start()]
            starts = [0, *(b.end() for b in _CLAUSE_END.finditer(before))]
            start = starts.pop()
            while starts and not _content(before[start:]):
                start = starts.pop()
            rest = [*requests[:i], *requests[i + 1 :], text[:start], text[m.end() :]]
            kept |= _content(before[start:]) - {w for r in rest for w in stems(r)}
    return kept


def _content(text: str) -> set[str]:
    return {w for w in stems(text) if len(w) > 2 and not w.isdigit()} - _FUNCTION - _FILLER


# When the user is not there: "I'm out all afternoon", "busy in the morning".
_AWAY = re.compile(
    r"\b(?:out|away|busy|at work|not (?:in|home|around|free|available))\s+"
    r"(?:all|the whole|for the|in the|during the)?\s*(morning|afternoon|evening)\b",
    re.IGNORECASE,
)


def _excluded_words(requests: list[str]) -> set[str]:
    """The stems of what the request leaves out, and the parts of the day
    it says the user is away."""
    left_out = {
        w
        for text in requests
        for m in _EXCLUDING.finditer(text)
        for w in stems(m.group(1))
        if w not in _FILLER and len(w) > 2
    }
    return left_out | {stem(m.group(1)) for text in requests for m in _AWAY.finditer(text)}


def _not_excluded(values: list[str], texts: list[str], excluded: set[str]) -> list[str]:
    """`values` less those whose finest entry says what the request leaves
    out ("LN-2 semi-skimmed milk" for "apart from the milk"); all of them
    when every one would go."""
    if not excluded:
        return values
    # A value's finest entry, and its own ("KT-7: Jo Hill, blue kayak", where
    # the finest parts lose the id as a heading).
    entries = [e for text in texts for e in list(levels(text))[-1]]
    entries += _own_entries(values, texts).values()
    gone = {
        v for entry in entries for v in values if v in entry and _affirmed(entry, values) & excluded
    }
    return [v for v in values if v not in gone] or values


def _own_entries(values: list[str], texts: list[str]) -> dict[str, str]:
    """Each value's own entry: the coarsest part of a text that holds it
    and no other value ("KY-2: kayak, size M, booked")."""
    out: dict[str, str] = {}
    for text in texts:
        for parts in levels(text):
            for part in parts:
                held = [v for v in values if v in part]
                if len(held) == 1 and held[0] not in out:
                    out[held[0]] = part
    return out


def _labels(said: set[str]) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for word in said:
        label, _, number = word.partition(" ")
        if number.isdigit():
            out.setdefault(label, set()).add(word)
    return out


def _shared(entry: str, said: set[str], wanted: set[str]) -> set[str]:
    """The request's words an entry says, less a label whose number
    differs ("Level 3" says nothing of "the Level 2 class"; "Beginner to
    Level 4" is a range that may hold Level 2)."""
    asked = _labels(wanted)
    differing = {
        label
        for label, numbered in _labels(said).items()
        if label in asked
        and not numbered & asked[label]
        and not re.search(rf"(?:\d|\b[A-Z]\w*)\s+to\s+(?i:{re.escape(label)})", entry)
    }
    return (said & wanted) - differing


def telling_words(values: list[str], texts: list[str]) -> set[str]:
    """The stems some values' own entries say and others' not: what can
    tell them apart."""
    own = _own_entries(values, texts)
    said = [_affirmed(own[v], values) for v in values if v in own]
    return {w for words in said for w in words if sum(w in other for other in said) < len(values)}


def _at_stated_times(values: list[str], texts: list[str], requests: list[str]) -> list[str]:
    """`values` whose own entry writes a clock time the request states
    ("the half past two tour" for "14:30 tour T-2"), where some
    entries do and others not; all of them otherwise. A time the request
    writes without am/pm matches either half of the day."""
    wanted = {(h % 12, m) for text in requests for h, m in times_in(text)}
    if not wanted or len(values) < 2:
        return values
    for text in texts:
        for parts in levels(text):
            own = {
                v: [p for p in parts if v in p and sum(u in p for u in values) == 1] for v in values
            }
            if sum(bool(entries) for entries in own.values()) < 2:
                continue
            at = [
                v
                for v, entries in own.items()
                if any({(h % 12, m) for h, m in times_in(e)} & wanted for e in entries)
            ]
            if at and len(at) < len(values):
                return at
    return values


def _wanting(text: str) -> str:
    """`text` less its clauses that keep or leave out something ("the
    kayak in July stays as it is") and the words its negations cover: what
    is left says what the list is."""
    return " ".join(
        negation_free(clause)
        for clause in _outside_parentheses(text, _CLAUSE_END)
        if not (_KEPT.search(clause) or _EXCLUDING.search(clause))
    )


def _filtered(
    values: list[str], texts: list[str], requests: list[str], reading: ListReading
) -> list[str]:
    """`values` whose entries fit the request's period, bounds and
    refusals (entry_filters.py)."""
    own = _own_entries(values, texts)
    wanting = [_wanting(text) for text in requests]
    values = in_named_periods(values, own, wanting, reading.today)
    values = on_named_weekdays(values, own, wanting)
    values = within_clock_bounds(values, own, wanting)
    values = within_labelled_ranges(values, own, wanting)
    values = within_amount_bounds(values, own, requests)
    values = not_on_refused_days(values, own, requests)
    values = with_room_for(values, own, party_size(requests))
    if reading.refusals:
        values = not_said_no_to(values, own, requests, lambda entry: _affirmed(entry, values))
    return values


def described(
    values: list[str],
    texts: list[str],
    requests: list[str],
    ignore: set[str],
    topic: tuple[str, ...] = (),
    whole_list: ListReading | None = None,
    today: date | None = None,
) -> list[str]:
    """The `values` whose listing entries the request describes best (see
    module doc), in their order; all of them when nothing tells them apart.
    `ignore`: stems that describe nothing (the tools' and parameters' own
    names). `whole_list`: how a list of several of them is read, when they
    are a list's items (entry_filters.py)."""
    if len(values) < 2:
        return values
    values = _within_limits(values, texts, requests)
    values = _at_stated_times(values, texts, requests)
    if whole_list is not None:
        values = _filtered(values, texts, requests, whole_list)
    elif today is not None:
        # "this Tuesday's lesson": the entry dated that day.
        wanting = [_wanting(text) for text in requests]
        values = in_named_periods(values, _own_entries(values, texts), wanting, today, days=True)
    excluded = (_excluded_words(requests) | _kept_aside(requests)) - ignore
    values = _not_excluded(values, texts, excluded)
    values = by_availability(values, _own_entries(values, texts), requests)
    values = live_records(values, _own_entries(values, texts), requests)
    for wanted in _request_words(requests, topic):
        wanted = wanted - ignore - excluded
        for text in texts:
            holding = [v for v in values if v in text]
            if len(holding) < 2:
                continue
            for parts in levels(text):
                shared = {
                    v: max(
                        (len(_shared(p, _affirmed(p, values), wanted)) for p in parts if v in p),
                        default=0,
                    )
                    for v in holding
                }
                top = max(shared.values())
                best = [v for v in holding if shared[v] == top]
                if top > 0 and len(best) < len(holding):
                    # What else the request says may tell those apart too
                    # ("five kilos" and then "the organic one").
                    return described(best, texts, requests, ignore, topic, whole_list, today)
    if whole_list is None:
        values = waiting_on_user(values, _own_entries(values, texts))
        values = compared(values, _own_entries(values, texts), requests)
    return values
