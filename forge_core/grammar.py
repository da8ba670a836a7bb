"""A compact GBNF grammar for tool calls, built from the workflow's tools.

llama-server can derive a grammar from a JSON Schema itself (`response_format`),
but that grammar admits pretty-printing whitespace and unbounded strings: under
sampling a small model wanders into both and runs into `max_tokens` with a
truncated call (measured with the 270M model: a value of
"10.000.000.000..." until the limit). This grammar admits only compact JSON —
at most one optional space between tokens — and bounds every string and array,
so a call always finishes. It parsed 30/30 at T=0.8 where the schema-derived
one did not, with ~30% fewer tokens generated.

Two more things keep a small model's values sane. String bounds shrink so a
whole call fits in the turn's `max_tokens` (a call cut off there is no call),
and identifier-like fields (`*_id`, `code`, `sku`, `email`, ...) without a
`maxLength` get a short one: a 270M model otherwise fills an id with
"9000...0" up to the bound. And a call that already failed can be excluded:
for a tool whose failed call had one string (or enum) argument, the grammar no
longer admits that value, so the model cannot loop on it. With grounding on,
free strings also cannot be a placeholder copied from the schema
("city_name" for `city`, the tool's own name).

The schema keywords tool parameters use are translated (schema_rules.py
writes formats, simple patterns and small integer ranges); what the grammar
cannot write, e.g. most bounds, `multipleOf` or `uniqueItems`, is left to
validation and reported (`unenforced_keywords`, logged at run start). Only
a shape it cannot write (a free-form value, `allOf`) returns None: the
backend falls back to `response_format`. Arguments are validated against
the full schema after generation either way.
"""

from __future__ import annotations

import json
import logging
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from forge_core.grammar_builder import (
    MAX_IDENTIFIER,
    MAX_ITEMS,
    Builder,
    Unsupported,
    configured,
)
from forge_core.guardrails.grounding import is_identifier_like
from forge_core.piece_grammars import PieceGrammars, piece_grammars
from forge_core.schema_rules import MAX_STRING, exclusions, string_bound
from forge_core.workflow import ToolSpec, Workflow

if TYPE_CHECKING:
    from forge_core.guardrails.value_pools import NumberChoice

__all__ = [
    "MAX_CALLS",
    "MAX_IDENTIFIER",
    "MAX_ITEMS",
    "MAX_STRING",
    "PieceGrammars",
    "Unsupported",
    "build_grammar",
    "is_identifier_like",
    "log_unenforced",
    "piece_grammars",
    "unenforced_keywords",
]

MAX_CALLS = 8

_log = logging.getLogger(__name__)


def build_grammar(
    tools: list[ToolSpec],
    parallel: bool = False,
    *,
    max_tokens: int = 0,
    excluded: list[tuple[str, dict[str, Any]]] | None = None,
    grounded: list[str] | None = None,
    grounded_formats: dict[str, list[str]] | None = None,
    grounded_labels: dict[str, list[str]] | None = None,
    bound: dict[str, list[Any]] | None = None,
    number_digits: int = 0,
    number_values: dict[str, NumberChoice] | None = None,
    min_calls: int = 1,
    max_calls: int = 0,
    unseen_examples: dict[str, list[str]] | None = None,
    named_values: dict[str, list[str]] | None = None,
    shaped_values: dict[str, list[str]] | None = None,
    preferred_values: dict[str, list[Any]] | None = None,
    preferred_items: dict[str, list[str]] | None = None,
    workflow_name: str = "",
    shunned_chars: str = "",
    phones: list[str] | None = None,
) -> str | None:
    """GBNF admitting one `{"tool": name, "args": {...}}` call (or an array of
    them when `parallel`), or None when a schema needs the JSON-Schema path.

    `max_tokens` (0: no limit) bounds strings so a call fits; `excluded` are
    calls that failed earlier, left out where expressible (see module doc);
    `grounded` (None: grounding off) are the values seen in the conversation
    that grounded parameters are limited to (grounding.py), and
    `grounded_formats` ("tool.param" -> values) narrows one parameter
    further: the tool rejected a value's format, these are it reformatted;
    `grounded_labels` (param -> values) are the candidates the conversation
    labels as that parameter's kind, preferred when there are any.
    `bound` ("tool.param" -> values) are the only values a report parameter
    takes (binding.py); `number_digits` (0: 16) bounds the digits of an
    integer (and of a number's integer part); `unseen_examples`
    ("tool.param" -> values) are schema examples a free string may not copy;
    `named_values` ("tool.param" -> values) are what the conversation calls by the
    parameter's noun, the only values that free string then takes, and
    `shaped_values` ("tool.param" -> values) the ones shaped like its schema
    example, which come first. `workflow_name`, which the prompt shows, is
    a placeholder too (a free string is never it). No free string writes
    `shunned_chars`; only a phone's parameter takes `phones` when grounded.
    """
    builder = configured(
        bound=bound,
        unseen_examples=unseen_examples,
        named_values=named_values,
        shaped_values=shaped_values,
        workflow_name=workflow_name,
        number_values=number_values,
        number_digits=number_digits,
        grounded=grounded,
        grounded_formats=grounded_formats,
        grounded_labels=grounded_labels,
        preferred_values=preferred_values,
        preferred_items=preferred_items,
        shunned_chars=shunned_chars,
        phones=phones,
    )
    try:
        calls = []
        for tool in tools:
            builder.string_bound = string_bound(tool, max_tokens, parallel)
            builder.exclude = exclusions(tool, excluded or [])
            calls.append(builder.call(tool))
    except Unsupported:
        return None
    builder.rules["call"] = " | ".join(calls)
    if parallel:
        low = max(0, min(min_calls, MAX_CALLS) - 1)
        high = max(low, min(max_calls or MAX_CALLS, MAX_CALLS) - 1)
        more = f'(sp "," sp call){{{low},{high}}}'
        builder.rules["root"] = f'"[" sp call {more} sp "]"'
    else:
        builder.rules["root"] = "call"
    order = ["root", "call", *[k for k in builder.rules if k not in ("root", "call")]]
    return "\n".join(f"{name} ::= {builder.rules[name]}" for name in order) + "\n"


def unenforced_keywords(tool: ToolSpec) -> list[tuple[str, str]]:
    """(parameter path, keyword) for each keyword of `tool`'s schema that
    its grammar leaves to validation; ("(arguments)", "fallback: ...") when
    the whole schema takes llama-server's JSON-Schema path instead."""
    return list(_unenforced(tool.name, json.dumps(tool.parameters)))


@lru_cache(maxsize=256)
def _unenforced(name: str, schema: str) -> tuple[tuple[str, str], ...]:
    # Every accepted workflow asks (log_unenforced), mostly for the same tools.
    builder = Builder()
    try:
        builder.call(ToolSpec(name, "", json.loads(schema)))
    except Unsupported as e:
        return (("(arguments)", f"fallback: {e}"),)
    return tuple(dict.fromkeys(builder.left))


def log_unenforced(wf: Workflow) -> None:
    """One line per tool whose schema has keywords the grammar leaves to
    validation (or a shape it cannot write at all), so an operator sees it
    when the workflow is accepted (the server calls it after
    validate_workflow) rather than as a rejected or cut-off call. Here, not
    in workflow.py: the grammar imports the workflow's ToolSpec, so the
    workflow module cannot import the grammar back."""
    for tool in wf.tools:
        left = unenforced_keywords(tool)
        if not left:
            continue
        named = ", ".join(f"{path}: {keyword}" for path, keyword in left)
        fallback = left[0][1].startswith("fallback:")
        _log.log(
            logging.WARNING if fallback else logging.INFO,
            "workflow %s, tool %s: %s (%s)",
            wf.name,
            tool.name,
            "no grammar, the JSON-Schema path instead" if fallback else "left to validation",
            named,
        )
