"""Grammar constraints: one JSON Schema that only admits valid tool calls.

llama-server compiles a `response_format` JSON Schema into a GBNF grammar, so
the model can only emit `{"tool": <one of the names>, "args": <that tool's
arguments>}`. Even a 270M base model then produces a well-formed call.
"""

from __future__ import annotations

import copy
from typing import Any

from forge_core.workflow import ToolSpec


def tool_call_schema(tools: list[ToolSpec]) -> dict[str, Any]:
    """One `anyOf` branch per tool: `{"tool": const name, "args": its schema}`."""
    branches = [
        {
            "type": "object",
            "properties": {
                "tool": {"const": tool.name},
                "args": _args_schema(tool.parameters),
            },
            "required": ["tool", "args"],
            "additionalProperties": False,
        }
        for tool in tools
    ]
    if len(branches) == 1:
        return branches[0]
    return {"anyOf": branches}


def _args_schema(parameters: dict[str, Any]) -> dict[str, Any]:
    schema = copy.deepcopy(parameters)
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    # Without this the grammar lets the model invent keys forever.
    schema.setdefault("additionalProperties", False)
    # Keywords the grammar compiler does not understand only add noise.
    for key in ("$schema", "$id", "title"):
        schema.pop(key, None)
    return schema
