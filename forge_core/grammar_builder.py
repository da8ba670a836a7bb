"""The rules of a tool call's GBNF grammar, one JSON Schema value at a time.

`Builder` writes a rule for each value a tool's parameters schema
describes (objects, arrays, strings, numbers, enums, `$ref`s), bounded,
grounded and with failed values excluded as grammar.py's module doc
describes; grammar.py puts the rules together into a whole-call grammar and
piece_grammars.py into the grammars of one piece of a call. What a rule
cannot write is raised as `Unsupported` (the caller falls back) or left to
validation (`Builder.left`).
"""

from __future__ import annotations

import json
import re
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from forge_core.guardrails.grounding import emails_only, is_email, is_grounded, is_identifier_like
from forge_core.guardrails.phones import takes_phone
from forge_core.schema_rules import (
    ALWAYS_VALIDATED,
    MAX_STRING,
    NUMBER_KEYS,
    SUPPORTED_KEYS,
    TRAILING_PUNCTUATION,
    admits,
    chain_name,
    integer_rule,
    is_plain,
    literal,
    number_rule,
    optional_keys,
    placeholder_prefixes,
    placeholders,
    text_body,
    text_fits,
)
from forge_core.workflow import RESPOND_TOOL

if TYPE_CHECKING:
    from forge_core.guardrails.value_pools import NumberChoice
    from forge_core.workflow import ToolSpec

MAX_ITEMS = 16
# A parameter that holds prose for a person to read.
_PROSE_NAME = re.compile(
    r"(?:^|_)(?:message|summary|reply|body|note|notes|explanation|comment|details)$", re.I
)
# Default bound for identifier-like strings that declare no maxLength.
MAX_IDENTIFIER = 48


_BASE_RULES = {
    "sp": '" "?',
    "char": r'[^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})',
    # A free string's first character. Never a space, "," or "}": a value
    # made in pieces ends where its closing quote meets one of them (the
    # stop strings of backends/llama/pieces.py), so one opening with them
    # would end at its opening quote; and no value is meant with a leading
    # space.
    "lead": r'[^"\\\x7F\x00-\x1F ,}] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})',
    "integer": '"-"? ("0" | [1-9] [0-9]{0,15})',
    "number": 'integer ("." [0-9]{1,15})? ([eE] [-+]? [0-9]{1,3})?',
    "boolean": '"true" | "false"',
    "null": '"null"',
}


class Unsupported(Exception):
    """The schema uses a keyword this translator does not handle."""


def configured(
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
    shunned_chars: str = "",
    phones: list[str] | None = None,
) -> Builder:
    builder = Builder()
    builder.shun(shunned_chars)
    builder.phones = set(phones or ())
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


def narrowed(fits: list[Any], bound: list[Any] | None) -> list[Any]:
    """The evidence's values a report parameter's result label also gives
    ("balance 360.00 EUR" among every EUR amount the results write); all
    of them where the label gives none of them."""
    kept = [v for v in fits if bound and v in bound]
    return kept or fits


def _class_char(c: str) -> str:
    code = ord(c)
    return f"\\u{code:04X}" if code <= 0xFFFF else f"\\U{code:08X}"


# string_excluding's rules by its arguments, least recently used first:
# (the rules it added, name -> body; the name it returned).
EXCLUDING_KEPT = 512
_EXCLUDING: OrderedDict[
    tuple[frozenset[str], frozenset[str], int, int, str, str], tuple[list[tuple[str, str]], str]
] = OrderedDict()
_EXCLUDING_LOCK = threading.Lock()


class Builder:
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
        self.shunned = ""
        self.phones: set[str] = set()

    def shun(self, chars: str) -> None:
        """No free string writes `chars` (for example `<`, where the
        conversation shows no markup, so a base model's `</h4>` or a chat
        token's `<|im_end|>` cannot end up in a message)."""
        self.shunned = "".join(sorted(set(chars)))
        extra = "".join(_class_char(c) for c in self.shunned)
        for name in ("char", "lead"):
            self.rules[name] = self.rules[name].replace("\\x7F", f"\\x7F{extra}", 1)

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

    def open_text(self, low: int, high: int) -> str:
        """`low` to `high` characters of a free string, the first a `lead`."""
        if high <= 0:
            return '""'
        text = f"lead {self.chars(max(0, low - 1), high - 1)}".strip()
        return text if low > 0 else f"({text})?"

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
                # Each branch holds together with the keywords beside it
                # (`properties` and `anyOf: [{required: [a]}, {required: [b]}]`).
                rest = {k: v for k, v in schema.items() if k != key}
                options = [
                    self.value(_within(rest, s), f"{hint}-{i}") for i, s in enumerate(schema[key])
                ]
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
            if self.phones and not takes_phone(name, schema):
                # "my mobile is 07700 900274": no course code, in whole or part.
                everything = [v for v in everything if v not in self.phones]
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
            if _PROSE_NAME.search(name) and self.tool_name != RESPOND_TOOL:
                # A message is no bare id: "QT-31-0092" for `message`; the
                # respond path answers "what is my id?" with the id alone.
                ids = {v for v in self.grounded if is_plain(v) and " " not in v}
                plain |= ids
                banned |= {v + c for v in ids if len(v) >= 3 for c in TRAILING_PUNCTUATION}
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
        return self.rule(hint, f'"\\"" {self.open_text(low, high)} "\\""')

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
        key = (frozenset(values), frozenset(banned), low, high, hint, self.shunned)
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
                # The first character is a `lead` (see _BASE_RULES).
                other = "".join(
                    _class_char(c)
                    for c in kids + ([" ", ",", "}"] if not depth else []) + list(self.shunned)
                )
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
        fits = narrowed(fits, self.bound.get(key))
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


def _within(outer: dict[str, Any], branch: Any) -> Any:
    """An anyOf/oneOf branch with the keywords beside it in `outer`: their
    properties and required keys joined, the branch's own keywords winning."""
    if not outer or not isinstance(branch, dict):
        return branch
    merged = {**outer, **branch}
    if "properties" in outer and "properties" in branch:
        merged["properties"] = {**outer["properties"], **branch["properties"]}
    if "required" in outer and "required" in branch:
        merged["required"] = list(dict.fromkeys([*outer["required"], *branch["required"]]))
    return merged
