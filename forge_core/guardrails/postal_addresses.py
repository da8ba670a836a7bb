"""A postal address the user wrote, read into its parts.

"The Old Tithe Barn, Moor Lane, Otley LS21 1HB" fills an address object's
`name` ("The Old Tithe Barn"), `line1` ("Moor Lane"), `town` ("Otley") and
`postcode`; "Unit 4, Quayside Trading Estate, Poole BH15 1HJ" a `line1` of
"Unit 4, Quayside Trading Estate". A small model wrote a number or an id
it saw for a line with no house number in it ("Moor Lane"), and the street
rule (addresses.py) reads only "a house number, capitalised words and a
street word".

An address is found by its postcode: a British one ("LS21 1HB"), or a part
of its own that starts with one ("411 18 Göteborg", "75011 Paris"). The
parts before it, back to where the sentence's prose begins, are the
address's: what comes before the postcode in its part is the town, the
parts before that the lines. A first part with no digit in it is the
place's own name ("The Old Tithe Barn", "Seasalt Events"): it fills the
object's `name` or `company` where the object has one, and otherwise it
is the first line's start only if it names a building ("Yew Tree
Cottage"); a person's name before an address goes. Results are read after
the request, as for the other address parts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from forge_core.guardrails import Preferred, TurnFacts, decide, first_found, undecided
from forge_core.guardrails.text import words
from forge_core.schema_rules import text_fits
from forge_core.workflow import ToolSpec

_BRITISH = re.compile(r"\b[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}\b")
# A part of its own that starts with a postcode of digits ("411 18 Göteborg").
_DIGITS_FIRST = re.compile(r"^(\d{3} ?\d{2}|\d{4,5}) ([^\W\d_][\w' -]*)$")
# A year is no postcode ("2026 Summer Fair").
_YEAR = re.compile(r"^(?:19|20)\d\d$")
# Where an address's run of parts begins: the end of a sentence or a clause.
_BOUNDARY = re.compile(r"[.!?;:\n(]")
# The address at the end of a part of prose: "out of 17 Cotham Vale", "at The
# Old Tithe Barn", "Goods-in is at Unit 4".
_WORD = r"(?!(?:It|That|There|Here|I|We|You|They|He|She)'\w+)[A-Z][\w'&.-]*"
_TAIL = re.compile(
    rf"(?:(?:Flat|Unit|Suite|Apartment)\s+\w+|\d+[A-Za-z]?(?:\s+{_WORD})*"
    rf"|{_WORD}(?:\s+(?:and\s+|of\s+|&\s+)?{_WORD})*|\w+\s+\d+[A-Za-z]?)$"
)
# Words that end a building's own name.
_BUILDINGS = frozenset(
    "cottage house farm barn lodge hall mill manor building buildings centre center estate "
    "works chambers court mansions house villa studio studios yard".split()
)
_POSTCODE_KEYS = ({"postcode"}, {"post", "code"}, {"postal", "code"}, {"zip"}, {"zipcode"})
_TOWN_KEYS = ({"town"}, {"city"}, {"locality"})
_LINE_KEYS = ({"line1"}, {"line", "1"}, {"address", "line"}, {"street"}, {"address", "line1"})
_NAME_KEYS = ({"name"}, {"company"}, {"venue", "name"}, {"business", "name"}, {"company", "name"})


@dataclass(frozen=True)
class PostalAddress:
    name: str | None
    line: str | None
    town: str | None
    postcode: str


def _prose_tail(part: str) -> str:
    """The address's end of a first part that starts in prose."""
    m = _TAIL.search(part.strip())
    return m.group(0).strip() if m else ""


def _address_before(text: str, start: int, town: str | None, postcode: str) -> PostalAddress:
    """The address whose postcode begins at `start`, its town already read."""
    begin = max((m.end() for m in _BOUNDARY.finditer(text, 0, start)), default=0)
    written = [p.strip() for p in text[begin:start].split(",")]
    if town is None and written:
        last = written.pop()
        # "Otley LS21 1HB": the town is the last part's words before the postcode.
        town = last if re.fullmatch(r"[A-Z][\w'-]*(?: [A-Z][\w'-]*){0,2}", last) else None
    # Back from the postcode, the parts that are all address; the first in
    # prose gives its end ("we've just bought Yew Tree Cottage") and stops.
    parts: list[str] = []
    for part in reversed([p for p in written if p]):
        tail = _prose_tail(part)
        if tail:
            parts.insert(0, tail)
        if tail != part:
            break
    name = None
    if len(parts) > 1 and not any(c.isdigit() for c in parts[0]):
        name = parts.pop(0)
    line = ", ".join(parts) or None
    return PostalAddress(name, line, town, postcode)


def written_addresses(text: str) -> list[PostalAddress]:
    """The postal addresses `text` writes, in order."""
    found = []
    for m in _BRITISH.finditer(text):
        found.append((m.start(), _address_before(text, m.start(), None, m.group(0))))
    offset = 0
    for part in text.split(","):
        first = _DIGITS_FIRST.match(part.strip())
        if first and first.group(2)[0].isupper() and not _YEAR.match(first.group(1)):
            at = offset + part.index(first.group(0))
            town = first.group(2).strip()
            found.append((at, _address_before(text, at, town, first.group(1))))
        offset += len(part) + 1
    return [address for _, address in sorted(found, key=lambda f: f[0])]


def _kind(name: str) -> str | None:
    said = set(words(name))
    for kind, names in (
        ("postcode", _POSTCODE_KEYS),
        ("town", _TOWN_KEYS),
        ("line", _LINE_KEYS),
        ("name", _NAME_KEYS),
    ):
        if any(n <= said for n in names):
            return kind
    return None


def _address_objects(schema: Any, depth: int = 0) -> list[dict[str, str]]:
    """The objects of a tool's schema that hold a postal address: key ->
    its part ("postcode", "town", "line", "name"), where one key holds a
    postcode and another a line or a town."""
    if not isinstance(schema, dict) or depth > 6:
        return []
    out = []
    props = schema.get("properties")
    if isinstance(props, dict):
        kinds = {
            k: kind
            for k, s in props.items()
            if isinstance(s, dict) and s.get("type") == "string" and (kind := _kind(k))
        }
        if "postcode" in kinds.values() and {"line", "town"} & set(kinds.values()):
            out.append(kinds)
        for sub in props.values():
            out += _address_objects(sub, depth + 1)
    out += _address_objects(schema.get("items"), depth + 1)
    return out


def _building(part: str) -> bool:
    return bool(words(part)[-1:]) and words(part)[-1] in _BUILDINGS


def _parts(address: PostalAddress, kinds: dict[str, str]) -> dict[str, str | None]:
    """What each of an address object's keys takes from `address`."""
    has_name = "name" in kinds.values()
    line = address.line
    if address.name and not has_name and _building(address.name):
        line = ", ".join(p for p in (address.name, line) if p)
    if "town" not in kinds.values() and address.town and line is None:
        line = address.town
    values = {"postcode": address.postcode, "town": address.town, "line": line}
    values["name"] = address.name if has_name else None
    return {key: values[kind] for key, kind in kinds.items()}


def prefer_postal_parts(facts: TurnFacts, out: Preferred, tool: ToolSpec, source: str) -> None:
    """Decide the parts of each address object of `tool` from the first
    address the request (else a result) writes; a key whose name another
    parameter of the tool shares is left alone (`name` of a contact)."""
    objects = _address_objects(tool.parameters)
    if not objects:
        return
    results = [text for _, text in reversed(facts.results)]
    found = first_found((facts.requests, results), written_addresses)
    if not found:
        return
    counts: dict[str, int] = {}
    _count_names(tool.parameters, counts)
    for kinds in objects:
        for key, value in _parts(found[0], kinds).items():
            full = f"{tool.name}.{key}"
            if value and counts.get(key) == 1 and undecided(out, full):
                schema = _find(tool.parameters, key)
                if schema is not None and text_fits(schema, value):
                    decide(out, full, [value], source)


def _count_names(schema: Any, counts: dict[str, int], depth: int = 0) -> None:
    if not isinstance(schema, dict) or depth > 6:
        return
    for key, sub in (schema.get("properties") or {}).items():
        counts[key] = counts.get(key, 0) + 1
        _count_names(sub, counts, depth + 1)
    _count_names(schema.get("items"), counts, depth + 1)


def _find(schema: Any, key: str, depth: int = 0) -> dict[str, Any] | None:
    if not isinstance(schema, dict) or depth > 6:
        return None
    props = schema.get("properties") or {}
    if isinstance(props.get(key), dict):
        return dict(props[key])
    for sub in [*props.values(), schema.get("items")]:
        if (found := _find(sub, key, depth + 1)) is not None:
            return found
    return None
