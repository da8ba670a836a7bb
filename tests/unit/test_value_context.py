"""Values read in their context (round 3, session 5): how many people "five
of us" are, what a bare `quantity` counts, the street line of an address,
the add-ons the user says no to, the time that picks a session, whose
e-mail is whose, the user's own name kept out of a pet's, an error's HTTP
status and the parameter it is about, and a report's values taken from the
record it reports (forge_core/guardrails/: quantities, addresses, mentions,
entries, provenance, proper_names, error_values, coherence).

Pure logic on hand-made workflows (a bowling alley, a sign maker, a bakery,
a kennel, a boiler service history): no model is needed to say which
values a parameter may take.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from forge_core.guardrails import FailedValue, TurnFacts
from forge_core.guardrails.addresses import street_addresses, takes_street_line
from forge_core.guardrails.coercion import cut_runaways
from forge_core.guardrails.composed_formats import composed
from forge_core.guardrails.dates import date_template
from forge_core.guardrails.error_values import digit_formats, suggested_values, without_status
from forge_core.guardrails.proper_names import names_in
from forge_core.guardrails.quantities import measures
from forge_core.guardrails.registry import NAMES, preferred_values
from forge_core.guardrails.relative_dates import relative_dates
from forge_core.workflow import ToolSpec, Workflow

STR: dict[str, Any] = {"type": "string"}
INT: dict[str, Any] = {"type": "integer"}


def tool(tool_name: str, description: str, /, **props: dict[str, Any]) -> ToolSpec:
    return ToolSpec(
        tool_name, description, {"type": "object", "properties": props, "required": list(props)}
    )


def facts(
    tools: list[ToolSpec],
    request: str,
    results: list[tuple[str, str]] | None = None,
    sent: list[tuple[str, dict[str, Any]]] | None = None,
    failures: list[FailedValue] | None = None,
) -> TurnFacts:
    wf = Workflow("wf", tools, terminal_tools=[tools[-1].name])
    return TurnFacts(wf, [request], results or [], failures or [], sent or [])


def test_five_of_us_is_a_party_of_five_for_players() -> None:
    hold = tool("hold_lane", "Hold a lane", lane_id=STR, players=INT)
    for said in ("a lane for five of us", "we're 5", "a party of five"):
        f = facts([hold], f"Could you book {said} tonight?")
        assert preferred_values(f).values["hold_lane.players"] == [5], said


def test_a_bare_quantity_counts_what_the_request_orders() -> None:
    line = {"type": "object", "properties": {"sku": STR, "quantity": INT}}
    order = tool("order_signs", "Order signs", lines={"type": "array", "items": line})
    f = facts(
        [order],
        "Account FWN-2207 here. We need 40 correx boards, delivered to 3 Quay Street "
        "on 14 March, in 2 litre tubs.",
    )
    # Not the account's digits, the house number, the day or the litres.
    assert preferred_values(f).values["order_signs.quantity"] == [40]


def test_a_street_line_takes_the_street_address_the_request_writes() -> None:
    assert street_addresses("to Seasalt Events, 3 Quay Street, Whitstable CT5 1AB") == [
        "3 Quay Street"
    ]
    assert street_addresses("at 221b Baker St. tomorrow") == ["221b Baker St"]
    assert street_addresses("25 copies at A2 on the fine art paper") == []
    for name in ("line1", "address_line", "address_line_1", "street", "street_address"):
        assert takes_street_line(name, STR), name
    for name in ("address_line_2", "line2", "city", "email_address"):
        assert not takes_street_line(name, STR), name
    ship = tool("ship", "Ship the order", name=STR, line1=STR, postcode=STR)
    f = facts([ship], "Send it to Bloom Bakery, 12 Mill Lane, Hexham NE46 1AA.")
    assert preferred_values(f).values["ship.line1"] == ["12 Mill Lane"]


def test_a_list_leaves_out_the_members_the_request_says_no_to() -> None:
    addons = {"type": "array", "items": {"type": "string", "enum": ["cake", "balloons", "photos"]}}
    book = tool("book_party", "Book a party", add_ons=addons)
    f = facts([book], "The cake would be lovely, but we don't need the photos.")
    assert preferred_values(f).values["book_party.add_ons"] == [["cake"]]
    # Said yes once, it stays.
    f = facts([book], "No balloons please. Photos yes, and photos of the cake too.")
    assert preferred_values(f).values["book_party.add_ons"] == [["cake", "photos"]]


def test_the_time_the_request_states_picks_the_session_that_has_it() -> None:
    sessions = tool("list_sessions", "List sessions", day=STR)
    hold = tool("hold_session", "Hold a session", session_id=STR)
    listing = (
        "Lane sessions on Saturday:\n- 14:00 session ses_A1b2C3, free\n"
        "- 16:15 session ses_D4e5F6, free\n- 18:30 session ses_G7h8J9, free"
    )
    f = facts(
        [sessions, hold],
        "The quarter past four session please.",
        [("list_sessions", listing)],
        [("list_sessions", {"day": "Saturday"})],
    )
    assert preferred_values(f).values["hold_session.session_id"] == ["ses_D4e5F6"]


def test_a_lookup_takes_the_users_own_email_a_new_holder_the_other() -> None:
    find = tool("find_booking", "Find a booking", email=STR)
    move = tool("transfer_to_new_holder", "Put a place in someone else's name", email=STR)
    f = facts(
        [find, move],
        "My email is ann.lee@mail.example. My friend Jo is taking my place; "
        "her email is jo.bell@mail.example.",
    )
    values = preferred_values(f).values
    assert values["find_booking.email"] == ["ann.lee@mail.example"]
    assert values["transfer_to_new_holder.email"] == ["jo.bell@mail.example"]


def test_a_pets_name_is_not_the_users_own_and_a_surname_is_the_last_name() -> None:
    find = tool("find_dog", "Find a dog's profile", owner_surname=STR, dog_name=STR)
    book = tool("book_groom", "Book a groom", dog_id=STR)
    f = facts([find, book], "Hi, it's Priya Raman. Could the van come on Friday?")
    values = preferred_values(f).values
    assert values["find_dog.owner_surname"] == ["Raman"]
    assert "find_dog.dog_name" not in values


def test_an_errors_http_status_is_no_value_and_names_no_parameter() -> None:
    assert without_status("422 invalid_party_size: players must be 2 to 6").startswith(
        " invalid_party_size"
    )
    assert without_status("HTTP 404 - no lane 'L9'") == " - no lane 'L9'"
    assert "404" not in suggested_values("404 not_found: no lane L-12", set())
    # An error about another parameter does not rewrite the id beside it.
    hold = tool("hold_lane", "Hold a lane", lane_id=STR, players=INT)
    failed = FailedValue(
        "hold_lane", {"lane_id": "L-2", "players": 1}, "422 bad_request: players must be 2 to 6"
    )
    f = facts([hold], "Lane L-2 for the two of us.", failures=[failed])
    values = preferred_values(f).values
    assert values.get("hold_lane.lane_id") != ["422"]
    assert values["hold_lane.players"] == [2]


def test_a_report_takes_the_values_of_the_record_its_id_names() -> None:
    history = tool("get_service_history", "A boiler's service history", boiler_id=STR)
    report = tool(
        "report_service",
        "Tell the customer about the latest service. Ends the task.",
        visit_number=STR,
        pressure_bar={"type": "number", "description": "pressure in bar"},
        next_due={"type": "string", "format": "date"},
    )
    listing = (
        "Service history for BLR-77:\n"
        "1. Visit SV-26-0412, 2026-03-02: passed, pressure 1.4 bar, next due 2027-03-02.\n"
        "2. Visit SV-25-0390, 2025-02-27: passed, pressure 1.1 bar, next due 2026-02-27."
    )
    f = facts(
        [history, report],
        "How did visit SV-26-0412 go on boiler BLR-77, and when is the next one due?",
        [("get_service_history", listing)],
        [("get_service_history", {"boiler_id": "BLR-77"})],
    )
    out = preferred_values(f)
    assert out.values["report_service.visit_number"] == ["SV-26-0412"]
    assert out.values["report_service.pressure_bar"] == [1.4]
    assert out.values["report_service.next_due"] == ["2027-03-02"]
    assert "record_coherence" in out.reasons["report_service.pressure_bar"]
    # Without it, the older record's pressure is as good.
    alone = preferred_values(f, enabled=frozenset(NAMES))
    assert alone.values["report_service.pressure_bar"] == [1.4, 1.1]


def test_a_nested_string_that_runs_on_into_one_digit_goes_or_ends_there() -> None:
    access = {
        "type": "object",
        "properties": {"gate_code": STR, "parking_notes": STR},
        "required": ["gate_code"],
    }
    schema = {
        "type": "object",
        "properties": {"site": {"type": "object", "properties": {"access": access}}},
    }
    runaway = "1" + "0" * 80
    args, cut = cut_runaways(
        schema, {"site": {"access": {"gate_code": "4071", "parking_notes": runaway}}}
    )
    assert args == {"site": {"access": {"gate_code": "4071"}}}
    assert [c.path for c in cut] == ["/site/access/parking_notes"]
    # Required, it ends where the run begins; a plain value is left alone.
    args, cut = cut_runaways(schema, {"site": {"access": {"gate_code": "40" + "7" * 30}}})
    assert args["site"]["access"]["gate_code"] == "40"
    assert cut_runaways(schema, {"site": {"access": {"gate_code": "4071"}}})[1] == []


def test_a_new_holder_is_the_person_the_request_names_in_full() -> None:
    find = tool("find_order", "Find an order", order_number=STR)
    change = tool(
        "change_ticket_holder", "Put a ticket in a new name", ticket_id=STR, full_name=STR
    )
    f = facts(
        [find, change],
        "Order FG-1184, my email is ellie.brookes@post.example. My brother Sam can't come to "
        "Fieldgrass, so my friend Jess Okafor is taking his place. Put his ticket in her name.",
        [
            (
                "find_order",
                "Order FG-1184 (Ellie Brookes). Tickets: TKT-7Q4M-2281 weekend, holder Ellie "
                "Brookes; TKT-7Q4M-2282 weekend, holder Sam Brookes.",
            )
        ],
        [("find_order", {"order_number": "FG-1184"})],
    )
    values = preferred_values(f).values
    assert values["change_ticket_holder.full_name"] == ["Jess Okafor"]
    # The user's e-mail ("ellie.brookes@...") describes neither ticket; "Sam" does.
    assert values["change_ticket_holder.ticket_id"] == ["TKT-7Q4M-2282"]


def test_a_pet_named_at_the_start_of_a_sentence_is_its_name() -> None:
    find = tool("find_dog", "Find a dog's profile", owner_surname=STR, dog_name=STR)
    book = tool("book_groom", "Book a groom", dog_id=STR)
    f = facts([find, book], "Hi, it's Priya Raman. Biscuit is overdue a full groom.")
    assert preferred_values(f).values["find_dog.dog_name"] == ["Biscuit"]


def test_an_abbreviated_weekday_in_a_listing_is_that_day() -> None:
    firings = tool("list_firings", "List upcoming kiln firings")
    load = tool("load_firing", "Load pieces into a firing", firing_id=STR)
    listing = (
        "Upcoming firings:\n- KF-11 Thu 2026-05-14, bisque\n- KF-12 Fri 2026-05-15, glaze\n"
        "- KF-14 Tue 2026-05-19, glaze"
    )
    f = facts(
        [firings, load],
        "Please put my mugs into Friday's glaze firing.",
        [("list_firings", listing)],
        [("list_firings", {})],
    )
    assert preferred_values(f).values["load_firing.firing_id"] == ["KF-12"]


def test_dates_by_the_clause_about_them_and_a_past_event_in_the_past() -> None:
    work = tool(
        "schedule_work",
        "Schedule tree work",
        work_date={"type": "string", "format": "date"},
        decision_date={"type": "string", "format": "date"},
    )
    wf = Workflow(
        "wf", [work], terminal_tools=["schedule_work"], system_prompt="Today is 2026-09-01."
    )
    f = TurnFacts(
        wf,
        [
            "The council approved it; their decision letter is dated 14 August. "
            "Can you book the work for Tuesday the 15th?"
        ],
        [],
    )
    values = preferred_values(f).values
    assert values["schedule_work.decision_date"] == ["2026-08-14"]
    assert values["schedule_work.work_date"] == ["2026-09-15"]


def test_the_one_after_is_a_week_after_the_coming_day() -> None:
    assert relative_dates("Not this Saturday, the one after.", date(2026, 10, 7)) == [
        date(2026, 10, 17)
    ]
    assert relative_dates("on Saturday after next", date(2026, 10, 7)) == [date(2026, 10, 17)]
    assert relative_dates("this Saturday", date(2026, 10, 7)) == [date(2026, 10, 10)]


def test_an_error_template_composes_the_value_even_inside_an_object() -> None:
    assert composed("456", "references look like TPO/YYYY/NNNN", ["order 456 of 2019"], 2026) == [
        "TPO/2019/0456"
    ]
    assert composed("4512", "case numbers are CV-YYYY-######", ["case 4512 from 2024"], 2026) == [
        "CV-2024-004512"
    ]
    consent = {"type": "object", "properties": {"reference": STR, "decision_date": STR}}
    work = tool("schedule_work", "Schedule tree work", quote_id=STR, consent=consent)
    failed = FailedValue(
        "schedule_work",
        {"quote_id": "QT-7316", "consent": {"reference": "456", "decision_date": "2026-08-14"}},
        "consent.reference '456' not recognised: write it as TPO/YYYY/NNNN",
    )
    f = facts([work], "Quote QT-7316; preservation order 456 of 2019.", failures=[failed])
    assert preferred_values(f).values["schedule_work.reference"][0] == "TPO/2019/0456"


def test_a_house_number_or_half_a_postcode_is_no_id() -> None:
    find = tool("find_client", "Find a client by address", postcode=STR, house_number=STR)
    history = tool("get_history", "A piano's tuning history", piano_id=STR)
    book = tool("book_visit", "Book a tuning visit", client_id=STR)
    f = facts([find, history, book], "It's Mrs Fairbairn, 14 Larch Grove, HG2 8PL. Tune the grand?")
    out = preferred_values(f)
    assert out.values["find_client.house_number"] == ["14"]
    assert out.values["find_client.postcode"] == ["HG2 8PL"]
    # No id of its kind yet: the lookup by address has to find the piano first.
    assert "get_history.piano_id" not in out.values
    assert "get_history" in out.blocked


def test_a_date_goes_in_the_form_an_error_states() -> None:
    assert date_template("dates of birth are written DD/MM/YYYY, day first") == "%d/%m/%Y"
    assert date_template("as YYYYMMDD") == "%Y%m%d"
    assert date_template("ISO 8601, YYYY-MM-DD") is None
    candidate = {"type": "object", "properties": {"first_name": STR, "date_of_birth": STR}}
    enter = tool("enter_candidate", "Enter a candidate for an exam", candidate=candidate)
    failed = FailedValue(
        "enter_candidate",
        {"candidate": {"first_name": "Isla", "date_of_birth": "2015-10-1"}},
        "candidate.date_of_birth '2015-10-1' is not valid: dates of birth are written DD/MM/YYYY",
    )
    request = "Please enter Isla; she was born on the 3rd of July 2015."
    assert preferred_values(facts([enter], request)).values["enter_candidate.date_of_birth"] == [
        "2015-07-03"
    ]
    f = facts([enter], request, failures=[failed])
    assert preferred_values(f).values["enter_candidate.date_of_birth"] == ["03/07/2015"]


def test_letters_followed_by_n_digits_take_the_users_number_of_that_width() -> None:
    error = (
        "vessel.registration 'C14' not accepted: numbers are entered as the letters SSR "
        "followed straight away by the six digits, no spaces"
    )
    assert digit_formats(error) == [("SSR", 6)]
    assert digit_formats("must be 'GX-' followed by exactly 6 digits") == [("GX-", 6)]
    vessel = {"type": "object", "properties": {"name": STR, "registration": STR}}
    book = tool("book_haul_out", "Book a haul-out", account_id=STR, vessel=vessel)
    failed = FailedValue(
        "book_haul_out",
        {"account_id": "BY-1", "vessel": {"name": "Curlew", "registration": "C14"}},
        error,
    )
    f = facts([book], "Curlew on berth C14; her register number is 148 302.", failures=[failed])
    assert preferred_values(f).values["book_haul_out.registration"] == ["SSR148302"]


def test_the_size_the_request_gives_picks_the_entry_not_the_site_code_sent_before() -> None:
    assert (
        measures("Fifty square foot should do")
        == measures("U-1 50 sq ft, ground")
        == {"50square_foot"}
    )
    units = tool("list_units", "List free units at a site", site_code=STR)
    reserve = tool("reserve_unit", "Reserve a unit", unit_id=STR)
    listing = (
        "Reading (RDG), free from 2026-07-11:\n- U-RDG-1-014 25 sq ft, ground floor\n"
        "- U-RDG-2-031 50 sq ft, first floor\n- U-RDG-1-022 50 sq ft, ground floor\n"
        "- U-RDG-1-027 75 sq ft, ground floor"
    )
    f = facts(
        [units, reserve],
        "A unit at your Reading site: fifty square foot, on the ground floor. Email me at "
        "tom@post.example.",
        [("list_units", listing)],
        [("list_units", {"site_code": "RDG"})],
    )
    assert preferred_values(f).values["reserve_unit.unit_id"] == ["U-RDG-1-022"]


def test_the_code_an_error_lists_that_abbreviates_the_requests_place() -> None:
    units = tool("list_units", "List free units at a site", site_code=STR, move_in=STR)
    reserve = tool("reserve_unit", "Reserve a unit", unit_id=STR)
    failed = FailedValue(
        "list_units",
        {"site_code": "tom@post.example", "move_in": "2026-07-11"},
        "unknown site 'tom@post.example'; sites are RDG, SLO, BSK",
    )
    f = facts([units, reserve], "A unit at your Reading site please.", failures=[failed])
    assert preferred_values(f).values["list_units.site_code"] == ["RDG"]


def test_names_with_accents_and_a_candidate_the_request_names_in_full() -> None:
    assert names_in("Put it in his name, Stanisław Wójcik, please.") == ["Stanisław Wójcik"]
    sessions = tool("list_sessions", "List exam sessions", region=STR)
    candidate = {"type": "object", "properties": {"first_name": STR, "last_name": STR}}
    enter = tool("enter_candidate", "Enter a candidate for an exam", candidate=candidate)
    f = facts(
        [sessions, enter],
        "Could you put Isla Fairbairn in for her violin exam? Leeds would be best.",
        [("list_sessions", "Sessions: SES-1 at the Royal Hall, Leeds; SES-2 at St Aidan's.")],
        [("list_sessions", {"region": "Leeds"})],
    )
    values = preferred_values(f).values
    assert values["enter_candidate.first_name"] == ["Isla"]
    assert values["enter_candidate.last_name"] == ["Fairbairn"]


def test_an_address_takes_the_flat_and_street_the_request_writes() -> None:
    assert street_addresses("The engineer was at Flat 2B, 17 Wellington Road yesterday.") == [
        "Flat 2B, 17 Wellington Road"
    ]
    assert takes_street_line("address", STR) and takes_street_line("property_address", STR)
    assert not takes_street_line("email_address", STR)
    find = tool("find_property", "Find a landlord's property", account_number=STR, address=STR)
    report = tool("report", "Report the record. Ends the task.", record_id=STR)
    f = facts([find, report], "Account LL-7731. You were at Flat 2B, 17 Wellington Road.")
    values = preferred_values(f).values
    assert values["find_property.address"] == ["Flat 2B, 17 Wellington Road"]
    assert values["find_property.account_number"] == ["LL-7731"]


def test_a_phone_number_read_aloud_is_taken_in_digits() -> None:
    """A number dictated digit by digit ("oh", "double", "triple") is found
    as if written; a short run of number words is no number."""
    from forge_core.guardrails.phones import spoken_digits

    said = "her number is oh one six one, four nine six, triple five - thanks"
    assert spoken_digits(said) == "her number is 0161 496 555 - thanks"
    assert spoken_digits("one or two of us, maybe three") == "one or two of us, maybe three"
    contact = {"type": "object", "properties": {"name": STR, "phone": STR}}
    visit = tool("book_visit", "Book a visit", contact=contact)
    f = facts([visit], "Ring my neighbour on oh two oh, seven nine four six, oh nine five eight.")
    assert preferred_values(f).values["book_visit.phone"] == ["020 7946 0958"]


def test_a_pattern_that_allows_a_plus_sign_does_not_ask_for_the_international_form() -> None:
    """`^\\+?[0-9 ]{10,16}$` takes a national number as written; `^\\+[1-9]`
    asks for the country code."""
    optional = tool("ring", "Ring", phone={"type": "string", "pattern": r"^\+?[0-9 ]{10,16}$"})
    f = facts([optional], "Please ring 0161 496 0555 after six.")
    assert preferred_values(f).values["ring.phone"] == ["0161 496 0555"]
    plus = tool("ring", "Ring", phone={"type": "string", "pattern": r"^\+[1-9][0-9]{7,14}$"})
    assert "ring.phone" not in preferred_values(facts([plus], "Please ring 0161 496 0555.")).values


def test_half_past_four_with_no_part_of_the_day_is_read_in_business_hours() -> None:
    """As "at four" is: 1-6 in the afternoon; a range's end after its
    morning start likewise; a part of the day said wins."""
    lesson = tool("book_lesson", "Book a lesson", start_time={"type": "string", "format": "time"})
    said = {
        "a lesson at half past three please": "15:30",
        "a lesson at quarter to five": "16:45",
        "a lesson at half past five in the morning": "05:30",
        "a lesson at half past ten": "10:30",
    }
    for request, expected in said.items():
        got = preferred_values(facts([lesson], request)).values["book_lesson.start_time"]
        assert got == [expected], request
    hours = {"type": "string", "description": "24-hour HH:MM"}
    shift = tool("set_shift", "Set a shift", start=hours, end=hours)
    f = facts([shift], "Put me on from half past eight in the morning until quarter past four.")
    found = preferred_values(f).values
    assert found["set_shift.start"] == ["08:30"] and found["set_shift.end"] == ["16:15"]


def test_fractions_spoken_after_a_number_are_part_of_it() -> None:
    from forge_core.guardrails.quantities import in_digits

    assert in_digits("nineteen and a half degrees") == "19.5 degrees"
    assert in_digits("3 and three quarters miles") == "3.75 miles"
    assert in_digits("a kilo and a half of flour") == "1.5 kilo of flour"
    assert in_digits("a half-price ticket") == "a half-price ticket"
    oven = tool("set_oven", "Set the oven", target_c={"type": "number", "multipleOf": 0.5})
    f = facts([oven], "Set it to two hundred and twelve and a half degrees.")
    assert preferred_values(f).values["set_oven.target_c"] == [212.5]


def test_a_date_time_is_the_day_written_with_the_time_written() -> None:
    """Relative days and clock times compose into date-times, a range's
    ends in order, for `format: date-time` and for plain strings the
    tool's description calls date-times; "the Friday after" follows the
    day before it."""
    stamp = {"type": "string", "format": "date-time"}
    hire = tool("hire_van", "Hire a van", collect_at=stamp, return_by=stamp)
    plain = ToolSpec(
        "book_court",
        "Book a court. arrive and leave are ISO 8601 date-times.",
        {"type": "object", "properties": {"arrive": STR, "leave": STR}},
    )
    wf = Workflow("wf", [hire, plain], terminal_tools=["hire_van"])
    wf.system_prompt = "Today is Wednesday 2026-07-01."
    said = "From 7am this Thursday until 6pm the Monday after, please."
    got = preferred_values(TurnFacts(wf, [said], [], [], [])).values
    assert got["hire_van.collect_at"] == ["2026-07-02T07:00:00"]
    assert got["hire_van.return_by"] == ["2026-07-06T18:00:00"]
    assert got["book_court.arrive"] == ["2026-07-02T07:00:00"]
    assert got["book_court.leave"] == ["2026-07-06T18:00:00"]
    same_day = preferred_values(TurnFacts(wf, ["tomorrow from 2pm to 4pm"], [], [], [])).values
    assert same_day["hire_van.collect_at"] == ["2026-07-02T14:00:00"]
    assert same_day["hire_van.return_by"] == ["2026-07-02T16:00:00"]


def test_the_weekday_after_is_read_from_the_day_before_it() -> None:
    today = date(2026, 7, 1)  # a Wednesday
    assert relative_dates("this Saturday, back the Tuesday after", today) == [
        date(2026, 7, 4),
        date(2026, 7, 7),
    ]
    assert relative_dates("on Monday and the following Friday", today) == [
        date(2026, 7, 6),
        date(2026, 7, 10),
    ]
    # With no day before it, the coming one; "after next" is a week on.
    assert relative_dates("the Friday after", today) == [date(2026, 7, 3)]
    assert relative_dates("the Friday after next", today) == [date(2026, 7, 10)]


def test_a_fortnight_is_fourteen_days() -> None:
    pause = tool("pause_deliveries", "Pause deliveries", days={"type": "integer", "maximum": 60})
    for said in ("for the next fortnight", "for a fortnight", "for two weeks"):
        got = preferred_values(facts([pause], f"Please pause them {said}.")).values
        assert got["pause_deliveries.days"] == [14], said


def test_minus_before_a_number_is_its_sign() -> None:
    from forge_core.guardrails.quantities import in_digits

    assert in_digits("aim for minus fourteen LUFS") == "aim for -14 LUFS"
    assert in_digits("negative 3 degrees") == "-3 degrees"
    # A subtraction keeps its word.
    assert in_digits("30 minus 10") == "30 minus 10"
    freezer = tool("set_freezer", "Set a freezer", target_c={"type": "number", "maximum": 0})
    f = facts([freezer], "Keep it at minus eighteen degrees C please.")
    assert preferred_values(f).values["set_freezer.target_c"] == [-18]


def test_half_two_is_half_past_two() -> None:
    """British "half two" is 2:30, read in business hours as "half past two" is."""
    lesson = tool("book_lesson", "Book a lesson", start_time={"type": "string", "format": "time"})
    said = {
        "a lesson at half two please": "14:30",
        "a lesson at half seven tonight": "19:30",
        "a lesson at half ten on Friday": "10:30",
    }
    for request, expected in said.items():
        got = preferred_values(facts([lesson], request)).values["book_lesson.start_time"]
        assert got == [expected], request
    flour = preferred_values(facts([lesson], "half 2 kilos of flour")).values
    assert "book_lesson.start_time" not in flour


def test_a_weekday_next_week_is_in_the_week_after_this_one() -> None:
    monday = date(2026, 11, 30)
    saturday = date(2026, 11, 28)
    assert relative_dates("on Thursday next week", monday) == [date(2026, 12, 10)]
    assert relative_dates("next week, Thursday", monday) == [date(2026, 12, 10)]
    # From a Saturday, next week starts on the coming Monday.
    assert relative_dates("Thursday next week", saturday) == [date(2026, 12, 3)]
    # "Monday week": a week on from the coming Monday (from today on a Monday).
    assert relative_dates("from Monday week", saturday) == [date(2026, 12, 7)]
    assert relative_dates("from Monday week", monday) == [date(2026, 12, 7)]
    assert relative_dates("next Thursday", monday) == [date(2026, 12, 3)]


def test_options_a_description_lists_act_as_an_enum() -> None:
    from forge_core.guardrails.described_options import described_options

    rules = tool(
        "get_rules", "The rules for a venue type (theatre, arena, club, pub).", venue_type=STR
    )
    level = {"type": "string", "description": "One of low, normal or high."}
    ticket = tool("open_ticket", "Open a ticket", priority=level, summary=STR)
    f = facts([rules, ticket], "We run a small club; the matter is of high urgency.")
    found = preferred_values(f).values
    assert found["get_rules.venue_type"] == ["club"]
    assert found["open_ticket.priority"] == ["high"]
    # Examples, prose parameters and lists nobody names change nothing.
    hint = {"type": "string", "description": "A city (e.g. Paris, Rome, Oslo)"}
    assert described_options("city", hint, "") == []
    notes = {"type": "string", "description": "Any of: gate code, parking, pets"}
    assert described_options("notes", notes, "") == []
    f = facts([rules, ticket], "Which rules apply to us?")
    assert "get_rules.venue_type" not in preferred_values(f).values


def test_from_quarter_to_four_and_a_pattern_of_clock_times() -> None:
    """ "from quarter to four" is 15:45 (no range, unlike "from 9 to 5"),
    for a parameter whose pattern clock times fit."""
    clock = {"type": "string", "pattern": "^[0-2][0-9]:[0-5][0-9]$"}
    visit = tool("book_visit", "Book a visit", arrive_after=clock)
    f = facts([visit], "I'm out at work, so can someone come from quarter to four?")
    assert preferred_values(f).values["book_visit.arrive_after"] == ["15:45"]


def test_a_street_is_an_address_line_and_no_persons_name() -> None:
    visit = tool("book_visit", "Book a visit", line1=STR, name=STR)
    f = facts([visit], "I'm locked out of 17 Cotham Vale, BS6 4TX. It's Priya Shah.")
    found = preferred_values(f).values
    assert found["book_visit.line1"] == ["17 Cotham Vale"]
    assert found["book_visit.name"] == ["Priya Shah"]
    assert names_in("Meet me at St Anne's Well Road, says Jo") == ["St Anne's Well Road", "Jo"]


def test_a_date_form_given_for_another_parameter_is_not_a_names() -> None:
    find = ToolSpec(
        "find_order",
        "Find an order by a surname and the wedding date (YYYY-MM-DD).",
        {"type": "object", "properties": {"surname": STR, "wedding_date": STR}},
    )
    wf = Workflow("wf", [find], terminal_tools=["find_order"])
    wf.system_prompt = "Today is Monday 2026-06-01."
    said = "It's Ade Okonjo-Reyes, our wedding is on the 22nd of August."
    found = preferred_values(TurnFacts(wf, [said], [], [], [])).values
    assert found["find_order.wedding_date"] == ["2026-08-22"]
    assert found.get("find_order.surname") != ["2026-08-22"]


def test_the_five_of_us_counts_the_riders() -> None:
    hire = tool("hire_bikes", "Hire bikes", riders=INT)
    f = facts([hire], "Can we hire bikes for the five of us on Sunday?")
    assert preferred_values(f).values["hire_bikes.riders"] == [5]


def test_a_date_on_the_latest_day_seen_is_that_day_and_a_weekday_fixes_the_year() -> None:
    from datetime import datetime

    from forge_core.guardrails.dates import dates_in

    # A result wrote 2026-03-21; the user's "Saturday 21st March" is that day.
    assert dates_in("moving in on Saturday 21st March", datetime(2026, 3, 21)) == (
        datetime(2026, 3, 21),
    )
    # A past event dated with its weekday: this year's Sunday 28 June.
    assert dates_in("collected on Sunday 28th June", datetime(2026, 7, 2)) == (
        datetime(2026, 6, 28),
    )
    # Without a weekday, a date without its year is the next one.
    assert dates_in("collected on 28 June", datetime(2026, 7, 2)) == (datetime(2027, 6, 28),)


def test_a_phone_number_the_request_labels_is_no_id_in_whole_or_in_part() -> None:
    from forge_core.guardrails.grounding import extract_candidates

    said = "Book me on the course, my mobile is 07700 900274."
    # Groups of up to six digits are one number, not two candidates.
    assert extract_candidates([said]) == ["07700 900274", "07700900274"]
    runs = tool("list_runs", "List course runs", course_code=STR)
    booking = tool("book", "Book a place", booking_ref=STR, mobile=STR)
    found = preferred_values(facts([runs, booking], said)).values
    assert "list_runs.course_code" not in found
    assert "book.booking_ref" not in found


def test_a_string_takes_the_enum_another_tool_gives_its_name() -> None:
    kinds = {"type": "string", "enum": ["survey", "storm_damage", "leak"]}
    slots = tool("find_slots", "Free slots", postcode=STR, visit_type=STR)
    book = tool("book_visit", "Book a visit", slot=STR, visit_type=kinds)
    f = facts([slots, book], "The storm took slates off; we need a storm damage report.")
    found = preferred_values(f).values
    assert found["find_slots.visit_type"] == ["storm_damage"]
    assert found["book_visit.visit_type"] == ["storm_damage"]


def test_a_weekday_then_a_clock_hour_is_no_day_of_the_month() -> None:
    thursday = date(2026, 12, 3)
    said = "the afternoon skate this Saturday, the two o'clock one"
    assert relative_dates(said, thursday) == [date(2026, 12, 5)]
    assert relative_dates("on Saturday, the 12th", thursday) == [date(2026, 12, 12)]


def test_a_results_far_date_does_not_move_the_year_of_a_day_the_user_writes() -> None:
    hire = ToolSpec(
        "reserve",
        "Reserve items for a hire period.",
        {"type": "object", "properties": {"hire_from": {"type": "string", "format": "date"}}},
    )
    wf = Workflow("wf", [hire], terminal_tools=["reserve"])
    wf.system_prompt = "Today is Saturday 2026-11-28."
    said = "We'd like them from 7 December, please."
    results = [("search", "- C-1: dress, available\n- C-2: gown, out on hire until 2027-01-10")]
    found = preferred_values(TurnFacts(wf, [said], results, [], [])).values
    assert found["reserve.hire_from"] == ["2026-12-07"]


def test_a_reports_status_takes_what_the_result_labels_status() -> None:
    from forge_core.guardrails.binding import bound_values

    results = [("get_claim", "C-12: filed 2026-03-02 - status ON_HOLD (awaiting photos).")]
    string = {"type": "string"}
    assert bound_values("latest_status", string, results, "reply") == ["ON_HOLD"]
    # The whole name, where the result writes it, comes first.
    both = [("get_claim", "status OPEN; latest status ON_HOLD, since Monday.")]
    assert bound_values("latest_status", string, both, "reply") == ["ON_HOLD"]
    assert bound_values("latest_note", string, results, "reply") == []


def test_a_things_number_is_the_number_written_after_its_noun() -> None:
    find = tool("find_grave", "Look up a grave", section=STR, grave_number=INT)
    f = facts([find], "My husband's grave, section D, grave 207. The stone is 900 mm tall.")
    assert preferred_values(f).values["find_grave.grave_number"] == [207]
    seat = tool("swap_seat", "Swap a seat", seat_no=INT)
    f = facts([seat], "Could I move to seat no. 14 please?")
    assert preferred_values(f).values["swap_seat.seat_no"] == [14]


def test_a_range_end_of_a_tool_that_gives_dates_as_yyyy_mm_dd_is_a_date() -> None:
    reserve = ToolSpec(
        "reserve",
        "Reserve items for a hire period (dates YYYY-MM-DD).",
        {"type": "object", "properties": {"hire_from": STR, "hire_to": STR, "send_to": STR}},
    )
    wf = Workflow("wf", [reserve], terminal_tools=["reserve"])
    wf.system_prompt = "Today is Saturday 2026-11-28."
    said = "From Monday 7 December to Sunday 20 December, sent to the stage door."
    found = preferred_values(TurnFacts(wf, [said], [], [], [])).values
    assert found["reserve.hire_from"] == ["2026-12-07"]
    assert found["reserve.hire_to"] == ["2026-12-20"]
    assert "reserve.send_to" not in found


def test_the_properties_of_a_oneof_branch_take_values_too() -> None:
    handover = {
        "oneOf": [
            {"type": "object", "properties": {"method": {"const": "collect"}}},
            {
                "type": "object",
                "properties": {
                    "method": {"const": "deliver"},
                    "address": {"type": "object", "properties": {"line1": STR, "floor": INT}},
                },
            },
        ]
    }
    rent = tool("rent_harp", "Rent a harp", handover=handover)
    f = facts([rent], "Deliver it to Flat 3, 14 Elm Row, Edinburgh, on the 3rd floor please.")
    found = preferred_values(f).values
    assert found["rent_harp.line1"] == ["Flat 3, 14 Elm Row"]
    assert found["rent_harp.floor"] == [3]


def test_the_users_own_name_stops_at_the_first_lowercase_word() -> None:
    from forge_core.guardrails.proper_names import own_names

    assert own_names(["Hi, it's Nell from Marram Grass."]) == {"Nell"}
    find = tool("find_project", "Find an artist's project", artist_name=STR)
    master = tool("create_job", "Create a mastering job", mix_id=STR)
    f = facts([find, master], "Hi, it's Nell from Marram Grass. Please master our new mix.")
    assert preferred_values(f).values["find_project.artist_name"] == ["Marram Grass"]


def test_a_reports_amount_named_with_its_unit_takes_the_labelled_amount() -> None:
    from forge_core.guardrails.binding import bound_values

    account = "O-1: price 640.00 EUR; deposit 160.00 EUR paid; balance 480.00 EUR due 2031-06-02."
    number = {"type": "number"}
    assert bound_values("balance_eur", number, [("get_account", account)], "reply") == [480.0]
    # Another unit than the one the name says: no label binds it.
    assert bound_values("balance_usd", number, [("get_account", account)], "reply") == []
