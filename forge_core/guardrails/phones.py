"""Phone numbers the user wrote, in the form the parameter takes: "my mobile
is 07700 900123 (UK)" is `+447700900123` where the tool wants the
international form.

A small model fills a phone parameter with a fragment ("07700"), the
instructor's hours or the country ("UK"), and after an error that says
"international format, a plus sign and the country code, without the
leading 0" it pastes pieces of that sentence. Here the numbers are read
with the maintained `phonenumbers` library (Google's libphonenumber
metadata): a string parameter named for a phone (`phone`, `mobile_number`,
`tel`) takes the numbers the request writes (the results' when it writes
none), a number read aloud digit by digit ("oh one six one, four nine six,
triple five") included. The country of a national number ("07700 ...") is the one the
conversation names ("UK", "Germany"), else the country code the schema or
an error shows ("+44"); with neither, a national number stays as written.
Written in the international E.164 form (`+447700900123`) when the
schema's pattern or description, or an error about the parameter, asks
for it ("international", "E.164", "country code", a leading `\\+`), else
as written and in E.164 both, of which the schema's pattern keeps those it
fits; a national number whose country nobody names, as written.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from forge_core.guardrails import (
    Preferred,
    TurnFacts,
    decide,
    flat_args,
    parameters,
    undecided,
)
from forge_core.guardrails.text import words
from forge_core.schema_rules import text_fits

PHONE_WORDS = frozenset("phone mobile tel telephone cell cellphone msisdn whatsapp fax sms".split())
# A phone number as people write it, for a national number whose country
# the conversation does not say: "0151 2234 778", "+44 20 7946 0958".
_WRITTEN = re.compile(r"(?<![\w+])\+?\d[\d ()./-]{5,}\d(?![\w])")
_DOTTED_DATE = re.compile(r"\d{4}-\d{2}-\d{2}|\d{1,2}[./]\d{1,2}[./]\d{2,4}")
# A pattern's `\+?` (a plus sign optional) does not ask for the international form.
_INTERNATIONAL = re.compile(
    r"international|e\.?164|country code|\\\+(?!\?)|^\^?\+(?!\?)", re.IGNORECASE
)
# Short names people give countries that are not their display names.
_ALIASES = {"uk": "GB", "britain": "GB", "england": "GB", "scotland": "GB", "usa": "US"}
_CALLING_CODE = re.compile(r"\+(\d{1,3})\b")
# Currencies of one country each (not the euro, nor "$"), and their country.
_CURRENCY_REGIONS = {
    "GBP": "GB",
    "£": "GB",
    "USD": "US",
    "CHF": "CH",
    "SEK": "SE",
    "NOK": "NO",
    "DKK": "DK",
    "JPY": "JP",
    "AUD": "AU",
    "CAD": "CA",
    "NZD": "NZ",
    "INR": "IN",
    "PLN": "PL",
    "CZK": "CZ",
}
_CURRENCY = re.compile(
    r"(?<![A-Za-z])(GBP|USD|CHF|SEK|NOK|DKK|JPY|AUD|CAD|NZD|INR|PLN|CZK)(?![A-Za-z])|(£)(?=\s?\d)"
)
# Digits read aloud one by one, as a phone number is dictated: "oh two oh,
# seven nine four six, double-oh five eight".
_DIGIT_WORDS = {
    "oh": "0", "o": "0", "zero": "0", "nought": "0", "nil": "0",
    "one": "1", "two": "2", "three": "3", "four": "4", "five": "5",
    "six": "6", "seven": "7", "eight": "8", "nine": "9",
}  # fmt: skip
_REPEATS = {"double": 2, "triple": 3}
_DIGIT = "|".join(sorted(_DIGIT_WORDS, key=len, reverse=True))
_SPOKEN_DIGIT = rf"(?:(?:double|triple)[ -])?(?:{_DIGIT})"
# Seven such digits or more in a row, with spaces, commas or hyphens between.
_SPOKEN_RUN = re.compile(rf"\b{_SPOKEN_DIGIT}(?:[ ,-]+{_SPOKEN_DIGIT}){{6,}}\b", re.IGNORECASE)
_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def takes_phone(name: str, schema: dict[str, Any]) -> bool:
    if schema.get("type") != "string" or "enum" in schema:
        return False
    return bool(set(words(name)) & PHONE_WORDS) or schema.get("format") == "phone"


@functools.lru_cache(maxsize=1)
def country_names() -> dict[str, str]:
    """Lower-case English country name -> region code (libphonenumber's
    own names), with the common short forms."""
    import phonenumbers
    from phonenumbers import geocoder

    out = {}
    for region in phonenumbers.SUPPORTED_REGIONS:
        name = geocoder._region_display_name(region, "en")
        if name:
            out[name.lower()] = region
    return out | _ALIASES


def region_of(texts: list[str]) -> str | None:
    """The country the texts name ("(UK)", "in Germany") or whose calling
    code they show ("+44"), as a region code."""
    import phonenumbers

    names = country_names()
    for text in texts:
        lowered = text.lower()
        for name, region in names.items():
            if re.search(rf"\b{re.escape(name)}\b", lowered):
                return region
    for text in texts:
        for code in _CALLING_CODE.findall(text):
            region = phonenumbers.region_code_for_country_code(int(code))
            if region and region != "ZZ":
                return str(region)
    # A price in a country's own currency ("85.00 GBP", "£85"): that
    # country, where the texts price in one such currency only.
    priced = {
        _CURRENCY_REGIONS[(m.group(1) or m.group(2)).upper()]
        for text in texts
        for m in _CURRENCY.finditer(text)
    }
    return priced.pop() if len(priced) == 1 else None


def spoken_digits(text: str) -> str:
    """`text` with each run of seven or more digits read aloud written in
    digits, its comma-separated groups kept apart by a space: "oh two oh,
    seven nine four six, double-oh five eight" -> "020 7946 0058".
    Shorter runs ("one or two") are left as they are."""

    def digits(run: re.Match[str]) -> str:
        groups = []
        for group in run.group(0).split(","):
            out = ""
            for word in re.findall(rf"(?:double|triple)[ -](?:{_DIGIT})|{_DIGIT}", group, re.I):
                times, _, digit = word.lower().replace("-", " ").rpartition(" ")
                out += _DIGIT_WORDS[digit] * _REPEATS.get(times, 1)
            groups.append(out)
        return " ".join(g for g in groups if g)

    return _SPOKEN_RUN.sub(digits, text)


def written_phones(text: str) -> list[str]:
    """Numbers written like phone numbers (seven digits or more, no date),
    as written: a national number's form where its country is unknown."""
    return [
        m.group(0)
        for m in _WRITTEN.finditer(text)
        if sum(c.isdigit() for c in m.group(0)) >= 7 and not _DOTTED_DATE.fullmatch(m.group(0))
    ]


# "my mobile is", "call me on", "tel:": what says the number after it is a phone's.
_PHONE_LABEL = re.compile(
    r"\b(?:phone|mobile|tel|telephone|cell|cellphone|landline|whatsapp|call|ring|text)\b"
    r"[^.\d]{0,16}$",
    re.IGNORECASE,
)


def labelled_phones(text: str) -> set[str]:
    """The phone numbers `text` says are phones ("my mobile is 0161 496 0000"),
    as written and with their digits alone: no id of another kind."""
    out: set[str] = set()
    for m in _WRITTEN.finditer(text):
        if sum(c.isdigit() for c in m.group(0)) >= 7 and _PHONE_LABEL.search(text[: m.start()]):
            out |= {m.group(0), re.sub(r"\D", "", m.group(0)), *m.group(0).split()}
    return out


def phones_in(text: str, region: str | None) -> list[tuple[str, str]]:
    """The phone numbers `text` writes, (as written, E.164): international
    ones ("+49 30 901820") always, national ones ("07700 900123") where the
    `region` is known; nine digits or more, and no date."""
    import phonenumbers
    from phonenumbers import Leniency, PhoneNumberFormat

    out: list[tuple[str, str]] = []
    matcher = phonenumbers.PhoneNumberMatcher(text, region or "ZZ", leniency=Leniency.POSSIBLE)
    for match in matcher:
        raw = match.raw_string.strip()
        digits = re.sub(r"\D", "", raw)
        if len(digits) < 9 or _ISO_DATE.search(raw) or raw[:1] not in "+0(":
            continue
        full = phonenumbers.format_number(match.number, PhoneNumberFormat.E164)
        if (raw, full) not in out:
            out.append((raw, full))
    return out


class PhoneNumbers:
    name = "phone_numbers"

    def prefer(self, facts: TurnFacts, out: Preferred) -> None:
        results = [text for _, text in reversed(facts.results)]
        prompt = [facts.workflow.system_prompt or ""]
        # A number read aloud is found as if written in digits.
        requests = [spoken_digits(text) for text in facts.requests]
        for tool in facts.workflow.tools:
            for name, schema in parameters(tool):
                key = f"{tool.name}.{name}"
                if not takes_phone(name, schema) or not undecided(out, key):
                    continue
                # The failed calls that sent this parameter, nested objects' too.
                failed = [f for f in facts.failures if f.tool == tool.name]
                errors = [f.error for f in failed if name in flat_args(f.args)]
                directions = [str(schema.get("pattern", "")), str(schema.get("description", ""))]
                international = any(_INTERNATIONAL.search(t) for t in directions + errors)
                region = region_of(requests + prompt + directions + errors + results)
                for source in (requests, results):
                    found = [p for text in source for p in phones_in(text, region)]
                    if found:
                        break
                forms = [full for _, full in found]
                if not international:
                    forms = [raw for raw, _ in found] + forms
                if not forms and not international:
                    # No country to read a national number by: as written.
                    forms = [p for text in requests for p in written_phones(text)]
                tried = {str(flat_args(f.args).get(name)) for f in failed}
                fits = [v for v in dict.fromkeys(forms) if text_fits(schema, v) and v not in tried]
                decide(out, key, fits, self.name)
