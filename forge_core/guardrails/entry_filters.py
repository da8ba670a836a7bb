"""What a request says of a listing's entries beyond their words: a period
of the calendar, a bound on the clock, and what it says no to.

"Return whatever falls due this week" against rentals due on several
dates, "the March rehearsals that start before noon" against sessions
dated and timed, "every member who hasn't settled" against fees SETTLED,
UNSETTLED and WAIVED: the words the request shares with the entries do
not pick these out ("this week" shares no word with "due Wed 2031-05-14";
"settled" is said of the entries not meant). Each filter here keeps the values
whose own entry (entries.py, `own_entries`) fits what the request says,
where some entries do and others not; where none or all do, it changes
nothing, so a request that says none of this is read as before.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta

from forge_core.guardrails.quantities import in_digits, measures
from forge_core.guardrails.relative_dates import relative_dates
from forge_core.guardrails.text import stems
from forge_core.guardrails.times import times_in

_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
# "this week", "next month", "this weekend".
_RELATIVE_PERIOD = re.compile(
    r"\b(this(?:\s+coming)?|next|coming)\s+(week(?:end)?|month)\b", re.IGNORECASE
)
# A month the request names: "in March", "the March sessions". "May" is
# a month only after a word that takes one ("in May", "for May").
_MONTH_NAME = re.compile(
    r"\b(?:(" + "|".join(name for name in _MONTHS if name != "may") + r")"
    r"|(?:in|of|for|the|during|until|through)\s+(May))\b",
    re.IGNORECASE,
)
Period = tuple[date, date]


@dataclass(frozen=True)
class ListReading:
    """How a list's items are read from its listing: today's date (for
    "this week"), and whether what the request says no to leaves the list
    (not for a tool that takes things away: `withholds`)."""

    today: date | None
    refusals: bool


def _week(day: date) -> Period:
    start = day - timedelta(days=day.weekday())
    return start, start + timedelta(days=6)


def _month(year: int, month: int) -> Period:
    return date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1])


def _relative(which: str, unit: str, today: date) -> Period:
    # "this coming weekend" and "the coming week" are the ones ahead now.
    ahead = which.lower().split()[0] == "next"
    if unit.lower() == "month":
        year, month = today.year, today.month + ahead
        return _month(year + (month > 12), (month - 1) % 12 + 1)
    week = _week(today + timedelta(days=7 * ahead))
    if unit.lower() == "weekend":
        return week[1] - timedelta(days=1), week[1]
    return week


# Days said relative to today are periods too (a switch for ablation).
NAMED_DAYS = True


def named_periods(requests: list[str], today: date | None, days: bool = False) -> list[Period]:
    """The periods of the calendar the request names: this or next week
    or month (with today known), and months by name (the next one of that
    name from today, or that month of any year)."""
    out: list[Period] = []
    for text in requests:
        if today is not None:
            out += [
                _relative(m.group(1), m.group(2), today) for m in _RELATIVE_PERIOD.finditer(text)
            ]
        for m in _MONTH_NAME.finditer(text):
            month = _MONTHS[(m.group(1) or m.group(2)).lower()]
            if today is None:
                out.append((date(1, month, 1), date(9999, month, 28)))
            else:
                out.append(_month(today.year + (month < today.month), month))
        if today is not None and days and NAMED_DAYS:
            # "this Tuesday's lesson", "tomorrow's": a period of one day.
            out += [(day, day) for day in relative_dates(text, today)]
    return out


def _dates(entry: str) -> list[date]:
    out = []
    for year, month, day in _ISO_DATE.findall(entry):
        try:
            out.append(date(int(year), int(month), int(day)))
        except ValueError:
            continue
    return out


def _fitting(
    values: list[str], own: dict[str, str], fits: Callable[[str], bool | None]
) -> list[str]:
    """`values` whose own entry `fits` (None: says nothing either way), where
    some of those that say something fit and others not; else all."""
    said = {v: fits(own[v]) for v in values if v in own}
    kept = [v for v, fit in said.items() if fit]
    if not kept or len(kept) == len([fit for fit in said.values() if fit is not None]):
        return values
    return [v for v in values if said.get(v) is not False]


def in_named_periods(
    values: list[str],
    own: dict[str, str],
    requests: list[str],
    today: date | None,
    days: bool = False,
) -> list[str]:
    """`values` whose entry writes a date in a period the request names
    ("due Wed 2031-05-14" for "falls due this week"; a session on
    2031-03-06 for "the March rehearsals"); with `days`, for one entry of
    several, also the days it names relative to today ("this Tuesday's
    lesson"), which a list's request says of recurring days ("Saturday
    mornings all through June")."""
    periods = named_periods(requests, today, days)
    if not periods:
        return values

    def fits(entry: str) -> bool | None:
        days = _dates(entry)
        if not days:
            return None
        # A month named with today unknown is that month of any year.
        return any(
            d.month == start.month if start.year == 1 else start <= d <= end
            for d in days
            for start, end in periods
        )

    return _fitting(values, own, fits)


_NAMED_HOUR = {"midday": 12, "noon": 12, "lunchtime": 12, "lunch": 12, "midnight": 24}
# "start before noon", "after 6pm", "starting before 10:30".
_CLOCK_BOUND = re.compile(
    # "nothing that starts after 2": after the bound, nothing (an upper bound).
    r"\b(?P<no>(?:nothing|none|no(?:thing)?\s+\w+|not)\b[^.,;!?]{0,30}?\s)?"
    r"(?P<word>before|after|earlier than|later than)\s+"
    r"(?P<when>midday|noon|lunchtime|lunch|midnight"
    r"|\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.|o'clock)?)",
    re.IGNORECASE,
)


def _bound(no: str | None, word: str, when: str) -> tuple[bool, int] | None:
    """(is an upper bound, minutes of the day) for "before midday" etc.;
    `no`: the bound is said no to ("nothing after 2")."""
    upper = (word.lower() in ("before", "earlier than")) != bool(no)
    hour = _NAMED_HOUR.get(when.lower())
    if hour is not None:
        return upper, hour * 60
    found = times_in(when)
    if not found and when.isdigit() and int(when) <= 24:
        found = [(int(when), 0)]
    if not found:
        return None
    h, m = found[0]
    # "before 6" in a day's listing: the evening's six when it is no morning hour.
    if h < 7 and not re.search(r"am|a\.m\.", when, re.IGNORECASE):
        h += 12
    return upper, h * 60 + m


def within_clock_bounds(values: list[str], own: dict[str, str], requests: list[str]) -> list[str]:
    """`values` whose entry's (first) clock time is within a bound the
    request states ("start before noon": 09:30, not 13:00)."""
    bounds = [
        b
        for text in requests
        for m in _CLOCK_BOUND.finditer(in_digits(text))
        if (b := _bound(m.group("no"), m.group("word"), m.group("when")))
    ]
    if not bounds:
        return values

    def fits(entry: str) -> bool | None:
        found = times_in(entry)
        if not found:
            return None
        at = found[0][0] * 60 + found[0][1]
        return all(at < limit if upper else at > limit for upper, limit in bounds)

    return _fitting(values, own, fits)


# A negation and what it covers up to its clause's end: "who still hasn't
# settled the term's fee", "not anyone whose fee was waived".
_NEGATION = re.compile(
    r"\b(?:not|never|nothing|nobody|no longer|no one|none of|\w+n't|cannot)\b"
    # "don't forget the blue one", "not only", "not sure": no exclusion;
    # "not before the evening", "no more than two": a bound, no exclusion.
    r"(?!\s+(?:only|just|forget|miss|hesitate|worry|mind|sure|too|a problem|much|before|after"
    r"|until|till|earlier|later|more|less|over|under|sooner)\b)"
    r"(?![^.,;:!?]{0,30}\b(?:before|after|earlier than|later than)\b)"
    r"([^.,;:!?()\n]{1,60})",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
# A pronoun that points back to what the sentence named: "Rowan's dad
# already booked his, so don't add him twice".
_BACK = re.compile(r"\b(?:her|him|them|hers|his|theirs)\b", re.IGNORECASE)
_CAPITALISED = re.compile(r"\b[A-Z][a-z]+\b")
_CALENDAR = frozenset(stems(" ".join([*calendar.day_name, *(m for m in calendar.month_name if m)])))
_NO_WORDS = frozenset(
    stems("the any anyone anything one ones that those this it be been have had yet")
)


# Tools that take something away: "he doesn't want the Tuesday
# bulletin" names the list an unsubscribe takes, not one to leave out.
_WITHHOLDING = frozenset(
    stems(
        "skip cancel remove unsubscribe pause stop withdraw delete exclude block suspend "
        "decline unavailable unavailability deactivate unregister drop release revoke "
        "archive refund unassign unenrol unenroll opt"
    )
)


def withholds(tool_name: str) -> bool:
    """Whether a tool's name says it takes something away."""
    return bool(set(stems(tool_name)) & _WITHHOLDING)


def negation_free(text: str) -> str:
    """`text` without its negations and the words they cover."""
    return _NEGATION.sub(" ", text)


def said_no_to(requests: list[str]) -> set[str]:
    """The stems the request says no to: the words a negation covers, and
    the names in a sentence whose negation points back to them."""
    out: set[str] = set()
    # What the request also says outside its negations ("the Harvest Day
    # poster, not the Open Day one": "day" is no refusal).
    affirmed = {w for text in requests for w in stems(_NEGATION.sub(" ", text))}
    for i, text in enumerate(requests):
        for m in _NEGATION.finditer(text):
            out |= {w for w in stems(m.group(1)) if len(w) > 2 and not w.isdigit()} - affirmed
        sentences = _SENTENCE.split(text)
        for j, sentence in enumerate(sentences):
            if not any(_BACK.search(m.group(1)) for m in _NEGATION.finditer(sentence)):
                continue
            # Named here and nowhere else in the request.
            rest = [*requests[:i], *requests[i + 1 :], *sentences[:j], *sentences[j + 1 :]]
            elsewhere = {w for r in rest for w in stems(r)}
            names = {w for n in _CAPITALISED.findall(sentence) for w in stems(n)}
            out |= names - elsewhere - _CALENDAR
    return out - _NO_WORDS


def not_said_no_to(
    values: list[str], own: dict[str, str], requests: list[str], says: Callable[[str], set[str]]
) -> list[str]:
    """`values` less those whose entry says a word the request says no to
    ("SETTLED" for "hasn't settled"), a word some entries say and others not;
    all of them when every one would go. `says`: an entry's stems."""
    refused = said_no_to(requests)
    if not refused:
        return values
    said = {v: says(own[v]) for v in values if v in own}
    gone: set[str] = set()
    for word in refused:
        holders = {v for v, words in said.items() if word in words}
        if 0 < len(holders) < len(values):
            gone |= holders
    return [v for v in values if v not in gone] or values


# A bound the request puts on an amount: "nothing over thirty quid",
# "under 3 m", "at least 20 GBP".
_AMOUNT_BOUND = re.compile(
    r"\b(?P<no>(?:nothing|none|no|not|never)\s+)?(?P<word>over|more than|above|under|less than"
    r"|below|at most|up to|at least|max(?:imum)?|min(?:imum)?|cheaper than|within)\s+"
    r"(?P<amount>[€$£¥]?\s?[\w.,]+(?:\s+[A-Za-z]+)?)",
    re.IGNORECASE,
)
_UPPER = frozenset(
    {"under", "less than", "below", "at most", "up to", "max", "maximum", "cheaper than", "within"}
)
# Bounds that leave their own number out: "under fifteen pounds" is no
# 15.00 GBP; "nothing over thirty" (negated) keeps 30.
_STRICT = frozenset({"under", "less than", "below", "cheaper than", "over", "more than", "above"})
_MEASURE = re.compile(r"^(-?[\d.]+)([a-z]+)$")


def amount_bounds(requests: list[str]) -> list[tuple[bool, float, str, bool]]:
    """(is an upper bound, number, unit family, leaves the number out) for
    each bound the request puts on an amount with a unit."""
    out = []
    for text in requests:
        for m in _AMOUNT_BOUND.finditer(text):
            word = m.group("word").lower()
            upper = (word in _UPPER) != bool(m.group("no"))
            strict = word in _STRICT and not m.group("no")
            for token in measures(m.group("amount")):
                parsed = _MEASURE.match(token)
                if parsed:
                    out.append((upper, float(parsed.group(1)), parsed.group(2), strict))
    return out


def without_bounds(text: str) -> str:
    """`text` without the bounds it puts on amounts: "under fifteen pounds"
    describes no entry of 15.00 GBP."""
    return _AMOUNT_BOUND.sub(" ", text)


def _within(amount: float, upper: bool, limit: float, strict: bool) -> bool:
    if strict and amount == limit:
        return False
    return amount <= limit if upper else amount >= limit


def within_amount_bounds(values: list[str], own: dict[str, str], requests: list[str]) -> list[str]:
    """`values` whose entry's amounts in a bounded unit are within the
    request's bound ("32.00 GBP", not "65.00 GBP", for "nothing over
    thirty quid")."""
    bounds = amount_bounds(requests)
    if not bounds:
        return values

    def fits(entry: str) -> bool | None:
        amounts = [
            (float(p.group(1)), p.group(2)) for t in measures(entry) if (p := _MEASURE.match(t))
        ]
        verdicts = [
            _within(amount, upper, limit, strict)
            for upper, limit, family, strict in bounds
            for amount, unit in amounts
            if unit == family
        ]
        return all(verdicts) if verdicts else None

    return _fitting(values, own, fits)


# "grade 4", "level 2": a number its word names, in the request; "grades
# 4-5", "ages 8-12": a range of them in an entry.
_LABELLED = re.compile(r"\b([A-Za-z]{3,})\s+(\d{1,3})(?![\d:./-])")
_LABELLED_RANGE = re.compile(r"\b([A-Za-z]{3,})\s+(\d{1,3})\s*[-\u2013]\s*(\d{1,3})(?![\d:./])")


def within_labelled_ranges(
    values: list[str], own: dict[str, str], requests: list[str]
) -> list[str]:
    """`values` whose entry's ranges hold the numbers the request gives
    their word ("grades 3-4" and "grades 1-7" for "she's grade 4", not
    "grades 6-7")."""
    asked: dict[str, set[int]] = {}
    for text in requests:
        for word, number in _LABELLED.findall(text):
            if stems(word) and stems(word)[0] not in _CALENDAR:
                asked.setdefault(stems(word)[0], set()).add(int(number))
    if not asked:
        return values

    def fits(entry: str) -> bool | None:
        verdicts = [
            any(int(low) <= n <= int(high) for n in asked[label])
            for word, low, high in _LABELLED_RANGE.findall(entry)
            if (label := stems(word)[0] if stems(word) else "") in asked
        ]
        return all(verdicts) if verdicts else None

    return _fitting(values, own, fits)


# "Not the one on the 9th", "except the 3rd": a day of the month said no to.
_REFUSED_DAY = re.compile(
    r"\b(?:not|except(?: for)?|apart from|other than|excluding|but not|skip)\b[^.;!?]{0,30}?"
    r"\b(\d{1,2})(?:st|nd|rd|th)\b",
    re.IGNORECASE,
)
_REFUSED_WEEKEND = re.compile(
    r"\b(?:not|except(?: for)?|apart from|other than|excluding|but not|skip)\b[^.;!?]{0,20}?"
    r"\bweekend of the (\d{1,2})(?:st|nd|rd|th)\b",
    re.IGNORECASE,
)


def not_on_refused_days(values: list[str], own: dict[str, str], requests: list[str]) -> list[str]:
    """`values` less those whose entry is dated on a day of the month the
    request says no to ("not the one on the 9th" for "Sat 2031-05-09");
    all of them when every one would go."""
    refused = {int(m.group(1)) for text in requests for m in _REFUSED_DAY.finditer(text)}
    # "except the weekend of the 14th": the Saturday and the Sunday.
    weekends = {int(m.group(1)) for text in requests for m in _REFUSED_WEEKEND.finditer(text)}
    if not refused and not weekends:
        return values

    def fits(entry: str) -> bool | None:
        days = _dates(entry)
        if not days:
            return None
        return not any(
            d.day in refused or (d.weekday() >= 5 and any(abs(d.day - w) <= 1 for w in weekends))
            for d in days
        )

    return _fitting(values, own, fits)


# What an entry has room for: "3 places left", "2 seats remaining".
_ROOM = re.compile(
    r"\b(\d{1,4})\s+(?:places?|seats?|spaces?|spots?|tickets?|berths?|pitches?)\s+"
    r"(?:left|remaining|available|free)\b",
    re.IGNORECASE,
)


def with_room_for(values: list[str], own: dict[str, str], party: int | None) -> list[str]:
    """`values` whose entry has room for the request's party ("3 places
    left" is no walk for six of us); all of them when every one would go."""
    if not party:
        return values

    def fits(entry: str) -> bool | None:
        rooms = [int(n) for n in _ROOM.findall(entry)]
        return min(rooms) >= party if rooms else None

    return _fitting(values, own, fits)


# "at the weekends", "on weekdays": which days of the week a list keeps.
_WEEK_PARTS = (
    (
        re.compile(r"\bweekends\b|\bweekend (?:shifts|slots|dates|sessions)\b", re.I),
        {5, 6},
    ),
    (re.compile(r"\bweekdays\b|\bweek ?days\b", re.I), {0, 1, 2, 3, 4}),
)


def on_named_weekdays(values: list[str], own: dict[str, str], requests: list[str]) -> list[str]:
    """`values` whose entry is dated on the days of the week the request
    names in the plural ("every session at the weekends in May": Saturdays
    and Sundays, not the Wednesday one); all of them when every one
    would go."""
    wanted: set[int] = set()
    for text in requests:
        for pattern, days in _WEEK_PARTS:
            if pattern.search(text):
                wanted |= days
    if not wanted:
        return values

    def fits(entry: str) -> bool | None:
        days = _dates(entry)
        return any(d.weekday() in wanted for d in days) if days else None

    return _fitting(values, own, fits)
