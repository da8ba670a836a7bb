"""Grammar constraints: one JSON Schema that only admits valid tool calls.

llama-server compiles a `response_format` JSON Schema into a GBNF grammar, so
the model can only emit `{"tool": <one of the names>, "args": <that tool's
arguments>}`. Even a 270M base model then produces a well-formed call.
"""

from __future__ import annotations

import copy
from typing import Any

from forge_core.workflow import ToolSpec

MAX_PARALLEL_CALLS = 8


def tool_call_schema(tools: list[ToolSpec], parallel: bool = False) -> dict[str, Any]:
    """One `anyOf` branch per tool: `{"tool": const name, "args": its schema}`.

    Each tool's local definitions (`$defs`, `definitions`) move to the root
    under a per-tool prefix, with its `#/...` references rewritten to match:
    nested under `args`, they would otherwise resolve against the new root.
    """
    defs: dict[str, Any] = {}
    branches = [
        {
            "type": "object",
            "properties": {
                "tool": {"const": tool.name},
                "args": _args_schema(tool.name, tool.parameters, defs),
            },
            "required": ["tool", "args"],
            "additionalProperties": False,
        }
        for tool in tools
    ]
    schema: dict[str, Any] = branches[0] if len(branches) == 1 else {"anyOf": branches}
    if parallel:
        # Several calls in one turn: a non-empty array of call objects.
        schema = {
            "type": "array",
            "items": schema,
            "minItems": 1,
            "maxItems": MAX_PARALLEL_CALLS,
        }
    if defs:
        schema["$defs"] = defs
    return schema


_DEF_KEYS = ("$defs", "definitions")


def _args_schema(tool: str, parameters: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    schema = copy.deepcopy(parameters)
    renamed: dict[str, str] = {}
    for key in _DEF_KEYS:
        for name, definition in (schema.pop(key, None) or {}).items():
            new_name = f"{tool}__{name}"
            renamed[f"#/{key}/{name}"] = f"#/$defs/{new_name}"
            defs[new_name] = definition
    if renamed:
        _rewrite_refs(schema, renamed)
        for new_name in {r.rsplit("/", 1)[1] for r in renamed.values()}:
            _rewrite_refs(defs[new_name], renamed)
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    # Without this the grammar lets the model invent keys forever.
    schema.setdefault("additionalProperties", False)
    # Keywords the grammar compiler does not understand only add noise.
    for key in ("$schema", "$id", "title"):
        schema.pop(key, None)
    return schema


def _rewrite_refs(node: Any, renamed: dict[str, str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref in renamed:
            node["$ref"] = renamed[ref]
        for value in node.values():
            _rewrite_refs(value, renamed)
    elif isinstance(node, list):
        for item in node:
            _rewrite_refs(item, renamed)
