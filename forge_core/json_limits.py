"""Limits on client-supplied JSON, checked before it is parsed.

`json.loads` recurses once per nesting level: 10,000 nested brackets raise
RecursionError, and a depth just under the interpreter's limit parses but
then overflows the schema compiler or the grammar builder instead. Real tool
schemas and arguments nest a handful of levels, so a fixed ceiling rejects
nothing legitimate.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

MAX_JSON_DEPTH = 64

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


class JsonLimitError(ValueError):
    """The text is not JSON Forge accepts; the message says why."""


def json_depth_exceeds(text: str, limit: int = MAX_JSON_DEPTH) -> bool:
    """True when brackets outside string literals nest deeper than `limit`.

    Stops at the first bracket past the limit, so a hostile input costs one
    scan of its brackets at most.
    """
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    depth = 0
    for char in brackets:
        if char in "[{":
            depth += 1
            if depth > limit:
                return True
        else:
            depth -= 1
    return False


def loads_bounded(text: str, limit: int = MAX_JSON_DEPTH) -> Any:
    """`json.loads` for untrusted text: nesting beyond `limit` is an error."""
    if json_depth_exceeds(text, limit):
        raise JsonLimitError(f"nests deeper than {limit} levels")
    try:
        return json.loads(text, parse_constant=_no_constants, parse_float=_finite_float)
    except JsonLimitError:
        raise
    except RecursionError as exc:  # only if `limit` is set near the interpreter's own
        raise JsonLimitError(f"nests too deeply: {exc}") from exc
    except ValueError as exc:
        raise JsonLimitError(f"is not valid JSON: {exc}") from exc


def _no_constants(name: str) -> Any:
    # Python's json reads NaN and Infinity; RFC 8259 has neither, and a NaN
    # bound makes every comparison in a schema false.
    raise JsonLimitError(f"is not valid JSON: {name} is not a JSON number")


def _finite_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise JsonLimitError(f"is not valid JSON here: {_clip_number(text)} overflows to Infinity")
    return value


def _clip_number(text: str) -> str:
    return text if len(text) <= 32 else text[:29] + "..."
