"""Values composed as an error spells them out, part by part.

Some errors state a value's format in words, not by example: "write the
year, 'CV' and the case number zero-padded to 6 digits, joined by dashes";
"give the width, a slash, the aspect ratio, then R and the rim diameter,
without spaces". A small model answers with one of the parts ("4512",
"CV", "zero-padded"), since no part of the sentence is a value to copy.

Here the directive is read as a sequence of parts: separators named in
words ("a slash", "a dash"), literals (a quoted 'CV', a capital letter or
two standing alone: "then R"), the year, and numbers in the order the
user wrote them, zero-padded where the part says "N digits"; joined by
what "joined by dashes" names, else by nothing. The numbers come from the
failed value when it has as many as the parts need, else from a run of
numbers the request writes together ("205 55 16"), else from all the
request's numbers; the year is a four-digit 19xx/20xx one the source
writes, else one the request writes, else today's. Only a directive with a number and a separator or
literal composes anything. A template the error writes ("PRM/YYYY/NNNN":
literal capitals, YYYY for the year, N or # for each digit) is read first.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SEPARATORS = {
    "slash": "/",
    "dash": "-",
    "hyphen": "-",
    "dot": ".",
    "period": ".",
    "full stop": ".",
    "colon": ":",
    "space": " ",
    "underscore": "_",
}
_JOINED = re.compile(
    r"\b(?:joined|separated)\s+(?:by|with)\s+(?:a\s+|single\s+)?"
    r"(slash|dash|hyphen|dot|period|colon|space|underscore)e?s?\b",
    re.IGNORECASE,
)
_SPLIT = re.compile(r",\s*(?:then\s+|and\s+)?|\s+then\s+|\s+and\s+|\s+followed by\s+")
_SEPARATOR_PART = re.compile(
    r"^(?:a|an|one|single)?\s*(slash|dash|hyphen|dot|period|full stop|colon|space|underscore)$"
)
_QUOTED = re.compile(r"['\"`]([A-Za-z0-9]{1,8})['\"`]")
_CAPITALS = re.compile(r"^(?:the letters?\s+)?([A-Z]{1,3})$")
_WIDTH = re.compile(r"(\d{1,2})\s+digits")
_NOISE = re.compile(r"\b(?:without|no)\s+(?:spaces?|dashes|gaps)\b|\bin capitals\b", re.IGNORECASE)
_YEAR = re.compile(r"^(?:19|20)\d\d$")


@dataclass(frozen=True)
class _Part:
    kind: str  # "literal", "year" or "number"
    text: str = ""
    width: int = 0


def _directive(error: str, value: str = "") -> str:
    """The error's words after the value it quotes and the colon or verb
    that introduce the format ("... '4512' is not valid: write ...");
    whatever wraps the error before it ("submit_form failed: ...") aside."""
    quoted = max(error.rfind(f"'{value}'"), error.rfind(f'"{value}"')) if value else -1
    start = quoted + len(value) + 2 if quoted >= 0 else 0
    rest = error[start:]
    after = rest.split(":", 1)[1] if ":" in rest else rest
    return re.sub(r"^\s*(?:write|give|use|enter|send)\s+(?:it\s+as\s+)?", "", after.strip())


def parts_of(error: str, value: str = "") -> tuple[list[_Part], str] | None:
    """The parts an error's directive names, and what joins them; None when
    it names no number or no separator or literal."""
    directive = _directive(error, value)
    joined = _JOINED.search(directive)
    joiner = _SEPARATORS[joined.group(1).lower()] if joined else ""
    directive = _NOISE.sub("", _JOINED.sub("", directive)).strip(" .;")
    parts: list[_Part] = []
    for raw in _SPLIT.split(directive):
        segment = raw.strip(" .;")
        if not segment:
            continue
        lowered = segment.lower()
        if m := _SEPARATOR_PART.match(lowered):
            parts.append(_Part("literal", _SEPARATORS[m.group(1)]))
        elif m := _QUOTED.search(segment):
            parts.append(_Part("literal", m.group(1)))
        elif m := _CAPITALS.match(segment):
            parts.append(_Part("literal", m.group(1)))
        elif "year" in lowered:
            parts.append(_Part("year"))
        else:
            width = _WIDTH.search(lowered)
            parts.append(_Part("number", width=int(width.group(1)) if width else 0))
    numbers = sum(p.kind == "number" for p in parts)
    if not numbers or not (joiner or any(p.kind == "literal" for p in parts)):
        return None
    return parts, joiner


def _number_sets(value: str, requests: list[str]) -> list[list[str]]:
    """Where the numbers come from, best first: the failed value, runs of
    numbers the request writes together, all of the request's numbers."""
    out = [re.findall(r"\d+", value)]
    for text in requests:
        out += [re.findall(r"\d+", run) for run in re.findall(r"\d+(?:[ /.,:-]\d+)+", text)]
    out += [[n for text in requests for n in re.findall(r"(?<![A-Za-z])\d+", text)]]
    return out


# A format written as a template: "PRM/YYYY/NNNN", "INV-YYYY-######": literal
# capitals, and placeholders for the year (YYYY) and for digits (N, #, 9).
_TEMPLATE = re.compile(r"(?<![\w/#-])([A-Z0-9#]+(?:[/.:-][A-Z0-9#]+)+)(?![\w/#-])")
_PLACEHOLDER = re.compile(r"^(?:Y{4}|N+|#+|9{3,})$")


def template_of(error: str) -> tuple[list[_Part], str] | None:
    """The parts of the first template the error writes, each separator a
    literal; None when it writes none with a placeholder for digits."""
    for m in _TEMPLATE.finditer(error):
        parts = []
        for piece in re.split(r"([/.:-])", m.group(1)):
            if piece == "YYYY":
                parts.append(_Part("year"))
            elif _PLACEHOLDER.match(piece):
                parts.append(_Part("number", width=len(piece)))
            elif piece:
                parts.append(_Part("literal", piece))
        if any(p.kind == "number" for p in parts):
            return parts, ""
    return None


def composed(value: str, error: str, requests: list[str], year: int) -> list[str]:
    """The value the error's directive composes from the user's numbers
    (module doc); [] when it composes none."""
    read = template_of(error) or parts_of(error, value)
    if read is None:
        return []
    parts, joiner = read
    needed = sum(p.kind == "number" for p in parts)
    wants_year = any(p.kind == "year" for p in parts)
    # A year the request writes ("of 2026"), else today's.
    written = [n for text in requests for n in re.findall(r"\b\d{4}\b", text) if _YEAR.match(n)]
    for numbers in _number_sets(value, requests):
        years = [n for n in numbers if _YEAR.match(n)] if wants_year else []
        rest = [n for n in numbers if n not in years[:1]]
        years = years or written
        if len(rest) != needed:
            continue
        pieces, taken = [], iter(rest)
        for part in parts:
            if part.kind == "literal":
                pieces.append(part.text)
            elif part.kind == "year":
                pieces.append(years[0] if years else str(year))
            else:
                number = next(taken)
                pieces.append(number.zfill(part.width) if part.width else number)
        if joiner:
            # A separator named as a part stands on its own; the joiner
            # goes between the other parts.
            return [joiner.join(pieces)]
        return ["".join(pieces)]
    return []
