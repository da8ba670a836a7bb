"""Tools from an MCP server: the tools of a connected `mcp.ClientSession`
registered on a Workflow, their annotations honoured.

The caller owns the MCP session (starts the server, connects, closes it);
Forge never connects to an MCP server itself: the tools run here, in the
SDK, like any other tool. Needs the `mcp` package (`pip install
'forge-sidecar[mcp]'`).

>>> async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
...     await session.initialize()
...     wf = Workflow("orders", "Answer questions about orders.", respond_tool=True)
...     await add_mcp_tools(wf, session, exclude=["purge_cache"])
...     result = await client.run(wf, "Where is order A1?")

The tool list is read when `add_mcp_tools` is called: build the workflow
(and call it) for each run, so that a run started after the server's
`notifications/tools/list_changed` sees the new list.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from forge_client.errors import McpServerError, McpToolError, ToolUnreachableError
from forge_client.workflow import Workflow

if TYPE_CHECKING:
    import mcp_types
    from mcp import ClientSession

__all__ = ["McpTool", "add_mcp_tools", "mcp_tool_result"]

# What the server accepts as a tool name (proto/forge/v1/workflow.proto).
_TOOL_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,63}$")
# Pages of tools/list followed at most; a server whose cursors never end is an error.
_MAX_PAGES = 1000


@dataclass(frozen=True)
class McpTool:
    """One MCP tool as it was registered: its Forge name, the MCP name it calls
    and the annotations (after MCP's defaults and the caller's overrides)."""

    name: str
    mcp_name: str
    destructive: bool
    read_only: bool
    idempotent: bool


async def add_mcp_tools(
    workflow: Workflow,
    session: ClientSession,
    *,
    include: Collection[str] | None = None,
    exclude: Collection[str] = (),
    prefix: str = "",
    destructive: Mapping[str, bool] | None = None,
    read_only: Mapping[str, bool] | None = None,
    idempotent: Mapping[str, bool] | None = None,
    timeout_s: float = 60.0,
) -> list[McpTool]:
    """Register the tools of a connected, initialized MCP `session` on `workflow`.

    Lists the tools (`tools/list`, every page) and registers each as a schema
    tool: its `inputSchema` is the schema, its description the description.
    Calling it does `tools/call` on `session`.

    - `include` / `exclude`: MCP tool names to keep / leave out (`include`
      naming a tool the server does not have is an error).
    - `prefix`: put before each Forge tool name (two servers, one workflow).
    - `destructive`, `read_only`, `idempotent`: per MCP tool name, override
      the annotations. Otherwise MCP's defaults apply: a tool is destructive
      unless its `readOnlyHint` is true or its `destructiveHint` is false;
      it is neither read-only nor idempotent unless its hints say so.
    - `timeout_s`: for listing and for each call.

    A call that times out or loses its connection raises ToolUnreachableError
    naming the cause: the server makes it once more when the tool is
    read-only or idempotent, and otherwise tells the model that its effect is
    unknown; the run goes on. `isError` results are tool errors; image, audio
    and resource content is named in the result.

    Raises McpServerError when the tools cannot be listed (the server is
    gone, not initialized or does not answer in `timeout_s`) and ValueError
    for a name Forge cannot use or a clash with a tool already registered.
    Returns the registered tools.
    """
    if isinstance(include, str) or isinstance(exclude, str):
        # A lone name would be read as its letters.
        raise TypeError("include= and exclude= take a list of MCP tool names, not one string")
    listed = await _list_tools(session, timeout_s)
    by_name = {t.name: t for t in listed}
    overrides = {
        "destructive": dict(destructive or {}),
        "read_only": dict(read_only or {}),
        "idempotent": dict(idempotent or {}),
    }
    _require_known(by_name, [*(include or ()), *(n for o in overrides.values() for n in o)])
    registered: list[McpTool] = []
    for tool in listed:
        if include is not None and tool.name not in include:
            continue
        if tool.name in exclude:
            continue
        name = prefix + tool.name
        if not _TOOL_NAME.match(name):
            raise ValueError(
                f"MCP tool {tool.name!r} cannot be a Forge tool named {name!r} "
                f"(names match {_TOOL_NAME.pattern}); leave it out with exclude="
            )
        spec = _annotations(
            tool, name, {h: o[tool.name] for h, o in overrides.items() if tool.name in o}
        )
        _register(workflow, session, tool, spec, timeout_s)
        registered.append(spec)
    return registered


def _require_known(by_name: Mapping[str, mcp_types.Tool], named: list[str]) -> None:
    """ValueError naming the tools in `named` (include= and the overrides)
    that the MCP server does not have."""
    missing = [n for n in named if n not in by_name]
    if missing:
        raise ValueError(
            f"the MCP server has no tool named {', '.join(sorted(set(missing)))} "
            f"(it has: {', '.join(sorted(by_name)) or 'none'})"
        )


def _register(
    workflow: Workflow,
    session: ClientSession,
    tool: mcp_types.Tool,
    spec: McpTool,
    timeout_s: float,
) -> None:
    description = (
        tool.description
        or tool.title
        or (tool.annotations.title if tool.annotations else None)
        or tool.name
    )
    # The decision is explicit (annotations, MCP's defaults or the
    # override): the server does not infer one from the tool's name.
    schema = {**tool.input_schema, "x-forge-destructive": spec.destructive}
    workflow.add_schema_tool(
        spec.name,
        description,
        schema,
        _caller(session, spec, timeout_s),
        destructive=spec.destructive,
        read_only=spec.read_only,
        idempotent=spec.idempotent,
    )


def _annotations(tool: mcp_types.Tool, name: str, override: Mapping[str, bool]) -> McpTool:
    hints = tool.annotations
    # MCP's defaults: readOnlyHint false, destructiveHint true, idempotentHint
    # false; destructive and idempotent mean something only when not read-only.
    read_only = override.get("read_only", bool(hints and hints.read_only_hint))
    idempotent = override.get("idempotent", read_only or bool(hints and hints.idempotent_hint))
    destructive = override.get(
        "destructive",
        not read_only
        and (hints is None or hints.destructive_hint is None or hints.destructive_hint),
    )
    return McpTool(name, tool.name, destructive, read_only, idempotent)


async def _list_tools(session: ClientSession, timeout_s: float) -> list[mcp_types.Tool]:
    import anyio
    import mcp_types

    tools: list[mcp_types.Tool] = []
    cursor: str | None = None
    try:
        with anyio.fail_after(timeout_s):
            for _ in range(_MAX_PAGES):
                params = None if cursor is None else mcp_types.PaginatedRequestParams(cursor=cursor)
                page = await session.list_tools(params=params)
                tools.extend(page.tools)
                cursor = page.next_cursor
                if not cursor:
                    return tools
    except TimeoutError:
        raise McpServerError(
            f"the MCP server did not list its tools within {timeout_s:g}s"
        ) from None
    except Exception as exc:
        raise McpServerError(f"the MCP server's tools could not be listed: {_cause(exc)}") from exc
    raise McpServerError(f"the MCP server's tool list did not end after {_MAX_PAGES} pages")


def _caller(
    session: ClientSession, spec: McpTool, timeout_s: float
) -> Callable[[dict[str, Any]], Awaitable[str]]:
    async def call(arguments: dict[str, Any]) -> str:
        import mcp_types

        try:
            result = await session.call_tool(
                spec.mcp_name, arguments, read_timeout_seconds=timeout_s
            )
        except Exception as exc:
            code = getattr(exc, "code", None)
            # Its effect unknown: the server decides whether to try again.
            if code == mcp_types.REQUEST_TIMEOUT:
                raise ToolUnreachableError(
                    f"MCP tool {spec.mcp_name!r} timed out after {timeout_s:g}s"
                ) from exc
            if code == mcp_types.CONNECTION_CLOSED or _is_transport_error(exc):
                raise ToolUnreachableError(
                    f"MCP tool {spec.mcp_name!r} lost its connection: {_cause(exc)}"
                ) from exc
            raise McpToolError(f"MCP tool {spec.mcp_name!r} failed: {_cause(exc)}") from exc
        output = mcp_tool_result(result)
        if result.is_error:
            raise McpToolError(output or f"MCP tool {spec.mcp_name!r} reported an error")
        return output

    return call


def _is_transport_error(exc: BaseException) -> bool:
    import anyio

    return isinstance(
        exc,
        anyio.ClosedResourceError
        | anyio.BrokenResourceError
        | anyio.EndOfStream
        | ConnectionError
        | EOFError,
    )


def _cause(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__


def mcp_tool_result(result: mcp_types.CallToolResult) -> str:
    """The text the model sees for a `tools/call` result.

    Structured content, when present, as JSON (its text blocks are the same
    value serialized, per MCP); else the text blocks, joined by newlines.
    Content the model cannot read (images, audio, binary resources, resource
    links) is named, never dropped."""
    parts: list[str] = []
    structured = result.structured_content is not None
    if structured:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    for block in result.content:
        if block.type == "text":
            if not structured:
                parts.append(block.text)
        elif block.type in ("image", "audio"):
            parts.append(
                f"[{block.type} content: {block.mime_type}, {len(block.data)} bytes base64]"
            )
        elif block.type == "resource_link":
            parts.append(f"[resource link: {block.uri}{_about(block.name, block.mime_type)}]")
        elif block.type == "resource":
            res = block.resource
            if hasattr(res, "text"):
                parts.append(f"[resource {res.uri}{_about(None, res.mime_type)}]\n{res.text}")
            else:
                parts.append(
                    f"[resource content: {res.uri}{_about(None, res.mime_type)}, "
                    f"{len(res.blob)} bytes base64]"
                )
        else:  # a content type newer than this SDK
            parts.append(f"[{block.type} content]")
    return "\n".join(parts)


def _about(name: str | None, mime_type: str | None) -> str:
    details = [d for d in (name, mime_type) if d]
    return f" ({', '.join(details)})" if details else ""
