"""The MCP server of a conformance case whose tools come from MCP (the case's
`mcp` key; see README "Tools from an MCP server"), over stdio.

Every SDK's runner starts it the same way, `python
tests/conformance/mcp_case_server.py <case.json>`, connects with its own
language's MCP client SDK and registers the tools with its MCP helper. The
server lists `mcp.tools` in pages of `mcp.page_size` and answers each
`tools/call` with the tool's next `behaviour` entry (the last repeats):

- `{"returns": "text"}`: one text block;
- `{"structured": {...}}`: structured content and its JSON as text;
- `{"is_error": "text"}`: a result with `isError: true`;
- `{"image": "image/png"}`: a text block "image follows" and a 4-byte image;
- `{"sleep_ms": N, ...}`: wait first (to outlast the runner's timeout).

Written with the `mcp` package's low-level server, which lets it paginate.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server


def tool_of(raw: dict[str, Any]) -> types.Tool:
    hints = raw.get("annotations")
    return types.Tool(
        name=raw["name"],
        description=raw.get("description"),
        input_schema=raw.get("inputSchema", {"type": "object", "properties": {}}),
        annotations=types.ToolAnnotations.model_validate(hints) if hints is not None else None,
    )


def result_of(step: dict[str, Any]) -> types.CallToolResult:
    if "structured" in step:
        value = step["structured"]
        return types.CallToolResult(
            content=[types.TextContent(text=json.dumps(value))], structured_content=value
        )
    if "is_error" in step:
        return types.CallToolResult(
            content=[types.TextContent(text=step["is_error"])], is_error=True
        )
    if "image" in step:
        return types.CallToolResult(
            content=[
                types.TextContent(text="image follows"),
                types.ImageContent(data="AAECAw==", mime_type=step["image"]),
            ]
        )
    return types.CallToolResult(content=[types.TextContent(text=str(step.get("returns", "")))])


def build_server(spec: dict[str, Any]) -> Server[Any]:
    tools = [tool_of(t) for t in spec["tools"]]
    behaviours = {t["name"]: t.get("behaviour", [{"returns": ""}]) for t in spec["tools"]}
    calls: dict[str, int] = {}
    page_size = int(spec.get("page_size", 100))

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        start = int(params.cursor) if params is not None and params.cursor else 0
        end = start + page_size
        return types.ListToolsResult(
            tools=tools[start:end], next_cursor=str(end) if end < len(tools) else None
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        steps = behaviours.get(params.name)
        if steps is None:
            return types.CallToolResult(
                content=[types.TextContent(text=f"unknown tool {params.name!r}")], is_error=True
            )
        index = calls.get(params.name, 0)
        calls[params.name] = index + 1
        step = steps[min(index, len(steps) - 1)]
        if "sleep_ms" in step:
            await anyio.sleep(step["sleep_ms"] / 1000)
        return result_of(step)

    return Server("forge-conformance", on_list_tools=list_tools, on_call_tool=call_tool)


async def serve(spec: dict[str, Any]) -> None:
    server = build_server(spec)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def main() -> None:
    if len(sys.argv) != 2:
        sys.exit("usage: mcp_case_server.py <case.json>")
    case = json.loads(Path(sys.argv[1]).read_text())
    anyio.run(serve, case["mcp"])


if __name__ == "__main__":
    main()
