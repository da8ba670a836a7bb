"""MCP servers as tool sources (issue 21) in the Python SDK: add_mcp_tools
against a real MCP server over stdio (tests/mcp_server.py, written with the
`mcp` package) and the real Forge server on loopback; the model is a
ScriptedBackend.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

import mcp_types
import pytest
from mcp import ClientSession
from mcp.shared.exceptions import MCPError

from forge_client import (
    ApprovalRequested,
    Event,
    ForgeClient,
    McpServerError,
    Role,
    RunOptions,
    RunResult,
    ToolCallFinished,
    Workflow,
    add_mcp_tools,
)
from forge_core.backends.scripted import ScriptedBackend, Turn, call
from tests.helpers import address, running_server
from tests.mcp_server import TOOLS, mcp_session

ALL_TOOLS = [t.name for t in TOOLS]


def orders_workflow() -> Workflow:
    return Workflow("orders", "Answer questions about orders.", respond_tool=True)


async def run_script(
    wf: Workflow,
    script: list[Turn],
    user_message: str = "Look into order A1.",
    **kwargs: Any,
) -> tuple[RunResult, dict[str, ToolCallFinished], list[Event]]:
    backend = ScriptedBackend(scripts={wf.name: [*script, call("respond", message="done")]})
    events: list[Event] = []
    async with running_server(backend) as server, ForgeClient(address(server)) as client:
        result = await client.run(wf, user_message, on_event=events.append, **kwargs)
    finished = {e.tool_name: e for e in events if isinstance(e, ToolCallFinished)}
    return result, finished, events


async def test_every_page_of_tools_becomes_a_schema_tool_with_its_annotations() -> None:
    async with mcp_session(page_size=3) as session:
        first = await session.list_tools()
        assert len(first.tools) == 3 and first.next_cursor, "the server did not paginate"
        wf = orders_workflow()
        registered = await add_mcp_tools(wf, session)
    assert [t.name for t in registered] == ALL_TOOLS
    specs = {t.name: t for t in wf.to_proto().tools}
    assert list(specs) == ALL_TOOLS
    add_note = next(t for t in TOOLS if t.name == "add_note")
    # The MCP schema as written, marked with its explicit destructive decision.
    assert json.loads(specs["add_note"].parameters_json_schema) == {
        **add_note.input_schema,
        "x-forge-destructive": False,
    }
    assert specs["add_note"].description == "Add a note to an order."
    # destructiveHint true, and no annotations at all (MCP's defaults), are
    # destructive; read-only and destructiveHint false are not.
    assert {n for n, t in specs.items() if t.destructive} == {"cancel_order", "purge_cache"}
    hints = {t.name: (t.read_only, t.idempotent) for t in registered}
    assert hints["lookup_order"] == (True, True)
    assert hints["set_priority"] == (False, True)
    assert hints["add_note"] == (False, False)
    # ...and reach the server, which retries only these after a lost answer.
    assert {n: (t.read_only, t.idempotent) for n, t in specs.items()} == hints


async def test_text_structured_content_other_content_and_is_error_reach_the_model() -> None:
    async with mcp_session() as session:
        wf = orders_workflow()
        await add_mcp_tools(wf, session)
        result, finished, _ = await run_script(
            wf,
            [
                call("lookup_order", order_id="A1"),
                call("order_status", order_id="A1"),
                call("snapshot", order_id="A1"),
                call("refund", order_id="A1"),
            ],
        )
    assert result.terminal_tool == "respond"
    assert finished["lookup_order"].output == "order A1: 2 items, shipped"
    assert finished["lookup_order"].error is None
    assert json.loads(finished["order_status"].output) == {
        "order_id": "A1",
        "status": "shipped",
        "items": 2,
    }
    snapshot = finished["snapshot"].output.splitlines()
    assert snapshot == [
        "order A1 page",
        "[image content: image/png, 136 bytes base64]",
        "[audio content: audio/wav, 8 bytes base64]",
        "[resource link: file:///orders/receipt.pdf (receipt, application/pdf)]",
        "[resource file:///orders/notes.txt (text/plain)]",
        "customer asked for gift wrap",
        "[resource content: file:///orders/label.bin (application/octet-stream), 4 bytes base64]",
    ]
    assert finished["refund"].error == "payment system unavailable"
    assert any("payment system unavailable" in m.content for m in result.transcript), (
        "the model never saw the isError result"
    )


async def test_include_exclude_and_prefix_register_two_servers_side_by_side() -> None:
    async with mcp_session() as shop, mcp_session() as crm:
        wf = orders_workflow()
        a = await add_mcp_tools(wf, shop, include=["lookup_order", "refund"], prefix="shop_")
        b = await add_mcp_tools(wf, crm, exclude=ALL_TOOLS[1:], prefix="crm.")
        with pytest.raises(
            ValueError, match=re.escape("already has a tool named 'crm.lookup_order'")
        ):
            await add_mcp_tools(wf, crm, include=["lookup_order"], prefix="crm.")
        with pytest.raises(ValueError, match="no tool named nope"):
            await add_mcp_tools(orders_workflow(), crm, include=["nope"])
        with pytest.raises(TypeError, match="a list of MCP tool names"):
            await add_mcp_tools(orders_workflow(), crm, include="lookup_order")
        with pytest.raises(ValueError, match="cannot be a Forge tool named"):
            await add_mcp_tools(orders_workflow(), crm, prefix="9/")
        result, finished, _ = await run_script(
            wf, [call("shop_lookup_order", order_id="B2"), call("crm.lookup_order", order_id="C3")]
        )
    assert [t.name for t in a] == ["shop_lookup_order", "shop_refund"]
    assert [(t.name, t.mcp_name) for t in b] == [("crm.lookup_order", "lookup_order")]
    assert list(wf.tools) == ["shop_lookup_order", "shop_refund", "crm.lookup_order"]
    assert result.terminal_tool == "respond"
    assert finished["shop_lookup_order"].output == "order B2: 2 items, shipped"
    assert finished["crm.lookup_order"].output == "order C3: 2 items, shipped"


async def test_destructive_tools_ask_for_approval_unless_overridden() -> None:
    asked: list[str] = []

    def approve(request: ApprovalRequested) -> bool:
        asked.append(request.tool_name)
        return True

    script = [call("cancel_order", order_id="A1")]
    async with mcp_session() as session:
        wf = orders_workflow()
        await add_mcp_tools(wf, session)
        _, finished, events = await run_script(
            wf,
            script,
            "Cancel order A1.",
            options=RunOptions(approve_destructive_calls=True),
            approve=approve,
        )
        assert asked == ["cancel_order"]
        assert finished["cancel_order"].output == "order A1 cancelled"

        relaxed = orders_workflow()
        await add_mcp_tools(relaxed, session, destructive={"cancel_order": False})
        _, finished, events = await run_script(
            relaxed,
            script,
            "Cancel order A1.",
            options=RunOptions(approve_destructive_calls=True),
            approve=approve,
        )
    assert asked == ["cancel_order"], "the override did not reach the workflow"
    assert not [e for e in events if isinstance(e, ApprovalRequested)]
    assert finished["cancel_order"].output == "order A1 cancelled"


async def test_a_timed_out_call_is_a_tool_error_and_the_run_goes_on() -> None:
    async with mcp_session() as session:
        wf = orders_workflow()
        await add_mcp_tools(wf, session, timeout_s=0.5)
        result, finished, events = await run_script(
            wf, [call("slow_report", seconds=5), call("lookup_order", order_id="A1")]
        )
    assert finished["slow_report"].error == "MCP tool 'slow_report' timed out after 0.5s"
    # Read-only: the server made the call once more before the model saw it.
    slow = [
        e.call_id
        for e in events
        if isinstance(e, ToolCallFinished) and e.tool_name == "slow_report"
    ]
    assert len(slow) == 2 and slow[1] == slow[0] + ".retry", slow
    assert any("'slow_report' was tried twice" in m.content for m in result.transcript)
    assert finished["lookup_order"].output == "order A1: 2 items, shipped"
    assert result.terminal_tool == "respond"


async def test_a_closed_server_is_an_error_before_the_run_and_a_tool_error_in_it() -> None:
    async with mcp_session() as session:
        wf = orders_workflow()
        await add_mcp_tools(wf, session)
        with pytest.raises(MCPError):
            await session.call_tool("_exit", {})  # the server process exits
        with pytest.raises(McpServerError, match="could not be listed: Connection closed"):
            await add_mcp_tools(orders_workflow(), session)
        # Tools registered before the server died fail for the model; the
        # run itself goes on.
        result, finished, _ = await run_script(
            wf, [call("lookup_order", order_id="A1"), call("add_note", order_id="A1", note="x")]
        )
    assert result.terminal_tool == "respond"
    assert finished["lookup_order"].error == (
        "MCP tool 'lookup_order' lost its connection: Connection closed"
    )
    assert finished["add_note"].error == (
        "MCP tool 'add_note' lost its connection: Connection closed"
    )
    # What the model read: the read-only lookup was tried twice, the note
    # (neither read-only nor idempotent) once, its effect unknown.
    tool_results = {m.tool_name: m.content for m in result.transcript if m.role == Role.TOOL}
    assert "'lookup_order' was tried twice" in tool_results["lookup_order"]
    assert "'add_note' was tried once" in tool_results["add_note"]
    assert "whether it took effect is unknown" in tool_results["add_note"]


class FlakySession(ClientSession):
    """A real session whose first tools/call per tool fails as a lost
    connection would, before anything is sent."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.attempts: Counter[str] = Counter()

    async def call_tool(self, name: str, *args: Any, **kwargs: Any) -> Any:
        self.attempts[name] += 1
        if self.attempts[name] == 1:
            raise MCPError(mcp_types.CONNECTION_CLOSED, "Connection closed")
        return await super().call_tool(name, *args, **kwargs)


async def test_only_read_only_and_idempotent_tools_are_retried_after_a_transport_error() -> None:
    async with mcp_session(session_class=FlakySession) as session:
        wf = orders_workflow()
        await add_mcp_tools(wf, session)
        _, finished, events = await run_script(
            wf,
            [
                call("lookup_order", order_id="A1"),
                call("set_priority", order_id="A1", level=2),
                call("add_note", order_id="A1", note="fragile"),
            ],
        )
        assert isinstance(session, FlakySession)
        attempts = session.attempts
    assert attempts == Counter(lookup_order=2, set_priority=2, add_note=1)
    # The second try was the server's: a call of its own, under a new id.
    calls = Counter(e.tool_name for e in events if isinstance(e, ToolCallFinished))
    assert calls == Counter(lookup_order=2, set_priority=2, add_note=1)
    assert finished["lookup_order"].output == "order A1: 2 items, shipped"
    assert finished["set_priority"].output == "A1 priority 2"
    assert finished["add_note"].error == (
        "MCP tool 'add_note' lost its connection: Connection closed"
    )


async def test_a_run_started_after_tools_list_changed_sees_the_new_list() -> None:
    notified: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, mcp_types.ServerNotification) or hasattr(message, "method"):
            notified.append(str(getattr(message, "method", message)))

    async with mcp_session(message_handler=on_message) as session:
        before = orders_workflow()
        await add_mcp_tools(before, session)
        assert "search_archive" not in before.tools
        await run_script(before, [call("unlock_archive")])

        after = orders_workflow()
        await add_mcp_tools(after, session)
        _, finished, _ = await run_script(after, [call("search_archive", query="A1")])
    assert "search_archive" in after.tools
    assert finished["search_archive"].output == "1 archived order matches 'A1'"
    assert notified == ["notifications/tools/list_changed"]


async def test_read_only_and_idempotent_hints_are_overridden_per_tool() -> None:
    async with mcp_session() as session:
        wf = orders_workflow()
        registered = await add_mcp_tools(
            wf,
            session,
            include=["lookup_order", "add_note", "set_priority"],
            read_only={"add_note": True},
            idempotent={"lookup_order": False, "set_priority": False},
        )
        with pytest.raises(ValueError, match="no tool named nope"):
            await add_mcp_tools(orders_workflow(), session, idempotent={"nope": True})
    hints = {t.name: (t.read_only, t.idempotent) for t in registered}
    assert hints == {
        "lookup_order": (True, False),
        "add_note": (True, True),
        "set_priority": (False, False),
    }
    specs = {t.name: (t.read_only, t.idempotent) for t in wf.to_proto().tools}
    assert specs == hints
