"""Names the user wrote: "What's the weather in Oslo?" looks up `Oslo`.

A small model fills a free string such as `city` or `name` with a name of
its own ("Odal" for Oslo, the schema's "Paris"). Where the user's message
writes names (capitalised words that do not start a sentence: "Oslo",
"Buenos Aires", "Ines Varga"), a parameter of a lookup that names a place,
a person or an organisation (`city`, `name`, `destination`, `room`; a plain
string that is not an id, and not of a terminal tool, whose values are
reports) takes one of them (a terminal tool's person's name, such as
`contact_name`, one of them or of the names the results write), and a
`name` also what the request calls by the tool's noun ("Check machine
M7" for check_machine's `name`); a parameter that holds a phone number
(`owner_phone`, `mobile`) takes the phone numbers it writes ("0151 2234
778"). Of a route's two ends, a parameter named for its start
(`origin`, `departure_port`, `from_city`) takes the names written right
after "from", and one named for its end (`destination`, `arrival_airport`,
`to_city`) those after "to" ("from Lyon to Turin"), where the request
writes them so. A `first_name` takes the first words of the names written
in full, a `last_name` their last. A message that writes neither leaves
the parameter to its other rules.
"""

from __future__ import annotations

import calendar
import re

from forge_core.guardrails import (
    Preferred,
    TurnFacts,
    decide,
    parameters,
    sent_elsewhere,
    undecided,
)
from forge_core.guardrails.addresses import STREET
from forge_core.guardrails.provenance import for_someone_else, id_param
from forge_core.guardrails.text import words

# Parameters that name a place, a person or an organisation.
_NAMED = frozenset(
    "name names city cities town country countries location place destination origin region "
    "state province person people customer client guest patient employee user owner contact "
    "recipient sender company organization organisation team department room building venue "
    "airport station port harbour harbor terminal stop street address brand author artist museum "
    "hotel restaurant store shop surname forename".split()
)
# How the user names themself: "it's Nadia Osei", "this is Anne", "I'm Tom".
_SELF = re.compile(
    r"\b(?:it'?s|it is|this is|i'?m|i am|my name is|name'?s)\s+"
    # The name itself case-sensitively: "it's Ada from Blue Kestrel" is Ada's.
    r"((?:Mrs?|Ms|Miss|Dr)\.?\s+)?(?-i:([A-Z][a-z]+(?:[ -][A-Z][a-z]+)*))",
    re.IGNORECASE,
)
# A `*_name` of these holds a person's name; `dog_name` or `company_name`
# does not hold the user's own.
_PERSON_QUALIFIERS = frozenset(
    "full first last given family display legal holder member lead booking account".split()
)


# A greeting and a full name, or a name and "here": "Hi, Dana Kell on ...",
# "Hello, Ravi Menon here", "Ines Varga here". Not "Hi Anna, can you":
# that greets someone else.
_GREETED = re.compile(
    r"(?:^|[.!?]\s+)(?:(?:hi|hello|hey|good (?:morning|afternoon|evening)),\s+)?"
    r"(?-i:((?:[A-Z][a-z]+[ -]){1,2}[A-Z][a-z]+))(?=\s+here\b|,|\s+(?:on|from|at)\b)",
    re.IGNORECASE,
)


def own_names(requests: list[str]) -> set[str]:
    """The words of the names the user gives for themself."""
    said = {
        word
        for text in requests
        for m in _SELF.finditer(text)
        if m.group(2)[0].isupper()
        for word in m.group(2).split()
    }
    greeted = {
        word
        for text in requests
        for m in _GREETED.finditer(text)
        if _greets(text, m)
        for word in m.group(1).split()
    }
    return said | greeted


def _greets(text: str, m: re.Match[str]) -> bool:
    """A greeting opens the sentence, or the name is followed by "here"."""
    opening = text[m.start() : m.start(1)].strip(" .!?").lower()
    return bool(opening) or text[m.end(1) :].lstrip().lower().startswith("here")


# "Pepper is due her jabs": a name that starts its sentence as the
# subject of a verb; not the words that start sentences anyway.
_SUBJECT = re.compile(r"(?:^|[.!?]\s+)([A-Z][a-z]+)\s+(?:is|was|has|needs|isn't|hasn't|will)\b")
_STARTERS = frozenset(
    "it this that there he she we they i my our your what who which where when how "
    "everything nothing something today tomorrow yesterday here".split()
)


def subjects_named(text: str) -> list[str]:
    """Names that open a sentence as its subject ("Pepper is due her jabs")."""
    return [
        m.group(1)
        for m in _SUBJECT.finditer(text)
        if m.group(1).lower() not in _STARTERS and m.group(1).lower() not in _CALENDAR
    ]


def holds_someone_else(name: str) -> bool:
    """A `*_name` whose qualifier is a thing, not a person (`dog_name`)."""
    said = words(name)
    return (
        len(said) >= 2
        and said[-1] == "name"
        and said[-2] not in _PERSON
        and said[-2] not in _PERSON_QUALIFIERS
    )


# Calendar words are capitalised too, and are dates, not names.
_CALENDAR = frozenset(
    w.lower() for w in (*calendar.month_name, *calendar.day_name, *calendar.month_abbr) if w
)
_SENTENCE = re.compile(r"(?:^|[.!?]\s+|\n\s*)")
# Latin letters with their accents too ("Bożena Kowalczyk", "Zoë Ångström").
_UPPER = "A-ZÀ-ÖØ-Þ" + "".join(chr(c) for c in range(0x100, 0x250) if chr(c).isupper())
_LOWER = "a-zß-öø-ÿ" + "".join(chr(c) for c in range(0x100, 0x250) if chr(c).islower())
# "Co-op", "Ross-on-Wye": a hyphened lower-case part belongs to the word.
_WORD = f"[{_UPPER}][{_LOWER}]+(?:-[{_LOWER}]+(?=[ -]|[^\\w-]|$))?"
# "St Anne's Hall": a possessive inside a run belongs to the name.
_NAME = re.compile(
    rf"(?<![\w]){_WORD}(?:'s(?= {_WORD}))?(?:[ -]{_WORD}(?:'s(?= {_WORD}))?)*(?![\w])"
)


_CONTRACTION = re.compile(r"^(?:It|That|What|Here|There|He|She|Who|Let|Where)'s ")


def names_in(text: str) -> list[str]:
    """Runs of capitalised words that do not start a sentence, nor name a
    street."""
    starts = {m.end() for m in _SENTENCE.finditer(text)}
    # A street's name ("8 Larch Vale") is an address, not a person's.
    streets = [m.span() for m in STREET.finditer(text)]
    out = []
    for m in _NAME.finditer(text):
        if any(a <= m.start() < b for a, b in streets):
            continue
        span = m.group(0)
        spans = [span]
        if m.start() in starts:
            # A sentence's first word may be a name ("Ines Varga here") or
            # not ("Give Ines Varga ..."): both, the whole run first.
            rest = span.split(" ", 1)
            spans = [span, rest[1]] if len(rest) == 2 else []
        # "It's Omar": a contraction, not a possessive of the name.
        spans = [_CONTRACTION.sub("", s) for s in spans]
        out += [s for s in spans if s and s != "I" and s.lower() not in _CALENDAR]
    return list(dict.fromkeys(out))


def _name_like(name: str, schema: dict[str, object]) -> bool:
    return (
        schema.get("type") == "string"
        and not any(k in schema for k in ("enum", "const", "format", "pattern"))
        and not id_param(name)
        # The head noun says what it holds: `owner_phone` is a phone number.
        and words(name)[-1:] != []
        and words(name)[-1] in _NAMED
    )


# A terminal tool's parameter that holds a person's name: the names the
# request writes, then those the results write ("book it under Ines").
_PERSON = frozenset(
    "name person customer client guest patient employee user owner contact recipient sender".split()
)
# A parameter about a person or the user's own record (`customer_id`,
# `member_number`, `account_id`): the user's own name may pick its value.
PERSON_WORDS = _PERSON | _PERSON_QUALIFIERS


# Words that name a route's start or its end, and the word before each.
_ROUTE_ENDS = (
    (frozenset("from origin departure depart departing source start pickup".split()), "from"),
    (frozenset("to destination arrival arrive arriving dest end dropoff".split()), "to"),
    # Where a thing is: "St Anne's at Upwey", "the club in Otley".
    (frozenset("place town village city location locality parish".split()), "(?:at|in)"),
)


def route_end(name: str, texts: list[str], names: list[str]) -> list[str]:
    """Of `names`, those written right after the route word that `name`'s
    words call for ("from" for `departure_port`); `names` when it calls
    for neither or the request writes none so."""
    said = set(words(name))
    for marks, before in _ROUTE_ENDS:
        if said & marks:
            after = [
                n
                for n in names
                if any(re.search(rf"\b{before}\s+(?:the\s+)?{re.escape(n)}\b", t) for t in texts)
            ]
            return after or names
    return names


_FIRST = frozenset("first given forename".split())
_LAST = frozenset("last family surname".split())


def name_part(name: str, names: list[str]) -> list[str]:
    """For a `first_name` the first words of the people's names written in
    full ("Ada" of "Ada Byrne"), for a `last_name` their last; `names`
    as they are for any other parameter."""
    said = set(words(name))
    full = [n.split() for n in names if len(n.split()) >= 2]
    if said & _FIRST and full:
        return list(dict.fromkeys(parts[0] for parts in full))
    if said & _LAST and full:
        return list(dict.fromkeys(parts[-1] for parts in full))
    return names


def called_by(nouns: tuple[str, ...], text: str) -> list[str]:
    """What `text` calls by one of the tool's nouns: an id-like word right
    after it ("Check machine M7" -> M7 for check_machine's `name`)."""
    out: list[str] = []
    for noun in nouns:
        pattern = rf"\b{re.escape(noun)}s?\s+([A-Za-z0-9][\w.-]*[A-Za-z0-9]|[A-Za-z0-9])\b"
        for m in re.finditer(pattern, text, re.IGNORECASE):
            value = m.group(1)
            if any(c.isdigit() for c in value) or "-" in value or value.isupper():
                out.append(value)
    return out


class ProperNames:
    name = "proper_names"

    def prefer(self, facts: TurnFacts, out: Preferred) -> None:
        found = [n for text in facts.requests for n in names_in(text)]
        for tool in facts.workflow.tools:
            for name, schema in parameters(tool):
                key = f"{tool.name}.{name}"
                if not undecided(out, key) or schema.get("type") != "string":
                    continue
                if facts.is_terminal(tool.name):
                    if _name_like(name, schema) and set(words(name)) & _PERSON:
                        results = [n for _, text in facts.results for n in names_in(text)]
                        in_full = any(" " in n for n in found)
                        if for_someone_else(tool.name, name) or (
                            in_full and set(words(name)) & (_FIRST | _LAST | {"full"})
                        ):
                            # A person's first, last or full name is one the
                            # request names in full (a new holder, a
                            # candidate), not a venue a result names.
                            results = []
                        named = name_part(name, list(dict.fromkeys(found + results)))
                        if "full" in words(name):
                            named = [n for n in named if " " in n] or named
                        # A name a lookup took as another parameter (the
                        # instructor found by `name`) is not this person.
                        other = {p for v in sent_elsewhere(facts, name) for p in v.split()}
                        named = [n for n in named if not set(n.split()) & other] or named
                        decide(out, key, named, self.name)
                elif _name_like(name, schema):
                    # A `name` is also what the request calls by the tool's
                    # noun ("machine M7" for check_machine).
                    nouns = tuple(words(tool.name)[1:]) if words(name)[-1] == "name" else ()
                    called = [v for text in facts.requests for v in called_by(nouns, text)]
                    named = route_end(name, facts.requests, list(dict.fromkeys(called + found)))
                    named = name_part(name, named)
                    if holds_someone_else(name):
                        own = own_names(facts.requests)
                        named = [n for n in named if not set(n.split()) & own]
                        named = named or [n for t in facts.requests for n in subjects_named(t)]
                    decide(out, key, named, self.name)
