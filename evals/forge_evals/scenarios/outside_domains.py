"""Domains: workflows from businesses no other scenario group touches.

Written before any tuning for them, as a yardstick Forge was not shaped on:
library loans, a vet clinic, car rental, insurance claims, a school
timetable, restaurant tables, event tickets, utility meters, a gym, legal
case files, lab samples, fleet maintenance, hotel housekeeping, grants, podcast
publishing, a museum, tax filings, an IT help desk, a pharmacy, parking
permits, a marina and bulky-waste collection (this module and parts 2 and 3).
Each one tests one or two kinds of failure, named in its other tags:

- `carry_id`: an id that only an earlier result holds, labelled in prose.
- `user_value`: the user's own quantity, date, month, time or yes/no phrase.
- `report_agrees`: a reported enum or number must be the one a result states.
- `list_match`: a list of ids must be exactly those a listing names, no repeats.
- `decline`: a request no tool serves ends through the decline tool, and no
  action tool runs (`forbidden_tools`).
- `format_retry`: an error states the expected format; the retry must use it.
- `destructive`: an unannotated destructive look-alike sits beside the right
  tool; calling it makes the run wrong (`forbidden_tools`).

Schemas are written as real APIs write them (enums, units in the names,
booleans, arrays of ids, nested objects, `format`, `pattern`, `uniqueItems`),
half of them as plain JSON Schema through `add_schema_tool`.
"""

from __future__ import annotations

from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, has_number, mentions, same
from forge_evals.scenarios import outside_domains_part2, outside_domains_part3
from forge_evals.scenarios._domain_schema import TAG, exact_ids, obj, text_param

# ── library: renew a loan whose id only the loan listing gives ────────────


def _library() -> Workflow:
    wf = Workflow(
        "library_renew_loan",
        "Help library members with their loans: find the member, list their loans, "
        "renew the one they mean.",
    )

    @wf.tool(required=True)
    def find_member(card_number: str) -> str:
        """Find a library member by the number printed on their library card."""
        if not mentions(card_number, "2904417"):
            raise ToolResolutionError(f"no member with card number {card_number!r}")
        return "Card 2904417 belongs to Ingrid Solberg; her member record is MBR-6620 (adult)."

    @wf.tool(required=True, prerequisites=["find_member"])
    def list_loans(member_id: str) -> str:
        """List the items a member currently has on loan."""
        if not same(member_id, "MBR-6620"):
            raise ToolResolutionError(f"no member record {member_id!r}")
        return (
            "MBR-6620 has 3 loans: 'The Overstory' (loan LN-33871, due 2026-03-02), "
            "'Piranesi' (loan LN-33904, due 2026-03-09), a Lisbon travel guide "
            "(loan LN-34012, due 2026-03-09)."
        )

    @wf.tool(terminal=True, prerequisites=["list_loans"])
    def renew_loan(loan_id: str, extra_days: int) -> str:
        """Extend one loan's due date. Ends the task.

        Args:
            loan_id: The loan to extend.
            extra_days: How many days to add to the due date (7, 14 or 21).
        """
        if not mentions(loan_id, "LN-"):
            raise ToolResolutionError(f"no loan {loan_id!r}")
        return f"{loan_id} extended by {extra_days} days."

    @wf.tool
    def close_member_account(member_id: str) -> str:
        """Close a member's account and wipe their borrowing history."""
        return f"{member_id} closed."

    return wf


LIBRARY_RENEW_LOAN = Scenario(
    name="library_renew_loan",
    description="Library: renew 'Piranesi' by its loan id LN-33904, which only the loan "
    "listing gives, for two weeks; close_member_account must not run.",
    tags=(TAG, "carry_id"),
    user_message="My library card is 2904417. Could you give me two more weeks with Piranesi?",
    build=_library,
    validate=lambda tool, args: (
        tool == "renew_loan"
        and same(args.get("loan_id"), "LN-33904")
        and has_number(args.get("extra_days"), 14)
    ),
    ideal_iterations=3,
    reference=(
        RefCall("find_member", {"card_number": "2904417"}),
        RefCall("list_loans", {"member_id": "MBR-6620"}),
        RefCall("renew_loan", {"loan_id": "LN-33904", "extra_days": 14}),
    ),
    forbidden_tools=("close_member_account",),
)

# ── vet clinic: the pet's id, the visit length and "no text reminder" ─────


def _vet() -> Workflow:
    wf = Workflow(
        "vet_vaccination_booking",
        "Book veterinary appointments: find the owner's pet, then book the visit.",
    )

    def find_pet(args: dict[str, Any]) -> str:
        if not mentions(args.get("owner_phone"), "0177 5523 901", "01775523901"):
            raise ToolResolutionError(f"no owner with phone {args.get('owner_phone')!r}")
        return (
            "Owner Malik Haddad has two pets: Biscuit (beagle, patient no. P-40218) and "
            "Juno (cat, patient no. P-40219)."
        )

    wf.add_schema_tool(
        "find_pets_by_owner",
        "Find an owner's registered pets by the owner's phone number.",
        obj(owner_phone=text_param("The owner's phone number as they gave it.")),
        find_pet,
        required=True,
    )

    def book(args: dict[str, Any]) -> str:
        if args.get("patient_no") not in {"P-40218", "P-40219"}:
            raise ToolResolutionError(f"no patient {args.get('patient_no')!r}")
        return f"Booked {args['visit_type']} for {args['patient_no']} on {args['date']}."

    wf.add_schema_tool(
        "book_visit",
        "Book a visit for a pet. Ends the task.",
        obj(
            patient_no=text_param("The pet's patient number."),
            visit_type={"type": "string", "enum": ["vaccination", "check_up", "dental", "surgery"]},
            date=text_param("Day of the visit.", format="date"),
            duration_minutes={"type": "integer", "minimum": 10, "maximum": 120},
            sms_reminder={"type": "boolean", "description": "Text the owner a reminder."},
        ),
        book,
        terminal=True,
        prerequisites=["find_pets_by_owner"],
    )
    return wf


VET_VACCINATION_BOOKING = Scenario(
    name="vet_vaccination_booking",
    description="Vet clinic: book Juno (P-40219, from the owner lookup) for a 20-minute "
    "vaccination on 2026-04-08 with sms_reminder false ('no text reminder').",
    tags=(TAG, "user_value"),
    user_message=(
        "Hi, this is Malik, phone 0177 5523 901. Juno the cat needs her booster vaccination "
        "on 8 April 2026 - the nurse said it takes 20 minutes. No text reminder please, I "
        "keep losing my phone."
    ),
    build=_vet,
    validate=lambda tool, args: (
        tool == "book_visit"
        and same(args.get("patient_no"), "P-40219")
        and args.get("visit_type") == "vaccination"
        and mentions(args.get("date"), "2026-04-08")
        and has_number(args.get("duration_minutes"), 20)
        and args.get("sms_reminder") is False
    ),
    ideal_iterations=2,
    reference=(
        RefCall("find_pets_by_owner", {"owner_phone": "0177 5523 901"}),
        RefCall(
            "book_visit",
            {
                "patient_no": "P-40219",
                "visit_type": "vaccination",
                "date": "2026-04-08",
                "duration_minutes": 20,
                "sms_reminder": False,
            },
        ),
    ),
)

# ── car rental: extend by the agreement number, to the user's date ────────


def _car_rental() -> Workflow:
    wf = Workflow(
        "car_rental_extension",
        "Manage car rentals: look up the booking, then change it as the customer asks.",
    )

    @wf.tool(required=True, read_only=True)
    def get_reservation(booking_reference: str) -> str:
        """Look up a rental by the booking reference from the confirmation email."""
        if not same(booking_reference, "QZR-5521"):
            raise ToolResolutionError(f"no booking {booking_reference!r}")
        return (
            "Booking QZR-5521: compact (VW Polo), picked up 2026-05-09 at Porto airport, "
            "return due 2026-05-12 10:00. Rental agreement number RA-907731, customer "
            "account CA-1182."
        )

    @wf.tool(terminal=True, prerequisites=["get_reservation"])
    def extend_rental(agreement_number: str, new_return_date: str, keep_insurance: bool) -> str:
        """Move the return date of an ongoing rental. Ends the task.

        Args:
            agreement_number: The rental agreement number (RA-...).
            new_return_date: New return day, YYYY-MM-DD.
            keep_insurance: Extend the collision cover to the new date as well.
        """
        if not same(agreement_number, "RA-907731"):
            raise ToolResolutionError(f"no rental agreement {agreement_number!r}")
        return f"{agreement_number} now returns on {new_return_date}."

    @wf.tool
    def cancel_reservation(booking_reference: str) -> str:
        """Cancel a booking and release the car."""
        return f"{booking_reference} cancelled."

    return wf


CAR_RENTAL_EXTENSION = Scenario(
    name="car_rental_extension",
    description="Car rental: extend agreement RA-907731 (from the booking lookup, not the "
    "booking reference) to 2026-05-15 with the cover kept; cancel_reservation must not run.",
    tags=(TAG, "carry_id"),
    user_message=(
        "Booking QZR-5521. I'm enjoying Portugal too much - can I keep the Polo until "
        "Friday 15 May 2026? Keep the collision cover on it too."
    ),
    build=_car_rental,
    validate=lambda tool, args: (
        tool == "extend_rental"
        and same(args.get("agreement_number"), "RA-907731")
        and mentions(args.get("new_return_date"), "2026-05-15")
        and args.get("keep_insurance") is True
    ),
    ideal_iterations=2,
    reference=(
        RefCall("get_reservation", {"booking_reference": "QZR-5521"}),
        RefCall(
            "extend_rental",
            {
                "agreement_number": "RA-907731",
                "new_return_date": "2026-05-15",
                "keep_insurance": True,
            },
        ),
    ),
    forbidden_tools=("cancel_reservation",),
)

# ── insurance: a claim with the user's amount and a nested incident ───────


def _insurance() -> Workflow:
    wf = Workflow(
        "insurance_claim_amount",
        "File home-insurance claims: find the policy for the customer, then file the claim.",
    )

    def policies(args: dict[str, Any]) -> str:
        if not mentions(args.get("postcode"), "LS6 2QT", "LS62QT"):
            raise ToolResolutionError(f"no policy holder at {args.get('postcode')!r}")
        return (
            "1 active policy at LS6 2QT: contents cover, policy HC-2281-0456, excess 100 USD, "
            "holder Priya Nair."
        )

    wf.add_schema_tool(
        "find_policy",
        "Find the active home policy for an address by its postcode.",
        obj(postcode=text_param("The insured address's postcode.")),
        policies,
        required=True,
    )

    def file_claim(args: dict[str, Any]) -> str:
        if not same(args.get("policy_number"), "HC-2281-0456"):
            raise ToolResolutionError(f"no policy {args.get('policy_number')!r}")
        return f"Claim CLM-77120 opened on {args['policy_number']}."

    wf.add_schema_tool(
        "file_claim",
        "Open a claim on a policy. Ends the task.",
        obj(
            policy_number=text_param("The policy to claim on."),
            claimed_amount_usd={"type": "number", "exclusiveMinimum": 0},
            incident=obj(
                occurred_on=text_param("Day it happened.", format="date"),
                cause={
                    "type": "string",
                    "enum": ["theft", "water_damage", "fire", "accidental_damage", "storm"],
                },
            ),
        ),
        file_claim,
        terminal=True,
        prerequisites=["find_policy"],
    )
    return wf


def _check_claim(tool: str, args: dict[str, Any]) -> bool:
    incident = args.get("incident") or {}
    return (
        tool == "file_claim"
        and same(args.get("policy_number"), "HC-2281-0456")
        and has_number(args.get("claimed_amount_usd"), 250)
        and mentions(incident.get("occurred_on"), "2026-02-21")
        and incident.get("cause") == "accidental_damage"
    )


INSURANCE_CLAIM_AMOUNT = Scenario(
    name="insurance_claim_amount",
    description="Insurance: claim 250 USD ('250 dollars', not the 100 USD excess) on "
    "HC-2281-0456 with a nested incident (2026-02-21, accidental_damage).",
    tags=(TAG, "user_value"),
    user_message=(
        "I live at LS6 2QT. On 21 February 2026 I knocked my laptop off the desk and the "
        "screen cracked. The repair shop quoted 250 dollars - please put in a claim."
    ),
    build=_insurance,
    validate=_check_claim,
    ideal_iterations=2,
    reference=(
        RefCall("find_policy", {"postcode": "LS6 2QT"}),
        RefCall(
            "file_claim",
            {
                "policy_number": "HC-2281-0456",
                "claimed_amount_usd": 250,
                "incident": {"occurred_on": "2026-02-21", "cause": "accidental_damage"},
            },
        ),
    ),
)

# ── school timetable: the reported room and subject are the result's ──────


def _timetable() -> Workflow:
    wf = Workflow(
        "timetable_room_report",
        "Answer questions about the school timetable: look the lesson up, then report it.",
    )

    @wf.tool(required=True, read_only=True)
    def get_class_timetable(class_code: str, weekday: str) -> str:
        """Get one class's lessons on one weekday.

        Args:
            class_code: Class code such as 9C.
            weekday: monday to friday.
        """
        if not same(class_code, "7B"):
            raise ToolResolutionError(f"no class {class_code!r}")
        if not mentions(weekday, "tue"):
            return f"7B on {weekday}: maths (room 12), history (room 4), art (room 31)."
        return (
            "7B on Tuesday: period 1 English in room 14, period 2 biology in lab L2, "
            "period 3 geography in room 9 (cover teacher: Mr Osei), period 4 PE in the gym."
        )

    @wf.tool(terminal=True)
    def report_lesson(period: int, subject: str, room: str) -> str:
        """Tell the user about one lesson. Ends the task.

        Args:
            period: The period number.
            subject: The lesson's subject.
            room: Where it takes place.
        """
        return f"Period {period}: {subject} in {room}."

    return wf


TIMETABLE_ROOM_REPORT = Scenario(
    name="timetable_room_report",
    description="School timetable: report period 3 on Tuesday as geography in room 9, the "
    "values the timetable states, not a neighbouring lesson's.",
    tags=(TAG, "report_agrees"),
    user_message="Where does 7B have third period on Tuesday, and what lesson is it?",
    build=_timetable,
    validate=lambda tool, args: (
        tool == "report_lesson"
        and has_number(args.get("period"), 3)
        and mentions(args.get("subject"), "geography")
        and has_number(args.get("room"), 9)
        and not mentions(args.get("room"), "14", "L2")
    ),
    ideal_iterations=2,
    reference=(
        RefCall("get_class_timetable", {"class_code": "7B", "weekday": "tuesday"}),
        RefCall("report_lesson", {"period": 3, "subject": "geography", "room": "room 9"}),
    ),
)

# ── restaurant: party size, a spoken time and "not outside" ───────────────


def _restaurant() -> Workflow:
    wf = Workflow(
        "restaurant_party_booking",
        "Take table reservations: check what is free that evening, then reserve a table.",
    )

    @wf.tool(required=True, read_only=True)
    def check_tables(date: str) -> str:
        """See which tables are free on an evening (date as YYYY-MM-DD)."""
        if not mentions(date, "2026-06-19"):
            return f"{date}: fully booked."
        return (
            "2026-06-19: indoor tables free from 18:00 to 21:30 (up to 8 guests); terrace "
            "free from 19:00 (up to 4 guests)."
        )

    @wf.tool(terminal=True, prerequisites=["check_tables"])
    def reserve_table(
        date: str, time_24h: str, guests: int, terrace: bool, contact_name: str
    ) -> str:
        """Reserve a table. Ends the task.

        Args:
            date: YYYY-MM-DD.
            time_24h: Arrival time as HH:MM on a 24-hour clock.
            guests: Number of people.
            terrace: Seat the party outside on the terrace.
            contact_name: Name the booking is under.
        """
        return f"Table for {guests} on {date} at {time_24h}, under {contact_name}."

    return wf


RESTAURANT_PARTY_BOOKING = Scenario(
    name="restaurant_party_booking",
    description="Restaurant: six guests (in words), 'half past seven in the evening' as "
    "19:30, terrace false ('we'd rather be inside'), under the name Brennan.",
    tags=(TAG, "user_value"),
    user_message=(
        "Could we get a table on 19 June 2026 for six people, half past seven in the "
        "evening? We'd rather sit inside. The name is Brennan."
    ),
    build=_restaurant,
    validate=lambda tool, args: (
        tool == "reserve_table"
        and mentions(args.get("date"), "2026-06-19")
        and mentions(args.get("time_24h"), "19:30")
        and has_number(args.get("guests"), 6)
        and args.get("terrace") is False
        and mentions(args.get("contact_name"), "brennan")
    ),
    ideal_iterations=2,
    reference=(
        RefCall("check_tables", {"date": "2026-06-19"}),
        RefCall(
            "reserve_table",
            {
                "date": "2026-06-19",
                "time_24h": "19:30",
                "guests": 6,
                "terrace": False,
                "contact_name": "Brennan",
            },
        ),
    ),
)

# ── event tickets: transfer exactly the Saturday show's tickets ───────────

_SATURDAY_TICKETS = ["TK-81-0042", "TK-81-0043", "TK-81-0044"]


def _tickets() -> Workflow:
    wf = Workflow(
        "event_ticket_transfer",
        "Manage event tickets: look up the customer's order, then transfer tickets.",
    )

    @wf.tool(required=True, read_only=True)
    def get_order(order_number: str) -> str:
        """Look up a ticket order by its order number."""
        if not mentions(order_number, "558120"):
            raise ToolResolutionError(f"no order {order_number!r}")
        return (
            "Order 558120 (Hollow Pines tour) holds 5 tickets. Friday 10 July show: "
            "TK-80-0917, TK-80-0918. Saturday 11 July show: TK-81-0042, TK-81-0043, "
            "TK-81-0044."
        )

    def run_transfer(args: dict[str, Any]) -> str:
        ids = args.get("ticket_ids") or []
        unknown = [t for t in ids if t not in {*_SATURDAY_TICKETS, "TK-80-0917", "TK-80-0918"}]
        if unknown:
            raise ToolResolutionError(f"not in this order: {', '.join(map(str, unknown))}")
        return f"{len(ids)} tickets sent to {args.get('recipient_email')}."

    wf.add_schema_tool(
        "transfer_tickets",
        "Send tickets to another person's account. Ends the task.",
        obj(
            ticket_ids={
                "type": "array",
                "items": {"type": "string"},
                "minItems": 1,
                "uniqueItems": True,
            },
            recipient_email=text_param("Who receives them.", format="email"),
        ),
        run_transfer,
        terminal=True,
        prerequisites=["get_order"],
    )
    return wf


EVENT_TICKET_TRANSFER = Scenario(
    name="event_ticket_transfer",
    description="Event ticketing: transfer exactly the three Saturday tickets the order "
    "lists (no Friday ones, no repeats) to the friend's email.",
    tags=(TAG, "list_match"),
    user_message=(
        "I can't make the Saturday show of order 558120 any more. Please send all the "
        "Saturday tickets to my friend at oskar.lind@example.org - I'm keeping Friday."
    ),
    build=_tickets,
    validate=lambda tool, args: (
        tool == "transfer_tickets"
        and exact_ids(args.get("ticket_ids"), _SATURDAY_TICKETS)
        and mentions(args.get("recipient_email"), "oskar.lind@example.org")
    ),
    ideal_iterations=2,
    reference=(
        RefCall("get_order", {"order_number": "558120"}),
        RefCall(
            "transfer_tickets",
            {"ticket_ids": _SATURDAY_TICKETS, "recipient_email": "oskar.lind@example.org"},
        ),
    ),
)

SCENARIOS: tuple[Scenario, ...] = (
    LIBRARY_RENEW_LOAN,
    VET_VACCINATION_BOOKING,
    CAR_RENTAL_EXTENSION,
    INSURANCE_CLAIM_AMOUNT,
    TIMETABLE_ROOM_REPORT,
    RESTAURANT_PARTY_BOOKING,
    EVENT_TICKET_TRANSFER,
    *outside_domains_part2.SCENARIOS,
    *outside_domains_part3.SCENARIOS,
)
