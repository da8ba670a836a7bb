"""A small MCP server over stdio for the SDK's MCP tests, written with the
`mcp` package's low-level server (it lets the tool list be paginated).

Run as `python -m tests.mcp_server [--page-size N]`. Its tools cover what
forge_client.mcp maps: annotations (read-only, destructive, idempotent, none),
structured results, `isError`, non-text content, a slow tool for timeouts and
a tool that adds another one (tools/list_changed).
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.session import MessageHandlerFnT
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

ROOT = Path(__file__).resolve().parent.parent

ORDER = {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}
READ_ONLY = types.ToolAnnotations(read_only_hint=True)

TOOLS: list[types.Tool] = [
    types.Tool(
        name="lookup_order",
        description="Look up an order by its id.",
        input_schema=ORDER,
        annotations=READ_ONLY,
    ),
    types.Tool(
        name="order_status",
        description="The status of an order, as structured data.",
        input_schema=ORDER,
        output_schema={"type": "object"},
        annotations=READ_ONLY,
    ),
    types.Tool(
        name="cancel_order",
        description="Cancel an order for good.",
        input_schema=ORDER,
        annotations=types.ToolAnnotations(destructive_hint=True),
    ),
    types.Tool(
        name="add_note",
        description="Add a note to an order.",
        input_schema={
            "type": "object",
            "properties": {"order_id": {"type": "string"}, "note": {"type": "string"}},
            "required": ["order_id", "note"],
        },
        annotations=types.ToolAnnotations(destructive_hint=False),
    ),
    types.Tool(
        name="set_priority",
        description="Set an order's priority.",
        input_schema={
            "type": "object",
            "properties": {"order_id": {"type": "string"}, "level": {"type": "integer"}},
            "required": ["order_id", "level"],
        },
        annotations=types.ToolAnnotations(destructive_hint=False, idempotent_hint=True),
    ),
    types.Tool(
        name="purge_cache",
        description="Purge the order cache (no annotations: MCP's defaults apply).",
        input_schema={"type": "object", "properties": {}},
    ),
    types.Tool(
        name="refund",
        description="Refund an order (always fails: the payment system is down).",
        input_schema=ORDER,
        annotations=types.ToolAnnotations(destructive_hint=False),
    ),
    types.Tool(
        name="slow_report",
        description="A report that takes `seconds` to build.",
        input_schema={
            "type": "object",
            "properties": {"seconds": {"type": "number"}},
            "required": ["seconds"],
        },
        annotations=READ_ONLY,
    ),
    types.Tool(
        name="snapshot",
        description="A snapshot of the order page: text, an image, audio and resources.",
        input_schema=ORDER,
        annotations=READ_ONLY,
    ),
    types.Tool(
        name="unlock_archive",
        description="Make the archive tool available.",
        input_schema={"type": "object", "properties": {}},
        annotations=types.ToolAnnotations(destructive_hint=False, idempotent_hint=True),
    ),
]

ARCHIVE = types.Tool(
    name="search_archive",
    description="Search archived orders.",
    input_schema={"type": "object", "properties": {"query": {"type": "string"}}},
    annotations=READ_ONLY,
)

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(92)).decode()


def text(value: str, *, error: bool = False) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=value)], is_error=error)


def build_server(page_size: int) -> Server[Any]:
    tools = list(TOOLS)

    async def list_tools(
        ctx: Any, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        start = int(params.cursor) if params is not None and params.cursor else 0
        end = start + page_size
        return types.ListToolsResult(
            tools=tools[start:end], next_cursor=str(end) if end < len(tools) else None
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        args = params.arguments or {}
        order = str(args.get("order_id", ""))
        match params.name:
            case "lookup_order":
                return text(f"order {order}: 2 items, shipped")
            case "order_status":
                status = {"order_id": order, "status": "shipped", "items": 2}
                return types.CallToolResult(
                    content=[types.TextContent(text=json.dumps(status))],
                    structured_content=status,
                )
            case "cancel_order":
                return text(f"order {order} cancelled")
            case "add_note":
                return text(f"note added to {order}")
            case "set_priority":
                return text(f"{order} priority {args.get('level')}")
            case "purge_cache":
                return text("cache purged")
            case "refund":
                return text("payment system unavailable", error=True)
            case "slow_report":
                await anyio.sleep(float(args.get("seconds", 0)))
                return text("report ready")
            case "snapshot":
                return types.CallToolResult(
                    content=[
                        types.TextContent(text=f"order {order} page"),
                        types.ImageContent(data=PNG, mime_type="image/png"),
                        types.AudioContent(data="UklGRg==", mime_type="audio/wav"),
                        types.ResourceLink(
                            uri="file:///orders/receipt.pdf",
                            name="receipt",
                            mime_type="application/pdf",
                        ),
                        types.EmbeddedResource(
                            resource=types.TextResourceContents(
                                uri="file:///orders/notes.txt",
                                mime_type="text/plain",
                                text="customer asked for gift wrap",
                            )
                        ),
                        types.EmbeddedResource(
                            resource=types.BlobResourceContents(
                                uri="file:///orders/label.bin",
                                mime_type="application/octet-stream",
                                blob="AAEC",
                            )
                        ),
                    ]
                )
            case "unlock_archive":
                if ARCHIVE not in tools:
                    tools.append(ARCHIVE)
                    await ctx.session.send_tool_list_changed()
                return text("archive unlocked")
            case "_exit":  # unlisted: the server dies (a lost connection)
                os._exit(3)
            case "search_archive" if ARCHIVE in tools:
                return text(f"1 archived order matches {args.get('query')!r}")
        return text(f"unknown tool {params.name!r}", error=True)

    return Server("forge-test-orders", on_list_tools=list_tools, on_call_tool=call_tool)


async def serve(page_size: int) -> None:
    server = build_server(page_size)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def server_parameters(page_size: int = 4) -> StdioServerParameters:
    """How a client starts this server (this interpreter, the repository root)."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "tests.mcp_server", "--page-size", str(page_size)],
        cwd=str(ROOT),
    )


@asynccontextmanager
async def mcp_session(
    page_size: int = 4,
    *,
    session_class: type[ClientSession] = ClientSession,
    message_handler: MessageHandlerFnT | None = None,
) -> AsyncIterator[ClientSession]:
    """This server started over stdio, with an initialized client session."""
    async with (
        stdio_client(server_parameters(page_size)) as (read, write),
        session_class(read, write, message_handler=message_handler) as session,
    ):
        await session.initialize()
        yield session


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--page-size", type=int, default=4)
    args = parser.parse_args()
    anyio.run(serve, args.page_size)


if __name__ == "__main__":
    main()
