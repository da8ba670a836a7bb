"""Booleans the request states: "don't email the skipper yet" is
`email_skipper: false`, "I'd like a paper receipt" is `paper_receipt: true`.

A boolean parameter is stated when one clause of the user's messages holds
a word of its name (stemmed; not a generic one such as `id`). A negation in
that clause before the word, or up to three words after it ("the receipt
isn't needed"), makes it false; none makes it true. The latest clause that speaks wins
("email him... actually, don't email him"). A request that never speaks of
it leaves the parameter to its other rules.
"""

from __future__ import annotations

import re

from forge_core.guardrails import Preferred, TurnFacts, parameters, undecided
from forge_core.guardrails.text import NEGATION, clauses, stem, stems, topic_stems

# How many words after the flag's word a negation still speaks of it.
_AFTER = 3
# Name words that are too common in requests to say which flag they set.
_WEAK = frozenset(
    stems(
        "is has enable enabled use include set flag allow should do make send "
        # Words that join a name's words ("call_on_arrival"): "put it on
        # the order" says nothing of calling.
        "on at in to for of by with the a an and or"
    )
)


def stated(name: str, requests: list[str]) -> bool | None:
    """What the request says of boolean parameter `name`: True, False, or
    None when no clause of it mentions the parameter."""
    wanted = [s for s in topic_stems(name) if s not in _WEAK]
    if not wanted:
        return None
    answer = None
    for text in requests:
        for clause in clauses(text):
            said = list(re.finditer(r"[A-Za-z]+|\d+", clause))
            at = next((i for i, m in enumerate(said) if stem(m.group(0)) in wanted), None)
            if at is not None:
                answer = not _negated(clause, said, at)
    return answer


def _negated(clause: str, said: list[re.Match[str]], at: int) -> bool:
    """A negation before the clause's word for the flag, or right after
    it ("the receipt is not needed"); not one further on, about something
    else ("reserve the van until Friday - don't invoice anything")."""
    end = said[min(at + _AFTER, len(said) - 1)].end()
    return NEGATION.search(clause[:end]) is not None


class StatedBooleans:
    name = "stated_booleans"

    def prefer(self, facts: TurnFacts, out: Preferred) -> None:
        for tool in facts.workflow.tools:
            for name, schema in parameters(tool):
                key = f"{tool.name}.{name}"
                if schema.get("type") != "boolean" or not undecided(out, key):
                    continue
                value = stated(name, facts.requests)
                if value is not None:
                    out.values[key] = [value]
                    out.reasons[key] = self.name
