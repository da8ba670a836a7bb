"""Which record a request acts on, and which id shape is which parameter's
(forge_core/guardrails/: record_states, described_shapes, provenance,
times).

Pure logic on hand-made workflows (a pottery studio's class bookings, a
bicycle workshop's jobs and quotes, a sailing club): no model is needed to
say which values a parameter may take.
"""

from __future__ import annotations

from typing import Any

from forge_core.guardrails import TurnFacts
from forge_core.guardrails.described_shapes import described_prefixes, own_prefixes
from forge_core.guardrails.record_states import ended_states, live_records, waiting_on_user
from forge_core.guardrails.registry import preferred_values
from forge_core.guardrails.times import times_in
from forge_core.workflow import ToolSpec, Workflow

STR: dict[str, Any] = {"type": "string"}


def tool(tool_name: str, description: str, /, **props: dict[str, Any]) -> ToolSpec:
    return ToolSpec(
        tool_name, description, {"type": "object", "properties": props, "required": list(props)}
    )


def facts(
    tools: list[ToolSpec],
    request: str,
    results: list[tuple[str, str]],
    sent: list[tuple[str, dict[str, Any]]],
) -> TurnFacts:
    wf = Workflow("wf", tools, terminal_tools=[tools[-1].name])
    return TurnFacts(wf, [request], results, [], sent)


ENTRIES = {
    "PB-101": "PB-101: Wheel taster, Sat 2026-02-07, COMPLETED",
    "PB-205": "PB-205: Glazing evening, Thu 2026-07-16, CONFIRMED, paid 40.00 GBP",
    "PB-210": "PB-210: Raku day, Sun 2026-07-19, cancelled 2026-07-01",
}


def test_an_ended_record_is_left_out_unless_the_request_asks_for_it() -> None:
    values = list(ENTRIES)
    assert live_records(values, ENTRIES, ["Please move my class to Friday."]) == ["PB-205"]
    # "cancel" is no "cancelled": a request to cancel acts on a live record.
    assert live_records(values, ENTRIES, ["Cancel my class please."]) == ["PB-205"]
    # The request writes the state, or points to a past record.
    asked = live_records(values, ENTRIES, ["Can the cancelled raku day be rebooked?"])
    assert asked == ["PB-205", "PB-210"]
    assert live_records(values, ENTRIES, ["What did my last class cost?"]) == values
    # "last time" points to no record.
    assert live_records(values, ENTRIES, ["Same as last time, please."]) == ["PB-205"]
    # Where every record ended, none is left out.
    ended = {k: v for k, v in ENTRIES.items() if k != "PB-205"}
    assert live_records(list(ended), ended, ["Move my class."]) == list(ended)


def test_a_negated_state_ends_nothing() -> None:
    assert ended_states("JB-2: frame respray, not yet completed") == set()
    assert ended_states("QT-1: 90.00 GBP, SUPERSEDED 2026-04-06") == {"superseded"}
    assert ended_states("MB-9: membership no longer active") == {"no longer"}


def test_of_records_words_do_not_tell_apart_the_one_waiting_on_the_user() -> None:
    entries = {
        "BK-61": "BK-61: road bike service; READY since 2026-04-03",
        "BK-73": "BK-73: wheel rebuild; QUOTED, awaiting the customer's approval",
    }
    assert waiting_on_user(list(entries), entries) == ["BK-73"]
    both = {k: v + ", awaiting payment" for k, v in entries.items()}
    assert waiting_on_user(list(both), both) == list(both)


def test_a_lookup_and_an_approval_take_the_live_job_and_its_current_quote() -> None:
    jobs = tool("find_bike_jobs", "Repair jobs under an email, with job ids (BK-..)", email=STR)
    quotes = tool("get_bike_quotes", "A job's quotes, their state and price", job_id=STR)
    approve = tool("approve_bike_quote", "Approve a quote", job_id=STR, quote_id=STR)
    request = "Hi, jo@spokes.example here. Happy with the new price, go ahead like last time."
    listed = (
        "Customer CU-88, Jo Reed:\n- BK-50: commuter bike, serviced; COLLECTED 2025-11-20\n"
        "- BK-61: road bike service; READY since 2026-04-03\n"
        "- BK-73: wheel rebuild; QUOTED, awaiting the customer's approval"
    )
    found = facts(
        [jobs, quotes, approve],
        request,
        [("find_bike_jobs", listed)],
        [("find_bike_jobs", {"email": "jo@spokes.example"})],
    )
    assert preferred_values(found).values["get_bike_quotes.job_id"] == ["BK-73"]
    priced = facts(
        [jobs, quotes, approve],
        request,
        [
            ("find_bike_jobs", listed),
            (
                "get_bike_quotes",
                "BK-73:\n- QT-7-A: 90.00 GBP, SUPERSEDED 2026-04-06\n- QT-7-B: 120.00 GBP, CURRENT",
            ),
        ],
        [
            ("find_bike_jobs", {"email": "jo@spokes.example"}),
            ("get_bike_quotes", {"job_id": "BK-73"}),
        ],
    )
    assert preferred_values(priced).values["approve_bike_quote.quote_id"] == ["QT-7-B"]


def test_a_shape_in_a_description_is_its_nouns_ids_own() -> None:
    tools = [
        tool("find_sail_bookings", "Bookings under a phone number, with booking refs (SC-.....)"),
        tool(
            "list_dinghy_slots",
            "Every boat's slots on a date (YYYY-MM-DD), with slot ids (DS-....)",
        ),
        tool("find_sailor", "A member by email, with membership ids (MEM-....)"),
        tool("rent_wetsuit", "Rent a wetsuit by its size code (e.g. WS-M)"),
    ]
    nouns = described_prefixes(tools)
    assert own_prefixes("booking_ref", STR, nouns) == {"SC-"}
    assert own_prefixes("slot_id", STR, nouns) == {"DS-"}
    # A date's template is no id's shape; "membership" ids are a member's.
    assert own_prefixes("date", STR, nouns) == set()
    assert own_prefixes("member_id", STR, nouns) == {"MEM-"}
    assert own_prefixes("size_code", STR, nouns) == {"WS-"}
    # A parameter's own description speaks first.
    assert own_prefixes("slot_id", {"type": "string", "description": "Slot (XS_...)"}, nouns) == {
        "XS_"
    }


def test_two_unlabelled_listings_give_each_parameter_its_described_shape() -> None:
    bookings = tool(
        "find_sail_bookings",
        "Bookings under a phone number, with booking refs (RX-.....)",
        phone=STR,
    )
    slots = tool(
        "list_dinghy_slots", "Every boat's slots on a date, with slot ids (BX-.....)", date=STR
    )
    cancel = tool("cancel_sail_booking", "Cancel a booking", booking_ref=STR)
    move = tool("move_sail_booking", "Move a booking to another slot", booking_ref=STR, slot_id=STR)
    f = facts(
        [bookings, slots, cancel, move],
        "Hi, 07700 900123 here. We're booked on the Laser dinghy next weekend but the crew "
        "can't make it. Could you move us to this Friday at eight in the evening instead?",
        [
            (
                "find_sail_bookings",
                "Lead booker Ana Diaz:\n"
                "- RX-40927: Topper dinghy, Sat 2026-03-14 19:00, COMPLETED\n"
                "- RX-41388: Laser dinghy, Sat 2026-06-27 18:30, CONFIRMED, paid 96.00 GBP",
            ),
            (
                "list_dinghy_slots",
                "Fri 2026-06-19:\n- BX-90411: Laser dinghy, 16:00, free\n"
                "- BX-90418: Laser dinghy, 20:00, free\n- BX-90438: Topper dinghy, 20:00, free",
            ),
        ],
        [("find_sail_bookings", {"phone": "07700 900123"}), ("list_dinghy_slots", {"date": "x"})],
    )
    preferred = preferred_values(f).values
    # Without the shapes the 20:00 Laser slot, which the request describes
    # best, was the booking's ref too.
    assert preferred["move_sail_booking.booking_ref"] == ["RX-41388"]
    assert preferred["move_sail_booking.slot_id"] == ["BX-90418"]


def test_an_hour_with_its_part_of_the_day_is_a_clock_time() -> None:
    assert times_in("I'd like to be on the water at seven in the morning.") == [(7, 0)]
    assert times_in("Could it be ready by six in the evening?") == [(18, 0)]
    # A number of people is no hour.
    assert times_in("A table for 6 in the evening, please.") == []


def test_a_write_takes_the_users_gist_over_what_the_record_says_now() -> None:
    job = tool("get_clock_job", "A repair job", job_number=STR)
    add = tool(
        "add_clock_work",
        "Add work to a job",
        job_id=STR,
        return_method={"type": "string", "enum": ["collect_in_workshop", "tracked_courier"]},
    )
    request = (
        "Job KW-22: please go ahead. And rather than me collecting it, could you courier it back?"
    )
    f = facts(
        [job, add],
        request,
        [("get_clock_job", "Job KW-22, job job_2Fk8. Return: collect in the workshop.")],
        [("get_clock_job", {"job_number": "KW-22"})],
    )
    assert preferred_values(f).values["add_clock_work.return_method"] == ["tracked_courier"]


def test_the_id_a_lookup_took_is_carried_over_others_of_its_described_shape() -> None:
    jobs = tool("find_bike_jobs", "Repair jobs under an email, with job ids (BK-..)", email=STR)
    quotes = tool("get_bike_quotes", "A job's quotes", job_id=STR)
    approve = tool("approve_bike_quote", "Approve a quote", job_id=STR, quote_id=STR)
    listed = "- BK-61: road bike service; READY\n- BK-73: wheel rebuild; QUOTED"
    f = facts(
        [jobs, quotes, approve],
        "Hi, jo@spokes.example here. Happy with the new price, go ahead.",
        [("find_bike_jobs", listed), ("get_bike_quotes", "BK-73:\n- QT-7-B: 120.00 GBP")],
        [
            ("find_bike_jobs", {"email": "jo@spokes.example"}),
            ("get_bike_quotes", {"job_id": "BK-73"}),
        ],
    )
    assert preferred_values(f).values["approve_bike_quote.job_id"] == ["BK-73"]


SESSIONS = (
    "Student Olu Ade. Enrolment 'Beginners Pottery', four Thursday evenings: "
    "ses_A1 Thu 2026-11-05 (attended), ses_A2 Thu 2026-11-12, ses_A3 Thu 2026-11-19. "
    "Enrolment 'Raku taster': ses_B5 Sat 2026-11-14 10:00-12:00."
)


def test_a_cancellation_takes_the_day_said_and_keeps_what_still_stands() -> None:
    find = tool("find_pottery_enrolments", "Enrolments by email", email=STR)
    cancel = tool(
        "cancel_pottery_session",
        "Cancel one session",
        session_id=STR,
        compensation={"type": "string", "enum": ["refund", "makeup_credit"]},
    )
    wf = Workflow(
        "wf",
        [find, cancel],
        terminal_tools=[cancel.name],
        system_prompt="Today is Monday 2026-11-09.",
    )
    request = (
        "I'm away for work, so please cancel just this Thursday's pottery class. The raku "
        "taster on Saturday still stands. Could I have a make-up credit rather than a refund?"
    )
    f = TurnFacts(
        wf,
        [request],
        [("find_pottery_enrolments", SESSIONS)],
        [],
        [("find_pottery_enrolments", {"email": "olu@kiln.example"})],
    )
    preferred = preferred_values(f).values
    assert preferred["cancel_pottery_session.session_id"] == ["ses_A2"]
    # "rather than a refund" refuses the refund; "make-up credit" names the credit by its gist.
    assert preferred["cancel_pottery_session.compensation"] == ["makeup_credit"]
