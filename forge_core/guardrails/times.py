"""Clock times the user wrote, in the form the parameter takes: "a quarter
past eight in the evening" is `20:15`, "at 6.15pm" is `18:15`, "noon" `12:00`.

A small model fills a `time` with whatever it read last (the date, a
result's opening hours). A string parameter that takes a time of day
(`format: time`, a description that says HH:MM or 24-hour, a pattern
clock times fit, a name that ends in `time` or says `24h`) takes the times the request writes (the
results' when it writes none): digits with a colon or a dot, with am/pm or
a part of the day ("in the evening"), "half past", "half four" (4:30),
"quarter past/to", "o'clock",
numbers in words read with text2num. Written as HH:MM, or HH:MM:SS where
the schema's format or pattern wants seconds. Of a range ("from 08:00 to
18:00", "9am-5pm"), a parameter named for its start (`start`, `opens_at`)
takes the first end and one named for its end (`end`, `until`) the second.
"At ten" and "half past four" with no part of the day are read in
business hours: 8-12 as written, 1-6 in the afternoon, and 1-11 in the
evening where the request speaks of one ("dinner at 8"); "at 7" alone is
left to the model, "half past seven" taken as said. Where
the request moves something ("move my 3pm fitting to Friday at ten"), a
tool that changes something (not read-only) takes the times after the
"to", the new ones.
"""

from __future__ import annotations

import functools
import re
from itertools import pairwise
from typing import Any

from forge_core.guardrails import Preferred, TurnFacts, decide, first_found, parameters, undecided
from forge_core.guardrails.quantities import in_digits
from forge_core.guardrails.text import stems, words
from forge_core.schema_rules import text_fits

_LATER = r"(?P<later>\s*(?:pm|p\.m\.|in the (?:evening|afternoon)|at night|tonight))"
_EARLIER = r"(?P<earlier>\s*(?:am|a\.m\.|in the morning))"
_PART = rf"(?:{_LATER}|{_EARLIER})?"
# "20:15", "8:15 pm"; with a dot only beside a part of the day ("6.15pm"):
# "12.50" alone is a price.
# A sentence's full stop may follow ("at 7:20."); another number's digits may not.
_CLOCK = re.compile(rf"(?<![\d.:])(?P<h>\d{{1,2}}):(?P<m>[0-5]\d)(?!\d|:\d|\.\d){_PART}", re.I)
_DOTTED = re.compile(
    rf"(?<![\d.:])(?P<h>\d{{1,2}})\.(?P<m>[0-5]\d)(?![\d.:])(?:{_LATER}|{_EARLIER})", re.I
)
_HOUR = re.compile(
    rf"(?<![\d.:])(?P<h>\d{{1,2}})(?:\s*o'?\s?clock)?(?=\s*(?:am|pm|a\.m\.|p\.m\.|o'?\s?clock)){_PART}",
    re.I,
)
_PAST = re.compile(rf"\b(?P<q>half|quarter|\d{{1,2}}) past (?P<h>\d{{1,2}}){_PART}", re.I)
# "ten to five"; "from 9 to 5" is a range (_HOUR_RANGE), "from quarter to
# five" is not.
# Not the days of a span of dates ("2027-03-10 to 2027-03-12").
_TO = re.compile(
    rf"\b(?:a )?(?P<q>quarter|(?<!from )(?<!between )(?<![-/.:])\d{{1,2}}) to "
    rf"(?P<h>\d{{1,2}})(?![-/.:]?\d){_PART}",
    re.I,
)
# "half four" (British: 4:30), read as "half past four"; not "half 2 kilos",
# nor "half past"/"half an hour".
_HALF_HOUR = re.compile(
    rf"\bhalf (?P<h>\d{{1,2}})(?![\d.:])(?:{_LATER}|{_EARLIER}|(?=\s*(?:$|[.,;!?)]|on\b|"
    r"tomorrow\b|today\b|tonight\b|sharp\b|please\b|if\b|or\b|and\b|for\b|\w+day\b)))",
    re.I,
)
_NAMED = {"noon": (12, 0), "midday": (12, 0), "midnight": (0, 0)}
# "at 10" as a time: followed by the end of a clause or a word that
# belongs to a day, not by a noun ("at 10 Main Street", "at 5 stars") nor
# by its decimals ("it read at 12.6 bar").
_AT_HOUR = re.compile(
    r"\bat (?P<h>\d{1,2})(?=\s*(?:$|[,;!?)]|\.(?!\d)|on\b|tomorrow\b|today\b|tonight\b|sharp\b|"
    r"please\b|instead\b|if\b|or\b|and\b))",
    re.I,
)
# "from 9 till 12", "between 10 and 2": bare hours as a range's ends, read
# in business hours like "at ten"; not "from 2 to 4 guests".
_HOUR_RANGE = re.compile(
    r"\b(?:from|between) (?P<h>\d{1,2})(?P<join>\s*(?:to|till|until|and|-|\u2013)\s*)"
    r"(?P<h2>\d{1,2})(?P<half>\s*(?:am|pm|a\.m\.|p\.m\.))?"
    r"(?=\s*(?:$|[,;!?)]|\.(?!\d)|on\b|tomorrow\b|today\b|tonight\b|please\b|if\b|and\b|or\b"
    r"|\w+day\b))",
    re.I,
)
# "at seven in the morning", "by 6 in the evening": an hour and its part of
# the day, after a word that places it in time (not "a table for 6 in the
# evening").
_AT_PART_OF_DAY = re.compile(
    r"\b(?:at|around|about|by|from|until|till|before|after)\s+(?P<h>\d{1,2})"
    rf"(?:\s*o'?\s?clock)?(?:{_LATER}|{_EARLIER})",
    re.I,
)
_EVENING = re.compile(r"\b(?:tonight|evening|dinner|supper|night)\b", re.I)
# "move/change/reschedule ... to": what follows the "to" is the new value.
_CHANGE_TO = re.compile(
    r"\b(?:move|moving|change|changing|reschedule|rescheduling|shift|push|switch|bring)\b"
    r"[^.?!]*?\bto\b",
    re.I,
)


def takes_time(name: str, schema: dict[str, Any]) -> bool:
    if schema.get("type") != "string" or "enum" in schema:
        return False
    if schema.get("format") == "time":
        return True
    described = str(schema.get("description", "")).upper()
    if "HH:MM" in described or "24-HOUR" in described or "24H" in described:
        return "YYYY" not in described
    if "pattern" in schema and text_fits(schema, "09:30") and text_fits(schema, "17:45"):
        # `ready_by` with a pattern of clock times.
        return not text_fits(schema, "0930")
    # `time`, `pickup_time`, `time_24h`; not `time_zone` or `timeout`.
    said = [w for w in words(name) if not w.isdigit() and w != "h"]
    return said[-1:] == ["time"]


def time_in_tool_text(name: str, description: str) -> bool:
    """The tool's own description says the parameter is a clock time:
    "arrival_from is HH:MM", "start_at (HH:MM, 24-hour)"."""
    if said := re.search(
        rf"\b{re.escape(name)}\b[^.;]{{0,24}}?\b(?:HH:MM|24-hour|24h)\b", description, re.I
    ):
        return "YYYY" not in said.group(0).upper()
    return False


def _hour(hour: int, match: re.Match[str]) -> int:
    if match.group("later") and hour < 12:
        return hour + 12
    if match.group("earlier") and hour == 12:
        return 0
    return hour


def times_in(text: str) -> list[tuple[int, int]]:
    """The clock times `text` writes, as (hour, minute)."""
    return list(dict.fromkeys(when for _, _, when in _spans(in_digits(text))))


# What joins the two ends of a range: "from 08:00 to 18:00", "9am-5pm".
_RANGE_JOIN = re.compile(r"\s*(?:to|until|till|through|and|-|\u2013)\s*", re.IGNORECASE)
_STARTS = frozenset(stems("start begin from open since"))
_ENDS = frozenset(stems("end finish until till to close stop"))


def range_ends(text: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """The first and the second ends of the time ranges `text` writes."""
    text = in_digits(text)
    spans = _spans(text)
    firsts, seconds = [], []
    for (_, end, first), (start, _, second) in pairwise(spans):
        if _RANGE_JOIN.fullmatch(text[end:start]):
            firsts.append(first)
            seconds.append(second)
    return firsts, seconds


def _spans(text: str) -> list[tuple[int, int, tuple[int, int]]]:
    """Each clock time `text` writes: (start, end, (hour, minute))."""
    found: list[tuple[int, int, tuple[int, int]]] = []
    for m in (*_CLOCK.finditer(text), *_DOTTED.finditer(text)):
        found.append((m.start(), m.end(), (_hour(int(m.group("h")), m), int(m.group("m")))))
    for m in _HOUR.finditer(text):
        found.append((m.start(), m.end(), (_hour(int(m.group("h")), m), 0)))
    evening = bool(_EVENING.search(text))
    for m in _PAST.finditer(text):
        q = m.group("q").lower()
        minutes = 30 if q == "half" else 15 if q == "quarter" else int(q)
        found.append((m.start(), m.end(), (_spoken_hour(int(m.group("h")), m, evening), minutes)))
    for m in _HALF_HOUR.finditer(text):
        found.append((m.start(), m.end(), (_spoken_hour(int(m.group("h")), m, evening), 30)))
    for m in _TO.finditer(text):
        q = m.group("q").lower()
        minutes = 15 if q == "quarter" else int(q)
        hour = (_spoken_hour(int(m.group("h")), m, evening) - 1) % 24
        found.append((m.start(), m.end(), (hour, 60 - minutes)))
    for m in _AT_PART_OF_DAY.finditer(text):
        found.append((m.start("h"), m.end(), (_hour(int(m.group("h")), m), 0)))
    for m in _AT_HOUR.finditer(text):
        if (spoken := _business_hour(int(m.group("h")), evening)) is not None:
            found.append((m.start(), m.end(), (spoken, 0)))
    for m in _HOUR_RANGE.finditer(text):
        if (ends := _range_hours(m, evening)) is not None:
            found.append((m.start("h"), m.end("h"), (ends[0], 0)))
            found.append((m.start("h2"), m.end(), (ends[1], 0)))
    for word, when in _NAMED.items():
        for m in re.finditer(rf"\b{word}\b", text, re.I):
            found.append((m.start(), m.end(), when))
    # The longest reading of each stretch: "half past 7pm" is no "7pm".
    kept: list[tuple[int, int, tuple[int, int]]] = []
    for start, end, when in sorted(found, key=lambda f: (f[0], -f[1])):
        if not kept or start >= kept[-1][1]:
            kept.append((start, end, when))
    return [(a, b, (h, m)) for a, b, (h, m) in kept if 0 <= h < 24 and 0 <= m < 60]


def _spoken_hour(hour: int, match: re.Match[str], evening: bool) -> int:
    """The hour of "half past four" or "quarter to six": by its part of the
    day where one is said, else in business hours as "at ten" is ("half
    past four" is 16:30), else as said ("half past seven")."""
    if match.group("later") or match.group("earlier"):
        return _hour(hour, match)
    spoken = _business_hour(hour, evening)
    return hour if spoken is None else spoken


def _business_hour(hour: int, evening: bool) -> int | None:
    """A bare hour ("at ten") in business hours: 8-12 as written, 1-6 in the
    afternoon, 1-11 in the evening where the request speaks of one; None
    for the rest ("at 7" alone)."""
    if 1 <= hour <= 11 and (hour <= 6 or evening):
        return hour + 12
    if 8 <= hour <= 12:
        return hour
    return None


def _range_hours(m: re.Match[str], evening: bool) -> tuple[int, int] | None:
    """The hours of "from 9 till 12" (business hours) or "from 2 to 3pm"
    (the second end's half of the day, for the first too where it is
    earlier: "from 11 to 1pm" is 11:00-13:00)."""
    first, second = int(m.group("h")), int(m.group("h2"))
    half = (m.group("half") or "").strip().lower()
    if not half:
        a, b = _business_hour(first, evening), _business_hour(second, evening)
        return None if a is None or b is None else (a, b)
    if not (1 <= first <= 12 and 1 <= second <= 12):
        return None
    if half.startswith("p"):
        later = second % 12 + 12
        return (first % 12 + 12 if first % 12 < second % 12 else first % 12), later
    return first % 12, second % 12


_DEADLINE = re.compile(r"\b(?:by|until|till|before|no later than)\s+(?=\d)", re.I)


def deadlines(text: str) -> list[tuple[int, int]]:
    """The clock times `text` writes right after "by", "until", "before"."""
    return [t for m in _DEADLINE.finditer(text) for t in times_in(text[m.end() : m.end() + 12])[:1]]


_START_WORD = re.compile(
    r"\b(?:starts?|starting|begins?|beginning|opens?)\s+(?:at\s+)?(?=\d)", re.I
)


def starts(text: str) -> list[tuple[int, int]]:
    """The clock times `text` writes right after "starts", "begins", "opens"."""
    return [
        t for m in _START_WORD.finditer(text) for t in times_in(text[m.end() : m.end() + 12])[:1]
    ]


def _written(schema: dict[str, Any], role: str, text: str) -> list[str]:
    """The times `text` writes in the schema's form; for a range's end
    (`role`), that end of the ranges it writes, where it writes any."""
    found = times_in(text)
    if role:
        firsts, seconds = range_ends(text)
        if role == "end":
            # "Music must end by 22:30": a deadline is an end too.
            seconds = [*deadlines(text), *seconds]
        else:
            # "the talk starts 14:15" starts something as "14:15-15:00" does.
            firsts = [*starts(text), *firsts]
        found = list(dict.fromkeys(firsts if role == "start" else seconds)) or found
    out = []
    for hour, minute in found:
        for form in (f"{hour:02d}:{minute:02d}", f"{hour:02d}:{minute:02d}:00"):
            if text_fits(schema, form):
                out.append(form)
                break
    return out


class ClockTimes:
    name = "clock_times"

    def prefer(self, facts: TurnFacts, out: Preferred) -> None:
        results = [t for _, t in reversed(facts.results)]
        for tool in facts.workflow.tools:
            for name, schema in parameters(tool):
                key = f"{tool.name}.{name}"
                if not undecided(out, key):
                    continue
                if not (takes_time(name, schema) or time_in_tool_text(name, tool.description)):
                    continue
                said = set(stems(name))
                role = "start" if said & _STARTS else "end" if said & _ENDS else ""
                read = functools.partial(_written, schema, role)
                requests = facts.requests if tool.read_only else _new_sides(facts.requests)
                found = first_found((requests, results), read)
                if facts.is_terminal(tool.name) and not first_found((requests,), read):
                    # A report's time: the one said beside what the user asked about.
                    found = asked_about(found, results, facts.requests, read)
                decide(out, key, found, self.name)


def _new_sides(requests: list[str]) -> list[str]:
    """The requests, with a change's new side only ("... to Friday at
    ten") where they move something and that side writes a time."""
    out = []
    for text in requests:
        change = _CHANGE_TO.search(text)
        after = text[change.end() :] if change else ""
        out.append(after if after and times_in(after) else text)
    return out


_SEGMENT = re.compile(r"[;\n]|(?<=[.!?])\s+")
# Words of a question about time that name no thing ("what time does it start").
_TIME_WORDS = frozenset(stems("time what when does start starts begin the itself please just"))


def asked_about(found: list[str], results: list[str], requests: list[str], read: Any) -> list[str]:
    """Of several times the results write, those written in a part (a line,
    a sentence, a `;` part) that shares a word of four letters or more
    with the request: "what time does the talk itself start" asks for
    "garden talk starts 14:15", not "craft session 15:00-16:00". All of
    them where no part, or every one, does."""
    if len(found) < 2:
        return found
    asked = {s for text in requests for s in stems(text) if len(s) >= 4} - _TIME_WORDS
    near = [
        value
        for text in results
        for part in _SEGMENT.split(text)
        if asked & set(stems(part))
        for value in read(part)
        if value in found
    ]
    kept = [v for v in found if v in near]
    return kept if 0 < len(kept) < len(found) else found
