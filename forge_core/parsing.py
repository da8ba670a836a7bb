"""Reading tool calls (and reasoning) out of model text: the rescue path.

With constrained decoding the whole reply is one JSON value. Without it, models
wrap calls in prose, code fences, reasoning blocks or their own training
formats; each shape a small model is known to produce is salvaged here:

- JSON objects anywhere: `{"tool", "args"}` or `{"name", "arguments"}`
- the rehearsal form `name[ARGS]{json}`
- Qwen-style XML `<function=name><parameter=k>v</parameter></function>`
- Mistral `[TOOL_CALLS]name{json}` and `[TOOL_CALLS][{...}, ...]`

Reasoning blocks (`<think>…</think>`, `[THINK]…[/THINK]`, or an unpaired
closing tag whose opening was in the prompt) are split off first so a call
rehearsed while thinking is not executed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from forge_core.calls import ToolCall

_THINK_PAIRS = (("<think>", "</think>"), ("[THINK]", "[/THINK]"))
_REHEARSAL = re.compile(r"([A-Za-z_][A-Za-z0-9_.-]*)\[ARGS\]\s*(?=\{)")
_MISTRAL = re.compile(r"\[TOOL_CALLS\]\s*")
_MISTRAL_NAMED = re.compile(r"([A-Za-z_][A-Za-z0-9_.-]*)\s*(?:\[ARGS\])?\s*(?=\{)")
_QWEN_FUNCTION = re.compile(r"<function=([^>\s]+)>(.*?)</function>", re.DOTALL)
_QWEN_PARAMETER = re.compile(r"<parameter=([^>\s]+)>(.*?)</parameter>", re.DOTALL)

_decoder = json.JSONDecoder()


@dataclass(frozen=True)
class Parsed:
    calls: list[ToolCall] | None
    reasoning: str
    # The text with reasoning removed.
    text: str


def split_reasoning(text: str) -> tuple[str, str]:
    """(reasoning, rest). Handles paired tags and an unpaired closing tag."""
    reasoning: list[str] = []
    rest = text
    for open_tag, close_tag in _THINK_PAIRS:
        while True:
            close = rest.find(close_tag)
            if close == -1:
                break
            start = rest.rfind(open_tag, 0, close)
            # Unpaired closing tag: the opening tag was part of the prompt.
            body_start = start + len(open_tag) if start != -1 else 0
            reasoning.append(rest[body_start:close].strip())
            rest = (rest[:start] if start != -1 else "") + rest[close + len(close_tag) :]
        start = rest.find(open_tag)
        if start != -1:  # opened, never closed: everything after it is thinking
            reasoning.append(rest[start + len(open_tag) :].strip())
            rest = rest[:start]
    return "\n".join(r for r in reasoning if r), rest.strip()


def parse_response(text: str, rescue: bool = True) -> Parsed:
    """Split reasoning off and find tool calls in what remains.

    With rescue off only a reply that is exactly a JSON call (what constrained
    decoding produces) counts; prose around it makes it a text response.
    """
    reasoning, rest = split_reasoning(text)
    if not rescue:
        whole = _loads(rest)
        calls = _as_calls(whole) if whole is not None else []
        return Parsed(calls or None, reasoning, rest)
    return Parsed(_rescue(rest), reasoning, rest)


def parse_tool_calls(text: str) -> list[ToolCall] | None:
    """Tool calls found anywhere in `text` (reasoning excluded), or None."""
    return parse_response(text).calls


def _rescue(text: str) -> list[ToolCall] | None:
    whole = _loads(text)
    if whole is not None:
        calls = _as_calls(whole)
        if calls:
            return calls
    for finder in (_mistral_calls, _qwen_calls, _rehearsal_calls, _embedded_json_calls):
        found = finder(text)
        if found:
            return found
    return None


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _as_calls(value: Any) -> list[ToolCall]:
    if isinstance(value, list):
        out: list[ToolCall] = []
        for item in value:
            out.extend(_as_calls(item))
        return out
    if not isinstance(value, dict):
        return []
    if isinstance(value.get("function"), dict):  # OpenAI wire shape
        return _as_calls(value["function"])
    if "tool" in value:
        name, args = value["tool"], value.get("args", value.get("arguments", {}))
    elif "name" in value and ("arguments" in value or "parameters" in value):
        # A bare {"name": ...} is too common in ordinary JSON to count as a call.
        name, args = value["name"], value.get("arguments", value.get("parameters"))
    else:
        return []
    if isinstance(args, str):
        args = _loads(args) if args.strip() else {}
    if isinstance(name, str) and name and isinstance(args, dict):
        return [ToolCall(name=name, args=args)]
    return []


def _decode_at(text: str, pos: int) -> tuple[Any, int] | None:
    try:
        value, end = _decoder.raw_decode(text, pos)
    except (ValueError, RecursionError):
        return None
    return value, end


def _embedded_json_calls(text: str) -> list[ToolCall]:
    """Calls in every JSON object or array embedded in `text`, left to right.

    Decoding is tried at each '{' or '[' not inside a value already found, so a
    stray brace in prose cannot hide a later call, and braces inside JSON
    strings are handled by the decoder.
    """
    calls: list[ToolCall] = []
    pos = _next_open(text, 0)
    while pos != -1:
        decoded = _decode_at(text, pos)
        if decoded is None:
            pos = _next_open(text, pos + 1)
            continue
        value, end = decoded
        calls.extend(_as_calls(value))
        pos = _next_open(text, end)
    return calls


def _next_open(text: str, start: int) -> int:
    brace, bracket = text.find("{", start), text.find("[", start)
    candidates = [p for p in (brace, bracket) if p != -1]
    return min(candidates) if candidates else -1


def _rehearsal_calls(text: str) -> list[ToolCall]:
    calls = []
    for match in _REHEARSAL.finditer(text):
        decoded = _decode_at(text, match.end())
        if decoded is not None and isinstance(decoded[0], dict):
            calls.append(ToolCall(match.group(1), decoded[0]))
    return calls


def _mistral_calls(text: str) -> list[ToolCall]:
    calls: list[ToolCall] = []
    for marker in _MISTRAL.finditer(text):
        pos = marker.end()
        if text.startswith("[", pos):
            decoded = _decode_at(text, pos)
            if decoded is not None:
                calls.extend(_as_calls(decoded[0]))
            continue
        named = _MISTRAL_NAMED.match(text, pos)
        if named:
            decoded = _decode_at(text, named.end())
            if decoded is not None and isinstance(decoded[0], dict):
                calls.append(ToolCall(named.group(1), decoded[0]))
    return calls


def _qwen_calls(text: str) -> list[ToolCall]:
    calls = []
    for function in _QWEN_FUNCTION.finditer(text):
        args: dict[str, Any] = {}
        for param in _QWEN_PARAMETER.finditer(function.group(2)):
            raw = param.group(2).strip()
            decoded = _decode_at(raw, 0) if raw else None
            # Whole-value JSON (numbers, true, null, objects); anything else is text.
            args[param.group(1)] = decoded[0] if decoded and decoded[1] == len(raw) else raw
        calls.append(ToolCall(function.group(1), args))
    return calls
