"""Grounded arguments: identifiers the model copies instead of inventing.

A small model asked for `invoice_id` writes "1234-1234-..." although the
user's message said "A-19". For string parameters that name things, the
grammar admits only values seen in the conversation: spans of the user's
messages and of tool results (never of the model's own calls, which may be
invented). The model then picks among the ids it has seen; loop breaking
(loop.py) removes a candidate once it failed, so a wrong pick is not repeated.

Which parameters: a schema annotation `"x-forge-grounded": true` (false opts
out), else the `auto` rule: a plain string (no enum, const, format, pattern)
whose name says it holds an identifier (`id`, `*_id`, `customerId`, `sku`,
`*_number`, `*_code`, `*_ref`, `email`, `ticker`, `symbol`). A parameter
that holds an e-mail address (by its name, or a description that says
"email address") takes only the e-mail addresses among them. Names that may
hold ordinary words (`name`, `city`, `username`) and free text (a message
body, a summary) stay free.

Which candidates, in order of first appearance:
1. quoted spans: '...', "..." or `...`, 1-64 characters, one line;
2. e-mail addresses;
3. identifier-like tokens: runs of letters, digits and `-_./:#@+` (outer
   punctuation trimmed), 2-64 characters, that contain a digit, or an inner
   `-`/`_` between letters/digits, or are 2-5 capital letters (a ticker);
   decimal numbers (prices, rates), clock times and ISO dates are values of
   their own kind, not identifiers;
4. a number written in space-separated groups of digits, as people write
   account, card and phone numbers ("9310 4471 05"): as written and with
   the spaces taken out, and its groups are not candidates on their own
   (2-5 groups of 2-5 digits, one of 4 or more, 8 digits at least, so
   "rooms 402 407 411" stays three numbers).
Tool and parameter names are never candidates: the model copies them as
placeholders ("city_name").

Which of them a parameter prefers:
- after the tool rejected its value and the error showed ids of another
  shape, only that value rewritten in the shape (`reshaped`);
- else, when the conversation labels some candidates as the parameter's kind
  ("Order Q-58" for order_id; `labelled`), only those not yet failed;
- else all of them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from itertools import islice
from typing import Any

ANNOTATION = "x-forge-grounded"
MAX_CANDIDATE = 64
MAX_CANDIDATES = 64

# A single quote opens where no letter stands before it and closes where no
# letter follows: "the Heron's Rest ... our hut's" quotes nothing.
_QUOTED = re.compile(
    r"(?<![A-Za-z])'([^'\n]{1,64})'(?![A-Za-z])|\"([^\"\n]{1,64})\"|`([^`\n]{1,64})`"
)
_EMAIL = re.compile(r"(?<![A-Za-z0-9._%+-])[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}")
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-_./:#@+]*")
_TRIM = ".,:;/#@+-_"
_DIGIT_GROUPS = re.compile(r"(?<![\w.,-])\d{2,6}(?: \d{2,6}){1,4}(?![\w-]|[.,]\d)")
_INNER_JOIN = re.compile(r"[A-Za-z0-9][-_][A-Za-z0-9]")
# A ticker-like code; longer all-caps words are shouting, not identifiers.
_CAPS = re.compile(r"[A-Z]{2,5}")
# Quantities (a price, a rate), clock times and calendar dates are values of
# their own kind, not identifiers.
_NOT_AN_ID = re.compile(
    r"[-+]?\d+\.\d+|\d{1,2}:\d{2}(:\d{2})?|\d{4}-\d{2}-\d{2}(T[\d:.]+Z?)?"
    # An ordinal ("the 1st"), a span of time ("08:00-13:00") or of dates.
    r"|\d{1,3}(?:st|nd|rd|th)"
    r"|\d{1,2}:\d{2}[-\u2013]\d{1,2}:\d{2}|\d{4}-\d{2}-\d{2}[-\u2013/]\d{4}-\d{2}-\d{2}"
    # A count joined to its noun ("4-berth", "2019-built"): a description.
    r"|\d+(?:-[a-z]+)+"
)


_IDENTIFIER = re.compile(
    r"(^|_|-)(id|ids|uuid|guid|code|key|sku|ref|reference|number|no|email|ticker|symbol|"
    r"username|handle|slug|serial|barcode|locator)$|[a-z0-9](Id|ID|Code|Key|Ref|Number|Email|Serial)$"
    # A tag that belongs to something (`bag_tag`, `asset_tag`) is its label's
    # code; a bare `tag` may be a word ("latest").
    r"|[a-z0-9][_-]tag$|[a-z0-9]Tag$",
)
# Narrower: names whose values are almost never ordinary words, so limiting
# them to seen identifiers cannot lock out the right value.
_GROUNDABLE = re.compile(
    r"(^|_|-)(id|ids|uuid|guid|sku|ref|reference|number|no|email|code|ticker|symbol|serial|"
    r"barcode|locator)$|[a-z0-9](Id|ID|Ref|Number|Email|Code|Serial)$|[a-z0-9][_-]tag$|[a-z0-9]Tag$",
)


def is_identifier_like(name: str) -> bool:
    """A parameter name that names a thing rather than holding prose."""
    return bool(_IDENTIFIER.search(name)) or name.lower() in {"id", "email", "sku", "ticker"}


def _id_like(token: str) -> bool:
    if _NOT_AN_ID.fullmatch(token):
        return False
    return (
        any(c.isdigit() for c in token)
        or bool(_INNER_JOIN.search(token))
        or bool(_CAPS.fullmatch(token))
    )


def extract_candidates(texts: Iterable[str], names: Iterable[str] = ()) -> list[str]:
    """The values a grounded parameter may take, from `texts` (see module
    doc); `names` (tool and parameter names) are never candidates."""
    seen: dict[str, None] = {}
    skip = set(names)

    def add(value: str) -> None:
        value = value.strip()
        if value and value not in skip and len(value) <= MAX_CANDIDATE:
            if len(seen) < MAX_CANDIDATES:
                seen.setdefault(value, None)

    for text in texts:
        for value in _values_in(text):
            add(value)
    return list(seen)


# Per text: a run asks about the same (growing) conversation every turn.
@lru_cache(maxsize=4096)
def _values_in(text: str) -> tuple[str, ...]:
    out = [next(g for g in m.groups() if g is not None) for m in _QUOTED.finditer(text)]
    out += [m.group(0) for m in _EMAIL.finditer(text)]
    grouped = _grouped_numbers(text)
    for written, _ in grouped:
        out += [written, written.replace(" ", "")]
    for match in _TOKEN.finditer(text):
        if any(start <= match.start() < end for _, (start, end) in grouped):
            continue
        token = match.group(0).rstrip(_TRIM)
        if len(token) >= 2 and _id_like(token):
            out.append(token)
    return tuple(out)


def _grouped_numbers(text: str) -> list[tuple[str, tuple[int, int]]]:
    """Numbers written in groups of digits ("9310 4471 05"), with their spans."""
    out = []
    for m in _DIGIT_GROUPS.finditer(text):
        groups = m.group(0).split()
        digits = sum(len(g) for g in groups)
        if digits >= 8 and max(len(g) for g in groups) >= 4 and not _years(groups):
            out.append((m.group(0), m.span()))
    return out


def _years(groups: list[str]) -> bool:
    return all(len(g) == 4 and g[:2] in ("19", "20") for g in groups)


_EMAIL_NAME = re.compile(r"(^|_|-)(e-?)?mail(_?address)?$|[a-z0-9]E-?[mM]ail(Address)?$")
_EMAIL_WORDS = re.compile(r"\be-?mail address", re.IGNORECASE)


def is_email(name: str, schema: Any) -> bool:
    """A parameter that holds an e-mail address: by its name (`email`,
    `contact_email`), its format, or its description ("The supplier's email
    address" on a parameter named `to`)."""
    if not isinstance(schema, dict):
        return False
    description = str(schema.get("description", ""))
    return (
        bool(_EMAIL_NAME.search(name))
        or name.lower() in {"email", "e-mail", "e_mail"}
        or schema.get("format") == "email"
        or bool(_EMAIL_WORDS.search(description))
    )


def emails_only(candidates: Iterable[str]) -> list[str]:
    return [c for c in candidates if _EMAIL.fullmatch(c)]


def is_grounded(name: str, schema: Any) -> bool:
    """Whether parameter `name` with `schema` takes only seen values."""
    if not isinstance(schema, dict) or schema.get("type") != "string":
        return False
    marked = schema.get(ANNOTATION)
    if isinstance(marked, bool):
        return marked
    # A format or pattern does not exclude it: the grammar keeps only the
    # seen values that have it (grammar.py, schema_rules.text_fits).
    if any(key in schema for key in ("enum", "const")):
        return False
    return (
        bool(_GROUNDABLE.search(name))
        or name.lower() in {"id", "email", "sku", "ticker"}
        or is_email(name, schema)
    )


def grounded_parameters(parameters: dict[str, Any]) -> list[str]:
    props = parameters.get("properties", {})
    if not isinstance(props, dict):
        return []
    return [name for name, schema in props.items() if is_grounded(name, schema)]


_RUNS = re.compile(r"\d+|\D+")


def reshaped(value: str, error: str) -> list[str]:
    """`value` rewritten in the shape of the ids an error message shows.

    A tool that rejects "123" with "ids look like ACC-000017" names the
    format; a small model rarely composes the fix. Each id-like token of the
    error with letters and digits and as many digit runs as `value` gives a
    candidate: the token's non-digit parts around `value`'s digit runs, each
    zero-padded to the token's width where the token's run is zero-padded
    ("123" -> "ACC-000123"; "2024-0042" with "PO-2019-0033" -> "PO-2024-0042").
    """
    digits = re.findall(r"\d+", value)
    if not digits:
        return []
    out: list[str] = []
    for match in _TOKEN.finditer(error):
        token = match.group(0).rstrip(_TRIM)
        runs = _RUNS.findall(token)
        example_digits = [r for r in runs if r.isdigit()]
        if len(example_digits) != len(digits) or len(example_digits) == len(runs):
            continue
        if _NOT_AN_ID.fullmatch(token) or not any(c.isalpha() for c in token):
            continue
        it = iter(digits)
        parts = []
        for run in runs:
            if run.isdigit():
                mine = next(it)
                width = len(run) if run.startswith("0") else 0
                parts.append(mine.zfill(width))
            else:
                parts.append(run)
        candidate = "".join(parts)
        if candidate not in (value, token) and candidate not in out:
            out.append(candidate)
    return out


# Name parts that say "identifier" rather than what is identified.
_GENERIC = {"id", "ids", "uuid", "guid", "number", "no", "num", "code", "ref", "reference", "key"}
_WORD = re.compile(r"[A-Za-z]+")
_CAMEL_SPLIT = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def key_words(param: str) -> set[str]:
    """What a parameter identifies, by its name: order_id -> {"order"},
    supplierId -> {"supplier"}, sku -> {"sku"}."""
    words = {w.lower() for w in _WORD.findall(_CAMEL_SPLIT.sub(" ", param).replace("_", " "))}
    return (words - _GENERIC) or words


def _stem(word: str) -> str:
    word = word.lower()
    return word[:-1] if len(word) > 3 and word.endswith("s") else word


def labelled(candidates: Iterable[str], texts: Iterable[str], param: str) -> list[str]:
    """The candidates the conversation labels as this parameter's kind: one
    of its key words stands right before the value, at most two words (or an
    `id`, `=`, `:` or `#`) between ("Order Q-58", "vendor_id=VEN-12",
    "tracking code is ZP4T7"), or the value starts with an abbreviation of
    one ("SKU-91" for sku, "VEN-12" for vendor_id)."""
    keys = {_stem(k) for k in key_words(param)}
    wanted = set(candidates)
    found: dict[str, None] = {}
    for value in wanted:
        # Or the value's own letters abbreviate the key: SKU-91, VEN-12, INV-7.
        prefix = re.match(r"[A-Za-z]{2,}", value)
        if prefix and any(k.startswith(prefix.group(0).lower()) for k in keys):
            found.setdefault(value, None)
    for text in texts:
        for value in wanted:
            start = 0
            while (at := text.find(value, start)) >= 0:
                start = at + len(value)
                before = _WORD.findall(text[max(0, at - 48) : at])[-3:]
                words = [_stem(w) for w in before]
                if any(w in keys for w in words) or any(
                    _stem(part) in keys for w in before for part in w.split("_")
                ):
                    found.setdefault(value, None)
                    break
    return [c for c in candidates if c in found]


_EXAMPLE = re.compile(
    r"(?:\be\.g\.,?|\bfor example,?|\bsuch as|\blike)\s+['\"`]?([^\s,;)'\"`]+)", re.IGNORECASE
)


def schema_examples(schema: Any) -> list[str]:
    """Example values a parameter's schema shows: its `examples` and what
    its description gives after "e.g.", "for example", "such as" or "like"
    ("The start time, e.g. 08:15." -> "08:15"). A small model copies them
    when the conversation has the real value in another form. Only examples
    with a digit count (a time, a date, an id): a word may be a real value."""
    if not isinstance(schema, dict):
        return []
    out = [str(v) for v in schema.get("examples", []) or [] if isinstance(v, str | int | float)]
    for match in _EXAMPLE.finditer(str(schema.get("description", ""))):
        value = match.group(1).rstrip(".:")
        if len(value) >= 2 and any(c.isdigit() for c in value):
            out.append(value)
    return list(dict.fromkeys(out))


def word_examples(schema: Any) -> list[str]:
    """Every example a parameter's description gives, words too ("City
    name, e.g. "Paris"" -> Paris): a value the conversation lacks is a
    copied placeholder, never the user's (value_pools.unseen_examples)."""
    if not isinstance(schema, dict):
        return []
    found = [m.group(1).rstrip(".:") for m in _EXAMPLE.finditer(str(schema.get("description", "")))]
    return [v for v in dict.fromkeys(found) if len(v) >= 2]


# Words that stand before a noun without naming anything ("the service").
_DETERMINERS = frozenset(
    "a an the this that these those my your our their his her its each every any all some "
    "no which what whose new old other same another both either neither several many few "
    "one two three four five six seven eight nine ten first second third last next "
    "for of in at on to by with from per into onto via and or is are was were be".split()
)
_ARTICLES = frozenset("a an the this that these those my your our their his her its".split())
# At most 64 characters: a name, not a run of text.
_NAME_TOKEN = r"[A-Za-z0-9](?:[A-Za-z0-9\-_.]{0,62}[A-Za-z0-9])?"
# How far around a noun named_values looks.
_WINDOW = 160
_AFTER_NOUN = re.compile(rf"\s+({_NAME_TOKEN})")
_LAST_NAME = re.compile(rf"({_NAME_TOKEN})(\s+)$")


@lru_cache(maxsize=1024)
def _noun_pattern(noun: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![A-Za-z0-9]){re.escape(noun)}(?:s|es)?(?![A-Za-z0-9])", re.I)


_LIST_GLUE = re.compile(r"(?:\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|&)\s+)$", re.IGNORECASE)


def name_word(param: str) -> str | None:
    """The noun a parameter names things by: `service` for service or
    service_name, `office` for office; None for compound names."""
    words = key_words(param) - {"name", "names"}
    return next(iter(words)) if len(words) == 1 else None


def named_values(param: str, texts: Iterable[str], schema_words: Iterable[str] = ()) -> list[str]:
    """Values the conversation calls by the parameter's noun: an identifier
    right after it ("room B-7"), else the word right before it ("the
    billing service" -> billing for `service`) and every item of a list
    there ("the Lyon, Porto and Graz offices"), never a determiner ("the
    service") nor one of `schema_words`, the words of the tool and parameter
    names ("the shipping cost" with get_shipping_cost).

    Linear in the text: the first MAX_CANDIDATES occurrences of the noun in
    each text are looked at through a window of _WINDOW characters (a 160 KB
    tool output once took minutes with patterns that scanned every
    position)."""
    noun = name_word(param)
    if noun is None or len(noun) < 3:
        return []
    # Per text, cached: a run asks again every turn, for each tool that has
    # the parameter, over a conversation that only grew by a message.
    skip = _DETERMINERS | {noun} | {w.lower() for w in schema_words}
    per_text = [_named_in(noun, text, skip) for text in texts]
    exact = [v for found, _ in per_text for v in found]
    if exact:
        return list(dict.fromkeys(exact))
    return list(dict.fromkeys(v for _, found in per_text for v in found))


@lru_cache(maxsize=4096)
def _named_in(
    noun: str, text: str, skip: frozenset[str]
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """named_values for one text: the identifiers right after the noun, and
    the words (and list items) right before it that are not in `skip`."""
    occurrences = _noun_pattern(noun)
    after = _AFTER_NOUN
    exact: dict[str, None] = {}
    for match in islice(occurrences.finditer(text), MAX_CANDIDATES):
        token = after.match(text[match.end() : match.end() + _WINDOW])
        if token and _id_like(token.group(1)):
            exact.setdefault(token.group(1), None)
    if exact:
        return tuple(exact), ()
    # A word of the schema's own names makes a compound, not a value: "the
    # shipping cost" with get_shipping_cost names no cost.
    last = _LAST_NAME
    found: dict[str, None] = {}
    for match in islice(occurrences.finditer(text), MAX_CANDIDATES):
        window = text[max(0, match.start() - _WINDOW) : match.start()]
        word = last.search(window)
        if word is None:
            continue
        items = [word.group(1)]
        head = window[: word.start(1)]
        while (glue := _LIST_GLUE.search(head)) and (
            prev := re.search(rf"({_NAME_TOKEN})$", head[: glue.start()])
        ):
            items.insert(0, prev.group(1))
            head = head[: prev.start()]
        # A capitalised name runs back over its capitalised words
        # ("the San Francisco office").
        head = window[: word.start(1)]
        while items[-1][:1].isupper() and (prev := re.search(r"([A-Z][A-Za-z]+)\s+$", head)):
            if prev.group(1).lower() in _ARTICLES or len(items) > 1:
                break
            items[-1] = f"{prev.group(1)} {items[-1]}"
            head = head[: prev.start(1)]
        for item in items:
            if item.lower() not in skip and any(c.isalpha() for c in item):
                found.setdefault(item, None)
    return (), tuple(found)


def id_shape(value: str) -> str:
    """An id's shape: letters kept as their case, each run of digits one
    `#` (BX-10204 and BX-10377 are both AA-#)."""
    return re.sub(r"[0-9]+", "#", re.sub(r"[a-z]", "a", re.sub(r"[A-Z]", "A", value)))


def example_shape(example: str) -> re.Pattern[str] | None:
    """A pattern for values shaped like `example`: its letters and
    punctuation as written, each digit run as digits ("08:15" -> 2 digits,
    ":", 2 digits; "S1" -> "S" and digits). Fixed widths only where the
    example has several digit runs (a time, a date, a structured id)."""
    runs = re.findall(r"\d+|\D+", example)
    digit_runs = [r for r in runs if r.isdigit()]
    if not digit_runs:
        return None
    fixed = len(digit_runs) > 1
    body = "".join(
        (f"[0-9]{{{len(r)}}}" if fixed else "[0-9]+") if r.isdigit() else re.escape(r) for r in runs
    )
    return re.compile(rf"(?<![A-Za-z0-9]){body}(?![A-Za-z0-9])")


def shaped_values(schema: Any, texts: Iterable[str]) -> list[str]:
    """Values in `texts` shaped like one of the parameter's schema examples
    ("16:45" for a start time whose description says "e.g. 08:15")."""
    examples = schema_examples(schema)
    if not examples:
        return []
    texts = list(texts)
    return list(dict.fromkeys(v for e in examples for t in texts for v in _shaped_in(e, t)))


@lru_cache(maxsize=4096)
def _shaped_in(example: str, text: str) -> tuple[str, ...]:
    shape = _example_shape(example)
    return tuple(m.group(0) for m in shape.finditer(text)) if shape is not None else ()


@lru_cache(maxsize=1024)
def _example_shape(example: str) -> re.Pattern[str] | None:
    return example_shape(example)
