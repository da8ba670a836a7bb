"""Held out, second group: sixteen workflows in businesses neither `domains`
nor `heldout` touches, written from the user's side only (not the engine)
after `heldout` had been tuned on. This module: lost luggage, pet boarding,
solar installs, blood donation, hearing-aid repairs, lifts, grocery
substitutions, instrument booking; heldout2_part2 the other eight. Each is
tagged `heldout2` plus one failure kind of issue 34 (the names `heldout` uses).
"""

from __future__ import annotations

from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, has_number, mentions, same
from forge_evals.scenarios import heldout2_part2
from forge_evals.scenarios._domain_schema import (
    HELDOUT2_TAG,
    enum_param,
    exact_ids,
    id_list,
    obj,
    text_param,
)

# ── lost luggage: the bag tag from the file, the window id from the slots ──

_BAG_TAG = "0125BA771204"


def _luggage() -> Workflow:
    wf = Workflow(
        "lost_bag_delivery",
        "Help passengers whose checked bags did not arrive.",
        system_prompt="You are the airline's baggage services assistant. You can open a "
        "delayed-bag file, offer courier delivery windows and arrange delivery. "
        "Today is Thursday 2026-07-09.",
    )

    @wf.tool(required=True, read_only=True)
    def get_baggage_file(file_reference: str) -> str:
        """Open a delayed-baggage file by its file reference."""
        if not same(file_reference, "LHRBA40217"):
            raise ToolResolutionError(f"no baggage file {file_reference!r}")
        return (
            "File LHRBA40217, passenger A. Moreau, flight BA 0367 from Lyon 2026-07-08. "
            f"1 bag: black hard-shell suitcase, tag number {_BAG_TAG}, traced to Heathrow T5, "
            "arrived 2026-07-09 06:40. Delivery address on file: Premier Inn, 85 York Road, SE1."
        )

    @wf.tool(required=True, read_only=True, prerequisites=["get_baggage_file"])
    def list_delivery_windows(bag_tag: str) -> str:
        """List the courier's delivery windows for a traced bag. Each window has a window id."""
        if "".join(ch for ch in str(bag_tag) if ch.isalnum()) != _BAG_TAG:
            raise ToolResolutionError(f"no traced bag with tag {bag_tag!r}")
        return (
            "Windows for 0125BA771204: DW-3391 today 14:00-18:00; DW-3392 today "
            "18:00-22:00; DW-3404 tomorrow 08:00-12:00."
        )

    @wf.tool(terminal=True, prerequisites=["list_delivery_windows"])
    def arrange_bag_delivery(bag_tag: str, window_id: str) -> str:
        """Book the courier to bring a bag to the address on file in one window. Ends the task."""
        return f"Courier booked for {bag_tag} in {window_id}."

    @wf.tool
    def close_baggage_file(file_reference: str) -> str:
        """Close a baggage file as resolved; no further tracing or delivery is possible."""
        return f"{file_reference} closed."

    @wf.tool
    def submit_expense_claim(file_reference: str, amount_gbp: float) -> str:
        """Claim back essentials bought while the bag was missing."""
        return f"Claim of {amount_gbp} GBP lodged on {file_reference}."

    return wf


LOST_BAG_DELIVERY = Scenario(
    name="lost_bag_delivery",
    description="Lost luggage: deliver bag tag 0125BA771204 (from the file, not the file "
    "reference) in the evening window DW-3392 (from the window list); file not closed.",
    tags=(HELDOUT2_TAG, "carry_id"),
    user_message=(
        "Hi, my suitcase didn't make it onto my flight from Lyon yesterday. My file reference "
        "is LHRBA40217. Can it be brought to my hotel this evening? I'm out all afternoon."
    ),
    build=_luggage,
    validate=lambda tool, args: (
        tool == "arrange_bag_delivery"
        and "".join(ch for ch in str(args.get("bag_tag")) if ch.isalnum()) == _BAG_TAG
        and same(args.get("window_id"), "DW-3392")
    ),
    ideal_iterations=3,
    reference=(
        RefCall("get_baggage_file", {"file_reference": "LHRBA40217"}),
        RefCall("list_delivery_windows", {"bag_tag": _BAG_TAG}),
        RefCall("arrange_bag_delivery", {"bag_tag": _BAG_TAG, "window_id": "DW-3392"}),
    ),
    forbidden_tools=("close_baggage_file",),
)

# ── pet boarding: owner id, then the dog's id, then the quote id ──────────

_QUOTE = "QT-7Y3K0P"


def _boarding() -> Workflow:
    wf = Workflow(
        "pet_boarding_quote",
        "Book stays at a pet boarding kennels and cattery.",
        system_prompt="You take bookings for Hillside Kennels & Cattery. Look the owner up by "
        "phone, find the pet, get a quote and book it. Today is Wednesday 2026-06-10.",
    )

    @wf.tool(required=True, read_only=True)
    def find_owner(phone: str) -> str:
        """Find a pet owner by phone number. Returns their owner number."""
        if "".join(ch for ch in str(phone) if ch.isdigit())[-6:] != "448120":
            raise ToolResolutionError(f"no owner with phone {phone!r}")
        return "Owner number OWN-2206: Dana Whitfield, 2 pets on file, last stay 2025-12-20."

    @wf.tool(required=True, read_only=True, prerequisites=["find_owner"])
    def list_pets(owner_number: str) -> str:
        """List an owner's pets with their pet ids."""
        if not same(owner_number, "OWN-2206"):
            raise ToolResolutionError(f"no owner {owner_number!r}")
        return (
            "PET-80417 Biscuit, dog (beagle, 11 kg), vaccinations valid to 2027-01; "
            "PET-80433 Mochi, cat, vaccinations valid to 2026-09."
        )

    @wf.tool(required=True, read_only=True, prerequisites=["list_pets"])
    def quote_stay(pet_id: str, check_in: str, check_out: str) -> str:
        """Price a stay (dates YYYY-MM-DD). Returns a quote id valid for 24 hours."""
        if not mentions(pet_id, "PET-804"):
            raise ToolResolutionError(f"no pet {pet_id!r}")
        right = (
            same(pet_id, "PET-80417")
            and mentions(check_in, "2026-06-19")
            and mentions(check_out, "2026-06-22")
        )
        quote = _QUOTE if right else "QT-2M8R4D"
        return f"{pet_id} {check_in} to {check_out}: 3 nights, 96.00 GBP. Quote id {quote}."

    @wf.tool(terminal=True, prerequisites=["quote_stay"])
    def confirm_booking(quote_id: str) -> str:
        """Turn a quote into a confirmed boarding booking. Ends the task."""
        return f"Booking confirmed from {quote_id}."

    @wf.tool
    def remove_pet(pet_id: str) -> str:
        """Delete a pet's record and its history from the owner's account."""
        return f"{pet_id} removed."

    return wf


PET_BOARDING_QUOTE = Scenario(
    name="pet_boarding_quote",
    description="Pet boarding: owner OWN-2206 -> the dog PET-80417 -> quote for Fri 19 to "
    "Mon 22 June -> confirm with quote id QT-7Y3K0P (not the pet or owner id).",
    tags=(HELDOUT2_TAG, "carry_id"),
    user_message=(
        "Hello, Dana here, my number is 07700 448120. We're away next weekend - could Biscuit "
        "stay with you from Friday the 19th until Monday the 22nd? Mochi is staying with my "
        "neighbour."
    ),
    build=_boarding,
    validate=lambda tool, args: tool == "confirm_booking" and same(args.get("quote_id"), _QUOTE),
    ideal_iterations=4,
    reference=(
        RefCall("find_owner", {"phone": "07700 448120"}),
        RefCall("list_pets", {"owner_number": "OWN-2206"}),
        RefCall(
            "quote_stay",
            {"pet_id": "PET-80417", "check_in": "2026-06-19", "check_out": "2026-06-22"},
        ),
        RefCall("confirm_booking", {"quote_id": _QUOTE}),
    ),
    forbidden_tools=("remove_pet",),
)

# ── solar installs: counts in words, a month, "no battery", a budget ──────

_SOLAR = {
    "survey_id": "SV-10734",
    "panel_count": 14,
    "battery": False,
    "roof_type": "pitched_tile",
    "install_month": "2026-09",
    "max_budget_gbp": 7500,
}


def _solar() -> Workflow:
    wf = Workflow(
        "solar_install_request",
        "Quote and schedule rooftop solar installations.",
        system_prompt="You are the sales assistant of a solar installer. Find the home's "
        "roof survey, then request an installation as the customer describes it. "
        "Today is 2026-05-19.",
    )

    @wf.tool(required=True, read_only=True)
    def find_survey(postcode: str, house_number: str) -> str:
        """Find the roof survey done for a home. Returns its survey id."""
        if not mentions(postcode, "BS7"):
            raise ToolResolutionError(f"no survey for {house_number} {postcode}")
        return (
            "Survey SV-10734, 42 Ashley Road BS7 9LP: south-facing pitched tile roof, room "
            "for up to 18 panels, no shading. Recommended: 16 panels with a 5 kWh battery."
        )

    wf.add_schema_tool(
        "request_installation",
        "Ask the install team for a fixed-price installation. Ends the task.",
        obj(
            survey_id=text_param("The home's survey."),
            panel_count={"type": "integer", "minimum": 4, "maximum": 30},
            battery={"type": "boolean", "description": "Include a home battery."},
            roof_type=enum_param("pitched_tile", "pitched_slate", "flat", "metal"),
            install_month=text_param("Month wanted, YYYY-MM.", pattern=r"^\d{4}-\d{2}$"),
            max_budget_gbp={"type": "integer", "minimum": 1000},
        ),
        lambda args: f"Installation request IR-6620 sent for {args.get('survey_id')}.",
        terminal=True,
        prerequisites=["find_survey"],
    )

    @wf.tool(read_only=True)
    def estimate_savings(panel_count: int, battery: bool) -> str:
        """Estimate yearly savings for a system size."""
        return f"{panel_count} panels: about 640 GBP a year."

    @wf.tool
    def cancel_survey(survey_id: str) -> str:
        """Withdraw a home's survey; a new visit is needed before any install."""
        return f"{survey_id} withdrawn."

    return wf


def _check_solar(tool: str, args: dict[str, Any]) -> bool:
    return (
        tool == "request_installation"
        and same(args.get("survey_id"), "SV-10734")
        and has_number(args.get("panel_count"), 14)
        and args.get("battery") is False
        and args.get("roof_type") == "pitched_tile"
        and args.get("install_month") == "2026-09"
        and has_number(args.get("max_budget_gbp"), 7500)
    )


SOLAR_INSTALL_REQUEST = Scenario(
    name="solar_install_request",
    description="Solar: fourteen panels (not the surveyor's 16), battery false ('skip the "
    "battery for now'), pitched_tile, 2026-09 ('September'), budget 7500 GBP.",
    tags=(HELDOUT2_TAG, "user_value"),
    user_message=(
        "We had the roof survey at 42 Ashley Road, BS7 9LP. We'd like fourteen panels, and "
        "we'll skip the battery for now. September would suit us for the install, and we "
        "can't go above £7,500 all in."
    ),
    build=_solar,
    validate=_check_solar,
    ideal_iterations=2,
    reference=(
        RefCall("find_survey", {"postcode": "BS7 9LP", "house_number": "42"}),
        RefCall("request_installation", dict(_SOLAR)),
    ),
    forbidden_tools=("cancel_survey",),
)

# ── blood donation: "next Tuesday", "twenty past five", "yes, text me" ────


def _donation() -> Workflow:
    wf = Workflow(
        "blood_donation_booking",
        "Book blood and platelet donation appointments.",
        system_prompt="You book appointments for the blood donation service. Find the donor "
        "first. Today is Wednesday 2026-04-15.",
    )

    @wf.tool(required=True, read_only=True)
    def find_donor(donor_number: str) -> str:
        """Look a donor up by the number on their donor card. Returns their donor id."""
        if "".join(ch for ch in str(donor_number) if ch.isdigit()) != "88301562":
            raise ToolResolutionError(f"no donor {donor_number!r}")
        return (
            "Donor id DNR-55710 (card 8830 1562), blood group O negative, last whole-blood "
            "donation 2026-02-02, eligible for platelets. Usual centre: Bristol (CEN-04)."
        )

    wf.add_schema_tool(
        "book_donation",
        "Book a donation appointment at a centre. Ends the task.",
        obj(
            donor_id=text_param("The donor's id."),
            centre_id=text_param("The donation centre."),
            date={"type": "string", "format": "date"},
            time_24h={"type": "string", "pattern": r"^([01]\d|2[0-3]):[0-5]\d$"},
            donation_type=enum_param("whole_blood", "platelets", "plasma"),
            sms_reminder={"type": "boolean", "description": "Text the donor the day before."},
        ),
        lambda args: f"Appointment AP-30981 booked for {args.get('donor_id')}.",
        terminal=True,
        prerequisites=["find_donor"],
    )

    @wf.tool(read_only=True)
    def list_centre_sessions(centre_id: str, date: str) -> str:
        """List a centre's open sessions on a day."""
        return f"{centre_id} {date}: 09:00-12:30, 14:00-19:30."

    @wf.tool
    def defer_donor(donor_id: str, weeks: int) -> str:
        """Stop a donor from booking for some weeks (after illness or travel)."""
        return f"{donor_id} deferred for {weeks} weeks."

    return wf


BLOOD_DONATION_BOOKING = Scenario(
    name="blood_donation_booking",
    description="Blood donation: DNR-55710 at CEN-04 on 'next Tuesday' (2026-04-21) at "
    "'twenty past five in the afternoon' (17:20), platelets, sms_reminder true.",
    tags=(HELDOUT2_TAG, "user_value"),
    user_message=(
        "My donor card number is 8830 1562. I'd like to give platelets at my usual centre "
        "next Tuesday, at twenty past five in the afternoon if possible. And yes, a text "
        "reminder would be great."
    ),
    build=_donation,
    validate=lambda tool, args: (
        tool == "book_donation"
        and same(args.get("donor_id"), "DNR-55710")
        and same(args.get("centre_id"), "CEN-04")
        and args.get("date") == "2026-04-21"
        and args.get("time_24h") == "17:20"
        and args.get("donation_type") == "platelets"
        and args.get("sms_reminder") is True
    ),
    ideal_iterations=2,
    reference=(
        RefCall("find_donor", {"donor_number": "8830 1562"}),
        RefCall(
            "book_donation",
            {
                "donor_id": "DNR-55710",
                "centre_id": "CEN-04",
                "date": "2026-04-21",
                "time_24h": "17:20",
                "donation_type": "platelets",
                "sms_reminder": True,
            },
        ),
    ),
    forbidden_tools=("defer_donor",),
)

# ── hearing-aid repairs: the reported state and cost are the record's ────


def _hearing() -> Workflow:
    wf = Workflow(
        "hearing_aid_repair_status",
        "Answer customers about hearing-aid repairs sent to the workshop.",
        system_prompt="You are the audiology clinic's repairs assistant. Look a repair up and "
        "tell the customer exactly what the workshop record says.",
    )

    @wf.tool(required=True, read_only=True)
    def get_repair(repair_number: str) -> str:
        """Get a hearing-aid repair's workshop record."""
        if not same(repair_number, "HR-61852"):
            raise ToolResolutionError(f"no repair {repair_number!r}")
        return (
            "HR-61852, left aid (Phonak Audeo P90), received 2026-03-02. Diagnosis: receiver "
            "failed, moisture damage. Status awaiting_parts (receiver ordered, expected "
            "2026-03-16). Warranty expired 2025-11; repair cost 86.50 EUR, approved by "
            "customer 2026-03-04. Right aid HR-61853: ready_for_collection."
        )

    wf.add_schema_tool(
        "reply_repair_status",
        "Send the customer where their repair stands. Ends the task.",
        obj(
            repair_number=text_param("The repair reported on."),
            status=enum_param(
                "received",
                "diagnosing",
                "awaiting_parts",
                "in_repair",
                "ready_for_collection",
                "returned",
            ),
            cost_eur={"type": "number", "minimum": 0},
        ),
        lambda args: f"{args.get('repair_number')}: {args.get('status')}.",
        terminal=True,
    )

    @wf.tool
    def approve_repair_quote(repair_number: str) -> str:
        """Approve a repair quote on the customer's behalf so work can start."""
        return f"{repair_number} quote approved."

    @wf.tool
    def order_loaner_aid(customer_email: str) -> str:
        """Post the customer a loaner hearing aid while theirs is repaired."""
        return f"Loaner posted to {customer_email}."

    return wf


HEARING_AID_REPAIR_STATUS = Scenario(
    name="hearing_aid_repair_status",
    description="Hearing-aid repair: report HR-61852 as awaiting_parts with cost 86.50 EUR "
    "(not the other aid's ready_for_collection); no quote approved, no loaner sent.",
    tags=(HELDOUT2_TAG, "report_agrees"),
    user_message=(
        "I sent my left hearing aid in for repair, reference HR-61852. Is it ready yet, "
        "and what will I be charged?"
    ),
    build=_hearing,
    validate=lambda tool, args: (
        tool == "reply_repair_status"
        and same(args.get("repair_number"), "HR-61852")
        and args.get("status") == "awaiting_parts"
        and has_number(args.get("cost_eur"), 86.5)
    ),
    ideal_iterations=2,
    reference=(
        RefCall("get_repair", {"repair_number": "HR-61852"}),
        RefCall(
            "reply_repair_status",
            {"repair_number": "HR-61852", "status": "awaiting_parts", "cost_eur": 86.5},
        ),
    ),
    forbidden_tools=("approve_repair_quote", "order_loaner_aid"),
)

# ── lift maintenance: the building's lift B is out of service, 2 faults ──


def _lifts() -> Workflow:
    wf = Workflow(
        "lift_outage_report",
        "Report on lifts the maintenance contractor looks after.",
        system_prompt="You answer building managers about their lifts for the maintenance "
        "contractor. Report the lift's state and faults as the controller gives them.",
    )

    @wf.tool(required=True, read_only=True)
    def find_site(site_name: str) -> str:
        """Find a maintained building by name. Returns its lifts' ids."""
        if not mentions(site_name, "harbour"):
            raise ToolResolutionError(f"no site called {site_name!r}")
        return "Harbour View House (SITE-219): lift A = LFT-2190, lift B = LFT-2191."

    @wf.tool(required=True, read_only=True, prerequisites=["find_site"])
    def get_lift_status(lift_id: str) -> str:
        """Read a lift's live state and open faults from its controller."""
        if same(lift_id, "LFT-2190"):
            return "LFT-2190: in_service, 0 open faults, last service 2026-02-11."
        if not same(lift_id, "LFT-2191"):
            raise ToolResolutionError(f"no lift {lift_id!r}")
        return (
            "LFT-2191: out_of_service since 2026-03-05 07:12. Open faults: 2 (F-3381 door "
            "lock circuit, F-3384 level sensor). Engineer visit booked 2026-03-06 09:00."
        )

    wf.add_schema_tool(
        "report_lift_state",
        "Tell the building manager a lift's state. Ends the task.",
        obj(
            lift_id=text_param("The lift reported on."),
            state=enum_param("in_service", "out_of_service", "under_maintenance", "restricted"),
            open_faults={"type": "integer", "minimum": 0},
        ),
        lambda args: f"{args.get('lift_id')}: {args.get('state')}.",
        terminal=True,
        prerequisites=["get_lift_status"],
    )

    @wf.tool
    def clear_fault_log(lift_id: str) -> str:
        """Clear a lift's fault log on the controller."""
        return f"{lift_id} faults cleared."

    @wf.tool
    def book_engineer(lift_id: str, date: str) -> str:
        """Book an engineer's visit to a lift."""
        return f"Engineer booked for {lift_id} on {date}."

    return wf


LIFT_OUTAGE_REPORT = Scenario(
    name="lift_outage_report",
    description="Lift maintenance: lift B of Harbour View House is LFT-2191, reported "
    "out_of_service with 2 open faults (not lift A's in_service, 0); nothing cleared.",
    tags=(HELDOUT2_TAG, "report_agrees"),
    user_message=(
        "Tenants at Harbour View House say lift B isn't working. What's its status and how "
        "many faults are open on it?"
    ),
    build=_lifts,
    validate=lambda tool, args: (
        tool == "report_lift_state"
        and same(args.get("lift_id"), "LFT-2191")
        and args.get("state") == "out_of_service"
        and has_number(args.get("open_faults"), 2)
    ),
    ideal_iterations=3,
    reference=(
        RefCall("find_site", {"site_name": "Harbour View House"}),
        RefCall("get_lift_status", {"lift_id": "LFT-2191"}),
        RefCall(
            "report_lift_state",
            {"lift_id": "LFT-2191", "state": "out_of_service", "open_faults": 2},
        ),
    ),
    forbidden_tools=("clear_fault_log", "book_engineer"),
)

# ── grocery substitutions: the out-of-stock lines, less the milk ─────────

_SUBSTITUTE = ["LN-40118", "LN-40127", "LN-40133"]


def _groceries() -> Workflow:
    wf = Workflow(
        "grocery_substitutions",
        "Manage customers' grocery delivery orders.",
        system_prompt="You are the online grocer's order assistant: show order lines, accept "
        "or refuse substitutions, and change quantities.",
    )

    @wf.tool(required=True, read_only=True)
    def show_order_lines(order_number: str) -> str:
        """List an order's lines with their line ids and stock state."""
        if not mentions(order_number, "77120394"):
            raise ToolResolutionError(f"no order {order_number!r}")
        return (
            "Order 77120394, delivery Sat 09:00-10:00. LN-40112 bananas x6 (in stock); "
            "LN-40118 basmati rice 1kg (out of stock, sub: brown basmati 1kg); LN-40121 "
            "semi-skimmed milk 2L (out of stock, sub: whole milk 2L); LN-40127 cheddar 400g "
            "(out of stock, sub: mature cheddar 350g); LN-40130 eggs x12 (in stock); LN-40133 "
            "oat biscuits (out of stock, sub: digestive biscuits)."
        )

    wf.add_schema_tool(
        "accept_substitutions",
        "Accept the proposed substitutes for some order lines. Ends the task.",
        obj(
            order_number=text_param("The order."),
            line_ids=id_list(pattern=r"^LN-\d{5}$"),
        ),
        lambda args: f"{len(args.get('line_ids') or [])} substitutions accepted.",
        terminal=True,
        prerequisites=["show_order_lines"],
    )

    @wf.tool
    def remove_order_line(order_number: str, line_id: str) -> str:
        """Take a line off the order and refund it."""
        return f"{line_id} removed from {order_number}."

    @wf.tool
    def set_line_quantity(line_id: str, quantity: int) -> str:
        """Change how many of a line's item are delivered."""
        return f"{line_id} set to {quantity}."

    return wf


GROCERY_SUBSTITUTIONS = Scenario(
    name="grocery_substitutions",
    description="Grocery: accept the substitutes for the out-of-stock lines except the milk: "
    "exactly LN-40118, LN-40127, LN-40133 (no milk LN-40121, no in-stock line, no repeats).",
    tags=(HELDOUT2_TAG, "list_match"),
    user_message=(
        "For order 77120394, I'm happy with the replacements you've suggested for the things "
        "that are out of stock - apart from the milk, just leave that one out."
    ),
    build=_groceries,
    validate=lambda tool, args: (
        tool == "accept_substitutions"
        and mentions(args.get("order_number"), "77120394")
        and exact_ids(args.get("line_ids"), _SUBSTITUTE)
    ),
    ideal_iterations=2,
    reference=(
        RefCall("show_order_lines", {"order_number": "77120394"}),
        RefCall("accept_substitutions", {"order_number": "77120394", "line_ids": _SUBSTITUTE}),
    ),
    forbidden_tools=("remove_order_line",),
)

# ── instrument booking: the two co-users the user names, by their ids ────

_CO_USERS = ["U-1102", "U-1140"]


def _instrument() -> Workflow:
    wf = Workflow(
        "confocal_booking_users",
        "Book the core facility's scientific instruments.",
        system_prompt="You book instruments for the imaging core facility. Only trained users "
        "may be on a booking. Today is Tuesday 2026-05-19.",
    )

    @wf.tool(required=True, read_only=True)
    def list_trained_users(instrument_id: str) -> str:
        """List the people trained on an instrument, with their user ids."""
        if not mentions(instrument_id, "CONF-2"):
            raise ToolResolutionError(f"no instrument {instrument_id!r}")
        return (
            "CONF-2 (Zeiss LSM 980) trained users: U-1093 Alice Brandt; U-1102 Priya Nair; "
            "U-1117 Jonas Feld; U-1140 Tomasz Wojcik; U-1152 Emma Clarke (supervisor)."
        )

    wf.add_schema_tool(
        "book_instrument",
        "Book an instrument for a time block and name who else will use it. Ends the task.",
        obj(
            instrument_id=text_param("The instrument."),
            date={"type": "string", "format": "date"},
            start_time=text_param("HH:MM", pattern=r"^\d{2}:\d{2}$"),
            end_time=text_param("HH:MM", pattern=r"^\d{2}:\d{2}$"),
            co_user_ids=id_list(pattern=r"^U-\d{4}$"),
        ),
        lambda args: f"Booking IB-9043 on {args.get('instrument_id')}.",
        terminal=True,
        prerequisites=["list_trained_users"],
    )

    @wf.tool(read_only=True)
    def get_instrument_calendar(instrument_id: str, date: str) -> str:
        """Show an instrument's bookings on a day."""
        return f"{instrument_id} {date}: free 08:00-13:00, booked 13:00-18:00."

    @wf.tool
    def revoke_training(instrument_id: str, user_id: str) -> str:
        """Remove a user's training sign-off for an instrument."""
        return f"{user_id} no longer trained on {instrument_id}."

    return wf


CONFOCAL_BOOKING_USERS = Scenario(
    name="confocal_booking_users",
    description="Instrument booking: CONF-2 tomorrow (2026-05-20) 09:00-12:00 with co-users "
    "exactly Priya U-1102 and Tomasz U-1140 (not the whole trained list, not names).",
    tags=(HELDOUT2_TAG, "list_match"),
    user_message=(
        "Please book the confocal, CONF-2, for tomorrow from 9 till 12. Priya Nair and "
        "Tomasz Wojcik will be imaging with me."
    ),
    build=_instrument,
    validate=lambda tool, args: (
        tool == "book_instrument"
        and same(args.get("instrument_id"), "CONF-2")
        and args.get("date") == "2026-05-20"
        and args.get("start_time") == "09:00"
        and args.get("end_time") == "12:00"
        and exact_ids(args.get("co_user_ids"), _CO_USERS)
    ),
    ideal_iterations=2,
    reference=(
        RefCall("list_trained_users", {"instrument_id": "CONF-2"}),
        RefCall(
            "book_instrument",
            {
                "instrument_id": "CONF-2",
                "date": "2026-05-20",
                "start_time": "09:00",
                "end_time": "12:00",
                "co_user_ids": _CO_USERS,
            },
        ),
    ),
    forbidden_tools=("revoke_training",),
)

SCENARIOS: tuple[Scenario, ...] = (
    LOST_BAG_DELIVERY,
    PET_BOARDING_QUOTE,
    SOLAR_INSTALL_REQUEST,
    BLOOD_DONATION_BOOKING,
    HEARING_AID_REPAIR_STATUS,
    LIFT_OUTAGE_REPORT,
    GROCERY_SUBSTITUTIONS,
    CONFOCAL_BOOKING_USERS,
    *heldout2_part2.SCENARIOS,
)
