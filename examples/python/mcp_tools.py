"""The tools of an MCP server, run by the Forge server's guarded loop.

Start the Forge server first (`make run`), then: python examples/python/mcp_tools.py

This script is also the MCP server: it starts itself with `--serve-mcp` as a
stdio MCP server (written with the `mcp` package's MCPServer, three tools, one
of them destructive), connects to it, and registers its tools on a workflow
with `add_mcp_tools`. The MCP session is this script's: Forge never connects
to an MCP server, it asks this process for each call over the run's stream.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

from forge_client import (
    ApprovalRequested,
    Event,
    ForgeClient,
    ForgeError,
    MessageAppended,
    Role,
    RunOptions,
    ToolCallFinished,
    ToolCallStarted,
    Workflow,
    add_mcp_tools,
)

ORDERS = {"A1": "shipped", "B2": "packing", "C3": "delivered"}


def mcp_server() -> MCPServer:
    server = MCPServer("orders")
    # structured_output=False: plain text results (a `-> str` tool otherwise
    # also sends {"result": ...}, which add_mcp_tools would pass on as JSON).

    @server.tool(annotations=ToolAnnotations(read_only_hint=True), structured_output=False)
    def get_order_status(order_id: str) -> str:
        """Get the shipping status of an order, e.g. "A1"."""
        return f"order {order_id}: {ORDERS.get(order_id.upper(), 'unknown order')}"

    @server.tool(annotations=ToolAnnotations(destructive_hint=False), structured_output=False)
    def add_order_note(order_id: str, note: str) -> str:
        """Add a note to an order."""
        return f"note added to order {order_id}"

    # No annotations would mean the same (MCP's default): destructive.
    @server.tool(annotations=ToolAnnotations(destructive_hint=True), structured_output=False)
    def cancel_order(order_id: str) -> str:
        """Cancel an order. It cannot be undone."""
        ORDERS[order_id.upper()] = "cancelled"
        return f"order {order_id} cancelled"

    return server


def workflow() -> Workflow:
    wf = Workflow(
        "orders",
        "Look up the order the user asks about, then report its status.",
    )

    @wf.tool(terminal=True)
    def report_status(order_id: str, status: str) -> str:
        """Report an order's status to the user. Ends the task.

        Args:
            order_id: The order, e.g. "A1".
            status: Its status, as get_order_status returned it.
        """
        return f"Order {order_id}: {status}"

    return wf


def show(event: Event) -> None:
    if isinstance(event, ToolCallStarted):
        print(f"  -> {event.tool_name}({event.arguments})")
    elif isinstance(event, ToolCallFinished) and event.error:
        print(f"  !! {event.tool_name} failed: {event.error}")
    elif isinstance(event, MessageAppended) and event.message.transient:
        # A refused attempt, shown as what it was: the model's call or text
        # that a guardrail refused, then the correction Forge sent back.
        message = event.message
        for call in message.tool_calls:
            print(f"  !! refused call: {call.name}({call.arguments_json})")
        if message.content and message.role is Role.ASSISTANT:
            print(f"  !! refused answer: {message.content[:100]}")
        elif message.content:
            print(f"  !! correction: {message.content[:100]}")


def approve(request: ApprovalRequested) -> bool:
    print(f"  ?? {request.tool_name}({request.arguments}) is destructive: denied")
    return False


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--address", default="127.0.0.1:50051")
    parser.add_argument("--token", help="the server's bearer token (default: $FORGE_TOKEN)")
    parser.add_argument("--serve-mcp", action="store_true", help="be the stdio MCP server")
    parser.add_argument("question", nargs="?", default="What is the status of order A1?")
    args = parser.parse_args()
    if args.serve_mcp:
        await mcp_server().run_stdio_async()
        return
    server = StdioServerParameters(command=sys.executable, args=[__file__, "--serve-mcp"])
    async with (
        stdio_client(server) as (read, write),
        ClientSession(read, write) as session,
        ForgeClient(args.address, token=args.token) as client,
    ):
        await session.initialize()
        # Build the workflow for each run: a run then sees the server's
        # current tool list (after a notifications/tools/list_changed too).
        wf = workflow()
        tools = await add_mcp_tools(wf, session)
        wf.require("get_order_status")
        for t in tools:
            print(f"MCP tool {t.name}: destructive={t.destructive} read_only={t.read_only}")
        result = await client.run(
            wf,
            args.question,
            options=RunOptions(approve_destructive_calls=True),
            approve=approve,
            on_event=show,
        )
        print(result.value)
        print(f"({result.iterations} iterations, {result.usage.model_calls} model calls)")


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except ForgeError as exc:
        # A refusal (UNAUTHENTICATED, a bad workflow) or no server: one line.
        sys.exit(f"error: {exc}")
