"""Words, stems and clauses: what the value guardrails read text with.

Stems come from the Snowball stemmer (PyStemmer, already the relevance
ranker's), so "delayed" meets "delay", "notify" meets "notified".
"""

from __future__ import annotations

import re
from functools import lru_cache

_WORD = re.compile(r"[A-Za-z]+|\d+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
# Where a clause ends: the next one may say the opposite ("no SMS, but email").
_CLAUSE = re.compile(r"[.;!?\n]+|,\s+(?:and|but|or)\s+|\s+but\s+|,\s+")

# Words that say what a value is, not what it is about (member_id -> member).
GENERIC = frozenset(
    "id ids uuid guid number no num code ref reference key value name identifier".split()
)


@lru_cache(maxsize=1)
def _stemmer() -> object:
    import Stemmer

    return Stemmer.Stemmer("english")


# Plurals the stemmer does not bring back to their singular's stem
# ("wolves" -> "wolv", "wolf" -> "wolf"); only nouns that are no verb.
_IRREGULAR = {
    "knives": "knife",
    "wives": "wife",
    "shelves": "shelf",
    "halves": "half",
    "calves": "calf",
    "loaves": "loaf",
    "wolves": "wolf",
    "scarves": "scarf",
    "hooves": "hoof",
    "thieves": "thief",
    "children": "child",
    "women": "woman",
    "men": "man",
    "feet": "foot",
    "teeth": "tooth",
    "geese": "goose",
    "mice": "mouse",
}


@lru_cache(maxsize=8192)
def stem(word: str) -> str:
    lower = word.lower()
    out: str = _stemmer().stemWord(_IRREGULAR.get(lower, lower))  # type: ignore[attr-defined]
    return out


def words(text: str) -> list[str]:
    """Lower-case words and digit runs, camelCase and snake_case split."""
    return [w.lower() for w in _WORD.findall(_CAMEL.sub(" ", text).replace("_", " "))]


@lru_cache(maxsize=4096)
def stems(text: str) -> tuple[str, ...]:
    return tuple(stem(w) for w in words(text))


def name_stems(name: str) -> tuple[str, ...]:
    """The stems of a parameter's or tool's name: `email_skipper` ->
    (email, skipper)."""
    return stems(name)


def topic_stems(name: str) -> tuple[str, ...]:
    """A name's stems without the generic ones (`member_id` -> (member,))."""
    return tuple(stem(w) for w in words(name) if w not in GENERIC)


def clauses(text: str) -> list[str]:
    return [c for c in _CLAUSE.split(text) if c.strip()]


# A clause that says no: "we don't need the card", "no SMS please".
NEGATION = re.compile(
    r"\b(?:don'?t|do not|does not|doesn'?t|no|not|never|without|skip|nor|avoid|nothing|none|"
    r"shouldn'?t|should not|won'?t|will not|mustn'?t|must not|neither)\b",
    re.IGNORECASE,
)


def contains_run(haystack: tuple[str, ...], needle: tuple[str, ...]) -> bool:
    """`needle` occurs in `haystack` as consecutive items."""
    n = len(needle)
    if not n:
        return False
    return any(haystack[i : i + n] == needle for i in range(len(haystack) - n + 1))
