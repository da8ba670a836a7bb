"""Safe fixes for near-miss arguments, applied before schema validation.

Small models often quote numbers ("42"), write booleans as strings ("true") or
send a bare value where a one-element list is expected. Where the intended
value is unambiguous we fix it and record what changed; anything else is left
for validation to reject with a precise nudge.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator

# Enough passes for every field of a realistic tool call; each pass fixes at
# least one value or stops.
MAX_PASSES = 32


@dataclass(frozen=True)
class Coercion:
    path: str  # JSON Pointer, e.g. "/count"
    original: Any
    coerced: Any

    def describe(self) -> str:
        return f"{self.path}: {json.dumps(self.original)} -> {json.dumps(self.coerced)}"


def coerce_arguments(
    validator: Draft202012Validator, args: dict[str, Any]
) -> tuple[dict[str, Any], list[Coercion]]:
    """Return (possibly fixed args, the coercions applied)."""
    fixed = args
    applied: list[Coercion] = []
    for _ in range(MAX_PASSES):
        for error in validator.iter_errors(fixed):
            if error.validator != "type" or not error.absolute_path:
                continue
            wanted = error.validator_value
            types = [wanted] if isinstance(wanted, str) else list(wanted)
            value = _convert(error.instance, types)
            if value is _NO:
                continue
            if fixed is args:
                fixed = copy.deepcopy(args)
            _set(fixed, list(error.absolute_path), value)
            pointer = "".join(
                "/" + str(p).replace("~", "~0").replace("/", "~1") for p in error.absolute_path
            )
            applied.append(Coercion(pointer, error.instance, value))
            break
        else:
            return fixed, applied
    return fixed, applied


_NO = object()


def _convert(value: Any, types: list[str]) -> Any:
    for t in types:
        converted = _convert_one(value, t)
        if converted is not _NO:
            return converted
    return _NO


def _convert_one(value: Any, target: str) -> Any:
    if isinstance(value, str):
        text = value.strip()
        if target == "integer":
            try:
                return int(text)
            except ValueError:
                number = _float(text)
                return int(number) if number is not None and number.is_integer() else _NO
        if target == "number":
            number = _float(text)
            if number is None:
                return _NO
            return int(number) if number.is_integer() and "." not in text else number
        if target == "boolean" and text.lower() in ("true", "false"):
            return text.lower() == "true"
        if target == "null" and text.lower() in ("null", "none", ""):
            return None
        if target in ("array", "object"):
            try:
                parsed = json.loads(text)
            except (ValueError, RecursionError):
                parsed = _NO
            if isinstance(parsed, list if target == "array" else dict):
                return parsed
            return [value] if target == "array" else _NO
        return _NO
    if isinstance(value, bool):
        return _NO  # True/False as numbers or strings is a guess, not a fix
    if isinstance(value, int | float) and target == "string":
        return str(value)
    if isinstance(value, float) and target == "integer" and value.is_integer():
        return int(value)
    if target == "array" and not isinstance(value, list | dict):
        return [value]
    return _NO


def _float(text: str) -> float | None:
    try:
        number = float(text)
    except ValueError:
        return None
    return number if number == number and abs(number) != float("inf") else None


def _set(root: Any, path: list[Any], value: Any) -> None:
    target = root
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value


def drop_repeated_items(
    validator: Draft202012Validator, args: dict[str, Any]
) -> tuple[dict[str, Any], list[Coercion]]:
    """`args` with every array's repeated items dropped (a small model
    repeats the last item to the array's cap: `[A, B, B, B, ...]`), where
    the schema still accepts the shorter array; the coercions applied."""
    applied: list[Coercion] = []

    def walk(value: Any, pointer: str) -> Any:
        if isinstance(value, dict):
            return {k: walk(v, f"{pointer}/{_escape(str(k))}") for k, v in value.items()}
        if not isinstance(value, list):
            return value
        items = [walk(v, f"{pointer}/{i}") for i, v in enumerate(value)]
        seen: set[str] = set()
        kept = []
        for item in items:
            key = json.dumps(item, sort_keys=True)
            if key not in seen:
                seen.add(key)
                kept.append(item)
        if len(kept) < len(items):
            applied.append(Coercion(pointer or "/", value, kept))
        return kept

    fixed = walk(args, "")
    if not applied or (validator.is_valid(args) and not validator.is_valid(fixed)):
        return args, []
    return fixed, applied


def drop_restated_items(
    validator: Draft202012Validator, schema: dict[str, Any], args: dict[str, Any]
) -> tuple[dict[str, Any], list[Coercion]]:
    """`args` with each item of an array of objects dropped that restates an
    earlier item: the same open strings (a name, an id: what the item is
    about) and the same enum members and flags, with only its numbers
    changed. A small model runs a list of people on as the same person
    again and again, counting the age up (10, 11, 12, ...). Items with no
    open string (two adult tickets that differ by age) are left alone, and
    so is an array the schema would no longer accept shorter."""
    applied: list[Coercion] = []

    def walk(value: Any, sub: Any, pointer: str) -> Any:
        sub = sub if isinstance(sub, dict) else {}
        if isinstance(value, dict):
            props = sub.get("properties") or {}
            return {
                k: walk(v, props.get(k), f"{pointer}/{_escape(str(k))}") for k, v in value.items()
            }
        if not isinstance(value, list):
            return value
        items = [walk(v, sub.get("items"), f"{pointer}/{i}") for i, v in enumerate(value)]
        seen: set[str] = set()
        kept = []
        for item in items:
            said = _what_it_is(item, sub.get("items"))
            if said is not None and said in seen:
                continue
            if said is not None:
                seen.add(said)
            kept.append(item)
        if len(kept) < len(items):
            applied.append(Coercion(pointer or "/", value, kept))
        return kept

    fixed = walk(args, schema, "")
    if not applied or (validator.is_valid(args) and not validator.is_valid(fixed)):
        return args, []
    return fixed, applied


_NUMBERED = re.compile(r"^(.*?)_?(\d+)$")


def drop_echoed_lines(
    validator: Draft202012Validator, schema: dict[str, Any], args: dict[str, Any]
) -> tuple[dict[str, Any], list[Coercion]]:
    """`args` less each optional string whose key is a numbered sibling of
    another (`line2` beside `line1`, `phone_2` beside `phone_1`) and whose
    value repeats it: a second address line that echoes the first is no
    line. Left alone where the schema would no longer accept the call."""
    applied: list[Coercion] = []

    def walk(value: Any, sub: Any, pointer: str) -> Any:
        sub = sub if isinstance(sub, dict) else {}
        if isinstance(value, list):
            return [walk(v, sub.get("items"), f"{pointer}/{i}") for i, v in enumerate(value)]
        if not isinstance(value, dict):
            return value
        props = sub.get("properties") or {}
        required = set(sub.get("required") or [])
        out = {k: walk(v, props.get(k), f"{pointer}/{_escape(str(k))}") for k, v in value.items()}
        for key in list(out):
            if key in required or not isinstance(out[key], str):
                continue
            if any(_siblings(key, other) and out.get(other) == out[key] for other in out):
                applied.append(Coercion(f"{pointer}/{_escape(key)}", out.pop(key), None))
        return out

    fixed = walk(args, schema, "")
    if not applied or (validator.is_valid(args) and not validator.is_valid(fixed)):
        return args, []
    return fixed, applied


def _siblings(key: str, other: str) -> bool:
    """Two keys that differ only by their trailing number, `key` the later."""
    mine, theirs = _NUMBERED.match(key), _NUMBERED.match(other)
    return bool(
        mine
        and theirs
        and mine.group(1) == theirs.group(1)
        and int(theirs.group(2)) < int(mine.group(2))
    )


def _what_it_is(item: Any, schema: Any) -> str | None:
    """An object item's values less its numbers (JSON), where one of them is
    an open string (no enum member); else None."""
    if not isinstance(item, dict) or not isinstance(schema, dict):
        return None
    props = schema.get("properties") or {}
    kept = {k: v for k, v in item.items() if isinstance(v, str | bool) or v is None}
    open_strings = [
        k
        for k, v in kept.items()
        if isinstance(v, str) and "enum" not in (props.get(k) or {}) and v.strip()
    ]
    return json.dumps(kept, sort_keys=True) if open_strings else None


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


# Twenty of one digit: a value that ran on ("100000000000...", where the
# model could not stop a free string it had nothing to write in).
_RUNAWAY = re.compile(r"(\d)\1{19,}")


def cut_runaways(
    schema: dict[str, Any], args: dict[str, Any]
) -> tuple[dict[str, Any], list[Coercion]]:
    """`args` with every string that runs on into twenty of one digit left
    out where its object does not require it, else cut where the run
    begins; the coercions applied. Calls in pieces stop such strings as
    they are written (backends/llama/pieces.py, RUNAWAY_STOPS); a nested
    object is written under one grammar and reaches here whole."""
    applied: list[Coercion] = []

    def walk(value: Any, sub: Any, pointer: str) -> Any:
        sub = sub if isinstance(sub, dict) else {}
        if isinstance(value, dict):
            props = sub.get("properties") or {}
            required = set(sub.get("required") or [])
            out = {}
            for key, item in value.items():
                where = f"{pointer}/{_escape(str(key))}"
                if isinstance(item, str) and (m := _RUNAWAY.search(item)):
                    if key not in required:
                        applied.append(Coercion(where, item, None))
                        continue
                    applied.append(Coercion(where, item, item[: m.start()]))
                    out[key] = item[: m.start()]
                    continue
                out[key] = walk(item, props.get(key), where)
            return out
        if isinstance(value, list):
            return [walk(v, sub.get("items"), f"{pointer}/{i}") for i, v in enumerate(value)]
        return value

    fixed = walk(args, schema, "")
    return (fixed, applied) if applied else (args, [])
