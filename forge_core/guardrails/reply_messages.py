"""A reply's free-text message says what the results say to the user's questions.

A terminal tool that writes back to the user (`reply_to_guest`,
`send_hire_update`) often takes a free-text `message` beside its structured
fields. The bundled model writes it from its own ideas ("1", "Please reply
to customer", "No guest"), where the results the run found state the
answers: "Insurance (replacement) value: 6,500.00 GBP." So the message is
built from the results: the parts of the results (lines, sentences,
semicolon-separated clauses) that share a word with the user's questions
(the sentences that ask; the whole request where none does), the best
few, in the order the results give them. It quotes the results and adds
nothing of its own: an answer that agrees with what was found (issue
item 3).

Where no part shares a word with the questions, the message is the newest
result's first part. Only for a terminal tool's plain string whose name
ends in a word for a message (`message`, `reply`, `body`, `answer`,
`response`, `summary`, `text`),
with no enum, format or pattern, once a tool has returned a result.
"""

from __future__ import annotations

import re
from typing import Any

from forge_core.guardrails import Preferred, TurnFacts, decide, parameters, undecided
from forge_core.guardrails.text import stems

_MESSAGE_WORDS = frozenset("message reply body answer response summary text".split())
# Where one part of a result ends: a line, a sentence, a clause after ";".
_PART = re.compile(r"\n+|;\s+|(?<=[.!?])\s+(?=[A-Z(])")
_QUESTION = re.compile(r"[^.!?]*\?")
# Words that carry no question of their own.
_PLAIN = frozenset(
    stems(
        "a an the and or but of to in on at for with by from is are was were be been it its "
        "this that these those i me my we us our you your he she they them their there here "
        "what which who whom whose when where why how do does did can could would should will "
        "shall may might must have has had not no yes please just also any anything some so if "
        "about as than then now yet still know tell let get go going want like need"
    )
)
# At most this many parts: a reply answers a few questions.
MAX_PARTS = 4
# A message no longer than this many characters.
MAX_CHARS = 500


def takes_message(name: str, schema: dict[str, Any]) -> bool:
    said = re.findall(r"[a-z]+", name.lower())
    return (
        schema.get("type") == "string"
        and not {"enum", "format", "pattern", "const"} & set(schema)
        and bool(said[-1:])
        and said[-1] in _MESSAGE_WORDS
    )


def _asked(requests: list[str]) -> set[str]:
    """The content stems of what the user asks: the questions, else all."""
    text = " ".join(requests)
    questions = " ".join(_QUESTION.findall(text)) or text
    return {s for s in stems(questions) if s not in _PLAIN and not s.isdigit() and len(s) > 2}


# What a question asks for, by its words, and what a part that answers it
# writes: "when / what time / until" a clock time or a date, "how much /
# cost / owe" an amount.
_ASKS_WHEN = re.compile(r"\b(?:when|what time|until|till|earliest|latest|how long)\b", re.I)
_ASKS_AMOUNT = re.compile(
    r"\b(?:how much|cost|costs|price|pay|owe|fee|fees|charge|donation|balance|total)\b", re.I
)
_WHEN = re.compile(r"\b\d{1,2}:\d{2}\b|\b\d{4}-\d{2}-\d{2}\b")
# "What time do I need to turn up?" asks for a clock time, which no date
# (the balance's due date) answers.
_ASKS_CLOCK = re.compile(r"\b(?:what time|which time|how early|what hour)\b", re.I)
_CLOCK = re.compile(r"\b\d{1,2}:\d{2}\b")
_AMOUNT = re.compile(r"\d[\d,]*\.\d{2}\b|[£$€]\s?\d|\b\d+(?:\.\d+)?\s?(?:GBP|EUR|USD)\b")
_AMOUNT_KINDS = (
    (
        re.compile(r"\b(?:left|still|owe|outstanding|remaining|balance)\b", re.I),
        re.compile(r"\b(?:balance|outstanding|remaining|due)\b", re.I),
    ),
    (
        re.compile(r"\b(?:altogether|in total|all in|total)\b", re.I),
        re.compile(r"\btotal\b", re.I),
    ),
)
# A part that leads with a record's id ("- KMS-bk-37790: ..., completed").
_LEADING_ID = re.compile(r"^([A-Za-z]{2,}[-_][\w-]*\d[\w-]*)\s*[:,]")


def _kinds(part: str, questions: str) -> set[str]:
    """What a part answers of what the questions ask for: a time (a clock
    time where the question says "what time"), an amount (what is left to
    pay: a balance; what it comes to: a total)."""
    out = set()
    if _ASKS_WHEN.search(questions) and _WHEN.search(part):
        out.add("when")
    if _ASKS_CLOCK.search(questions) and _CLOCK.search(part):
        out.add("clock")
    if _ASKS_AMOUNT.search(questions) and _AMOUNT.search(part):
        out.add("amount")
        for asks, answers in _AMOUNT_KINDS:
            if asks.search(questions) and answers.search(part):
                out.add(answers.pattern)
    return out


def answering_parts(requests: list[str], results: list[str], sent: set[str]) -> list[str]:
    """The parts of `results` that answer the user's questions, at most
    MAX_PARTS, in the results' order: one by one, the part that covers most
    of what no part taken yet covers (the questions' words, a time or an
    amount where one is asked). A part about another record (it leads with
    an id the run never sent, where it sent one) is none."""
    asked = _asked(requests)
    text = " ".join(requests)
    questions = " ".join(_QUESTION.findall(text)) or text
    parts = [p.strip(" -*\u2022") for text in results for p in _PART.split(text) if p.strip()]
    parts = [p for p in parts if not _about_another(p, sent)]
    said = [(asked & set(stems(p)), _kinds(p, questions)) for p in parts]
    covered: set[str] = set()
    taken: list[int] = []
    while len(taken) < MAX_PARTS:
        # A word or a kind no part covers yet counts twice; a time or an
        # amount covered already still counts (a second date may be asked),
        # a clock time not (the one asked for is the first the results give).
        gains = [
            (
                2 * len(words - covered)
                + 2 * len(kinds - covered)
                + len(kinds & covered - {"clock"}),
                -i,
            )
            for i, (words, kinds) in enumerate(said)
            if i not in taken
        ]
        best = max(gains, default=(0, 0))
        if best[0] == 0:
            break
        taken.append(-best[1])
        covered |= said[-best[1]][0] | said[-best[1]][1]
    return [parts[i] for i in sorted(taken)]


def _about_another(part: str, sent: set[str]) -> bool:
    lead = _LEADING_ID.match(part)
    return bool(sent and lead and lead.group(1) not in sent)


def _sentence(part: str) -> str:
    part = part.strip()
    return part if part.endswith((".", "!", "?")) else f"{part}."


class ReplyMessages:
    name = "reply_messages"

    def prefer(self, facts: TurnFacts, out: Preferred) -> None:
        if not facts.results:
            return
        results = [text for _, text in facts.results]
        # The ids the run's calls sent: the records it is about.
        sent = {v for _, args in facts.sent for v in _strings(args)}
        for tool in facts.workflow.tools:
            if not facts.is_terminal(tool.name):
                continue
            for name, schema in parameters(tool):
                key = f"{tool.name}.{name}"
                if not takes_message(name, schema) or not undecided(out, key):
                    continue
                parts = answering_parts(facts.requests, results, sent)
                if not parts:
                    # No part shares a word with the question ("Is train
                    # GW204 running?"): what the last lookup said first.
                    parts = [p for p in _PART.split(results[-1]) if p.strip()][:1]
                # One part is quoted as the result wrote it; several are
                # sentences one after another.
                joined = parts[0] if len(parts) == 1 else " ".join(_sentence(p) for p in parts)
                message = joined[:MAX_CHARS].strip()
                if message:
                    decide(out, key, [message], self.name)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []
