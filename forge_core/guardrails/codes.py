"""Codes the user wrote: "I live at NE4 7QP" looks up postcode `NE4 7QP`.

Postcodes, number plates, serial and licence numbers are written in
groups ("NE4 7QP", "YT62 WBN", "ab-19 kfz"). The grounding of ids reads
single tokens, and a parameter named `postcode` or `plate` is no id by
its name, so a small model writes a code of its own, or a run of digits
to the token limit. A free-string parameter whose name or description
calls it a code of this kind takes the codes the request writes (the
results' when the request writes none): one or two space-separated
groups of letters and digits, with a digit in one and both written in the
same case, so "7B have" is no code and "YT62 WBN" is one.
"""

from __future__ import annotations

import re

from forge_core.guardrails import Preferred, TurnFacts, decide, first_found, parameters, undecided
from forge_core.guardrails.text import words

# Names of codes people write in groups of letters and digits.
_CODE_WORDS = frozenset(
    "postcode postal zip plate plates registration reg licence license serial vin iban "
    "callsign sort".split()
)
_GROUP = re.compile(r"[A-Za-z0-9]{1,8}(?:-[A-Za-z0-9]{1,8})?")
_EDGE = ".,;:!?()[]\"'"


# Short words that stand beside a code without being part of it.
_FUNCTION_WORDS = frozenset(
    "a an the is are was be at on in to of by for from with and or but my our your her his "
    "their its it me us we i you he she they this that no not so as up off via per".split()
)
# "7pm", "10am", "3rd": times and ordinals are not codes.
_NOT_A_CODE = re.compile(r"\d{1,2}(?:am|pm|st|nd|rd|th)", re.IGNORECASE)


def _mixed(group: str) -> bool:
    return (
        any(c.isdigit() for c in group)
        and any(c.isalpha() for c in group)
        and not _NOT_A_CODE.fullmatch(group)
    )


def _part(group: str) -> bool:
    """A group that may stand beside a mixed one in a code: digits, or up
    to four letters that are no function word."""
    return (
        _mixed(group)
        or group.isdigit()
        or (len(group) <= 4 and group.lower() not in _FUNCTION_WORDS)
    )


def _one_case(*groups: str) -> bool:
    letters = "".join(c for g in groups for c in g if c.isalpha())
    return letters.isupper() or letters.islower()


def _long_codes(groups: list[str]) -> list[str]:
    """Runs of three or more groups of two to four letters and digits, one
    of them mixed, in one case: an IBAN or a card written in fours
    ("ie71 bofi 9058 3812 0455 67")."""

    def fits(group: str) -> bool:
        return 2 <= len(group) <= 4 and group.isalnum() and group.lower() not in _FUNCTION_WORDS

    out = []
    run: list[str] = []
    for group in [*groups, ""]:
        if fits(group) and _one_case(*run, group):
            run.append(group)
            continue
        if len(run) >= 3 and any(_mixed(g) for g in run):
            out.append(" ".join(run))
        run = [group] if fits(group) else []
    return out


def codes_in(text: str) -> list[str]:
    """The codes `text` writes (module doc): long runs of groups first, then
    two groups before one."""
    tokens = [t.strip(_EDGE) for t in text.split()]
    groups = [t if _GROUP.fullmatch(t) else "" for t in tokens]
    out: list[str] = _long_codes(groups)
    paired = False
    for first, second in zip(groups, [*groups[1:], ""], strict=True):
        if not first:
            paired = False
            continue
        pair = second and (_mixed(first) or _mixed(second)) and _one_case(first, second)
        if pair and all(len(g) >= 2 and _part(g) for g in (first, second)):
            out.append(f"{first} {second}")
            paired = True
        elif _mixed(first) and _one_case(first) and not paired:
            out.append(first)
        else:
            # The second group of a pair is no code of its own.
            paired = False
    return list(dict.fromkeys(out))


def names_a_code(name: str, description: str) -> bool:
    return bool(set(words(name)) & _CODE_WORDS) or bool(set(words(description)[:8]) & _CODE_WORDS)


class WrittenCodes:
    name = "written_codes"

    def prefer(self, facts: TurnFacts, out: Preferred) -> None:
        results = [text for _, text in reversed(facts.results)]
        for tool in facts.workflow.tools:
            for name, schema in parameters(tool):
                key = f"{tool.name}.{name}"
                if (
                    schema.get("type") != "string"
                    or any(k in schema for k in ("enum", "const", "format"))
                    or not undecided(out, key)
                    or not names_a_code(name, str(schema.get("description", "")))
                ):
                    continue
                found = first_found((facts.requests, results), codes_in)
                decide(out, key, found, self.name)
