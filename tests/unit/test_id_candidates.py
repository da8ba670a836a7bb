"""What is no id a lookup takes: a currency's code beside its amount, a
year written as one, a count joined to its noun, a clock time's minutes,
a number already sent as a phone, a result's postcode halves; and an id
with the prefix an error names (guardrails/quantities.py
`only_a_unit_or_year`, grounding.py, provenance.py, error_values.py).

Pure logic on hand-made workflows (a sauna hire, a sheep register, a book
appraiser): no model is needed to say which values a parameter may take.
"""

from __future__ import annotations

from typing import Any

from forge_core.guardrails import FailedValue, TurnFacts
from forge_core.guardrails.grounding import extract_candidates
from forge_core.guardrails.quantities import only_a_quantity, only_a_unit_or_year
from forge_core.guardrails.registry import preferred_values
from forge_core.workflow import ToolSpec, Workflow

STR: dict[str, Any] = {"type": "string"}


def tool(tool_name: str, description: str, /, **props: dict[str, Any]) -> ToolSpec:
    return ToolSpec(
        tool_name, description, {"type": "object", "properties": props, "required": list(props)}
    )


def test_a_currency_code_beside_its_amount_is_a_unit() -> None:
    texts = ["Hire: 3 days x 145.00 GBP = 435.00 GBP; deposit GBP 150 paid."]
    assert only_a_unit_or_year("GBP", texts)
    # Written once on its own, it may be a code the user means.
    assert not only_a_unit_or_year("GBP", [*texts, "pay in GBP please"])
    assert not only_a_unit_or_year("ABC", ["gate ABC is open"])


def test_a_year_written_as_one_is_no_id() -> None:
    assert only_a_unit_or_year("2026", ["lambs born March-April 2026", "open since 2026"])
    assert only_a_unit_or_year("2025", ["38 shearlings (2025-born gimmers)"])
    # A date's year is no candidate apart ("2026-06-18"), and does not count.
    assert only_a_unit_or_year("2026", ["round on 2026-06-18; lambs born in 2026"])
    assert not only_a_unit_or_year("2026", ["your account 2026 is open"])


def test_a_count_joined_to_its_noun_is_no_id() -> None:
    found = extract_candidates(["a 6-seat barrel sauna, booking KMS-bk-40218"])
    assert "6-seat" not in found and "KMS-bk-40218" in found


def test_the_minutes_of_a_clock_time_do_not_make_a_quantity_an_id() -> None:
    text = "window 08:30-10:00 (driver phones 30 minutes ahead)"
    assert only_a_quantity("30", [text])


SAUNA_TOOLS = [
    tool("find_sauna_hires", "Find hires by the customer's phone", phone=STR),
    tool("get_sauna_hire", "One hire's details", booking_id=STR),
    tool("reply_to_customer", "Reply", booking_id=STR, message=STR),
]
HIRES = (
    "- KMS-bk-40218: 'Fjell' 6-seat barrel sauna, Fri 2026-11-13, delivery to 3 Quarry Row, "
    "Hebden Bridge HX7 8AB\n- KMS-bk-37790: 'Fjell', 2026-02-20, completed"
)
DETAIL = (
    "KMS-bk-40218: CONFIRMED. Delivery window 08:30-10:00 (driver phones 30 minutes ahead). "
    "Total 495.00 GBP, deposit 150.00 GBP, balance 345.00 GBP."
)


def test_a_hire_looked_up_is_the_one_the_reply_names_not_a_unit_or_a_phone() -> None:
    wf = Workflow("wf", SAUNA_TOOLS, terminal_tools=["reply_to_customer"])
    f = TurnFacts(
        wf,
        ["Hiya, it's Megan on 07700 900815. When does the sauna come on Friday?"],
        [("find_sauna_hires", HIRES), ("get_sauna_hire", DETAIL)],
        [],
        [
            ("find_sauna_hires", {"phone": "07700 900815"}),
            ("get_sauna_hire", {"booking_id": "KMS-bk-40218"}),
        ],
    )
    assert preferred_values(f).values["reply_to_customer.booking_id"] == ["KMS-bk-40218"]


def test_an_error_that_names_the_ids_prefix_picks_the_described_id_with_it() -> None:
    find = tool("find_appraisal_items", "Items a client left for appraisal", client_surname=STR)
    record = tool("get_appraisal_record", "One item's appraisal", item_id=STR)
    reply = tool("reply_to_client", "Reply", item_id=STR, message=STR)
    wf = Workflow("wf", [find, record, reply], terminal_tools=["reply_to_client"])
    listing = (
        "Client CL-6620, Dr Rowan Prentice:\n"
        "- APR-26-1193-Lw: Darwin, On the Origin of Species, second edition, received 2026-04-20\n"
        "- APR-26-0871-Lt: Kelmscott Chaucer facsimile, appraised 2026-01-14, returned"
    )
    failed = FailedValue(
        "get_appraisal_record", {"item_id": "CL-6620"}, "404 item_not_found: 'CL-6620' (APR- id)"
    )
    f = TurnFacts(
        wf,
        ["This is Rowan Prentice. I left my Darwin with you. Is the appraisal finished?"],
        [("find_appraisal_items", listing)],
        [failed],
        [("find_appraisal_items", {"client_surname": "Prentice"})],
    )
    assert preferred_values(f).values["get_appraisal_record.item_id"] == ["APR-26-1193-Lw"]


def test_the_users_own_name_describes_no_item_a_lookup_lists() -> None:
    """ "Client CL-6620, Rowan Prentice" shares the user's name, but the item
    the request names is the Darwin: for a parameter that holds no person,
    the user's own name describes nothing."""
    find = tool("find_appraisal_items", "Items a client left for appraisal", client_surname=STR)
    record = tool("get_appraisal_record", "One item's appraisal", item_id=STR)
    wf = Workflow("wf", [find, record], terminal_tools=["get_appraisal_record"])
    listing = (
        "Client CL-6620, Dr Rowan Prentice:\n"
        "- APR-26-1193-Lw: Darwin, On the Origin of Species (John Murray, 1860)\n"
        "- APR-26-0871-Lt: Kelmscott Chaucer facsimile, returned"
    )
    f = TurnFacts(
        wf,
        ["Good morning, this is Rowan Prentice. I left my Darwin with you."],
        [("find_appraisal_items", listing)],
        [],
        [("find_appraisal_items", {"client_surname": "Prentice"})],
    )
    # Nor is the citation's year (1860) an item's id.
    assert preferred_values(f).values["get_appraisal_record.item_id"] == ["APR-26-1193-Lw"]


def test_the_one_email_the_conversation_writes_is_the_email() -> None:
    find = tool("find_member", "Find a member by e-mail", email=STR)
    wf = Workflow("wf", [find], terminal_tools=["find_member"])
    f = TurnFacts(wf, ["I'm d.okafor@example.net, away in June 2026."], [], [], [])
    assert preferred_values(f).values["find_member.email"] == ["d.okafor@example.net"]


def test_an_id_a_lookup_sent_as_the_same_parameter_is_carried_to_the_reply() -> None:
    """ "Client CL-6620" is labelled by a noun of reply_to_client's name,
    but the item the lookup opened is the reply's `item_id`."""
    find = tool("find_items", "Items a client left", client_surname=STR)
    record = tool("get_item_record", "One item's record", item_id=STR)
    reply = tool("reply_to_client", "Reply to the client", item_id=STR, message=STR)
    wf = Workflow("wf", [find, record, reply], terminal_tools=["reply_to_client"])
    f = TurnFacts(
        wf,
        ["This is Rowan Prentice. Is my Darwin ready?"],
        [
            ("find_items", "Client CL-6620:\n- APR-1193: Darwin\n- APR-0871: Chaucer"),
            ("get_item_record", "APR-1193: COMPLETE, fee 95.00 GBP outstanding"),
        ],
        [],
        [
            ("find_items", {"client_surname": "Prentice"}),
            ("get_item_record", {"item_id": "APR-1193"}),
        ],
    )
    assert preferred_values(f).values["reply_to_client.item_id"] == ["APR-1193"]


def test_a_reports_amount_is_the_one_its_name_labels() -> None:
    """Of the amounts a result writes, a report's `balance_due_gbp` takes
    the one in the clause that says "balance due"; `fee_outstanding_gbp`
    the one whose clause holds "fee" and "outstanding", wherever."""
    get = tool("get_hire", "One hire's details", booking_id=STR)
    num: dict[str, Any] = {"type": "number"}
    reply = tool("reply", "Reply", balance_due_gbp=num, fee_outstanding_gbp=num)
    wf = Workflow("wf", [get, reply], terminal_tools=["reply"])
    detail = (
        "Hire: 3 days x 145.00 GBP = 435.00 GBP; total 495.00 GBP. Deposit paid 150.00 GBP. "
        "Balance due 345.00 GBP by Fri 2026-11-06. Damage hold 200.00 GBP.\n"
        "Auction estimate: 3,800.00-4,500.00 GBP. Appraisal fee: 95.00 GBP, OUTSTANDING."
    )
    f = TurnFacts(wf, ["How much do I still owe?"], [("get_hire", detail)], [], [("get_hire", {})])
    got = preferred_values(f).values
    assert got["reply.balance_due_gbp"] == [345]
    assert got["reply.fee_outstanding_gbp"] == [95]


def test_the_last_group_of_a_grouped_number_is_no_number() -> None:
    from forge_core.guardrails.quantities import _families, quantities

    families, _ = _families("reserve_gbp", {"type": "number"})
    found = quantities("estimate 3,800.00-4,500.00 GBP", families, set(), integer=False)
    assert 500 not in found and 500.0 not in found


def test_a_time_the_tools_description_asks_for_and_no_time_in_a_span_of_dates() -> None:
    """`delivery_window_start is HH:MM` in the tool's description makes the
    parameter a clock time; "2026-02-20 to 2026-02-22" is no "20 to 20"."""
    from forge_core.guardrails.times import time_in_tool_text, times_in

    assert time_in_tool_text("delivery_window_start", "Reply. delivery_window_start is HH:MM.")
    assert not time_in_tool_text("delivery_window_start", "Reply. window is HH:MM.")
    assert times_in("2026-02-20 to 2026-02-22, completed") == []
    assert times_in("come at ten to five") == [(16, 50)]
    listing = tool("find_hires", "Hires by phone", phone=STR)
    reply = ToolSpec(
        "reply",
        "Message the customer. delivery_window_start is HH:MM. Ends the task.",
        {
            "type": "object",
            "properties": {"delivery_window_start": STR},
            "required": ["delivery_window_start"],
        },
    )
    wf = Workflow("wf", [listing, reply], terminal_tools=["reply"])
    result = "- KMS-1: Fri 2026-11-13, window 08:30-10:00\n- KMS-0: 2026-02-20 to 2026-02-22"
    f = TurnFacts(wf, ["What time does it come?"], [("find_hires", result)], [], [])
    assert preferred_values(f).values["reply.delivery_window_start"] == ["08:30"]


def test_a_deadline_is_an_end_time() -> None:
    from forge_core.guardrails.times import deadlines, times_in

    assert deadlines("Ringing must stop by 11:15: wedding at 12:00") == [(11, 15)]
    assert deadlines("pay by 2026-11-06") == []
    # A colon after a time ends it; seconds do not make a time of their own.
    assert times_in("11:15: wedding") == [(11, 15)] and times_in("at 11:15:30") == []
