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
import re
import threading
from collections import OrderedDict
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from forge_core.guardrails.grounding import emails_only, is_email, is_grounded, is_identifier_like
from forge_core.schema_rules import (
    ALWAYS_VALIDATED,
    CHAIN_INDEX,
    MAX_STRING,
    NUMBER_KEYS,
    SUPPORTED_KEYS,
    TRAILING_PUNCTUATION,
    admits,
    chain_body,
    chain_name,
    chain_text,
    exclusions,
    integer_rule,
    is_plain,
    literal,
    number_rule,
    optional_keys,
    placeholder_prefixes,
    placeholders,
    references,
    string_bound,
    text_body,
    text_fits,
)
from forge_core.workflow import ToolSpec

if TYPE_CHECKING:
    from forge_core.guardrails.value_pools import NumberChoice

__all__ = [
    "MAX_IDENTIFIER",
    "MAX_STRING",
    "PieceGrammars",
    "Unsupported",
    "build_grammar",
    "is_identifier_like",
    "piece_grammars",
    "unenforced_keywords",
]

MAX_ITEMS = 16
MAX_CALLS = 8
# Default bound for identifier-like strings that declare no maxLength.
MAX_IDENTIFIER = 48


_BASE_RULES = {
    "sp": '" "?',
    "char": r'[^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})',
    "integer": '"-"? ("0" | [1-9] [0-9]{0,15})',
    "number": 'integer ("." [0-9]{1,15})? ([eE] [-+]? [0-9]{1,3})?',
    "boolean": '"true" | "false"',
    "null": '"null"',
}


class Unsupported(Exception):
    """The schema uses a keyword this translator does not handle."""


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
    unseen_examples: dict[str, list[str]] | None = None,
    named_values: dict[str, list[str]] | None = None,
    shaped_values: dict[str, list[str]] | None = None,
    preferred_values: dict[str, list[Any]] | None = None,
    preferred_items: dict[str, list[str]] | None = None,
    workflow_name: str = "",
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
    a placeholder too (a free string is never it).
    """
    builder = _configured(
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
        more = f'(sp "," sp call){{{low},{MAX_CALLS - 1}}}'
        builder.rules["root"] = f'"[" sp call {more} sp "]"'
    else:
        builder.rules["root"] = "call"
    order = ["root", "call", *[k for k in builder.rules if k not in ("root", "call")]]
    return "\n".join(f"{name} ::= {builder.rules[name]}" for name in order) + "\n"


def _configured(
    *,
    bound: dict[str, list[Any]] | None,
    unseen_examples: dict[str, list[str]] | None,
    named_values: dict[str, list[str]] | None,
    shaped_values: dict[str, list[str]] | None,
    workflow_name: str,
    number_values: dict[str, NumberChoice] | None,
    number_digits: int,
    grounded: list[str] | None,
    grounded_formats: dict[str, list[str]] | None,
    grounded_labels: dict[str, list[str]] | None,
    preferred_values: dict[str, list[Any]] | None = None,
    preferred_items: dict[str, list[str]] | None = None,
) -> _Builder:
    builder = _Builder()
    builder.preferred = preferred_values or {}
    builder.preferred_items = preferred_items or {}
    builder.bound = bound or {}
    builder.unseen_examples = unseen_examples or {}
    builder.named = named_values or {}
    builder.shaped = shaped_values or {}
    builder.workflow_name = workflow_name
    builder.numbers = number_values or {}
    if number_digits:
        digits = builder.digits = max(1, min(number_digits, 16))
        builder.rules["integer"] = f'"-"? ("0" | [1-9] [0-9]{{0,{digits - 1}}})'
    builder.grounded = grounded
    builder.formats = grounded_formats or {}
    builder.labels = grounded_labels or {}
    return builder


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
        self, builder: _Builder, max_tokens: int, excluded: list[tuple[str, dict[str, Any]]]
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
) -> PieceGrammars:
    """The piece grammars for one turn; the arguments mean what they mean
    for `build_grammar`."""
    builder = _configured(
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
    )
    return PieceGrammars(builder, max_tokens, excluded or [])


def _class_char(c: str) -> str:
    code = ord(c)
    return f"\\u{code:04X}" if code <= 0xFFFF else f"\\U{code:08X}"


# string_excluding's rules by its arguments, least recently used first:
# (the rules it added, name -> body; the name it returned).
EXCLUDING_KEPT = 512
_EXCLUDING: OrderedDict[
    tuple[frozenset[str], frozenset[str], int, int, str], tuple[list[tuple[str, str]], str]
] = OrderedDict()
_EXCLUDING_LOCK = threading.Lock()


class _Builder:
    def __init__(self) -> None:
        self.rules: dict[str, str] = dict(_BASE_RULES)
        self._root: dict[str, Any] = {}
        self._resolving: set[str] = set()
        self.string_bound = MAX_STRING
        self.exclude: dict[str, set[Any]] = {}
        self.grounded: list[str] | None = None
        self.formats: dict[str, list[str]] = {}
        self.labels: dict[str, list[str]] = {}
        self.bound: dict[str, list[Any]] = {}
        self.unseen_examples: dict[str, list[str]] = {}
        self.named: dict[str, list[str]] = {}
        self.shaped: dict[str, list[str]] = {}
        self.preferred: dict[str, list[Any]] = {}
        self.preferred_items: dict[str, list[str]] = {}
        self.workflow_name = ""
        self.numbers: dict[str, NumberChoice] = {}
        self.tool_name = ""
        self.digits = 16
        # Where value() is (parameter names, `[]` for an item), and the
        # keywords it left to validation there: unenforced_keywords.
        self.path: list[str] = []
        self.left: list[tuple[str, str]] = []
        # The rules string_excluding names (made or found), while it runs.
        self._made: list[tuple[str, str]] | None = None
        # (name, body) of `char-upto-1`, `char-upto-2`, ...: see `chars`.
        self._upto: list[tuple[str, str]] = []

    def rule(self, hint: str, body: str) -> str:
        base = re.sub(r"[^a-zA-Z0-9-]+", "-", hint).strip("-") or "r"
        name, n = base, 1
        while name in self.rules and self.rules[name] != body:
            n += 1
            name = f"{base}-{n}"
        self.rules[name] = body
        if self._made is not None:
            self._made.append((name, body))
        return name

    def chars(self, low: int, high: int) -> str:
        """`char{low,high}`, its optional part a reference into one chain of
        rules (`char-upto-K ::= (char char-upto-(K-1))?`) that every string
        of the grammar shares. llama.cpp expands each `{m,n}` into n - m
        rules of its own, and an open string's trie of excluded values holds
        one per node: ~20 x 200 rules, which llama-server parsed and set up
        for 3-4 ms on every request (bench/RESULTS.md §18); the chain is the
        same language in ~200."""
        fixed = f"char{{{low}}}" if low > 0 else ""
        if high <= low:
            return fixed or '""'
        k = high - low
        while len(self._upto) < k:
            body = f"(char {self._upto[-1][0]})?" if self._upto else "char?"
            self._upto.append((self.rule(chain_name(len(self._upto) + 1), body), body))
        if self._made is not None:
            # Replayed with the rules that use it (string_excluding).
            self._made.extend(self._upto[:k])
        return f"{fixed} {self._upto[k - 1][0]}".strip()

    def call(self, tool: ToolSpec) -> str:
        self._root = tool.parameters
        self.tool_name = tool.name
        args = self.value(tool.parameters, f"{tool.name}-args", object_default=True)
        body = (
            f'"{{" sp {literal("tool")} sp ":" sp {literal(tool.name)} sp "," sp '
            f'{literal("args")} sp ":" sp {args} sp "}}"'
        )
        return self.rule(f"call-{tool.name}", body)

    def value(
        self,
        schema: Any,
        hint: str,
        object_default: bool = False,
        name: str = "",
        excluded: set[Any] | None = None,
    ) -> str:
        if schema is True or schema == {}:
            raise Unsupported("free-form value")
        if not isinstance(schema, dict):
            raise Unsupported(f"schema {schema!r}")
        # The evidence's values, checked against the whole schema: a keyword
        # the grammar cannot write (minimum, format) still holds for them.
        preferred = self.preferred_rule(schema, hint, name, excluded)
        if preferred is not None:
            return preferred
        # Vendor annotations (x-forge-grounded, ...) are for Forge, not the grammar.
        unknown = {k for k in schema if not k.startswith("x-")} - SUPPORTED_KEYS
        if unknown:
            raise Unsupported(", ".join(sorted(unknown)))
        for key in ALWAYS_VALIDATED:
            if key in schema:
                self.leave(key)
        if "$ref" in schema:
            return self.ref(schema["$ref"], hint)
        if "const" in schema:
            return self.rule(hint, literal(schema["const"]))
        if "enum" in schema:
            values = [v for v in schema["enum"] if v not in (excluded or ())] or schema["enum"]
            return self.rule(hint, " | ".join(literal(v) for v in values))
        for key in ("anyOf", "oneOf"):
            if key in schema:
                options = [self.value(s, f"{hint}-{i}") for i, s in enumerate(schema[key])]
                return self.rule(hint, " | ".join(options))
        kind = schema.get("type", "object" if object_default or "properties" in schema else None)
        if isinstance(kind, list):
            options = [self.value({**schema, "type": k}, f"{hint}-{k}") for k in kind]
            return self.rule(hint, " | ".join(options))
        if kind == "object":
            return self.object(schema, hint)
        if kind == "array":
            return self.array(schema, hint, name)
        bound = self.bound.get(f"{self.tool_name}.{name}") if name else None
        if kind == "string":
            return self.string(schema, hint, name, excluded, bound)
        if kind in ("integer", "number"):
            return self.number(schema, hint, name, kind, bound)
        if kind in ("boolean", "null"):
            return str(kind)
        raise Unsupported(f"type {kind!r}")

    def string(
        self,
        schema: dict[str, Any],
        hint: str,
        name: str,
        excluded: set[Any] | None,
        bound: list[Any] | None,
    ) -> str:
        low = int(schema.get("minLength", 0))
        default = MAX_IDENTIFIER if is_identifier_like(name) else MAX_STRING
        high = max(low, min(int(schema.get("maxLength", default)), self.string_bound))
        text = self.text_rule(schema, hint)

        def ok(v: str) -> bool:
            # A candidate of a format or pattern must have it (else the rule's).
            return low <= len(v) <= high if text is None else text_fits(schema, v)

        if bound:
            fits = [v for v in bound if isinstance(v, str) and ok(v)]
            if fits:
                return self.rule(hint, " | ".join(literal(v) for v in fits))
        plain = {v for v in excluded or () if isinstance(v, str) and is_plain(v)}
        if self.grounded is not None and name and is_grounded(name, schema):
            everything = self.grounded
            if is_email(name, schema):
                everything = emails_only(everything)
            seen = []
            for pool in (
                self.formats.get(f"{self.tool_name}.{name}"),
                [v for v in self.labels.get(name, []) if v in everything],
                everything,
            ):
                seen = [v for v in pool or () if ok(v) and v not in plain]
                if seen:
                    break
            if seen:
                return self.rule(hint, " | ".join(literal(v) for v in seen))
        if self.grounded is not None and name:
            key = f"{self.tool_name}.{name}"
            for pool in (self.shaped.get(key), self.named.get(key)):
                seen = [v for v in pool or () if ok(v) and v not in plain]
                if seen:
                    return self.rule(hint, " | ".join(literal(v) for v in seen))
        if text is not None:
            return self.rule(hint, f'"\\"" {text} "\\""')
        # A failed value with punctuation added is the same value.
        banned = {v + c for v in plain if len(v) >= 3 for c in TRAILING_PUNCTUATION}
        if self.grounded is not None and name:
            # Placeholders copied from the schema are never real values,
            # unless the conversation has them.
            plain |= placeholders(name, self.tool_name)
            prefixes = placeholder_prefixes(name, self.tool_name)
            if self.workflow_name:
                plain.add(self.workflow_name)
                # The workflow's name joined to another name, as in
                # `chat_message` (an OpenAI request's workflow and the
                # respond tool's parameter), is a placeholder, not an
                # answer. Only `_` and `.`: "weather in Paris" is prose.
                prefixes |= {f"{self.workflow_name}{sep}" for sep in "_."}
            banned |= {p for p in prefixes if not any(v.startswith(p) for v in self.grounded)}
            # An example the conversation lacks, with anything after it
            # ("08:15 ", "2025-01-31 16:45").
            banned |= {
                v for v in self.unseen_examples.get(f"{self.tool_name}.{name}", []) if is_plain(v)
            }
        if plain or banned:
            return self.string_excluding(plain, low, high, hint, banned)
        return self.rule(hint, f'"\\"" {self.chars(low, high)} "\\""')

    def number(
        self, schema: dict[str, Any], hint: str, name: str, kind: str, bound: list[Any] | None
    ) -> str:
        def in_bounds(v: Any) -> bool:
            # A value out of the schema's bounds could only be rejected.
            return not NUMBER_KEYS & set(schema) or admits(schema, v)

        numbers = [v for v in bound or () if isinstance(v, int | float) and not isinstance(v, bool)]
        if kind == "integer":
            numbers = [v for v in numbers if isinstance(v, int)]
        numbers = [v for v in numbers if in_bounds(v)]
        if numbers:
            return self.rule(hint, " | ".join(literal(v) for v in numbers))
        choice = self.numbers.get(f"{self.tool_name}.{name}") if name else None
        given = [v for v in choice.literals if in_bounds(json.loads(v))] if choice else []
        if given:
            # Only what the conversation gives: a number it never wrote is
            # an invented one ("yield 5%" written 5000, "2 pounds" as 1).
            return self.rule(hint, " | ".join(json.dumps(v) for v in given))
        body, left = (integer_rule if kind == "integer" else number_rule)(schema, self.digits)
        for key in sorted(left):
            self.leave(key)
        return self.rule(hint, body) if body else kind

    def leave(self, keyword: str) -> None:
        """`keyword`, at the current path, is left to validation."""
        self.left.append((".".join(self.path).replace(".[]", "[]") or "(arguments)", keyword))

    def text_rule(self, schema: dict[str, Any], hint: str) -> str | None:
        """The rule for a string's content under its `format` or `pattern`;
        None when neither has one."""
        body, left = text_body(schema)
        for key in left:
            self.leave(key)
        return self.rule(f"{hint}-text", body) if body else None

    def string_excluding(
        self,
        values: set[str],
        low: int,
        high: int,
        hint: str,
        banned: frozenset[str] | set[str] = frozenset(),
    ) -> str:
        """A JSON string of `low`..`high` characters that is none of `values`
        and starts with none of `banned`.

        A trie over the excluded values and prefixes: at each node the
        string may end (unless the prefix is itself excluded), continue down
        the trie, or leave it with any other character and then be free.

        The rules depend on nothing but the arguments, and a turn makes the
        same ones as the turn before (a call's open string value: 0.3-0.7 ms
        of Python each time), so they are kept (`_EXCLUDING`) and put back
        under the names they had, unless a name now holds another rule.
        """
        key = (frozenset(values), frozenset(banned), low, high, hint)
        with _EXCLUDING_LOCK:
            kept = _EXCLUDING.get(key)
            if kept is not None:
                _EXCLUDING.move_to_end(key)
        if kept is not None:
            made, name = kept
            if all(self.rules.get(n, body) == body for n, body in made):
                self.rules.update(made)
                return name
        self._made = []
        try:
            name = self._string_excluding(values, low, high, hint, banned)
            made = list(dict(self._made).items())
        finally:
            self._made = None
        with _EXCLUDING_LOCK:
            _EXCLUDING[key] = (made, name)
            if len(_EXCLUDING) > EXCLUDING_KEPT:
                _EXCLUDING.popitem(last=False)
        return name

    def _string_excluding(
        self, values: set[str], low: int, high: int, hint: str, banned: frozenset[str] | set[str]
    ) -> str:
        counter = [0]
        walk = values | banned

        def node(prefix: str, below: list[str]) -> str | None:
            """The rule for what may follow `prefix` (`below`: the walked
            strings that start with it); None when nothing may (a banned
            prefix, or an excluded value `high` characters long)."""
            if prefix in banned:
                return None
            depth = len(prefix)
            by_kid: dict[str, list[str]] = {}
            for v in below:
                if len(v) > depth:
                    by_kid.setdefault(v[depth], []).append(v)
            kids = sorted(by_kid)
            options = []
            if depth >= low and prefix not in values:
                options.append('"\\""')
            if depth < high:
                for c in kids:
                    child = node(prefix + c, by_kid[c])
                    if child is not None:
                        options.append(f"{json.dumps(c)} {child}")
                rest_low, rest_high = max(0, low - depth - 1), high - depth - 1
                other = "".join(_class_char(c) for c in kids)
                escape = '"\\\\" (["\\\\/bfnrt] | "u" [0-9a-fA-F]{4})'
                first = f'([^"\\\\\\x7F\\x00-\\x1F{other}] | {escape})'
                options.append(f'{first} {self.chars(rest_low, rest_high)} "\\""')
            if not options:
                return None
            counter[0] += 1
            return self.rule(f"{hint}-x{counter[0]}", " | ".join(options))

        root = node("", list(walk))
        if root is None:  # only when high == 0 and "" is excluded
            raise Unsupported("every string is excluded")
        return self.rule(hint, f'"\\"" {root}')

    def ref(self, ref: str, hint: str) -> str:
        match = re.fullmatch(r"#/(\$defs|definitions)/([^/]+)", ref)
        if match is None:
            raise Unsupported(f"$ref {ref}")
        if ref in self._resolving:
            raise Unsupported("recursive $ref")
        target = (self._root.get(match.group(1)) or {}).get(match.group(2))
        if target is None:
            raise Unsupported(f"dangling $ref {ref}")
        self._resolving.add(ref)
        try:
            return self.value(target, f"{hint}-{match.group(2)}")
        finally:
            self._resolving.discard(ref)

    def object(self, schema: dict[str, Any], hint: str) -> str:
        props: dict[str, Any] = schema.get("properties", {})
        extra = schema.get("additionalProperties", False)
        if not props and extra is not False:
            raise Unsupported("free-form object")
        required = [k for k in props if k in set(schema.get("required", []))]
        optional = [k for k in props if k not in required]
        # Exclusions apply to the call's own (top-level) arguments only.
        top = hint.endswith("-args") and schema is self._root
        pairs = {}
        for k in props:
            self.path.append(k)
            try:
                excluded = self.exclude.get(k) if top else None
                value = self.value(props[k], f"{hint}-{k}", name=k, excluded=excluded)
            finally:
                self.path.pop()
            pairs[k] = f'{literal(k)} sp ":" sp {value}'
        least, most = int(schema.get("minProperties", 0)), schema.get("maxProperties")
        # At least one key, or at most one, where there are only optional ones.
        one = (not required and least == 1, not required and most == 1)
        if least > len(required) and not one[0]:
            self.leave("minProperties")
        if most is not None and int(most) < len(props) and not one[1]:
            self.leave("maxProperties")
        parts = [pairs[k] for k in required]
        body = ' sp "," sp '.join(parts)
        if parts:
            body += "".join(f' (sp "," sp {pairs[k]})?' for k in optional)
        elif optional:
            body = optional_keys([pairs[k] for k in optional], hint, top, *one, self.rule)
        inner = f" {body} sp" if body else ""
        return self.rule(hint, f'"{{" sp{inner} "}}"')

    def preferred_rule(
        self, schema: dict[str, Any], hint: str, name: str, excluded: set[Any] | None
    ) -> str | None:
        """The evidence's values for this parameter (guardrails/), those the
        schema admits and no failed call sent; None when there are none."""
        key = f"{self.tool_name}.{name}"
        if not name or key not in self.preferred:
            return None
        fits = [
            v
            for v in self.preferred[key]
            if admits(schema, v) and not (isinstance(v, str) and v in (excluded or ()))
        ]
        return self.rule(hint, " | ".join(literal(v) for v in fits)) if fits else None

    def ordered_selection(self, listing: list[str], hint: str) -> str:
        """A JSON array of one or more of `listing`'s values, each at most
        once and in the listing's order: the list closes when it is used up
        and never repeats an item (guardrails/listings.py)."""
        tails: list[str] = [""] * len(listing)
        for i in range(len(listing) - 1, -1, -1):
            later = [
                f"{literal(listing[j])} {tails[j]}".strip() for j in range(i + 1, len(listing))
            ]
            tails[i] = (
                self.rule(f"{hint}-after-{i}", f'(sp "," sp ({" | ".join(later)}))?')
                if later
                else ""
            )
        firsts = " | ".join(f"{literal(v)} {tails[i]}".strip() for i, v in enumerate(listing))
        return f'"[" sp ({firsts}) sp "]"'

    def array(self, schema: dict[str, Any], hint: str, name: str = "") -> str:
        listing = self.preferred_items.get(f"{self.tool_name}.{name}") if name else None
        if listing:
            return self.rule(hint, self.ordered_selection(listing, hint))
        self.path.append("[]")
        try:
            item = self.value(schema.get("items", {}), f"{hint}-item")
        finally:
            self.path.pop()
        low = int(schema.get("minItems", 0))
        high = max(low, int(schema.get("maxItems", MAX_ITEMS)), 1)
        if schema.get("uniqueItems") is True and high > 1:
            # Distinct items are validation's; an enum's items are at most its values.
            choices = (schema.get("items") or {}).get("enum")
            high = max(low, 1, min(high, len(choices))) if isinstance(choices, list) else high
            self.leave("uniqueItems")
        if low == 0:
            body = f'"[" sp ({item} (sp "," sp {item}){{0,{high - 1}}})? sp "]"'
        else:
            body = f'"[" sp {item} (sp "," sp {item}){{{low - 1},{high - 1}}} sp "]"'
        return self.rule(hint, body)


def unenforced_keywords(tool: ToolSpec) -> list[tuple[str, str]]:
    """(parameter path, keyword) for each keyword of `tool`'s schema that
    its grammar leaves to validation; ("(arguments)", "fallback: ...") when
    the whole schema takes llama-server's JSON-Schema path instead."""
    return list(_unenforced(tool.name, json.dumps(tool.parameters)))


@lru_cache(maxsize=256)
def _unenforced(name: str, schema: str) -> tuple[tuple[str, str], ...]:
    # Every run start asks (validate_workflow), mostly for the same tools.
    builder = _Builder()
    try:
        builder.call(ToolSpec(name, "", json.loads(schema)))
    except Unsupported as e:
        return (("(arguments)", f"fallback: {e}"),)
    return tuple(dict.fromkeys(builder.left))
