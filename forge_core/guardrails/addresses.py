"""Addresses the user wrote that no id rule reads: web domains and
countries.

"Could you register larkspur-ceramics.co.uk?" fills `domain`; "Storgatan
12, Göteborg, Sweden" fills a two-letter `country_code` with `SE`. A small
model writes an id it saw ("QL-1") for the domain, and a number for the
country code, since every seen id is admissible to the grammar and no
id rule knows either. Here:

- a string parameter for a web address (`domain`, `hostname`, `website`,
  `url`, or `format: hostname`/`uri`) takes the domains the request writes
  (the results' when it writes none), e-mail addresses aside; a URL
  parameter takes them as written with their scheme where they have one;
- a string parameter for a country's code (`country_code`, `countryCode`,
  or `country` whose schema wants two capitals: a pattern, `maxLength` 2,
  "ISO" or "two-letter" in its description) takes the ISO 3166 codes of
  the countries the conversation names, read with libphonenumber's
  country names (phones.py), results after the request;
- a string parameter for a street line (`line1`, `address_line`, `street`)
  takes the street addresses the request writes ("8 Mill Lane": a house
  number, capitalised words and a street word), results after the request;
- first, an object holding a postal address (a postcode and a line or a
  town) takes its parts from the address written around a postcode
  (postal_addresses.py).
"""

from __future__ import annotations

import functools
import re
from typing import Any

from forge_core.guardrails import Preferred, TurnFacts, decide, first_found, parameters, undecided
from forge_core.guardrails.phones import country_names
from forge_core.guardrails.postal_addresses import prefer_postal_parts
from forge_core.guardrails.text import words
from forge_core.schema_rules import text_fits

_WEB_WORDS = frozenset("domain hostname host website site url homepage".split())
# "larkspur-ceramics.co.uk", "https://shop.example.com/path": labels of
# letters, digits and dashes joined by dots, ending in a letter-only label.
_DOMAIN = re.compile(
    r"(?<![@\w.-])(?:https?://)?(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,24}"
    r"(?:/[^\s,;)]*)?(?![\w@-])",
    re.IGNORECASE,
)


def takes_web_address(name: str, schema: dict[str, Any]) -> bool:
    if schema.get("type") != "string" or "enum" in schema:
        return False
    return bool(set(words(name)[-1:]) & _WEB_WORDS) or schema.get("format") in ("hostname", "uri")


def web_addresses(text: str, whole: bool) -> list[str]:
    """The domains `text` writes; with `whole`, as written (scheme and
    path), else the host alone. Numbers ("4.5") are no domains."""
    out = []
    for m in _DOMAIN.finditer(text):
        written = m.group(0).rstrip(".")
        host = re.sub(r"^https?://", "", written, flags=re.I).split("/")[0]
        if not re.search(r"[a-z]", host.rsplit(".", 1)[0], re.I):
            continue
        value = written if whole else host.lower()
        if value not in out:
            out.append(value)
    return out


# "8 Mill Lane", "22 Orchard Road", "221b Baker St": a house number,
# one to three capitalised words and a street word.
_STREET_WORDS = (
    "Street|St|Road|Rd|Lane|Ln|Avenue|Ave|Close|Drive|Dr|Grove|Terrace|Way|Place|Pl|"
    "Crescent|Court|Ct|Row|Square|Sq|Hill|Gardens|Walk|Mews|Parade|Boulevard|Blvd|Rise|Green|"
    "Vale|View|Park|Parkway|Pkwy|Circle|Cir|Trail|Plaza|Loop|Quay|Wharf|Chase|Mount|Heights|"
    "Meadows?|Fields|Yard|Gate|Embankment|Approach|Highway|Hwy|Alley|Path|Passage|Circus|Wynd"
)
STREET = re.compile(
    # "Flat 4C, 31 Harbour Road": the flat or unit before it belongs to it.
    r"(?:\b(?:Flat|Apartment|Apt|Unit|Suite)\s+[A-Z0-9]{1,4},?\s+)?"
    rf"(?<![\w-])\d{{1,4}}[A-Za-z]?,?\s+(?:[A-Z][A-Za-z'-]+\s+){{1,3}}(?:{_STREET_WORDS})\b\.?"
)
# `line1`, `address_line`, `address_line_1`, `street`, `street_address`.
_LINE_NAMES = ({"line1"}, {"line", "1"}, {"address", "line"}, {"street"})


def street_addresses(text: str) -> list[str]:
    """The street lines `text` writes ("8 Mill Lane"), each once."""
    return list(dict.fromkeys(m.group(0).rstrip(".") for m in STREET.finditer(text)))


def takes_street_line(name: str, schema: dict[str, Any]) -> bool:
    if schema.get("type") != "string" or "enum" in schema:
        return False
    said = set(words(name))
    if words(name)[-1:] == ["address"] and not said & {"email", "mail", "web", "ip", "ip4", "ip6"}:
        # `address`, `property_address`: a postal address, where the request
        # writes one.
        return schema.get("format") not in ("email", "uri", "hostname", "ipv4", "ipv6")
    return "2" not in said and any(names <= said for names in _LINE_NAMES)


def takes_country_code(name: str, schema: dict[str, Any]) -> bool:
    if schema.get("type") != "string" or "enum" in schema:
        return False
    said = words(name)
    return said[-2:] == ["country", "code"] or (said[-1:] == ["country"] and _two_letters(schema))


def _two_letters(schema: dict[str, Any]) -> bool:
    described = str(schema.get("description", "")).lower()
    return (
        schema.get("maxLength") == 2
        or "iso" in described
        or "two-letter" in described
        or ("pattern" in schema and text_fits(schema, "SE") and not text_fits(schema, "Sweden"))
    )


def countries_in(text: str) -> list[str]:
    """The ISO codes of the countries `text` names, in the order written."""
    lowered = text.lower()
    found = []
    for name, region in country_names().items():
        m = re.search(rf"\b{re.escape(name)}\b", lowered)
        if m and region != "001":
            found.append((m.start(), region))
    return list(dict.fromkeys(region for _, region in sorted(found)))


class Addresses:
    name = "addresses"

    def prefer(self, facts: TurnFacts, out: Preferred) -> None:
        results = [text for _, text in reversed(facts.results)]
        for tool in facts.workflow.tools:
            # An address object's parts, from the address the user wrote.
            prefer_postal_parts(facts, out, tool, self.name)
            for name, schema in parameters(tool):
                key = f"{tool.name}.{name}"
                if not undecided(out, key):
                    continue
                if takes_web_address(name, schema):
                    whole = words(name)[-1:] == ["url"] or schema.get("format") == "uri"
                    read = functools.partial(web_addresses, whole=whole)
                    found = first_found((facts.requests, results), read)
                elif takes_country_code(name, schema):
                    found = first_found((facts.requests, results), countries_in)
                elif takes_street_line(name, schema):
                    found = first_found((facts.requests, results), street_addresses)
                else:
                    continue
                decide(out, key, [v for v in found if text_fits(schema, v)], self.name)
