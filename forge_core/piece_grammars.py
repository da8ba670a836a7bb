"""The grammars of one piece of a tool call (its name, one argument's value,
the next key), for calls a model writes piece by piece
(backends/llama/pieces.py). Each admits what the whole-call grammar
(grammar.py) admits at that point: the rules come from the same `Builder`.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from forge_core.grammar_builder import Builder, Unsupported, configured
from forge_core.schema_rules import (
    CHAIN_INDEX,
    chain_body,
    chain_text,
    exclusions,
    literal,
    references,
    string_bound,
)

if TYPE_CHECKING:
    from forge_core.guardrails.value_pools import NumberChoice
    from forge_core.workflow import ToolSpec

__all__ = ["PieceGrammars", "piece_grammars"]


# After the piece a request generates, what may follow it in a call and then
# anything: the model's next token (`",` where a value ends, `"}}` where the
# call does) passes the grammar on the sampler's fast path, and a stop string
# (backends/llama/pieces.py) cuts the text there. The first character is one a stop
# string starts with, so a model that wants to go on otherwise cannot run to
# max_tokens; after a number, no space (the stops do not end at one).
_REST = {"rest": "[,}\\n ] [^\\x00]*", "rest-scalar": "[,}\\n] [^\\x00]*"}
_LITERAL = re.compile(r'"(?:[^"\\]|\\.)*"')
_LITERALS = re.compile(rf"{_LITERAL.pattern}(?: \| {_LITERAL.pattern})*")


class PieceGrammars:
    """Grammars for the pieces of one call that a model chooses: the tool's
    name, each argument's value, whether another optional key follows
    (calls.py `segmented`). Each admits exactly what the whole-call grammar
    admits at that point, so the same values are bounded, grounded and
    excluded; the keys and punctuation between them are Forge's to write.
    """

    def __init__(
        self, builder: Builder, max_tokens: int, excluded: list[tuple[str, dict[str, Any]]]
    ):
        self._builder = builder
        self._max_tokens = max_tokens
        self._excluded = excluded
        # A call asks `choices` and then `value` for the same argument: its
        # rule is made once (the builder's rules are kept between the two).
        self._value_rules: dict[tuple[str, tuple[str, ...]], str | None] = {}
        # A parallel batch's strings are bounded as the whole-call grammar
        # bounds them there (two calls' worth of max_tokens).
        self.parallel = False
        # A listed id -> the numbers its entry writes (guardrails/item_entries.py).
        self.entry_numbers: dict[str, list[str]] = {}
        # An item's enum member -> its other keys' members named beside it
        # (guardrails/item_context.py).
        self.item_context: dict[str, dict[str, list[str]]] = {}
        self.item_segments: list[str] = []

    def _root(self, body: str) -> str:
        rules = self._builder.rules
        order, seen, todo = ["root"], {"root"}, [body]
        # The shared chain of length bounds (Builder.chars) is most of a
        # string's rules: written as one block, up to the longest reached.
        chain = 0
        while todo:
            for name in references(todo.pop()):
                if name in rules and name not in seen:
                    seen.add(name)
                    k = CHAIN_INDEX.get(name, 0)
                    if k and rules[name] == chain_body(k):
                        chain = max(chain, k)
                        continue
                    order.append(name)
                    todo.append(rules[name])
        if chain and "char" not in seen:
            order.append("char")
        lines = [f"root ::= {body}", *(f"{n} ::= {rules[n]}" for n in order[1:])]
        if chain:
            lines.append(chain_text(chain))
        words = body.split()
        lines += [f"{rest} ::= {_REST[rest]}" for rest in _REST if rest in words]
        return "\n".join(lines) + "\n"

    def tool_name(self, names: list[str]) -> str:
        choice = " | ".join(literal(n) for n in names)
        return self._root(f"sp ({choice}) rest")

    def _value_rule(
        self, tool: ToolSpec, key: str, path: tuple[str, ...] = (), schema: Any = None
    ) -> str | None:
        """The rule of argument `key`, or of the value at `path` (keys and
        "[]" for an array's items, below the arguments) whose schema is
        `schema`."""
        path = path or (key,)
        made = (tool.name, path)
        if made not in self._value_rules:
            if schema is None:
                schema = tool.parameters.get("properties", {}).get(key)
            self._value_rules[made] = self._make_value_rule(tool, path, schema)
        return self._value_rules[made]

    def _make_value_rule(self, tool: ToolSpec, path: tuple[str, ...], schema: Any) -> str | None:
        builder = self._builder
        builder._root = tool.parameters
        builder.tool_name = tool.name
        builder.string_bound = string_bound(tool, self._max_tokens, self.parallel)
        # As the whole-call grammar names them: a key's value by its key, an
        # array's item by nothing; exclusions hold for top-level arguments.
        name = "" if path[-1] == "[]" else path[-1]
        excluded = exclusions(tool, self._excluded).get(name) if len(path) == 1 else None
        hint = "-".join([f"{tool.name}-args", *("item" if k == "[]" else k for k in path)])
        builder.path = list(path[:-1])
        try:
            return builder.value(schema, hint, name=name, excluded=excluded)
        except Unsupported:
            return None
        finally:
            builder.path = []

    def value(self, tool: ToolSpec, key: str, stringy: bool) -> str | None:
        """`sp <value> rest` for one top-level argument (a string when
        `stringy`); None when the schema needs the whole-call grammar."""
        rule = self._value_rule(tool, key)
        if rule is None:
            return None
        return self._root(f"sp {rule} {'rest' if stringy else 'rest-scalar'}")

    def nested_value(
        self, tool: ToolSpec, path: tuple[str, ...], schema: Any, tail: str
    ) -> str | None:
        """`sp <value> <tail>` for the value at `path` (see `_value_rule`);
        `tail` is "rest" after a string, "rest-scalar" after another
        scalar, "" for a value generated whole (the grammar ends it)."""
        rule = self._value_rule(tool, path[-1], path, schema)
        if rule is None:
            return None
        return self._root(f"sp {rule} {tail}".rstrip())

    def choices(
        self, tool: ToolSpec, key: str, path: tuple[str, ...] = (), schema: Any = None
    ) -> list[str] | None:
        """The compact JSON texts an argument (or the value at `path`) may
        take, when the grammar lists them (an enum, grounded candidates,
        bound values, the request's numbers); None when it admits an open
        set."""
        rule = self._value_rule(tool, key, path, schema)
        body = self._builder.rules.get(rule or "", "")
        if not _LITERALS.fullmatch(body):
            return None
        return [json.loads(literal) for literal in _LITERAL.findall(body)]

    def args(self, tool: ToolSpec) -> str | None:
        """The whole `args` object and the call's closing brace, for a tool
        whose arguments are no plain object; None when unsupported."""
        builder = self._builder
        builder.string_bound = string_bound(tool, self._max_tokens, self.parallel)
        builder.exclude = exclusions(tool, self._excluded)
        builder._root = tool.parameters
        builder.tool_name = tool.name
        try:
            rule = builder.value(tool.parameters, f"{tool.name}-args", object_default=True)
        except Unsupported:
            return None
        return self._root(f'sp {rule} sp "}}"')

    def next_key(self, keys: list[str], first: bool, closable: bool = True) -> str:
        """Close the arguments (when `closable`), or name one of `keys`
        (optional, in order)."""
        names = " | ".join(literal(k) for k in keys)
        comma = "" if first else '"," sp '
        # No space before the colon: the piece's stop string is `":`.
        key = f'{comma}({names}) ":"'
        return self._root(f'sp ("}}" | {key}) rest' if closable else f"sp {key} rest")


def piece_grammars(
    *,
    max_tokens: int = 0,
    excluded: list[tuple[str, dict[str, Any]]] | None = None,
    grounded: list[str] | None = None,
    grounded_formats: dict[str, list[str]] | None = None,
    grounded_labels: dict[str, list[str]] | None = None,
    bound: dict[str, list[Any]] | None = None,
    number_digits: int = 0,
    number_values: dict[str, NumberChoice] | None = None,
    unseen_examples: dict[str, list[str]] | None = None,
    named_values: dict[str, list[str]] | None = None,
    shaped_values: dict[str, list[str]] | None = None,
    preferred_values: dict[str, list[Any]] | None = None,
    preferred_items: dict[str, list[str]] | None = None,
    workflow_name: str = "",
    shunned_chars: str = "",
    phones: list[str] | None = None,
) -> PieceGrammars:
    """The piece grammars for one turn; the arguments mean what they mean
    for `build_grammar`."""
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
    return PieceGrammars(builder, max_tokens, excluded or [])
