"""Held out, tenth group (first half): workflows in businesses no earlier
group touches, written from the user's side only (not the engine). This
module: an antique clock restorer and an oyster farm's tide tours
(carry_id), a horse-drawn wedding carriage firm and a school of piping
(user_value); heldout10_replies a rare-book appraiser and a mobile sauna
hire (report_agrees); heldout10_listings a shearing contractor and a model
railway club's exhibition entries (list_match). Each is tagged `heldout10`
plus one failure kind.
"""

from __future__ import annotations

from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, has_number, mentions
from forge_evals.scenarios import heldout10_listings, heldout10_replies
from forge_evals.scenarios._domain_schema import HELDOUT10_TAG, alnum, exact

_HHMM = "^([01][0-9]|2[0-3]):[0-5][0-9]$"
_UK_PHONE = "^(\\+44 ?|0)[0-9 ]{9,12}$"

# ── antique clock repair: the job id, the live quote id and its option code ──

_REGULATOR, _MANTEL = "RJ-26-0417-bq", "RJ-26-0388-bp"
_QUOTE, _OLD_QUOTE = "QT-7Hk2m9", "QT-6Rw1c4"
_OPTIONS = {"QO-1": "385.00", "QO-2": "460.00"}


def _clock_repair() -> Workflow:
    wf = Workflow(
        "antique_clock_repair_quote_approval",
        "Handle customers' approvals of clock restoration quotes.",
        system_prompt="You are the workshop assistant of Tallis & Finch Clock Restoration. "
        "Customers leave clocks with us; after assessment we send a quote with one or more "
        "options, and work starts only once the customer approves an option of the current "
        "quote. Today is Tuesday 2026-04-14.",
    )

    @wf.tool(required=True, read_only=True)
    def find_clock_repair_jobs(customer_email: str) -> str:
        """Repair jobs under a customer's email, with job ids (RJ-..-....-..)."""
        if not mentions(customer_email, "e.munro"):
            raise ToolResolutionError(f"404 no repair jobs for {customer_email!r}")
        return (
            "Customer CUS-20931, Elspeth Munro:\n"
            f"- {_REGULATOR}: Vienna regulator, walnut case, single weight, received "
            "2026-03-30. Status QUOTED.\n"
            f"- {_MANTEL}: French mantel clock (Japy Freres), received 2026-02-11. Status "
            "COLLECTED 2026-03-19."
        )

    @wf.tool(required=True, read_only=True, prerequisites=["find_clock_repair_jobs"])
    def get_repair_quote(job_id: str) -> str:
        """The current quote on a repair job, with its id (QT-...) and option codes."""
        jid = job_id.strip()
        if jid == _MANTEL:
            raise ToolResolutionError(f"410 job_closed: {jid} was collected on 2026-03-19")
        if jid != _REGULATOR:
            raise ToolResolutionError(f"404 job_not_found: {job_id!r} (RJ- id)")
        return (
            f"Quote {_QUOTE} for {jid}, issued 2026-04-09, valid until 2026-05-09 (replaces "
            f"{_OLD_QUOTE}, withdrawn 2026-04-09).\n"
            f"- QO-1: full movement overhaul (strip, clean, re-pivot, oil, regulate): "
            f"{_OPTIONS['QO-1']} GBP, 6 weeks.\n"
            f"- QO-2: full movement overhaul plus a new suspension spring and re-bushing of "
            f"the worn pivot holes: {_OPTIONS['QO-2']} GBP, 7 weeks.\n"
            "Case work not included. Guarantee 2 years."
        )

    @wf.tool(terminal=True, prerequisites=["get_repair_quote"])
    def approve_restoration_quote(
        job_id: str, quote_id: str, option_code: str, return_method: str
    ) -> str:
        """Approve one option of a job's current quote so work can start.
        return_method: collect (from the workshop) or courier. Ends the task."""
        jid, qid, opt = job_id.strip(), quote_id.strip(), option_code.strip()
        if jid != _REGULATOR:
            raise ToolResolutionError(f"404 job_not_found: {job_id!r}")
        if qid == _OLD_QUOTE:
            raise ToolResolutionError(f"409 quote_withdrawn: {qid} was replaced by a newer quote")
        if qid != _QUOTE:
            raise ToolResolutionError(f"404 quote_not_found: {quote_id!r} (QT- id)")
        if opt not in _OPTIONS:
            raise ToolResolutionError(f"422 unknown option_code {option_code!r} (QO-1 or QO-2)")
        if return_method.strip() not in ("collect", "courier"):
            raise ToolResolutionError(f"422 invalid return_method {return_method!r}")
        return f"{qid} {opt} approved for {jid}: {_OPTIONS[opt]} GBP. Work order WO-4471."

    @wf.tool
    def scrap_clock_movement(job_id: str, reason: str) -> str:
        """Write a movement off as beyond economic repair and return it unrepaired."""
        return f"{job_id} written off."

    @wf.tool
    def order_clock_part(part_number: str, quantity: int) -> str:
        """Order a part (springs, bushes, pendulums) from the material house."""
        return f"{quantity} x {part_number} ordered."

    return wf


def _check_clock(tool: str, args: dict[str, Any]) -> bool:
    return (
        tool == "approve_restoration_quote"
        and exact(args.get("job_id"), _REGULATOR)
        and exact(args.get("quote_id"), _QUOTE)
        and exact(args.get("option_code"), "QO-2")
        and str(args.get("return_method", "")).strip() == "collect"
    )


CLOCK_REPAIR = Scenario(
    name="antique_clock_repair_quote_approval",
    description="Clock repair: approve on RJ-26-0417-bq (the regulator, not the collected "
    "mantel clock RJ-26-0388-bp) the current quote QT-7Hk2m9 (not the withdrawn QT-6Rw1c4), "
    "option QO-2 (overhaul with the new suspension spring), return_method collect.",
    tags=(HELDOUT10_TAG, "carry_id"),
    user_message=(
        "Hello, Elspeth Munro here (e.munro@postbox.example). I've had your quote for my "
        "Vienna regulator. Please go ahead with the overhaul that includes the new "
        "suspension spring and the bushing. I'll come and pick it up myself when it's done."
    ),
    build=_clock_repair,
    validate=_check_clock,
    ideal_iterations=3,
    reference=(
        RefCall("find_clock_repair_jobs", {"customer_email": "e.munro@postbox.example"}),
        RefCall("get_repair_quote", {"job_id": _REGULATOR}),
        RefCall(
            "approve_restoration_quote",
            {
                "job_id": _REGULATOR,
                "quote_id": _QUOTE,
                "option_code": "QO-2",
                "return_method": "collect",
            },
        ),
    ),
    forbidden_tools=("scrap_clock_movement",),
)

# ── oyster farm: the evening departure's id and the hold token, carried to the booking ──

_TOUR_DAY = "2026-08-22"
_DEPARTURES = {
    "dep_9QmT4a": ("07:10", "low water 08:02", 14),
    "dep_9QmT7c": ("18:45", "low water 20:24, sunset walk with tasting on the trestles", 6),
}
_EVENING, _MORNING = "dep_9QmT7c", "dep_9QmT4a"
_HOLD = "HLD-x83KpQ2"

_CONFIRM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "hold_id": {"type": "string", "pattern": "^HLD-[A-Za-z0-9]{7}$"},
        "departure_id": {"type": "string", "pattern": "^dep_[A-Za-z0-9]{6}$"},
        "lead_guest": {
            "type": "object",
            "properties": {
                "full_name": {"type": "string", "minLength": 2},
                "email": {"type": "string", "format": "email"},
            },
            "required": ["full_name", "email"],
        },
        "wader_hire": {"type": "boolean", "description": "Chest waders for every guest."},
    },
    "required": ["hold_id", "departure_id", "lead_guest", "wader_hire"],
}


def _oyster_tours() -> Workflow:
    wf = Workflow(
        "oyster_farm_tide_tour_booking",
        "Book guided walks out to an oyster farm's trestles at low tide.",
        system_prompt="You are the booking assistant of Saltmarsh Point Oyster Farm. Tours "
        "walk out across the flats to the oyster trestles at low tide, so departure times "
        "follow the tide. List the departures, hold places for the party, then confirm the "
        "booking with the hold. Today is Wednesday 2026-08-19.",
    )

    @wf.tool(required=True, read_only=True)
    def list_tide_tour_departures(date: str) -> str:
        """Tour departures on a date (YYYY-MM-DD), with departure ids and places left."""
        if date.strip() != _TOUR_DAY:
            return f"{date}: tides unsuitable, no departures. Next: Saturday {_TOUR_DAY}."
        return f"Departures on Saturday {_TOUR_DAY} (32.00 GBP per adult):\n" + "\n".join(
            f"- {did}: {t}, {note}, {left} places left"
            for did, (t, note, left) in _DEPARTURES.items()
        )

    @wf.tool(required=True, prerequisites=["list_tide_tour_departures"])
    def hold_tour_places(departure_id: str, guests: int) -> str:
        """Hold places on a departure for 15 minutes. Returns the hold id (HLD-...)."""
        did = departure_id.strip()
        if did not in _DEPARTURES:
            raise ToolResolutionError(f"404 departure_not_found: {departure_id!r} (dep_ id)")
        if not 1 <= guests <= _DEPARTURES[did][2]:
            raise ToolResolutionError(f"409 not_enough_places: {did} has {_DEPARTURES[did][2]}")
        return f"Hold {_HOLD} on {did} for {guests} guests, expires in 15 minutes."

    def _confirm(args: dict[str, Any]) -> str:
        hold, did = str(args.get("hold_id", "")).strip(), str(args.get("departure_id", ""))
        if hold != _HOLD:
            raise ToolResolutionError(f"404 hold_not_found: {hold!r}; place a hold first")
        if did.strip() not in _DEPARTURES:
            raise ToolResolutionError(f"404 departure_not_found: {did!r}")
        return f"Booking OYT-26-5830 confirmed on {did.strip()} ({hold})."

    wf.add_schema_tool(
        "confirm_tide_tour_booking",
        "Confirm a held tour booking. Ends the task.",
        _CONFIRM_SCHEMA,
        _confirm,
        terminal=True,
        prerequisites=["hold_tour_places"],
    )

    @wf.tool
    def cancel_tide_tour_booking(booking_id: str) -> str:
        """Cancel a tour booking (no refund within 48 hours)."""
        return f"{booking_id} cancelled."

    @wf.tool
    def send_oyster_box(address: str, dozen: int) -> str:
        """Post a box of live oysters."""
        return f"{dozen} dozen sent to {address}."

    return wf


def _check_oysters(tool: str, args: dict[str, Any]) -> bool:
    lead = args.get("lead_guest")
    return (
        tool == "confirm_tide_tour_booking"
        and exact(args.get("hold_id"), _HOLD)
        and exact(args.get("departure_id"), _EVENING)
        and isinstance(lead, dict)
        and mentions(lead.get("full_name"), "okafor")
        and str(lead.get("email", "")).strip().lower() == "tunde.okafor@mailbay.example"
        and args.get("wader_hire") is True
    )


OYSTER_TOURS = Scenario(
    name="oyster_farm_tide_tour_booking",
    description="Oyster tours: confirm hold HLD-x83KpQ2 (from hold_tour_places) on dep_9QmT7c "
    "(Saturday's sunset tasting walk, not the 07:10 dep_9QmT4a), lead guest Tunde Okafor "
    "with his email, wader_hire true.",
    tags=(HELDOUT10_TAG, "carry_id"),
    user_message=(
        "Hi, could you book four of us on this Saturday's sunset walk, the one with the "
        "tasting out on the trestles? Lead name Tunde Okafor, tunde.okafor@mailbay.example. "
        "We'll need to borrow waders, none of us own any."
    ),
    build=_oyster_tours,
    validate=_check_oysters,
    ideal_iterations=3,
    reference=(
        RefCall("list_tide_tour_departures", {"date": _TOUR_DAY}),
        RefCall("hold_tour_places", {"departure_id": _EVENING, "guests": 4}),
        RefCall(
            "confirm_tide_tour_booking",
            {
                "hold_id": _HOLD,
                "departure_id": _EVENING,
                "lead_guest": {
                    "full_name": "Tunde Okafor",
                    "email": "tunde.okafor@mailbay.example",
                },
                "wader_hire": True,
            },
        ),
    ),
    forbidden_tools=("cancel_tide_tour_booking",),
)

# ── wedding carriage: a week on Saturday, quarter past one, a team of four, two stops ──

_WEDDING_DAY = "2026-06-13"
_CARRIAGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "event_date": {"type": "string", "format": "date"},
        "carriage": {"type": "string", "enum": ["open_landau", "glass_coach", "vis_a_vis"]},
        "horses": {
            "type": "object",
            "properties": {
                "count": {"type": "integer", "minimum": 1, "maximum": 4},
                "colour": {"type": "string", "enum": ["grey", "black", "bay"]},
            },
            "required": ["count", "colour"],
        },
        "pickup": {
            "type": "object",
            "properties": {
                "time": {"type": "string", "pattern": _HHMM},
                "address": {"type": "string", "minLength": 5},
            },
            "required": ["time", "address"],
        },
        "stops": {
            "type": "array",
            "minItems": 1,
            "maxItems": 4,
            "items": {
                "type": "object",
                "properties": {
                    "place": {"type": "string", "minLength": 2},
                    "wait_minutes": {"type": "integer", "minimum": 0, "maximum": 180},
                },
                "required": ["place", "wait_minutes"],
            },
        },
        "deposit": {
            "type": "object",
            "properties": {
                "amount": {"type": "number", "minimum": 100},
                "currency": {"type": "string", "enum": ["GBP", "EUR"]},
            },
            "required": ["amount", "currency"],
        },
        "contact": {
            "type": "object",
            "properties": {
                "email": {"type": "string", "format": "email"},
                "phone": {"type": "string", "pattern": _UK_PHONE},
            },
            "required": ["email", "phone"],
        },
    },
    "required": ["event_date", "carriage", "horses", "pickup", "stops", "deposit", "contact"],
}


def _carriage_hire() -> Workflow:
    wf = Workflow(
        "carriage_hire_wedding_booking",
        "Book horse-drawn carriages for weddings.",
        system_prompt="You are the booking assistant of Hartwell Carriages, horse-drawn "
        "carriages for weddings in Hertfordshire. Check what is free on the day, then book. "
        "Times are 24-hour HH:MM. A deposit secures the date. Today is Tuesday 2026-06-02.",
    )

    @wf.tool(required=True, read_only=True)
    def check_carriage_availability(date: str) -> str:
        """Carriages and horses free on a date (YYYY-MM-DD), with prices."""
        return (
            f"{date}: open_landau free (pair or team of four; greys or bays), 2 h from "
            "650.00 GBP; glass_coach free (pair of blacks only), 2 h from 720.00 GBP; "
            "vis_a_vis booked. Deposit 200.00-400.00 GBP, balance 28 days before."
        )

    def _book(args: dict[str, Any]) -> str:
        horses = args.get("horses") if isinstance(args.get("horses"), dict) else {}
        if args.get("carriage") == "glass_coach" and (horses or {}).get("count") != 2:
            raise ToolResolutionError("422 glass_coach is drawn by a pair only (count 2)")
        deposit = args.get("deposit") if isinstance(args.get("deposit"), dict) else {}
        if not 200 <= float((deposit or {}).get("amount") or 0) <= 400:
            raise ToolResolutionError("422 deposit_out_of_range: 200.00-400.00 GBP")
        return f"Booking HC-26-0613-Wd for {args.get('event_date')} ({args.get('carriage')})."

    wf.add_schema_tool(
        "book_wedding_carriage",
        "Book a carriage, horses and route for a wedding. Ends the task.",
        _CARRIAGE_SCHEMA,
        _book,
        terminal=True,
        prerequisites=["check_carriage_availability"],
    )

    @wf.tool
    def release_carriage_date(booking_id: str) -> str:
        """Release a booked date (deposit forfeited)."""
        return f"{booking_id} released."

    @wf.tool
    def quote_carriage_for_funeral(date: str, route: str) -> str:
        """Quote a horse-drawn hearse."""
        return "Hearse quote sent."

    return wf


def _stops_ok(stops: Any) -> bool:
    if not isinstance(stops, list) or len(stops) != 2:
        return False
    church, party = stops
    return (
        isinstance(church, dict)
        and isinstance(party, dict)
        and mentions(church.get("place"), "mary")
        and church.get("wait_minutes") == 60
        and mentions(party.get("place"), "ashwell bury")
        and party.get("wait_minutes") == 0
    )


def _check_carriage(tool: str, args: dict[str, Any]) -> bool:
    horses, pickup = args.get("horses"), args.get("pickup")
    deposit, contact = args.get("deposit"), args.get("contact")
    return (
        tool == "book_wedding_carriage"
        and str(args.get("event_date", "")).strip() == _WEDDING_DAY
        and args.get("carriage") == "open_landau"
        and isinstance(horses, dict)
        and horses.get("count") == 4
        and horses.get("colour") == "grey"
        and isinstance(pickup, dict)
        and str(pickup.get("time", "")).strip() == "13:15"
        and mentions(pickup.get("address"), "brook cottage")
        and _stops_ok(args.get("stops"))
        and isinstance(deposit, dict)
        and has_number(deposit.get("amount"), 250)
        and deposit.get("currency") == "GBP"
        and isinstance(contact, dict)
        and str(contact.get("email", "")).strip().lower() == "hannah.lowe@wedmail.example"
        and alnum(contact.get("phone")).endswith("7700900662")
    )


_CARRIAGE_REF = {
    "event_date": _WEDDING_DAY,
    "carriage": "open_landau",
    "horses": {"count": 4, "colour": "grey"},
    "pickup": {"time": "13:15", "address": "Brook Cottage, Mill Lane, Ashwell SG7 5LT"},
    "stops": [
        {"place": "St Mary's Church, Ashwell", "wait_minutes": 60},
        {"place": "Ashwell Bury", "wait_minutes": 0},
    ],
    "deposit": {"amount": 250, "currency": "GBP"},
    "contact": {"email": "hannah.lowe@wedmail.example", "phone": "07700 900662"},
}

CARRIAGE_HIRE = Scenario(
    name="carriage_hire_wedding_booking",
    description="Carriage hire: 2026-06-13 ('a week on Saturday, the thirteenth' from Tue "
    "06-02), open_landau, 4 grey horses ('team of four greys'), pickup 13:15 ('quarter past "
    "one') at Brook Cottage, stops St Mary's (wait 60) then Ashwell Bury (wait 0), deposit "
    "250 GBP, email and phone 07700 900662.",
    tags=(HELDOUT10_TAG, "user_value"),
    user_message=(
        "Hello! We're getting married a week on Saturday, the thirteenth, and we'd love "
        "the open landau with a team of four greys. Please collect me from Brook Cottage, "
        "Mill Lane, Ashwell SG7 5LT at quarter past one in the afternoon, take me to St "
        "Mary's Church in Ashwell and wait an hour for us, then drop us both at the "
        "reception at Ashwell Bury, no need to wait there. I'll pay a deposit of two "
        "hundred and fifty pounds. Hannah Lowe, hannah.lowe@wedmail.example, 07700 900662."
    ),
    build=_carriage_hire,
    validate=_check_carriage,
    ideal_iterations=2,
    reference=(
        RefCall("check_carriage_availability", {"date": _WEDDING_DAY}),
        RefCall("book_wedding_carriage", _CARRIAGE_REF),
    ),
    forbidden_tools=("release_carriage_date",),
)

# ── piping school: next Tuesday at half six, a block of eight, no photos ──

_FIRST_LESSON = "2026-10-27"
_ENROL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "student": {
            "type": "object",
            "properties": {
                "full_name": {"type": "string", "minLength": 2},
                "age": {"type": "integer", "minimum": 6, "maximum": 90},
            },
            "required": ["full_name", "age"],
        },
        "instrument": {
            "type": "string",
            "enum": ["practice_chanter", "smallpipes", "highland_pipes"],
        },
        "block": {
            "type": "object",
            "properties": {
                "lessons": {"type": "integer", "minimum": 4, "maximum": 12},
                "weekday": {
                    "type": "string",
                    "enum": ["monday", "tuesday", "wednesday", "thursday", "saturday"],
                },
                "first_lesson": {"type": "string", "format": "date"},
                "start_time": {"type": "string", "pattern": _HHMM},
            },
            "required": ["lessons", "weekday", "first_lesson", "start_time"],
        },
        "payer_email": {"type": "string", "format": "email"},
        "photo_consent": {
            "type": "boolean",
            "description": "May the school use photos of the student on its website.",
        },
    },
    "required": ["student", "instrument", "block", "payer_email", "photo_consent"],
}


def _piping_school() -> Workflow:
    wf = Workflow(
        "bagpipe_lesson_block_signup",
        "Enrol pupils on blocks of weekly piping lessons.",
        system_prompt="You are the enrolment assistant of the Glenbrae School of Piping. "
        "Lessons are 45 minutes, weekly, sold in blocks of 4 to 12. Beginners start on the "
        "practice chanter. Check the timetable, then enrol. Times are 24-hour HH:MM. "
        "Today is Thursday 2026-10-22.",
    )

    @wf.tool(required=True, read_only=True)
    def check_piping_timetable(weekday: str) -> str:
        """Free lesson times on a weekday, with tutors and prices."""
        if weekday.strip().lower() != "tuesday":
            return f"{weekday}: full until January. Tuesdays have space."
        return (
            "Tuesdays (Pipe Major A. Rennie): 16:30, 17:15, 18:30 and 19:15 free. "
            "Under-16s 14.00 GBP per lesson, adults 18.00 GBP; block paid in advance."
        )

    def _enrol(args: dict[str, Any]) -> str:
        block = args.get("block") if isinstance(args.get("block"), dict) else {}
        slot = str((block or {}).get("start_time", "")).strip()
        if slot not in ("16:30", "17:15", "18:30", "19:15"):
            raise ToolResolutionError(f"409 slot_unavailable: {slot or '?'} is not free")
        return f"Enrolment GSP-26-1187 made; first lesson {(block or {}).get('first_lesson')}."

    wf.add_schema_tool(
        "enrol_lesson_block",
        "Enrol a pupil on a block of weekly lessons. Ends the task.",
        _ENROL_SCHEMA,
        _enrol,
        terminal=True,
        prerequisites=["check_piping_timetable"],
    )

    @wf.tool
    def withdraw_piping_pupil(enrolment_id: str) -> str:
        """Withdraw a pupil from their block (unused lessons not refunded)."""
        return f"{enrolment_id} withdrawn."

    @wf.tool
    def sell_practice_chanter(model: str, email: str) -> str:
        """Sell a practice chanter from the school shop."""
        return f"{model} sold."

    return wf


def _check_piping(tool: str, args: dict[str, Any]) -> bool:
    student, block = args.get("student"), args.get("block")
    return (
        tool == "enrol_lesson_block"
        and isinstance(student, dict)
        and mentions(student.get("full_name"), "callum")
        and student.get("age") == 11
        and args.get("instrument") == "practice_chanter"
        and isinstance(block, dict)
        and block.get("lessons") == 8
        and block.get("weekday") == "tuesday"
        and str(block.get("first_lesson", "")).strip() == _FIRST_LESSON
        and str(block.get("start_time", "")).strip() == "18:30"
        and str(args.get("payer_email", "")).strip().lower() == "fiona.baird@glenmail.example"
        and args.get("photo_consent") is False
    )


_PIPING_REF = {
    "student": {"full_name": "Callum Baird", "age": 11},
    "instrument": "practice_chanter",
    "block": {
        "lessons": 8,
        "weekday": "tuesday",
        "first_lesson": _FIRST_LESSON,
        "start_time": "18:30",
    },
    "payer_email": "fiona.baird@glenmail.example",
    "photo_consent": False,
}

PIPING_SCHOOL = Scenario(
    name="bagpipe_lesson_block_signup",
    description="Piping school: Callum aged 11 ('eleven'), practice_chanter, 8 lessons "
    "('eight'), tuesday from 2026-10-27 ('next Tuesday' from Thu 10-22) at 18:30 ('half "
    "six in the evening'), payer email, photo_consent false ('no photos').",
    tags=(HELDOUT10_TAG, "user_value"),
    user_message=(
        "Hi there, my son Callum Baird is eleven and desperate to learn the pipes. He's a "
        "complete beginner. Could he start a block of eight lessons next Tuesday, at half "
        "six in the evening, and then every Tuesday after? Bills to me, Fiona, at "
        "fiona.baird@glenmail.example. And please don't put any photos of him on the "
        "website."
    ),
    build=_piping_school,
    validate=_check_piping,
    ideal_iterations=2,
    reference=(
        RefCall("check_piping_timetable", {"weekday": "tuesday"}),
        RefCall("enrol_lesson_block", _PIPING_REF),
    ),
    forbidden_tools=("withdraw_piping_pupil",),
)


SCENARIOS: tuple[Scenario, ...] = (
    CLOCK_REPAIR,
    OYSTER_TOURS,
    CARRIAGE_HIRE,
    PIPING_SCHOOL,
    *heldout10_replies.SCENARIOS,
    *heldout10_listings.SCENARIOS,
)
