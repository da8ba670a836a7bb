"""Quantities with their units: "120 dollars" fills `price_usd`, "25 minutes"
fills `wait_minutes`, "12 crates" fills `crates`, "three more days" fills
`extra_hours` with 72.

A numeric parameter says its unit in its name or description (`price_usd`,
`wait_minutes`, "Target temperature in Celsius"), or names what it counts
(`crates`, `nights`). A number written with that unit (or with a currency
sign: $120) is that parameter's value. The user's own quantities come first
(the request is authoritative: "18 degrees" over a result's "currently 15
C"); a result's count only where the request writes none ("late by 25
minutes" for the report's `wait_minutes`). Numbers in words are read with
text2num, and another unit of the same kind is converted with pint ("three
days" for hours, "90 minutes" for hours). A parameter with no unit, or
whose unit the conversation never writes, keeps its other rules.
"""

from __future__ import annotations

import calendar
import functools
import re
from functools import lru_cache, partial
from typing import Any

from forge_core.guardrails import (
    Preferred,
    TurnFacts,
    decide,
    first_found,
    parameters,
    parent_keys,
    undecided,
)
from forge_core.guardrails.addresses import street_addresses
from forge_core.guardrails.mentions import reports
from forge_core.guardrails.text import GENERIC, stem, words
from forge_core.schema_rules import text_fits

# Unit families and how people write them. Single letters only count where a
# parameter's name ends with them (`target_c`); in text they follow a number.
_FAMILIES: dict[str, tuple[str, ...]] = {
    "eur": ("eur", "euro", "euros", "€"),
    "usd": ("usd", "dollar", "dollars", "$"),
    "gbp": ("gbp", "pound", "pounds", "sterling", "quid", "£"),
    "jpy": ("jpy", "yen", "¥"),
    "chf": ("chf", "franc", "francs"),
    "celsius": ("celsius", "c", "°c", "degree", "degrees", "deg"),
    "fahrenheit": ("fahrenheit", "f", "°f"),
    "percent": ("percent", "percentage", "pct", "%"),
    "second": ("second", "seconds", "sec", "secs", "s"),
    "minute": ("minute", "minutes", "min", "mins"),
    "hour": ("hour", "hours", "hr", "hrs", "h"),
    "day": ("day", "days"),
    "week": ("week", "weeks"),
    "fortnight": ("fortnight", "fortnights"),
    "month": ("month", "months"),
    "year": ("year", "years"),
    "night": ("night", "nights"),
    "kg": ("kg", "kilogram", "kilograms", "kilo", "kilos"),
    "gram": ("g", "gram", "grams"),
    "km": ("km", "kilometre", "kilometres", "kilometer", "kilometers"),
    "mile": ("mile", "miles", "mi"),
    "meter": ("m", "metre", "metres", "meter", "meters"),
    "foot": ("ft", "foot", "feet"),
    "inch": ("inch", "inches"),
    "square_foot": ("sq", "sqft"),
    "square_metre": ("sqm", "m2", "m²"),
    "litre": ("l", "litre", "litres", "liter", "liters"),
    "millilitre": ("ml", "millilitre", "millilitres", "milliliter", "milliliters"),
    "gb": ("gb", "gigabyte", "gigabytes", "gib"),
    "mb": ("mb", "megabyte", "megabytes", "mib"),
}
# Words that count people: "six people" fills `guests`, `party_size`, `pax`.
_PEOPLE = frozenset(
    stem(w)
    for w in "people persons person guests guest pax adults adult diners attendees "
    "participants party covers seats travellers travelers passengers players visitors".split()
)
# How people say how many they are: "six of us", "a party of six", "we are
# four", "there'll be 3 of us". Read as "5 people".
_WE_COUNT = re.compile(
    r"\b(\d+)\s+of\s+us\b|\bparty\s+of\s+(\d+)\b|\bwe(?:'re|\s+are|\s+will\s+be)\s+(\d+)\b",
    re.IGNORECASE,
)


def party_size(requests: list[str]) -> int | None:
    """How many people the request says it is for ("seven of us", "a
    party of 6", "4 people"), where it says one number."""
    found = {n for text in requests for n in quantities(text, set(), set(_PEOPLE), True)}
    return int(next(iter(found))) if len(found) == 1 else None


def _as_people(text: str) -> str:
    """`text` with "six of us" and the like written "6 people"."""
    return _WE_COUNT.sub(lambda m: f"{next(g for g in m.groups() if g)} people", text)


_BY_WORD: dict[str, str] = {w: fam for fam, forms in _FAMILIES.items() for w in forms}
_SIGNS = {"€": "eur", "$": "usd", "£": "gbp", "¥": "jpy"}

# A number, optionally after a currency sign, and the word or sign after it
# ("2 more weeks": one filler word may stand between).
_QUANTITY = re.compile(
    # Not the day of a date or the end of a range ("2026-04-28 documents").
    r"(?P<sign>[€$£¥])?\s?(?P<neg>(?<![\w-])-)?(?P<num>(?<![\w.])(?<!\d[-/])\d{1,3}(?:,\d{3})+(?:\.\d+)?"
    # Not the last group of a grouped number ("200" of "1,900.00-2,200.00").
    r"|(?<![\w.])(?<!\d[-/])(?<!\d,)\d+(?:\.\d+)?)"
    r"(?!\d|:\d)(?P<ord>(?:st|nd|rd|th)(?![A-Za-z]))?"
    r"(?:-|\s*)(?:(?:more|extra|additional|further|whole|full)\s+)?"
    # A unit is a whole word: "18 Göteborg" is no 18 g.
    r"(?P<unit>°[cCfF]|%|[A-Za-z]+(?![^\W\d_]))?(?P<compound>(?:-[A-Za-z]+)+)?"
)
# Families pint converts between (2 weeks are 14 days): their pint units.
_PINT_UNITS = {
    "second": "second",
    "minute": "minute",
    "hour": "hour",
    "day": "day",
    "week": "week",
    "fortnight": "fortnight",
    "month": "month",
    "year": "year",
    "kg": "kilogram",
    "gram": "gram",
    "km": "kilometer",
    "mile": "mile",
    "meter": "meter",
    "foot": "foot",
    "inch": "inch",
    "square_foot": "square_foot",
    "square_metre": "square_meter",
    "litre": "liter",
    "millilitre": "milliliter",
    "gb": "gigabyte",
    "mb": "megabyte",
}


# A sum of money whose currency the parameter leaves open (`amount`,
# `total_price`) takes an amount in any currency; a sibling says which.
_MONEY = frozenset(stem(w) for w in "amount price cost total fee payment budget charge".split())
_CURRENCIES = ("eur", "usd", "gbp", "jpy", "chf")


# A count whose name says only that it counts: it counts what the request
# orders ("40 copies", "3 bags"), written `ANY_NOUN` among the counted nouns.
_ANY_COUNT = frozenset(stem(w) for w in "quantity qty count copies units pieces items".split())
ANY_NOUN = "*"
# Words after a number that are no thing counted: "5 of", "2 to 4", months.
_NOT_NOUNS = frozenset(
    "of to at and or the in on for with per from by am pm x times here there now please "
    "is are was were".split()
    + [m.lower() for m in calendar.month_name if m]
    + [m.lower() for m in calendar.month_abbr if m]
    + [d.lower() for d in calendar.day_name]
)


def _a_counted_noun(unit: str) -> bool:
    """Whether `unit`, the word after a number, can be what is counted: a
    word of three letters or more, not a code ("1AB"), not a unit."""
    return (
        len(unit) >= 3
        and unit.isalpha()
        and not unit.isupper()
        and unit.lower() not in _NOT_NOUNS
        and unit.lower() not in _BY_WORD
    )


_DOERS = re.compile(r"[a-z]{3,}ers")


_NOT_UNIT = re.compile(r"\b(?:not|never|no|rather than|instead of)\s+(?:in\s+)?[A-Za-z%°]+", re.I)


def _families(name: str, schema: dict[str, Any]) -> tuple[set[str], set[str]]:
    """The unit families a parameter names, and the stems of the nouns it
    counts (`crates`, `nights`)."""
    name_words = words(name)
    families = set()
    for i, w in enumerate(name_words):
        fam = _BY_WORD.get(w)
        if fam and (len(w) > 1 or i == len(name_words) - 1):
            families.add(fam)
    # "Amount in the destination currency (not dollars)": a unit said no to
    # is not the parameter's.
    described = _NOT_UNIT.sub(" ", str(schema.get("description", "")))
    for w in re.findall(r"°[cCfF]|%|[A-Za-z]{2,}", described):
        fam = _BY_WORD.get(w.lower())
        # "in Celsius", "in euros", "minutes": a unit word of two letters or more.
        if fam:
            families.add(fam)
    if not families and {stem(w) for w in name_words} & _MONEY:
        families = set(_CURRENCIES)
    counted = {stem(w) for w in name_words if w not in GENERIC and len(w) > 2}
    # `riders`, `climbers`: an integer count of people who do something,
    # which "the four of us" gives.
    doers = schema.get("type") == "integer" and bool(_DOERS.fullmatch(name.lower()))
    if counted & _PEOPLE or doers:
        counted |= _PEOPLE
    if not families and counted and counted <= _ANY_COUNT:
        # `quantity`, `copies`: a count of whatever the request orders.
        counted.add(ANY_NOUN)
    return families, counted


@lru_cache(maxsize=1)
def _units() -> Any:
    import pint

    return pint.UnitRegistry()


@lru_cache(maxsize=256)
def _factor(source: str, target: str) -> float | None:
    """How many `target`s one `source` is (pint), None across dimensions."""
    if source not in _PINT_UNITS or target not in _PINT_UNITS:
        return None
    import pint

    units = _units()
    try:
        return float((1 * units(_PINT_UNITS[source])).to(_PINT_UNITS[target]).magnitude)
    except pint.DimensionalityError:
        return None


_NUMBER_WORD_HYPHEN = re.compile(
    r"\b(one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|"
    r"thirty|forty|fifty|sixty|ninety|hundred)-(?=[a-z])(?!off\b)",
    re.IGNORECASE,
)


@lru_cache(maxsize=4096)
def in_digits(text: str) -> str:
    """Numbers written in words as digits ("three more days" -> "3 more
    days"; text2num)."""
    from text_to_num import alpha2digit

    # "a two-hour lesson": text2num reads no number glued to its noun.
    text = _NUMBER_WORD_HYPHEN.sub(r"\1 ", text)
    out: str = alpha2digit(text, "en", threshold=0)
    return spoken_fractions(_SPOKEN_MINUS.sub("-", out))


def spoken_fractions(text: str) -> str:
    """Fractions spoken after a number, which text2num leaves as words, as
    part of it: "20 and a half" -> "20.5", "a metre and a half" -> "1.5 metre";
    and "a fortnight" as "1 fortnight"."""
    text = _ONE_FORTNIGHT.sub("1 fortnight", text)
    text = _AND_FRACTION.sub(
        lambda m: f"{int(m.group(1)) + _FRACTIONS[m.group(2).lower()]:g}", text
    )
    return _ONE_AND_HALF.sub(r"1.5 \1", text)


# "minus twelve", "negative 3": a sign, not a subtraction ("30 minus 10").
_SPOKEN_MINUS = re.compile(r"(?<!\d)(?<!\d )\b(?:minus|negative)\s+(?=\d)", re.IGNORECASE)
# "for the next fortnight", "once a fortnight": one, as text2num leaves it.
_ONE_FORTNIGHT = re.compile(r"\b(?:a|the next|the coming|next)\s+fortnight\b", re.IGNORECASE)
# "20 and a half", "3 and three quarters"; "a metre and a half".
# (text2num has already written "three quarters" as "3 quarters".)
_FRACTIONS = {"a half": 0.5, "a quarter": 0.25, "3 quarters": 0.75}
_AND_FRACTION = re.compile(r"\b(\d+) and (a half|a quarter|3 quarters)\b", re.IGNORECASE)
_ONE_AND_HALF = re.compile(r"\ban? ([a-z]+) and a half\b", re.IGNORECASE)


_SQUARE = re.compile(r"\bsquare\s+(?:(foot|feet)|(metres?|meters?))\b", re.IGNORECASE)


def measures(text: str) -> set[str]:
    """The quantities with a unit `text` writes, as tokens of number and
    unit family ("Five kilos" and "5 kg" are both
    "5kg"): what tells entries of a listing apart by size."""
    text = _SQUARE.sub(lambda m: "sqft" if m.group(1) else "sqm", in_digits(text))
    out = set()
    for m in _QUANTITY.finditer(text):
        family = _SIGNS.get(m.group("sign") or "") or _BY_WORD.get((m.group("unit") or "").lower())
        if family and not m.group("ord"):
            number = float((m.group("neg") or "") + m.group("num").replace(",", ""))
            out.add(f"{number:g}{family}")
    return out


def _number(raw: str, integer: bool) -> int | float | None:
    value = float(raw.replace(",", ""))
    if integer:
        return int(value) if value.is_integer() else None
    return int(value) if value.is_integer() else value


# How people count without numbers, and the nouns they count with in
# speech: "a couple of kayaks", "half a dozen eggs", "two grown-ups and
# our three kids".
_SPOKEN_COUNTS = (
    (re.compile(r"\bhalf an? dozen\b", re.IGNORECASE), "6"),
    (re.compile(r"\b(?:an? )?dozen\b(?! \d)", re.IGNORECASE), "12"),
    (re.compile(r"\b(?:an? )?(?:couple|pair) of\b", re.IGNORECASE), "2"),
    (re.compile(r"\bgrown[- ]?ups\b", re.IGNORECASE), "adults"),
    (re.compile(r"\bgrown[- ]?up\b", re.IGNORECASE), "adult"),
    (
        re.compile(r"\b(?<=\d )kids\b|\bkids\b(?= (?:aged|who|under|over))", re.IGNORECASE),
        "children",
    ),
)


def plain_counts(text: str) -> str:
    """`text` with counts said without numbers, and the nouns said for
    adults and children, written plainly: "a couple of kayaks" -> "2
    kayaks", "3 kids" -> "3 children"."""
    for pattern, plain in _SPOKEN_COUNTS:
        text = pattern.sub(plain, text)
    return text


def measured_as(unit: str) -> tuple[set[str], set[str]]:
    """The unit families and counted nouns a unit word stands for: "m" and
    "metres" are metres, "guests" counts people ("six people" too)."""
    word = unit.lower()
    families = {_BY_WORD[word]} if word in _BY_WORD else set()
    counted = {stem(word)} if len(word) > 2 else set()
    if counted & _PEOPLE:
        counted |= _PEOPLE
    return families, counted


def quantities(
    text: str, families: set[str], counted: set[str], integer: bool, fraction: bool = False
) -> list[Any]:
    """The numbers `text` writes with one of `families`' units, or right
    before one of the `counted` nouns."""
    out: list[Any] = []
    text = plain_counts(in_digits(text))
    if counted & _PEOPLE:
        text = _as_people(text)
    if ANY_NOUN in counted:
        # "8 Mill Lane" counts no mills.
        for street in street_addresses(text):
            text = text.replace(street, " ")
    for m in _QUANTITY.finditer(text):
        unit = (m.group("unit") or "").lower()
        fam = _SIGNS.get(m.group("sign") or "") or _BY_WORD.get(unit)
        if m.group("ord"):
            # "the 5th deck" is deck 5, "the 3rd day" is no count of days.
            ordinal = int(m.group("num"))
            if unit and stem(unit) in counted and ordinal not in out:
                out.append(ordinal)
            continue
        # "2 e-bikes" counts `ebikes`; "3 day-passes" is still 3 of a day's unit.
        whole = unit + (m.group("compound") or "").replace("-", "").lower()
        named = (
            bool(unit)
            and (
                stem(unit) in counted
                or stem(whole) in counted
                or (
                    ANY_NOUN in counted
                    and not fam
                    and _a_counted_noun(m.group("unit"))
                    # Not the digits of a code ("ACC-5120").
                    and text[max(0, m.start("num") - 1) : m.start("num")] not in ("-", "/")
                )
            )
        )
        factor: float | None = 1.0
        if not ((fam in families) or named):
            # Another unit of the same kind: "3 days" for `extra_hours`.
            factor = next((f for t in families if fam and (f := _factor(fam, t))), None)
        if factor is None:
            continue
        if fam == "percent" and fraction:
            # "as a decimal: 5% is 0.05".
            factor = factor / 100
        number = float((m.group("neg") or "") + m.group("num").replace(",", ""))
        value = _number(str(number * factor), integer)
        if value is not None and value not in out:
            out.append(value)
    return out


class Quantities:
    name = "quantities"

    def prefer(self, facts: TurnFacts, out: Preferred) -> None:
        results = [text for _, text in reversed(facts.results)]
        for tool in facts.workflow.tools:
            parents = parent_keys(tool)
            for name, schema in parameters(tool):
                kind = schema.get("type")
                key = f"{tool.name}.{name}"
                if _object_array(schema) and key not in out.counts:
                    # "my two children" for `children`: at most two items.
                    stated = _stated_count(name, facts.requests)
                    if stated is not None:
                        out.counts[key] = stated
                    continue
                if takes_currency(name, schema) and undecided(out, key):
                    written = first_found((facts.requests, results), currencies_in)
                    fits = [c for c in written if text_fits(schema, c)]
                    if "enum" in schema:
                        fits = [c for c in fits if c in schema["enum"]]
                    decide(out, key, fits, self.name)
                    continue
                if kind not in ("integer", "number") or not undecided(out, key):
                    continue
                families, counted = _families(name, schema)
                described = str(schema.get("description", "")).lower()
                fraction = "decimal" in described or "fraction" in described
                if not families and not counted:
                    continue
                read = functools.partial(
                    quantities,
                    families=families,
                    counted=counted,
                    integer=kind == "integer",
                    fraction=fraction,
                )
                requests = facts.requests
                if reports(facts, tool.name):
                    # "How many of our five helpers go free?" asks; the
                    # result's "2 free places" answers.
                    requests = [_statements(text) for text in requests]
                found = first_found((requests, results), read)
                if _NUMBERED.search(name):
                    # `locker_number`: "locker 31" names it, not "31 lockers".
                    found = (
                        first_found((facts.requests, results), partial(_named, counted)) or found
                    )
                if not found and "percent" in families and not fraction:
                    # "pay half now" for `upfront_pct`: 50.
                    found = first_found((facts.requests,), _fraction_words)
                if "enum" in schema:
                    found = [v for v in found if v in schema["enum"]]
                if len(found) > 1:
                    found = _in_labelled_clauses(name, found, facts, read) or found
                if len(found) > 1 and name in parents:
                    # `balance_due.amount`: "balance 212.50 GBP due by ...".
                    found = _in_labelled_clauses(parents[name], found, facts, read) or found
                if len(found) > 1 and reports(facts, tool.name) and not families:
                    found = _counting_head(name, found, results) or found
                if len(found) > 1 and reports(facts, tool.name):
                    found = _labelled_right_before(name, found, results) or found
                decide(out, key, found, self.name)


def _counting_head(name: str, found: list[Any], results: list[str]) -> list[Any]:
    """Of several numbers a report could take, those the results write
    before the name's head noun, with at most two words between: "2 free
    places" for `free_helper_places`, not "One helper free per 10 children";
    [] where none, or every one, is."""
    heads = [stem(w) for w in words(name) if w not in GENERIC and len(w) > 2][-1:]
    if not heads:
        return []
    kept = [
        value
        for text in results
        for m in re.finditer(r"(?<![\d.,])(\d+(?:\.\d+)?)((?:\s+[A-Za-z-]+){1,3})", in_digits(text))
        if heads[0] in {stem(w) for w in words(m.group(2))}
        for value in found
        if str(value) == m.group(1)
    ]
    kept = list(dict.fromkeys(kept))
    return kept if 0 < len(kept) < len(found) else []


def _labelled_right_before(name: str, found: list[Any], results: list[str]) -> list[Any]:
    """Of several numbers a report could take, those the results write
    right after a word of the name (its unit and generic words aside), a
    colon or "is"/"of" between at most, in the newest result that has
    any: "Upload 7.2 Mbps" for `upload_mbps`, not "Upload below the 10
    Mbps floor" nor the account's older "guaranteed upload 10 Mbps"; []
    where none, or every one, is."""
    wanted = {stem(w) for w in words(name) if w not in GENERIC and w not in _BY_WORD}
    wanted = {w for w in wanted if len(w) > 2}
    if not wanted:
        return []
    for text in results:
        # The newest result that labels some: what the last lookup found.
        kept = [
            value
            for m in _LABEL_THEN_NUMBER.finditer(in_digits(text))
            if stem(m.group(1)) in wanted
            for value in found
            if _number_text(value) == m.group(2).replace(",", "")
        ]
        kept = list(dict.fromkeys(kept))
        if kept:
            return kept if len(kept) < len(found) else []
    return []


_LABEL_THEN_NUMBER = re.compile(
    r"\b([A-Za-z]{3,})(?:\s*:\s*|\s+(?:is|of)\s+|\s+)[£$€]?(\d[\d,]*(?:\.\d+)?)"
)


def _number_text(value: Any) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


# A question's clause that asks for a number: "how many of our five helpers
# go free", "how much is left to pay".
_ASKS_NUMBER = re.compile(r"(?:^|(?<=[,;:?.!]))[^,;:?.!]*\bhow (?:many|much)\b[^,;:?.!]*", re.I)


def _statements(text: str) -> str:
    """`text` without the clauses that ask for a number: what a reply
    reports is not the number such a question mentions ("five" in "how
    many of our five helpers go free"); "which room is 9C in for fourth
    lesson?" still states the lesson."""
    return _ASKS_NUMBER.sub(" ", text)


# A share in words, as a percentage: "half now", "three quarters of it".
_SHARES = (
    (re.compile(r"\bthree[ -]quarters\b", re.IGNORECASE), 75),
    (re.compile(r"\b(?:a|one)[ -]quarter\b(?! (?:past|to)\b)", re.IGNORECASE), 25),
    (
        re.compile(
            r"\b(?:half|fifty[ -]fifty)\b(?! (?:past|an? hour|\d"
            r"|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\b)",
            re.IGNORECASE,
        ),
        50,
    ),
)


def _fraction_words(text: str) -> list[int]:
    """The shares `text` writes in words, as percentages."""
    found = [(m.start(), share) for pattern, share in _SHARES for m in pattern.finditer(text)]
    return list(dict.fromkeys(share for _, share in sorted(found)))


# A parameter that holds the number of one thing: `locker_number`, `table_no`.
_NUMBERED = re.compile(r"(?:^|_)(?:number|no|num|nr)$|[a-z]Number$")


def _named(counted: set[str], text: str) -> list[int]:
    """The numbers `text` writes right after one of the `counted` nouns
    ("locker 31", "table no. 12")."""
    return list(
        dict.fromkeys(
            int(m.group(2))
            for m in re.finditer(
                r"\b([A-Za-z]+)\s+(?:no\.?\s*|number\s+|#\s*)?(\d{1,6})\b(?![.,:/-]\d)", text
            )
            if stem(m.group(1).lower()) in counted
        )
    )


def _object_array(schema: dict[str, Any]) -> bool:
    items = schema.get("items")
    return schema.get("type") == "array" and isinstance(items, dict) and "properties" in items


def _stated_count(name: str, requests: list[str]) -> int | None:
    """The one count the request writes of what an array's name says it
    holds ("two children", "3 rooms"), else None."""
    counted = {stem(w) for w in words(name) if w not in GENERIC and len(w) > 2}
    found = {n for text in requests for n in quantities(text, set(), counted, integer=True)}
    return found.pop() if len(found) == 1 and 0 < next(iter(found)) <= 50 else None


def currencies_in(text: str) -> list[str]:
    """The ISO codes of the currencies `text` writes amounts in ("€1,284.60"
    -> EUR, "300 pounds" -> GBP), in the order written."""
    out = []
    for m in _QUANTITY.finditer(in_digits(text)):
        fam = _SIGNS.get(m.group("sign") or "") or _BY_WORD.get((m.group("unit") or "").lower())
        if fam in _CURRENCIES and fam.upper() not in out:
            out.append(fam.upper())
    return out


def takes_currency(name: str, schema: dict[str, Any]) -> bool:
    """A string parameter for a currency code (`currency`, `payout_currency`)."""
    return schema.get("type") == "string" and words(name)[-1:] == ["currency"]


def only_a_quantity(value: str, texts: list[str]) -> bool:
    """`value` is a number that every text writing it writes with a unit or
    a currency sign ("18 degrees", "$120"): a quantity, never an id."""
    if not re.fullmatch(r"\d[\d,]*(?:\.\d+)?", value):
        return False
    seen = False
    for text in texts:
        for m in _QUANTITY.finditer(text):
            if m.group("num") != value or text[m.start("num") - 1 : m.start("num")] == ":":
                # The minutes of a clock time ("08:30") are no number of their own.
                continue
            seen = True
            unit = (m.group("unit") or "").lower()
            if not (m.group("sign") or unit in _BY_WORD):
                return False
    return seen


# A currency's code beside its amount, either side ("88.00 CHF", "EUR 20").
_AMOUNT = r"\d[\d,]*(?:\.\d+)?"
_MONTH_WORDS = (
    "jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec|january|february|march|april|june"
    "|july|august|september|october|november|december"
)
# What makes four digits a year: a month or a date's preposition before it,
# "-born" or "-built" after it ("May-June 2027", "since 2019", "2019-built").
_YEAR_BEFORE = rf"(?:{_MONTH_WORDS}|in|of|since|until|from|by|during|year)\.?,?\s+"
_YEAR_AFTER = r"-(?:born|built|registered|made)\b"


def only_a_unit_or_year(value: str, texts: list[str]) -> bool:
    """`value` is three capitals every text writes beside an amount (a
    currency's code), or a year every text writes as one: a unit or a date's
    part, never an id a lookup takes."""
    if re.fullmatch(r"[A-Z]{3}", value):
        beside = re.compile(rf"{_AMOUNT}\s?{value}\b|\b{value}\s?{_AMOUNT}")
    elif re.fullmatch(r"(?:1[5-9]|20)\d\d", value):
        beside = re.compile(
            # ... or a citation's last part: "(Smith Elder, 1847)".
            rf"(?:{_YEAR_BEFORE}){value}\b|\b{value}{_YEAR_AFTER}|,\s*{value}\)",
            re.IGNORECASE,
        )
    else:
        return False
    seen = False
    for text in texts:
        # Not a date's year ("2027-04-09"), which is no candidate apart.
        written = len(re.findall(rf"(?<![\w-]){value}(?!\w|-\d)", text))
        if not written:
            continue
        seen = True
        if len(beside.findall(text)) < written:
            return False
    return seen


# Where a labelled amount's clause ends: a sentence, a semicolon, a line.
_CLAUSES = re.compile(r"\.\s+|;\s*|\n+|\.$")


def _in_labelled_clauses(name: str, found: list[Any], facts: TurnFacts, read: Any) -> list[Any]:
    """Of several `found` numbers, those written in a clause that holds
    every word of the parameter's name but its unit and generic words:
    "Resale (trade) value: 2,400.00 EUR" for `resale_value_eur`, "Service
    charge: 40.00 EUR, UNPAID" for `charge_unpaid_eur`; []
    where no clause, or every one, tells them apart."""
    wanted = {stem(w) for w in words(name) if w not in GENERIC and w not in _BY_WORD}
    if not wanted:
        return []
    texts = [*facts.requests, *(text for _, text in facts.results)]
    kept = [
        value
        for text in texts
        for clause in _CLAUSES.split(text)
        if wanted <= {stem(w) for w in words(clause)}
        for value in read(clause)
        if value in found
    ]
    kept = list(dict.fromkeys(kept))
    return kept if 0 < len(kept) < len(found) else []
