"""A report's fields from what a result labels: a list under its noun
(listings.named_listing), options a tool's description gives after the
parameter's name and a colon (described_options), and the member a word
of the parameter's name labels (mentions). Invented tools only."""

from __future__ import annotations

from typing import Any

from forge_core.guardrails import TurnFacts
from forge_core.guardrails.described_options import described_options
from forge_core.guardrails.listings import named_listing
from forge_core.guardrails.registry import preferred_values
from forge_core.workflow import ToolSpec, Workflow

STR: dict[str, Any] = {"type": "string"}
LOOKUP = ToolSpec(
    "get_table_booking",
    "Get a table booking",
    {"type": "object", "properties": {"booking_id": STR}, "required": ["booking_id"]},
)
REPLY = ToolSpec(
    "reply_to_guest",
    "Reply to the guest. highchair_status: confirmed, pending or unavailable. Ends the task.",
    {
        "type": "object",
        "properties": {
            "tables": {"type": "array", "items": STR},
            "highchair_status": STR,
        },
        "required": ["tables", "highchair_status"],
    },
)
RESULT = (
    "TB-77: tables T4 and T5 by the window; 6 guests at 19:00. Highchair: PENDING "
    "(to be confirmed on the day). Deposit status: PAID."
)


def test_a_list_under_its_noun() -> None:
    assert named_listing("tables", [RESULT], set()) == ["T4", "T5"]
    assert named_listing("seat_numbers", ["seat numbers 12A, 12B and 12C."], set()) == [
        "12A",
        "12B",
        "12C",
    ]
    # Not a singular noun, nor a noun no ids follow.
    assert named_listing("table", [RESULT], set()) == []
    assert named_listing("guests", [RESULT], set()) == []


def test_options_after_the_name_and_a_colon() -> None:
    assert described_options("highchair_status", STR, REPLY.description) == [
        "confirmed",
        "pending",
        "unavailable",
    ]
    assert described_options("note", STR, "Note: a, b, c.") == []
    # Under the parameter's own name two options are a list; what a
    # parenthesis says of one is no option.
    approve = "Approve a quote. return_method: collect (from the workshop) or courier."
    assert described_options("return_method", STR, approve) == ["collect", "courier"]
    assert described_options("method", STR, "Pay. method: card or cash at the desk.") == []


def test_a_report_takes_the_result_s_list_and_the_member_its_label_names() -> None:
    wf = Workflow(name="wf", tools=[LOOKUP, REPLY], terminal_tools=["reply_to_guest"])
    facts = TurnFacts(
        workflow=wf,
        requests=["Which tables have we got for TB-77, and is the highchair confirmed?"],
        results=[("get_table_booking", RESULT)],
    )
    got = preferred_values(facts)
    assert got.items["reply_to_guest.tables"] == ["T4", "T5"]
    # The result writes "confirmed" too, but "Highchair:" labels PENDING.
    assert got.values["reply_to_guest.highchair_status"] == ["pending"]
