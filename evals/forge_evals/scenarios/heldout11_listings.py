"""Held out, eleventh group (first half, list_match): a dog agility trial's
class entries and a tram museum's volunteer rota; `heldout11` includes these.
Each is tagged `heldout11` plus `list_match`.
"""

from __future__ import annotations

from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, mentions
from forge_evals.scenarios._domain_schema import HELDOUT11_TAG, alnum, exact, exact_ids

# ── dog agility: the Saturday jumping classes open to a grade 4 large dog, none after 2 pm ──

_TRIAL = "TR-2608-FEN"
# class id, day, start, class, grades, height, entry fee (GBP)
_CLASSES: list[tuple[str, str, str, str, str, str, str]] = [
    ("FSA-S01", "Sat", "09:00", "Agility", "grades 1-3", "large", "7.50"),
    ("FSA-S02", "Sat", "09:30", "Jumping", "grades 4-5", "large", "7.50"),
    ("FSA-S03", "Sat", "10:15", "Jumping", "grades 4-5", "medium", "7.50"),
    ("FSA-S04", "Sat", "10:45", "Jumping", "grades 6-7", "large", "7.50"),
    ("FSA-S05", "Sat", "11:20", "Jumping", "grades 3-4", "large", "7.50"),
    ("FSA-S06", "Sat", "12:15", "Agility", "grades 4-7", "large", "8.00"),
    ("FSA-S07", "Sat", "13:40", "Jumping (combined)", "grades 1-7", "large", "6.50"),
    ("FSA-S08", "Sat", "14:30", "Jumping", "grades 4-5", "large", "7.50"),
    ("FSA-S09", "Sat", "15:45", "Steeplechase", "open", "large", "9.00"),
    ("FSA-U01", "Sun", "09:00", "Jumping", "grades 4-5", "large", "7.50"),
    ("FSA-U02", "Sun", "11:30", "Jumping", "grades 1-4", "large", "7.50"),
]
_ENTERED = ["FSA-S02", "FSA-S05", "FSA-S07"]

_ENTRY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "trial_id": {"type": "string", "pattern": "^TR-[0-9]{4}-[A-Z]{3}$"},
        "dog": {
            "type": "object",
            "properties": {
                "kc_registration": {"type": "string", "pattern": "^[A-Z]{2}[0-9]{8}$"},
                "call_name": {"type": "string", "minLength": 1},
                "grade": {"type": "integer", "minimum": 1, "maximum": 7},
                "height": {
                    "type": "string",
                    "enum": ["small", "medium", "intermediate", "large"],
                },
            },
            "required": ["kc_registration", "call_name", "grade", "height"],
        },
        "class_ids": {
            "type": "array",
            "minItems": 1,
            "uniqueItems": True,
            "items": {"type": "string", "pattern": "^FSA-[SU][0-9]{2}$"},
        },
        "payment": {"type": "string", "enum": ["card", "bank_transfer"]},
    },
    "required": ["trial_id", "dog", "class_ids", "payment"],
}


def _agility_trial() -> Workflow:
    wf = Workflow(
        "dog_agility_trial_class_entries",
        "Enter handlers' dogs into agility trial classes.",
        system_prompt="You are the entries assistant of Fenland Agility Club. Handlers "
        "enter their dogs into classes at our trials. A dog may run in a class only at its "
        "own height and when its grade is within the class's grades. Find the trial, read "
        "its schedule of classes, then submit the entries. Today is Tuesday 2026-08-04.",
    )

    @wf.tool(required=True, read_only=True)
    def find_agility_trial(name: str) -> str:
        """Find a trial by name. Returns its id (TR-....-...), dates and closing date."""
        if not mentions(name, "fenland"):
            raise ToolResolutionError(f"404 no trial named {name!r}")
        return (
            f"{_TRIAL}: Fenland Summer Agility Trial, Manea Showground, Sat-Sun "
            "2026-08-15/16. Entries close 2026-08-07. Rings open 08:30."
        )

    @wf.tool(required=True, read_only=True, prerequisites=["find_agility_trial"])
    def list_trial_classes(trial_id: str) -> str:
        """A trial's schedule: class ids, day, start time, grades, height and entry fee."""
        if trial_id.strip() != _TRIAL:
            raise ToolResolutionError(f"404 trial_not_found: {trial_id!r} (TR- id)")
        return f"Schedule {_TRIAL} (Sat 2026-08-15, Sun 2026-08-16):\n" + "\n".join(
            f"- {cid}: {day} {start}, {kind}, {grades}, {height}, {fee} GBP"
            for cid, day, start, kind, grades, height, fee in _CLASSES
        )

    def _submit(args: dict[str, Any]) -> str:
        if str(args.get("trial_id", "")).strip() != _TRIAL:
            raise ToolResolutionError(f"404 trial_not_found: {args.get('trial_id')!r}")
        known = {row[0]: row for row in _CLASSES}
        dog = args.get("dog") if isinstance(args.get("dog"), dict) else {}
        ids = [str(c).strip() for c in args.get("class_ids") or []]
        for cid in ids:
            if cid not in known:
                raise ToolResolutionError(f"404 class_not_found: {cid!r} (FSA- id)")
            if known[cid][5] != (dog or {}).get("height"):
                raise ToolResolutionError(f"422 height_mismatch: {cid} is a {known[cid][5]} class")
        return f"Entries EN-FEN-2291 submitted: {len(ids)} classes."

    wf.add_schema_tool(
        "submit_agility_entries",
        "Enter one dog into classes of a trial. Ends the task.",
        _ENTRY_SCHEMA,
        _submit,
        terminal=True,
        prerequisites=["list_trial_classes"],
    )

    @wf.tool
    def withdraw_agility_entry(trial_id: str, class_id: str, kc_registration: str) -> str:
        """Withdraw a dog from a class it is entered in (fee not refunded after closing)."""
        return f"{kc_registration} withdrawn from {class_id}."

    @wf.tool
    def order_ringside_photos(trial_id: str, call_name: str) -> str:
        """Order the photographer's ringside photos of a dog."""
        return f"Photos of {call_name} ordered."

    return wf


def _check_agility(tool: str, args: dict[str, Any]) -> bool:
    dog = args.get("dog")
    return (
        tool == "submit_agility_entries"
        and exact(args.get("trial_id"), _TRIAL)
        and isinstance(dog, dict)
        and alnum(dog.get("kc_registration")) == "AW04471207"
        and mentions(dog.get("call_name"), "fern")
        and dog.get("grade") == 4
        and dog.get("height") == "large"
        and exact_ids(args.get("class_ids"), _ENTERED)
        and args.get("payment") == "card"
    )


AGILITY_TRIAL = Scenario(
    name="dog_agility_trial_class_entries",
    description="Agility trial: enter Fern (AW04471207, grade 4, large) for TR-2608-FEN in "
    "exactly FSA-S02, FSA-S05 and FSA-S07 (Saturday jumping open to grade 4 large, before "
    "14:00); not the agility classes, the medium S03, grades 6-7 S04, the 14:30 S08 nor "
    "Sunday's; payment card.",
    tags=(HELDOUT11_TAG, "list_match"),
    user_message=(
        "Hi, Karen Mabey here. Please enter my collie Fern for the Fenland summer trial. "
        "She's grade 4 and jumps large, KC registration AW04471207. I'd like her in every "
        "jumping class she can do on the Saturday, but nothing that starts after two "
        "o'clock, we've a long drive home. No agility or steeplechase this time. I'll pay "
        "by card."
    ),
    build=_agility_trial,
    validate=_check_agility,
    ideal_iterations=3,
    reference=(
        RefCall("find_agility_trial", {"name": "Fenland Summer Agility Trial"}),
        RefCall("list_trial_classes", {"trial_id": _TRIAL}),
        RefCall(
            "submit_agility_entries",
            {
                "trial_id": _TRIAL,
                "dog": {
                    "kc_registration": "AW04471207",
                    "call_name": "Fern",
                    "grade": 4,
                    "height": "large",
                },
                "class_ids": list(_ENTERED),
                "payment": "card",
            },
        ),
    ),
    forbidden_tools=("withdraw_agility_entry",),
)

# ── tram museum: every open conductor shift at March weekends, bar the weekend of the 21st ──

_VOLUNTEER = "VOL-0387"
# shift id, date, weekday, role, state
_SHIFTS: list[tuple[str, str, str, str, str]] = [
    ("RS-5512", "2026-02-28", "Sat", "conductor", "OPEN"),
    ("RS-5518", "2026-03-01", "Sun", "conductor", "OPEN"),
    ("RS-5523", "2026-03-07", "Sat", "conductor", "FILLED (A. Kerr)"),
    ("RS-5524", "2026-03-07", "Sat", "motorman (tram driver)", "OPEN"),
    ("RS-5530", "2026-03-08", "Sun", "conductor", "OPEN"),
    ("RS-5536", "2026-03-11", "Wed", "conductor, schools special", "OPEN"),
    ("RS-5541", "2026-03-14", "Sat", "conductor", "OPEN"),
    ("RS-5547", "2026-03-15", "Sun", "depot shop", "OPEN"),
    ("RS-5552", "2026-03-21", "Sat", "conductor", "OPEN"),
    ("RS-5558", "2026-03-22", "Sun", "conductor", "OPEN"),
    ("RS-5563", "2026-03-28", "Sat", "conductor", "FILLED (M. Ellis)"),
    ("RS-5569", "2026-03-29", "Sun", "conductor", "OPEN"),
    ("RS-5574", "2026-04-04", "Sat", "conductor, Easter tram parade", "OPEN"),
]
_SIGNED = ["RS-5518", "RS-5530", "RS-5541", "RS-5569"]


def _tram_museum() -> Workflow:
    wf = Workflow(
        "tram_museum_volunteer_shift_signup",
        "Put volunteers on a tram museum's operating rota.",
        system_prompt="You are the rota assistant of Ashby Vale Tramway Museum, run by "
        "volunteers. Volunteers sign up for open shifts in roles they are passed for. Find "
        "the volunteer, read the rota, then sign them up. Today is Monday 2026-02-23.",
    )

    @wf.tool(required=True, read_only=True)
    def find_museum_volunteer(email: str) -> str:
        """A volunteer by email, with their id (VOL-....) and the roles they are passed for."""
        if not mentions(email, "owen.pritchard@volmail"):
            raise ToolResolutionError(f"404 no volunteer with email {email!r}")
        return (
            f"{_VOLUNTEER}: Owen Pritchard, volunteer since 2025-06. Passed for: tour guide "
            "(2025-08-02), conductor (2026-02-18). Not passed: motorman."
        )

    @wf.tool(required=True, read_only=True)
    def list_rota_shifts() -> str:
        """The published operating rota: shift ids, dates, roles and whether filled."""
        return "Rota (published to 2026-04-05), operating 10:30-17:00:\n" + "\n".join(
            f"- {sid}: {day} {date}, {role}, {state}" for sid, date, day, role, state in _SHIFTS
        )

    @wf.tool(terminal=True, prerequisites=["find_museum_volunteer", "list_rota_shifts"])
    def sign_up_volunteer_shifts(volunteer_id: str, shift_ids: list[str]) -> str:
        """Sign a volunteer up for rota shifts (RS- ids). Ends the task."""
        if volunteer_id.strip() != _VOLUNTEER:
            raise ToolResolutionError(f"404 volunteer_not_found: {volunteer_id!r} (VOL- id)")
        known = {row[0]: row for row in _SHIFTS}
        for sid in shift_ids:
            if sid.strip() not in known:
                raise ToolResolutionError(f"404 shift_not_found: {sid!r} (RS- id)")
            if known[sid.strip()][3].startswith("motorman"):
                raise ToolResolutionError(f"422 not_passed: {_VOLUNTEER} is not a motorman")
        return f"{_VOLUNTEER} signed up for {len(shift_ids)} shift(s)."

    @wf.tool
    def release_rota_shift(shift_id: str, volunteer_id: str) -> str:
        """Take a volunteer off a shift they are down for."""
        return f"{volunteer_id} released from {shift_id}."

    @wf.tool
    def retire_museum_volunteer(volunteer_id: str) -> str:
        """Mark a volunteer as retired; they are taken off all future shifts."""
        return f"{volunteer_id} retired."

    return wf


def _check_tram(tool: str, args: dict[str, Any]) -> bool:
    return (
        tool == "sign_up_volunteer_shifts"
        and exact(args.get("volunteer_id"), _VOLUNTEER)
        and exact_ids(args.get("shift_ids"), _SIGNED)
    )


TRAM_MUSEUM = Scenario(
    name="tram_museum_volunteer_shift_signup",
    description="Tram museum: sign VOL-0387 up for exactly RS-5518, RS-5530, RS-5541 and "
    "RS-5569 (open conductor shifts on March weekends); not the filled ones, the motorman "
    "or shop shifts, the Wednesday special, 21-22 March, 28 February nor 4 April.",
    tags=(HELDOUT11_TAG, "list_match"),
    user_message=(
        "Hi, Owen Pritchard here (owen.pritchard@volmail.example). I passed my conductor "
        "training last week! Could you put me down for every conductor shift at the "
        "weekends in March that nobody's taken yet? Apart from the weekend of the 21st, "
        "I'm at a wedding then."
    ),
    build=_tram_museum,
    validate=_check_tram,
    ideal_iterations=3,
    reference=(
        RefCall("find_museum_volunteer", {"email": "owen.pritchard@volmail.example"}),
        RefCall("list_rota_shifts", {}),
        RefCall(
            "sign_up_volunteer_shifts",
            {"volunteer_id": _VOLUNTEER, "shift_ids": list(_SIGNED)},
        ),
    ),
    forbidden_tools=("release_rota_shift", "retire_museum_volunteer"),
)


SCENARIOS: tuple[Scenario, ...] = (AGILITY_TRIAL, TRAM_MUSEUM)
