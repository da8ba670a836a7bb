"""GBNF for the JSON Schema keywords that constrain a value's text: string
`format`s, simple `pattern`s, integer bounds (grammar.py uses these).

Each function returns a rule body, or None where the keyword is left to
validation (jsonschema checks every call's arguments; a violation is sent
back to the model naming the field). Nothing here makes the grammar fall
back to llama-server's own JSON-Schema path: that path runs away to
`max_tokens` with a small model, and llama-server rejects some `pattern`s
outright ("failed to parse grammar", HTTP 400).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from forge_core.workflow import ToolSpec

MAX_STRING = 200
# Never bound a string below this to fit max_tokens.
MIN_STRING_BOUND = 16
# Tokens a call needs besides its string values (braces, keys, numbers).
CALL_OVERHEAD_TOKENS = 24

# The keywords the grammar knows. Those after `format` are written where
# the functions below can and otherwise left to validation; ALWAYS_VALIDATED
# are always left (the grammar writes a superset); the last are annotations.
ALWAYS_VALIDATED = (
    "not if then else dependentRequired dependentSchemas propertyNames patternProperties"
    " contains minContains maxContains"
).split()
SUPPORTED_KEYS = frozenset(
    (
        "type properties required enum const items anyOf oneOf $ref $defs definitions"
        " maxLength minLength maxItems minItems additionalProperties description title"
        " default examples $schema format pattern minimum maximum exclusiveMinimum"
        " exclusiveMaximum multipleOf uniqueItems minProperties maxProperties"
        " deprecated readOnly writeOnly $comment $id contentMediaType contentEncoding"
    ).split()
    + ALWAYS_VALIDATED
)

# A JSON string's content character that needs no escape.
PLAIN_CHAR = r'[^"\\\x7F\x00-\x1F]'
_DIGIT2 = "[0-9] [0-9]"
_HOUR = '([01] [0-9] | "2" [0-3])'
_MINUTE = "[0-5] [0-9]"
_DATE = '[0-9]{4} "-" ("0" [1-9] | "1" [0-2]) "-" ("0" [1-9] | [12] [0-9] | "3" [01])'
_OFFSET = f'("Z" | [+-] {_HOUR} ":" {_MINUTE})'
_OCTET = '("25" [0-5] | "2" [0-4] [0-9] | "1" [0-9] [0-9] | [1-9]? [0-9])'
_HEX = "[0-9a-fA-F]"
_LABEL = "[A-Za-z0-9] [A-Za-z0-9-]{0,30}"

# The content (between the quotes) of a string of each format, as written
# by RFC 3339 (date, date-time, time), RFC 4122 (uuid) and in the usual
# shape of an address (email, uri, ipv4).
FORMATS = {
    "date": _DATE,
    "date-time": f'{_DATE} "T" {_HOUR} ":" {_MINUTE} ":" {_MINUTE} ("." [0-9]{{1,6}})? {_OFFSET}',
    "time": f'{_HOUR} ":" {_MINUTE} (":" {_MINUTE} ("." [0-9]{{1,6}})?)? {_OFFSET}?',
    "email": f'[A-Za-z0-9._%+-]{{1,40}} "@" {_LABEL} ("." {_LABEL}){{1,3}}',
    "uuid": f'{_HEX}{{8}} "-" {_HEX}{{4}} "-" {_HEX}{{4}} "-" {_HEX}{{4}} "-" {_HEX}{{12}}',
    "uri": '[a-zA-Z] [a-zA-Z0-9+.-]{0,15} ":" [^"\\\\ \\x7F\\x00-\\x1F]{1,120}',
    "ipv4": f'{_OCTET} "." {_OCTET} "." {_OCTET} "." {_OCTET}',
}

# The same shapes as Python regexes, for candidate values (text_fits).
_RE_DATE = r"\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])"
_RE_HM = r"([01]\d|2[0-3]):[0-5]\d"
_RE_OFFSET = rf"(Z|[+-]{_RE_HM})"
_RE_LABEL = r"[A-Za-z0-9][A-Za-z0-9-]{0,30}"
_RE_OCTET = r"(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)"
FORMAT_PATTERNS = {
    "date": _RE_DATE,
    "date-time": rf"{_RE_DATE}T{_RE_HM}:[0-5]\d(\.\d{{1,6}})?{_RE_OFFSET}",
    "time": rf"{_RE_HM}(:[0-5]\d(\.\d{{1,6}})?)?{_RE_OFFSET}?",
    "email": rf"[A-Za-z0-9._%+-]{{1,40}}@{_RE_LABEL}(\.{_RE_LABEL}){{1,3}}",
    "uuid": r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}",
    "uri": r"[a-zA-Z][a-zA-Z0-9+.-]{0,15}:[^\"\\ \x7F\x00-\x1F]{1,120}",
    "ipv4": rf"{_RE_OCTET}\.{_RE_OCTET}\.{_RE_OCTET}\.{_RE_OCTET}",
}

NUMBER_KEYS = frozenset(
    ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf")
)
# Optional keys of an object without required ones, up to which any subset
# may be written (the rule grows with the square of their number).
MAX_FREE_ORDER = 12
# Integers a bounded range lists one by one, up to this many.
MAX_LISTED = 64
# What `*` and `+` (and `{n,}`) in a pattern may repeat at most: a bound
# keeps a small model from running on ("0000..." to max_tokens).
PATTERN_REPEAT = 32
_META = set(".^$*+?()[]{}|\\")


def format_rule(fmt: str) -> str | None:
    """The content rule of a string `format`; None for a format without one."""
    return FORMATS.get(fmt)


def integer_rule(schema: dict[str, Any], digits: int) -> tuple[str | None, set[str]]:
    """An integer's rule under its bounds, and the keywords it leaves to
    validation. A range of at most MAX_LISTED values (after `multipleOf`)
    is listed; otherwise a lower bound of 0 or 1 drops the sign (and the
    zero), and an upper bound limits the digits. None: the usual rule."""
    present = set(schema) & NUMBER_KEYS
    low, high = _integer_bounds(schema)
    step = schema.get("multipleOf")
    if low is not None and high is not None and high - low < 4 * MAX_LISTED:
        values = [v for v in range(low, high + 1) if not step or v % step == 0]
        if 0 < len(values) <= MAX_LISTED:
            return " | ".join(literal(v) for v in values), set()
    if low is not None and high is not None and 0 <= low <= high and not step:
        # "minimum": 12, "maximum": 85: exactly those, digit by digit.
        return integer_range(low, high), set()
    if low is None or low < 0:
        return None, present
    width = max(1, min(digits, len(str(high)) if high is not None else digits))
    rest = f" [0-9]{{0,{width - 1}}}" if width > 1 else ""
    body = f"[1-9]{rest}" if low >= 1 else f'("0" | [1-9]{rest})'
    # The sign and zero are the grammar's; what is left is validation's.
    left = present - {"minimum", "exclusiveMinimum"} if low <= 1 else present
    return body, left


def integer_range(low: int, high: int) -> str:
    """The GBNF of the integers `low`..`high` (0 <= low <= high), written
    without leading zeros: per digit count, blocks of a fixed prefix, one
    digit in a range, and free digits after it (12..85: "1" [2-9] |
    [2-7] [0-9] | "8" [0-5])."""
    options = []
    for length in range(len(str(low)), len(str(high)) + 1):
        start = max(low, 10 ** (length - 1) if length > 1 else 0)
        end = min(high, 10**length - 1)
        while start <= end:
            k = 0  # free trailing digits of this block
            while (
                k < length - 1 and start % 10 ** (k + 1) == 0 and start + 10 ** (k + 1) - 1 <= end
            ):
                k += 1
            span = 10**k
            count = min((end - start + 1) // span, 10 - (start // span) % 10)
            last = start + count * span - 1
            text, top = str(start), str(last)
            head = text[: length - k - 1]
            first, final = text[length - k - 1], top[length - k - 1]
            parts = [json.dumps(head)] if head else []
            parts.append(f'"{first}"' if first == final else f"[{first}-{final}]")
            if k:
                parts.append(f"[0-9]{{{k}}}")
            options.append(" ".join(parts))
            start = last + 1
    return " | ".join(f"({o})" for o in options)


def number_rule(schema: dict[str, Any], digits: int) -> tuple[str | None, set[str]]:
    """A number's rule under its bounds: a narrow range listed by whole
    parts (`bounded_number`), else without a sign when it has a
    non-negative lower bound; the rest is left to validation."""
    present = set(schema) & NUMBER_KEYS
    listed = bounded_number(schema)
    if listed is not None:
        return listed, set()
    low = _number(schema.get("minimum"))
    low_x = _number(schema.get("exclusiveMinimum"))
    if (low is None or low < 0) and (low_x is None or low_x < 0):
        return None, present
    whole = f'("0" | [1-9] [0-9]{{0,{max(1, digits) - 1}}})'
    body = f'{whole} ("." [0-9]{{1,15}})? ([eE] [-+]? [0-9]{{1,3}})?'
    left = present - {"minimum"} if low is not None and low == 0 and low_x is None else present
    return body, left


def bounded_number(schema: dict[str, Any]) -> str | None:
    """A number between two bounds at most MAX_LISTED whole numbers apart
    ("minimum": -5, "maximum": 3), as its whole parts: each that the bounds
    admit, and with decimals each whose whole unit interval they hold (3.5
    only under a maximum of 4 or more; a decimal past a bound that is no
    whole number is left out, not risked, and so is -0.5). None: no such
    range, or a `multipleOf` (left to validation)."""
    lows = [v for k in ("minimum", "exclusiveMinimum") if (v := _number(schema.get(k))) is not None]
    highs = [
        v for k in ("maximum", "exclusiveMaximum") if (v := _number(schema.get(k))) is not None
    ]
    if not lows or not highs or "multipleOf" in schema:
        return None
    low, high = max(lows), min(highs)
    if not 0 < high - low <= MAX_LISTED:
        return None
    options = []
    for whole in range(math.floor(low), math.ceil(high) + 1):
        exact = json.dumps(whole) if admits(schema, whole) else None
        # The decimals of `whole` run away from zero: [whole, whole + 1)
        # or, below zero, (whole - 1, whole].
        far = whole + 1 if whole >= 0 else whole - 1
        fraction = low <= min(whole, far) and max(whole, far) <= high
        written = json.dumps(str(whole))
        if exact and fraction:
            options.append(f'{written} ("." [0-9]{{1,15}})?')
        elif exact:
            options.append(written)
        elif fraction:
            options.append(f'{written} "." [0-9]{{1,15}}')
    return " | ".join(f"({o})" for o in options) or None


def _number(value: Any) -> float | None:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if ok and math.isfinite(value) else None


def _integer_bounds(schema: dict[str, Any]) -> tuple[int | None, int | None]:
    """The least and greatest integer the bounds admit (None: unbounded)."""
    lows, highs = [], []
    if (v := _number(schema.get("minimum"))) is not None:
        lows.append(math.ceil(v))
    if (v := _number(schema.get("exclusiveMinimum"))) is not None:
        lows.append(math.floor(v) + 1)
    if (v := _number(schema.get("maximum"))) is not None:
        highs.append(math.floor(v))
    if (v := _number(schema.get("exclusiveMaximum"))) is not None:
        highs.append(math.ceil(v) - 1)
    step = schema.get("multipleOf")
    if step is not None and not (isinstance(step, int) and not isinstance(step, bool) and step > 0):
        return None, None  # a fractional step: listing would need care
    return (max(lows) if lows else None), (min(highs) if highs else None)


def text_fits(schema: dict[str, Any], value: str) -> bool:
    """`value` has the string schema's format (as FORMATS writes it), its
    pattern and its length bounds."""
    shape = FORMAT_PATTERNS.get(schema.get("format", ""))
    if shape is not None and re.fullmatch(shape, value) is None:
        return False
    pattern = schema.get("pattern")
    try:
        if isinstance(pattern, str) and re.search(pattern, value) is None:
            return False
    except re.error:
        return False
    return int(schema.get("minLength", 0)) <= len(value) <= int(schema.get("maxLength", 1 << 30))


def text_body(schema: dict[str, Any]) -> tuple[str | None, list[str]]:
    """The content rule of a string under its `format` (else its `pattern`),
    and the keywords left to validation: a format or pattern without a rule,
    a pattern beside a format, the length bounds beside either."""
    fmt, pattern = schema.get("format"), schema.get("pattern")
    body = format_rule(fmt) if isinstance(fmt, str) else None
    left = [] if fmt is None or body is not None else [_format_left(fmt)]
    if isinstance(pattern, str):
        written = pattern_rule(pattern) if body is None else None
        body = body or written
        left += [] if written else ["pattern"]
    if body is not None:
        # The content's rule sets the length.
        left += [k for k in ("minLength", "maxLength") if k in schema]
    return body, left


def _format_left(fmt: Any) -> str:
    """How a format without a rule is reported: validation checks it, or
    nothing does (jsonschema checks a few formats without extra packages)."""
    import jsonschema

    checked = fmt in jsonschema.Draft202012Validator.FORMAT_CHECKER.checkers
    return "format" if checked else "format (unchecked)"


def optional_keys(
    pairs: list[str],
    hint: str,
    top: bool,
    at_least_one: bool,
    at_most_one: bool,
    rule: Callable[[str, str], str],
) -> str:
    """Any subset of an object's (all optional) key-value `pairs`, in
    declaration order; `rule` names a new rule. A nested object says
    something (a "budget" of {} is none), and so does one with
    minProperties; the call's own arguments may otherwise all be left out."""
    maybe = "?" if top and not at_least_one else ""
    if at_most_one:
        return f"({' | '.join(pairs)}){maybe}"
    if len(pairs) <= MAX_FREE_ORDER:
        starts = [
            pair + "".join(f' (sp "," sp {later})?' for later in pairs[i + 1 :])
            for i, pair in enumerate(pairs)
        ]
        return f"({' | '.join(starts)}){maybe}"
    if not at_least_one:
        # Many keys: later ones need the first (the rule stays small).
        tail = "".join(f' (sp "," sp {later})?' for later in pairs[1:])
        return f"({pairs[0]}{tail})?"
    # At least one of many: each key's optional successors as one chain.
    after = ""
    starts = []
    for i in range(len(pairs) - 1, -1, -1):
        starts.append(f"{pairs[i]} {after}".strip())
        after = rule(f"{hint}-from-{i}", f'(sp "," sp {pairs[i]})? {after}'.strip())
    return f"({' | '.join(reversed(starts))})"


def pattern_rule(pattern: str) -> str | None:
    """The content rule of a string matching `pattern`, for a pattern that
    is anchored at its start (and its end, or free text follows) and made of
    literal characters, classes (`[A-Z]`, `\\d`, `\\w`, `.`), groups,
    alternatives and quantifiers; None for anything else (lookarounds,
    backreferences, `\\s`, a quote or backslash to match)."""
    if not pattern.startswith("^"):
        return None  # JSON Schema's pattern is a search: unanchored is free text
    body, end = pattern[1:], ""
    if body.endswith("$") and not body.endswith("\\$"):
        body = body[:-1]
    else:
        end = f" {PLAIN_CHAR}{{0,{PATTERN_REPEAT * 4}}}"
    try:
        parser = _Pattern(body)
        rule = parser.alternatives()
    except ValueError:
        return None
    if parser.pos != len(body):
        return None
    return f"({rule}){end}"


class _Pattern:
    """A recursive-descent reader of the regex subset pattern_rule takes."""

    def __init__(self, text: str) -> None:
        self.text, self.pos = text, 0

    def peek(self) -> str:
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def take(self) -> str:
        if self.pos >= len(self.text):
            raise ValueError("unexpected end")
        self.pos += 1
        return self.text[self.pos - 1]

    def alternatives(self) -> str:
        options = [self.sequence()]
        while self.peek() == "|":
            self.take()
            options.append(self.sequence())
        return " | ".join(o or '""' for o in options)

    def sequence(self) -> str:
        parts = []
        while self.peek() not in ("", "|", ")"):
            parts.append(self.quantified(self.atom()))
        return " ".join(parts)

    def atom(self) -> str:
        c = self.take()
        if c == "(":
            if self.text.startswith("?:", self.pos):
                self.pos += 2
            elif self.peek() == "?":
                raise ValueError("lookaround or named group")
            inner = self.alternatives()
            if self.take() != ")":
                raise ValueError("unclosed group")
            return f"({inner})"
        if c == "[":
            return self.char_class()
        if c == ".":
            return PLAIN_CHAR
        if c == "\\":
            return self.escape(in_class=False)
        if c in _META:
            raise ValueError(f"bare {c!r}")
        return _literal_char(c)

    def escape(self, in_class: bool) -> str:
        c = self.take()
        if c == "d":
            return "0-9" if in_class else "[0-9]"
        if c == "w":
            return "A-Za-z0-9_" if in_class else "[A-Za-z0-9_]"
        if c.isalnum():
            raise ValueError(f"escape \\{c}")  # \s, \b, \1, \D, \n, ...
        return _class_char(c) if in_class else _literal_char(c)

    def char_class(self) -> str:
        negated = self.peek() == "^"
        if negated:
            self.take()
        members = []
        first = True
        while first or self.peek() != "]":
            first = False
            c = self.take()
            if c == "\\":
                members.append(self.escape(in_class=True))
                continue
            if c == "[":
                raise ValueError("nested class")
            if self.peek() == "-" and self.text[self.pos + 1 : self.pos + 2] not in ("]", ""):
                self.take()
                end = self.take()
                if end == "\\" or ord(end) < ord(c):
                    raise ValueError("range")
                if not negated and any(ord(c) <= x <= ord(end) for x in (0x22, 0x5C, 0x7F)):
                    raise ValueError("a range holding a quote or backslash")
                members.append(f"{_class_char(c)}-{_class_char(end)}")
            else:
                members.append(_class_char(c))
        self.take()
        if negated:
            # Never a quote, a backslash or a control: those need escapes.
            return f"[^{''.join(members)}\\x22\\x5C\\x7F\\x00-\\x1F]"
        if any(m in ("\\x22", "\\x5C") for m in members):
            raise ValueError("quote or backslash")
        return f"[{''.join(members)}]"

    def quantified(self, atom: str) -> str:
        c = self.peek()
        if c in ("?", "*", "+"):
            self.take()
            low, high = {"?": (0, 1), "*": (0, PATTERN_REPEAT), "+": (1, PATTERN_REPEAT)}[c]
        elif c == "{":
            close = self.text.find("}", self.pos)
            spec = self.text[self.pos + 1 : close] if close > 0 else ""
            low_s, comma, high_s = spec.partition(",")
            if not low_s.isdigit() or (high_s and not high_s.isdigit()):
                raise ValueError("quantifier")
            self.pos = close + 1
            low = int(low_s)
            high = int(high_s) if high_s else (low + PATTERN_REPEAT if comma else low)
        else:
            return atom
        if self.peek() in ("?", "+"):
            raise ValueError("lazy or possessive quantifier")
        if high < low or high > 256:
            raise ValueError("quantifier bounds")
        if (low, high) == (0, 1):
            return f"({atom})?"
        return f"({atom}){{{low}}}" if low == high else f"({atom}){{{low},{high}}}"


def _literal_char(c: str) -> str:
    if c in '"\\' or ord(c) < 0x20 or ord(c) == 0x7F:
        raise ValueError("a character JSON escapes")
    return json.dumps(c)


def _class_char(c: str) -> str:
    """`c` in a GBNF character class: letters and digits as themselves,
    anything else by its code (a `-`, `]` or `^` never reads as syntax)."""
    if c.isascii() and c.isalnum():
        return c
    code = ord(c)
    if code <= 0xFF:
        return f"\\x{code:02X}"
    return f"\\u{code:04X}" if code <= 0xFFFF else f"\\U{code:08X}"


def literal(value: Any) -> str:
    """A GBNF string literal matching the compact JSON encoding of `value`."""
    return json.dumps(json.dumps(value, ensure_ascii=False, separators=(",", ":")))


def count_strings(schema: Any, depth: int = 0) -> int:
    """String leaves of a schema (arrays count their item once)."""
    if not isinstance(schema, dict) or depth > 8:
        return 0
    if schema.get("type") == "string" and "enum" not in schema and "const" not in schema:
        return 1
    total = sum(count_strings(s, depth + 1) for s in schema.get("properties", {}).values())
    total += count_strings(schema.get("items"), depth + 1)
    for key in ("anyOf", "oneOf"):
        total += max((count_strings(s, depth + 1) for s in schema.get(key, [])), default=0)
    return total


def string_bound(tool: ToolSpec, max_tokens: int, parallel: bool) -> int:
    """The longest string this tool's call may hold so that the call fits in
    `max_tokens`, counting a character as a token (digit runs and rare
    words tokenize that badly)."""
    if max_tokens <= 0:
        return MAX_STRING
    strings = count_strings(tool.parameters)
    if strings == 0:
        return MAX_STRING
    # A parallel batch must fit too; two calls' worth is what we protect.
    budget = (max_tokens // 2 if parallel else max_tokens) - CALL_OVERHEAD_TOKENS
    return max(MIN_STRING_BOUND, min(MAX_STRING, budget // strings))


def exclusions(tool: ToolSpec, excluded: list[tuple[str, dict[str, Any]]]) -> dict[str, set[Any]]:
    """Per top-level parameter, the values to leave out: from failed calls of
    this tool that had exactly one argument (the lookup that found nothing)."""
    out: dict[str, set[Any]] = {}
    for name, args in excluded:
        if name != tool.name or len(args) != 1:
            continue
        ((key, value),) = args.items()
        if isinstance(value, str):
            out.setdefault(key, set()).add(value)
    return out


def placeholders(param: str, tool: str) -> set[str]:
    """Values a small model copies from the schema instead of the
    conversation: the parameter's own name (as `city`, `city_name`,
    `service name`), the tool's name, the word "string"."""
    words = param.replace("_", " ")
    return {param, f"{param}_name", f"{words} name", tool, "string", *_FORMAT_TOKENS}


# A description's format written out ("YYYY-MM-DD", "HH:MM") is no date or
# time: copied whole or in parts, it is a placeholder.
_FORMAT_TOKENS = frozenset(
    form
    for upper in (
        "YYYY-MM-DD YYYY-MM YYYY MM DD YY HH HH:MM HH:MM:SS DD/MM/YYYY MM/DD/YYYY YYYY/MM/DD "
        "YYYYMMDD YYYY-MM-DDTHH:MM YYYY-MM-DDTHH:MM:SS"
    ).split()
    for form in (upper, upper.lower())
)
_FORMAT_PREFIXES = ("YYYY", "yyyy", "HH:", "hh:", "DD/", "DD-", "MM/", "MM-", "dd/", "mm/")


TRAILING_PUNCTUATION = ",.;:!?"


def placeholder_prefixes(param: str, tool: str) -> set[str]:
    """Starts of values built from the schema's names ("city_name_id", "decline(reason)",
    "find_hotels.hotel_id", "book_hotel1", "service1", "string: 1"): a name
    and a separator or a digit, the tool's whole name when it is a
    compound ("book_hotel"), or a JSON type's name and a colon or bracket."""
    seps = ("_", ".", " ", ":", "-", "(", ")", "{", "}", "[", "]", "=", ",", ";", "/", "'")
    seps = (*seps, *"0123456789")
    prefixes = {f"{name}{sep}" for name in (param, tool) for sep in seps}
    # A type's name as a label ("string: 1") or in a structure the model
    # makes up ("string}, 'string': ..."): the schema's words, no value.
    prefixes |= {
        f"{kind}{sep}"
        for kind in ("string", "str", "integer", "number", "text")
        for sep in (":", " (", "(", ",", " ,", "}", "]", ")", "'", "{", "[")
    }
    prefixes |= set(_FORMAT_PREFIXES)
    if any(sep in tool for sep in "_-."):
        prefixes.add(tool)
    return prefixes


def admits(schema: dict[str, Any], value: Any) -> bool:
    """`value` is valid against the parameter's own schema (jsonschema)."""
    import jsonschema

    try:
        checker = jsonschema.Draft202012Validator.FORMAT_CHECKER
        return bool(jsonschema.Draft202012Validator(schema, format_checker=checker).is_valid(value))
    except (jsonschema.exceptions.SchemaError, jsonschema.exceptions.RefResolutionError):
        return False


def is_plain(value: str) -> bool:
    """A value whose JSON encoding is itself (no escapes needed)."""
    return all(c not in '"\\' and ord(c) >= 0x20 and ord(c) != 0x7F for c in value)


# The chain of string length bounds every string of a grammar shares
# (grammar_builder.py `Builder.chars`), and rule references (`PieceGrammars`).
def chain_name(k: int) -> str:
    return f"char-upto-{k}"


def chain_body(k: int) -> str:
    return f"(char {chain_name(k - 1)})?" if k > 1 else "char?"


# Chain rule name -> its K, for the bounds a grammar can hold.
CHAIN_INDEX = {chain_name(k): k for k in range(1, 4 * MAX_STRING + 1)}


@lru_cache(maxsize=64)
def chain_text(k: int) -> str:
    """The chain's rules up to `char-upto-k`, as grammar lines."""
    return "\n".join(f"{chain_name(i)} ::= {chain_body(i)}" for i in range(1, k + 1))


_NOT_NAMES = re.compile(r'"(?:[^"\\]|\\.)*"|\[(?:[^\]\\]|\\.)*\]')


@lru_cache(maxsize=4096)
def references(body: str) -> tuple[str, ...]:
    """The names in a rule's body outside literals and character classes, in
    order (the bodies repeat from turn to turn, the shared chain's always)."""
    found = re.findall(r"[a-zA-Z][a-zA-Z0-9-]*", _NOT_NAMES.sub(" ", body))
    return tuple(dict.fromkeys(found))
