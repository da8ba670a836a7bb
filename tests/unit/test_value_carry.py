"""Values carried from one call to the next, and the user's own values kept
(forge_core/guardrails/: provenance, grounding, mentions, times).

Pure logic on hand-made workflows (a library of tools, a glass studio, a
climbing gym, a print shop): no model is needed to say which values a
parameter may take.
"""

from __future__ import annotations

from typing import Any

from forge_core.guardrails import TurnFacts
from forge_core.guardrails.grounding import extract_candidates, is_grounded, is_identifier_like
from forge_core.guardrails.registry import preferred_values
from forge_core.guardrails.times import range_ends, times_in
from forge_core.workflow import ToolSpec, Workflow

STR: dict[str, Any] = {"type": "string"}


def tool(tool_name: str, description: str, /, **props: dict[str, Any]) -> ToolSpec:
    return ToolSpec(
        tool_name, description, {"type": "object", "properties": props, "required": list(props)}
    )


def facts(
    tools: list[ToolSpec],
    request: str,
    results: list[tuple[str, str]] | None = None,
    sent: list[tuple[str, dict[str, Any]]] | None = None,
) -> TurnFacts:
    wf = Workflow("wf", tools, terminal_tools=[tools[-1].name])
    return TurnFacts(wf, [request], results or [], [], sent or [])


def test_a_tag_or_serial_of_something_is_an_id_and_takes_only_seen_values() -> None:
    for name in ("crate_tag", "assetTag", "serial", "meter_serial", "sensorSerial", "locator"):
        assert is_identifier_like(name), name
        assert is_grounded(name, STR), name
    # A bare tag may be a word ("latest"): no id, no grounding.
    assert not is_identifier_like("tag") and not is_grounded("tag", STR)
    assert not is_identifier_like("tags")


def test_a_tag_takes_the_value_its_label_names_not_an_airline_code() -> None:
    find = tool("get_shipment", "Open a shipment by its reference", shipment_reference=STR)
    slots = tool("list_pickup_slots", "List pickup slots for a crate", crate_tag=STR)
    f = facts(
        [find, slots],
        "Where can I pick up shipment SHP88120?",
        [("get_shipment", "Shipment SHP88120 via KL 1204: 1 crate, tag no 77Q4401X, at dock D.")],
        [("get_shipment", {"shipment_reference": "SHP88120"})],
    )
    # "KL" heads no code ("KL 1204" is a flight): letters alone abbreviate nothing.
    assert preferred_values(f).values["list_pickup_slots.crate_tag"] == ["77Q4401X"]


def test_an_id_a_lookup_took_is_not_the_different_id_it_returned() -> None:
    find = tool("find_climber", "Look a climber up by their wristband number", wristband_number=STR)
    book = tool("book_session", "Book a session", climber_id=STR, wall=STR)
    request = "My climber wristband number is 5512 0093, please book me on the north wall."
    # Before the lookup the wristband is the only id the request labels.
    assert preferred_values(facts([find, book], request)).values[
        "find_climber.wristband_number"
    ] == ["5512 0093"]
    after = facts(
        [find, book],
        request,
        [("find_climber", "Climber id CLB-3307 (wristband 5512 0093), member since 2024.")],
        [("find_climber", {"wristband_number": "5512 0093"})],
    )
    assert preferred_values(after).values["book_session.climber_id"] == ["CLB-3307"]


def test_the_next_person_is_the_free_one_not_the_one_the_request_names() -> None:
    jobs = tool("list_courier_jobs", "List a courier's jobs", courier_number=STR)
    free = tool("list_free_couriers", "List couriers free now", area=STR)
    give = tool("reassign_job", "Give a job to another courier", job_id=STR, courier_id=STR)
    f = facts(
        [jobs, free, give],
        "Courier 318 is ill: give his lunchtime job to someone free with a cargo bike.",
        [
            ("list_courier_jobs", "Courier 318: JOB-4410 12:30 lunch drop; JOB-4415 17:00."),
            ("list_free_couriers", "Free: CR-207 Ana (cargo bike), CR-116 Tom (scooter)."),
        ],
        [("list_courier_jobs", {"courier_number": "318"}), ("list_free_couriers", {"area": "x"})],
    )
    assert preferred_values(f).values["reassign_job.courier_id"] == ["CR-207"]


def test_a_number_written_in_groups_is_of_its_labels_kind_joined_too() -> None:
    find = tool("find_member", "Find a member by card number", card_number=STR)
    rooms = tool("list_studio_slots", "List a studio's slots", studio_id=STR, day=STR)
    book = tool("book_slot", "Book a slot", member_id=STR, slot_id=STR)
    f = facts(
        [find, rooms, book], "My card number is 4410 2291; any kiln slots at my usual studio?"
    )
    assert {"4410 2291", "44102291"} <= set(extract_candidates(["card number is 4410 2291"]))
    # Neither spelling is a studio: the studio waits for the member's record.
    assert "list_studio_slots" in preferred_values(f).blocked


def test_an_action_takes_the_users_enum_word_over_a_records() -> None:
    find = tool("find_donor", "Find a donor", donor_number=STR)
    kinds = {"type": "string", "enum": ["glazing", "throwing", "firing"]}
    book = tool("book_class", "Book a pottery class for a member. Ends the task.", kind=kinds)
    report = tool("report_last_class", "Tell the member what their last class was", kind=kinds)
    request = "I'd like to book a throwing class, please."
    record = [("find_donor", "Member M-1: last class glazing, 2026-02-01.")]
    got = preferred_values(facts([find, book], request, record)).values
    assert got["book_class.kind"] == ["throwing"]
    # A report tells what the record says.
    got = preferred_values(facts([find, report], "What was my last class?", record)).values
    assert got["report_last_class.kind"] == ["glazing"]


def test_bare_hours_of_a_range_and_a_shared_half_of_the_day() -> None:
    assert times_in("Print it from 9 till 12 tomorrow.") == [(9, 0), (12, 0)]
    assert range_ends("Is the booth free from 2 to 3pm?") == ([(14, 0)], [(15, 0)])
    assert range_ends("from 11 to 1pm please") == ([(11, 0)], [(13, 0)])
    # A count is no time, and "from 9 to 5" is no "nine minutes to five".
    assert times_in("a table from 2 to 4 guests") == []
    assert times_in("open from 9 to 5.") == [(9, 0), (17, 0)]


def test_a_span_of_times_is_no_id_and_makes_no_listing() -> None:
    found = extract_candidates(["Kiln K-2 2026-05-20: free 08:00-13:00, booked 13:00-18:00."])
    assert "08:00-13:00" not in found and "13:00-18:00" not in found
    assert "K-2" in found


def test_an_id_its_description_labels_over_the_one_the_user_wrote() -> None:
    find = tool("find_bill", "Look a bill up by the number printed on it", bill_number=STR)
    pay = tool(
        "pay_bill",
        "Pay a bill",
        bill_id={"type": "string", "description": "The bill's ledger id."},
    )
    f = facts(
        [find, pay],
        "Please pay bill B-5531 today.",
        [("find_bill", "Bill B-5531 from Northgate Water: 88.10 GBP, ledger id LG-20931.")],
        [("find_bill", {"bill_number": "B-5531"})],
    )
    assert preferred_values(f).values["pay_bill.bill_id"] == ["LG-20931"]


def test_an_amount_with_no_unit_and_its_currency_code_come_from_the_request() -> None:
    pay = tool(
        "schedule_transfer",
        "Schedule a transfer",
        amount={"type": "number"},
        currency={"type": "string", "pattern": "^[A-Z]{3}$"},
    )
    got = preferred_values(facts([pay], "Send the studio £2,310.50 on Monday.")).values
    assert got["schedule_transfer.amount"] == [2310.5]
    assert got["schedule_transfer.currency"] == ["GBP"]
    listed = tool("quote", "Quote", currency={"type": "string", "enum": ["USD", "CHF"]})
    assert "quote.currency" not in preferred_values(facts([listed], "About 40 euros.")).values


def test_a_code_written_in_many_groups_is_one_code() -> None:
    from forge_core.guardrails.codes import codes_in

    assert codes_in("My IBAN is de44 5001 0517 5407 3249 31, thanks.")[0] == (
        "de44 5001 0517 5407 3249 31"
    )
    assert codes_in("I live at NE4 7QP and drive YT62 WBN") == ["NE4 7QP", "YT62 WBN"]
    assert codes_in("we are at the bar for two") == []


def test_relative_dates_in_words_and_in_months() -> None:
    from datetime import date

    from forge_core.guardrails.relative_dates import relative_dates

    today = date(2027, 1, 31)
    assert relative_dates("make it due in thirty days", today) == [date(2027, 3, 2)]
    assert relative_dates("payable within 14 days", today) == [date(2027, 2, 14)]
    assert relative_dates("a fortnight from today", today) == [date(2027, 2, 14)]
    assert relative_dates("in one month", today) == [date(2027, 2, 28)]
    assert relative_dates("in days to come", today) == []
    # Parts of today.
    assert relative_dates("from 1:40 this morning", today) == [today]
    assert relative_dates("this  evening at 8", today) == [today]


def test_an_ordinal_is_no_id() -> None:
    found = extract_candidates(["Rent RO-1 goes out on the 1st and the gym's on the 23rd."])
    assert "RO-1" in found and "1st" not in found and "23rd" not in found


def test_a_side_tool_is_asked_for_in_its_own_words_and_never_by_a_negated_one() -> None:
    from forge_core.guardrails.destructive import asked_for, unasked_writes

    find = ToolSpec("find_member", "Find a member", {"type": "object", "properties": {}})
    leave = ToolSpec("leave_group", "Take a member off one group. Ends the task.", find.parameters)
    delete = ToolSpec("delete_member", "Remove a member and all their data", find.parameters)
    join = ToolSpec("add_to_group", "Add a member to a group", find.parameters)
    tools = [find, leave, delete, join]
    request = "Please remove Ana from the chess group; she wants to stay in the book group."
    # "remove" is delete_'s kind of verb, but delete_member is a side tool here.
    assert asked_for(tools, {"delete_member"}, request) == {"delete_member"}
    assert asked_for(tools, {"delete_member"}, request, frozenset({"delete_member"})) == set()
    # "to" asks for nothing.
    assert unasked_writes(tools, {"leave_group"}, request, ends=True) == {
        "delete_member",
        "add_to_group",
    }
    assert asked_for(tools, {"delete_member"}, "Don't delete her account.") == set()


def test_a_phone_in_the_international_form_the_tool_asks_for() -> None:
    from forge_core.guardrails import FailedValue
    from forge_core.guardrails.phones import phones_in, region_of

    book = tool("book_fitting", "Book a fitting", customer_name=STR, mobile=STR)
    request = "I'm Ada Lund, mobile 0612 345 678 (Netherlands); book me for Friday."
    assert region_of([request]) == "NL"
    assert phones_in(request, "NL") == [("0612 345 678", "+31612345678")]
    # Not directed: as written and international both.
    got = preferred_values(facts([book], request)).values["book_fitting.mobile"]
    assert got == ["0612 345 678", "+31612345678"]
    # An error that asks for the international form: that form only.
    failed = FailedValue(
        "book_fitting", {"customer_name": "Ada", "mobile": "0612"}, "use the country code"
    )
    wf = Workflow("wf", [book], terminal_tools=["book_fitting"])
    after = TurnFacts(wf, [request], [], [failed])
    assert preferred_values(after).values["book_fitting.mobile"] == ["+31612345678"]
    # Dates and account numbers are no phones; a national number needs its country.
    assert phones_in("on 2026-04-22, account 4099 1276", "GB") == []
    assert phones_in("call 0612 345 678", None) == []
    # ... and is then taken as written.
    bare = facts([book], "Ring me on 0612 345 678 about the fitting.")
    assert preferred_values(bare).values["book_fitting.mobile"] == ["0612 345 678"]


def test_a_national_phones_country_from_the_one_currency_the_texts_price_in() -> None:
    from forge_core.guardrails.phones import region_of

    # A national number whose country nobody names: the prices say it.
    assert region_of(["Call-out fee 60.00 CHF.", "Ring me on 044 668 18 00."]) == "CH"
    assert region_of(["Deposit £40, balance on the day."]) == "GB"
    # Two such currencies, or only the euro: no country.
    assert region_of(["20 CHF or 18 GBP"]) is None
    assert region_of(["The fee is 45 EUR."]) is None


def test_a_person_a_lookup_took_is_not_the_person_a_booking_is_for() -> None:
    find = tool("find_trainer", "Find a trainer by first name", name=STR)
    book = tool("book_session", "Book a session. Ends the task.", trainer_id=STR, client_name=STR)
    request = "Book me a session with Omar. I'm Lena Fischer."
    f = facts(
        [find, book],
        request,
        [("find_trainer", "Omar Haddad, trainer id TR-12.")],
        [("find_trainer", {"name": "Omar"})],
    )
    assert preferred_values(f).values["book_session.client_name"][0] == "Lena Fischer"
    assert "Omar Haddad" not in preferred_values(f).values["book_session.client_name"]


def test_a_report_tells_the_latest_entry_and_the_deadline_a_result_gives() -> None:
    look = tool("track_permit", "Read a permit's record", reference=STR, date_of_birth=STR)
    stages = {"type": "string", "enum": ["received", "site_visit", "approved", "refused"]}
    reply = tool(
        "reply_permit_stage",
        "Tell the applicant where their permit stands. Ends the task.",
        stage=stages,
        open_items={"type": "integer"},
        reply_deadline={"type": "string", "format": "date"},
    )
    record = (
        "PMT-88 for J. Okoro. Timeline: 2027-01-04 received; 2027-01-19 site_visit; "
        "2027-02-02 approved: 3 conditions to sign, reply by 2027-02-20. Fee paid."
    )
    f = facts(
        [look, reply],
        "Permit PMT-88, born 2 May 1980. Where is it at?",
        [("track_permit", record)],
        [("track_permit", {"reference": "PMT-88", "date_of_birth": "1980-05-02"})],
    )
    got = preferred_values(f).values
    assert got["reply_permit_stage.stage"] == ["approved"]
    # Not the birth date the lookup took, nor the entries' own dates.
    assert got["reply_permit_stage.reply_deadline"] == ["2027-02-20"]
    # "2027-02-02 approved: 3 conditions": the 02 is a date's day, no count.
    assert (
        "reply_permit_stage.open_items" not in got or 2 not in got["reply_permit_stage.open_items"]
    )


def test_how_often_as_people_say_it() -> None:
    from forge_core.guardrails.mentions import named_members

    often = ["daily", "weekly", "biweekly", "monthly"]
    assert named_members(often, "Water them every other week, please.") == ["biweekly"]
    assert named_members(often, "Once a week is fine.") == ["weekly"]
    assert named_members(often, "each month") == ["monthly"]


def test_web_domains_and_country_codes_the_request_writes() -> None:
    from forge_core.guardrails.addresses import countries_in, web_addresses

    text = "I'm ana@mail.example; please renew https://kite-school.co.nz/home, 2.5 years."
    assert web_addresses(text, whole=False) == ["kite-school.co.nz"]
    assert web_addresses(text, whole=True) == ["https://kite-school.co.nz/home"]
    assert countries_in("Ship to Porto, Portugal, then on to Spain.") == ["PT", "ES"]
    renew = tool("renew_domain", "Renew a domain", domain=STR)
    code = {"type": "string", "pattern": "^[A-Z]{2}$"}
    ship = tool("ship", "Ship a parcel", country_code=code, weight_kg={"type": "number"})
    got = preferred_values(facts([renew, ship], text + " Ship it to Portugal, 18 Göteborg")).values
    assert got["renew_domain.domain"] == ["kite-school.co.nz"]
    assert got["ship.country_code"] == ["PT"]
    # "18 Göteborg" weighs nothing: a unit is a whole word.
    assert "ship.weight_kg" not in got


def test_initials_name_an_ids_kind_and_the_entry_the_request_keeps_is_left() -> None:
    orders = tool("list_direct_debits", "List an account's direct debits", account_number=STR)
    cancel = tool("cancel_direct_debit", "Cancel one direct debit", direct_debit_id=STR)
    listing = (
        "Account 5521: DD-301 Riverside Rentals 700.00 GBP monthly (ref RENT 4); "
        "DD-318 Riverside Pool & Gym 35.00 GBP monthly (ref M 22); DD-340 K Lee 9.00 GBP weekly."
    )
    f = facts(
        [orders, cancel],
        "Cancel the monthly debit to Riverside Pool from account 5521; leave the rent alone.",
        [("list_direct_debits", listing)],
        [("list_direct_debits", {"account_number": "5521"})],
    )
    # DD for direct debit; "the", "to" and "from" describe nothing; the rent is kept.
    assert preferred_values(f).values["cancel_direct_debit.direct_debit_id"] == ["DD-318"]


def test_a_tools_phrase_gives_initials_too() -> None:
    slots = tool("list_pickup_windows", "List pickup windows", depot=STR)
    book = tool("book_pickup", "Book a pickup. Ends the task.", window_id=STR)
    f = facts(
        [slots, book],
        "Book the first pickup window at the north depot, flight KL 1204 lands at 9.",
        [("list_pickup_windows", "North depot: PW-11 09:00-10:00; PW-12 10:00-11:00.")],
        [("list_pickup_windows", {"depot": "north"})],
    )
    assert set(preferred_values(f).values["book_pickup.window_id"]) <= {"PW-11", "PW-12"}


def test_an_array_of_objects_takes_as_many_items_as_the_request_counts() -> None:
    from forge_core.guardrails.values import bounded

    person = {"type": "object", "properties": {"first_name": STR}}
    enrol = tool(
        "enrol_pupils",
        "Enrol pupils",
        pupils={"type": "array", "items": person, "minItems": 1, "maxItems": 6},
    )
    f = facts([enrol], "Please enrol my three pupils, Ana, Bo and Cy, for spring.")
    counts = preferred_values(f).counts
    assert counts == {"enrol_pupils.pupils": 3}
    narrowed = bounded(enrol, counts).parameters["properties"]["pupils"]
    assert (narrowed["minItems"], narrowed["maxItems"]) == (3, 3)
    assert enrol.parameters["properties"]["pupils"]["maxItems"] == 6  # the workflow's own
    # Two counts, or none: no bound.
    two = facts([enrol], "Enrol 2 pupils now and 3 pupils in May.")
    assert preferred_values(two).counts == {}


def test_leave_that_one_out_excludes_the_named_entry_only() -> None:
    from forge_core.guardrails.entries import described

    listing = (
        "Basket B-7: LN-1 apples (in stock); LN-2 oat milk (out of stock, sub: soy milk); "
        "LN-3 rye bread (out of stock, sub: spelt bread); LN-4 eggs (in stock)."
    )
    request = ["Take the swaps for what's out of stock, apart from the milk, leave that one out."]
    assert described(["LN-1", "LN-2", "LN-3", "LN-4"], [listing], request, set()) == ["LN-3"]


def test_a_number_word_glued_to_its_unit() -> None:
    from forge_core.guardrails.quantities import quantities

    text = "Book a three-hour session for twenty-two guests, a one-off."
    assert quantities(text, {"minute"}, set(), True) == [180]
    assert quantities(text, set(), {"guest"}, True) == [22]


def test_a_part_of_the_day_describes_the_entries_it_starts_in() -> None:
    from forge_core.guardrails.entries import described

    listing = "Slots: PK-1 today 13:00-17:00; PK-2 today 17:30-21:00; PK-3 tomorrow 08:00-11:00."
    values = ["PK-1", "PK-2", "PK-3"]
    assert described(values, [listing], ["Could it come this evening?"], set()) == ["PK-2"]
    assert described(values, [listing], ["Any morning slot will do."], set()) == ["PK-3"]
    # The part the user is away is no wish.
    away = ["I'm out all afternoon, so not before the evening."]
    assert described(values, [listing], away, set()) == ["PK-2"]


def test_a_single_time_is_an_events_not_a_window_of_the_day() -> None:
    from forge_core.guardrails.entries import described

    listing = (
        "web-api, newest first: build f00d1 deployed today 08:12 (failing); build beef2 3 days ago."
    )
    request = ["The release that went out this morning broke checkout: roll back one."]
    assert described(["f00d1", "beef2"], [listing], request, set()) == ["f00d1", "beef2"]


def test_a_free_weekday_takes_the_day_the_request_names_and_a_list_its_own_listing() -> None:
    courses = tool("list_classes", "List a day's classes", weekday=STR)
    fx = {"type": "string", "pattern": "^GM-[0-9]{4}$"}
    skip = tool("skip_games", "Skip games", game_ids={"type": "array", "items": fx})
    f = facts(
        [courses, skip],
        "My number is 07700 900111. Skip the Tuesday games, please.",
        [("list_classes", "Tuesday: GM-1001 18:00, GM-1002 19:00.")],
    )
    got = preferred_values(f)
    assert got.values["list_classes.weekday"] == ["Tuesday"]
    # The phone's digit groups are no listing of "GM-" ids.
    assert got.items["skip_games.game_ids"] == ["GM-1001", "GM-1002"]
