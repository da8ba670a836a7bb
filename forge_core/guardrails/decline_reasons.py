"""A decline's reason says what the tool's own description says it declines.

A decline tool takes a free-text reason ("Decline a request that is not
about kennel bookings, with a reason"), and the bundled model fills it with a
word of its own ("declined", "unknown"), which tells the user
nothing and says what no one wrote. The integrator did write why such a
request is declined: the tool's description. So the reason is that
description's object ("a request that is not about kennel bookings"), the
declining verb and the "with a reason" tail left off, where it says more
than the verb.

Only for a decline path's plain string parameter named as a reason
(`reason`, `explanation`, `why`, `note`), with no enum, format or pattern.
"""

from __future__ import annotations

import re
from typing import Any

from forge_core.guardrails import Preferred, TurnFacts, decide, parameters, undecided
from forge_core.guardrails.decline import decline_paths
from forge_core.workflow import RESPOND_TOOL

_REASON_WORDS = frozenset("reason reasons explanation why note rationale".split())
# "Decline a request that ...", "Politely refuse ...": the verb and what
# comes before it.
_VERB = re.compile(r"^.*?\b(?:decline|declines|refuse|refuses|reject|rejects|turn down)\b\s*", re.I)
# ", with a reason", "(give a reason)", "; ends the task": no part of why.
_TAIL = re.compile(
    r"\s*(?:[,;(]\s*|\s+)(?:with|and give|giving|give|stating|saying)\s+(?:a |the )?reason\b.*$"
    r"|\s*[.;]\s*(?:ends? the (?:task|run)|this ends).*$",
    re.I,
)
# At least this many characters: "it" or "the request" says nothing.
_MIN_CHARS = 16


def takes_reason(name: str, schema: dict[str, Any]) -> bool:
    said = re.findall(r"[a-z]+", name.lower())
    return (
        schema.get("type") == "string"
        and not {"enum", "format", "pattern", "const"} & set(schema)
        and bool(said)
        and said[-1] in _REASON_WORDS
    )


def described_reason(description: str) -> str | None:
    """What a decline tool's description says it declines, as written
    there: "a request that is not about kennel bookings"."""
    first = re.split(r"(?<=[.!?])\s+", description.strip())[0] if description.strip() else ""
    verb = _VERB.match(first)
    if verb is None:
        return None
    reason = _TAIL.sub("", first[verb.end() :]).strip(" .,;:")
    return reason if len(reason) >= _MIN_CHARS else None


class DeclineReasons:
    name = "decline_reasons"

    def prefer(self, facts: TurnFacts, out: Preferred) -> None:
        wf = facts.workflow
        terminals = [t for t in wf.tools if facts.is_terminal(t.name)]
        for tool_name in decline_paths(terminals, RESPOND_TOOL):
            tool = facts.tool(tool_name)
            if tool is None or tool_name == RESPOND_TOOL:
                continue
            reason = described_reason(tool.description)
            if reason is None:
                continue
            for name, schema in parameters(tool):
                key = f"{tool_name}.{name}"
                if takes_reason(name, schema) and undecided(out, key):
                    decide(out, key, [reason], self.name)
