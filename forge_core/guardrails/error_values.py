"""Errors that state the value: the retry takes what the error shows.

"crate numbers are 7 digits, zero-padded, e.g. 0000312", "receipts are
RC- and six digits" and "for yen to francs use JPYCHF" name the value the
tool wants. A small model answers with
`88-0000088` or `yen to JPYCHF`: it pastes around what it read. After a
call of a tool failed, the value-shaped tokens of its error (quoted, after
"e.g.", "use", "like", "such as", "for example", "try", or id-like: with a
digit, an inner `-`/`_`, or 2-12 capital letters) that the failed call did
not send are that tool's next values for the string parameter the error is
about: the only one the call had, or the one the error names. The failed
value rewritten in the error's format comes first ("88" -> "RC-000088",
"88" -> "0000088"); the error's own example is only an example then. A
value a failed call sent is never offered again.
"""

from __future__ import annotations

import re

from forge_core.guardrails import Preferred, TurnFacts, flat_args, parameters, undecided
from forge_core.guardrails.codes import codes_in, names_a_code
from forge_core.guardrails.composed_formats import composed
from forge_core.guardrails.dates import date_template, takes_date
from forge_core.guardrails.entries import described
from forge_core.guardrails.grounding import extract_candidates, reshaped
from forge_core.guardrails.quantities import in_digits
from forge_core.guardrails.relative_dates import today_of
from forge_core.guardrails.text import stems, words

_SUGGESTED = re.compile(
    r"(?:\be\.g\.,?|\bfor example\b,?|\bsuch as\b|\blike\b|\buse\b|\btry\b|\bexpected\b|\bformat\b)"
    r"\s*:?\s*['\"`]?([A-Za-z0-9][A-Za-z0-9\-_./:+@]{0,63})",
    re.IGNORECASE,
)
_CAPS = re.compile(r"\b[A-Z]{2,12}\b")
_PLAIN_WORDS = frozenset("ERROR OK ID UTC API JSON HTTP URL".split())


# An HTTP status an API puts before its message ("422 quantity_out_of_range:
# ...", "HTTP 404 - not found", "Error 409:"): no value of any parameter.
# An SDK reports a tool's exception with its class's name first
# ("ToolResolutionError: 422 ..."), which the status follows.
_STATUS = re.compile(
    r"^\W*(?:[A-Za-z_][\w.]*(?:Error|Exception)\s*:\s*)?(?:(?:HTTP|error|status)\s*)?"
    r"[1-5]\d\d\b(?=\s*(?:[-:]|[A-Za-z_]+\b))",
    re.IGNORECASE,
)


def without_status(error: str) -> str:
    """`error` less the HTTP status it starts with (and the exception's
    class name before it)."""
    return _STATUS.sub("", error, count=1)


def error_status(error: str) -> str | None:
    """The HTTP status `error` starts with ("404 no hall named ..."), if any."""
    m = _STATUS.match(error)
    digits = re.search(r"[1-5]\d\d", m.group(0)) if m else None
    return digits.group(0) if digits else None


def suggested_values(error: str, sent: set[str]) -> list[str]:
    """The values `error` suggests outright ("e.g. 0000312", "use JPYCHF"),
    else the id-like ones it shows (with a digit, or in capitals), minus
    those already `sent`."""
    error = without_status(error)
    found: list[str] = []
    for m in _SUGGESTED.finditer(error):
        value = m.group(1).rstrip(".,:;")
        if any(c.isdigit() for c in value) or value.isupper() or "-" in value or "_" in value:
            found.append(value)
    if not found:
        found = [c for c in extract_candidates([error]) if any(ch.isdigit() for ch in c)]
        found += [w for w in _CAPS.findall(error) if w not in _PLAIN_WORDS]
    return [v for v in dict.fromkeys(found) if v not in sent]


# "'GX-' followed by exactly 6 digits", "7 digits, zero-padded".
_DIGITS_FORMAT = re.compile(
    r"(?:(?:the\s+letters?\s+)?(?:['\"`]([A-Za-z][\w-]{0,11})['\"`]|([A-Z]{2,6}-?))\s+"
    r"(?:and then|then|followed(?:\s+(?:straight away|directly|immediately))?\s+by)\s+"
    r"(?:the\s+)?)?(?:exactly\s+)?(\d{1,2})\s+digits",
    re.IGNORECASE,
)


# A number as the user wrote it, maybe in groups: "204 771", "0047 1187".
_SPACED_NUMBER = re.compile(r"(?<![\w.,/-])\d+(?: \d+)*(?![\w/-]|[.,]\d)")


def digit_formats(error: str) -> list[tuple[str, int]]:
    """The (prefix, width) pairs an error states: "'GX-' followed by exactly
    6 digits", "the letters HRN followed straight away by the six digits"."""
    return [(q or bare or "", int(w)) for q, bare, w in _DIGITS_FORMAT.findall(in_digits(error))]


# "room.case.shelf, e.g. 3.10.2": digit runs joined by punctuation.
_PUNCTUATED_NUMBER = re.compile(r"(?<![\w.])\d+(?:[./:-]\d+){1,5}(?![\w])")
# What an error says a value may not hold: "no spaces, dashes or dots".
_FORBIDDEN = re.compile(
    r"\b(?:no|without|not?\s+use)\s+((?:[a-z]+(?:\s*(?:,|or|and|nor)\s*)?){1,6})", re.I
)
_CHARACTERS = {
    "space": " ",
    "spaces": " ",
    "dash": "-",
    "dashes": "-",
    "hyphen": "-",
    "hyphens": "-",
    "dot": ".",
    "dots": ".",
    "period": ".",
    "periods": ".",
    "slash": "/",
    "slashes": "/",
    "underscore": "_",
    "underscores": "_",
}
_CAPITALS = re.compile(r"\b(?:capital letters|upper[- ]?case|in capitals)\b", re.I)
_LOWER = re.compile(r"\blower[- ]?case\b", re.I)


def as_directed(value: str, error: str) -> str:
    """`value` with the characters the error forbids removed and in the
    case it asks for: "use capital letters and digits only, with no spaces,
    dashes or dots" turns "kb-17 tx" into "KB17TX"."""
    out = value
    for m in _FORBIDDEN.finditer(error):
        for word in re.findall(r"[a-z]+", m.group(1).lower()):
            out = out.replace(_CHARACTERS.get(word, "\0"), "")
    if _CAPITALS.search(error):
        out = out.upper()
    elif _LOWER.search(error):
        out = out.lower()
    return out


def _punctuated_like(value: str, error: str) -> list[str]:
    """`value`'s digit runs in the punctuation of a number the error shows:
    "12/4/7" -> "12.4.7" for "write it as room.case.shelf, e.g.
    3.10.2"."""
    runs = re.findall(r"\d+", value)
    out = []
    for token in _PUNCTUATED_NUMBER.findall(error):
        seps = re.findall(r"\D+", token)
        if len(seps) + 1 == len(runs) and token != value:
            out.append("".join(r + sep for r, sep in zip(runs, [*seps, ""], strict=True)))
    return out


def repaired(value: str, error: str) -> list[str]:
    """The failed value rewritten in the shape the error shows: the ids of
    grounding.reshaped ("88" -> "RC-000088" for "receipts look like
    RC-000017"), zero-padded to the width of a padded number the error
    shows ("88" -> "0000088" for "e.g. 0000312"), or to the digits it states
    after the prefix it names ("5521" -> "GX-005521" for "'GX-' followed
    by exactly 6 digits", numbers in words read with text2num)."""
    # Each form as the error directs (case, characters it forbids).
    out = [as_directed(v, error) for v in reshaped(value, error) + _punctuated_like(value, error)]
    out = out or [as_directed(value, error)]
    digits = "".join(re.findall(r"\d", value))
    if not digits:
        return [v for v in dict.fromkeys(out) if v != value]
    if value.isdigit():
        for token in re.findall(r"(?<![\w-])0\d+(?![\w-])", error):
            if len(token) > len(value):
                out.append(value.zfill(len(token)))
    for prefix, width in digit_formats(error):
        if len(digits) <= width:
            out.append(prefix + digits.zfill(width))
    return [v for v in dict.fromkeys(out) if v != value]


def _abbreviates(code: str, word: str) -> bool:
    """`code` (capitals) abbreviates `word`: its first letter, then its
    other letters in order ("NWC" for Newcastle, "GLW" for Glasgow)."""
    lowered = word.lower()
    if len(code) < 2 or not code.isalpha() or not lowered.startswith(code[0].lower()):
        return False
    rest = iter(lowered[1:])
    return all(ch in rest for ch in code[1:].lower())


def abbreviated(values: list[str], requests: list[str]) -> list[str]:
    """Of the codes an error lists ("depots are NWC, GLW, ABD"), those that
    abbreviate a name the request writes ("our Newcastle depot"); all of them
    where none or all do."""
    names = {w for text in requests for w in re.findall(r"\b[A-Z][a-z]{3,}\b", text)}
    kept = [v for v in values if v.isupper() and any(_abbreviates(v, n) for n in names)]
    return kept if 0 < len(kept) < len(values) else values


def _as_stated(values: list[str], error: str, exact: list[str], spelled: list[str]) -> list[str]:
    """Of the rewritten `values`, those with the prefix the error states
    ("HRN" of "HRN followed by six digits"), and those made from a number
    of the stated width (`exact`) over zero-padded others; all of them
    where that leaves none."""
    prefixes = tuple(p for p, _ in digit_formats(error) if p)
    if prefixes:
        values = [v for v in values if v.startswith(prefixes)] or values
    if exact:
        made = {v for source in exact for v in repaired(source, error)} | set(spelled)
        values = [v for v in values if v in made] or values
    return values


# A prefix an error names for the ids it takes: "(INV- id)", "ids start
# with RX-dk-": letters (and digits) ending in a separator, nothing after.
_PREFIX = re.compile(r"(?<![\w-])([A-Za-z][A-Za-z0-9]*(?:[-_/][A-Za-z0-9]+)*[-_/])(?![\w-])")


def prefixed_ids(error: str, facts: TurnFacts, sent: set[str], param: str) -> list[str]:
    """The ids the conversation shows that start with a prefix the error
    names, not yet sent; of several, those the request describes (a
    listing's entry), else all of them."""
    prefixes = tuple(_PREFIX.findall(without_status(error)))
    if not prefixes:
        return []
    texts = [*facts.requests, *(text for _, text in facts.results)]
    found = [
        c
        for c in extract_candidates(texts)
        if c.startswith(prefixes) and c not in prefixes and c not in sent
    ]
    if len(found) > 1:
        results = [text for _, text in facts.results]
        # The tools' and the parameter's own words describe no entry.
        ignore = {s for tool in facts.workflow.tools for s in stems(tool.name)} | set(stems(param))
        found = described(found, results, facts.requests, ignore) or found
    return found


def _names_an_item(args: dict[str, object], error: str) -> bool:
    return any(
        isinstance(item, str) and item and item in error
        for value in args.values()
        if isinstance(value, list)
        for item in value
    )


class ErrorValues:
    name = "error_values"

    def prefer(self, facts: TurnFacts, out: Preferred) -> None:
        if not facts.failures:
            return
        self._corrected_elsewhere(facts, out)
        tried: dict[str, set[str]] = {}
        for f in facts.failures:
            for k, v in flat_args(f.args).items():
                if isinstance(v, str):
                    tried.setdefault(f"{f.tool}.{k}", set()).add(v)
        for f in reversed(facts.failures):
            args = flat_args(f.args)
            strings = {k: v for k, v in args.items() if isinstance(v, str)}
            if _names_an_item(f.args, f.error):
                # The error is about a list's items (listings.py), not a string.
                continue
            param = self._about(f.error, strings, args)
            if param is None:
                continue
            key = f"{f.tool}.{param}"
            if not undecided(out, key):
                continue
            sent = tried.get(key, set())
            # The failed value in the error's format first; else what the
            # error suggests outright.
            sources = [strings[param]]
            spec = facts.tool(f.tool)
            schema = dict(parameters(spec)).get(param, {}) if spec else {}
            if date_template(f.error) and takes_date(param, schema):
                # "write it DD/MM/YYYY": the date the user gave, in that
                # form (dates.py), not the template's letters.
                continue
            if names_a_code(param, str(schema.get("description", ""))):
                # The code the user wrote, as the error directs: the model's
                # own value may have been anything.
                sources += [c for text in facts.requests for c in codes_in(text)]
            widths = {width for _, width in digit_formats(f.error)}
            # A number the user wrote with exactly the digits the error asks
            # for ("204 771" for "six digits") is the one to rewrite.
            exact = [
                m.group(0)
                for text in facts.requests
                for m in _SPACED_NUMBER.finditer(text)
                if len(m.group(0).replace(" ", "")) in widths
            ]
            sources = exact + sources if exact else sources
            # A format spelled out part by part ("the year, 'CV' and the
            # number zero-padded to 6 digits, joined by dashes") first.
            year = today_of(facts.workflow.system_prompt).year
            spelled = composed(strings[param], f.error, facts.requests, year)
            values = [
                v
                for v in spelled
                + [v for source in dict.fromkeys(sources) for v in repaired(source, f.error)]
                if v not in sent
            ]
            values = _as_stated(values, f.error, exact, spelled)
            # An id the conversation shows with the prefix the error names
            # ("(INV- id)") over any rewriting of the refused one.
            values = prefixed_ids(f.error, facts, sent, param) or values
            values = values or abbreviated(suggested_values(f.error, sent), facts.requests)
            if values:
                out.values[key] = values
                out.reasons[key] = self.name

    def _corrected_elsewhere(self, facts: TurnFacts, out: Preferred) -> None:
        """A string a tool's error corrected ("205/55R16" after "205 55 16"
        was refused) is the value of the same parameter of the other tools
        (the booking after the stock check)."""
        failed = {
            (f.tool, k, v)
            for f in facts.failures
            for k, v in f.args.items()
            if k
            == self._about(f.error, {a: b for a, b in f.args.items() if isinstance(b, str)}, f.args)
        }
        corrected: dict[str, str] = {}
        for tool, args in facts.sent:
            for name, value in args.items():
                refused = {v for t, k, v in failed if t == tool and k == name}
                if isinstance(value, str) and refused and value not in refused:
                    corrected[name] = value
        for spec in facts.workflow.tools:
            for name, value in corrected.items():
                key = f"{spec.name}.{name}"
                schema = (spec.parameters.get("properties") or {}).get(name)
                if (
                    isinstance(schema, dict)
                    and schema.get("type") == "string"
                    and undecided(out, key)
                ):
                    out.values[key] = [value]
                    out.reasons[key] = self.name

    @staticmethod
    def _about(error: str, strings: dict[str, str], args: dict[str, object]) -> str | None:
        """The string parameter an error is about: the one whose value it
        quotes, else the one whose name it writes, else the call's only one,
        unless the error names another of the call's parameters ("quantity
        must be 1 to 10" is not about the product id beside it)."""
        quoting = [k for k, v in strings.items() if v and (f"'{v}'" in error or f'"{v}"' in error)]
        if len(quoting) == 1:
            # "unknown depot 'X'": the error quotes the value it refused.
            return quoting[0]
        said = set(stems(without_status(error)))
        named = [k for k in args if set(stems(" ".join(words(k)))) <= said]
        strings_named = [k for k in named if k in strings]
        if len(strings_named) == 1:
            return strings_named[0]
        if len(strings) == 1 and not named:
            return next(iter(strings))
        return None
