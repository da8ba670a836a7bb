"""Tools from a real stdio MCP server (tests/mcp_server.py) run by Forge with
the real llama-server and the bundled 270M model (issue 21)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest

from forge_client import Event, ForgeClient, ToolCallFinished, Workflow, add_mcp_tools
from forge_server.app import ForgeServer
from tests.helpers import address
from tests.mcp_server import mcp_session

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parents[2]


async def test_a_workflow_of_mcp_tools_completes_with_the_bundled_model(
    llama_forge: ForgeServer,
) -> None:
    wf = Workflow("order_lookup", "Look up the order the user asks about, then report it.")
    reported: list[str] = []

    @wf.tool(terminal=True)
    def report_order(order_id: str, summary: str) -> str:
        """Report the order to the user. Ends the task.

        Args:
            order_id: The order, e.g. "A1".
            summary: What lookup_order returned.
        """
        reported.append(order_id)
        return f"{order_id}: {summary}"

    events: list[Event] = []
    async with mcp_session() as session, ForgeClient(address(llama_forge)) as client:
        await add_mcp_tools(wf, session, include=["lookup_order"])
        wf.require("lookup_order")
        result = await client.run(wf, "Where is order A1?", on_event=events.append)
    assert result.terminal_tool == "report_order"
    assert reported
    looked_up = [
        e for e in events if isinstance(e, ToolCallFinished) and e.tool_name == "lookup_order"
    ]
    # The MCP server ran the call and its answer went back to the model.
    assert any(e.error is None and e.output.startswith("order ") for e in looked_up)


async def test_python_mcp_example_runs_against_the_server(llama_forge: ForgeServer) -> None:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(ROOT / "examples/python/mcp_tools.py"),
        "--address", address(llama_forge),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(proc.communicate(), 240)
    assert proc.returncode == 0, err.decode()
    assert "MCP tool cancel_order: destructive=True" in out.decode()
    assert "Order " in out.decode()
