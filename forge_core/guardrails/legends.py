"""Codes a description defines: "(ST = standard, XC = express courier)".

Integrators write a code's meaning into a description instead of an enum:
"Tariff code (ST = standard, XC = express courier)", "Upcoming sessions of
a class (B1 = beginners one, B2, ADV = advanced)", "Grade, one of Foundation
(FND), Intermediate (INT)". The user names the meaning ("the express
courier one"), never the code, so the code is in no grounded pool and a
small model writes whatever id it saw. A string parameter without an enum
takes the codes whose meaning, or the code itself, the request names: the
codes its own description defines, or its tool's description where the
tool has no other such parameter. Where the request names none or every
code, the parameter is left alone.
"""

from __future__ import annotations

import re
from typing import Any

from forge_core.guardrails import Preferred, TurnFacts, decide, parameters, undecided
from forge_core.guardrails.text import clauses, stems, words
from forge_core.workflow import ToolSpec

_CODE = r"[A-Z0-9][A-Z0-9_-]{0,11}"
_GLOSS = r"[A-Za-z][\w'\u2019]*(?:[ -][\w'\u2019]+){0,5}"
_END = r"(?=\s*(?:[,;)/]|\bor\b|\band\b|\.(?:\s|$)|$))"
# "ST = standard", "ST: standard", "ST - standard", "ST (standard)".
_CODE_FIRST = re.compile(rf"(?<![\w-])({_CODE})\s*(?:=|:|\u2013|\u2014| - |\()\s*({_GLOSS}){_END}")
# "standard (ST)".
_GLOSS_FIRST = re.compile(rf"({_GLOSS})\s*\(({_CODE})\)")
# Words that say a description is giving examples, not a legend.
_PROSE = frozenset(
    "note notes message comment comments description details summary reason text body "
    "instructions explanation query".split()
)
# A gloss's leading words that belong to the sentence, not the meaning.
_LEAD = frozenset("one of a an the is are either or and for e g eg".split())


def legend(text: str) -> dict[str, str]:
    """Code -> its meaning, for each code `text` defines; {} for fewer
    than two (one code and its meaning is a sentence, not a legend)."""
    found: dict[str, str] = {}
    for m in _CODE_FIRST.finditer(text):
        if any(c.isalpha() for c in m.group(1)):
            found.setdefault(m.group(1), m.group(2).strip())
    for m in _GLOSS_FIRST.finditer(text):
        gloss = " ".join(_trimmed(words(m.group(1))))
        if gloss and any(c.isalpha() for c in m.group(2)):
            found.setdefault(m.group(2), gloss)
    meaningful = {code: gloss for code, gloss in found.items() if gloss.upper() != code}
    return meaningful if len(meaningful) >= 2 else {}


def _trimmed(said: list[str]) -> list[str]:
    """The last words before a parenthesis that can be a meaning: up to
    four, after any sentence word ("one of", "the")."""
    tail = said[-4:]
    while tail and tail[0].lower() in _LEAD:
        tail = tail[1:]
    return tail


def named_codes(codes: dict[str, str], requests: list[str]) -> list[str]:
    """The codes whose meaning the request names (every word of it in one
    clause: "the one pottery beginners class" for "Beginners One Pottery") or which it
    writes itself."""
    said = [set(stems(clause)) for text in requests for clause in clauses(text)]
    written = {w for text in requests for w in re.findall(r"[\w-]+", text)}
    out = []
    for code, gloss in codes.items():
        meaning = set(stems(gloss))
        if code in written or (meaning and any(meaning <= s for s in said)):
            out.append(code)
    return out


def _takes_code(name: str, schema: dict[str, Any]) -> bool:
    if schema.get("type") != "string" or "enum" in schema or "format" in schema:
        return False
    return not set(words(name)) & _PROSE


def legends(tool: ToolSpec) -> dict[str, dict[str, str]]:
    """Parameter name -> the codes its description, or else its tool's
    description, defines."""
    takers = [(name, schema) for name, schema in parameters(tool) if _takes_code(name, schema)]
    out = {}
    for name, schema in takers:
        codes = legend(str(schema.get("description", "")))
        if codes:
            out[name] = codes
    if len(takers) == 1 and not out:
        codes = legend(tool.description)
        if codes:
            out[takers[0][0]] = codes
    return out


class LegendCodes:
    name = "legend_codes"

    def prefer(self, facts: TurnFacts, out: Preferred) -> None:
        for tool in facts.workflow.tools:
            for name, codes in legends(tool).items():
                key = f"{tool.name}.{name}"
                if not undecided(out, key):
                    continue
                named = named_codes(codes, facts.requests)
                if len(named) < len(codes):
                    decide(out, key, named, self.name)
