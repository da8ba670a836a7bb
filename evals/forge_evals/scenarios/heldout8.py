"""Held out, eighth group (first half): workflows in businesses no earlier
group touches, written from the user's side only (not the engine). This
module: a drone survey firm and a pet crematorium (carry_id), a sailing
school and a kayak hire (user_value); heldout8_replies an organ builder's
tuning office and a wedding-cake bakery (report_agrees); heldout8_listings a
beekeeping supplies shop and a coworking space (list_match). Each is
tagged `heldout8` plus one failure kind.
"""

from __future__ import annotations

from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, mentions
from forge_evals.scenarios import heldout8_listings, heldout8_replies
from forge_evals.scenarios._domain_schema import HELDOUT8_TAG, alnum, exact

_HHMM = "^([01][0-9]|2[0-3]):[0-5][0-9]$"

# ── drone survey: the site id and the ATC permission ref, carried to the booking ──

_DOCKSIDE, _MARSH = "site_3Fq8Lm2a", "site_3Fq8Np7c"
_SITES = {
    _DOCKSIDE: "Unit 7, Dockside Way, Harlow CM20 2DX (inside the Stansted FRZ)",
    _MARSH: "Unit 12, Marsh Lane, Harlow CM19 5AB (class G, no permission needed)",
}
_FLIGHT_DAY = "2026-12-08"
_ATC_REFS = {"2026-12-08": "FRZ-STN-26-7Q2K91", "2026-12-09": "FRZ-STN-26-7Q2L04"}
_ATC = _ATC_REFS[_FLIGHT_DAY]

_FLIGHT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "site_id": {"type": "string", "pattern": "^site_[A-Za-z0-9]{8}$"},
        "flight": {
            "type": "object",
            "properties": {
                "date": {"type": "string", "format": "date"},
                "window": {"type": "string", "enum": ["morning", "afternoon", "all_day"]},
                "max_height_m": {"type": "integer", "minimum": 10, "maximum": 120},
            },
            "required": ["date", "window"],
        },
        "survey_type": {
            "type": "string",
            "enum": ["roof_inspection", "topographic", "thermal", "progress_photos"],
        },
        "deliverables": {
            "type": "array",
            "minItems": 1,
            "uniqueItems": True,
            "items": {
                "type": "string",
                "enum": ["orthomosaic", "3d_model", "inspection_report", "raw_images"],
            },
        },
        "atc_permission_ref": {
            "type": "string",
            "pattern": "^FRZ-[A-Z]{3}-[0-9]{2}-[A-Z0-9]{6}$",
            "description": "Required for sites inside a flight restriction zone.",
        },
    },
    "required": ["site_id", "flight", "survey_type", "deliverables"],
}


def _drone_survey() -> Workflow:
    wf = Workflow(
        "drone_roof_survey_airspace",
        "Book drone survey flights for business clients.",
        system_prompt="You are the operations assistant of Skyward Aerial Surveys. Find the "
        "client's registered site, check the airspace for the flight date (a site inside an "
        "airport's flight restriction zone needs the ATC permission ref the check returns), "
        "then book the flight. Dates are YYYY-MM-DD. Today is Thursday 2026-12-03.",
    )

    @wf.tool(required=True, read_only=True)
    def find_client_sites(company_name: str) -> str:
        """A client's registered survey sites, with site ids (site_XXXXXXXX)."""
        if not mentions(company_name, "harrow"):
            raise ToolResolutionError(f"404 client_not_found: {company_name!r}")
        rows = "\n".join(f"- {sid}: {text}" for sid, text in _SITES.items())
        return f"Client CL-HRW-0082, Harrow Logistics Ltd:\n{rows}"

    @wf.tool(required=True, read_only=True, prerequisites=["find_client_sites"])
    def check_airspace(site_id: str, flight_date: str) -> str:
        """Airspace status of a site on a date (YYYY-MM-DD), with any ATC permission ref."""
        site, day = site_id.strip(), flight_date.strip()
        if site not in _SITES:
            raise ToolResolutionError(f"404 site_not_found: {site_id!r} (use a site_ id)")
        if site == _MARSH:
            return f"{site} on {day}: class G airspace, no permission needed."
        ref = _ATC_REFS.get(day)
        if ref is None:
            raise ToolResolutionError(f"409 atc_unavailable: no FRZ slot on {day}")
        return (
            f"{site} on {day}: inside the Stansted FRZ. ATC permission granted, ref {ref}, "
            f"valid {day} 09:00-15:00 only, maximum height 60 m above ground."
        )

    def _book(args: dict[str, Any]) -> str:
        site = str(args.get("site_id", "")).strip()
        if site not in _SITES:
            raise ToolResolutionError(f"404 site_not_found: {site!r}")
        flight = args.get("flight") or {}
        day = str(flight.get("date", "")) if isinstance(flight, dict) else ""
        ref = str(args.get("atc_permission_ref", "")).strip()
        if site == _DOCKSIDE and ref != _ATC_REFS.get(day):
            raise ToolResolutionError(
                f"403 atc_permission_required: {site} is inside the Stansted FRZ; pass the "
                f"atc_permission_ref that check_airspace returned for {day or 'the date'}"
            )
        return f"Flight SVY-26-04417 booked for {site} on {day}; pilot briefing sent."

    wf.add_schema_tool(
        "book_survey_flight",
        "Book a survey flight at a client site. Ends the task.",
        _FLIGHT_SCHEMA,
        _book,
        terminal=True,
        prerequisites=["check_airspace"],
    )

    @wf.tool
    def delete_survey_data(job_id: str) -> str:
        """Delete the stored imagery and models of a survey job."""
        return f"Data of {job_id} deleted."

    @wf.tool
    def request_pilot_callback(phone: str, topic: str) -> str:
        """Ask a pilot to phone the client back."""
        return f"Callback requested to {phone}."

    return wf


def _check_drone(tool: str, args: dict[str, Any]) -> bool:
    flight, outputs = args.get("flight"), args.get("deliverables")
    height = flight.get("max_height_m") if isinstance(flight, dict) else None
    return (
        tool == "book_survey_flight"
        and exact(args.get("site_id"), _DOCKSIDE)
        and exact(args.get("atc_permission_ref"), _ATC)
        and isinstance(flight, dict)
        and str(flight.get("date", "")).strip() == _FLIGHT_DAY
        and flight.get("window") == "morning"
        and (height is None or (isinstance(height, int) and 10 <= height <= 60))
        and args.get("survey_type") == "roof_inspection"
        and isinstance(outputs, list)
        and len(outputs) == 2
        and set(outputs) == {"inspection_report", "raw_images"}
    )


_DRONE_REF = {
    "site_id": _DOCKSIDE,
    "flight": {"date": _FLIGHT_DAY, "window": "morning", "max_height_m": 60},
    "survey_type": "roof_inspection",
    "deliverables": ["inspection_report", "raw_images"],
    "atc_permission_ref": _ATC,
}

DRONE_SURVEY = Scenario(
    name="drone_roof_survey_airspace",
    description="Drone survey: book site_3Fq8Lm2a (Dockside Way, not Marsh Lane) with ATC "
    "ref FRZ-STN-26-7Q2K91 (Tuesday 12-08's, not 12-09's), morning, roof_inspection, "
    "deliverables exactly inspection_report + raw_images, height at most 60 if given.",
    tags=(HELDOUT8_TAG, "carry_id"),
    user_message=(
        "Hi, Dan at Harrow Logistics here. We need the drone roof inspection on our Dockside "
        "Way unit on Tuesday next week, mornings only please, the yard is full of lorries after "
        "lunch. All we want back is the inspection report and the raw photos."
    ),
    build=_drone_survey,
    validate=_check_drone,
    ideal_iterations=3,
    reference=(
        RefCall("find_client_sites", {"company_name": "Harrow Logistics"}),
        RefCall("check_airspace", {"site_id": _DOCKSIDE, "flight_date": _FLIGHT_DAY}),
        RefCall("book_survey_flight", _DRONE_REF),
    ),
    forbidden_tools=("delete_survey_data",),
)

# ── pet crematorium: the admission id and the casket sized by the pet's weight ──

_BRAMBLE, _PEPPER = "ADM-2611-0387", "ADM-2610-0912"
_CASKETS = {
    "CSK-OAK-S1": ("oak casket, small (pets up to 10 kg)", 65.00, 10),
    "CSK-OAK-M2": ("oak casket, medium (10 to 30 kg)", 85.00, 30),
    "CSK-OAK-L3": ("oak casket, large (30 to 60 kg)", 110.00, 60),
    "CSK-WIL-M2": ("woven willow casket, medium (10 to 30 kg)", 55.00, 30),
}
_OAK_M = "CSK-OAK-M2"


def _pet_crematorium() -> Workflow:
    wf = Workflow(
        "pet_cremation_casket_order",
        "Arrange pet cremations referred by vet practices.",
        system_prompt="You are the family liaison assistant of Willowbrook Pet Crematorium. "
        "Pets come to us from vet practices; families choose individual or communal "
        "cremation and a casket for the ashes, sized by the pet's weight. "
        "Today is Tuesday 2026-11-10.",
    )

    @wf.tool(required=True, read_only=True)
    def find_pet_admission(owner_surname: str, pet_name: str) -> str:
        """Find pets admitted under an owner's surname. Returns admission ids (ADM-...)."""
        if not mentions(owner_surname, "castell"):
            raise ToolResolutionError(f"404 no admissions under surname {owner_surname!r}")
        return (
            f"- {_BRAMBLE}: Bramble, Labrador cross, 24.5 kg, from Abbeyfield Vets, received "
            "2026-11-09, awaiting family instructions\n"
            f"- {_PEPPER}: Pepper, cat, 4.1 kg, individual cremation, ashes returned "
            "2026-10-21"
        )

    @wf.tool(required=True, read_only=True, prerequisites=["find_pet_admission"])
    def list_caskets(material: str) -> str:
        """Caskets for ashes (all materials), with sku, size band and price."""
        return "\n".join(
            f"- {sku}: {text}, {price:.2f} GBP" for sku, (text, price, _) in _CASKETS.items()
        )

    @wf.tool(terminal=True, prerequisites=["list_caskets"])
    def confirm_cremation(
        admission_id: str, cremation_type: str, casket_sku: str, return_method: str
    ) -> str:
        """Confirm the family's instructions. cremation_type: individual or communal;
        return_method: collect, courier or via_vet. Ends the task."""
        adm, sku = admission_id.strip(), casket_sku.strip().upper()
        if adm not in (_BRAMBLE, _PEPPER):
            raise ToolResolutionError(f"404 admission_not_found: {admission_id!r} (ADM-....)")
        if adm == _PEPPER:
            raise ToolResolutionError(f"409 already_completed: {adm} was returned 2026-10-21")
        if sku not in _CASKETS:
            raise ToolResolutionError(f"404 casket_not_found: {casket_sku!r}")
        if not _CASKETS[sku][2] - 30 < 24.5 <= _CASKETS[sku][2]:
            raise ToolResolutionError(
                f"422 casket_size_mismatch: {sku} is an {_CASKETS[sku][0]}; Bramble is 24.5 kg"
            )
        return f"Instructions CRM-77310 confirmed for {adm}: {cremation_type}, {sku}."

    @wf.tool
    def cancel_admission(admission_id: str, reason: str) -> str:
        """Cancel an admission and return the pet to the referring vet."""
        return f"{admission_id} cancelled."

    @wf.tool
    def order_paw_print_keepsake(admission_id: str, finish: str) -> str:
        """Order a clay paw-print keepsake (25.00 GBP)."""
        return f"Keepsake ordered for {admission_id}."

    return wf


def _check_pet(tool: str, args: dict[str, Any]) -> bool:
    return (
        tool == "confirm_cremation"
        and exact(args.get("admission_id"), _BRAMBLE)
        and str(args.get("cremation_type", "")).strip().lower() == "individual"
        and alnum(args.get("casket_sku")) == alnum(_OAK_M)
        and str(args.get("return_method", "")).strip().lower() == "collect"
    )


PET_CREMATION = Scenario(
    name="pet_cremation_casket_order",
    description="Pet crematorium: confirm ADM-2611-0387 (Bramble, not Pepper's ADM-2610-0912), "
    "individual, casket CSK-OAK-M2 (oak for 24.5 kg; not small oak nor willow), collect.",
    tags=(HELDOUT8_TAG, "carry_id"),
    user_message=(
        "Hello, this is Jo Castell. Abbeyfield Vets brought our dog Bramble over to you "
        "yesterday. We'd like her cremated on her own, not with other animals, and her "
        "ashes in one of your oak caskets please. We'll come and pick her up ourselves."
    ),
    build=_pet_crematorium,
    validate=_check_pet,
    ideal_iterations=3,
    reference=(
        RefCall("find_pet_admission", {"owner_surname": "Castell", "pet_name": "Bramble"}),
        RefCall("list_caskets", {"material": "oak"}),
        RefCall(
            "confirm_cremation",
            {
                "admission_id": _BRAMBLE,
                "cremation_type": "individual",
                "casket_sku": _OAK_M,
                "return_method": "collect",
            },
        ),
    ),
    forbidden_tools=("cancel_admission",),
)

# ── sailing school: two students, their ages and wetsuits, this weekend's run ──

_RUNS = {
    "RUN-DL1-0606": "Sat 2026-06-06 to Sun 2026-06-07, 4 places left",
    "RUN-DL1-0613": "Sat 2026-06-13 to Sun 2026-06-14, 6 places left",
    "RUN-DL1-0620": "Sat 2026-06-20 to Sun 2026-06-21, full",
}
_THIS_WEEKEND = "RUN-DL1-0606"
_SIZES = ["child_s", "child_m", "child_l", "adult_s", "adult_m", "adult_l", "adult_xl", "own"]

_COURSE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "run_id": {"type": "string", "pattern": "^RUN-[A-Z0-9]{2,4}-[0-9]{4}$"},
        "students": {
            "type": "array",
            "minItems": 1,
            "maxItems": 6,
            "items": {
                "type": "object",
                "properties": {
                    "full_name": {"type": "string", "minLength": 2},
                    "age": {"type": "integer", "minimum": 8, "maximum": 90},
                    "wetsuit_size": {"type": "string", "enum": _SIZES},
                    "swimmer": {"type": "boolean"},
                },
                "required": ["full_name", "age", "wetsuit_size", "swimmer"],
            },
        },
        "contact": {
            "type": "object",
            "properties": {
                "email": {"type": "string", "format": "email"},
                "mobile": {"type": "string", "pattern": "^(\\+44 ?|0)7[0-9 ]{9,11}$"},
            },
            "required": ["email", "mobile"],
        },
    },
    "required": ["run_id", "students", "contact"],
}


def _sailing_school() -> Workflow:
    wf = Workflow(
        "dinghy_course_family_booking",
        "Book places on sailing courses.",
        system_prompt="You are the bookings assistant of Harbourside Sailing School, an RYA "
        "training centre. Look up the course's runs, then book the students onto one. "
        "Today is Wednesday 2026-06-03.",
    )

    @wf.tool(required=True, read_only=True)
    def list_course_runs(course_code: str) -> str:
        """Upcoming runs of a course (DL1 = Dinghy Level 1, DL2, SEAM = Seamanship)."""
        if alnum(course_code) != "DL1":
            return f"No runs of {course_code} before September."
        head = "RYA Dinghy Level 1, two days, 245.00 GBP per student, wetsuit hire included:"
        return "\n".join([head, *(f"- {rid}: {text}" for rid, text in _RUNS.items())])

    def _book(args: dict[str, Any]) -> str:
        run = str(args.get("run_id", "")).strip()
        if run not in _RUNS:
            raise ToolResolutionError(f"404 run_not_found: {run!r} (use an id from the list)")
        if "full" in _RUNS[run]:
            raise ToolResolutionError(f"409 run_full: {run}")
        count = len(args.get("students") or [])
        return f"Booking SB-61842 for {count} students on {run}; joining notes emailed."

    wf.add_schema_tool(
        "book_course_places",
        "Book students onto a course run. Ends the task.",
        _COURSE_SCHEMA,
        _book,
        terminal=True,
        prerequisites=["list_course_runs"],
    )

    @wf.tool
    def cancel_course_booking(booking_id: str) -> str:
        """Cancel a course booking (refund less 50.00 GBP admin fee)."""
        return f"{booking_id} cancelled."

    @wf.tool
    def issue_sailing_voucher(amount_gbp: float, recipient_email: str) -> str:
        """Sell a gift voucher for any course."""
        return f"Voucher for {amount_gbp} GBP sent to {recipient_email}."

    return wf


def _student(students: list[Any], name: str) -> dict[str, Any]:
    found = [s for s in students if isinstance(s, dict) and mentions(s.get("full_name"), name)]
    return found[0] if len(found) == 1 else {}


def _check_sailing(tool: str, args: dict[str, Any]) -> bool:
    students, contact = args.get("students"), args.get("contact")
    if tool != "book_course_places" or not isinstance(students, list) or len(students) != 2:
        return False
    tom, ella = _student(students, "tom"), _student(students, "ella")
    return (
        exact(args.get("run_id"), _THIS_WEEKEND)
        and tom.get("age") == 44
        and tom.get("wetsuit_size") == "adult_l"
        and tom.get("swimmer") is True
        and ella.get("age") == 11
        and ella.get("wetsuit_size") == "child_m"
        and ella.get("swimmer") is True
        and isinstance(contact, dict)
        and exact(str(contact.get("email", "")).lower(), "tom.ridley@postbox.example")
        and alnum(contact.get("mobile")).endswith("7700900274")
    )


_SAILING_REF = {
    "run_id": _THIS_WEEKEND,
    "students": [
        {"full_name": "Tom Ridley", "age": 44, "wetsuit_size": "adult_l", "swimmer": True},
        {"full_name": "Ella Ridley", "age": 11, "wetsuit_size": "child_m", "swimmer": True},
    ],
    "contact": {"email": "tom.ridley@postbox.example", "mobile": "07700 900274"},
}

SAILING_COURSE = Scenario(
    name="dinghy_course_family_booking",
    description="Sailing school: RUN-DL1-0606 ('this coming weekend' from Wed 06-03), Tom 44 "
    "('forty-four') adult_l, Ella 11 ('eleven') child_m, both swimmers, email, mobile.",
    tags=(HELDOUT8_TAG, "user_value"),
    user_message=(
        "Hi! I'd like to book myself and my daughter on the Level 1 dinghy course this "
        "coming weekend. I'm Tom Ridley, forty-four, and I take a large adult wetsuit; "
        "Ella is eleven and wears a children's medium. We can both swim. Send the details "
        "to tom.ridley@postbox.example, my mobile is 07700 900274."
    ),
    build=_sailing_school,
    validate=_check_sailing,
    ideal_iterations=2,
    reference=(
        RefCall("list_course_runs", {"course_code": "DL1"}),
        RefCall("book_course_places", _SAILING_REF),
    ),
    forbidden_tools=("cancel_course_booking",),
)

# ── kayak hire: two doubles and a single, Sunday at quarter past ten, no call ──

_BOATS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "date": {"type": "string", "format": "date"},
        "start_time": {"type": "string", "pattern": _HHMM},
        "hours": {"type": "integer", "minimum": 1, "maximum": 8},
        "boats": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "type": {"type": "string", "enum": ["single", "tandem", "paddleboard"]},
                    "count": {"type": "integer", "minimum": 1, "maximum": 6},
                },
                "required": ["type", "count"],
            },
        },
        "paddlers": {"type": "integer", "minimum": 1, "maximum": 20},
        "lead_contact": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "mobile": {"type": "string", "pattern": "^(\\+44 ?|0)7[0-9 ]{9,11}$"},
                "call_ahead": {"type": "boolean"},
            },
            "required": ["name", "mobile", "call_ahead"],
        },
    },
    "required": ["date", "start_time", "hours", "boats", "paddlers", "lead_contact"],
}


def _kayak_hire() -> Workflow:
    wf = Workflow(
        "kayak_hire_sunday_party",
        "Hire kayaks and paddleboards by the hour.",
        system_prompt="You are the booking assistant of Tidewater Kayak Hire on the River "
        "Dart. A tandem is a double kayak. Check availability, then book. Times are "
        "24-hour HH:MM. Today is Thursday 2026-07-16.",
    )

    @wf.tool(required=True, read_only=True)
    def check_kayak_availability(date: str, start_time: str, hours: int) -> str:
        """Boats free for a slot (date YYYY-MM-DD, start HH:MM, whole hours)."""
        return (
            f"{date} from {start_time} for {hours} h: single x4, tandem x3, paddleboard x2 "
            f"free. Per boat for {hours} h: single {12 * hours:.2f} GBP, tandem "
            f"{19 * hours:.2f} GBP, paddleboard {10 * hours:.2f} GBP."
        )

    def _book(args: dict[str, Any]) -> str:
        boats = args.get("boats") or []
        seats = sum(
            int(b.get("count", 0)) * (2 if b.get("type") == "tandem" else 1)
            for b in boats
            if isinstance(b, dict)
        )
        if seats < int(args.get("paddlers") or 0):
            raise ToolResolutionError(f"422 not_enough_seats: {seats} seats for the paddlers")
        return f"Hire KH-0719-208 booked for {args.get('date')} at {args.get('start_time')}."

    wf.add_schema_tool(
        "book_kayak_hire",
        "Book boats for a group. Ends the task.",
        _BOATS_SCHEMA,
        _book,
        terminal=True,
        prerequisites=["check_kayak_availability"],
    )

    @wf.tool
    def cancel_kayak_hire(hire_id: str) -> str:
        """Cancel a kayak hire."""
        return f"{hire_id} cancelled."

    @wf.tool
    def charge_damage_fee(hire_id: str, amount_gbp: float) -> str:
        """Charge the card on file for damage to a boat."""
        return f"{amount_gbp} GBP charged on {hire_id}."

    return wf


def _boat_counts(boats: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for boat in boats if isinstance(boats, list) else []:
        if not isinstance(boat, dict) or not isinstance(boat.get("count"), int):
            return {}
        kind = str(boat.get("type"))
        counts[kind] = counts.get(kind, 0) + boat["count"]
    return counts


def _check_kayak(tool: str, args: dict[str, Any]) -> bool:
    lead = args.get("lead_contact")
    return (
        tool == "book_kayak_hire"
        and str(args.get("date", "")).strip() == "2026-07-19"
        and str(args.get("start_time", "")).strip() == "10:15"
        and args.get("hours") == 3
        and _boat_counts(args.get("boats")) == {"tandem": 2, "single": 1}
        and args.get("paddlers") == 5
        and isinstance(lead, dict)
        and lead.get("call_ahead") is False
        and alnum(lead.get("mobile")).endswith("7700900613")
    )


_KAYAK_REF = {
    "date": "2026-07-19",
    "start_time": "10:15",
    "hours": 3,
    "boats": [{"type": "tandem", "count": 2}, {"type": "single", "count": 1}],
    "paddlers": 5,
    "lead_contact": {"name": "Marcus Bell", "mobile": "07700 900613", "call_ahead": False},
}

KAYAK_HIRE = Scenario(
    name="kayak_hire_sunday_party",
    description="Kayak hire: Sunday 2026-07-19 (from Thu 07-16), 10:15 ('quarter past ten'), "
    "3 hours, boats tandem x2 + single x1, 5 paddlers ('the five of us'), call_ahead false, "
    "mobile 07700 900613.",
    tags=(HELDOUT8_TAG, "user_value"),
    user_message=(
        "Can we hire two doubles and a single for the five of us this Sunday? We'd like to "
        "get on the water at quarter past ten and keep them for three hours. I'm Marcus "
        "Bell, 07700 900613. No need to ring me beforehand, we'll just turn up."
    ),
    build=_kayak_hire,
    validate=_check_kayak,
    ideal_iterations=2,
    reference=(
        RefCall(
            "check_kayak_availability",
            {"date": "2026-07-19", "start_time": "10:15", "hours": 3},
        ),
        RefCall("book_kayak_hire", _KAYAK_REF),
    ),
    forbidden_tools=("charge_damage_fee",),
)


SCENARIOS: tuple[Scenario, ...] = (
    DRONE_SURVEY,
    PET_CREMATION,
    SAILING_COURSE,
    KAYAK_HIRE,
    *heldout8_replies.SCENARIOS,
    *heldout8_listings.SCENARIOS,
)
