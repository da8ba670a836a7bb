"""A 3-step workflow with a required step and a prerequisite, in constrained
mode, against the real llama-server + Gemma 3 270M.

The state-aware constraint only offers tools that can run now: at first only
lookup_user (get_orders needs it, report needs get_orders), so the base model
cannot take a step out of order.
"""

from __future__ import annotations

import pytest

from forge_client import Event, ForgeClient, MessageType, RunOptions, RunStarted, Workflow
from forge_server.app import ForgeServer
from tests.helpers import address

pytestmark = pytest.mark.e2e


def orders_workflow(log: list[str]) -> Workflow:
    wf = Workflow("orders", "Find the user, fetch their orders, then report a summary.")

    @wf.tool
    def lookup_user(name: str) -> str:
        """Find a user's id by name."""
        log.append("lookup_user")
        return "user_id=u42"

    @wf.tool(required=True, prerequisites=["lookup_user"])
    def get_orders(user_id: str) -> str:
        """List the orders of a user id."""
        log.append("get_orders")
        return "2 orders: a lamp, a desk"

    @wf.tool(terminal=True)
    def report(summary: str) -> str:
        """Report the summary to the user. Ends the task."""
        log.append("report")
        return summary

    return wf


async def test_three_step_workflow_with_prerequisite_completes(llama_forge: ForgeServer) -> None:
    log: list[str] = []
    events: list[Event] = []
    async with ForgeClient(address(llama_forge)) as client:
        result = await client.run(
            orders_workflow(log),
            "What did Alice order?",
            options=RunOptions(max_iterations=8),
            on_event=events.append,
        )
    started = next(e for e in events if isinstance(e, RunStarted))
    assert started.tool_call_mode == "constrained"
    assert result.terminal_tool == "report"
    # Order enforced by the constraint: the prerequisite first, then the
    # required step, and the terminal tool last.
    assert log[0] == "lookup_user"
    assert log.index("get_orders") > 0
    assert log[-1] == "report"
    # Nothing had to be corrected after the fact.
    nudges = [
        m
        for m in result.transcript
        if m.type in (MessageType.STEP_NUDGE, MessageType.PREREQUISITE_NUDGE)
    ]
    assert nudges == []
