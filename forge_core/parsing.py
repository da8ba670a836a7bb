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
    """Every top-level balanced {...} in `text` that parses as JSON."""
    found: list[Any] = []
    depth = 0
    start = -1
    in_string = False
    escaped = False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"' and depth > 0:
            in_string = True
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                parsed = _loads(text[start : i + 1])
                if parsed is not None:
                    found.append(parsed)
    return found
