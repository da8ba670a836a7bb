"""Entries picked by comparison, by the party's size and the days said no
to; numbers and times a reply reports; counts said in words; a nested
object's date by its key (forge_core/guardrails/: comparatives,
entry_filters, quantities, times, dates, mentions, reply_messages,
provenance).

Pure logic on hand-made workflows (a canoe hire, a ghost-walk company, a
pottery open day): no model is needed to say which values a parameter may
take.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from forge_core.guardrails import TurnFacts
from forge_core.guardrails.comparatives import compared
from forge_core.guardrails.entries import described
from forge_core.guardrails.entry_filters import ListReading
from forge_core.guardrails.quantities import party_size, plain_counts
from forge_core.guardrails.registry import preferred_values
from forge_core.guardrails.reply_messages import answering_parts
from forge_core.workflow import ToolSpec, Workflow

STR: dict[str, Any] = {"type": "string"}
INT: dict[str, Any] = {"type": "integer"}
LIST = ListReading(None, refusals=True)

CANOES = {
    "CN-2": "CN-2: open canoe, 2 seats, 40.00 GBP a day, 4.5 m",
    "CN-3": "CN-3: open canoe, 3 seats, 55.00 GBP a day, 5.2 m",
    "KY-1": "KY-1: sit-on kayak, 1 seat, 25.00 GBP a day, 3.1 m",
}


def test_a_comparative_picks_the_least_or_the_most_of_what_it_compares() -> None:
    values = list(CANOES)
    assert compared(values, CANOES, ["The bigger one, please."]) == ["CN-3"]
    assert compared(values, CANOES, ["Whichever is cheapest."]) == ["KY-1"]
    assert compared(values, CANOES, ["The shortest boat you have."]) == ["KY-1"]
    # The plain form compares nothing: "a small group", "a long weekend".
    assert compared(values, CANOES, ["We're a small group on a long weekend."]) == values
    # Where an entry does not write the quantity, nothing is compared.
    unpriced = {**CANOES, "KY-1": "KY-1: sit-on kayak"}
    assert compared(values, unpriced, ["Whichever is cheapest."]) == values


def test_words_narrow_first_then_the_comparative_decides() -> None:
    listing = "\n".join(f"- {entry}" for entry in CANOES.values())
    got = described(list(CANOES), [listing], ["The bigger of your canoes, please."], set())
    assert got == ["CN-3"]


GHOST_WALKS = """Walks this autumn:
- GW-1003: Sat 2026-10-03, Old Town ghost walk, 12.00 GBP, 20 places left
- GW-1010: Sat 2026-10-10, Old Town ghost walk, 12.00 GBP, 6 places left
- GW-1017: Sat 2026-10-17, Old Town ghost walk, 12.00 GBP, 30 places left
- GW-1024: Sat 2026-10-24, Old Town ghost walk, 12.00 GBP, 15 places left"""


def test_a_list_leaves_out_the_days_said_no_to_and_those_without_room() -> None:
    values = ["GW-1003", "GW-1010", "GW-1017", "GW-1024"]
    request = [
        "Please book the nine of us on every Old Town walk in October. "
        "Not the one on the 17th though, we're away."
    ]
    got = described(values, [GHOST_WALKS], request, set(), (), LIST)
    assert got == ["GW-1003", "GW-1024"]
    # Without a party or a day said no to, all of them.
    plain = ["Please book me on every Old Town walk in October."]
    assert described(values, [GHOST_WALKS], plain, set(), (), LIST) == values


def test_counts_said_in_words_and_the_nouns_for_adults_and_children() -> None:
    assert plain_counts("a couple of llamas") == "2 llamas"
    assert plain_counts("half a dozen eggs and a dozen rolls") == "6 eggs and 12 rolls"
    assert plain_counts("3 grown-ups and our 2 kids") == "3 adults and our 2 children"
    assert party_size(["Hold places for twelve of us."]) == 12
    assert party_size(["Two of us on Saturday, four of us on Sunday."]) is None


def tool(tool_name: str, description: str, /, **props: dict[str, Any]) -> ToolSpec:
    return ToolSpec(
        tool_name, description, {"type": "object", "properties": props, "required": list(props)}
    )


def facts(tools: list[ToolSpec], request: str, results: list[tuple[str, str]]) -> TurnFacts:
    wf = Workflow("wf", tools, terminal_tools=[tools[-1].name])
    return TurnFacts(wf, [request], results, [], [(name, {}) for name, _ in results])


def test_a_booking_counts_what_the_user_says_in_words() -> None:
    book = tool("book_canoe_trip", "Book a trip", adults=INT, children=INT, canoes=INT)
    f = facts([book], "Three grown-ups and our two kids; a couple of canoes will do.", [])
    preferred = preferred_values(f).values
    assert preferred["book_canoe_trip.adults"] == [3]
    assert preferred["book_canoe_trip.children"] == [2]
    assert preferred["book_canoe_trip.canoes"] == [2]


MONEY = {
    "type": "object",
    "properties": {"amount": {"type": "number"}, "currency": STR},
}
VISIT = (
    "OD-31: pottery open day, Sat 2026-05-09. Status CONFIRMED.\n"
    "Timetable: doors 10:00; wheel demo starts 10:30 (40 min); glazing class 11:20-12:10.\n"
    "Group: 18 pupils, 5 adults. One adult free per 6 pupils (3 free places).\n"
    "Total 126.00 GBP; deposit 30.00 GBP paid; balance 96.00 GBP due by 2026-05-01."
)


def test_a_reply_reports_the_results_numbers_not_the_questions() -> None:
    find = tool("get_open_day_visit", "A group visit", booking_ref=STR)
    reply = tool(
        "reply_open_day_group",
        "Reply to the group leader",
        status={"type": "string", "enum": ["CONFIRMED", "PROVISIONAL", "COMPLETED"]},
        demo={"type": "object", "properties": {"start_time": {"type": "string", "format": "time"}}},
        free_adult_places=INT,
        balance_due=MONEY,
    )
    request = (
        "Is our open day definitely confirmed, what time does the wheel demo itself start, "
        "how many of our five adults come free, and what do we still owe?"
    )
    listing = (
        "- OD-12: Sat 2025-05-10, COMPLETED\n- OD-31: Sat 2026-05-09, CONFIRMED\n"
        "- OD-40: Tue 2026-06-09, PROVISIONAL"
    )
    f = facts(
        [find, reply], request, [("find_open_day_visits", listing), ("get_open_day_visit", VISIT)]
    )
    preferred = preferred_values(f).values
    # The label "Status CONFIRMED" over the latest-dated record's state.
    assert preferred["reply_open_day_group.status"] == ["CONFIRMED"]
    # The time said beside what was asked ("wheel demo starts 10:30").
    assert preferred["reply_open_day_group.start_time"] == ["10:30"]
    # "how many of our five adults" asks; "3 free places" answers.
    assert preferred["reply_open_day_group.free_adult_places"] == [3]
    # `balance_due.amount`: the amount its object's key labels.
    assert preferred["reply_open_day_group.amount"] == [96]


def test_a_reply_message_answers_what_time_with_a_clock_time() -> None:
    result = (
        "Booked 2026-01-10 online.\n"
        "Deposit 160.00 GBP paid 2026-01-19; balance 185.00 GBP due by 2026-03-07.\n"
        "Kit list sent 2026-02-01.\nCertificate posted 2026-03-20.\n"
        "Arrive by 08:45 for the safety talk."
    )
    parts = answering_parts(
        ["What time do I need to turn up, and how much is left to pay?"], [result], set()
    )
    # A date answers no "what time": the clock time is taken over the dated parts.
    assert "Arrive by 08:45 for the safety talk." in parts
    assert any("balance 185.00 GBP" in p for p in parts)


def test_a_nested_date_takes_the_day_its_objects_key_is_said_with() -> None:
    book = tool(
        "book_marquee",
        "Book a marquee. Dates YYYY-MM-DD.",
        delivery={"type": "object", "properties": {"date": {"type": "string", "format": "date"}}},
        collection_date={"type": "string", "format": "date"},
    )
    request = "Delivered on 2026-08-28 and picked up again on 2026-09-01, please."
    preferred = preferred_values(facts([book], request, [])).values
    assert preferred["book_marquee.date"] == ["2026-08-28"]
    # Two dates of one tool are two days.
    assert preferred["book_marquee.collection_date"] == ["2026-09-01"]


def test_an_enum_of_listed_ids_takes_the_entry_the_request_describes() -> None:
    check = tool("check_canoes", "Canoes free on a date", date=STR)
    book = tool(
        "book_canoe",
        "Book a canoe",
        canoe={"type": "string", "enum": list(CANOES)},
    )
    listing = "\n".join(f"- {entry}" for entry in CANOES.values())
    f = facts([check, book], "The bigger of your open canoes, please.", [("check_canoes", listing)])
    assert preferred_values(f).values["book_canoe.canoe"] == ["CN-3"]


def test_a_short_code_the_request_writes_describes_the_entry_that_writes_it() -> None:
    mixes = (
        "- mx_4f2b: Harbour Lights (v2, 2026-11-20)\n"
        "- mx_4f7e: Harbour Lights (v3, 2026-11-27, approved)\n- mx_4a1n: Low Tide (v1)"
    )
    request = ["Please master Harbour Lights, the v3 one, not the older version."]
    assert described(["mx_4f2b", "mx_4f7e", "mx_4a1n"], [mixes], request, set()) == ["mx_4f7e"]


def test_a_report_takes_the_number_its_name_labels_in_the_newest_result() -> None:
    account = tool("find_fibre_account", "An account", account_number=STR)
    test = tool("run_fibre_test", "Test a line", line_id=STR)
    report = tool(
        "report_fibre_test", "Report the test to the customer", download_mbps={"type": "number"}
    )
    f = facts(
        [account, test, report],
        "My internet is crawling, account FA-33. What speed am I actually getting?",
        [
            (
                "find_fibre_account",
                "Line LN-7 on Fibre 80: 80 Mbps down, minimum download 55 Mbps.",
            ),
            (
                "run_fibre_test",
                "Test on LN-7: Download 38.4 Mbps, upload 9.6 Mbps. "
                "Download below the 55 Mbps minimum on 3 of 5 days.",
            ),
        ],
    )
    assert preferred_values(f).values["report_fibre_test.download_mbps"] == [38.4]


ROTA = """Rota:
- BS-12: Sat 2026-02-28, steward, OPEN
- BS-18: Sun 2026-03-01, steward, OPEN
- BS-23: Sat 2026-03-07, steward, FILLED (A. Kerr)
- BS-36: Wed 2026-03-11, steward, schools special, OPEN
- BS-41: Sat 2026-03-14, steward, OPEN
- BS-52: Sat 2026-03-21, steward, OPEN
- BS-58: Sun 2026-03-22, steward, OPEN
- BS-69: Sun 2026-03-29, steward, OPEN"""


def test_a_list_of_weekend_shifts_nobody_has_taken_apart_from_one_weekend() -> None:
    values = [line[2:7] for line in ROTA.splitlines()[1:]]
    request = [
        "Could you put me down for every steward shift at the weekends in March that "
        "nobody's taken yet? Apart from the weekend of the 21st, I'm at a wedding then."
    ]
    reading = ListReading(date(2026, 2, 20), refusals=True)
    got = described(values, [ROTA], request, set(), ("shift",), reading)
    assert got == ["BS-18", "BS-41", "BS-69"]


def test_a_word_of_time_between_a_label_and_a_value_labels_nothing() -> None:
    find = tool("find_steward", "A steward by email", email=STR)
    sign = tool("sign_up_steward", "Sign a steward up", steward_id=STR)
    f = facts(
        [find, sign],
        "Sign me up please, ann@rota.example.",
        [("find_steward", "STW-0387: Ann Lee, steward since 2025-06. Passed: first aid.")],
    )
    assert preferred_values(f).values["sign_up_steward.steward_id"] == ["STW-0387"]


def test_sizes_said_in_words_name_size_codes_and_sized_members() -> None:
    from forge_core.guardrails.mentions import named_members

    codes = ["XS", "S", "M", "L", "XL"]
    assert named_members(codes, "I take a medium wetsuit.") == ["M"]
    assert named_members(codes, "An extra large, please.") == ["XL"]
    assert named_members(codes, "Size M, please.") == ["M"]
    sized = ["child_s", "child_m", "adult_m", "adult_l"]
    said = "I take a large adult wetsuit; Ella wears a children's medium."
    assert named_members(sized, said) == ["child_m", "adult_l"]
