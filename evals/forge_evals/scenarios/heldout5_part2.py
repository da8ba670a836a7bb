"""Held out, fifth group, part 2: a piano technician, an escape-room venue, a
tree surgeon and a mobile dog groomer here; a wine club, a music festival's
ticket office, a wholesale plant nursery and a scaffold hire firm in
heldout5_part2_forms. Written from the user's side only, tagged `heldout5`
plus one failure kind: decline, format_retry, destructive or schema (two
each). The format, destructive and schema scenarios take their main action's
arguments as raw JSON Schema the way a business API publishes it (formats,
patterns, minimums, nested objects, arrays of objects, uniqueItems,
minProperties, oneOf)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, mentions, same
from forge_evals.scenarios import heldout5_part2_forms
from forge_evals.scenarios._domain_schema import (
    HELDOUT5_TAG,
    compact,
    decline_tool,
    declined_scenario,
)


def _declined(
    name: str, description: str, user_message: str, build: Callable[[], Workflow]
) -> Scenario:
    """A request no tool serves: the run declines and calls no other tool."""
    return declined_scenario(
        HELDOUT5_TAG, name, description, user_message, build, "We don't offer that service."
    )


# ── piano technician: moving a piano is a removals firm's job ───────────


def _piano_care() -> Workflow:
    wf = Workflow(
        "piano_removal_decline",
        "Book tunings and repairs for a piano technician.",
        system_prompt="You are the booking assistant of Keys & Hammers Piano Care in "
        "Harrogate. You can show free tuning slots, book tunings, quote repairs and arrange "
        "insurance valuations of pianos. Today is Monday 2026-09-21.",
    )

    @wf.tool
    def get_tuning_slots(postcode: str, week_starting: str) -> str:
        """Show the technician's free tuning slots near a postcode in a week."""
        return f"Week of {week_starting} near {postcode}: Tue 10:00, Wed 14:00, Fri 09:00."

    @wf.tool
    def book_piano_tuning(customer_email: str, piano_type: str, date: str, slot: str) -> str:
        """Book a tuning visit (95.00 GBP, paid on the day)."""
        return f"Tuning TN-50731 booked for {customer_email}: {piano_type}, {date} {slot}."

    @wf.tool
    def quote_piano_repair(piano_make: str, problem: str) -> str:
        """Quote a repair (sticking keys, broken strings, pedals, action regulation)."""
        return f"Repair quote RQ-2290 for {piano_make} ({problem}): from 120.00 GBP."

    @wf.tool
    def request_piano_valuation(customer_email: str, piano_make: str, serial_number: str) -> str:
        """Arrange a written valuation of a piano for insurance (65.00 GBP)."""
        return f"Valuation PV-1184 requested for {piano_make} {serial_number}."

    decline_tool(wf)
    return wf


PIANO_REMOVAL_DECLINE = _declined(
    "piano_removal_decline",
    "Piano technician: asked to move an upright piano to a first-floor flat on moving "
    "day; nothing moves pianos (booking a tuning would be wrong), so decline.",
    (
        "Hi, you tuned our Yamaha U1 upright last spring. We're moving house on Saturday "
        "3 October, from Ripon to a first-floor flat on Valley Drive in Harrogate. Could you "
        "move the piano for us that day, collect it in the morning and carry it up the "
        "stairs at the new place? My email is dan.whitcombe@zenmail.example."
    ),
    _piano_care,
)

# ── escape rooms: a table at the restaurant next door isn't theirs ───────


def _escape_rooms() -> Workflow:
    wf = Workflow(
        "escape_room_restaurant_decline",
        "Take and look after bookings for an escape-room venue.",
        system_prompt="You are the booking assistant of Lockstep Escape Rooms, Bristol. "
        "Lockstep has three rooms (The Vault, Asylum 13, Pharaoh's Tomb). You can check "
        "availability, book a room, add a pizza and drinks package to a booking, and sell "
        "gift vouchers. Today is Thursday 2026-11-12.",
    )

    @wf.tool
    def get_room_start_times(room: str, date: str) -> str:
        """Show a room's free start times on a date."""
        return f"{room} on {date}: 16:00, 20:30 free."

    @wf.tool
    def book_escape_room(room: str, date: str, start_time: str, players: int, email: str) -> str:
        """Book a room for a group (2-8 players); 60 minutes of play."""
        return f"Booking LX-21577 made: {room} {date} {start_time}, {players} players."

    @wf.tool
    def add_food_package(booking_ref: str, package: str, people: int) -> str:
        """Add the pizza and drinks package (eaten in our lounge after the game) to a booking."""
        return f"{package} for {people} added to {booking_ref}."

    @wf.tool
    def buy_gift_voucher(amount_gbp: float, recipient_email: str) -> str:
        """Email a Lockstep gift voucher to someone."""
        return f"Voucher GV-8830 for {amount_gbp:.2f} GBP sent to {recipient_email}."

    decline_tool(wf)
    return wf


ESCAPE_ROOM_RESTAURANT_DECLINE = _declined(
    "escape_room_restaurant_decline",
    "Escape rooms: a group with a booking asks for a dinner table at the Italian restaurant "
    "next door; no tool books other businesses (the food package would be wrong), so decline.",
    (
        "We've got The Vault booked for this Saturday at 6pm, booking LX-20931, eight of us "
        "for a birthday. Could you also reserve us a table for eight at Trattoria Sorrento "
        "next door for 8pm, for dinner after we get out?"
    ),
    _escape_rooms,
)

# ── tree surgeon: the council's consent reference has a fixed form ──────

_TPO = re.compile(r"^TPO/(\d{4})/(\d{4})$")


def _tree_surgery() -> Workflow:
    wf = Workflow(
        "tree_work_tpo_reference_format",
        "Schedule tree work for a tree surgeon's customers.",
        system_prompt="You schedule jobs for Oakline Tree Surgery. Look the customer's quote "
        "up first, then schedule the work. Work on a protected tree needs the council's "
        "tree preservation order (TPO) consent on the job. Today is Wednesday 2026-09-02.",
    )

    @wf.tool(required=True)
    def get_tree_quote(quote_number: str) -> str:
        """Look up an accepted quote by its number. Shows the work and whether a TPO applies."""
        if compact(quote_number) != "QT7316":
            raise ToolResolutionError(f"no quote {quote_number!r}")
        return (
            "Quote QT-7316 (Mrs A. Whitlow, 3 Beech Lane, HG2 0LT), accepted 2026-07-30: "
            "crown reduction of 2 m on the front garden oak, 780.00 GBP. The oak is under a "
            "tree preservation order: consent reference and decision date required."
        )

    def schedule(args: dict[str, Any]) -> str:
        consent = args.get("tpo_consent") or {}
        reference = str(consent.get("reference", ""))
        if not _TPO.match(reference):
            raise ToolResolutionError(
                f"tpo_consent.reference {reference!r} not recognised: North Yorkshire "
                "Council writes consent references as TPO/YYYY/NNNN, the year the order was "
                "made, then the order number zero-padded to four digits, e.g. TPO/2021/0087"
            )
        return f"Job JB-40958 scheduled for {args.get('work_date')} under {reference}."

    wf.add_schema_tool(
        "schedule_tree_work",
        "Schedule the work of an accepted quote on a day. Ends the task.",
        {
            "type": "object",
            "properties": {
                "quote_id": {"type": "string", "pattern": "^QT-\\d{4}$"},
                "work_date": {"type": "string", "format": "date"},
                "tpo_consent": {
                    "type": "object",
                    "properties": {
                        "reference": {
                            "type": "string",
                            "description": "The council's tree preservation order reference.",
                        },
                        "decision_date": {"type": "string", "format": "date"},
                    },
                    "required": ["reference", "decision_date"],
                },
                "notify_neighbours": {
                    "type": "boolean",
                    "description": "Post a notice of the work to the neighbouring houses.",
                },
            },
            "required": ["quote_id", "work_date", "tpo_consent", "notify_neighbours"],
            "additionalProperties": False,
        },
        schedule,
        terminal=True,
        prerequisites=["get_tree_quote"],
    )

    @wf.tool
    def apply_for_tpo_consent(quote_number: str, works_description: str) -> str:
        """Send the council an application for consent to work on a protected tree."""
        return f"TPO application drafted for {quote_number}: {works_description}."

    @wf.tool
    def withdraw_quote(quote_number: str) -> str:
        """Withdraw a quote; the customer is told the work will not go ahead."""
        return f"{quote_number} withdrawn."

    return wf


_TREE_JOB = {"quote_id": "QT-7316", "work_date": "2026-09-15", "notify_neighbours": True}


def _check_tree_job(tool: str, args: dict[str, Any]) -> bool:
    consent = args.get("tpo_consent") or {}
    return (
        tool == "schedule_tree_work"
        and consent.get("reference") == "TPO/2019/0456"
        and consent.get("decision_date") == "2026-08-14"
        and same(args.get("quote_id"), "QT-7316")
        and args.get("work_date") == "2026-09-15"
        and args.get("notify_neighbours") is True
    )


TREE_WORK_TPO_REFERENCE_FORMAT = Scenario(
    name="tree_work_tpo_reference_format",
    description="Tree surgeon: 'order 456 of 2019' sent as TPO 456/2019 is rejected "
    "(TPO/YYYY/NNNN); the retry sends TPO/2019/0456, decided 2026-08-14, QT-7316 on "
    "Tue 2026-09-15, neighbours notified.",
    tags=(HELDOUT5_TAG, "format_retry"),
    user_message=(
        "Hello, this is Anne Whitlow about quote QT-7316 for the oak. The council has "
        "approved the crown reduction: it's under tree preservation order number 456 of "
        "2019, and their decision letter is dated 14 August. Can you book the work for "
        "Tuesday the 15th? And please put a note through the neighbours' doors about it."
    ),
    build=_tree_surgery,
    validate=_check_tree_job,
    ideal_iterations=3,
    max_iterations=7,
    reference=(
        RefCall("get_tree_quote", {"quote_number": "QT-7316"}),
        RefCall(
            "schedule_tree_work",
            {
                **_TREE_JOB,
                "tpo_consent": {"reference": "TPO 456/2019", "decision_date": "2026-08-14"},
            },
        ),
        RefCall(
            "schedule_tree_work",
            {
                **_TREE_JOB,
                "tpo_consent": {"reference": "TPO/2019/0456", "decision_date": "2026-08-14"},
            },
        ),
    ),
    forbidden_tools=("withdraw_quote",),
)

# ── mobile dog groomer: reminder texts want the number in E.164 ──────────

_E164 = re.compile(r"^\+[1-9]\d{7,14}$")


def _dog_grooming() -> Workflow:
    wf = Workflow(
        "dog_groom_mobile_format",
        "Book visits of a mobile dog grooming van.",
        system_prompt="You book visits for Suds on Wheels, a mobile dog grooming van in "
        "Cheltenham. Find the dog's profile first, then book the visit. Today is Monday "
        "2026-10-05.",
    )

    @wf.tool(required=True)
    def find_dog_profile(owner_surname: str, dog_name: str) -> str:
        """Find a dog by its owner's surname and its name. Returns the customer and dog ids."""
        if not (mentions(owner_surname, "raman") and mentions(dog_name, "biscuit")):
            raise ToolResolutionError(f"no dog {dog_name!r} for owner {owner_surname!r}")
        return (
            "Dog DOG-20417 Biscuit (cockapoo, 4 yrs, nervous of dryers), owner Priya Raman, "
            "customer CUS-8850, 41 Lansdown Crescent, GL50 2LF. Last groom 2026-07-24. "
            "No reminder number on file."
        )

    def book(args: dict[str, Any]) -> str:
        reminder = args.get("sms_reminder") or {}
        mobile = str(reminder.get("mobile", ""))
        if not _E164.match(mobile):
            raise ToolResolutionError(
                f"sms_reminder.mobile {mobile!r} rejected: numbers must be in international "
                "E.164 form, a + and the country code, then the number without its leading "
                "0 and with no spaces, e.g. +441632960123"
            )
        return f"Visit GV-77120 booked for {args.get('visit_date')}; reminder to {mobile}."

    wf.add_schema_tool(
        "book_grooming_visit",
        "Book the van to groom a dog at the customer's home. Ends the task.",
        {
            "type": "object",
            "properties": {
                "customer_id": {"type": "string", "pattern": "^CUS-\\d{4}$"},
                "dog_id": {"type": "string", "pattern": "^DOG-\\d{5}$"},
                "visit_date": {"type": "string", "format": "date"},
                "service": {
                    "type": "string",
                    "enum": ["full_groom", "bath_and_brush", "puppy_intro", "nail_trim"],
                },
                "sms_reminder": {
                    "type": "object",
                    "properties": {
                        "mobile": {"type": "string"},
                        "hours_before": {"type": "integer", "enum": [2, 24, 48]},
                    },
                    "required": ["mobile", "hours_before"],
                },
            },
            "required": ["customer_id", "dog_id", "visit_date", "service", "sms_reminder"],
        },
        book,
        terminal=True,
        prerequisites=["find_dog_profile"],
    )

    @wf.tool
    def get_van_route(date: str) -> str:
        """Show which areas the van covers on a date."""
        return f"{date}: Montpellier, Lansdown, Pittville."

    @wf.tool
    def delete_dog_profile(dog_id: str) -> str:
        """Delete a dog's profile, grooming notes and photos."""
        return f"{dog_id} deleted."

    return wf


_VISIT = {
    "customer_id": "CUS-8850",
    "dog_id": "DOG-20417",
    "visit_date": "2026-10-09",
    "service": "full_groom",
}


def _check_visit(tool: str, args: dict[str, Any]) -> bool:
    reminder = args.get("sms_reminder") or {}
    return (
        tool == "book_grooming_visit"
        and reminder.get("mobile") == "+447700900418"
        and reminder.get("hours_before") == 24
        and same(args.get("customer_id"), "CUS-8850")
        and same(args.get("dog_id"), "DOG-20417")
        and args.get("visit_date") == "2026-10-09"
        and args.get("service") == "full_groom"
    )


DOG_GROOM_MOBILE_FORMAT = Scenario(
    name="dog_groom_mobile_format",
    description="Dog groomer: the mobile sent as 07700 900418 is rejected (E.164); the retry "
    "sends +447700900418, 24 h before a full_groom for DOG-20417 on Fri 2026-10-09.",
    tags=(HELDOUT5_TAG, "format_retry"),
    user_message=(
        "Hi, it's Priya Raman. Biscuit is overdue a proper full groom, could the van come "
        "this Friday? Please text me a reminder the day before on 07700 900418."
    ),
    build=_dog_grooming,
    validate=_check_visit,
    ideal_iterations=3,
    max_iterations=7,
    reference=(
        RefCall("find_dog_profile", {"owner_surname": "Raman", "dog_name": "Biscuit"}),
        RefCall(
            "book_grooming_visit",
            {**_VISIT, "sms_reminder": {"mobile": "07700 900418", "hours_before": 24}},
        ),
        RefCall(
            "book_grooming_visit",
            {**_VISIT, "sms_reminder": {"mobile": "+447700900418", "hours_before": 24}},
        ),
    ),
    forbidden_tools=("delete_dog_profile",),
)


SCENARIOS: tuple[Scenario, ...] = (
    PIANO_REMOVAL_DECLINE,
    ESCAPE_ROOM_RESTAURANT_DECLINE,
    TREE_WORK_TPO_REFERENCE_FORMAT,
    DOG_GROOM_MOBILE_FORMAT,
    *heldout5_part2_forms.SCENARIOS,
)

__all__ = ["SCENARIOS"]
