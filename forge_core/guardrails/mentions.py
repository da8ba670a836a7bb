"""Enum members the conversation names: "a standing order" picks
`standing_order`, "late by 25 minutes" picks `late`, "the June invoice"
picks `2027-06`, "at weekends" picks ["sat", "sun"].

A member is named when its words (stemmed; `on_schedule` is "on schedule") occur in
a message in order, or, for calendar members, when the message names the
month ("June" for a YYYY-MM member) or the day ("Monday", "weekdays",
"weekends" for day names and their abbreviations).

Which messages: a terminal tool reports what was found, so the results come
first for it ("Is ferry F12 on schedule?" answered by "late by 25 minutes"
is `late`), then the request; any other tool acts on the request, so the
request comes first. Where the first source names one or more members, the
parameter takes only those; where no source names one, its enum stays whole.
Where a result names several, and the user asked about an id it names
("Is claim C-12 settled?" over "C-12: open. Older claim C-09: settled."),
a terminal tool takes those named in the sentences about that id.
A string without an enum whose description lists its options in prose
is read as if it had them as its enum (described_options.py).
An array of enum members takes the named members, in the enum's order, as
its one value; there a member is also named by a word of its own that no
other member has ("bloods" for `blood_draw`), and a member named only
where the request says no to it ("we don't need the card") is left
out.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Sequence
from typing import Any

from forge_core.guardrails import Preferred, TurnFacts, decide, parameters, undecided
from forge_core.guardrails.described_options import described_options, sibling_members
from forge_core.guardrails.grounding import extract_candidates
from forge_core.guardrails.text import NEGATION, clauses, contains_run, stems, words

_MONTHS = {name.lower(): i for i, name in enumerate(calendar.month_name) if name}
_MONTHS |= {name.lower(): i for i, name in enumerate(calendar.month_abbr) if name}
_DAYS = [name.lower() for name in calendar.day_name]  # monday .. sunday
_GROUPS = {
    "weekday": range(0, 5),
    "weekdays": range(0, 5),
    "weekend": range(5, 7),
    "weekends": range(5, 7),
}
_YEAR_MONTH = re.compile(r"(\d{4})-(\d{2})")
_WORD = re.compile(r"[a-z]+")


def _takes_weekday(name: str, schema: dict[str, Any]) -> bool:
    """A free string for a day of the week (`weekday`, `day_of_week`)."""
    said = words(name)
    return schema.get("type") == "string" and (
        said[-1:] == ["weekday"] or said[-3:] == ["day", "of", "week"]
    )


def _day_index(member: str) -> int | None:
    """0 for "mon"/"monday"/"Mon", ...; None for anything else."""
    m = member.lower()
    for i, day in enumerate(_DAYS):
        if (
            len(m) >= 2
            and day.startswith(m)
            and (len(m) >= 3 or m in ("mo", "tu", "we", "th", "fr", "sa", "su"))
        ):
            return i
    return None


def _named_days(text: str) -> set[int]:
    out: set[int] = set()
    for w in _WORD.findall(text.lower()):
        if w in _GROUPS:
            out.update(_GROUPS[w])
        elif w.rstrip("s") in _DAYS:
            out.add(_DAYS.index(w.rstrip("s")))
    return out


def _named_months(text: str) -> set[int]:
    # "may" is also a verb: only the month when capitalised.
    return {
        _MONTHS[w.lower()]
        for w in re.findall(r"[A-Za-z]+", text)
        if w.lower() in _MONTHS
        and (w.lower() != "may" or w[0] == "M")
        and (len(w) > 3 or w[0].isupper())
    }


# How often, as people say it and as enums spell it ("every other week"
# for `fortnightly` or `biweekly`).
_FREQUENCIES = [
    (
        re.compile(
            r"\b(?:every (?:other|second|two|2) weeks?|bi-?weekly|fortnightly|once a fortnight)\b",
            re.I,
        ),
        "fortnightly biweekly",
    ),
    (re.compile(r"\b(?:every|each|once a) week\b", re.I), "weekly"),
    (re.compile(r"\b(?:every|each|once a) month\b", re.I), "monthly"),
    (re.compile(r"\b(?:every|each) day\b", re.I), "daily"),
]


_ARTICLES = frozenset(("the", "a", "an"))
_CONTRACTION = re.compile(r"['\u2019](?:s|t|d|m|ll|re|ve)\b", re.IGNORECASE)


# A part of the day names the half of it an `am`/`pm` enum means ("on the
# morning of the 3rd" is `am`); a greeting ("Morning, it's Rob") names none.
_DAY_PART = re.compile(r"\b(morning|afternoon|evening)\b", re.I)


def _day_halves(text: str) -> str:
    def said(m: re.Match[str]) -> str:
        before = text[: m.start()].strip().lower()
        if before in ("", "good") or before.endswith(("good", ".", "!")):
            return m.group(0)
        return f"{m.group(0)} {'am' if m.group(1).lower() == 'morning' else 'pm'}"

    return _DAY_PART.sub(said, text)


def named_members(members: list[Any], text: str) -> list[Any]:
    """The members of an enum that `text` names, in the enum's order."""
    for phrase, said in _FREQUENCIES:
        # The phrase becomes the enum's words: "every other week" names no `weekly`.
        text = phrase.sub(said, text)
    if any(isinstance(m, str) and m.lower() in ("am", "pm") for m in members):
        text = _day_halves(text)
    # What a contraction leaves is no word: "Dana's" names no size `S`.
    text_stems = stems(_CONTRACTION.sub("", text))
    bare = tuple(s for s in text_stems if s not in _ARTICLES)
    days = None
    months = None
    out = []
    worded: list[str] = []
    for member in members:
        # A bare number ("1", "2") is in too many sentences to be named by one.
        if not isinstance(member, str) or not member.strip() or member.strip().isdigit():
            continue
        if (day := _day_index(member)) is not None:
            days = _named_days(text) if days is None else days
            if day in days:
                out.append(member)
            continue
        if (ym := _YEAR_MONTH.fullmatch(member)) is not None:
            months = _named_months(text) if months is None else months
            if int(ym.group(2)) in months or member in text:
                out.append(member)
            continue
        if sized_member(member, text):
            # "a medium fleece" names `M`, "a small adult one" `adult_s`.
            out.append(member)
            continue
        own = stems(member)
        # "the cake and the candles" names `cake_and_candles`.
        plain = text_stems if _ARTICLES & set(own) else bare
        if contains_run(plain, own):
            out.append(member)
            worded.append(member)
    articled = any(_ARTICLES & set(stems(m)) for m in worded)
    return _longest(out, worded, text_stems if articled else bare)


# Sizes as people say them, for the codes clothing and kit enums use.
_SIZE_SAID = {
    "xs": r"extra[- ]small|xs",
    "s": r"(?<!extra )(?<!extra-)small",
    "m": r"medium",
    "l": r"(?<!extra )(?<!extra-)large",
    "xl": r"extra[- ]large|xl",
    "xxl": r"xxl|double extra[- ]large",
}
# Who a size is for, as a member's first word says it: `child_l`, `adult_s`.
_SIZE_OWNERS = {"child": r"child|children|kids?|junior", "adult": r"adults?|grown[- ]?ups?"}


def sized_member(member: str, text: str) -> bool:
    """Whether `text` says a size code (`M`, `XL`) in words ("a medium
    fleece"), or a sized member (`adult_s`: "a small adult helmet";
    `child_l`: "a children's large") in one clause."""
    parts = words(member)
    if not parts or parts[-1] not in _SIZE_SAID or len(parts) > 2:
        return False
    if len(parts) == 2 and parts[0] not in _SIZE_OWNERS:
        return False
    size = re.compile(rf"\b(?:{_SIZE_SAID[parts[-1]]})\b", re.IGNORECASE)
    if len(parts) == 1:
        return bool(size.search(text))
    owner = re.compile(rf"\b(?:{_SIZE_OWNERS[parts[0]]})\b", re.IGNORECASE)
    return any(size.search(c) and owner.search(c) for c in clauses(text))


def _runs(whole: tuple[str, ...], part: tuple[str, ...]) -> int:
    return sum(whole[i : i + len(part)] == part for i in range(len(whole) - len(part) + 1))


def _longest(named: list[Any], worded: list[str], text_stems: tuple[str, ...]) -> list[Any]:
    """`named` less a member its words name only inside a longer named one
    ("open" in "partially open")."""
    runs = {m: stems(m) for m in worded}

    def alone(member: str) -> bool:
        inside = sum(
            _runs(other, runs[member]) * _runs(text_stems, other)
            for o, other in runs.items()
            if o != member and len(other) > len(runs[member])
        )
        return _runs(text_stems, runs[member]) > inside

    return [m for m in named if m not in runs or alone(m)]


# A tool whose name or description starts with one of these tells the user
# what was found ("report_state", "Tell the rider ...").
_TELLING = frozenset("report reply answer respond tell inform summarize summarise explain".split())


def reports(facts: TurnFacts, tool: str) -> bool:
    """A terminal tool that tells what was found, rather than one that acts
    on the request ("book_donation": the user's "platelets" over the
    "whole-blood" a donor's record mentions)."""
    spec = facts.tool(tool)
    if spec is None or not facts.is_terminal(tool):
        return False
    described = words(spec.description)
    # "Give the final answer to the traveller: ..."
    return bool(set(words(tool)[:1] + described[:1]) & _TELLING) or "answer" in described[:4]


def _sources(facts: TurnFacts, tool: str) -> list[list[str]]:
    results = [text for _, text in reversed(facts.results)]
    return [results, facts.requests] if reports(facts, tool) else [facts.requests, results]


_ISO_DAY = re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2})?")
_SEGMENT = re.compile(r"[;\n]|\.\s")


def latest_dated(members: list[Any], texts: Sequence[str]) -> Any:
    """In a timeline ("2026-04-02 submitted; 2026-04-16 under_review"),
    the member named beside the latest date, where two or more dated
    segments each name one; else None."""
    dated: dict[str, Any] = {}
    for text in texts:
        for segment in _SEGMENT.split(text):
            days = _ISO_DAY.findall(segment)
            named = named_members(members, segment)
            if days and len(named) == 1:
                # An entry's own date comes first ("2026-04-28 documents
                # requested, upload by 2026-05-12").
                dated[days[0]] = named[0]
    return dated[max(dated)] if len(set(dated.values())) > 1 else None


def _named_in(
    members: list[Any],
    sources: list[list[str]],
    subjects: Sequence[str] = (),
    labels: Sequence[str] = (),
    dated: bool = False,
) -> list[Any]:
    for source in sources:
        found = {m for text in source for m in named_members(members, text)}
        for label in labels if len(found) > 1 else ():
            # "Status awaiting_parts" for `status`, "Highchair: PENDING" for
            # `highchair_status`: the member a word of its name labels,
            # over the latest entry of a list of other records.
            kept = {m for m in found if any(_labelled(m, label, t) for t in source)}
            if kept:
                found = kept
                break
        if len(found) > 1 and dated and (latest := latest_dated(members, source)) in found:
            # A report tells where things stand now: the latest entry.
            found = {latest}
        if len(found) > 1 and subjects:
            about = {
                m
                for text in source
                for sentence in _SENTENCE.split(text)
                if any(s in sentence for s in subjects)
                for m in named_members(members, sentence)
            }
            found = about or found
        if found:
            return [m for m in members if m in found]
    return []


_SENTENCE = re.compile(r"(?<=[.;!?])\s+")


def _labelled(member: Any, label: str, text: str) -> bool:
    """`text` writes `member` right after `label` ("status: on_hold",
    "state is partly open")."""
    if not isinstance(member, str) or not label:
        return False
    said = r"[ _-]".join(re.escape(w) for w in re.split(r"[ _-]+", member.lower()) if w)
    pattern = rf"\b{re.escape(label)}\b\W{{0,3}}(?:(?:is|was|now)\s+)?{said}\b"
    return bool(re.search(pattern, text.lower()))


def _subjects(requests: list[str]) -> list[str]:
    """The ids the user's messages name (with a digit: "C-12", not "ASAP")."""
    return [c for c in extract_candidates(requests) if any(ch.isdigit() for ch in c)]


def _denied(members: list[Any], requests: list[str]) -> set[Any]:
    """Members the request names only in clauses that say no to them ("the
    gift wrap would be lovely, but we don't need the card"): a
    list leaves them out."""
    said: set[Any] = set()
    denied: set[Any] = set()
    for text in requests:
        for clause in clauses(text):
            named = set(named_members(members, clause))
            (denied if NEGATION.search(clause) else said).update(named)
    return denied - said


# Words that qualify a member rather than name a thing ("workshops_only",
# "extra_large"): "the two days only" names no `workshops_only`.
_QUALIFIERS = frozenset(
    stems("only just also extra plus with without both same other more less basic standard")
)


def partly_named(
    members: list[Any],
    requests: list[str],
    not_gists: frozenset[str] = frozenset(),
    shortest: int = 4,
) -> list[Any]:
    """Members of a list's enum the request names by a word of theirs that
    no other member has, of four letters or more ("bloods" for
    `blood_draw` beside `ecg` and `vitals`): people name the items of a
    list by their gist."""
    runs = {m: set(stems(m)) - _QUALIFIERS - not_gists for m in members if isinstance(m, str)}
    said = {s for text in requests for s in stems(text)}
    out = []
    for member, own in runs.items():
        others = set().union(*(v for k, v in runs.items() if k != member))
        if any(len(w) >= shortest and w in said for w in own - others):
            out.append(member)
    return out


# Verbs of any request, no gist of a choice.
_PASSING = frozenset(
    stems("book booked make take need want have like come send give find move keep help call")
)
# What the user would rather not have: "a gift voucher rather than a
# refund", "rather than me picking it up".
_RATHER = re.compile(r"\b(?:rather than|instead of)\b", re.IGNORECASE)


def _sides(requests: list[str]) -> tuple[list[str], list[str]]:
    """The request's clauses that ask for something, and those that say no
    to it: a clause with a negation says no; one with "rather than" asks
    for what comes before it and says no to what comes after."""
    asked: list[str] = []
    refused: list[str] = []
    for text in requests:
        for clause in clauses(text):
            rather = _RATHER.search(clause)
            if rather:
                asked.append(clause[: rather.start()])
                refused.append(clause[rather.end() :])
            elif NEGATION.search(clause):
                refused.append(clause)
            else:
                asked.append(clause)
    return asked, refused


def gist_named(members: list[Any], requests: list[str], tool_name: str) -> list[Any]:
    """The members the request names by their gist only (`partly_named`:
    "could you post it back" for `signed_post`), in clauses that do not
    say no to them ("rather than me picking it up" names no
    `pick_up_in_store`)."""
    asked, refused = _sides(requests)
    # Nor a word every request says in passing: "the room I booked" names
    # no `booked_twice`.
    not_gists = frozenset(stems(tool_name)) | _PASSING
    said = set(partly_named(members, asked, not_gists))
    denied = set(partly_named(members, refused, not_gists))
    return [m for m in members if m in said - denied]


def users_choice(members: list[Any], named: list[Any], requests: list[str], tool: str) -> list[Any]:
    """An action's enum member as the user chose it: what the request
    names, less what it names only to refuse ("a gift voucher rather
    than a refund"); where it names none in full, its gist ("could you
    post it back"), over what a record says now ("Return: pick up in
    store"); else `named`."""
    asked, refused = _sides(requests)
    not_gists = frozenset(stems(tool)) | _PASSING
    said = {m for part in asked for m in named_members(members, part)}
    denied = {m for part in refused for m in named_members(members, part)}
    denied = (denied | set(partly_named(members, refused, not_gists))) - said
    if not any(named_members(members, text) for text in requests):
        gist = [m for m in gist_named(members, requests, tool) if m not in denied]
        return gist or [m for m in named if m not in denied] or named
    if not denied:
        return named
    kept = [m for m in named if m not in denied] or [m for m in members if m in said]
    return kept or [m for m in gist_named(members, requests, tool) if m not in denied] or named


def _item_keys(tool: Any) -> set[str]:
    """The names of the keys of the items of a tool's arrays of objects."""
    out: set[str] = set()
    for _, schema in parameters(tool):
        items = schema.get("items")
        if schema.get("type") == "array" and isinstance(items, dict):
            props = items.get("properties")
            out.update(props if isinstance(props, dict) else ())
    return out


def _with_gist(
    members: list[Any], named: list[Any], requests: list[str], tool_name: str
) -> list[Any]:
    """The members of an enum key of a list's items that the request names,
    also by their gist ("the owls" for `owl_pair`; `partly_named`), less
    those it says no to: as for a list of enum members, each item is named
    the way people name the things they list. A word of the tool's name is
    no gist: "carve our logo" asks `carve_order` for no `carved_bowl`."""
    partly = partly_named(members, requests, frozenset(stems(tool_name)))
    denied = _denied(members, requests)
    return [m for m in members if (m in named or m in partly) and m not in denied]


class EnumMentions:
    name = "enum_mentions"

    def prefer(self, facts: TurnFacts, out: Preferred) -> None:
        subjects = _subjects(facts.requests)
        for tool in facts.workflow.tools:
            sources = _sources(facts, tool.name)
            item_keys = _item_keys(tool)
            about = subjects if facts.is_terminal(tool.name) else []
            for name, schema in parameters(tool):
                # The name's words, its last (the head) first.
                labels = words(name)[::-1] if facts.is_terminal(tool.name) else []
                key = f"{tool.name}.{name}"
                if not undecided(out, key):
                    continue
                members = schema.get("enum")
                if members is None and _takes_weekday(name, schema):
                    # A free `weekday`: the days the request names, by name.
                    days = [_DAYS[i].capitalize() for t in facts.requests for i in _named_days(t)]
                    decide(out, key, list(dict.fromkeys(days)), self.name)
                    continue
                if members is None:
                    # Options the description lists in prose (described_options.py).
                    members = (
                        described_options(name, schema, tool.description)
                        or sibling_members(name, schema, facts.workflow.tools)
                        or None
                    )
                if isinstance(members, list) and len(members) > 1:
                    named = _named_in(members, sources, about, labels, reports(facts, tool.name))
                    if name in item_keys and not reports(facts, tool.name):
                        named = _with_gist(members, named, facts.requests, tool.name)
                    elif not reports(facts, tool.name):
                        named = users_choice(members, named, facts.requests, tool.name)
                    if named and len(named) < len(members):
                        out.values[key] = named
                        out.reasons[key] = self.name
                    continue
                items = schema.get("items")
                if schema.get("type") == "array" and isinstance(items, dict):
                    members = items.get("enum")
                    if isinstance(members, list) and len(members) > 1:
                        named = _named_in(members, sources)
                        partly = partly_named(members, facts.requests)
                        denied = _denied(members, facts.requests)
                        named = [
                            m for m in members if (m in named or m in partly) and m not in denied
                        ]
                        if named:
                            out.values[key] = [named]
                            out.reasons[key] = self.name
