"""Dates the user writes relative to today: "tomorrow", "on Thursday",
"next Friday", "in 3 days".

A small model asked to book something "tomorrow" writes today's date, or a
date it read in a result (the slot being moved away from). Here a relative
phrase is read against *today*: the date the workflow's system prompt
states as today ("Today is Monday 2031-05-12", "The current date is 12 May
2031"), as real assistants are told, else the host's calendar date. A
weekday alone or with "next"/"on"/"coming" is the first such day after
today; "this Friday" may be today; "Friday next week" is the Friday of
the week after this one, "Friday week" a week after the coming Friday;
"the Friday after" (or "the following
Friday") is the first Friday after the date written before it, "the day
before" the day before it; "on the 12th", alone, the next 12th; "Friday 14 August" is the absolute
date dates.py reads, not a relative one; "Friday the 19th", with no month,
is the next 19th that is a Friday. Plurals ("on Mondays", "weekdays") are
recurring days, not dates, and are left alone.
"""

from __future__ import annotations

import calendar
import re
from datetime import date, datetime, timedelta

_WEEKDAYS = {name.lower(): i for i, name in enumerate(calendar.day_name)}
_NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "fourteen": 14,
}  # fmt: skip
_DAY = "|".join(_WEEKDAYS)
_MONTHS = "|".join(m for m in calendar.month_name if m)
# After a day's number: not a clock time ("the 2 o'clock one", "2pm", "2:30").
_NOT_A_TIME = r"(?!\s*(?:o'?\s?clock|[ap]\.?m\b|:\d|\.\d))"
_RELATIVE = re.compile(
    rf"\b(?:(?P<after>the day after tomorrow)|(?P<word>today|tonight|tomorrow|yesterday"
    rf"|this\s+(?:morning|afternoon|evening))"
    # "Sunday after next", "not this Sunday, the one after": a week on
    # from the coming one.
    rf"|(?P<later>{_DAY})(?:\s+after\s+next|,?\s+the\s+(?:1|one)\s+after)"
    # "the Friday after", "the following Friday": after the date before it.
    rf"|the\s+(?:(?P<then>{_DAY})\s+after\b(?!\s+(?:next|tomorrow))(?:\s+that\b)?"
    rf"|following\s+(?P<then2>{_DAY})\b)"
    # "Friday next week", "next week's Friday": that day of the week
    # after this one; "Wednesday week": a week on from the coming Wednesday.
    rf"|(?:on\s+)?(?P<nextweek>{_DAY})\s+(?:of\s+)?next\s+week\b"
    rf"|next\s+week(?:'s)?,?\s+(?:on\s+)?(?P<nextweek2>{_DAY})\b"
    rf"|(?:on\s+|this\s+)?(?P<dayweek>{_DAY})\s+week\b"
    # Not "Sunday, the 3 o'clock one": a time, not the 3rd.
    rf"|(?P<wd>{_DAY}),?\s+(?:the\s+)?(?P<dom>\d{{1,2}})(?:st|nd|rd|th)?\b"
    rf"{_NOT_A_TIME}"
    rf"(?!,?\s+(?:of\s+)?(?:{_MONTHS})\b)"
    rf"|(?:(?P<which>next|this|coming|on)\s+)?(?P<day>{_DAY})(?!s\b)"
    rf"(?!,?\s+(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)?\b{_NOT_A_TIME})"
    rf"(?!\s+after\s+next|,?\s+the\s+(?:1|one)\s+after)"
    rf"(?!,?\s+(?:{_MONTHS})\b)"
    # "pick the keys up the day before": a day from the date written before it.
    r"|the\s+day\s+(?P<beside>before|after)\b(?!\s+(?:tomorrow|yesterday))"
    # "on the 12th": the next 12th, where no month or weekday goes with it.
    # Not "the 2nd floor", "the 3rd attempt": a clause goes on after it.
    r"|\bthe\s+(?P<bare>\d{1,2})(?:st|nd|rd|th)\b"
    r"(?=\s*(?:$|[,.;!?)]|(?:so|and|at|for|then|please|instead|if|or|when|but|too)\b))"
    r"|(?:in|within)\s+(?:(?P<count>\d{1,3}|" + "|".join(_NUMBER_WORDS) + r")\s+)?"
    r"(?P<unit>days?|weeks?|months?|fortnight)(?:\s+(?:from|of)\s+(?:today|now))?"
    r"|(?P<count2>\d{1,3}|" + "|".join(_NUMBER_WORDS) + r")\s+(?P<unit2>days?|weeks?|months?)"
    r"\s+from\s+(?:today|now)|(?P<fortnight>(?:a|1) fortnight from (?:today|now)))\b",
    re.IGNORECASE,
)
# Where a system prompt states today's date.
_TODAY_CLAUSE = re.compile(
    r"\b(?:today(?:'s date)? is|the (?:current )?date is|it is now|current date:)"
    r"\s*([^.\n;]{4,40})",
    re.IGNORECASE,
)
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")


def today_of(system_prompt: str, now: datetime | None = None) -> date:
    """The date the system prompt states as today, else the host's date."""
    return stated_today(system_prompt) or (now or datetime.now()).date()


def stated_today(system_prompt: str) -> date | None:
    """The date the system prompt states as today, if it states one."""
    for clause in _TODAY_CLAUSE.findall(system_prompt or ""):
        iso = _ISO.search(clause)
        if iso:
            try:
                return date(int(iso.group(1)), int(iso.group(2)), int(iso.group(3)))
            except ValueError:
                continue
        written = _written_date(clause)
        if written is not None:
            return written
    return None


def _written_date(clause: str) -> date | None:
    import dateparser

    parsed = dateparser.parse(
        clause, languages=["en"], settings={"REQUIRE_PARTS": ["day", "month", "year"]}
    )
    return parsed.date() if parsed else None


def relative_dates(text: str, today: date) -> list[date]:
    """The dates `text`'s relative phrases name, in the order written."""
    return [when for when, _ in _read(text, today)]


def derived_dates(text: str, today: date) -> list[date]:
    """The dates `text` writes only as a day before or after another ("the
    day before"): dates of some other event than the one it dates."""
    read = _read(text, today)
    plain = {when for when, derived in read if not derived}
    return [when for when, derived in read if derived and when not in plain]


def _read(text: str, today: date) -> list[tuple[date, bool]]:
    """Each date the relative phrases name, once, in the order written,
    and whether it is a day before or after another ("the day before")."""
    from forge_core.guardrails.quantities import in_digits

    out: list[tuple[date, bool]] = []
    # "in thirty days" is "in 30 days" (text2num).
    for m in _RELATIVE.finditer(in_digits(text)):
        if m.group("beside") and not out:
            # "the day before" what? No date of this kind was written before it.
            continue
        when = _resolve(m, out[-1][0] if out and _follows(m) else today)
        if when is not None and when not in {d for d, _ in out}:
            out.append((when, bool(m.group("beside"))))
    return out


def _day_of_month(today: date, weekday: int, day: int) -> date | None:
    """The first date from today on that falls on `day` of its month and on
    `weekday` ("Friday the 19th"); else the first on `day`."""
    ahead = [today + timedelta(days=n) for n in range(0, 400)]
    on_day = [d for d in ahead if d.day == day]
    return next((d for d in on_day if d.weekday() == weekday), on_day[0] if on_day else None)


def _follows(m: re.Match[str]) -> bool:
    """A phrase read from the date written before it ("the Friday after",
    "the day before")."""
    return bool(m.group("then") or m.group("then2") or m.group("beside"))


def _resolve(m: re.Match[str], today: date) -> date | None:
    """The date `m` names, from `today` (for "the Friday after", from the
    date written before it)."""
    if m.group("beside"):
        return today + timedelta(days=-1 if m.group("beside").lower() == "before" else 1)
    if _follows(m):
        ahead = (_WEEKDAYS[(m.group("then") or m.group("then2")).lower()] - today.weekday()) % 7
        return today + timedelta(days=ahead or 7)
    if m.group("bare"):
        return _day_of_month(today, -1, int(m.group("bare")))
    if m.group("after"):
        return today + timedelta(days=2)
    if m.group("later"):
        ahead = (_WEEKDAYS[m.group("later").lower()] - today.weekday()) % 7 or 7
        return today + timedelta(days=ahead + 7)
    if (on := _week_on(m, today)) is not None:
        return on
    if m.group("wd"):
        return _day_of_month(today, _WEEKDAYS[m.group("wd").lower()], int(m.group("dom")))
    word = (m.group("word") or "").lower()
    if word:
        # "this morning" is today's.
        shift = {"tomorrow": 1, "yesterday": -1}.get(word, 0)
        return today + timedelta(days=shift)
    day = m.group("day") or m.group("nextweek") or m.group("nextweek2") or m.group("dayweek")
    if day:
        ahead = (_WEEKDAYS[day.lower()] - today.weekday()) % 7
        if ahead == 0 and (m.group("which") or "").lower() != "this":
            ahead = 7
        return today + timedelta(days=ahead)
    if m.group("fortnight"):
        return today + timedelta(days=14)
    count = (m.group("count") or m.group("count2") or "").lower()
    unit = (m.group("unit") or m.group("unit2")).lower()
    if not count and unit != "fortnight":
        return None  # "in days": no count
    n = int(count) if count.isdigit() else _NUMBER_WORDS.get(count, 1)
    if unit.startswith("month"):
        # The same day n months on, or that month's last day.
        year, month = divmod(today.month - 1 + n, 12)
        last = calendar.monthrange(today.year + year, month + 1)[1]
        return date(today.year + year, month + 1, min(today.day, last))
    return today + timedelta(days=n * (14 if unit == "fortnight" else 7 if unit[0] == "w" else 1))


def _week_on(m: re.Match[str], today: date) -> date | None:
    """ "Friday next week": that day of the week after this one; "Wednesday
    week": a week on from the coming Wednesday (from today, said on one)."""
    if nextweek := m.group("nextweek") or m.group("nextweek2"):
        monday = today - timedelta(days=today.weekday()) + timedelta(days=7)
        return monday + timedelta(days=_WEEKDAYS[nextweek.lower()])
    if m.group("dayweek"):
        ahead = (_WEEKDAYS[m.group("dayweek").lower()] - today.weekday()) % 7
        return today + timedelta(days=ahead + 7)
    return None


def week_starts(text: str, today: date) -> list[date]:
    """The Mondays of the weeks `text` names relative to today: "this
    week", "next week" (the one after this), "the week after next"."""
    out: list[date] = []
    monday = today - timedelta(days=today.weekday())
    for m in re.finditer(
        r"\b(this|next|coming|following)\s+week(?:'s)?\b|\bthe week after next\b", text, re.I
    ):
        which = (m.group(1) or "after next").lower()
        shift = {"this": 0, "next": 7, "coming": 7, "following": 7}.get(which, 14)
        start = monday + timedelta(days=shift)
        if start not in out:
            out.append(start)
    return out
