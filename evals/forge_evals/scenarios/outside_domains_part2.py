"""Domains, part 2: utility meters, a gym, legal case files, lab samples,
fleet maintenance, hotel housekeeping, grants and podcast publishing.

The group's conventions (tags, `forbidden_tools`) are described in
outside_domains, which lists these scenarios after its own.
"""

from __future__ import annotations

from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, has_number, mentions, same
from forge_evals.scenarios._domain_schema import TAG, exact_ids, obj, text_param

# ── utility meter: the error names the serial format; the retry uses it ───


def _meter() -> Workflow:
    wf = Workflow(
        "meter_reading_format",
        "Record customers' electricity meter readings. If a tool rejects an argument, "
        "correct it as the error says and try again.",
    )

    @wf.tool(terminal=True)
    def submit_meter_reading(meter_serial: str, reading_kwh: int) -> str:
        """Record a meter reading. Ends the task.

        Args:
            meter_serial: The meter's serial number.
            reading_kwh: The register value shown on the meter, in kWh.
        """
        if meter_serial != "EM-00731945":
            raise ToolResolutionError(
                f"meter_serial {meter_serial!r} is not valid: serials are 'EM-' followed by "
                "exactly 8 digits, zero-padded on the left"
            )
        return f"Reading {reading_kwh} kWh recorded for {meter_serial}."

    return wf


METER_READING_FORMAT = Scenario(
    name="meter_reading_format",
    description="Utilities: the user writes meter 731945; the error says 'EM-' plus 8 "
    "zero-padded digits and the retry must send EM-00731945 with 18204 kWh.",
    tags=(TAG, "format_retry"),
    user_message="Meter number 731945 reads 18204 kWh today, please log it.",
    build=_meter,
    validate=lambda tool, args: (
        tool == "submit_meter_reading"
        and args.get("meter_serial") == "EM-00731945"
        and has_number(args.get("reading_kwh"), 18204)
    ),
    ideal_iterations=2,
    max_iterations=6,
    reference=(
        RefCall("submit_meter_reading", {"meter_serial": "731945", "reading_kwh": 18204}),
        RefCall("submit_meter_reading", {"meter_serial": "EM-00731945", "reading_kwh": 18204}),
    ),
)

# ── gym: freeze for a number of months from a named month ─────────────────


def _gym() -> Workflow:
    wf = Workflow(
        "gym_membership_freeze",
        "Manage gym memberships: look the member up, then make the change they ask for.",
    )

    @wf.tool(required=True, read_only=True)
    def lookup_member(email: str) -> str:
        """Find a gym member by email."""
        if not mentions(email, "d.okafor@example.net"):
            raise ToolResolutionError(f"no member with email {email!r}")
        return (
            "Daniel Okafor, membership GM-44190 (Premium, monthly, paid until 2026-05-31), "
            "home club Riverside."
        )

    def freeze(args: dict[str, Any]) -> str:
        if not same(args.get("membership_id"), "GM-44190"):
            raise ToolResolutionError(f"no membership {args.get('membership_id')!r}")
        return f"{args['membership_id']} frozen from {args.get('start_month')}."

    wf.add_schema_tool(
        "freeze_membership",
        "Pause a membership's billing and access for whole months. Ends the task.",
        obj(
            membership_id=text_param("The membership to pause."),
            start_month=text_param("First paused month, YYYY-MM.", pattern=r"^\d{4}-\d{2}$"),
            months={"type": "integer", "minimum": 1, "maximum": 3},
        ),
        freeze,
        terminal=True,
        prerequisites=["lookup_member"],
    )

    @wf.tool
    def terminate_membership(membership_id: str) -> str:
        """End a membership and forfeit any prepaid time."""
        return f"{membership_id} terminated."

    return wf


GYM_MEMBERSHIP_FREEZE = Scenario(
    name="gym_membership_freeze",
    description="Gym: freeze GM-44190 for 2 months from 2026-06 ('in June'); "
    "terminate_membership must not run.",
    tags=(TAG, "user_value", "destructive"),
    user_message=(
        "I'm d.okafor@example.net. I'll be travelling in June and July 2026, so please "
        "pause my gym membership for those two months - don't cancel it."
    ),
    build=_gym,
    validate=lambda tool, args: (
        tool == "freeze_membership"
        and same(args.get("membership_id"), "GM-44190")
        and mentions(args.get("start_month"), "2026-06")
        and has_number(args.get("months"), 2)
    ),
    ideal_iterations=2,
    reference=(
        RefCall("lookup_member", {"email": "d.okafor@example.net"}),
        RefCall(
            "freeze_membership",
            {"membership_id": "GM-44190", "start_month": "2026-06", "months": 2},
        ),
    ),
    forbidden_tools=("terminate_membership",),
)

# ── legal: count of exhibits reported as the listing states it ────────────


def _legal() -> Workflow:
    wf = Workflow(
        "legal_exhibit_count",
        "Answer questions about case files: find the case, list its filings, report.",
    )

    @wf.tool(required=True, read_only=True)
    def find_case(docket_number: str) -> str:
        """Find a case by its court docket number."""
        if not mentions(docket_number, "24-cv-01187"):
            raise ToolResolutionError(f"no case with docket {docket_number!r}")
        return "Docket 24-cv-01187 (Harlow v. Trent Logistics) is internal matter MAT-3092."

    @wf.tool(required=True, read_only=True, prerequisites=["find_case"])
    def list_filings(matter_id: str) -> str:
        """List the documents filed in a matter."""
        if not same(matter_id, "MAT-3092"):
            raise ToolResolutionError(f"no matter {matter_id!r}")
        return (
            "MAT-3092 filings: complaint (12 pages), answer (9 pages), 7 exhibits attached "
            "to the motion for summary judgment (Ex. A-G), 2 witness statements."
        )

    @wf.tool(terminal=True)
    def report_exhibits(matter_id: str, exhibit_count: int) -> str:
        """Report how many exhibits a matter has. Ends the task.

        Args:
            matter_id: The internal matter id.
            exhibit_count: Number of exhibits on file.
        """
        return f"{matter_id}: {exhibit_count} exhibits."

    @wf.tool
    def seal_matter(matter_id: str) -> str:
        """Seal a matter so that no one outside the court can open its files again."""
        return f"{matter_id} sealed."

    return wf


LEGAL_EXHIBIT_COUNT = Scenario(
    name="legal_exhibit_count",
    description="Legal case files: docket -> matter MAT-3092 -> filings; report 7 exhibits, "
    "the number the listing states; seal_matter must not run.",
    tags=(TAG, "report_agrees", "carry_id"),
    user_message="How many exhibits are on file in docket 24-cv-01187?",
    build=_legal,
    validate=lambda tool, args: (
        tool == "report_exhibits"
        and same(args.get("matter_id"), "MAT-3092")
        and has_number(args.get("exhibit_count"), 7)
    ),
    ideal_iterations=3,
    reference=(
        RefCall("find_case", {"docket_number": "24-cv-01187"}),
        RefCall("list_filings", {"matter_id": "MAT-3092"}),
        RefCall("report_exhibits", {"matter_id": "MAT-3092", "exhibit_count": 7}),
    ),
    forbidden_tools=("seal_matter",),
)

# ── lab: reject exactly the haemolysed samples of a batch ─────────────────

_HAEMOLYSED = ["S-2207-014", "S-2207-019", "S-2207-023"]


def _lab() -> Workflow:
    wf = Workflow(
        "lab_sample_rejection",
        "Run the lab's sample intake: inspect the batch, then reject the samples that fail.",
    )

    @wf.tool(required=True, read_only=True)
    def inspect_batch(batch_id: str) -> str:
        """Get the intake check of every sample in a batch."""
        if not same(batch_id, "B-2207"):
            raise ToolResolutionError(f"no batch {batch_id!r}")
        return (
            "Batch B-2207, 6 samples: S-2207-011 ok; S-2207-014 haemolysed; S-2207-017 ok; "
            "S-2207-019 haemolysed; S-2207-021 label smudged but readable, ok; "
            "S-2207-023 haemolysed."
        )

    def run_reject(args: dict[str, Any]) -> str:
        ids = args.get("sample_ids") or []
        return f"{len(ids)} samples rejected ({args.get('reason')}); requests for redraw sent."

    wf.add_schema_tool(
        "reject_samples",
        "Reject samples and ask the wards to draw them again. Ends the task.",
        obj(
            sample_ids={
                "type": "array",
                "items": {"type": "string", "pattern": r"^S-\d{4}-\d{3}$"},
                "uniqueItems": True,
            },
            reason={"type": "string", "enum": ["haemolysed", "clotted", "unlabelled", "leaked"]},
        ),
        run_reject,
        terminal=True,
        prerequisites=["inspect_batch"],
    )
    return wf


LAB_SAMPLE_REJECTION = Scenario(
    name="lab_sample_rejection",
    description="Lab samples: reject exactly the three haemolysed samples of batch B-2207 "
    "(whole ids, no ok ones, no repeats) with reason haemolysed.",
    tags=(TAG, "list_match"),
    user_message="Batch B-2207 just arrived. Reject any haemolysed samples in it.",
    build=_lab,
    validate=lambda tool, args: (
        tool == "reject_samples"
        and exact_ids(args.get("sample_ids"), _HAEMOLYSED)
        and args.get("reason") == "haemolysed"
    ),
    ideal_iterations=2,
    reference=(
        RefCall("inspect_batch", {"batch_id": "B-2207"}),
        RefCall("reject_samples", {"sample_ids": _HAEMOLYSED, "reason": "haemolysed"}),
    ),
)

# ── fleet: the reported service state is the one the record states ───────


def _fleet() -> Workflow:
    wf = Workflow(
        "fleet_service_status",
        "Answer questions about the company's vehicles: find the vehicle, read its "
        "maintenance record, report.",
    )

    @wf.tool(required=True, read_only=True)
    def find_vehicle(registration_plate: str) -> str:
        """Find a fleet vehicle by its registration plate."""
        if not mentions(registration_plate.replace(" ", ""), "WX71KPD"):
            raise ToolResolutionError(f"no vehicle with plate {registration_plate!r}")
        return "WX71 KPD: Ford Transit, fleet unit FL-0387, depot Leeds, driver pool B."

    @wf.tool(required=True, read_only=True, prerequisites=["find_vehicle"])
    def get_maintenance_record(unit_id: str) -> str:
        """Get a vehicle's odometer and service schedule by its fleet unit id."""
        if not same(unit_id, "FL-0387"):
            raise ToolResolutionError(f"no fleet unit {unit_id!r}")
        return (
            "FL-0387: odometer 121,350 km. Last service at 100,000 km. Next service was due "
            "at 120,000 km - overdue by 1,350 km. Tyres fine (5 mm)."
        )

    def report(args: dict[str, Any]) -> str:
        return f"{args.get('unit_id')}: {args.get('service_state')}."

    wf.add_schema_tool(
        "report_service_state",
        "Report whether a vehicle's service is in order. Ends the task.",
        obj(
            unit_id=text_param("The fleet unit id."),
            service_state={"type": "string", "enum": ["ok", "due_soon", "overdue"]},
            km_past_due={
                "type": "integer",
                "minimum": 0,
                "description": "How far past the due mileage it is, 0 if not past.",
            },
        ),
        report,
        terminal=True,
    )

    @wf.tool
    def retire_vehicle(unit_id: str) -> str:
        """Take a vehicle out of the fleet and list it for auction."""
        return f"{unit_id} retired."

    return wf


FLEET_SERVICE_STATUS = Scenario(
    name="fleet_service_status",
    description="Fleet maintenance: plate -> unit FL-0387 -> record; report overdue with "
    "1350 km past due, as the record states; retire_vehicle must not run.",
    tags=(TAG, "report_agrees", "destructive"),
    user_message="Is the van WX71 KPD due for a service?",
    build=_fleet,
    validate=lambda tool, args: (
        tool == "report_service_state"
        and same(args.get("unit_id"), "FL-0387")
        and args.get("service_state") == "overdue"
        and has_number(args.get("km_past_due"), 1350)
    ),
    ideal_iterations=3,
    reference=(
        RefCall("find_vehicle", {"registration_plate": "WX71 KPD"}),
        RefCall("get_maintenance_record", {"unit_id": "FL-0387"}),
        RefCall(
            "report_service_state",
            {"unit_id": "FL-0387", "service_state": "overdue", "km_past_due": 1350},
        ),
    ),
    forbidden_tools=("retire_vehicle",),
)

# ── housekeeping: the checked-out rooms of a floor, to one attendant ──────

_VACANT_DIRTY = [402, 407, 411]


def _housekeeping() -> Workflow:
    wf = Workflow(
        "housekeeping_assign",
        "Plan hotel housekeeping: see the rooms' states, find the attendant, assign rooms.",
    )

    @wf.tool(required=True, read_only=True)
    def get_floor_status(floor: int) -> str:
        """Get the occupancy and cleaning state of every room on a floor."""
        if floor != 4:
            return f"Floor {floor}: all rooms occupied and clean."
        return (
            "Floor 4: 401 occupied/clean, 402 vacant/dirty, 403 occupied/dirty, "
            "405 out of order, 407 vacant/dirty, 408 vacant/clean, 411 vacant/dirty."
        )

    @wf.tool(required=True, read_only=True)
    def find_attendant(name: str) -> str:
        """Find a housekeeping attendant on today's shift by name."""
        if not mentions(name, "amara"):
            raise ToolResolutionError(f"no attendant called {name!r} on shift")
        return "Amara Diallo is on the early shift, staff number HK-215."

    def assign(args: dict[str, Any]) -> str:
        if not same(args.get("staff_number"), "HK-215"):
            raise ToolResolutionError(f"no attendant {args.get('staff_number')!r}")
        return f"{len(args.get('rooms') or [])} rooms assigned to {args['staff_number']}."

    wf.add_schema_tool(
        "assign_rooms",
        "Give an attendant a list of rooms to clean. Ends the task.",
        obj(
            staff_number=text_param("The attendant's staff number."),
            rooms={
                "type": "array",
                "items": {"type": "integer", "minimum": 100, "maximum": 999},
                "uniqueItems": True,
                "description": "Room numbers.",
            },
        ),
        assign,
        terminal=True,
        prerequisites=["get_floor_status", "find_attendant"],
    )
    return wf


HOUSEKEEPING_ASSIGN = Scenario(
    name="housekeeping_assign",
    description="Hotel housekeeping: give Amara (HK-215, from the staff lookup) exactly the "
    "vacant/dirty rooms on floor 4: 402, 407, 411.",
    tags=(TAG, "list_match", "carry_id"),
    user_message=(
        "Please put Amara on all the checked-out rooms on the fourth floor that still need "
        "cleaning."
    ),
    build=_housekeeping,
    validate=lambda tool, args: (
        tool == "assign_rooms"
        and same(args.get("staff_number"), "HK-215")
        and isinstance(args.get("rooms"), list)
        and sorted(args["rooms"]) == _VACANT_DIRTY
    ),
    ideal_iterations=3,
    reference=(
        RefCall("get_floor_status", {"floor": 4}),
        RefCall("find_attendant", {"name": "Amara"}),
        RefCall("assign_rooms", {"staff_number": "HK-215", "rooms": _VACANT_DIRTY}),
    ),
)

# ── grants: an amount and a duration written in words ────────────────────


def _grant() -> Workflow:
    wf = Workflow(
        "grant_budget_submission",
        "Help applicants with grant applications: find the draft, then submit its budget.",
    )

    @wf.tool(required=True, read_only=True)
    def find_draft_application(project_title: str) -> str:
        """Find the applicant's draft application by its project title."""
        if not mentions(project_title, "river", "otter"):
            raise ToolResolutionError(f"no draft titled {project_title!r}")
        return (
            "Draft 'River Otter Recovery' (call CF-2026-ENV, max 60,000 USD), application "
            "number GA-5160-D, lead applicant Tamsin Rhys."
        )

    def run_submit(args: dict[str, Any]) -> str:
        if not same(args.get("application_number"), "GA-5160-D"):
            raise ToolResolutionError(f"no application {args.get('application_number')!r}")
        return f"Budget of {args.get('total_usd')} USD submitted."

    wf.add_schema_tool(
        "submit_budget",
        "Attach the budget to an application and submit it. Ends the task.",
        obj(
            application_number=text_param("The application to submit."),
            total_usd={"type": "integer", "minimum": 1000, "maximum": 60000},
            duration_months={"type": "integer", "minimum": 3, "maximum": 36},
            includes_overhead={
                "type": "boolean",
                "description": "Whether the total includes the institution's overhead.",
            },
        ),
        run_submit,
        terminal=True,
        prerequisites=["find_draft_application"],
    )
    return wf


GRANT_BUDGET_SUBMISSION = Scenario(
    name="grant_budget_submission",
    description="Grant applications: 'forty-eight thousand dollars' as 48000 (not the 60,000 "
    "cap), 'eighteen months' as 18, overhead false, on GA-5160-D.",
    tags=(TAG, "user_value", "carry_id"),
    user_message=(
        "Please submit the budget for my River Otter Recovery draft: forty-eight thousand "
        "dollars over eighteen months. That figure does not include overhead."
    ),
    build=_grant,
    validate=lambda tool, args: (
        tool == "submit_budget"
        and same(args.get("application_number"), "GA-5160-D")
        and has_number(args.get("total_usd"), 48000)
        and has_number(args.get("duration_months"), 18)
        and args.get("includes_overhead") is False
    ),
    ideal_iterations=2,
    reference=(
        RefCall("find_draft_application", {"project_title": "River Otter Recovery"}),
        RefCall(
            "submit_budget",
            {
                "application_number": "GA-5160-D",
                "total_usd": 48000,
                "duration_months": 18,
                "includes_overhead": False,
            },
        ),
    ),
)

# ── podcast: publish the uploaded audio by the id the upload returns ──────


def _podcast() -> Workflow:
    wf = Workflow(
        "podcast_schedule",
        "Publish podcast episodes: upload the audio, then schedule the episode.",
    )

    @wf.tool(required=True)
    def upload_audio(file_url: str) -> str:
        """Fetch an audio file into the media library; returns its media asset id."""
        if not mentions(file_url, "ep57-final.mp3"):
            raise ToolResolutionError(f"cannot fetch {file_url!r}")
        return (
            "Uploaded ep57-final.mp3 (48:12, 44 MB, checksum 9f3ac1). Media asset id: "
            "MA-7Q4T82. Show: Fieldnotes (show id SH-12)."
        )

    @wf.tool(terminal=True, prerequisites=["upload_audio"])
    def schedule_episode(
        media_asset_id: str, title: str, publish_date: str, explicit_content: bool
    ) -> str:
        """Schedule an uploaded file as a new episode. Ends the task.

        Args:
            media_asset_id: The uploaded audio's media asset id.
            title: Episode title.
            publish_date: Release day, YYYY-MM-DD.
            explicit_content: Mark the episode as explicit.
        """
        if not same(media_asset_id, "MA-7Q4T82"):
            raise ToolResolutionError(f"no media asset {media_asset_id!r}")
        return f"'{title}' scheduled for {publish_date}."

    @wf.tool
    def delete_episode(media_asset_id: str) -> str:
        """Remove an episode and its audio from every feed."""
        return f"{media_asset_id} removed."

    return wf


PODCAST_SCHEDULE = Scenario(
    name="podcast_schedule",
    description="Podcast publishing: schedule MA-7Q4T82 (the upload's asset id, not the "
    "show id) for 2026-03-03, explicit false ('nothing explicit'); delete_episode must not run.",
    tags=(TAG, "carry_id", "destructive"),
    user_message=(
        "Upload https://files.example.com/fieldnotes/ep57-final.mp3 and schedule it as "
        "'Episode 57: Mosses' for 3 March 2026. There's nothing explicit in it."
    ),
    build=_podcast,
    validate=lambda tool, args: (
        tool == "schedule_episode"
        and same(args.get("media_asset_id"), "MA-7Q4T82")
        and mentions(args.get("title"), "mosses")
        and mentions(args.get("publish_date"), "2026-03-03")
        and args.get("explicit_content") is False
    ),
    ideal_iterations=2,
    reference=(
        RefCall(
            "upload_audio", {"file_url": "https://files.example.com/fieldnotes/ep57-final.mp3"}
        ),
        RefCall(
            "schedule_episode",
            {
                "media_asset_id": "MA-7Q4T82",
                "title": "Episode 57: Mosses",
                "publish_date": "2026-03-03",
                "explicit_content": False,
            },
        ),
    ),
    forbidden_tools=("delete_episode",),
)

SCENARIOS: tuple[Scenario, ...] = (
    METER_READING_FORMAT,
    GYM_MEMBERSHIP_FREEZE,
    LEGAL_EXHIBIT_COUNT,
    LAB_SAMPLE_REJECTION,
    FLEET_SERVICE_STATUS,
    HOUSEKEEPING_ASSIGN,
    GRANT_BUDGET_SUBMISSION,
    PODCAST_SCHEDULE,
)
