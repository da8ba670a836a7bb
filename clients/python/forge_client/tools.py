"""Turning plain Python functions into tools with a JSON Schema."""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import json
import re
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, get_type_hints

import pydantic
from pydantic import BaseModel


@dataclass(frozen=True)
class ToolCallContext:
    """The call a tool function is running for (current_tool_call())."""

    call_id: str
    tool_name: str
    run_id: str
    # The loop iteration that produced the call.
    iteration: int


_CURRENT_CALL: contextvars.ContextVar[ToolCallContext | None] = contextvars.ContextVar(
    "forge_tool_call", default=None
)


def current_tool_call() -> ToolCallContext | None:
    """The call the running tool function serves (its call id, run id...);
    None outside a tool call. A contextvar: existing tool signatures stay as
    they are, and synchronous tools (run in a worker thread) see it too."""
    return _CURRENT_CALL.get()


def set_current_tool_call(call: ToolCallContext) -> None:
    """Set by the run's stream in the task that runs the call (the task's
    own context: other calls are not affected)."""
    _CURRENT_CALL.set(call)


@dataclass(frozen=True)
class Prerequisite:
    """`tool` must have run before; with `match_arg`, with the same value for it."""

    tool: str
    match_arg: str = ""


@dataclass
class Tool:
    name: str
    description: str
    fn: Callable[..., Any]
    # None for tools declared with a raw JSON Schema: fn then gets the
    # arguments dict (the server has already validated it against the schema).
    args_model: type[BaseModel] | None
    # True when fn takes the model instance itself rather than keyword args.
    takes_model: bool = False
    prerequisites: list[Prerequisite] = field(default_factory=list)
    raw_schema: dict[str, Any] | None = None
    # Deletes or overwrites what cannot be undone (MCP's destructiveHint):
    # offered only when the user asks for it, run alone, optionally approved.
    destructive: bool = False
    # Only reads / the same effect when repeated (MCP's readOnlyHint,
    # idempotentHint): the server makes a call once more when its result
    # never came back (ToolUnreachableError).
    read_only: bool = False
    idempotent: bool = False

    def json_schema(self) -> dict[str, Any]:
        if self.args_model is None:
            return self.raw_schema or {"type": "object", "properties": {}}
        return self.args_model.model_json_schema()

    def _schema_json(self) -> str:
        """json_schema() as JSON text, as each run's start sends it. A model's
        schema is generated once per model (pydantic builds it anew on every
        call, a few hundred microseconds per tool and run); a raw schema is
        serialized each time, since the caller may change that dict (as is
        what a subclass's own json_schema returns)."""
        model = self.args_model
        if model is None or type(self).json_schema is not Tool.json_schema:
            return json.dumps(self.json_schema())
        text = _SCHEMA_TEXT.get(model)
        if text is None:
            text = _SCHEMA_TEXT[model] = json.dumps(model.model_json_schema())
        return text

    async def invoke(self, arguments_json: str) -> Any:
        """Validate the arguments with the model, then call the function.

        Synchronous functions run in a worker thread so a slow tool does not
        stall the stream (and other tools of the same turn).
        """
        if self.args_model is None:
            call_args: tuple[Any, ...] = (json.loads(arguments_json or "{}"),)
            return await _call(self.fn, call_args, {})
        parsed = self.args_model.model_validate_json(arguments_json or "{}")
        if self.takes_model:
            call_args = (parsed,)
            call_kwargs: dict[str, Any] = {}
        else:
            call_args = ()
            call_kwargs = {name: getattr(parsed, name) for name in _field_names(type(parsed))}
        return await _call(self.fn, call_args, call_kwargs)


# Per argument model (weak keys: a model made for a workflow that is gone is
# not kept): its schema as JSON text, and its field names.
_SCHEMA_TEXT: weakref.WeakKeyDictionary[type[BaseModel], str] = weakref.WeakKeyDictionary()
# Field names: reading `model_fields` on the class goes through pydantic's
# deprecation shim on every tool call.
_FIELD_NAMES: weakref.WeakKeyDictionary[type[BaseModel], tuple[str, ...]] = (
    weakref.WeakKeyDictionary()
)


def _field_names(model: type[BaseModel]) -> tuple[str, ...]:
    names = _FIELD_NAMES.get(model)
    if names is None:
        names = _FIELD_NAMES[model] = tuple(model.model_fields)
    return names


async def _call(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if inspect.iscoroutinefunction(fn):
        return await fn(*args, **kwargs)
    return await asyncio.to_thread(fn, *args, **kwargs)


def tool_from_schema(
    name: str,
    description: str,
    parameters: dict[str, Any],
    fn: Callable[[dict[str, Any]], Any],
    *,
    prerequisites: list[str | Prerequisite] | None = None,
) -> Tool:
    """A tool declared with a plain JSON Schema; `fn(arguments_dict)` runs it."""
    return Tool(
        name=name,
        description=description,
        fn=fn,
        args_model=None,
        prerequisites=_prerequisites(prerequisites),
        raw_schema=parameters,
    )


def _prerequisites(items: list[str | Prerequisite] | None) -> list[Prerequisite]:
    return [p if isinstance(p, Prerequisite) else Prerequisite(p) for p in items or []]


def tool_from_function(
    fn: Callable[..., Any],
    *,
    name: str | None = None,
    description: str | None = None,
    prerequisites: list[str | Prerequisite] | None = None,
) -> Tool:
    """Build a Tool: schema from type hints (pydantic), description from the
    docstring's first paragraph, parameter descriptions from its Args section."""
    tool_name = name or fn.__name__
    doc = inspect.getdoc(fn) or ""
    summary, arg_docs = _parse_docstring(doc)
    hints = get_type_hints(fn, include_extras=True)
    params = [
        p
        for p in inspect.signature(fn).parameters.values()
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    takes_model = False
    if len(params) == 1 and _is_model(hints.get(params[0].name)):
        model: type[BaseModel] = hints[params[0].name]
        takes_model = True
    else:
        spec: list[tuple[str, Any, Any, str | None]] = []
        for p in params:
            if p.name not in hints:
                raise TypeError(f"tool {tool_name!r}: parameter {p.name!r} needs a type hint")
            default = ... if p.default is inspect.Parameter.empty else p.default
            spec.append((p.name, hints[p.name], default, arg_docs.get(p.name)))
        model = _args_model(tool_name, spec)
    return Tool(
        name=tool_name,
        description=description if description is not None else summary,
        fn=fn,
        args_model=model,
        takes_model=takes_model,
        prerequisites=_prerequisites(prerequisites),
    )


# Argument models by what makes them: a workflow built anew for every run
# (its tools are closures made per request) gets the model its tools had
# before, and with it the schema text made for that model once, instead of
# pydantic.create_model's ~0.4 ms per tool. Least recently used first.
ARGS_MODELS_KEPT = 1024
_ARGS_MODELS: OrderedDict[tuple[Any, ...], type[BaseModel]] = OrderedDict()
_ARGS_MODELS_LOCK = threading.Lock()


def _args_model(tool_name: str, spec: list[tuple[str, Any, Any, str | None]]) -> type[BaseModel]:
    """The argument model of a tool whose parameters are `spec`: (name, type,
    default or ..., description) each."""
    key: tuple[Any, ...] | None = (
        tool_name,
        # The default's type too: 1 and True are equal keys, not equal defaults.
        *((name, hint, default, type(default), doc) for name, hint, default, doc in spec),
    )
    try:
        hash(key)
    except TypeError:  # an unhashable default or type annotation: made each time
        key = None
    if key is not None:
        with _ARGS_MODELS_LOCK:
            kept = _ARGS_MODELS.get(key)
            if kept is not None:
                _ARGS_MODELS.move_to_end(key)
                return kept
    fields: dict[str, Any] = {
        name: (hint, pydantic.Field(default=default, description=doc))
        for name, hint, default, doc in spec
    }
    model: type[BaseModel] = pydantic.create_model(f"{tool_name}_args", **fields)
    if key is not None:
        with _ARGS_MODELS_LOCK:
            _ARGS_MODELS[key] = model
            if len(_ARGS_MODELS) > ARGS_MODELS_KEPT:
                _ARGS_MODELS.popitem(last=False)
    return model


def _is_model(tp: Any) -> bool:
    return inspect.isclass(tp) and issubclass(tp, BaseModel)


_ARGS_HEADER = re.compile(r"^\s*(Args|Arguments|Parameters):\s*$")
_ARG_LINE = re.compile(r"^\s+(\w+)\s*(\([^)]*\))?\s*:\s*(.+)$")


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    summary = doc.split("\n\n", 1)[0].strip().replace("\n", " ")
    arg_docs: dict[str, str] = {}
    in_args = False
    for line in doc.splitlines():
        if _ARGS_HEADER.match(line):
            in_args = True
            continue
        if in_args:
            m = _ARG_LINE.match(line)
            if m:
                arg_docs[m.group(1)] = m.group(3).strip()
            elif line.strip() and not line.startswith(" "):
                in_args = False
    return summary, arg_docs


def encode_output(value: Any) -> str:
    """What goes over the wire for a tool's return value."""
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    if value is None:
        return ""
    return json.dumps(value, default=str, ensure_ascii=False)
