"""Reading tool calls out of model text.

With constrained decoding the whole reply is one JSON object; without it the
model may wrap the object in prose or code fences, so we also scan for the
first balanced JSON object (braces inside strings do not count).
"""

from __future__ import annotations

import json
from typing import Any

from forge_core.backends.base import ToolCall


def parse_tool_calls(text: str) -> list[ToolCall] | None:
    """Tool calls found in `text`, or None when there is none."""
    stripped = text.strip()
    whole = _loads(stripped)
    if whole is not None:
        calls = _as_calls(whole)
        if calls:
            return calls
    calls = []
    for candidate in _json_objects(stripped):
        found = _as_calls(candidate)
        if found:
            calls.extend(found)
    return calls or None


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return None


def _as_calls(value: Any) -> list[ToolCall]:
    if isinstance(value, list):
        out: list[ToolCall] = []
        for item in value:
            out.extend(_as_calls(item))
        return out
    if not isinstance(value, dict):
        return []
    name = value.get("tool", value.get("name"))
    args = value.get("args", value.get("arguments", {}))
    if isinstance(args, str):
        args = _loads(args)
    if isinstance(name, str) and name and isinstance(args, dict):
        return [ToolCall(name=name, args=args)]
    return []


def _json_objects(text: str) -> list[Any]:
    """Every JSON object embedded in `text`, left to right.

    Tries a JSON decode at each '{' not inside an object already found, so a
    stray brace in prose cannot hide a call that follows it, and braces inside
    JSON strings are handled by the decoder itself.
    """
    decoder = json.JSONDecoder()
    found: list[Any] = []
    pos = text.find("{")
    while pos != -1:
        try:
            value, end = decoder.raw_decode(text, pos)
        except ValueError:
            pos = text.find("{", pos + 1)
            continue
        found.append(value)
        pos = text.find("{", end)
    return found
