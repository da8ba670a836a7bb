"""Held out, sixth group, part 2: a beekeepers' swarm line, a chimney sweep,
a boatyard and a music school's exam entries here; a self-storage site, a
doorstep milk round, a recording studio and a pest controller in
heldout6_part2_forms. Written from the user's side only, tagged `heldout6`
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
from forge_evals.scenario import RefCall, Scenario, mentions, same, text_of
from forge_evals.scenarios import heldout6_part2_forms
from forge_evals.scenarios._domain_schema import (
    HELDOUT6_TAG,
    compact,
    decline_tool,
    declined_scenario,
)


def _declined(
    name: str, description: str, user_message: str, build: Callable[[], Workflow]
) -> Scenario:
    """A request no tool serves: the run declines and calls no other tool."""
    return declined_scenario(
        HELDOUT6_TAG, name, description, user_message, build, "We don't handle that here."
    )


# ── beekeepers' swarm line: a wasp nest is not a honeybee swarm ──────────


def _swarm_line() -> Workflow:
    wf = Workflow(
        "wasp_nest_swarm_decline",
        "Answer the public swarm line and members of a beekeepers' association.",
        system_prompt="You answer the swarm line and member enquiries of the Wharfedale "
        "Beekeepers' Association. Our volunteer collectors take away swarms of honeybees "
        "free of charge; we are not pest controllers and do not remove wasp, hornet or "
        "bumblebee nests. You can log a honeybee swarm for collection, book a mentor's hive "
        "inspection for members, take orders for nucleus colonies and book places on the "
        "beginners' course. Today is Wednesday 2026-06-17.",
    )

    @wf.tool
    def report_honeybee_swarm(
        address: str, where_on_property: str, height_m: float, contact_phone: str
    ) -> str:
        """Log a honeybee swarm (a hanging cluster of bees) for a volunteer collector."""
        return f"Swarm SW-26-0318 logged at {address}; a collector will phone {contact_phone}."

    @wf.tool
    def book_hive_inspection(member_number: str, apiary_postcode: str, date: str) -> str:
        """Book a mentor to go through a member's hive with them."""
        return f"Inspection HI-7742 booked for {member_number} on {date}."

    @wf.tool
    def order_nucleus_colony(member_number: str, frames: int) -> str:
        """Order a nucleus colony (5 frames, 185.00 GBP) from the association's apiary."""
        return f"Nucleus order NUC-2216 placed for {member_number}: {frames} frames."

    @wf.tool
    def book_beginners_course(email: str, course_start: str) -> str:
        """Book a place on the six-evening beginners' beekeeping course (95.00 GBP)."""
        return f"Course place BC-0931 booked for {email} from {course_start}."

    decline_tool(wf)
    return wf


WASP_NEST_SWARM_DECLINE = _declined(
    "wasp_nest_swarm_decline",
    "Beekeepers' swarm line: a caller wants a wasp nest in a garage roof removed; the "
    "volunteers only collect honeybee swarms (logging a 'swarm' would be wrong), so decline.",
    (
        "hello, there's a swarm of wasps coming and going from a gap under the eaves of our "
        "garage, I think there's a big nest up in the roof space. The kids won't go in the "
        "garden. Can one of your people come round this week and get rid of it? We're at 22 "
        "Moor Lane, Ilkley, my number is 07700 900266. Thanks, Gail"
    ),
    _swarm_line,
)

# ── chimney sweep: a boiler's gas safety certificate is a gas engineer's ─


def _chimney_sweep() -> Workflow:
    wf = Workflow(
        "gas_safety_certificate_decline",
        "Book sweeps for a chimney sweeping business.",
        system_prompt="You are the booking assistant of Sootmaster Chimney Sweeps, York. We "
        "sweep open fires, wood burners, multi-fuel stoves and range cookers burning solid "
        "fuel; we do not work on gas or oil appliances. You can show free slots, book a "
        "sweep, re-send the sweep certificate of a past sweep, and quote for cowls and bird "
        "guards. Today is Tuesday 2026-09-08.",
    )

    @wf.tool
    def get_sweep_slots(postcode: str, week_starting: str) -> str:
        """Show the sweep's free slots near a postcode in a week."""
        return f"Week of {week_starting} near {postcode}: Wed 08:00, Thu 13:00, Sat 09:30."

    @wf.tool
    def book_chimney_sweep(address: str, appliance: str, date: str, slot: str) -> str:
        """Book a sweep of one flue (70.00 GBP; certificate of sweeping included)."""
        return f"Sweep SC-40127 booked at {address}: {appliance}, {date} {slot}."

    @wf.tool
    def issue_sweep_certificate(booking_ref: str, email: str) -> str:
        """Email the certificate of sweeping of a completed sweep (for insurers, landlords)."""
        return f"Certificate for {booking_ref} emailed to {email}."

    @wf.tool
    def quote_cowl_or_bird_guard(address: str, pots: int, product: str) -> str:
        """Quote supplying and fitting a cowl or bird guard on chimney pots."""
        return f"Quote CQ-1186 for {pots} x {product} at {address}: from 145.00 GBP."

    decline_tool(wf)
    return wf


GAS_SAFETY_CERTIFICATE_DECLINE = _declined(
    "gas_safety_certificate_decline",
    "Chimney sweep: a landlord wants the annual gas safety certificate (CP12) for a flat's "
    "boiler; the sweep does no gas work (issue_sweep_certificate or a booking would be "
    "wrong), so decline.",
    (
        "Morning. I let out a flat at 9 Albion Street, YO1 6HA, and the gas safety "
        "certificate runs out at the end of the month. Could you send someone to check the "
        "combi boiler and its flue and do me a new CP12 certificate? Tenant's in most days. "
        "Email is r.ashworth@lettings.example"
    ),
    _chimney_sweep,
)

# ── boatyard: the Small Ships Register number has a fixed form ──────────

_SSR = re.compile(r"^SSR\d{6}$")
_DATE: dict[str, Any] = {"type": "string", "format": "date"}
_YARD_SERVICES = ["pressure_wash", "antifoul", "anode_replacement", "polish", "survey_access"]


def _boatyard() -> Workflow:
    wf = Workflow(
        "boat_haul_out_ssr_format",
        "Book lift-outs and yard work for a boatyard's berth holders.",
        system_prompt="You book yard work for Saltmarsh Boatyard, Lymington. Look the berth "
        "holder up by berth first, then book the haul-out. Insurers now require the vessel's "
        "registration on every lift. Today is Monday 2026-10-05.",
    )

    @wf.tool(required=True)
    def find_berth_holder(berth: str) -> str:
        """Look up who holds a berth, their yard account and their boat."""
        if compact(berth) != "C14":
            raise ToolResolutionError(f"no berth {berth!r}; pontoon berths look like C-14")
        return (
            "Berth C-14: Martin Greaves, yard account BY-30418. Vessel 'Curlew', Westerly "
            "Centaur 26 ft bilge keel, 2.9 t. Registration: not on file. Last lift-out "
            "2025-10-21 (HO-5520)."
        )

    def book(args: dict[str, Any]) -> str:
        vessel = args.get("vessel") or {}
        registration = str(vessel.get("registration", ""))
        if not _SSR.match(registration):
            raise ToolResolutionError(
                f"vessel.registration {registration!r} not accepted: Small Ships Register "
                "numbers are entered as the letters SSR followed straight away by the six "
                "digits, no spaces, slashes or dashes, e.g. SSR104233"
            )
        return f"Haul-out HO-6107 booked: lift {args.get('lift_date')}, {registration}."

    wf.add_schema_tool(
        "book_haul_out",
        "Book a boat's lift-out, yard work and relaunch. Ends the task.",
        {
            "type": "object",
            "properties": {
                "account_id": {"type": "string", "pattern": "^BY-\\d{5}$"},
                "vessel": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "minLength": 1},
                        "registration": {
                            "type": "string",
                            "description": "The vessel's Small Ships Register number.",
                        },
                    },
                    "required": ["name", "registration"],
                    "additionalProperties": False,
                },
                "lift_date": _DATE,
                "relaunch_date": _DATE,
                "services": {
                    "type": "array",
                    "items": {"type": "string", "enum": _YARD_SERVICES},
                    "uniqueItems": True,
                },
            },
            "required": ["account_id", "vessel", "lift_date", "relaunch_date", "services"],
            "additionalProperties": False,
        },
        book,
        terminal=True,
        prerequisites=["find_berth_holder"],
    )

    @wf.tool
    def get_slipway_tides(date: str) -> str:
        """High and low water at the yard's slipway on a date."""
        return f"{date}: HW 07:42 (2.9 m), LW 13:55 (0.8 m), HW 20:08 (3.0 m)."

    @wf.tool
    def terminate_berth_licence(account_id: str) -> str:
        """End a berth licence; the berth is offered to the waiting list."""
        return f"Berth licence of {account_id} terminated."

    return wf


_HAUL = {
    "account_id": "BY-30418",
    "lift_date": "2026-10-13",
    "relaunch_date": "2026-10-16",
    "services": ["pressure_wash", "antifoul"],
}


def _check_haul_out(tool: str, args: dict[str, Any]) -> bool:
    vessel = args.get("vessel") or {}
    services = args.get("services")
    return (
        tool == "book_haul_out"
        and vessel.get("registration") == "SSR148302"
        and mentions(vessel.get("name"), "curlew")
        and same(args.get("account_id"), "BY-30418")
        and args.get("lift_date") == "2026-10-13"
        and args.get("relaunch_date") == "2026-10-16"
        and isinstance(services, list)
        and sorted(services) == ["antifoul", "pressure_wash"]
    )


BOAT_HAUL_OUT_SSR_FORMAT = Scenario(
    name="boat_haul_out_ssr_format",
    description="Boatyard: 'SSR number 148 302' sent as 148 302 is rejected (SSR + six digits); "
    "the retry sends SSR148302 for Curlew on BY-30418, lift Tue 2026-10-13, relaunch Fri "
    "2026-10-16, services exactly pressure_wash + antifoul.",
    tags=(HELDOUT6_TAG, "format_retry"),
    user_message=(
        "Hi there, Martin Greaves on C14. I'd like Curlew out of the water on Tuesday the "
        "13th for a pressure wash and a fresh coat of antifoul, and back in on the Friday. "
        "The office said you'd want her registration this year: her Small Ships Register "
        "number is 148 302."
    ),
    build=_boatyard,
    validate=_check_haul_out,
    ideal_iterations=3,
    max_iterations=7,
    reference=(
        RefCall("find_berth_holder", {"berth": "C14"}),
        RefCall(
            "book_haul_out", {**_HAUL, "vessel": {"name": "Curlew", "registration": "148 302"}}
        ),
        RefCall(
            "book_haul_out", {**_HAUL, "vessel": {"name": "Curlew", "registration": "SSR148302"}}
        ),
    ),
    forbidden_tools=("terminate_berth_licence",),
)

# ── music exams: the board's portal wants the birth date day first ──────

_DOB = re.compile(r"^\d{2}/\d{2}/\d{4}$")
_INSTRUMENTS = ["piano", "violin", "viola", "cello", "flute", "clarinet", "guitar", "singing"]


def _exam_entries() -> Workflow:
    wf = Workflow(
        "music_exam_entry_dob_format",
        "Enter a music school's pupils for graded exams.",
        system_prompt="You enter pupils of Allegro Music School, Leeds for graded practical "
        "exams through the exam board's entry portal. Find the right exam session first, "
        "then enter the candidate. Today is Monday 2026-09-14.",
    )

    @wf.tool(required=True)
    def list_exam_sessions(region: str) -> str:
        """List the practical exam sessions open for entries in a region (or near a town)."""
        if not mentions(region, "yorkshire", "leeds", "harrogate", "york"):
            raise ToolResolutionError(f"no sessions listed for region {region!r}")
        return (
            "Autumn 2026, West & North Yorkshire: SES-26C-LDS-04 Leeds, Clothworkers Hall, "
            "16 Nov - 4 Dec, entries close 2026-10-12; SES-26C-HGT-02 Harrogate, Royal Hall "
            "studio, 23-27 Nov, entries close 2026-10-12; SES-26C-YRK-01 York, St Peter's, "
            "30 Nov - 2 Dec, entries close 2026-10-05."
        )

    def enter(args: dict[str, Any]) -> str:
        candidate = args.get("candidate") or {}
        dob = str(candidate.get("date_of_birth", ""))
        if not _DOB.match(dob):
            raise ToolResolutionError(
                f"candidate.date_of_birth {dob!r} is not in the portal's format: dates of "
                "birth are written DD/MM/YYYY, day first, two-digit day and month with a "
                "leading zero, four-digit year, e.g. 09/11/2014"
            )
        return f"Entry EN-418862 made in {args.get('session_id')}: grade {args.get('grade')}."

    wf.add_schema_tool(
        "enter_exam_candidate",
        "Enter a candidate for a graded practical exam in a session. Ends the task.",
        {
            "type": "object",
            "properties": {
                "session_id": {"type": "string", "pattern": "^SES-\\d{2}[A-Z]-[A-Z]{3}-\\d{2}$"},
                "teacher_number": {"type": "string", "pattern": "^T\\d{6}$"},
                "candidate": {
                    "type": "object",
                    "properties": {
                        "first_name": {"type": "string", "minLength": 1},
                        "last_name": {"type": "string", "minLength": 1},
                        "date_of_birth": {"type": "string", "description": "Date of birth."},
                    },
                    "required": ["first_name", "last_name", "date_of_birth"],
                    "additionalProperties": False,
                },
                "instrument": {"type": "string", "enum": _INSTRUMENTS},
                "grade": {"type": "integer", "minimum": 1, "maximum": 8},
            },
            "required": ["session_id", "teacher_number", "candidate", "instrument", "grade"],
            "additionalProperties": False,
        },
        enter,
        terminal=True,
        prerequisites=["list_exam_sessions"],
    )

    @wf.tool
    def get_exam_fees(grade: int) -> str:
        """The entry fee of a practical grade."""
        return f"Grade {grade} practical: {46 + 6 * grade:.2f} GBP."

    @wf.tool
    def withdraw_exam_entry(entry_number: str) -> str:
        """Withdraw an entry; fees are not refunded after the closing date."""
        return f"{entry_number} withdrawn."

    return wf


_ENTRY = {
    "session_id": "SES-26C-LDS-04",
    "teacher_number": "T204587",
    "instrument": "violin",
    "grade": 3,
}
_ISLA = {"first_name": "Isla", "last_name": "Fairbairn"}


def _check_entry(tool: str, args: dict[str, Any]) -> bool:
    candidate = args.get("candidate") or {}
    return (
        tool == "enter_exam_candidate"
        and candidate.get("date_of_birth") == "03/07/2015"
        and same(candidate.get("first_name"), "isla")
        and same(candidate.get("last_name"), "fairbairn")
        and same(args.get("session_id"), "SES-26C-LDS-04")
        and text_of(args.get("teacher_number")) == "t204587"
        and args.get("instrument") == "violin"
        and args.get("grade") == 3
        and type(args.get("grade")) is int
    )


MUSIC_EXAM_ENTRY_DOB_FORMAT = Scenario(
    name="music_exam_entry_dob_format",
    description="Music exams: 'born 3 July 2015' sent as 2015-07-03 is rejected (DD/MM/YYYY); "
    "the retry sends 03/07/2015 (not 07/03/2015) for Isla Fairbairn, Grade 3 violin in the "
    "Leeds session SES-26C-LDS-04, teacher T204587.",
    tags=(HELDOUT6_TAG, "format_retry"),
    user_message=(
        "Could you put Isla Fairbairn in for her Grade 3 violin this autumn please? Leeds "
        "would be best for her family, Harrogate's too far. She was born on the 3rd of July "
        "2015. I'm her teacher, my board number is T204587."
    ),
    build=_exam_entries,
    validate=_check_entry,
    ideal_iterations=3,
    max_iterations=7,
    reference=(
        RefCall("list_exam_sessions", {"region": "West Yorkshire"}),
        RefCall(
            "enter_exam_candidate",
            {**_ENTRY, "candidate": {**_ISLA, "date_of_birth": "2015-07-03"}},
        ),
        RefCall(
            "enter_exam_candidate",
            {**_ENTRY, "candidate": {**_ISLA, "date_of_birth": "03/07/2015"}},
        ),
    ),
    forbidden_tools=("withdraw_exam_entry",),
)


SCENARIOS: tuple[Scenario, ...] = (
    WASP_NEST_SWARM_DECLINE,
    GAS_SAFETY_CERTIFICATE_DECLINE,
    BOAT_HAUL_OUT_SSR_FORMAT,
    MUSIC_EXAM_ENTRY_DOB_FORMAT,
    *heldout6_part2_forms.SCENARIOS,
)

__all__ = ["SCENARIOS"]
