"""How the engine talks to models that have no native tool-call template.

Tools are described in the system prompt and every tool call is written as the
same JSON object the grammar constraint admits, so the history the model reads
looks exactly like what it is asked to produce.
"""

from __future__ import annotations

import json
from typing import Any

from forge_core.messages import Message, MessageRole, MessageType
from forge_core.modes import ReasoningReplay
from forge_core.workflow import ToolSpec


def tool_prompt(tools: list[ToolSpec], parallel: bool = False, parameter_docs: bool = True) -> str:
    """The tool list for the system prompt.

    With `parameter_docs` each signature carries what tells a small model
    which value to write: enum values as the type, `?` on optional
    parameters, defaults, and each parameter's description (with its format
    or pattern) on an indented line below the tool. Without it, only names
    and types.
    """
    lines = [
        "",
        "You can call these tools:",
    ]
    for tool in tools:
        props: dict[str, Any] = tool.parameters.get("properties", {})
        required = set(tool.parameters.get("required", []))
        desc = f": {tool.description}" if tool.description else ""
        if not parameter_docs:
            params = ", ".join(f"{name}: {_type_of(schema)}" for name, schema in props.items())
            lines.append(f"- {tool.name}({params}){desc}")
            continue
        params = ", ".join(
            _signature(name, schema, name in required) for name, schema in props.items()
        )
        lines.append(f"- {tool.name}({params}){desc}")
        for name, schema in props.items():
            doc = _parameter_doc(schema)
            if doc:
                lines.append(f"    {name}: {doc}")
    if parallel:
        lines.append(
            'Answer with a JSON array of one or more objects {"tool": "<name>", "args": {...}}, '
            "one per tool call, and nothing else."
        )
    else:
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


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# Enums longer than this are summarised in the type and listed in full only
# by the grammar: the prompt would otherwise grow with every value.
MAX_ENUM_IN_PROMPT = 12


def _rich_type(schema: Any) -> str:
    if not isinstance(schema, dict):
        return "any"
    if "const" in schema:
        return _compact(schema["const"])
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        shown = "|".join(_compact(v) for v in enum[:MAX_ENUM_IN_PROMPT])
        return shown + ("|..." if len(enum) > MAX_ENUM_IN_PROMPT else "")
    if schema.get("type") == "array":
        return f"{_rich_type(schema.get('items', {}))}[]"
    for key in ("anyOf", "oneOf"):
        options = schema.get(key)
        if isinstance(options, list) and options:
            return "|".join(_rich_type(o) for o in options)
    return _type_of(schema)


def _signature(name: str, schema: Any, required: bool) -> str:
    text = f"{name}{'' if required else '?'}: {_rich_type(schema)}"
    if isinstance(schema, dict) and "default" in schema:
        text += f" = {_compact(schema['default'])}"
    return text


def _parameter_doc(schema: Any) -> str:
    if not isinstance(schema, dict):
        return ""
    parts = []
    description = str(schema.get("description", "")).strip()
    if description:
        parts.append(description)
    if schema.get("format"):
        parts.append(f"format {schema['format']}")
    if schema.get("pattern"):
        parts.append(f"pattern {schema['pattern']}")
    examples = schema.get("examples")
    if isinstance(examples, list) and examples:
        parts.append("e.g. " + ", ".join(_compact(e) for e in examples[:3]))
    return "; ".join(parts)


def call_as_text(name: str, args: dict[str, Any]) -> str:
    return json.dumps({"tool": name, "args": args}, ensure_ascii=False)


def replayed_reasoning(messages: list[Message], policy: str) -> set[int]:
    """Indexes of the REASONING messages the model gets to see again."""
    indexes = [i for i, m in enumerate(messages) if m.type is MessageType.REASONING]
    if policy == ReasoningReplay.FULL:
        return set(indexes)
    if policy == ReasoningReplay.KEEP_LAST and indexes:
        return {indexes[-1]}
    return set()


def to_chat_messages(
    messages: list[Message],
    tools: list[ToolSpec],
    *,
    parallel: bool = False,
    reasoning_replay: str = ReasoningReplay.KEEP_LAST,
    parameter_docs: bool = True,
) -> list[dict[str, Any]]:
    """OpenAI-style chat messages for a model without a tool-call template.

    Past calls are written as the JSON the model is asked to produce (chat
    templates without tool support drop `tool_calls` from the history).
    Replayed reasoning is folded into the assistant turn that follows it, as
    `<think>` text, the way reasoning models emit it.
    """
    out: list[dict[str, Any]] = []
    prompt_added = False
    keep = replayed_reasoning(messages, reasoning_replay)
    pending_thought = ""
    for i, msg in enumerate(messages):
        if msg.type is MessageType.REASONING:
            if i in keep:
                pending_thought = f"<think>\n{msg.content}\n</think>\n"
            continue
        if msg.role is MessageRole.SYSTEM and not prompt_added and tools:
            content = msg.content + "\n" + tool_prompt(tools, parallel, parameter_docs)
            out.append({"role": "system", "content": content})
            prompt_added = True
            continue
        if msg.type is MessageType.TOOL_CALL and msg.tool_calls:
            if parallel or len(msg.tool_calls) > 1:
                calls = [{"tool": c.name, "args": c.args} for c in msg.tool_calls]
                text = json.dumps(calls, ensure_ascii=False)
            else:
                text = call_as_text(msg.tool_calls[0].name, msg.tool_calls[0].args)
            out.append({"role": "assistant", "content": pending_thought + text})
        elif msg.role is MessageRole.ASSISTANT:
            out.append({"role": "assistant", "content": pending_thought + msg.content})
        else:
            out.append({"role": msg.role.value, "content": msg.content})
        # Reasoning belongs to the assistant turn right after it; a nudge or
        # result in between means that turn never came.
        pending_thought = ""
    # No tools (a plain chat): the conversation as it is, no tool prompt.
    if not prompt_added and tools:
        prompt = tool_prompt(tools, parallel, parameter_docs).lstrip()
        out.insert(0, {"role": "system", "content": prompt})
    return out
