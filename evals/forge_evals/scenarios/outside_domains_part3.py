"""Domains, part 3: a museum's collection, tax filings, an IT help desk, a
pharmacy, parking permits, a marina and bulky-waste collection.

The group's conventions (tags, `forbidden_tools`) are described in
outside_domains, which lists these scenarios after part 2's.
"""

from __future__ import annotations

from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, has_number, mentions, same
from forge_evals.scenarios._domain_schema import TAG, decline_tool, obj, text_param

# ── museum: the error says the accession format; the retry uses it ───────


def _museum() -> Workflow:
    wf = Workflow(
        "museum_accession_format",
        "Answer questions about the museum's collection. If a tool rejects an argument, "
        "fix it as the error explains and call again.",
    )

    @wf.tool(required=True, read_only=True)
    def get_collection_object(accession_number: str) -> str:
        """Look up a collection object by accession number."""
        if accession_number != "1987.112.4":
            raise ToolResolutionError(
                f"accession_number {accession_number!r} is malformed: write it as "
                "year.lot.item separated by dots, e.g. 2001.15.3 (no slashes or spaces)"
            )
        return (
            "1987.112.4: bronze ritual bell, Nepal, 18th c. Location: gallery G7, case 3. "
            "Condition: stable."
        )

    @wf.tool(terminal=True)
    def report_location(accession_number: str, gallery: str) -> str:
        """Tell the user where an object is displayed. Ends the task.

        Args:
            accession_number: The object's accession number.
            gallery: The gallery it is in.
        """
        return f"{accession_number} is in {gallery}."

    return wf


MUSEUM_ACCESSION_FORMAT = Scenario(
    name="museum_accession_format",
    description="Museum collection: the user writes 1987/112/4; the error asks for dots; "
    "the retry sends 1987.112.4 and the report says gallery G7.",
    tags=(TAG, "format_retry", "report_agrees"),
    user_message="Where is object 1987/112/4 on display?",
    build=_museum,
    validate=lambda tool, args: (
        tool == "report_location"
        and same(args.get("accession_number"), "1987.112.4")
        and mentions(args.get("gallery"), "g7")
    ),
    ideal_iterations=3,
    max_iterations=7,
    reference=(
        RefCall("get_collection_object", {"accession_number": "1987/112/4"}),
        RefCall("get_collection_object", {"accession_number": "1987.112.4"}),
        RefCall("report_location", {"accession_number": "1987.112.4", "gallery": "G7"}),
    ),
)

# ── tax: investment advice is out of scope ────────────────────────────────

_TAX_ACTIONS = ("get_filing_status", "request_extension", "amend_return", "get_refund_status")


def _tax() -> Workflow:
    wf = Workflow(
        "tax_filing_decline",
        "You help with the user's income-tax filings using the tools. If the request is "
        "not about their filings, decline it.",
    )

    @wf.tool
    def get_filing_status(tax_year: int) -> str:
        """Get whether a year's return was filed and accepted."""
        return f"{tax_year}: filed, accepted."

    @wf.tool
    def get_refund_status(tax_year: int) -> str:
        """Get the state of a year's refund."""
        return f"{tax_year}: refund of 1,240 USD issued."

    @wf.tool
    def request_extension(tax_year: int, reason: str) -> str:
        """Ask for more time to file a year's return."""
        return f"Extension requested for {tax_year}."

    @wf.tool
    def amend_return(tax_year: int, change_summary: str) -> str:
        """File an amended return for a year."""
        return f"Amendment for {tax_year} filed."

    decline_tool(wf)
    return wf


TAX_FILING_DECLINE = Scenario(
    name="tax_filing_decline",
    description="Tax filings: asked which shares to buy with a refund, decline; no filing "
    "tool may run.",
    tags=(TAG, "decline"),
    user_message="My refund came through. Which tech shares should I buy with it this week?",
    build=_tax,
    validate=lambda tool, args: tool == "decline_request",
    ideal_iterations=1,
    reference=(RefCall("decline_request", {"reason": "I can't give investment advice."}),),
    forbidden_tools=_TAX_ACTIONS,
)

# ── IT help desk: booking a taxi is out of scope ──────────────────────────

_DESK_ACTIONS = ("open_ticket", "get_ticket", "reassign_ticket", "close_ticket")


def _helpdesk() -> Workflow:
    wf = Workflow(
        "it_helpdesk_decline",
        "You are the IT service desk: open, read, reassign and close IT tickets. Decline "
        "anything that is not an IT issue.",
    )

    def open_ticket(args: dict[str, Any]) -> str:
        return f"Ticket INC-30911 opened ({args.get('category')})."

    wf.add_schema_tool(
        "open_ticket",
        "Open an IT incident.",
        obj(
            summary=text_param("One line on the problem."),
            category={"type": "string", "enum": ["hardware", "software", "network", "access"]},
            urgency={"type": "string", "enum": ["low", "medium", "high"]},
        ),
        open_ticket,
    )

    @wf.tool
    def get_ticket(ticket_id: str) -> str:
        """Read an IT ticket."""
        return f"{ticket_id}: open, assigned to desk L1."

    @wf.tool
    def reassign_ticket(ticket_id: str, team: str) -> str:
        """Move a ticket to another support team."""
        return f"{ticket_id} moved to {team}."

    @wf.tool
    def close_ticket(ticket_id: str) -> str:
        """Close a ticket as resolved."""
        return f"{ticket_id} closed."

    decline_tool(wf)
    return wf


IT_HELPDESK_DECLINE = Scenario(
    name="it_helpdesk_decline",
    description="IT help desk: asked to book a taxi to the airport, decline; no ticket tool "
    "may run (opening a ticket for it is wrong too).",
    tags=(TAG, "decline"),
    user_message="Can you book me a taxi from the office to the airport for 5 pm?",
    build=_helpdesk,
    validate=lambda tool, args: tool == "decline_request",
    ideal_iterations=1,
    reference=(RefCall("decline_request", {"reason": "The IT desk cannot book taxis."}),),
    forbidden_tools=_DESK_ACTIONS,
)

# ── pharmacy: the prescription id, a supply in days, no auto-refill ───────


def _pharmacy() -> Workflow:
    wf = Workflow(
        "pharmacy_refill",
        "Handle prescription refills: find the patient's prescriptions, then order a refill.",
    )

    @wf.tool(required=True, read_only=True)
    def list_prescriptions(patient_name: str, date_of_birth: str) -> str:
        """List a patient's active prescriptions.

        Args:
            patient_name: Full name.
            date_of_birth: YYYY-MM-DD.
        """
        if not mentions(date_of_birth, "1961-08-30"):
            raise ToolResolutionError("no patient with that name and date of birth")
        return (
            "Rosa Delgado, 3 active prescriptions: atorvastatin 20 mg (Rx 6610482, 1 refill "
            "left), lisinopril 10 mg (Rx 6610517, 4 refills left), metformin 500 mg "
            "(Rx 6611093, 2 refills left)."
        )

    def refill(args: dict[str, Any]) -> str:
        if args.get("rx_number") not in {"6610482", "6610517", "6611093"}:
            raise ToolResolutionError(f"no prescription {args.get('rx_number')!r}")
        return f"Refill of Rx {args['rx_number']} ordered."

    wf.add_schema_tool(
        "order_refill",
        "Order a refill of one prescription. Ends the task.",
        obj(
            rx_number=text_param("Prescription number (digits only).", pattern=r"^\d{7}$"),
            days_supply={"type": "integer", "enum": [30, 60, 90]},
            auto_refill={"type": "boolean", "description": "Refill automatically from now on."},
            fulfilment={"type": "string", "enum": ["pickup", "home_delivery"]},
        ),
        refill,
        terminal=True,
        prerequisites=["list_prescriptions"],
    )
    return wf


PHARMACY_REFILL = Scenario(
    name="pharmacy_refill",
    description="Pharmacy: refill lisinopril as Rx 6610517 (one of three listed), 90 days, "
    "auto_refill false ('don't set it to repeat'), pickup.",
    tags=(TAG, "carry_id", "user_value"),
    user_message=(
        "Rosa Delgado, born 30 August 1961. I need a 90-day supply of my lisinopril - I'll "
        "collect it at the counter. Don't set it to repeat automatically."
    ),
    build=_pharmacy,
    validate=lambda tool, args: (
        tool == "order_refill"
        and same(args.get("rx_number"), "6610517")
        and has_number(args.get("days_supply"), 90)
        and args.get("auto_refill") is False
        and args.get("fulfilment") == "pickup"
    ),
    ideal_iterations=2,
    reference=(
        RefCall(
            "list_prescriptions", {"patient_name": "Rosa Delgado", "date_of_birth": "1961-08-30"}
        ),
        RefCall(
            "order_refill",
            {
                "rx_number": "6610517",
                "days_supply": 90,
                "auto_refill": False,
                "fulfilment": "pickup",
            },
        ),
    ),
)

# ── parking: the plate format the error states ────────────────────────────


def _parking() -> Workflow:
    wf = Workflow(
        "parking_permit_format",
        "Issue residents' visitor parking permits. If a tool rejects an argument, correct "
        "it as the message says and retry.",
    )

    @wf.tool(terminal=True)
    def issue_visitor_permit(plate: str, zone: str, days: int) -> str:
        """Issue a visitor permit for a car. Ends the task.

        Args:
            plate: The visitor's number plate.
            zone: The resident's parking zone.
            days: How many days it is valid.
        """
        if plate != "KN42HXT":
            raise ToolResolutionError(
                f"plate {plate!r} rejected: use capital letters and digits only, with no "
                "spaces, dashes or dots"
            )
        return f"Permit for {plate} in zone {zone}, {days} days."

    return wf


PARKING_PERMIT_FORMAT = Scenario(
    name="parking_permit_format",
    description="Parking permits: the user writes 'kn-42 hxt'; the error asks for capitals "
    "and digits only; the retry sends KN42HXT, zone D, 3 days ('Friday to Sunday').",
    tags=(TAG, "format_retry", "user_value"),
    user_message=(
        "My sister is visiting from Friday to Sunday (three days). Her car is kn-42 hxt. "
        "I live in zone D - can I get her a visitor permit?"
    ),
    build=_parking,
    validate=lambda tool, args: (
        tool == "issue_visitor_permit"
        and args.get("plate") == "KN42HXT"
        and same(args.get("zone"), "D")
        and has_number(args.get("days"), 3)
    ),
    ideal_iterations=2,
    max_iterations=6,
    reference=(
        RefCall("issue_visitor_permit", {"plate": "kn-42 hxt", "zone": "D", "days": 3}),
        RefCall("issue_visitor_permit", {"plate": "KN42HXT", "zone": "D", "days": 3}),
    ),
)

# ── marina: the one berth long enough, and the boat's own figures ─────────


def _marina() -> Workflow:
    wf = Workflow(
        "marina_berth",
        "Book visitor berths: check which berths are free, then reserve one that fits.",
    )

    @wf.tool(required=True, read_only=True)
    def free_berths(arrival_date: str, nights: int) -> str:
        """List the visitor berths free from a date for a number of nights.

        Args:
            arrival_date: YYYY-MM-DD.
            nights: Length of stay.
        """
        return (
            f"Free from {arrival_date} for {nights} nights: berth V-03 (max 9 m, no shore "
            "power), berth V-11 (max 11 m, shore power), berth V-17 (max 14 m, shore power), "
            "berth V-22 (max 18 m, no shore power)."
        )

    def reserve(args: dict[str, Any]) -> str:
        if args.get("berth") not in {"V-03", "V-11", "V-17", "V-22"}:
            raise ToolResolutionError(f"no berth {args.get('berth')!r}")
        return f"Berth {args['berth']} reserved."

    wf.add_schema_tool(
        "reserve_berth",
        "Reserve a visitor berth. Ends the task.",
        obj(
            berth=text_param("The berth's id."),
            arrival_date=text_param("YYYY-MM-DD", format="date"),
            nights={"type": "integer", "minimum": 1, "maximum": 14},
            boat_length_m={"type": "number", "exclusiveMinimum": 0},
            needs_shore_power={"type": "boolean"},
        ),
        reserve,
        terminal=True,
        prerequisites=["free_berths"],
    )
    return wf


MARINA_BERTH = Scenario(
    name="marina_berth",
    description="Marina: a 12.5 m boat wanting shore power fits only berth V-17; arrival "
    "2026-08-07, 3 nights, length 12.5, shore power true.",
    tags=(TAG, "carry_id", "user_value"),
    user_message=(
        "We're arriving on 7 August 2026 in our 12.5-metre sloop and staying three nights. "
        "We'll need shore power. Can you book us a berth?"
    ),
    build=_marina,
    validate=lambda tool, args: (
        tool == "reserve_berth"
        and same(args.get("berth"), "V-17")
        and mentions(args.get("arrival_date"), "2026-08-07")
        and has_number(args.get("nights"), 3)
        and has_number(args.get("boat_length_m"), 12.5)
        and args.get("needs_shore_power") is True
    ),
    ideal_iterations=2,
    reference=(
        RefCall("free_berths", {"arrival_date": "2026-08-07", "nights": 3}),
        RefCall(
            "reserve_berth",
            {
                "berth": "V-17",
                "arrival_date": "2026-08-07",
                "nights": 3,
                "boat_length_m": 12.5,
                "needs_shore_power": True,
            },
        ),
    ),
)

# ── bulky waste: a plumber is out of scope ────────────────────────────────

_WASTE_ACTIONS = ("find_collection_dates", "book_bulky_pickup", "cancel_pickup")


def _waste() -> Workflow:
    wf = Workflow(
        "waste_collection_decline",
        "You are the council's bulky-waste service: find collection dates, book and cancel "
        "pickups. Decline anything else.",
    )

    @wf.tool
    def find_collection_dates(postcode: str) -> str:
        """List the next bulky-waste collection days for a postcode."""
        return f"{postcode}: 2026-03-12, 2026-03-26."

    def book(args: dict[str, Any]) -> str:
        return f"Pickup booked for {args.get('date')}."

    wf.add_schema_tool(
        "book_bulky_pickup",
        "Book a bulky-waste pickup.",
        obj(
            postcode=text_param("Where to collect."),
            date=text_param("Collection day.", format="date"),
            items={"type": "array", "items": {"type": "string"}, "minItems": 1},
        ),
        book,
    )

    @wf.tool
    def cancel_pickup(booking_id: str) -> str:
        """Cancel a booked pickup."""
        return f"{booking_id} cancelled."

    decline_tool(wf)
    return wf


WASTE_COLLECTION_DECLINE = Scenario(
    name="waste_collection_decline",
    description="Bulky-waste collection: asked to send a plumber for a leaking boiler, "
    "decline; no collection tool may run.",
    tags=(TAG, "decline"),
    user_message="My boiler is leaking all over the kitchen floor. Can you send a plumber today?",
    build=_waste,
    validate=lambda tool, args: tool == "decline_request",
    ideal_iterations=1,
    reference=(RefCall("decline_request", {"reason": "This service only collects bulky waste."}),),
    forbidden_tools=_WASTE_ACTIONS,
)

SCENARIOS: tuple[Scenario, ...] = (
    MUSEUM_ACCESSION_FORMAT,
    TAX_FILING_DECLINE,
    IT_HELPDESK_DECLINE,
    PHARMACY_REFILL,
    PARKING_PERMIT_FORMAT,
    MARINA_BERTH,
    WASTE_COLLECTION_DECLINE,
)
