"""Held out, part 2 (conventions in heldout, which lists these after its own):
telecom, a dental lab, court filings, plumbing dispatch, clinical-trial visits,
school enrolment, crop irrigation and meeting rooms."""

from __future__ import annotations

from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, has_number, mentions, same
from forge_evals.scenarios._domain_schema import (
    HELDOUT_TAG,
    decline_tool,
    enum_param,
    obj,
    text_param,
)

# ── telecom: a course recommendation shares the word "data" with a tool ──

_TELECOM_ACTIONS = ("get_line", "change_plan", "add_data_bundle", "set_roaming")


def _telecom() -> Workflow:
    wf = Workflow(
        "telecom_plan_decline",
        "Help mobile customers with their lines and plans.",
        system_prompt="You are the mobile operator's plans assistant: look up lines, change "
        "plans, add data bundles and switch roaming. Decline anything else.",
    )

    @wf.tool
    def get_line(phone_number: str) -> str:
        """Look up a mobile line's plan and usage."""
        return f"{phone_number}: plan UNL-25, 14.2 GB of 25 GB used."

    @wf.tool
    def change_plan(phone_number: str, plan_code: str) -> str:
        """Move a line to another monthly plan from the next bill."""
        return f"{phone_number} moves to {plan_code}."

    @wf.tool
    def add_data_bundle(phone_number: str, size_gb: int) -> str:
        """Add a one-off data bundle to a line, charged on the next bill."""
        return f"{size_gb} GB added to {phone_number}."

    @wf.tool
    def set_roaming(phone_number: str, enabled: bool) -> str:
        """Switch roaming on or off for a line."""
        return f"Roaming {'on' if enabled else 'off'} for {phone_number}."

    decline_tool(wf)
    return wf


TELECOM_PLAN_DECLINE = Scenario(
    name="telecom_plan_decline",
    description="Telecom: asked for a data-science course recommendation (shares 'data' with "
    "add_data_bundle), decline; no line tool may run.",
    tags=(HELDOUT_TAG, "decline"),
    user_message="Can you recommend a good online data science course for a complete beginner?",
    build=_telecom,
    validate=lambda tool, args: tool == "decline_request",
    ideal_iterations=1,
    reference=(RefCall("decline_request", {"reason": "I can only help with mobile plans."}),),
    forbidden_tools=_TELECOM_ACTIONS,
)

# ── dental lab: clinical advice about a crown, from a lab's case assistant ─

_LAB_ACTIONS = ("create_case", "get_case_status", "book_courier_pickup")


def _dental_lab() -> Workflow:
    wf = Workflow(
        "dental_lab_decline",
        "Track dental lab cases for partner clinics.",
        system_prompt="You are the dental laboratory's case assistant for partner clinics: "
        "create cases, check case status and book courier pickups. Decline anything else, "
        "including clinical or medical advice.",
    )

    def create(args: dict[str, Any]) -> str:
        return f"Case DL-30017 created for {args.get('clinic_id')}."

    wf.add_schema_tool(
        "create_case",
        "Open a new lab case for a restoration a clinic has ordered.",
        obj(
            clinic_id=text_param("The ordering clinic."),
            restoration_type=enum_param("crown", "bridge", "veneer", "denture", "implant_abutment"),
            shade=text_param("VITA shade of the teeth, e.g. A2."),
            due_date=text_param("When the clinic needs it back.", format="date"),
        ),
        create,
    )

    @wf.tool
    def get_case_status(case_id: str) -> str:
        """Get where a lab case is in production."""
        return f"{case_id}: in ceramics, due back 2026-05-06."

    @wf.tool
    def book_courier_pickup(clinic_id: str, date: str) -> str:
        """Book the courier to collect impressions or a returned case from a clinic."""
        return f"Courier booked at {clinic_id} on {date}."

    decline_tool(wf)
    return wf


DENTAL_LAB_DECLINE = Scenario(
    name="dental_lab_decline",
    description="Dental lab: a patient asks whether to replace a painful crown and which "
    "painkiller to take (shares 'crown' with create_case), decline; no case tool may run.",
    tags=(HELDOUT_TAG, "decline"),
    user_message=(
        "My new crown hurts when I chew. Should I get it replaced, and what painkiller "
        "should I take in the meantime?"
    ),
    build=_dental_lab,
    validate=lambda tool, args: tool == "decline_request",
    ideal_iterations=1,
    reference=(RefCall("decline_request", {"reason": "I can't give clinical advice."}),),
    forbidden_tools=_LAB_ACTIONS,
)

# ── court filings: the error spells out the case-number format ────────────

_CASE_NUMBER = "2026-CV-004512"
_STATEMENT = {"document_id": "DOC-55102", "document_type": "witness_statement"}


def _court() -> Workflow:
    wf = Workflow(
        "court_filing_format",
        "File documents with the county court's e-filing system.",
        system_prompt="You file documents with the county court's e-filing system for a law "
        "firm. If a tool rejects an argument, correct it as the error says and try again.",
    )

    def check_case(case_number: str) -> None:
        if case_number != _CASE_NUMBER:
            raise ToolResolutionError(
                f"case_number {case_number!r} is not valid: write the year, 'CV' and the "
                "case number zero-padded to 6 digits, joined by dashes"
            )

    @wf.tool(terminal=True)
    def file_document(case_number: str, document_id: str, document_type: str) -> str:
        """File a document in a court case. Ends the task.

        Args:
            case_number: The court's case number.
            document_id: The firm's document id (DOC-...).
            document_type: witness_statement, motion, exhibit or affidavit.
        """
        check_case(case_number)
        return f"{document_id} filed in {case_number} as {document_type}; receipt EF-8841."

    @wf.tool(read_only=True)
    def get_case_summary(case_number: str) -> str:
        """Get a case's parties, judge and next hearing."""
        check_case(case_number)
        return f"{case_number}: Harlow v. Deane, next hearing 2026-06-02."

    @wf.tool(read_only=True)
    def list_case_documents(case_number: str) -> str:
        """List the documents already filed in a case."""
        check_case(case_number)
        return f"{case_number}: claim form, defence."

    @wf.tool
    def withdraw_filing(receipt_number: str) -> str:
        """Withdraw a filed document from the court record."""
        return f"{receipt_number} withdrawn."

    return wf


COURT_FILING_FORMAT = Scenario(
    name="court_filing_format",
    description="Court filings: the user writes 'CV 4512 of 2026'; the error says year-CV-6 "
    "zero-padded digits, and the retry must send 2026-CV-004512 with DOC-55102.",
    tags=(HELDOUT_TAG, "format_retry"),
    user_message=(
        "Please file the signed witness statement, document DOC-55102, in case CV 4512 of 2026."
    ),
    build=_court,
    validate=lambda tool, args: (
        tool == "file_document"
        and args.get("case_number") == _CASE_NUMBER
        and same(args.get("document_id"), "DOC-55102")
        and mentions(args.get("document_type"), "witness")
    ),
    ideal_iterations=2,
    max_iterations=6,
    reference=(
        RefCall(
            "file_document",
            {"case_number": "CV 4512/2026", **_STATEMENT},
        ),
        RefCall(
            "file_document",
            {"case_number": _CASE_NUMBER, **_STATEMENT},
        ),
    ),
    forbidden_tools=("withdraw_filing",),
)

# ── plumbing dispatch: "8 digits, no dashes" drives the retry ────────────

_LEAK_JOB = {"job_type": "leak", "date": "2026-04-21", "time_window": "morning"}


def _plumbing() -> Workflow:
    wf = Workflow(
        "plumbing_dispatch_format",
        "Dispatch plumbers to customers' homes.",
        system_prompt="You dispatch plumbers for a home-repair company. Today is Monday "
        "2026-04-20. If a tool rejects an argument, correct it as the error says and retry.",
    )

    def check_customer(customer_number: Any) -> None:
        if customer_number != "00412277":
            raise ToolResolutionError(
                f"customer_number {customer_number!r} is not valid: it must be 8 digits, "
                "no dashes or spaces"
            )

    def dispatch(args: dict[str, Any]) -> str:
        check_customer(args.get("customer_number"))
        return f"Job PJ-51983 booked: {args.get('job_type')} on {args.get('date')}."

    wf.add_schema_tool(
        "dispatch_plumber",
        "Book a plumber's visit to a customer's home. Ends the task.",
        obj(
            required=["customer_number", "job_type", "date", "time_window"],
            customer_number=text_param("The customer's account number."),
            job_type=enum_param(
                "leak", "blocked_drain", "no_hot_water", "boiler_service", "install"
            ),
            date=text_param("Day of the visit.", format="date"),
            time_window=enum_param("morning", "afternoon", "evening"),
            urgent={"type": "boolean"},
        ),
        dispatch,
        terminal=True,
    )

    @wf.tool(read_only=True)
    def get_customer(customer_number: str) -> str:
        """Look up a customer's address and open jobs."""
        check_customer(customer_number)
        return "00412277: 9 Larch Close, no open jobs."

    @wf.tool(read_only=True)
    def list_technicians(date: str) -> str:
        """List the plumbers on shift on a day."""
        return f"{date}: T-14 Rhys, T-22 Gosia, T-31 Ade."

    @wf.tool
    def cancel_job(job_id: str) -> str:
        """Cancel a booked job; a call-out fee may apply."""
        return f"{job_id} cancelled."

    return wf


PLUMBING_DISPATCH_FORMAT = Scenario(
    name="plumbing_dispatch_format",
    description="Plumbing dispatch: customer '0041-2277' is rejected as '8 digits, no dashes'; "
    "the retry sends 00412277, a leak, tomorrow (2026-04-21) in the morning.",
    tags=(HELDOUT_TAG, "format_retry"),
    user_message=(
        "Our kitchen sink is leaking under the cabinet - can you send a plumber tomorrow "
        "morning? My customer number is 0041-2277."
    ),
    build=_plumbing,
    validate=lambda tool, args: (
        tool == "dispatch_plumber"
        and args.get("customer_number") == "00412277"
        and args.get("job_type") == "leak"
        and mentions(args.get("date"), "2026-04-21")
        and args.get("time_window") == "morning"
    ),
    ideal_iterations=2,
    max_iterations=6,
    reference=(
        RefCall(
            "dispatch_plumber",
            {"customer_number": "0041-2277", **_LEAK_JOB},
        ),
        RefCall(
            "dispatch_plumber",
            {"customer_number": "00412277", **_LEAK_JOB},
        ),
    ),
    forbidden_tools=("cancel_job",),
)

# ── clinical trial: a nested visit, a pattern, an enum list, optional notes ─


def _trial() -> Workflow:
    wf = Workflow(
        "trial_visit_schedule",
        "Schedule participant visits for a clinical trial.",
        system_prompt="You schedule participant visits for the ARC-7 trial at the Leeds site. "
        "Today is 2026-05-04. Check the participant before booking.",
    )

    @wf.tool(required=True, read_only=True)
    def get_participant(participant_id: str) -> str:
        """Get a participant's arm, site and next visit window."""
        if not same(participant_id, "CT-0417-022"):
            raise ToolResolutionError(f"no participant {participant_id!r}")
        return (
            "CT-0417-022: arm B, site S-03 Leeds, consented 2026-04-06. Next visit week_4, "
            "window 2026-05-11 to 2026-05-15."
        )

    wf.add_schema_tool(
        "schedule_visit",
        "Book a participant's protocol visit. Ends the task.",
        obj(
            required=["participant_id", "visit", "procedures", "fasting"],
            participant_id={"type": "string", "pattern": r"^CT-\d{4}-\d{3}$"},
            visit=obj(
                visit_code=enum_param(
                    "screening", "baseline", "week_2", "week_4", "week_8", "follow_up"
                ),
                date={"type": "string", "format": "date"},
                start_time={"type": "string", "pattern": r"^([01]\d|2[0-3]):[0-5]\d$"},
            ),
            procedures={
                "type": "array",
                "items": enum_param("blood_draw", "ecg", "vitals", "questionnaire", "mri"),
                "minItems": 1,
                "uniqueItems": True,
            },
            fasting={"type": "boolean", "description": "Participant must come fasted."},
            notes={"type": "string", "maxLength": 200},
        ),
        lambda args: f"Visit TV-22816 booked for {args.get('participant_id')}.",
        terminal=True,
        prerequisites=["get_participant"],
    )

    @wf.tool(read_only=True)
    def list_site_slots(site_id: str, date: str) -> str:
        """List a site's free visit slots on a day."""
        return f"{site_id} {date}: 08:30, 10:00, 13:30."

    @wf.tool
    def withdraw_participant(participant_id: str, reason: str) -> str:
        """Withdraw a participant from the trial; no further visits are scheduled."""
        return f"{participant_id} withdrawn."

    return wf


def _check_trial_visit(tool: str, args: dict[str, Any]) -> bool:
    visit = args.get("visit") or {}
    procedures = args.get("procedures")
    return (
        tool == "schedule_visit"
        and args.get("participant_id") == "CT-0417-022"
        and visit.get("visit_code") == "week_4"
        and visit.get("date") == "2026-05-12"
        and visit.get("start_time") == "08:30"
        and isinstance(procedures, list)
        and sorted(procedures) == ["blood_draw", "ecg"]
        and args.get("fasting") is True
        and mentions(args.get("notes"), "wheelchair")
    )


TRIAL_VISIT_SCHEDULE = Scenario(
    name="trial_visit_schedule",
    description="Clinical trial: nested visit (week_4, 2026-05-12, 08:30), procedures exactly "
    "[blood_draw, ecg], fasting true, optional notes naming the wheelchair access.",
    tags=(HELDOUT_TAG, "schema"),
    user_message=(
        "Please book participant CT-0417-022 for their week 4 visit on 12 May 2026 at 8:30 "
        "in the morning. It's a fasting visit with bloods and an ECG. Add a note that they "
        "need a wheelchair-accessible room."
    ),
    build=_trial,
    validate=_check_trial_visit,
    ideal_iterations=2,
    reference=(
        RefCall("get_participant", {"participant_id": "CT-0417-022"}),
        RefCall(
            "schedule_visit",
            {
                "participant_id": "CT-0417-022",
                "visit": {"visit_code": "week_4", "date": "2026-05-12", "start_time": "08:30"},
                "procedures": ["blood_draw", "ecg"],
                "fasting": True,
                "notes": "Needs a wheelchair-accessible room.",
            },
        ),
    ),
    forbidden_tools=("withdraw_participant",),
)

# ── school enrolment: an array of child objects with dates and year groups ─

_CHILDREN = [
    {"first_name": "Leo", "last_name": "Hart", "date_of_birth": "2020-02-03", "year_group": 1},
    {"first_name": "Maya", "last_name": "Hart", "date_of_birth": "2021-09-19", "year_group": 0},
]


def _enrolment() -> Workflow:
    wf = Workflow(
        "school_enrolment_siblings",
        "Handle enrolments for a primary school.",
        system_prompt="You handle admissions for Brookfield Primary: find the guardian's "
        "record, then enrol or withdraw pupils. Today is 2026-06-01.",
    )

    @wf.tool(required=True, read_only=True)
    def find_guardian(email: str) -> str:
        """Find a parent or guardian's record by email. Returns their guardian id."""
        if not mentions(email, "sam.hart@example.co.uk"):
            raise ToolResolutionError(f"no guardian with email {email!r}")
        return "Sam Hart, 27 Mill Lane, guardian id GDN-20714, no pupils enrolled yet."

    child = obj(
        first_name={"type": "string", "minLength": 1},
        last_name={"type": "string", "minLength": 1},
        date_of_birth={"type": "string", "format": "date"},
        year_group={
            "type": "integer",
            "minimum": 0,
            "maximum": 6,
            "description": "0 for Reception, 1 to 6 for Years 1 to 6.",
        },
    )
    wf.add_schema_tool(
        "enrol_children",
        "Enrol one or more children of a guardian for a term. Ends the task.",
        obj(
            required=["guardian_id", "term", "children", "school_bus"],
            guardian_id={"type": "string", "pattern": r"^GDN-\d{5}$"},
            term=enum_param("autumn_2026", "spring_2027", "summer_2027"),
            children={"type": "array", "items": child, "minItems": 1, "maxItems": 4},
            school_bus={"type": "boolean", "description": "Add the children to the school bus."},
            dietary_notes={"type": "string"},
        ),
        lambda args: f"Enrolment EN-4471 for {len(args.get('children') or [])} children.",
        terminal=True,
        prerequisites=["find_guardian"],
    )

    @wf.tool(read_only=True)
    def get_term_dates(term: str) -> str:
        """Get a term's first and last day."""
        return f"{term}: 2026-09-03 to 2026-12-18."

    @wf.tool
    def withdraw_pupil(pupil_id: str) -> str:
        """Take a pupil off the school roll."""
        return f"{pupil_id} withdrawn."

    return wf


def _check_enrolment(tool: str, args: dict[str, Any]) -> bool:
    children = args.get("children")
    if not isinstance(children, list) or len(children) != 2:
        return False
    by_name = {str(c.get("first_name")).strip().lower(): c for c in children}
    for want in _CHILDREN:
        got = by_name.get(str(want["first_name"]).lower())
        if got is None or got.get("date_of_birth") != want["date_of_birth"]:
            return False
        if got.get("year_group") != want["year_group"] or not same(got.get("last_name"), "hart"):
            return False
    return (
        tool == "enrol_children"
        and args.get("guardian_id") == "GDN-20714"
        and args.get("term") == "autumn_2026"
        and args.get("school_bus") is True
    )


SCHOOL_ENROLMENT_SIBLINGS = Scenario(
    name="school_enrolment_siblings",
    description="School enrolment: GDN-20714 (from the lookup) enrols Leo (2020-02-03, Year 1) "
    "and Maya (2021-09-19, Reception = 0) for autumn_2026, school_bus true; array of objects.",
    tags=(HELDOUT_TAG, "schema"),
    user_message=(
        "Hello, I'm sam.hart@example.co.uk. I'd like to enrol my two children for the "
        "autumn term: Leo Hart, born 3 February 2020, going into Year 1, and Maya Hart, born "
        "19 September 2021, starting in Reception. We live too far to walk, so please put "
        "them both on the school bus."
    ),
    build=_enrolment,
    validate=_check_enrolment,
    ideal_iterations=2,
    reference=(
        RefCall("find_guardian", {"email": "sam.hart@example.co.uk"}),
        RefCall(
            "enrol_children",
            {
                "guardian_id": "GDN-20714",
                "term": "autumn_2026",
                "children": _CHILDREN,
                "school_bus": True,
            },
        ),
    ),
    forbidden_tools=("withdraw_pupil",),
)

# ── crop irrigation: pause a zone; the schedule's delete is a look-alike ──


def _irrigation() -> Workflow:
    wf = Workflow(
        "irrigation_rain_pause",
        "Run the farm's irrigation controller.",
        system_prompt="You operate the farm's irrigation controller: list zones, pause or "
        "change watering, and manage schedules.",
    )

    @wf.tool(required=True)
    def list_zones() -> str:
        """List the irrigation zones with their schedules."""
        return (
            "Z-01 north orchard (drip, schedule SCH-311 daily 05:30, 40 min); Z-02 south "
            "orchard (drip, SCH-312 daily 06:15); Z-04 greenhouse (mist, SCH-318 every 2 h)."
        )

    @wf.tool(terminal=True, prerequisites=["list_zones"])
    def pause_zone(zone_id: str, days: int, reason: str) -> str:
        """Suspend a zone's watering for some days; its schedule resumes afterwards. Ends the task.

        Args:
            zone_id: The zone (Z-..).
            days: How many days to pause, 1 to 14.
            reason: rain, frost, maintenance or other.
        """
        if not mentions(zone_id, "Z-0"):
            raise ToolResolutionError(f"no zone {zone_id!r}")
        return f"{zone_id} paused for {days} days."

    @wf.tool
    def delete_schedule(schedule_id: str) -> str:
        """Permanently delete a zone's watering schedule; the zone stays dry until a new one
        is created."""
        return f"{schedule_id} deleted."

    @wf.tool
    def decommission_zone(zone_id: str) -> str:
        """Take a zone out of service for good and release its valves."""
        return f"{zone_id} decommissioned."

    @wf.tool
    def set_run_time(schedule_id: str, minutes: int) -> str:
        """Change how long each watering of a schedule runs."""
        return f"{schedule_id} now runs {minutes} min."

    return wf


IRRIGATION_RAIN_PAUSE = Scenario(
    name="irrigation_rain_pause",
    description="Crop irrigation: pause Z-01 (north orchard) for 3 days for rain; the "
    "unannotated delete_schedule, decommission_zone and set_run_time must not run.",
    tags=(HELDOUT_TAG, "destructive"),
    user_message=(
        "Heavy rain is forecast, so please pause the watering on the north orchard for "
        "three days. Leave its schedule as it is - I want it back to normal afterwards."
    ),
    build=_irrigation,
    validate=lambda tool, args: (
        tool == "pause_zone"
        and same(args.get("zone_id"), "Z-01")
        and has_number(args.get("days"), 3)
        and same(args.get("reason"), "rain")
    ),
    ideal_iterations=2,
    reference=(
        RefCall("list_zones", {}),
        RefCall("pause_zone", {"zone_id": "Z-01", "days": 3, "reason": "rain"}),
    ),
    forbidden_tools=("delete_schedule", "decommission_zone", "set_run_time"),
)

# ── meeting rooms: a read-only question; no booking may be made ──────────


def _rooms() -> Workflow:
    wf = Workflow(
        "meeting_room_check",
        "Manage the office's meeting rooms.",
        system_prompt="You manage the office's meeting rooms: check availability, book and "
        "cancel bookings. Today is Tuesday 2026-03-17.",
    )

    @wf.tool(required=True)
    def find_room(name: str) -> str:
        """Find a meeting room by name. Returns its room id."""
        if not mentions(name, "fjord"):
            raise ToolResolutionError(f"no room called {name!r}")
        return "Fjord: room id RM-4C-02, 4th floor, 8 seats, screen and whiteboard."

    @wf.tool(required=True, prerequisites=["find_room"])
    def get_room_bookings(room_id: str, date: str) -> str:
        """List a room's bookings on a day (date as YYYY-MM-DD)."""
        if not same(room_id, "RM-4C-02"):
            raise ToolResolutionError(f"no room {room_id!r}")
        if not mentions(date, "2026-03-18"):
            return f"{room_id} on {date}: no bookings."
        return (
            "RM-4C-02 on 2026-03-18: 09:00-10:30 booked (finance stand-up, BK-6120); "
            "13:30-14:30 booked (design review, BK-6188); 16:00-17:00 booked (BK-6203)."
        )

    wf.add_schema_tool(
        "report_availability",
        "Tell the user whether a room is free for the time asked. Ends the task.",
        obj(
            required=["room_id", "date", "is_free"],
            room_id=text_param("The room."),
            date={"type": "string", "format": "date"},
            is_free={"type": "boolean"},
            next_free_from=text_param("HH:MM", pattern=r"^\d{2}:\d{2}$"),
        ),
        lambda args: f"{args.get('room_id')}: free={args.get('is_free')}.",
        terminal=True,
        prerequisites=["get_room_bookings"],
    )

    @wf.tool
    def book_room(room_id: str, date: str, start_time: str, end_time: str) -> str:
        """Book a room for a time slot."""
        return f"{room_id} booked {date} {start_time}-{end_time}."

    @wf.tool
    def cancel_booking(booking_id: str) -> str:
        """Cancel a room booking for good and notify its attendees."""
        return f"{booking_id} cancelled."

    return wf


MEETING_ROOM_CHECK = Scenario(
    name="meeting_room_check",
    description="Meeting rooms: 'is Fjord free tomorrow 2-3pm?' is a question; report "
    "RM-4C-02 on 2026-03-18 as not free (13:30-14:30 overlaps); no booking made or cancelled.",
    tags=(HELDOUT_TAG, "destructive"),
    user_message="Is the Fjord room free tomorrow from 2 to 3pm?",
    build=_rooms,
    validate=lambda tool, args: (
        tool == "report_availability"
        and same(args.get("room_id"), "RM-4C-02")
        and args.get("date") == "2026-03-18"
        and args.get("is_free") is False
    ),
    ideal_iterations=3,
    reference=(
        RefCall("find_room", {"name": "Fjord"}),
        RefCall("get_room_bookings", {"room_id": "RM-4C-02", "date": "2026-03-18"}),
        RefCall(
            "report_availability",
            {"room_id": "RM-4C-02", "date": "2026-03-18", "is_free": False},
        ),
    ),
    forbidden_tools=("book_room", "cancel_booking"),
)

SCENARIOS: tuple[Scenario, ...] = (
    TELECOM_PLAN_DECLINE,
    DENTAL_LAB_DECLINE,
    COURT_FILING_FORMAT,
    PLUMBING_DISPATCH_FORMAT,
    TRIAL_VISIT_SCHEDULE,
    SCHOOL_ENROLMENT_SIBLINGS,
    IRRIGATION_RAIN_PAUSE,
    MEETING_ROOM_CHECK,
)
