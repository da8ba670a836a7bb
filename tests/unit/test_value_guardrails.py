"""The value guardrails (forge_core/guardrails/): which values the evidence
supports for each parameter, and what the grammar then admits.

Pure logic on hand-made workflows (library loans, a greenhouse, a fleet of
vans, cloud volumes): no model is needed to say which values a parameter may
take. The loop test at the end uses the scripted backend and inspects the
request the loop sent.
"""

from __future__ import annotations

from typing import Any

from forge_core.backends.scripted import ScriptedBackend, call
from forge_core.grammar import build_grammar
from forge_core.guardrails import FailedValue, TurnFacts
from forge_core.guardrails.decline import declining_members, out_of_scope
from forge_core.guardrails.mentions import named_members
from forge_core.guardrails.registry import preferred_values
from forge_core.guardrails.yes_no import stated
from forge_core.loop import ToolOutcome, run_workflow
from forge_core.messages import ToolCallInfo
from forge_core.workflow import ToolSpec, Workflow


def tool(tool_name: str, description: str, /, **props: dict[str, Any]) -> ToolSpec:
    return ToolSpec(
        tool_name,
        description,
        {"type": "object", "properties": props, "required": list(props)},
    )


STR: dict[str, Any] = {"type": "string"}


def facts(
    tools: list[ToolSpec],
    request: str,
    results: list[tuple[str, str]] | None = None,
    terminal: list[str] | None = None,
    failures: list[FailedValue] | None = None,
) -> TurnFacts:
    wf = Workflow("wf", tools, terminal_tools=terminal or [tools[-1].name])
    return TurnFacts(wf, [request], results or [], failures or [])


def test_a_result_label_carries_an_id_into_the_next_call() -> None:
    lookup = tool("find_member", "Find a library member by card number", card=STR)
    renew = tool("renew_loan", "Renew a loan", member_id=STR, loan_ref=STR)
    f = facts(
        [lookup, renew],
        "Renew the loan of card holder 7781-22, mail jo@lib.example",
        [("find_member", "member id M-9043 (Jo Park), open loan ref LN-552 due Friday")],
    )
    got = preferred_values(f).values
    assert got["renew_loan.member_id"] == ["M-9043"]
    assert got["renew_loan.loan_ref"] == ["LN-552"]


def test_an_id_labelled_as_another_kind_does_not_fill_this_one() -> None:
    chart = tool("get_van", "Get a van's record and its driver", van_id=STR)
    roster = tool("list_shifts", "List a driver's shifts", driver_id=STR)
    done = tool("report", "Report", text=STR)
    f = facts([chart, roster, done], "Van V-311 needs its driver's shifts.")
    p = preferred_values(f)
    assert p.values["get_van.van_id"] == ["V-311"]
    # No driver id yet: listing shifts has to wait for the van's record.
    assert "list_shifts" in p.blocked
    later = facts(
        [chart, roster, done],
        "Van V-311 needs its driver's shifts.",
        [("get_van", "Van V-311, diesel. Driver: driver id DR-70 (K. Ode).")],
    )
    p = preferred_values(later)
    assert p.values["list_shifts.driver_id"] == ["DR-70"] and not p.blocked


def test_the_entry_the_request_describes_wins_among_equal_labels() -> None:
    search = tool("search_books", "Search the catalogue by title", title=STR)
    hold = tool("place_hold", "Place a hold on a copy", copy_id=STR)
    f = facts(
        [search, hold],
        "Hold the large print edition of Middlemarch",
        [
            (
                "search_books",
                "2 copies: Middlemarch, paperback, copy id C-100; "
                "Middlemarch, large print edition, copy id C-205.",
            )
        ],
    )
    assert preferred_values(f).values["place_hold.copy_id"] == ["C-205"]


def test_quantities_fill_the_parameter_of_their_unit() -> None:
    heat = tool(
        "set_heating",
        "Set the greenhouse heating",
        target_c={"type": "integer", "description": "Target in Celsius"},
        budget_usd={"type": "number"},
        hours={"type": "integer"},
    )
    f = facts(
        [heat],
        "Keep it at 18 degrees for 6 hours, spending at most $40.",
        [("set_heating", "currently 12 C")],
    )
    got = preferred_values(f).values
    assert got["set_heating.target_c"] == [18]  # the request's, not the result's 12
    assert got["set_heating.budget_usd"] == [40]
    assert got["set_heating.hours"] == [6]


def test_enum_members_named_by_the_request_or_for_a_report_by_the_results() -> None:
    assert named_members(["on_hold", "shipped", "lost"], "it was shipped on Monday") == ["shipped"]
    assert named_members(["2027-05", "2027-06"], "the June invoice") == ["2027-06"]
    assert named_members(["2027-05", "2027-06"], "you may pay later") == []
    days = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    assert named_members(days, "water it at weekends") == ["sat", "sun"]
    check = tool("check_order", "Check an order", order=STR)
    report = tool(
        "report",
        "Report the order's state",
        state={"type": "string", "enum": ["on_hold", "shipped", "lost"]},
    )
    f = facts([check, report], "Is my order on hold?", [("check_order", "Shipped today.")])
    assert preferred_values(f).values["report.state"] == ["shipped"]


def test_a_stated_boolean_and_its_negation() -> None:
    assert stated("send_receipt", ["Book it and send me a receipt."]) is True
    assert stated("send_receipt", ["Book it, but don't send a receipt."]) is False
    assert stated("send_receipt", ["Book it."]) is None
    assert stated("send_receipt", ["Book it, a receipt is not needed."]) is False
    # A joining word of the name says nothing of the flag.
    assert stated("call_on_arrival", ["Put it on my account."]) is None
    # A negation further on speaks of something else.
    later = ["Book it and send a receipt to the office - don't post anything."]
    assert stated("send_receipt", later) is True


def test_an_error_that_names_the_value_drives_the_retry() -> None:
    lookup = tool("get_volume", "Get a cloud volume", volume=STR)
    done = tool("report", "Report", text=STR)
    failure = FailedValue(
        "get_volume", {"volume": "88"}, "volume ids look like vol-0088, try again"
    )
    f = facts([lookup, done], "Show volume 88", failures=[failure])
    assert preferred_values(f).values["get_volume.volume"] == ["vol-0088"]


def test_a_list_takes_one_listing_each_item_once_in_order() -> None:
    shelf = tool("list_shelf", "List a shelf's books", shelf=STR)
    borrow = ToolSpec(
        "borrow",
        "Borrow books",
        {
            "type": "object",
            "properties": {"book_ids": {"type": "array", "items": STR}},
            "required": ["book_ids"],
        },
    )
    f = facts(
        [shelf, borrow],
        "Borrow everything on shelf S-2",
        [("list_shelf", "Shelf S-2: BK-1001 atlas; BK-1042 poems; BK-1107 maps.")],
    )
    p = preferred_values(f)
    assert p.items["borrow.book_ids"] == ["BK-1001", "BK-1042", "BK-1107"]
    grammar = build_grammar([borrow], preferred_items=p.items)
    assert grammar is not None
    # Ordered selections only: after BK-1107 nothing may follow.
    assert 'borrow-args-book-ids-after-1 ::= (sp "," sp ("\\"BK-1107\\""))?' in grammar


def test_the_grammar_admits_only_preferred_values_the_schema_allows() -> None:
    t = tool("pay", "Pay", amount={"type": "integer", "minimum": 1}, note=STR)
    grammar = build_grammar([t], preferred_values={"pay.amount": [0, 250], "pay.note": ["rent"]})
    assert grammar is not None
    assert 'pay-args-amount ::= "250"' in grammar
    assert 'pay-args-note ::= "\\"rent\\""' in grammar


def test_out_of_scope_requests_decline() -> None:
    track = tool("track_van", "Track a delivery van by its plate", plate=STR)
    route = tool("plan_route", "Plan a delivery route between depots", start=STR)
    assert out_of_scope([track, route], "Write me a poem about autumn")
    assert not out_of_scope([track, route], "Where is the van with plate KX-12?")
    close = tool(
        "close",
        "Close the ticket",
        outcome={"type": "string", "enum": ["done", "declined_out_of_scope", "pending"]},
    )
    assert declining_members([close]) == {"close.outcome": ["declined_out_of_scope"]}


class _Executor:
    def __init__(self) -> None:
        self.executed: list[tuple[str, dict[str, Any]]] = []

    async def execute(self, infos: list[ToolCallInfo], iteration: int) -> list[ToolOutcome]:
        self.executed += [(c.name, c.args) for c in infos]
        return [ToolOutcome(output="Van V-9 driver id DR-4") for c in infos]


async def test_the_loop_sends_the_preferred_values_and_declines_out_of_scope() -> None:
    van = tool("get_van", "Get a van's record", van_id=STR)
    shifts = tool("list_shifts", "List a driver's shifts", driver_id=STR)
    close = tool(
        "close",
        "Close the request",
        outcome={"type": "string", "enum": ["done", "declined_out_of_scope"]},
    )
    wf = Workflow("fleet", [van, shifts, close], terminal_tools=["close"])
    backend = ScriptedBackend(
        scripts={"fleet": [call("get_van", van_id="V-9"), call("close", outcome="done")]}
    )
    await run_workflow(
        wf, "Shifts of the driver of van V-9?", backend=backend, executor=_Executor()
    )
    first, second = backend.requests[0], backend.requests[1]
    assert first.preferred_values["get_van.van_id"] == ["V-9"]
    assert "list_shifts" not in first.allowed
    assert second.preferred_values["list_shifts.driver_id"] == ["DR-4"]

    backend = ScriptedBackend(scripts={"fleet": [call("close", outcome="declined_out_of_scope")]})
    await run_workflow(wf, "Write me a poem about autumn", backend=backend, executor=_Executor())
    request = backend.requests[0]
    assert request.allowed == ["close"]
    assert request.preferred_values["close.outcome"] == ["declined_out_of_scope"]


def test_a_failed_call_frees_another_slot_but_keeps_the_patient() -> None:
    rooms = tool("list_rooms", "List a building's free rooms", building_id=STR)
    book = tool("book_room", "Book a room for a guest", room_id=STR, guest_id=STR)
    done = tool("report", "Report", text=STR)
    f = facts(
        [rooms, book, done],
        "Book a room in building B-12 for guest G-77",
        [("list_rooms", "Free in B-12: RM-101 ground floor; RM-204 second floor.")],
        failures=[
            FailedValue("book_room", {"room_id": "RM-101", "guest_id": "G-77"}, "Booking refused.")
        ],
    )
    got = preferred_values(f).values
    assert got["book_room.room_id"] == ["RM-204"]
    assert got["book_room.guest_id"] == ["G-77"]


def test_a_path_the_request_names_and_the_edit_it_asks_for() -> None:
    read = tool("read_config", "Read a config file", path=STR)
    write = tool("save_config", "Save a config file", path=STR, content=STR)
    f = facts(
        [read, write],
        "In deploy/web.yaml change replicas to 4.",
        [("read_config", "image: web:1.2\nreplicas: 2\nport: 80")],
    )
    got = preferred_values(f).values
    assert got["save_config.path"] == ["deploy/web.yaml"]
    assert got["save_config.content"] == ["image: web:1.2\nreplicas: 4\nport: 80"]
    # No assignment the file has a line for: nothing is offered.
    other = facts([read, write], "In deploy/web.yaml add a label.", f.results)
    assert "save_config.content" not in preferred_values(other).values


def test_a_result_that_found_nothing_counts_as_a_failure_of_its_arguments() -> None:
    from forge_core.guardrails import reports_nothing

    assert reports_nothing("No open tables for that time.")
    assert reports_nothing("Booking refused: check the table id.")
    assert not reports_nothing("Table T-4 booked for 19:30; booking ref BK-88.")


def test_a_lookup_takes_a_name_the_user_wrote_never_the_schema_example() -> None:
    from forge_core.guardrails.proper_names import names_in

    # A sentence's first word may or may not belong to the name: both.
    assert names_in("Is the museum in Buenos Aires open on Monday? Ask Ana Lima.") == [
        "Buenos Aires",
        "Ask Ana Lima",
        "Ana Lima",
    ]
    find = tool("find_museum", "Find a museum", city={"type": "string"}, note=STR)
    done = tool("report", "Report", text=STR)
    got = preferred_values(facts([find, done], "Which museums are open in Porto?")).values
    assert got["find_museum.city"] == ["Porto"]
    assert "find_museum.note" not in got and "report.text" not in got


def test_numbers_in_words_and_other_units_of_the_same_kind() -> None:
    extend = tool(
        "extend_permit",
        "Extend a parking permit",
        permit_ref=STR,
        extra_days={"type": "integer"},
        fee_eur={"type": "number"},
    )
    f = facts([extend], "Please add two more weeks to permit PK-31, up to forty euros.")
    got = preferred_values(f).values
    assert got["extend_permit.extra_days"] == [14]
    assert got["extend_permit.fee_eur"] == [40]


def test_a_phone_parameter_takes_the_phone_number_not_the_callers_name() -> None:
    find = tool("find_owner", "Find an owner by phone", owner_phone=STR)
    done = tool("report", "Report", text=STR)
    f = facts([find, done], "Hi, this is Malik Haddad, phone 0177 5523 901, about Juno.")
    assert preferred_values(f).values["find_owner.owner_phone"] == ["0177 5523 901"]


def test_dates_the_user_wrote_in_the_parameters_format() -> None:
    lookup = tool("get_stay", "Get a hotel stay", stay_ref=STR)
    change = tool(
        "change_checkout",
        "Change a stay's check-out day",
        stay_ref=STR,
        checkout={"type": "string", "format": "date"},
    )
    f = facts(
        [lookup, change],
        "Can I stay until October 3rd? My stay is HS-88. I leave in 20 minutes.",
        [("get_stay", "Stay HS-88: check-in 2027-09-28, check-out 2027-10-01.")],
    )
    # The year the request leaves out is the stay's; "20 minutes" is no date.
    assert preferred_values(f).values["change_checkout.checkout"] == ["2027-10-03"]


def test_a_day_relative_to_the_today_the_system_prompt_states() -> None:
    book = tool("book_tasting", "Book a wine tasting", day={"type": "string", "format": "date"})
    wf = Workflow(
        "wf",
        [book],
        terminal_tools=["book_tasting"],
        system_prompt="You book tastings for a vineyard. Today is Wednesday 2031-07-02.",
    )

    def day(request: str) -> list[Any]:
        return preferred_values(TurnFacts(wf, [request], [], [])).values.get("book_tasting.day", [])

    assert day("Could we come tomorrow afternoon?") == ["2031-07-03"]
    # A weekday alone is the next one: said on a Wednesday, "Wednesday" is next week's.
    assert day("Is Saturday possible? Or else Wednesday.") == ["2031-07-05", "2031-07-09"]
    assert day("Any time in two weeks") == ["2031-07-16"]
    # Recurring days are not dates.
    assert day("We are free on Mondays") == []


def test_an_error_that_states_a_prefix_and_a_width_repairs_the_value() -> None:
    from forge_core.guardrails.error_values import repaired

    error = "serial '5521' is not valid: serials are 'GX-' followed by exactly six digits"
    assert repaired("5521", error) == ["GX-005521"]
    assert repaired("5521", "the code has 6 digits") == ["005521"]


def test_a_percentage_for_a_parameter_that_takes_a_decimal() -> None:
    loan = tool(
        "loan_cost",
        "Cost of a loan",
        rate={"type": "number", "description": "Annual rate as a decimal: 5% is 0.05."},
        fee_percent={"type": "number"},
    )
    got = preferred_values(facts([loan], "At 7% a year, fee 2%")).values
    assert got["loan_cost.rate"] == [0.07, 0.02]
    assert got["loan_cost.fee_percent"] == [7, 2]


def test_a_name_is_what_the_request_calls_by_the_tools_noun() -> None:
    check = tool("inspect_boiler", "Inspect a boiler by name", name=STR)
    done = tool("report", "Report", text=STR)
    got = preferred_values(facts([check, done], "Inspect boiler B12 today.")).values
    assert got["inspect_boiler.name"] == ["B12"]


def test_a_number_written_in_groups_of_digits_is_one_identifier() -> None:
    from forge_core.guardrails.grounding import extract_candidates

    lookup = tool("get_meter", "Look a gas meter up by its serial number", meter_number=STR)
    done = tool("report", "Report", text=STR)
    f = facts([lookup, done], "My meter is 5502 8817 31 and it reads 2 more than last month.")
    # Not its first group: the whole number, as written.
    assert preferred_values(f).values["get_meter.meter_number"] == ["5502 8817 31"]
    # A list of short numbers, years and amounts stay apart.
    assert extract_candidates(["Rooms 402 407 411, years 2025 2026"]) == [
        "402",
        "407",
        "411",
        "2025",
        "2026",
    ]


def test_a_report_keeps_to_the_record_the_user_asked_about() -> None:
    look = tool("get_claim", "Get a warranty claim", claim_ref=STR)
    report = tool(
        "report_claim",
        "Report a claim's state",
        claim_ref=STR,
        state={"type": "string", "enum": ["open", "approved", "rejected"]},
    )
    f = facts(
        [look, report],
        "Has my warranty claim WC-7731-02 been approved yet?",
        [
            (
                "get_claim",
                "WC-7731-02: open, waiting for photos. Earlier claim WC-6610-01: approved.",
            )
        ],
        terminal=["report_claim"],
    )
    got = preferred_values(f).values
    # Both are claim refs and the result names both: the user's own wins,
    # and so does the state the result gives for it.
    assert got["report_claim.claim_ref"] == ["WC-7731-02"]
    assert got["report_claim.state"] == ["open"]


def test_a_move_takes_the_new_time_written_after_to() -> None:
    listing = tool("list_fittings", "List a customer's fittings", customer=STR)
    listing.read_only = True
    move = tool("move_fitting", "Move a fitting to a new slot", fitting_id=STR, time_24h=STR)
    f = facts(
        [listing, move],
        "Please move my 4pm fitting to Friday at nine.",
        [("list_fittings", "FT-12 Thu 16:00; FT-19 Sat 11:00")],
    )
    got = preferred_values(f).values
    assert got["move_fitting.time_24h"] == ["09:00"]
    # "at 3" alone is in the afternoon; "at 10 Main Street" is no time.
    from forge_core.guardrails.times import times_in

    assert times_in("Could we say at 3, near the shop at 10 Main Street?") == [(15, 0)]
    # Nor a number with decimals, a reading rather than a time.
    assert times_in("It peaked at 11.4 degrees, back by 6:15.") == [(6, 15)]
    assert times_in("See you at 11.") == [(11, 0)]


def test_a_route_takes_its_start_after_from_and_its_end_after_to() -> None:
    search = tool(
        "find_trains", "Find trains between two stations", origin_station=STR, arrival_city=STR
    )
    book = tool("book_seat", "Book a seat", train_id=STR)
    f = facts([search, book], "Any trains from Lyon Part Dieu to Turin on Friday 4 June 2027?")
    got = preferred_values(f).values
    assert got["find_trains.origin_station"] == ["Lyon Part Dieu"]
    assert got["find_trains.arrival_city"] == ["Turin"]
    # "Friday 4 June 2027" is one date, not also next Friday.
    dated = tool("find_buses", "Find buses", day={"type": "string", "format": "date"})
    f = facts([dated, book], "Any buses on Friday 4 June 2027?")
    assert preferred_values(f).values["find_buses.day"] == ["2027-06-04"]


def test_letters_of_codes_in_a_listing_are_no_words_of_the_request() -> None:
    from forge_core.guardrails.entries import described

    listing = (
        "PO-7: RM-101 bolts (in stock, bay A4-2); RM-102 nuts (in stock, bay C1-9); "
        "RM-103 washers (on order)."
    )
    request = ["Ship a crate of everything in stock on PO-7."]
    # "a" of the request is not the "A" of bay A4-2: both stocked lines.
    assert described(["RM-101", "RM-102", "RM-103"], [listing], request, set()) == [
        "RM-101",
        "RM-102",
    ]


def test_a_report_takes_the_longer_member_and_a_hyphenated_count() -> None:
    look = tool("get_lot", "Get a parking lot's state", lot_id=STR)
    report = tool(
        "report_lot",
        "Report a lot",
        state={"type": "string", "enum": ["open", "partly_open", "closed"]},
        evchargers_free={"type": "integer"},
    )
    f = facts(
        [look, report],
        "Can I charge my car at lot L-4?",
        [("get_lot", "L-4: partly open (level 2 shut). Free: 3 ev-chargers, 40 bays.")],
        terminal=["report_lot"],
    )
    got = preferred_values(f).values
    # "open" is only said inside "partly open"; 3 counts the ev-chargers.
    assert got["report_lot.state"] == ["partly_open"]
    assert got["report_lot.evchargers_free"] == [3]


def test_items_an_error_names_leave_the_list_and_the_other_argument_alone() -> None:
    lines = tool("get_lines", "Get an order's lines", order_id=STR)
    stock = tool("check_shelf_stock", "Units on a shelf", shelf=STR)
    pick = ToolSpec(
        "create_pick",
        "Create a pick",
        {
            "type": "object",
            "properties": {"order_id": STR, "skus": {"type": "array", "items": STR}},
            "required": ["order_id", "skus"],
        },
    )
    sent = {"order_id": "ORD-12", "skus": ["SK-101", "SK-102", "SK-103"]}
    f = facts(
        [lines, stock, pick],
        "Pick order ORD-12, all of it.",
        [
            ("get_lines", "ORD-12: SK-101 pens; SK-102 pads; SK-103 ink."),
            ("check_shelf_stock", "Shelf S4: 12 units."),
        ],
        failures=[FailedValue("create_pick", sent, "not on hand: SK-102")],
    )
    got = preferred_values(f)
    assert got.items["create_pick.skus"] == ["SK-101", "SK-103"]
    # The error is about the list: the order id is not rewritten as an SK- id.
    assert got.values["create_pick.order_id"] == ["ORD-12"]


def test_a_list_of_enum_members_named_by_their_gist() -> None:
    book = ToolSpec(
        "book_service",
        "Book a car service",
        {
            "type": "object",
            "properties": {
                "jobs": {
                    "type": "array",
                    "items": {"type": "string", "enum": ["oil_change", "tyre_rotation", "mot"]},
                }
            },
            "required": ["jobs"],
        },
    )
    f = facts([book], "Book my car in for its MOT, and do the tyres please.")
    assert preferred_values(f).values["book_service.jobs"] == [["tyre_rotation", "mot"]]


def test_the_items_of_a_list_of_objects_are_named_by_their_gist_too() -> None:
    """An item's enum member is named as a list's members are ("the swans"
    for `swan_pair`), but not by a qualifier ("only") nor by a word of the
    tool's own name ("carve" asks `carve_order` for no `carved_bowl`)."""
    design: dict[str, Any] = {"type": "string", "enum": ["swan_pair", "vodka_luge", "carved_bowl"]}
    piece = {
        "type": "object",
        "properties": {
            "design": design,
            "ticket": {"type": "string", "enum": ["standard", "collect_only"]},
        },
        "required": ["design"],
    }
    order = tool("carve_order", "Order ice carvings", pieces={"type": "array", "items": piece})
    f = facts([order], "Please carve the swans, and the vodka luge, for Saturday only.")
    got = preferred_values(f).values
    assert got["carve_order.design"] == ["swan_pair", "vodka_luge"]
    assert "carve_order.ticket" not in got
    # Outside a list of objects a member is named only by its own words.
    single = tool("carve_one", "Order one ice carving", design=design)
    alone = preferred_values(facts([single], "Please carve the swans, and the vodka luge."))
    assert alone.values["carve_one.design"] == ["vodka_luge"]


def test_the_people_of_an_array_of_objects_get_their_names_and_dates() -> None:
    person = {
        "type": "object",
        "properties": {
            "first_name": STR,
            "last_name": STR,
            "born": {"type": "string", "format": "date"},
        },
        "required": ["first_name", "last_name", "born"],
    }
    register = ToolSpec(
        "register_campers",
        "Register children for camp",
        {
            "type": "object",
            "properties": {"campers": {"type": "array", "items": person}},
            "required": ["campers"],
        },
    )
    f = facts(
        [register],
        "Please sign up Noor Haddad, born 2 May 2016, and Sami Haddad, born 9 June 2018.",
    )
    got = preferred_values(f).values
    assert got["register_campers.first_name"] == ["Noor", "Sami"]
    assert got["register_campers.last_name"] == ["Haddad"]
    assert got["register_campers.born"] == ["2016-05-02", "2018-06-09"]


def test_a_request_without_the_number_every_tool_needs_is_out_of_scope() -> None:
    from forge_core.guardrails.decline import lacks_numbers

    convert = tool("convert_temperature", "Convert a temperature", value={"type": "number"})
    area = tool("circle_area", "Area of a circle", radius={"type": "number"})
    assert lacks_numbers([convert, area], "What is the boiling point of tin?")
    assert not lacks_numbers([convert, area], "Convert 21 degrees to Fahrenheit")
    assert not lacks_numbers([convert, area], "the area of a circle of radius three")
    # A number may come from a word of time, or a tool may need none.
    assert not lacks_numbers([convert], "What will it be next week?")
    lookup = tool("find_element", "Find a chemical element", name=STR)
    assert not lacks_numbers([convert, lookup], "What is the boiling point of tin?")


def test_a_report_takes_the_labelled_state_the_users_id_and_the_lettered_entry() -> None:
    from forge_core.guardrails.entries import described

    look = tool("get_return", "Get a return", return_ref=STR)
    report = tool(
        "report_return",
        "Report a return",
        return_ref=STR,
        status={"type": "string", "enum": ["received", "inspecting", "refunded"]},
    )
    f = facts(
        [look, report],
        "I sent back my kettle, return RT-4410. Where is it at?",
        [
            (
                "get_return",
                "RT-4410 received 03-02. Status inspecting. Other parcel RT-4411 refunded.",
            )
        ],
        terminal=["report_return"],
    )
    got = preferred_values(f).values
    # The state its label names; the user's id over the one of its shape beside it.
    assert got["report_return.status"] == ["inspecting"]
    assert "RT-4411" not in got["report_return.return_ref"]
    assert "RT-4410" in got["report_return.return_ref"]
    # A letter on its own tells entries apart; a heading with parentheses goes.
    listing = ["Dock House (S-2): gate A = GT-11, gate B = GT-12."]
    assert described(["GT-11", "GT-12"], listing, ["At Dock House gate B is stuck."], set()) == [
        "GT-12"
    ]


def test_a_stays_ends_from_weekdays_with_their_day_of_the_month() -> None:
    book = tool("quote_room", "Price a room (dates YYYY-MM-DD)", arrive=STR, leave_on=STR)
    book.parameters["properties"] = {"check_in": STR, "check_out": STR}
    wf = Workflow(
        "wf",
        [book],
        terminal_tools=["quote_room"],
        system_prompt="You quote rooms. Today is Monday 2031-03-03.",
    )
    got = preferred_values(
        TurnFacts(wf, ["Can we come from Friday the 14th until Sunday the 16th?"], [], [])
    ).values
    assert got["quote_room.check_in"] == ["2031-03-14"]
    assert got["quote_room.check_out"] == ["2031-03-16"]


def test_an_entry_the_request_leaves_out_is_not_meant() -> None:
    from forge_core.guardrails.entries import described

    listing = [
        "Basket B-7: IT-11 oat milk (low stock); IT-12 rye bread (low stock); "
        "IT-13 jam (in stock); IT-14 olive oil (low stock)."
    ]
    request = ["Reorder everything that is low stock, except the olive oil for now."]
    assert described(["IT-11", "IT-12", "IT-13", "IT-14"], listing, request, set()) == [
        "IT-11",
        "IT-12",
    ]


def test_a_place_named_for_a_ranges_end_takes_no_date() -> None:
    from forge_core.guardrails.dates import takes_date_by_tool

    described = "Find sailings (date YYYY-MM-DD) between two ports"
    assert takes_date_by_tool("check_in", STR, described)
    assert not takes_date_by_tool("departure_port", STR, described)
    assert not takes_date_by_tool("check_in", STR, "Find sailings between two ports")


async def test_a_workflow_that_can_only_end_by_declining_declines_at_once() -> None:
    from forge_core.guardrails.decline import only_declines

    van = tool("get_van", "Get a van's record", van_id=STR)
    decline = tool("decline_request", "Tell the user this desk cannot help", reason=STR)
    close = tool(
        "close", "Close", outcome={"type": "string", "enum": ["done", "declined_out_of_scope"]}
    )
    reject = tool("reject_parcels", "Reject damaged parcels", reason=STR)
    assert only_declines([decline], "respond")
    # A tool that also ends a served run, or acts on something, is no decline.
    assert not only_declines([close], "respond")
    assert not only_declines([reject], "respond")
    assert not only_declines([decline, close], "respond")
    wf = Workflow("fleet", [van, decline], terminal_tools=["decline_request"])
    backend = ScriptedBackend(scripts={"fleet": [call("decline_request", reason="no")]})
    # It shares "van" with get_van, yet nothing but a decline can end the run.
    await run_workflow(wf, "Can you paint my van red?", backend=backend, executor=_Executor())
    assert backend.requests[0].allowed == ["decline_request"]


def test_an_error_about_one_argument_does_not_blame_the_others() -> None:
    lookup = tool("find_site", "Find a customer's site", account=STR)
    book = tool("book_visit", "Book a visit", unit_id=STR, contact_phone=STR)
    listing = "Site S-1: unit_A1 boiler room, last visited 2031-01-02; unit_B2 plant room."
    request = "Account AC-7: please service the boiler room unit. My phone is 07700 900123."
    sent = {"unit_id": "unit_A1", "contact_phone": "07700 900123"}
    about_phone = FailedValue("book_visit", sent, "contact_phone rejected: use +44 format")
    got = preferred_values(
        facts([lookup, book], request, [("find_site", listing)], failures=[about_phone])
    )
    assert got.values["book_visit.unit_id"] == ["unit_A1"]
    # An error that names no argument blames them all: the other unit then.
    vague = FailedValue("book_visit", sent, "Booking refused.")
    got = preferred_values(
        facts([lookup, book], request, [("find_site", listing)], failures=[vague])
    )
    assert got.values["book_visit.unit_id"] == ["unit_B2"]


def test_a_part_of_the_day_names_am_or_pm_but_a_greeting_does_not() -> None:
    half = {"type": "string", "enum": ["am", "pm"]}
    visit = tool("book_visit", "Book a survey visit", date=STR, slot=half)
    said = preferred_values(facts([visit], "Could you come on the morning of Friday 6 March?"))
    assert said.values["book_visit.slot"] == ["am"]
    later = preferred_values(facts([visit], "Hi, Friday afternoon suits us best."))
    assert later.values["book_visit.slot"] == ["pm"]
    greeting = preferred_values(facts([visit], "Good morning! Can someone visit on Friday?"))
    assert "book_visit.slot" not in greeting.values
