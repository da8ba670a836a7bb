"""Dates the user wrote, in the format the parameter takes: "on 3 October
2027" is `2027-10-03` for a `date` parameter, "until March 9th" after a stay
dated 2027-03-02 is `2027-03-09`.

A small model copies a date it read elsewhere (the old check-out day) or
invents one. A string parameter that takes a date (`format: date` or
`date-time`, a description that says YYYY-MM-DD, or a name ending in
`date`) takes the dates the request writes, read with dateparser: a day and
a month at least, written with a month's name or in digits (never a bare
"20 minutes"), a year the text leaves out taken from the conversation's
own dates (else the next such day). A `date` parameter also takes the
days the request names relative to today ("tomorrow", "on Thursday",
relative_dates.py). The request's dates come first, then the results'.
Where the conversation writes no date, nothing changes.
"""

from __future__ import annotations

import calendar
import functools
import re
from datetime import date, datetime, timedelta
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from forge_core.guardrails import (
    Preferred,
    TurnFacts,
    decide,
    first_found,
    flat_args,
    parameters,
    parent_keys,
    sent_elsewhere,
    undecided,
)
from forge_core.guardrails.mentions import reports
from forge_core.guardrails.relative_dates import (
    derived_dates,
    relative_dates,
    stated_today,
    today_of,
    week_starts,
)
from forge_core.guardrails.text import clauses, stems, words
from forge_core.guardrails.times import times_in
from forge_core.schema_rules import text_fits

if TYPE_CHECKING:
    from forge_core.workflow import ToolSpec

_MONTH_NAMES = "|".join(
    sorted({m for m in (*calendar.month_name, *calendar.month_abbr) if m}, key=len, reverse=True)
)
_DATE_WRITTEN = re.compile(
    rf"\b(?:{_MONTH_NAMES})\b|\d{{4}}-\d{{1,2}}-\d{{1,2}}|\d{{1,2}}[/.]\d{{1,2}}[/.]\d{{2,4}}",
    re.IGNORECASE,
)
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
# Month names that name a month ("May" only capitalised: "you may").
_MONTH = re.compile(
    r"\b(?:January|February|March|April|May|June|July|August|September|October|November|December"
    r"|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\b"
)
_MONTH_NUMBER = {calendar.month_abbr[i].lower(): i for i in range(1, 13)}


def takes_date(name: str, schema: dict[str, Any]) -> str | None:
    """ "date", "date-time" or "month" (YYYY-MM) when the parameter takes
    one, else None."""
    if schema.get("type") != "string" or "enum" in schema:
        return None
    fmt = schema.get("format")
    if fmt in ("date", "date-time"):
        return str(fmt)
    described = str(schema.get("description", ""))
    if "YYYY-MM-DD" in described.upper():
        return "date-time" if "HH" in described.upper() else "date"
    if "YYYY-MM" in described.upper() or _month_pattern(schema):
        return "month"
    if words(name)[-1:] == ["month"] and "pattern" not in schema and "format" not in schema:
        return "month"
    said = words(name)
    # `date`, `date_of_birth`, `dob`, `birthdate`; a date a template states.
    if "date" in said or said[-1:] in (["dob"], ["birthday"], ["birthdate"]):
        return "date"
    if date_template(described):
        return "date"
    return None


# "DD/MM/YYYY", "MM-DD-YYYY", "YYYYMMDD": how a tool or its error writes a
# date when it is not ISO 8601.
_DATE_TEMPLATE = re.compile(r"\b(DD|MM|YYYY|YY)([/.\-]?)(DD|MM|YYYY|YY)\2(DD|MM|YYYY|YY)\b")
_STRFTIME = {"DD": "%d", "MM": "%m", "YYYY": "%Y", "YY": "%y"}


def date_template(text: str) -> str | None:
    """The strftime form of the first date template `text` writes that is
    not ISO 8601's YYYY-MM-DD, else None."""
    for m in _DATE_TEMPLATE.finditer(text.upper()):
        parts = (m.group(1), m.group(3), m.group(4))
        if len({p[0] for p in parts}) < 3 or (parts == ("YYYY", "MM", "DD") and m.group(2) == "-"):
            continue
        return m.group(2).join(_STRFTIME[p] for p in parts)
    return None


# The words of a range's ends in a parameter's name (`check_in`, `end_day`).
_STARTS = frozenset("start begin from in arrival arrive since checkin".split())
_ENDS = frozenset("end finish until till to out departure depart checkout".split())


_RANGE_ENDS = frozenset({"from", "until", "till", "to", "start", "end", "starts", "ends"})
_ACROSS = re.compile(r"\b(?:and|or|date)\b", re.IGNORECASE)


def _names(tool: ToolSpec) -> frozenset[str]:
    return frozenset(name for name, _ in parameters(tool))


def takes_date_by_tool(
    name: str, schema: dict[str, Any], tool_description: str, siblings: frozenset[str] = frozenset()
) -> bool:
    """A plain string named only for a range's end (`check_in`, `start`;
    not `departure_port`) of a tool whose description gives dates as
    YYYY-MM-DD."""
    plain = schema.get("type") == "string" and not any(
        k in schema for k in ("enum", "format", "pattern", "description")
    )
    form = re.search(rf"\b{re.escape(name)}\b([^.;)]{{0,40}})YYYY-MM-DD", tool_description)
    # Not across another thing named between: "by last name and the birth
    # date (YYYY-MM-DD)" gives the date's form, not the last name's.
    if plain and form and not _ACROSS.search(form.group(1)):
        # The description gives this parameter's form: "(week_start: that
        # Monday, YYYY-MM-DD)".
        return True
    said = words(name)
    return (
        plain
        and "YYYY-MM-DD" in tool_description.upper()
        # A range's words: `check_in`, `start`, and a range's end of
        # something (`rent_from`, `valid_until`); not `departure_port`.
        and bool(said)
        and (
            set(said) <= _STARTS | _ENDS | {"check", "day"}
            or (len(said) == 2 and said[-1] in _RANGE_ENDS and _paired(said, siblings))
        )
    )


def _paired(said: list[str], siblings: frozenset[str]) -> bool:
    """`rent_from` beside `rent_to`: the two ends of one range."""
    return any(
        len(other := words(n)) == 2 and other[0] == said[0] and other[1] in _RANGE_ENDS - {said[1]}
        for n in siblings
    )


def datetime_by_tool(name: str, schema: dict[str, Any], tool_description: str) -> bool:
    """A plain string the tool's description calls a date-time ("collect_at
    and return_at are ISO 8601 date-times")."""
    plain = schema.get("type") == "string" and not any(
        k in schema for k in ("enum", "format", "pattern")
    )
    said = rf"\b{re.escape(name)}\b[^.;]{{0,60}}?\b(?:ISO[ -]?8601\s+)?date-?times?\b"
    return plain and bool(re.search(said, tool_description, re.IGNORECASE))


# A deadline's parameter (`upload_deadline`, `due_date`, `expires_on`)
# takes the dates a text writes after "by", "until", "due", "deadline".
_DEADLINE_WORDS = frozenset("deadline due expiry expires expiration until latest".split())
_DEADLINE_CUE = re.compile(
    r"\b(?:by|until|till|before|due(?: on| by)?|deadline(?: is)?|expires?(?: on)?|expiry)\b:?\s*",
    re.IGNORECASE,
)


def _after_deadline(text: str, read: Any) -> list[str]:
    """The dates `read` finds right after a deadline's cue in `text`."""
    out: list[str] = []
    for m in _DEADLINE_CUE.finditer(text):
        out += read(text[m.end() : m.end() + 30])[:1]
    return out


# A date of something that has happened (`decision_date`, `issued_on`,
# `date_of_birth`): "signed on 3 March" in April is this March's, not next year's.
_PAST_WORDS = frozenset(
    "decision decided issued issue signed approved purchase purchased bought birth born "
    "received incident accident occurred dated".split()
)
# Words of a date parameter's name that say nothing of which date it is.
_DATE_WORDS = frozenset(stems("date day on at of the time when"))
# A range's role words are no topic ("to" in `to_date` is said everywhere);
# the roles are read apart (`_role`).
_ROLE_WORDS = frozenset(stems("from to start end begin until till by since in for"))


def _in_the_past(written: str, today: date) -> str:
    """`written` (YYYY-MM-DD) a year earlier when it lies ahead of `today`
    and that earlier date does not."""
    when = date.fromisoformat(written)
    if when <= today:
        return written
    try:
        earlier = when.replace(year=when.year - 1)
    except ValueError:  # 29 February
        return written
    return earlier.isoformat() if earlier <= today else written


_AND = re.compile(r"\s+(?:and|then|so)\s+", re.IGNORECASE)


def _shared(topic: set[str], said: set[str]) -> int:
    """How many stems of the topic are said, as they are or by their first
    five letters ("delivery" is "deliveri", "delivered" is "deliv")."""
    return sum(
        t in said or (len(t) >= 5 and any(len(s) >= 5 and t[:5] == s[:5] for s in said))
        for t in topic
    )


def _by_topic(param: str, found: list[str], requests: list[str], read: Any) -> list[str]:
    """Of several dates, those the request writes in a clause about the
    parameter's own topic ("the contract was signed on 3 March" for
    `signed_date`, "do the job on the 15th" for `job_date`); all of
    them when no clause tells them apart."""
    topic = set(stems(" ".join(words(param)))) - _DATE_WORDS - _ROLE_WORDS
    if not topic:
        return found
    parts = [(text, clause) for text in requests for clause in clauses(text)]
    # Then the clauses' parts joined by "and": "dropped off on Monday the
    # 4th and picked up again on the Thursday after".
    finer = [(text, p) for text, c in parts for p in _AND.split(c)]
    for level in (parts, finer):
        # The parts that share the most of the topic: "Next service Wed
        # 2031-05-14" over "Last service 2031-04-30" for `next_service`.
        shared = {i: _shared(topic, set(stems(part))) for i, (_, part) in enumerate(level)}
        most = max(shared.values(), default=0)
        about = [
            d
            for i, (text, part) in enumerate(level)
            if most and shared[i] == most
            for d in _read_in_place(text, part, read)
        ]
        kept = [d for d in found if d in about]
        if 0 < len(kept) < len(found):
            return kept
    return found


def _read_in_place(text: str, part: str, read: Any) -> list[str]:
    """The dates `part` writes, read where it stands in `text`: "I'll
    pick the keys up the day before" after "we arrive on the 12th" is the 11th.
    The dates the text up to the part's end writes that the text before
    it does not."""
    start = text.find(part)
    if start < 0:
        return list(read(part))
    before = set(read(text[:start])) if start else set()
    return [d for d in read(text[: start + len(part)]) if d not in before] or list(read(part))


def _errors_about(facts: TurnFacts, tool: str, param: str) -> list[str]:
    """The errors of the failed calls of `tool` that sent `param`."""
    return [f.error for f in facts.failures if f.tool == tool and param in flat_args(f.args)]


def _as_template(found: list[str], schema: dict[str, Any], errors: list[str]) -> list[str]:
    """ISO dates in the form an error of this parameter, else its schema,
    states ("write dates as DD/MM/YYYY"), where one does."""
    form = next(
        (f for t in [*errors[::-1], str(schema.get("description", ""))] if (f := date_template(t))),
        None,
    )
    if form is None:
        return found
    written = [datetime.strptime(d[:10], "%Y-%m-%d").strftime(form) for d in found]
    return [w for w in dict.fromkeys(written) if text_fits(schema, w)] or found


def _names_a_week(name: str, schema: dict[str, Any]) -> bool:
    """`week_start`, `week_of`, or a date its description calls a week's start."""
    described = str(schema.get("description", "")).lower()
    return "week" in words(name) or "week start" in described or "monday" in described


def _role(name: str) -> str:
    said = set(words(name))
    return "start" if said & _STARTS else "end" if said & _ENDS else ""


def _month_pattern(schema: dict[str, Any]) -> bool:
    """A pattern that admits a year and a month and no other dates or runs."""
    return "pattern" in schema and all(
        text_fits(schema, probe) == fits
        for probe, fits in (("2026-06", True), ("2026-06-01", False), ("1234-56789", False))
    )


# Days that share one month name: "3rd/4th March", "the 7th, 8th and 9th
# of May", "12-14 June", "March 3rd and 4th". dateparser reads the second
# day as a year ("3rd/4th March" is 3 March 2104).
_DAY = (
    r"(?:(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)[a-z]*\.?\s+)?"
    r"(?<![\d:.])\d{1,2}(?:st|nd|rd|th)?(?![\d:.])"
)
_DAYS = rf"{_DAY}(?:\s*(?:/|,|&|-|\u2013|and|to)\s*{_DAY})+"
_SHARED_MONTH = re.compile(
    rf"\b(?P<days>{_DAYS})\s+(?:of\s+)?(?P<month>{_MONTH.pattern})"
    rf"|(?P<month_first>{_MONTH.pattern})\s+(?P<later_days>{_DAYS})(?P<year>,?\s*\d{{4}}\b)?"
)


def _each_day_with_its_month(text: str) -> str:
    """`text` with each day of a shared month name written with it: "3rd
    March and 4th March"; a range keeps its ends."""

    def spelled(m: re.Match[str]) -> str:
        if m.group("month_first"):
            days = re.findall(_DAY, m.group("later_days"))
            year = m.group("year") or ""
            return " and ".join(f"{m.group('month_first')} {day}{year}" for day in days)
        days = re.findall(_DAY, m.group("days"))
        return " and ".join(f"{day} {m.group('month')}" for day in days)

    return _SHARED_MONTH.sub(spelled, text)


@lru_cache(maxsize=1024)
def dates_in(text: str, base: datetime) -> tuple[datetime, ...]:
    """The calendar dates `text` writes (dateparser), relative to `base`."""
    from dateparser.search import search_dates

    found = search_dates(
        _each_day_with_its_month(text),
        languages=["en"],
        settings={
            "PREFER_DATES_FROM": "future",
            "REQUIRE_PARTS": ["day", "month"],
            # From the base day on: "9 May" read on 9 May is that day.
            "RELATIVE_BASE": base - timedelta(days=1),
        },
    )
    # A year far off that the span does not write is a misreading (a day
    # taken for a year), not a date anyone books.
    return tuple(
        on_its_weekday(span, when)
        for span, when in found or ()
        if _DATE_WRITTEN.search(span) and (when.year <= base.year + 5 or str(when.year) in span)
    )


_WEEKDAY_NAMES = {name.lower(): i for i, name in enumerate(calendar.day_name)}
_WEEKDAY_SAID = re.compile(rf"\b({'|'.join(_WEEKDAY_NAMES)})\b", re.IGNORECASE)


def on_its_weekday(span: str, when: datetime) -> datetime:
    """A date written with its weekday ("Friday 9th May") in the year
    nearest the one read where it falls on that day: a past event the
    request dates is last year's or this year's, not next year's."""
    said = _WEEKDAY_SAID.search(span)
    if said is None or when.weekday() == _WEEKDAY_NAMES[said.group(1).lower()]:
        return when
    for shift in (-1, 1):
        try:
            other = when.replace(year=when.year + shift)
        except ValueError:  # 29 February
            continue
        if other.weekday() == _WEEKDAY_NAMES[said.group(1).lower()]:
            return other
    return when


def _base(texts: list[str], today: date) -> datetime:
    """The conversation's latest ISO date, else today: what a date without
    its year is read against."""
    seen = [
        datetime(int(y), int(m), int(d))
        for t in texts
        for y, m, d in _ISO.findall(t)
        if 1 <= int(m) <= 12 and 1 <= int(d) <= 31
    ]
    return max(seen) if seen else datetime(today.year, today.month, today.day)


def _written(when: datetime, kind: str) -> str:
    return when.strftime("%Y-%m-%d") if kind == "date" else when.strftime("%Y-%m-%dT%H:%M:%S")


def months_in(text: str, base: datetime) -> list[str]:
    """The months `text` names, as YYYY-MM: with the year written after
    them in the same sentence ("June and July 2026"), else the next such
    month after `base`."""
    out = []
    for m in _MONTH.finditer(text):
        month = _MONTH_NUMBER[m.group(0).lower()[:3]]
        after = re.match(r"[^.!?]{0,40}?\b((?:19|20)\d\d)\b", text[m.end() :])
        if after:
            year = int(after.group(1))
        else:
            year = base.year if month >= base.month else base.year + 1
        out.append(f"{year:04d}-{month:02d}")
    return list(dict.fromkeys(out))


def _dates_written(kind: str, base: datetime, today: date, text: str) -> list[str]:
    if kind == "month":
        return months_in(text, base)
    written = [_written(d, kind) for d in dates_in(text, base)]
    if kind == "date":
        written += [d.isoformat() for d in relative_dates(text, today)]
    else:
        # A date-time: the days written with the times of day written.
        found = dates_in(text, base)
        days = relative_dates(text, today) or [d.date() for d in found]
        written = [
            f"{day.isoformat()}T{h:02d}:{m:02d}:00"
            for day, (h, m) in _on_days(days, times_in(text))
        ] or written
    return list(dict.fromkeys(written))


def _on_days(days: list[date], times: list[tuple[int, int]]) -> list[tuple[date, tuple[int, int]]]:
    """The days and times a text writes, paired in order: one day with each
    time ("tomorrow from 3pm to 5pm"), each day with one time, else the
    first day with the first time, the second with the second."""
    if not days or not times:
        return []
    if len(days) == 1:
        return [(days[0], t) for t in times]
    if len(times) == 1:
        return [(d, times[0]) for d in days]
    return list(zip(days, times, strict=False))


class Dates:
    name = "dates"

    def prefer(self, facts: TurnFacts, out: Preferred) -> None:
        results = [t for _, t in reversed(facts.results)]
        schemas = {
            f"{tool.name}.{name}": schema
            for tool in facts.workflow.tools
            for name, schema in parameters(tool)
        }
        wanted = [
            (f"{tool.name}.{name}", kind)
            for tool in facts.workflow.tools
            for name, schema in parameters(tool)
            if (kind := takes_date(name, schema))
            or (
                kind := "date"
                if takes_date_by_tool(name, schema, tool.description, _names(tool))
                else None
            )
            or (kind := "date-time" if datetime_by_tool(name, schema, tool.description) else None)
        ]
        if not wanted:
            return
        today = today_of(facts.workflow.system_prompt)
        latest = _base(facts.requests + results, today)
        # A day without its year is read from the today the workflow states
        # (a result's far date does not move it); without one, and a month
        # ("the March payroll"), from the conversation's latest date.
        stated = stated_today(facts.workflow.system_prompt) is not None
        day_base = _base([], today) if stated else latest
        parents = {tool.name: parent_keys(tool) for tool in facts.workflow.tools}
        for key, kind in wanted:
            if not undecided(out, key):
                continue
            base = latest if kind == "month" else day_base
            read = functools.partial(_dates_written, kind, base, today)
            tool_name, param = key.split(".", 1)
            # A report tells the dates the results give ("upload by ...").
            sources = (results, facts.requests) if reports(facts, tool_name) else None
            found = first_found(sources or (facts.requests, results), read)
            # A date a call already sent as another parameter (a date of
            # birth a lookup took) is not this one while others are found.
            elsewhere = {d for v in sent_elsewhere(facts, param) for d in read(v)}
            found = [d for d in found if d not in elsewhere] or found
            if kind == "date" and _names_a_week(param, schemas[key]):
                # "next week's box" for `week_start`: that week's Monday.
                weeks = [d.isoformat() for t in facts.requests for d in week_starts(t, today)]
                found = weeks or found
            if set(words(param)) & _DEADLINE_WORDS:
                due = [d for t in results + facts.requests for d in _after_deadline(t, read)]
                found = [d for d in found if d in due] or found
            if kind == "date":
                parent = parents.get(tool_name, {}).get(param, "")
                said = results if sources else facts.requests
                found = _on_topic(param, parent, found, facts.requests, said, read, today)
            if kind == "date" and set(words(param)) & _PAST_WORDS:
                found = list(dict.fromkeys(_in_the_past(d, today) for d in found))
            if kind == "date":
                found = _as_template(found, schemas[key], _errors_about(facts, tool_name, param))
            mine = [(k.split(".", 1)[1], c) for k, c in wanted if k.startswith(f"{tool_name}.")]
            role_of = {name: _role(name) for name, _ in mine}
            if kind == "date-time" and [c for _, c in mine] == [kind, kind]:
                # Two date-times without a word for each one's role
                # ("collect_at", "return_by"): a schema lists them in the order
                # they come.
                if set(role_of.values()) != {"start", "end"}:
                    role_of = dict(zip(role_of, ("start", "end"), strict=True))
            role, roles = role_of[param], set(role_of.values())
            if role and roles >= {"start", "end"} and kind != "month" and len(found) == 2:
                # "from Friday the 19th until Monday the 22nd": a range's ends.
                found = found[:1] if role == "start" else found[1:]
            decide(out, key, found, self.name)
        _apart(out, [key for key, kind in wanted if kind == "date"], self.name)


def _on_topic(
    param: str,
    parent: str,
    found: list[str],
    requests: list[str],
    said: list[str],
    read: Any,
    today: date,
) -> list[str]:
    """Of several dates, those said of the parameter's topic; else those
    not derived from another ("send a reminder the day before" dates
    something else); then those said of its object's key (`delivery.date`:
    "dropped off on Monday the 4th"; a report's `next_service.date` in the
    results, `said`: "Next service Wed 2031-05-14")."""
    if len(found) > 1:
        topical = _by_topic(param, found, requests, read)
        derived = {d.isoformat() for t in requests for d in derived_dates(t, today)}
        found = (
            topical
            if len(topical) < len(found)
            else [d for d in found if d not in derived] or found
        )
    if len(found) > 1 and parent:
        found = _by_topic(parent, found, said, read)
    return found


def _apart(out: Preferred, keys: list[str], reason: str) -> None:
    """Two dates of one tool are two days: a parameter offered several
    keeps those a sibling did not settle on (`delivery_date` took the
    4th, so `collection_date` is the other day the request wrote)."""
    for key in keys:
        tool = key.split(".", 1)[0]
        values = out.values.get(key, [])
        if len(values) < 2 or out.reasons.get(key) != reason:
            continue
        settled = {
            out.values[k][0]
            for k in keys
            if k != key and k.split(".", 1)[0] == tool and len(out.values.get(k, [])) == 1
        }
        kept = [v for v in values if v not in settled]
        if 0 < len(kept) < len(values):
            out.values[key] = kept
