"""The most calls a parallel batch needs for what the request lists.

A small model that does not know how to end an array goes on making
calls: a recombination of the values it already used, or values the
request never gave ("USD to AUD and USD to CAD" answered with five
currency pairs). Each thing a request asks for is a part of one of its
sentences, split at `;`, `,`, "and", "or" and "/" outside parentheses, so a
sentence of p parts asks for at most p things, or for a cross product
of its lists ("Lakers and Bulls in seasons 2018 and 2020": 3 parts,
4 calls). The bound per sentence is the largest such product: 1 part
1 call, 2 parts 2, 3 parts 4 (two lists of two), 4 or more no bound (8
already: three lists of two), or the numbers and ids it writes when
there are more. A sentence that refers back to what came
before ("in each city", "both", "all of them") leaves the batch
unbounded. Checked against BFCL v4's 400 parallel and parallel_multiple
cases: never below the expected call count.
"""

from __future__ import annotations

import re

from forge_core.guardrails.entries import _COMMA, _SEMICOLON, _outside_parentheses

# A sentence ends at . ! ? and a space before a capital, a digit or a quote.
# Unlike entries.py no abbreviation is spared: a sentence split too often
# only raises the bound.
_SENTENCE_END = re.compile(r"[.!?]\s+(?=[A-Z0-9\"'])")
# Words that make a sentence's calls a product with what came before.
_REFERS_BACK = re.compile(r"\b(?:each|every|both|all|respective)\b", re.IGNORECASE)
# Other words that set things side by side: "Oslo or Rome", "A vs B".
_ALTERNATIVES = re.compile(r"\s+(?:or|vs\.?|versus|then)\s+|\s*/\s*", re.IGNORECASE)
# A word with a digit: a number or an id, each of which one call may take
# ("kilns K-1 K-2 K-3" lists three without a separator).
_WITH_DIGIT = re.compile(r"[^\s,;()]*\d[^\s,;()]*")
# The most calls a sentence of 1, 2 and 3 parts asks for.
_PER_SENTENCE = {1: 1, 2: 2, 3: 4}


def listed_calls(texts: list[str], cap: int) -> int:
    """The most calls the requests `texts` ask for; 0 when they set no bound
    below `cap` (a long list, a sentence that refers back, no text)."""
    total = 0
    for text in texts:
        for line in text.splitlines():
            for sentence in _outside_parentheses(line, _SENTENCE_END):
                if _REFERS_BACK.search(sentence):
                    return 0
                parts = [
                    p
                    for clause in _outside_parentheses(sentence, _SEMICOLON)
                    for entry in _outside_parentheses(clause, _COMMA)
                    for p in _outside_parentheses(entry, _ALTERNATIVES)
                ]
                listed = _PER_SENTENCE.get(len(parts), cap)
                total += max(listed, len(_WITH_DIGIT.findall(sentence)))
                if total >= cap:
                    return 0
    return total
