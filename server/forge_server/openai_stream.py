"""Reading a call while the model writes it, for the OpenAI endpoint's SSE.

Under Forge's grammar the model writes `{"tool": "name", "args": {...}}` (an
array of them for parallel calls). As the text grows, `CallReader` tells what
became known: a call's name once its closing quote is out, its arguments'
raw JSON text as it grows, and — for the built-in respond tool — the decoded
text of its message, which the endpoint sends as `content`. Text in any
other shape (a native backend's deltas, free text) is not read: the endpoint
then sends the accepted calls whole when the attempt ends.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

_WS = " \t\r\n"


@dataclass
class CallProgress:
    name: str | None = None
    # The arguments' JSON text as far as it is written.
    args: str = ""
    args_done: bool = False


@dataclass
class CallDelta:
    """What the newest text added: a new call (`name` set) and/or more of
    its arguments."""

    index: int
    name: str | None = None
    args: str = ""


@dataclass
class CallReader:
    text: str = ""
    # False once the text left the call format: nothing more is read.
    readable: bool = True
    calls: list[CallProgress] = field(default_factory=list)
    # Per call: how much of its args text was handed out.
    _sent_args: list[int] = field(default_factory=list)

    def feed(self, piece: str) -> list[CallDelta]:
        self.text += piece
        if not self.readable:
            return []
        progress = scan_calls(self.text)
        if progress is None:
            self.readable = False
            return []
        out: list[CallDelta] = []
        for i, call in enumerate(progress):
            if call.name is None:
                break
            if i >= len(self.calls):
                self.calls.append(CallProgress(call.name))
                self._sent_args.append(0)
                out.append(CallDelta(i, name=call.name))
            self.calls[i].args, self.calls[i].args_done = call.args, call.args_done
            new = call.args[self._sent_args[i] :]
            if new:
                self._sent_args[i] = len(call.args)
                if out and out[-1].index == i:
                    out[-1].args += new
                else:
                    out.append(CallDelta(i, args=new))
        return out


def scan_calls(text: str) -> list[CallProgress] | None:
    """The calls `text` has begun, or None when it is not in the call format."""
    pos = _skip(text, 0)
    if pos == len(text):
        return []
    array = text[pos] == "["
    if array:
        pos = _skip(text, pos + 1)
    calls: list[CallProgress] = []
    while pos < len(text):
        if text[pos] != "{":
            return None
        call = CallProgress()
        calls.append(call)
        pos = _skip(text, pos + 1)
        pos, ok = _expect_key(text, pos, "tool")
        if not ok:
            return None
        if pos >= len(text):
            return calls
        end, value = _string(text, pos)
        if end is None:
            return calls if value is not None else None
        call.name = value
        pos = _skip(text, end)
        if pos >= len(text):
            return calls
        if text[pos] != ",":
            return None
        pos = _skip(text, pos + 1)
        pos, ok = _expect_key(text, pos, "args")
        if not ok:
            return None
        if pos >= len(text):
            return calls
        end = _value_end(text, pos)
        call.args = text[pos : end if end is not None else len(text)].rstrip(_WS)
        if end is None:
            return calls
        call.args_done = True
        pos = _skip(text, end)
        if pos >= len(text):
            return calls
        if text[pos] != "}":
            return None
        pos = _skip(text, pos + 1)
        if not array or pos >= len(text):
            return calls
        if text[pos] == "]":
            return calls
        if text[pos] != ",":
            return None
        pos = _skip(text, pos + 1)
    return calls


def _skip(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _WS:
        pos += 1
    return pos


def _expect_key(text: str, pos: int, key: str) -> tuple[int, bool]:
    """Past `"key":` (and spaces); (pos, False) when the text says otherwise.
    A text that ends inside the key is still fine (more is coming)."""
    literal = f'"{key}"'
    rest = text[pos : pos + len(literal)]
    if not literal.startswith(rest):
        return pos, False
    if len(rest) < len(literal):
        return len(text), True
    pos = _skip(text, pos + len(literal))
    if pos >= len(text):
        return pos, True
    if text[pos] != ":":
        return pos, False
    return _skip(text, pos + 1), True


def _string(text: str, pos: int) -> tuple[int | None, str | None]:
    """(end, value) of the JSON string at `pos`; (None, partial) when it is
    not closed yet; (None, None) when no string starts there."""
    if text[pos] != '"':
        return None, None
    i = pos + 1
    while i < len(text):
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == '"':
            try:
                return i + 1, json.loads(text[pos : i + 1])
            except json.JSONDecodeError:
                return None, None
        i += 1
    return None, ""


def _value_end(text: str, pos: int) -> int | None:
    """Where the JSON value at `pos` ends, or None if it is not complete."""
    depth = 0
    i = pos
    in_string = False
    while i < len(text):
        ch = text[i]
        if in_string:
            if ch == "\\":
                i += 2
                continue
            if ch == '"':
                in_string = False
                if depth == 0:
                    return i + 1
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
            if depth < 0:
                return i
        elif depth == 0 and ch in ",":
            return i
        i += 1
    return None


def partial_string_field(args: str, key: str) -> str | None:
    """The decoded text of string field `key` of the JSON object `args` as
    far as it is written (a respond call's message, while it streams)."""
    match = re.match(r'\{\s*"' + re.escape(key) + r'"\s*:\s*"', args)
    if match is None:
        return None
    body = args[match.end() :]
    end = _string('"' + body, 0)[0]
    body = body[: end - 2] if end is not None else _whole_escapes(body)
    try:
        value = json.loads('"' + body + '"')
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, str) else None


def _whole_escapes(body: str) -> str:
    """`body` without an escape sequence cut off at its end."""
    i = 0
    while i < len(body):
        if body[i] == "\\":
            size = 6 if body[i + 1 : i + 2] == "u" else 2
            if i + size > len(body):
                return body[:i]
            i += size
            continue
        i += 1
    return body
