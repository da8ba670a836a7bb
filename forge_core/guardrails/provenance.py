"""Identifiers with provenance: which of the ids a conversation holds is
*this* parameter's.

A lookup's result names what it returns: "member id M-9043 (Jo Park)",
"Claim token CT-7702", "voyage VY-5120", "crew id crew_4410". A small
model fills the next call's `member_id` with the e-mail from the request
and `claim_token` with the passenger's id: every id it has seen is
equally admissible to the grammar. Here each id-like value (grounding's
candidates) gets evidence for each free-string parameter:

- **label** (strongest): the parameter's own words stand right before the
  value, with at most a generic word (`id`, `number`, `#`), `:`, `=` or "is"
  between: "member id M-9043" for `member_id`, "Claim token CT-7702" for
  `claim_token`; the head noun alone counts a little less ("voyage
  VY-5120" for `voyage_id`). A plural noun before a colon introduces a
  list ("2 manifests: MF-12 ..., MF-40 ...") and labels nothing;
- **abbreviation**: the value's leading letters begin a word of the
  parameter ("CB-204" for `cabin_id`, "INV-7" for `invoice_ref`);
- a value that another of the same tool's id parameters is labelled with
  ("captain id CP-77") is not this one's: one id does not fill two
  different id parameters.

The parameter takes only the values with the most evidence, when there is
any. Among several equally good ones, those the user's own messages name
win over those only a result mentions (the user's subject, not the older
record a result names beside it); among several taken from the entries of
one listing,
the entry that shares the most of the request's own words wins ("Ines
Varga from the night shift" picks the entry "Ines Varga, night shift, crew
id crew_4410" over "Ines Vargas, day shift, ..."); a tie keeps
them all. Failed values are never offered again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from forge_core.guardrails import (
    FailedValue,
    Preferred,
    TurnFacts,
    parameters,
    sent_elsewhere,
    undecided,
)
from forge_core.guardrails.addresses import street_addresses
from forge_core.guardrails.codes import codes_in
from forge_core.guardrails.described_shapes import described_prefixes, own_prefixes, shaped
from forge_core.guardrails.entries import described
from forge_core.guardrails.grounding import (
    emails_only,
    extract_candidates,
    id_shape,
    is_email,
    is_identifier_like,
)
from forge_core.guardrails.phones import PHONE_WORDS, labelled_phones
from forge_core.guardrails.quantities import only_a_quantity, only_a_unit_or_year
from forge_core.guardrails.relative_dates import stated_today
from forge_core.guardrails.text import GENERIC, stem, stems, topic_stems, words
from forge_core.schema_rules import text_fits

LABEL = 3
HEAD_LABEL = 2
TOOL_LABEL = 1
ABBREVIATION = 2
# Up to this many characters before a value are read for its label.
_LOOKBEHIND = 40
# What may stand between a label and its value: "member id M-9043", "token:
# CT-1", "order #Q-58", "code is QK8R2".
_GAP = re.compile(r"(?:[\s:=#]|\b(?:id|no|number|code|ref|is|was)\b)*$", re.IGNORECASE)


def _free_string(schema: dict[str, Any]) -> bool:
    """A string parameter without a fixed set of values (a format or a
    pattern keeps only the candidates that have it: `_fits`)."""
    return schema.get("type") == "string" and not any(k in schema for k in ("enum", "const"))


def _fits(schema: dict[str, Any], value: str) -> bool:
    if not any(k in schema for k in ("format", "pattern", "minLength", "maxLength")):
        return True
    return text_fits(schema, value) and (
        schema.get("minLength", 0) <= len(value) <= schema.get("maxLength", len(value))
    )


def _labels(value: str, text: str, size: int) -> list[tuple[str, ...]]:
    """The stems of the (up to) `size` words that label each occurrence of
    `value` in `text`: right before it, generic words, ":", "=" and "is"
    aside. A plural before a colon heads a list ("2 manifests: MF-12, ...")
    and labels nothing."""
    out = []
    start = 0
    while (at := text.find(value, start)) >= 0:
        start = at + len(value)
        before = text[max(0, at - _LOOKBEHIND) : at]
        gap = _GAP.search(before)
        core = (before[: gap.start()] if gap else before).rstrip()
        if gap and ":" in gap.group(0) and core.endswith("s") and not core.endswith("ss"):
            continue
        if not re.search(r"[A-Za-z]$", core):
            # "(4 crates), MF-40" or "total: 96.10 CHF": a clause or a
            # number stands in between.
            continue
        said = tuple(stem(w) for w in re.findall(r"[A-Za-z]+", core)[-size:])
        if said:
            out.append(said)
    return out


# "The invoice's record id.": the words before an id word of a description.
_DESCRIBED_ID = re.compile(
    r"\b([A-Za-z]+)\s+(?:id|identifier|number|code|reference|token)\b", re.IGNORECASE
)


def described_label(schema: dict[str, Any]) -> tuple[str, ...]:
    """The label a parameter's description gives its id ("The invoice's
    record id." -> record), when it is no word of the name's: an
    integrator's own word for which of the ids it is."""
    m = _DESCRIBED_ID.search(str(schema.get("description", "")))
    if m is None or stem(m.group(1)) in GENERIC | _LINKING:
        return ()
    return (stem(m.group(1)),)


def _label_score(
    param: str,
    value: str,
    text: str,
    tool_nouns: frozenset[str],
    described: tuple[str, ...] = (),
) -> int:
    """How strongly `text` labels `value` as `param`'s (0: not at all): its
    words (LABEL), its head noun (HEAD_LABEL), or, for a parameter whose
    own words label nothing, a noun of the tool's name ("kiln
    kl-3f1" for set_kiln_program's `device_id`; TOOL_LABEL)."""
    topic = topic_stems(param)
    best = 0
    for said in _labels(value, text, max(len(topic) + 1, 1)):
        if topic and (said[-len(topic) :] == topic or _one_word_apart(topic, said)):
            best = max(best, LABEL)
        elif topic and said[-1] == topic[-1]:
            best = max(best, HEAD_LABEL)
        elif described and said[-1:] == described[-1:]:
            best = max(best, LABEL)
        elif said[-1] in tool_nouns:
            best = max(best, TOOL_LABEL)
    return best


# Words that join a label to something else ("survey at 42" is no survey's id).
_LINKING = frozenset(
    stem(w)
    for w in (
        "at in on of for to from with by near the a an my our your their and or "
        # "member since 2024-09" is no member's id.
        "since until till before after during per via"
    ).split()
)


def _one_word_apart(topic: tuple[str, ...], said: tuple[str, ...]) -> bool:
    """The label holds the parameter's words with one more between or after
    them: "donor card number" for `donor_number`, "bag tag" for `bag_id`."""
    return len(said) == len(topic) + 1 and any(
        said[:i] + said[i + 1 :] == topic and said[i] not in _LINKING for i in range(1, len(said))
    )


def _blamed(failure: FailedValue) -> dict[str, Any]:
    """The arguments a failed call's error is about: those whose value or
    name it writes ("contact_phone rejected" is about the phone, not
    the unit the call also sent); all of them where it writes
    none."""
    error = failure.error.lower()
    named = {
        k: v
        for k, v in failure.args.items()
        if k.lower() in error or (isinstance(v, str) and v and v.lower() in error)
    }
    return named or failure.args


def id_param(name: str, schema: dict[str, Any] | None = None) -> bool:
    """A parameter that holds an opaque id: grounding's identifier names,
    tokens and hashes (`claim_token`, `commit_hash`), and one its description
    calls an id, a hash or a token ("Build hash to roll back to")."""
    if is_identifier_like(name) or words(name)[-1:] in (["token"], ["hash"]):
        return True
    described = set(words(str((schema or {}).get("description", ""))))
    return bool(described & {"id", "identifier", "hash", "token", "uuid"})


_MIXED = r"(?=[A-Z0-9]{2,4}\b)(?=[A-Z0-9]*[A-Z])(?=[A-Z0-9]*\d)[A-Z0-9]{2,4}"
_POSTCODE_LIKE = re.compile(rf"{_MIXED} {_MIXED}")


def _sent_as(facts: TurnFacts, tool: str, param: str, admissible: list[str]) -> list[str]:
    """The admissible strings other tools' calls that ran sent as `param`,
    oldest first."""
    return list(
        dict.fromkeys(
            v
            for name, args in facts.sent
            if name != tool
            for k, v in args.items()
            if k == param and isinstance(v, str) and v in admissible
        )
    )


def _id_shaped(value: str) -> bool:
    """Written like an id, not a word: a digit, capitals only ("JPYCHF"), or
    an e-mail address. "follow-up" is a word."""
    return any(c.isdigit() for c in value) or value.isupper() or "@" in value


def _skeleton(word: str) -> str:
    """A word's first letter and its consonants: room -> rm, item -> itm."""
    return word[:1] + re.sub(r"[aeiou]", "", word[1:])


def _abbreviates(param: str, value: str, phrases: tuple[tuple[str, ...], ...] = ()) -> bool:
    """The value's leading letters (two or more) begin a word of the
    parameter, or its first letter and consonants: CB-204 and RM-101 for
    `cabin_id` and `room_id`, INV-7 for `invoice_ref`."""
    # Letters alone ("BA", an airline's code) abbreviate nothing: the
    # prefix heads a code of letters and digits.
    prefix = re.match(r"[A-Za-z]{2,}(?=\S*\d)", value)
    if prefix is None:
        return False
    letters = prefix.group(0).lower()
    own = [w for w in words(param) if w not in GENERIC]
    if any(w.startswith(letters) or _skeleton(w).startswith(letters) for w in own if len(w) > 2):
        return True
    # Initials: SO-5512 for `standing_order_id`; DW-3391 for `window_id`
    # where a tool names the "delivery windows".
    head = own[-1].rstrip("s") if own else ""
    runs = [tuple(own)] + [p for p in phrases if head]
    return any(
        "".join(w[0] for w in run[i : j + 1]) == letters
        for run in runs
        for j, w in enumerate(run)
        if w.rstrip("s") == head
        for i in range(j)
    )


# "my email is ...", "reach me at ...": the user's own value; "her email
# is ...", "Omar's number is ...": someone else's.
_MINE = re.compile(r"\b(?:my|me at|me on|reach me)\b[^.!?;]{0,24}$", re.IGNORECASE)
_THEIRS = re.compile(r"(?:\b(?:her|his|their)\b|\b[A-Z][a-z]+'s\b)[^.!?;]{0,24}$")
# A parameter or tool for another party than the user: the new holder, a
# recipient, a guest.
_OTHER_PARTY = frozenset(
    "new recipient holder guest friend beneficiary payee attendee transferee assignee "
    "invitee delegate".split()
)


# What names a person rather than a record: the new holder's e-mail is the
# guest's, the guest's booking ref is still the booking's.
_PERSON_KEYS = frozenset("email mail phone mobile name user member holder contact person".split())


def _another_partys(tool: str, param: str) -> bool:
    """A parameter for a person other than the user (`new_holder.email`)."""
    return for_someone_else(tool, param) and bool(set(words(param)) & _PERSON_KEYS)


def for_someone_else(tool: str, param: str) -> bool:
    return bool(_OTHER_PARTY & (set(words(tool)) | set(words(param))))


def whose(values: list[str], requests: list[str], someone_else: bool) -> list[str]:
    """Of equally good `values`, those the request gives as the user's own
    ("my email is ..."), or as another person's for a parameter of another
    party (`new_holder_email`, a transfer tool's): where the request tells
    some apart; all of them otherwise."""
    if len(values) < 2:
        return values
    wanted = _THEIRS if someone_else else _MINE
    kept = [
        v
        for v in values
        if any(
            wanted.search(text[max(0, i - 40) : i])
            for text in requests
            for i in (m.start() for m in re.finditer(re.escape(v), text))
        )
    ]
    return kept if 0 < len(kept) < len(values) else values


# The head words of parameters that hold a code or a number, never an e-mail.
_CODE_HEADS = frozenset("code id number ref reference no sku key serial".split())
# Parameters that may hold a house's number.
_PLACE_WORDS = frozenset("house building street door flat apartment unit address premises".split())


@dataclass
class _Conversation:
    """What every parameter's choice reads: the texts (request first, then
    results newest first), the id-like candidates, the request's words, the
    schema's own words, failed (tool, param, value)s, and each candidate's
    kinds (the id parameters' topics that label or abbreviate it)."""

    texts: list[str]
    requests: int
    candidates: list[str]
    tool_words: set[str]
    failed: set[tuple[str, str, str]]
    refused: set[str]
    kinds: dict[str, set[tuple[str, ...]]]
    facts: TurnFacts
    phrases: tuple[tuple[str, ...], ...] = ()

    @classmethod
    def of(cls, facts: TurnFacts) -> _Conversation:
        texts = list(facts.requests) + [t for _, t in reversed(facts.results)]
        tools = facts.workflow.tools
        names = {t.name for t in tools} | {n for t in tools for n, _ in parameters(t)}
        candidates = [
            c
            for c in extract_candidates(texts, names)
            if not only_a_quantity(c, texts) and not only_a_unit_or_year(c, texts)
        ]
        # What the tools name, their verbs aside ("delivery windows").
        phrases = tuple(tuple(words(t.name)[1:]) for t in tools)
        topics = {
            topic_stems(n): n
            for t in tools
            for n, s in parameters(t)
            if _free_string(s) and id_param(n, s) and topic_stems(n)
        }
        nouns = described_prefixes(tools)
        shapes = {
            topic_stems(n): own_prefixes(n, s, nouns)
            for t in tools
            for n, s in parameters(t)
            if topic_stems(n) in topics
        }
        kinds = {
            v: {
                topic
                for topic, n in topics.items()
                if _abbreviates(n, v, phrases)
                or shaped(v, shapes.get(topic, set()))
                or any(_label_score(n, v, t, frozenset()) == LABEL for t in texts)
            }
            for v in candidates
        }
        for spaced in [v for v in candidates if " " in v]:
            # "8830 1562" is labelled where it is written; its joined
            # spelling is the same id, of the same kind.
            joined = spaced.replace(" ", "")
            if joined in kinds:
                kinds[joined] |= kinds[spaced]
        return cls(
            texts=texts,
            requests=len(facts.requests),
            candidates=candidates,
            tool_words={s for t in tools for s in stems(t.name)},
            failed={
                (f.tool, k, v)
                for f in facts.failures
                for k, v in _blamed(f).items()
                if isinstance(v, str)
            },
            # Values that surely failed, for any tool: a failed call's only
            # argument, or one its error names ("no voyage VY-5121").
            refused={
                v
                for f in facts.failures
                for v in f.args.values()
                if isinstance(v, str) and (len(f.args) == 1 or v in f.error)
            },
            kinds=kinds,
            facts=facts,
            phrases=phrases,
        )

    def requested(self, values: list[str], same_shape: bool = False) -> list[str]:
        """Of equally good `values`, the ones the user's own messages name,
        when they name some but not all: the user's subject ("my claim
        C-12"), not another a result mentions beside it ("replaces C-09").
        With `same_shape`, only over values shaped like those (the user's
        e-mail does not push out the user id a lookup found for it)."""
        named = [v for v in values if any(v in t for t in self.texts[: self.requests])]
        if not 0 < len(named) < len(values):
            return values
        if same_shape:
            shapes = {id_shape(v) for v in named}
            return [v for v in values if v in named or id_shape(v) not in shapes]
        return named

    def admissible(self, tool: str, param: str) -> list[str]:
        """The candidates `param` may take: not labelled as another kind of
        id only ("Captain CP-77" for crew_id), and not failed for it. Of a
        failed call with several arguments whose error names none, a value
        goes only where others had the same evidence (`_choose`)."""
        topic = topic_stems(param)
        # "9 Elm Close": 9 is a house's number, no meter's or client's id.
        houses = self.house_numbers(not set(words(param)) & _PLACE_WORDS)
        if not set(words(param)) & PHONE_WORDS:
            # "my mobile is 0161 496 0000": a phone, in whole or in part;
            # and so is a number a call already sent as a phone.
            houses = houses | {p for t in self.texts[: self.requests] for p in labelled_phones(t)}
            houses = houses | self.sent_phones()
        kind = [
            v
            for v in self.candidates
            if v not in self.refused
            and v not in houses
            and (topic in self.kinds[v] or (not self.kinds[v] and _id_shaped(v)))
        ]
        return kind

    def sent_phones(self) -> set[str]:
        """The values calls sent as a phone, as sent and as digits alone."""
        return {
            form
            for _, args in self.facts.sent
            for key, value in args.items()
            if isinstance(value, str) and set(words(key)) & PHONE_WORDS
            for form in (value, re.sub(r"\D", "", value))
        }

    def house_numbers(self, with_houses: bool = True) -> set[str]:
        """The halves of the codes the request writes in two ("KT4 2QW": no
        id is "KT4"), and `with_houses` the house numbers of the street
        addresses it writes."""
        requests = self.texts[: self.requests]
        out = {
            half for t in requests for code in codes_in(t) if " " in code for half in code.split()
        }
        # A result's postcode too ("Kendal LA9 4QT": no id is "LA9"):
        # two short halves, each of letters and digits, written as one.
        out |= {
            half
            for t in self.texts[self.requests :]
            for code in codes_in(t)
            if code in t and _POSTCODE_LIKE.fullmatch(code)
            for half in code.split()
        }
        if with_houses:
            # The numbers of the house and of the flat ("Flat 4C, 31 ...").
            out |= {
                token.rstrip(",")
                for t in requests
                for street in street_addresses(t)
                for token in street.split()
                if any(c.isdigit() for c in token)
            }
        return out


class IdentifierProvenance:
    name = "identifier_provenance"

    def prefer(self, facts: TurnFacts, out: Preferred) -> None:
        talk = _Conversation.of(facts)
        shape_nouns = described_prefixes(facts.workflow.tools)
        self._listed_members(facts, out, talk)
        for tool in facts.workflow.tools:
            params = [(n, s) for n, s in parameters(tool) if _free_string(s) and id_param(n, s)]
            required = set(tool.parameters.get("required") or [])
            nouns = frozenset(topic_stems(tool.name)[1:])
            scores = {
                n: self._scores(
                    n, talk.candidates, talk.texts, nouns, described_label(s), talk.phrases
                )
                for n, s in params
            }
            for n, s in params:
                # An id of the shape the descriptions give this parameter's
                # noun ("booking refs (KB-.....)") is of its kind, as an
                # abbreviation says: not which one of them.
                prefixes = own_prefixes(n, s, shape_nouns)
                scores[n].update(
                    {
                        v: max(scores[n].get(v, 0), ABBREVIATION)
                        for v in talk.candidates
                        if shaped(v, prefixes)
                    }
                )
            for name, schema in params:
                key = f"{tool.name}.{name}"
                if not undecided(out, key):
                    continue
                admissible = [v for v in talk.admissible(tool.name, name) if _fits(schema, v)]
                if is_email(name, schema):
                    admissible = emails_only(admissible)
                elif words(name)[-1:] and words(name)[-1] in _CODE_HEADS:
                    # An e-mail address is no site's code or order's number.
                    admissible = [v for v in admissible if "@" not in v]
                mine = {
                    v: s
                    for v, s in scores[name].items()
                    if v in admissible
                    # Labelled as another parameter of this tool, more strongly.
                    and not any(scores[o].get(v, 0) >= LABEL > s for o, _ in params if o != name)
                }
                best = self._choose(tool.name, name, mine, admissible, talk, bool(facts.results))
                if not best and is_email(name, schema) and len(admissible) == 1:
                    # The one e-mail address the conversation writes.
                    best = admissible
                if best:
                    out.values[key] = best
                    out.reasons[key] = self.name
                elif (
                    not admissible
                    and id_param(name)
                    and name in required
                    # A report may only wait once lookups have run.
                    and (not facts.is_terminal(tool.name) or facts.results)
                ):
                    # No id of its kind yet: a lookup has to find one first.
                    out.blocked.add(tool.name)

    def _listed_members(self, facts: TurnFacts, out: Preferred, talk: _Conversation) -> None:
        """An enum of ids ("CN-2", "CN-3") whose members a result lists
        with their details: the members whose entries the request
        describes ("the bigger of your canoes"), as for a free id."""
        results = talk.texts[talk.requests :]
        for tool in facts.workflow.tools:
            for name, schema in parameters(tool):
                key = f"{tool.name}.{name}"
                members = schema.get("enum")
                if not isinstance(members, list) or not undecided(out, key):
                    continue
                listed = [
                    m
                    for m in members
                    if isinstance(m, str) and _id_shaped(m) and any(m in t for t in results)
                ]
                if len(listed) < 2:
                    continue
                best = self._closest(listed, results, talk, name)
                if len(best) < len(listed):
                    out.values[key] = best
                    out.reasons[key] = self.name

    def _choose(
        self,
        tool: str,
        name: str,
        mine: dict[str, int],
        admissible: list[str],
        talk: _Conversation,
        any_results: bool,
    ) -> list[str]:
        """The values with the most evidence; without evidence, for an id,
        the listing entry the request describes, else the admissible ids
        when some candidates are not."""
        # One id does not fill two different parameters while another has
        # evidence for this one.
        elsewhere = sent_elsewhere(talk.facts, name)
        fresh = {v: s for v, s in mine.items() if v not in elsewhere}
        if max(fresh.values(), default=0) >= ABBREVIATION:
            mine = fresh
        top = max(mine.values(), default=0)
        carried = _sent_as(talk.facts, tool, name, admissible)
        kind_only = top == ABBREVIATION and mine.get(carried[-1] if carried else "") == top
        if (
            carried
            and id_param(name)
            and (top < ABBREVIATION or (kind_only and not _another_partys(tool, name)))
        ):
            # The id another call that ran sent as this same parameter (the
            # lookup's `item_id`, then the reply's): carried forward, over
            # a noun of the tool's name labelling some other id, and over
            # the other ids of its kind (every job id a listing holds is of
            # the kind; the quotes were looked up for one), unless the
            # parameter is another party's (the new holder's e-mail).
            return carried[-1:]
        if top >= ABBREVIATION or (top == TOOL_LABEL and id_param(name)):
            best = [v for v in talk.candidates if mine.get(v) == top]
            # A failed call's value goes where others are as good ("Claim
            # refused" for a cabin and a passenger: another cabin, the passenger).
            best = [v for v in best if (tool, name, v) not in talk.failed] or best
            best = whose(best, talk.texts[: talk.requests], for_someone_else(tool, name))
            return self._closest(talk.requested(best), talk.texts, talk, name)
        if not id_param(name):
            return []
        # An id a call sent as another parameter (the site's code) is not
        # this one's while others are there.
        admissible = [v for v in admissible if v not in elsewhere] or admissible
        # The user's own id over others of its shape ("HR-61852" over the
        # "HR-61853" a result lists beside it).
        admissible = talk.requested(admissible, same_shape=True)
        if any_results:
            results = talk.texts[talk.requests :]
            best = self._closest(admissible, results, talk, name)
            if len(best) == 1:
                return best
        if admissible and len(admissible) < len(talk.candidates):
            return admissible
        return []

    @staticmethod
    def _scores(
        param: str,
        candidates: list[str],
        texts: list[str],
        tool_nouns: frozenset[str],
        described: tuple[str, ...] = (),
        phrases: tuple[tuple[str, ...], ...] = (),
    ) -> dict[str, int]:
        out: dict[str, int] = {}
        for value in candidates:
            score = max(
                (_label_score(param, value, t, tool_nouns, described) for t in texts), default=0
            )
            if score < LABEL and _abbreviates(param, value, phrases):
                score = max(score, ABBREVIATION)
            if score:
                out[value] = score
        return out

    @staticmethod
    def _closest(values: list[str], texts: list[str], talk: _Conversation, param: str) -> list[str]:
        # Other parameters' names may be what tells entries apart
        # (`needs_shore_power`); the tools' names and this one's never do.
        ignore = talk.tool_words | set(stems(param))
        requests = talk.texts[: talk.requests]
        # proper_names reads this module's id rules: imported here, not at the top.
        from forge_core.guardrails.proper_names import PERSON_WORDS, own_names

        if not set(words(param)) & PERSON_WORDS:
            # The user's own name describes the user's record, not the
            # item a lookup finds for them ("Customer CU-5512, Nora
            # Bell" is no watch "my Omega" names).
            ignore |= {s for name in own_names(requests) for s in stems(name)}
        today = stated_today(talk.facts.workflow.system_prompt)
        return described(values, texts, requests, ignore, topic_stems(param), today=today)
