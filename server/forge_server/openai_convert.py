"""OpenAI chat-completions requests read as a Forge turn, and answers written back.

A request is a conversation plus tools; Forge reads it as one turn of a run
(forge_core/replay.py): the workflow is either one registered under a name
(required steps, terminal tools, prerequisites: the `Run` rules) or made
from the request's `tools`, with the built-in respond tool standing for a
plain text answer when `tool_choice` allows one.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, replace
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from forge_core.json_limits import JsonLimitError, loads_bounded
from forge_core.messages import Message, MessageRole, MessageType, ToolCallInfo
from forge_core.workflow import (
    RESPOND_TOOL,
    RunOptions,
    ToolSpec,
    Workflow,
    WorkflowError,
    check_parameters_schema,
)

# The name an unregistered request's workflow gets (prompt and logs).
AD_HOC_WORKFLOW = "chat"


class ApiError(Exception):
    """An OpenAI-shaped error: HTTP status, type, the offending param, code."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        type_: str = "invalid_request_error",
        param: str | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type_
        self.param = param
        self.code = code

    def body(self) -> dict[str, Any]:
        return {
            "error": {
                "message": self.message,
                "type": self.type,
                "param": self.param,
                "code": self.code,
            }
        }


class _Function(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})


class _Tool(BaseModel):
    model_config = ConfigDict(extra="allow")
    type: Literal["function"] = "function"
    function: _Function


class _CallFunction(BaseModel):
    model_config = ConfigDict(extra="allow")
    name: str
    arguments: str = ""


class _ToolCall(BaseModel):
    model_config = ConfigDict(extra="allow")
    id: str
    type: Literal["function"] = "function"
    function: _CallFunction


class _Message(BaseModel):
    model_config = ConfigDict(extra="allow")
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[dict[str, Any]] | None = None
    tool_calls: list[_ToolCall] | None = None
    tool_call_id: str | None = None
    name: str | None = None


class _StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")
    include_usage: bool = False


class ChatRequest(BaseModel):
    """The fields of POST /v1/chat/completions that Forge reads; others are
    accepted and ignored, as OpenAI-compatible servers do."""

    model_config = ConfigDict(extra="allow")
    model: str = ""
    messages: list[_Message] = Field(min_length=1)
    tools: list[_Tool] | None = None
    tool_choice: str | dict[str, Any] | None = None
    parallel_tool_calls: bool | None = None
    stream: bool = False
    stream_options: _StreamOptions | None = None
    temperature: float | None = Field(default=None, ge=0, le=2)
    max_tokens: int | None = Field(default=None, ge=1, le=65536)
    max_completion_tokens: int | None = Field(default=None, ge=1, le=65536)
    n: int = 1
    metadata: dict[str, str] | None = None


def parse_request(body: bytes) -> ChatRequest:
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ApiError(400, f"the body is not JSON: {exc}") from exc
    try:
        request = ChatRequest.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        param = field_path(first["loc"])
        raise ApiError(400, f"{param}: {first['msg']}", param=param) from exc
    if request.n != 1:
        raise ApiError(400, "n: only 1 choice is supported", param="n")
    return request


# pydantic names the member of a union that failed in its error's location
# (`content.str`, `tool_choice.dict[str,any]`): not a field of the request.
_UNION_MEMBER = re.compile(r"^(str|int|float|bool|list|dict|none)$|\[")


def field_path(loc: tuple[int | str, ...]) -> str:
    """A pydantic error location in the style of every other error's param:
    `messages[1].role`, brackets for indexes."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif not _UNION_MEMBER.search(part):
            out += f".{part}" if out else part
    return out


# Names that always mean the served model, besides its own id: a client
# library's placeholder, and the server's name.
MODEL_ALIASES = frozenset({"", "forge"})


def check_model(requested: str, served: str) -> None:
    """An unknown `model` is refused as OpenAI refuses one (404
    model_not_found): a client that names another model must not silently
    get this one. The served id (as GET /v1/models lists it) matches in any
    case, and so does a start of it that ends where a word of the id does
    (`gemma`, `gemma-3-270m` for `gemma-3-270m-it-Q8_0.gguf`)."""
    wanted = requested.strip().lower()
    name = served.lower()
    if wanted in MODEL_ALIASES or name == wanted:
        return
    if name.startswith(wanted) and name[len(wanted)] in "-_.:/ ":
        return
    raise ApiError(
        404,
        f"The model {requested[:100]!r} does not exist: this server serves {served!r} "
        "(GET /v1/models), also called 'forge'",
        param="model",
        code="model_not_found",
    )


def is_plain_chat(request: ChatRequest, registered: Registered | None) -> bool:
    """No workflow and no tool to offer: the model answers in plain text, with
    no grammar and no respond tool (the answer streams as fast as the model
    writes it). Call after request_workflow accepted the request."""
    return registered is None and (not request.tools or request.tool_choice == "none")


@dataclass
class Registered:
    """A workflow registered under a name, with the run options it uses."""

    workflow: Workflow
    options: RunOptions


def request_workflow(request: ChatRequest, registered: Registered | None) -> Registered:
    """The workflow and options this request runs under."""
    if registered is not None:
        base = registered
        names = {t.name for t in base.workflow.tools}
        for i, tool in enumerate(request.tools or []):
            if tool.function.name not in names:
                raise ApiError(
                    400,
                    f"tool {tool.function.name!r} is not in the registered workflow "
                    f"{base.workflow.name!r}",
                    param=f"tools[{i}].function.name",
                )
        return Registered(base.workflow, _request_options(request, base.options))
    tools = []
    seen: set[str] = set()
    for i, tool in enumerate(request.tools or []):
        where = f"tools[{i}].function"
        try:
            _check_tool_name(tool.function.name, seen, f"{where}.name")
            check_parameters_schema(tool.function.parameters, f"{where}.parameters")
        except WorkflowError as exc:
            raise ApiError(400, str(exc), param=exc.field) from exc
        seen.add(tool.function.name)
        tools.append(
            ToolSpec(tool.function.name, tool.function.description, tool.function.parameters)
        )
    choice = request.tool_choice
    respond = True
    if choice == "required":
        respond = False
    elif choice == "none":
        tools = []
    elif isinstance(choice, dict):
        name = (choice.get("function") or {}).get("name", "")
        tools = [t for t in tools if t.name == name]
        if not tools:
            raise ApiError(
                400, f"tool_choice names no tool of the request: {name!r}", param="tool_choice"
            )
        respond = False
    elif choice not in (None, "auto"):
        raise ApiError(400, f"tool_choice: unknown value {choice!r}", param="tool_choice")
    if not tools and not respond:
        raise ApiError(400, "tool_choice 'required' needs tools", param="tool_choice")
    workflow = Workflow(name=AD_HOC_WORKFLOW, tools=tools, respond_tool=respond).with_builtins()
    return Registered(workflow, _request_options(request, RunOptions()))


def _check_tool_name(name: str, seen: set[str], field_path: str) -> None:
    if not name:
        raise WorkflowError(field_path, "must not be empty")
    if name == RESPOND_TOOL:
        raise WorkflowError(field_path, f"{RESPOND_TOOL!r} is Forge's built-in text answer")
    if name in seen:
        raise WorkflowError(field_path, f"tool {name!r} is defined twice")


def _request_options(request: ChatRequest, options: RunOptions) -> RunOptions:
    changes: dict[str, Any] = {}
    if request.temperature is not None:
        changes["temperature"] = request.temperature
    limit = request.max_completion_tokens or request.max_tokens
    if limit is not None:
        changes["max_tokens"] = limit
    if request.parallel_tool_calls is not None:
        changes["parallel_tool_calls"] = request.parallel_tool_calls
    if request.stream:
        changes["stream_chunks"] = True
    return replace(options, **changes) if changes else options


def request_messages(
    request: ChatRequest, workflow: Workflow, plain: bool = False
) -> list[Message]:
    """The conversation as Forge messages. A text answer of the assistant is
    recorded the way Forge makes one: a respond call and its result; in a
    `plain` chat (is_plain_chat), as the text it was."""
    out: list[Message] = []
    names: dict[str, str] = {}
    for i, msg in enumerate(request.messages):
        where = f"messages[{i}]"
        text = _text(msg.content, where)
        if msg.role in ("system", "developer"):
            if out:
                # Later system messages are instructions too; keep them as such.
                out.append(Message(MessageRole.USER, text, MessageType.SUMMARY))
            else:
                out.append(Message(MessageRole.SYSTEM, text, MessageType.SYSTEM_PROMPT))
        elif msg.role == "user":
            out.append(Message(MessageRole.USER, text, MessageType.USER_INPUT))
        elif msg.role == "assistant":
            if msg.tool_calls:
                calls = []
                for j, call in enumerate(msg.tool_calls):
                    args = _arguments(
                        call.function.arguments, f"{where}.tool_calls[{j}].function.arguments"
                    )
                    calls.append(ToolCallInfo(call.id, call.function.name, args))
                    names[call.id] = call.function.name
                out.append(
                    Message(MessageRole.ASSISTANT, "", MessageType.TOOL_CALL, tool_calls=calls)
                )
            elif text and plain:
                out.append(Message(MessageRole.ASSISTANT, text, MessageType.TEXT_RESPONSE))
            elif text:
                call_id = f"answer_{i}"
                answer = ToolCallInfo(call_id, RESPOND_TOOL, {"message": text})
                out.append(
                    Message(MessageRole.ASSISTANT, "", MessageType.TOOL_CALL, tool_calls=[answer])
                )
                out.append(
                    Message(
                        MessageRole.TOOL,
                        text,
                        MessageType.TOOL_RESULT,
                        tool_call_id=call_id,
                        tool_name=RESPOND_TOOL,
                    )
                )
        else:
            call_id = msg.tool_call_id or ""
            if call_id not in names:
                raise ApiError(
                    400,
                    f"{where}.tool_call_id {call_id[:64]!r} answers no tool call "
                    "of an earlier message",
                    param=f"{where}.tool_call_id",
                )
            out.append(
                Message(
                    MessageRole.TOOL,
                    text,
                    MessageType.TOOL_RESULT,
                    tool_call_id=call_id,
                    tool_name=names[call_id],
                )
            )
    if not any(m.type is MessageType.USER_INPUT for m in out):
        raise ApiError(400, "messages: holds no user message", param="messages")
    return out


def _text(content: str | list[dict[str, Any]] | None, where: str) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for k, part in enumerate(content):
        if part.get("type") != "text" or not isinstance(part.get("text"), str):
            raise ApiError(
                400,
                f"{where}.content[{k}]: only text parts are supported, got {part.get('type')!r}",
                param=f"{where}.content[{k}].type",
            )
        parts.append(part["text"])
    return "\n".join(parts)


def _arguments(text: str, where: str) -> dict[str, Any]:
    try:
        args = loads_bounded(text) if text.strip() else {}
    except (JsonLimitError, json.JSONDecodeError) as exc:
        raise ApiError(400, f"{where}: {exc}", param=where) from exc
    if not isinstance(args, dict):
        raise ApiError(400, f"{where}: must be a JSON object", param=where)
    return args


def new_call_id() -> str:
    return "call_" + uuid.uuid4().hex[:24]
