"""Optional keys whose value nobody wrote are left out.

A booking form has optional keys for what the user may give: an SMS
number, a site contact's phone, a second e-mail, an accreditation number.
A small model names such a key and then invents its value (a phone of
repeated digits, an accreditation number made from another body's): the
call is well-formed and wrong, and the invented value reaches the caller's
system. A key of this kind takes a value the conversation writes: an
e-mail, a UUID, a web address, a phone number, or an id with a pattern.
Where no text of the conversation (the request, the results, the errors)
writes a value that fits, the key is not offered this turn: the object
closes without it. Keys an object requires (directly, or to reach its
`minProperties`) always stay, and so does anything under anyOf/oneOf,
whose branches the grammar chooses.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from typing import Any

from forge_core.guardrails.grounding import is_identifier_like
from forge_core.guardrails.phones import takes_phone, written_phones
from forge_core.workflow import ToolSpec

_FOUND = {
    "email": re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"),
    "uuid": re.compile(r"\b[0-9a-fA-F]{8}-(?:[0-9a-fA-F]{4}-){3}[0-9a-fA-F]{12}\b"),
    "uri": re.compile(r"\bhttps?://\S+"),
}
_FOUND["idn-email"], _FOUND["iri"] = _FOUND["email"], _FOUND["uri"]


def _pattern(schema: dict[str, Any]) -> re.Pattern[str] | None:
    """The schema's pattern, to search a text with: unanchored."""
    raw = schema.get("pattern")
    if not isinstance(raw, str):
        return None
    try:
        return re.compile(raw.removeprefix("^").removesuffix("$"))
    except re.error:
        return None


def founded(name: str, schema: Any, texts: list[str]) -> bool:
    """Whether the conversation writes a value `name` may take; True for
    any key whose value need not be written anywhere (a number, a free
    string, a date Forge reads from words)."""
    if not isinstance(schema, dict) or schema.get("type") != "string" or "enum" in schema:
        return True
    found = _FOUND.get(str(schema.get("format", "")))
    if found is not None:
        return any(found.search(text) for text in texts)
    pattern = _pattern(schema)
    # Only an id's pattern: a time or a date may be read from words.
    if pattern is not None and is_identifier_like(name):
        return any(pattern.search(text) for text in texts)
    if takes_phone(name, schema):
        return any(written_phones(text) for text in texts)
    return True


def _prune(schema: Any, texts: list[str], depth: int = 0) -> bool:
    """Drops, in place, the unfounded optional keys of `schema`'s plain
    objects; whether it dropped any."""
    if not isinstance(schema, dict) or depth > 8 or "anyOf" in schema or "oneOf" in schema:
        return False
    changed = False
    props = schema.get("properties")
    if isinstance(props, dict):
        required = set(schema.get("required") or [])
        spare = len(props) - max(int(schema.get("minProperties", 0)), len(required))
        for name in list(props):
            if name not in required and spare > 0 and not founded(name, props[name], texts):
                del props[name]
                spare -= 1
                changed = True
        for sub in props.values():
            changed |= _prune(sub, texts, depth + 1)
    if schema.get("type") == "array":
        changed |= _prune(schema.get("items"), texts, depth + 1)
    return changed


def without_unfounded(tool: ToolSpec, texts: list[str]) -> ToolSpec:
    """`tool` with the optional keys no text of the conversation can fill
    taken out of its schema for this turn."""
    parameters = copy.deepcopy(tool.parameters)
    if not _prune(parameters, texts):
        return tool
    return dataclasses.replace(tool, parameters=parameters)
