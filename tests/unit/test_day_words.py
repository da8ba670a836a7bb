"""Days said relative to another ("the day before", "on the 23rd"), a date
read where its clause stands, and a unit a description says no to
(forge_core/guardrails/: relative_dates, dates, quantities).

Pure logic on a hand-made travel-money workflow: no model is needed.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from forge_core.guardrails import TurnFacts
from forge_core.guardrails.registry import preferred_values
from forge_core.guardrails.relative_dates import relative_dates
from forge_core.workflow import ToolSpec, Workflow

MONDAY = date(2026, 5, 18)


def test_a_bare_ordinal_is_the_next_such_day_and_the_day_before_is_read_from_it() -> None:
    said = "We fly out early on the 23rd so I'll collect it the day before."
    assert relative_dates(said, MONDAY) == [date(2026, 5, 23), date(2026, 5, 22)]
    # An ordinal of a floor or a gate is no day; "the day before" alone has
    # nothing to be before.
    assert relative_dates("We're on the 2nd floor.", MONDAY) == []
    assert relative_dates("Could you come the day before?", MONDAY) == []


def test_an_order_takes_the_users_amount_and_the_day_its_clause_says() -> None:
    order = ToolSpec(
        "place_currency_order",
        "Order foreign currency for collection. Ends the task.",
        {
            "type": "object",
            "properties": {
                "foreign_amount": {
                    "type": "number",
                    "description": "How much of the foreign currency (not pounds).",
                },
                "collection_date": {"type": "string", "format": "date"},
            },
        },
    )
    wf = Workflow(
        "wf", [order], terminal_tools=[order.name], system_prompt="Today is Monday 2026-05-18."
    )
    request = (
        "I'd like seven hundred and fifty euros. We fly out early on the 23rd "
        "so I'll collect it the day before."
    )
    preferred: dict[str, Any] = preferred_values(TurnFacts(wf, [request], [], [], [])).values
    # "(not pounds)" makes the amount no amount of pounds.
    assert preferred["place_currency_order.foreign_amount"] == [750]
    assert preferred["place_currency_order.collection_date"] == ["2026-05-22"]


def test_this_coming_weekend_is_the_one_ahead_now() -> None:
    from forge_core.guardrails.entry_filters import named_periods

    wednesday = date(2026, 6, 3)
    assert named_periods(["this coming weekend"], wednesday) == [
        (date(2026, 6, 6), date(2026, 6, 7))
    ]
    assert named_periods(["next weekend"], wednesday) == [(date(2026, 6, 13), date(2026, 6, 14))]


def test_a_day_derived_from_another_dates_something_else() -> None:
    book = ToolSpec(
        "book_grooming_visit",
        "Book a grooming visit. Ends the task.",
        {"type": "object", "properties": {"visit_date": {"type": "string", "format": "date"}}},
    )
    wf = Workflow(
        "wf", [book], terminal_tools=[book.name], system_prompt="Today is Monday 2026-10-05."
    )
    request = "Could the van come this Friday? Please text me a reminder the day before."
    preferred: dict[str, Any] = preferred_values(TurnFacts(wf, [request], [], [], [])).values
    assert preferred["book_grooming_visit.visit_date"] == ["2026-10-09"]


def test_a_reports_nested_date_is_the_one_its_key_is_said_with() -> None:
    get = ToolSpec(
        "get_tank_contract",
        "A contract",
        {"type": "object", "properties": {"contract_id": {"type": "string"}}},
    )
    reply = ToolSpec(
        "reply_tank_client",
        "Reply to the client. Ends the task.",
        {
            "type": "object",
            "properties": {
                "next_visit": {
                    "type": "object",
                    "properties": {"date": {"type": "string", "format": "date"}},
                }
            },
        },
    )
    wf = Workflow("wf", [get, reply], terminal_tools=[reply.name])
    result = "TC-9: reef tank. Last visit 2026-07-07. Next scheduled visit Tue 2026-07-21, morning."
    f = TurnFacts(
        wf,
        ["When's your next visit?"],
        [("get_tank_contract", result)],
        [],
        [("get_tank_contract", {})],
    )
    assert preferred_values(f).values["reply_tank_client.date"] == ["2026-07-21"]
