"""Tool relevance: which of many tools the current request is about.

A small model walks down the tool list in the order it is written: with 7
tools and the right one sixth, it called the five before it first (measured
with Gemma 3 270M, bench/RESULTS.md §5). When a workflow has more tools than
`MAX_RELEVANT_TOOLS`, the grammar admits only the ones that BM25 (bm25s, with
English stop words and the Snowball stemmer) ranks relevant to what the user
asked (a tool far below the best one is left out too, see DOMINANCE), plus a
tool the last result names; terminal tools and pending required steps always
stay allowed. When no tool matches a single word, nothing is narrowed: there
is no evidence to narrow on.

The prompt still lists every tool in the workflow's order, so the prompt
cache that covers the tool list is untouched; only the grammar changes.

`asked_among` applies the same words to alternatives, the
workflow's terminal tools: before any tool has returned, a run ends only the
way the user asked for when the request names one of the outcomes ("restart
it" among restart, scale and delete); once results are in, they may call for
another outcome, and every terminal tool is back.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

from forge_core.workflow import ToolSpec

MAX_RELEVANT_TOOLS = 4
# A tool scoring under this share of the best one is a look-alike that shares
# the request's common words ("ticket") but not its specific ones ("owner"):
# get_ticket_status far below get_ticket_owner for "who owns my ticket".
# Near-ties keep both.
DOMINANCE = 0.6

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _words(name: str) -> str:
    return _CAMEL.sub(" ", name).replace("_", " ").replace("-", " ")


def tool_document(tool: ToolSpec) -> str:
    """What a tool is about: its name as words, its description, and its
    parameters' names and descriptions."""
    parts = [_words(tool.name), tool.description]
    props: dict[str, Any] = tool.parameters.get("properties", {}) or {}
    for name, schema in props.items():
        parts.append(_words(name))
        if isinstance(schema, dict) and schema.get("description"):
            parts.append(str(schema["description"]))
    return " ".join(p for p in parts if p)


@lru_cache(maxsize=64)
def _index(documents: tuple[str, ...]) -> Any:
    import bm25s

    model = bm25s.BM25()
    model.index(_tokenize(list(documents)), show_progress=False)
    return model


@lru_cache(maxsize=1)
def _stemmer() -> Any:
    import Stemmer

    return Stemmer.Stemmer("english")


def _tokenize(texts: list[str]) -> Any:
    import bm25s

    return bm25s.tokenize(texts, stopwords="en", stemmer=_stemmer(), show_progress=False)


def scores(tools: list[ToolSpec], query: str) -> dict[str, float]:
    """BM25 score of each tool against `query` (0: no word in common)."""
    if not tools or not query.strip():
        return {t.name: 0.0 for t in tools}
    documents = tuple(tool_document(t) for t in tools)
    model = _index(documents)
    tokens = _tokenize([query])
    if not tokens.vocab:
        return {t.name: 0.0 for t in tools}
    found, values = model.retrieve(tokens, k=len(tools), show_progress=False)
    out = {t.name: 0.0 for t in tools}
    for doc, value in zip(found[0], values[0], strict=True):
        out[tools[int(doc)].name] = float(value)
    return out


def relevant(tools: list[ToolSpec], query: str, keep: int = MAX_RELEVANT_TOOLS) -> list[str] | None:
    """The names of the `keep` most relevant tools with a positive score, in
    rank order, leaving out those that score under DOMINANCE of the best
    one; None when no tool scores at all (nothing to narrow on)."""
    ranked = sorted(scores(tools, query).items(), key=lambda kv: -kv[1])
    positive = [(name, value) for name, value in ranked if value > 0]
    if not positive:
        return None
    best = positive[0][1]
    return [name for name, value in positive[:keep] if value >= DOMINANCE * best]


def _terms(text: str) -> set[str]:
    import bm25s

    tokens: list[list[str]] = bm25s.tokenize(
        [text], stopwords="en", stemmer=_stemmer(), return_ids=False, show_progress=False
    )
    return set(tokens[0])


def asked_among(tools: list[ToolSpec], request: str) -> set[str]:
    """The tools of `tools` (alternatives, such as a workflow's terminal
    tools) that the request asks for by a word (stemmed; name or
    description) that none of the others has: "please restart it" asks for
    reboot_server among reboot_server, resize_server and wipe_server;
    a request that uses no such word asks for none of them."""
    if len(tools) < 2 or not request.strip():
        return set()
    terms = {t.name: _terms(f"{_words(t.name)} {t.description}") for t in tools}
    wanted = _terms(request)
    out = set()
    for tool in tools:
        others = set().union(*(v for k, v in terms.items() if k != tool.name))
        if (terms[tool.name] - others) & wanted:
            out.add(tool.name)
    return out
