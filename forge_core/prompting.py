"""How the engine talks to models that have no native tool-call template.

Tools are described in the system prompt and every tool call is written as the
same JSON object the grammar constraint admits, so the history the model reads
looks exactly like what it is asked to produce.
"""

from __future__ import annotations

import json
from typing import Any

from forge_core.messages import Message, MessageRole, MessageType
from forge_core.workflow import ToolSpec


def tool_prompt(tools: list[ToolSpec]) -> str:
    lines = [
        "",
        "You can call these tools:",
    ]
    for tool in tools:
        props = tool.parameters.get("properties", {})
        params = ", ".join(f"{name}: {_type_of(schema)}" for name, schema in props.items())
        desc = f": {tool.description}" if tool.description else ""
        lines.append(f"- {tool.name}({params}){desc}")
    lines.append(
        'Answer with exactly one JSON object of the form {"tool": "<name>", "args": {...}} '
        "and nothing else."
    )
    return "\n".join(lines)


def _type_of(schema: Any) -> str:
    if isinstance(schema, dict):
        t = schema.get("type")
        if isinstance(t, str):
            return t
        if isinstance(t, list):
            return "|".join(str(x) for x in t)
    return "any"


def call_as_text(name: str, args: dict[str, Any]) -> str:
    return json.dumps({"tool": name, "args": args}, ensure_ascii=False)


def to_chat_messages(messages: list[Message], tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """OpenAI-style chat messages for a prompt-injected, constrained model."""
    out: list[dict[str, Any]] = []
    prompt_added = False
    for msg in messages:
        if msg.role is MessageRole.SYSTEM and not prompt_added:
            out.append({"role": "system", "content": msg.content + "\n" + tool_prompt(tools)})
            prompt_added = True
        elif msg.type is MessageType.TOOL_CALL and msg.tool_calls:
            text = "\n".join(call_as_text(c.name, c.args) for c in msg.tool_calls)
            out.append({"role": "assistant", "content": text})
        else:
            out.append({"role": msg.role.value, "content": msg.content})
    if not prompt_added:
        out.insert(0, {"role": "system", "content": tool_prompt(tools).lstrip()})
    return out
