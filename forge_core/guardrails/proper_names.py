"""Names the user wrote: "What's the weather in Oslo?" looks up `Oslo`.

A small model fills a free string such as `city` or `name` with a name of
its own ("Odal" for Oslo, the schema's "Paris"). Where the user's message
writes names (capitalised words that do not start a sentence: "Oslo",
"Buenos Aires", "Priya Raman"), a parameter of a lookup that names a place,
a person or an organisation (`city`, `name`, `destination`, `room`; a plain
string that is not an id, and not of a terminal tool, whose values are
reports) takes one of them. A message
that writes no name leaves the parameter to its other rules.
"""

from __future__ import annotations

import calendar
import re

from forge_core.guardrails import Preferred, TurnFacts, parameters, undecided
from forge_core.guardrails.provenance import id_param
from forge_core.guardrails.text import words

# Parameters that name a place, a person or an organisation.
_NAMED = frozenset(
    "name names city cities town country countries location place destination origin region "
    "state province person people customer client guest patient employee user owner contact "
    "recipient sender company organization organisation team department room building venue "
    "airport station street address brand author artist museum hotel restaurant store shop".split()
)
# Calendar words are capitalised too, and are dates, not names.
_CALENDAR = frozenset(
    w.lower() for w in (*calendar.month_name, *calendar.day_name, *calendar.month_abbr) if w
)
_SENTENCE = re.compile(r"(?:^|[.!?]\s+|\n\s*)")
_NAME = re.compile(r"\b[A-Z][a-z]+(?:[ -][A-Z][a-z]+)*\b")


def names_in(text: str) -> list[str]:
    """Runs of capitalised words that do not start a sentence."""
    starts = {m.end() for m in _SENTENCE.finditer(text)}
    out = []
    for m in _NAME.finditer(text):
        span = m.group(0)
        if m.start() in starts:
            # "Give Priya Raman ...": the sentence's first word is not a name.
            rest = span.split(" ", 1)
            if len(rest) < 2:
                continue
            span = rest[1]
        if span != "I" and span.lower() not in _CALENDAR:
            out.append(span)
    return list(dict.fromkeys(out))


def _name_like(name: str, schema: dict[str, object]) -> bool:
    return (
        schema.get("type") == "string"
        and not any(k in schema for k in ("enum", "const", "format", "pattern"))
        and not id_param(name)
        and bool(set(words(name)) & _NAMED)
    )


class ProperNames:
    name = "proper_names"

    def prefer(self, facts: TurnFacts, out: Preferred) -> None:
        found = [n for text in facts.requests for n in names_in(text)]
        if not found:
            return
        for tool in facts.workflow.tools:
            if facts.is_terminal(tool.name):
                continue
            for name, schema in parameters(tool):
                key = f"{tool.name}.{name}"
                if _name_like(name, schema) and undecided(out, key):
                    out.values[key] = list(dict.fromkeys(found))
                    out.reasons[key] = self.name
