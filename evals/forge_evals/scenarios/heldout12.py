"""Held out, twelfth group (first half): workflows in businesses no earlier
group touches, written from the user's side only (not the engine). This
module: a clock repairer's quote approvals and an escape room's booking moves
(carry_id), hot tub hire and llama treks (user_value); heldout12_replies a
planetarium's school visits and a blacksmith's forging courses
(report_agrees); heldout12_listings a model aircraft club's flying sessions
and a vineyard's group tours (list_match). Each is tagged `heldout12` plus
one failure kind.
"""

from __future__ import annotations

from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, mentions
from forge_evals.scenarios import heldout12_listings, heldout12_replies
from forge_evals.scenarios._domain_schema import HELDOUT12_TAG, alnum, exact

_HHMM = "^([01][0-9]|2[0-3]):[0-5][0-9]$"


def _clock(value: Any) -> str:
    """A clock time with a one-digit hour padded ("9:30" -> "09:30"), else as given."""
    text = str(value if value is not None else "").strip()
    return f"0{text}" if len(text) == 4 and text[1] == ":" else text


def _day(value: Any) -> str:
    return str(value if value is not None else "").strip()


# ── clock repairer: the quoted longcase job (not the collected one) and its current quote ──

_LONGCASE, _CARRIAGE, _WRISTWATCH = "CRJ-61873", "CRJ-60214", "CRJ-61880"
_QUOTE, _OLD_QUOTE, _CARRIAGE_QUOTE = "QT-8841-B", "QT-8841-A", "QT-7702-A"

_APPROVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "job_id": {"type": "string", "pattern": "^CRJ-[0-9]{5}$"},
        "quote_id": {"type": "string", "pattern": "^QT-[0-9]{4}-[A-Z]$"},
        "return": {
            "type": "object",
            "properties": {
                "method": {
                    "type": "string",
                    "enum": ["collect_from_workshop", "deliver_and_set_up"],
                    "description": "deliver_and_set_up: we bring the clock home, set it "
                    "up and put it in beat (45.00 GBP within 20 miles).",
                },
                "notes": {"type": "string", "maxLength": 300},
            },
            "required": ["method"],
        },
    },
    "required": ["job_id", "quote_id", "return"],
}


def _clock_repairer() -> Workflow:
    wf = Workflow(
        "clock_repair_quote_approval",
        "Take customers' approvals of clock and watch repair quotes.",
        system_prompt="You are the workshop desk assistant of Pellow & Daughter, clock and "
        "watch repairers in Ludlow. Work starts on a job only when the customer approves "
        "its current quote. Find the customer's jobs, read the job's quotes, then record "
        "the approval. Today is Wednesday 2026-04-08.",
    )

    @wf.tool(required=True, read_only=True)
    def lookup_horology_jobs(email: str) -> str:
        """Repair jobs under a customer's email, with job ids (CRJ-.....)."""
        if not mentions(email, "m.okafor@teme-mail"):
            raise ToolResolutionError(f"404 no customer with email {email!r}")
        return (
            "Customer CU-2290, Martin Okafor, 3 Dinham Row, Ludlow (9 miles):\n"
            f"- {_CARRIAGE}: brass carriage clock, overhauled; COLLECTED 2025-11-20\n"
            f"- {_LONGCASE}: 8-day longcase clock (W. Hartley, Halifax, c.1790); QUOTED, "
            "awaiting the customer's approval\n"
            f"- {_WRISTWATCH}: gent's automatic wristwatch, new crystal; READY since "
            "2026-04-03"
        )

    @wf.tool(required=True, read_only=True, prerequisites=["lookup_horology_jobs"])
    def get_repair_quotes(job_id: str) -> str:
        """A job's quotes (QT-....-.), their state, price and what they cover."""
        jid = job_id.strip()
        if jid == _CARRIAGE:
            return f"{jid}: quote {_CARRIAGE_QUOTE} 185.00 GBP, ACCEPTED 2025-10-02, job closed."
        if jid == _WRISTWATCH:
            return f"{jid}: fixed price 38.00 GBP, no quote needed; ready to collect."
        if jid != _LONGCASE:
            raise ToolResolutionError(f"404 job_not_found: {job_id!r} (CRJ- id)")
        return (
            f"{jid}: longcase movement, received 2026-03-27.\n"
            f"- {_OLD_QUOTE}: 390.00 GBP, 2026-04-02, strip, clean and re-bush 4 pivot "
            "holes. SUPERSEDED 2026-04-06 (strike train found worn on inspection).\n"
            f"- {_QUOTE}: 465.00 GBP, 2026-04-06, strip and clean, re-bush 6 pivot holes, "
            "new gut lines, strike train repaired. CURRENT, valid to 2026-05-06; about 3 "
            "weeks from approval.\n"
            "Return: collect from the workshop (free), or we deliver, set it up and put it "
            "in beat (45.00 GBP within 20 miles)."
        )

    def _approve(args: dict[str, Any]) -> str:
        jid, qid = _day(args.get("job_id")), _day(args.get("quote_id"))
        if jid == _CARRIAGE:
            raise ToolResolutionError(f"409 job_closed: {jid} was collected 2025-11-20")
        if jid == _WRISTWATCH:
            raise ToolResolutionError(f"409 no_open_quote: {jid} is fixed price, ready")
        if jid != _LONGCASE:
            raise ToolResolutionError(f"404 job_not_found: {jid!r} (CRJ- id)")
        if qid == _OLD_QUOTE:
            raise ToolResolutionError(
                f"410 quote_superseded: {qid} was replaced 2026-04-06; approve the job's "
                "current quote"
            )
        if qid != _QUOTE:
            raise ToolResolutionError(f"404 quote_not_found: {qid!r} on {jid} (QT- id)")
        return f"Quote {qid} approved; {jid} booked onto the bench, due about 2026-04-29."

    wf.add_schema_tool(
        "approve_clock_repair_quote",
        "Record the customer's approval of a job's quote and how it comes back. Ends the task.",
        _APPROVAL_SCHEMA,
        _approve,
        terminal=True,
        prerequisites=["get_repair_quotes"],
    )

    @wf.tool
    def request_clock_requote(job_id: str, reason: str) -> str:
        """Send a job back to the bench for a new quote (the current one is withdrawn)."""
        return f"Requote requested on {job_id}."

    @wf.tool
    def cancel_clock_repair_job(job_id: str, reason: str) -> str:
        """Cancel a repair job; the movement is reassembled unrepaired (30.00 GBP)."""
        return f"{job_id} cancelled."

    return wf


def _check_clock(tool: str, args: dict[str, Any]) -> bool:
    back = args.get("return")
    return (
        tool == "approve_clock_repair_quote"
        and exact(args.get("job_id"), _LONGCASE)
        and exact(args.get("quote_id"), _QUOTE)
        and isinstance(back, dict)
        and back.get("method") == "deliver_and_set_up"
    )


CLOCK_REPAIR = Scenario(
    name="clock_repair_quote_approval",
    description="Clock repairer: approve QT-8841-B (the current quote, not the superseded "
    "QT-8841-A) on CRJ-61873 (the longcase found by email, not the collected carriage clock "
    "CRJ-60214 nor the ready wristwatch CRJ-61880), returned deliver_and_set_up.",
    tags=(HELDOUT12_TAG, "carry_id"),
    user_message=(
        "Good morning, Martin Okafor here (m.okafor@teme-mail.example). I've had your "
        "revised price for the grandfather clock and I'm happy with it, please go ahead. "
        "When it's done, could you bring it back to the house and set it up in the hall "
        "like you did last time?"
    ),
    build=_clock_repairer,
    validate=_check_clock,
    ideal_iterations=3,
    reference=(
        RefCall("lookup_horology_jobs", {"email": "m.okafor@teme-mail.example"}),
        RefCall("get_repair_quotes", {"job_id": _LONGCASE}),
        RefCall(
            "approve_clock_repair_quote",
            {"job_id": _LONGCASE, "quote_id": _QUOTE, "return": {"method": "deliver_and_set_up"}},
        ),
    ),
    forbidden_tools=("request_clock_requote", "cancel_clock_repair_job"),
)

# ── escape room: the confirmed Lighthouse Keeper booking to that room's Friday 20:00 slot ──

_BOOKING, _PLAYED, _CANCELLED = "ESC-41388", "ESC-40927", "ESC-41402"
_FRIDAY = "2026-06-19"
_SLOT = "TS-90418"
# slot id -> (room, time, state) on the Friday
_SLOTS = {
    "TS-90411": ("The Lighthouse Keeper", "16:00", "free"),
    "TS-90415": ("The Lighthouse Keeper", "18:30", "BOOKED"),
    _SLOT: ("The Lighthouse Keeper", "20:00", "free"),
    "TS-90422": ("The Lighthouse Keeper", "21:30", "free"),
    "TS-90434": ("The Alchemist's Study", "18:00", "free"),
    "TS-90438": ("The Alchemist's Study", "20:00", "free"),
    "TS-90458": ("The Last Train", "20:00", "BOOKED"),
    "TS-90462": ("The Last Train", "21:30", "free"),
}


def _escape_rooms() -> Workflow:
    wf = Workflow(
        "escape_room_booking_move",
        "Move escape room bookings to other slots.",
        system_prompt="You are the bookings assistant of Lockwise Escape Rooms, Shrewsbury "
        "(three rooms, 60 minutes each). A booking keeps its room when it moves; it can "
        "move to any free slot of that room. Find the booking, look at the day's slots, "
        "then move it. Times are 24-hour HH:MM. Today is Wednesday 2026-06-17.",
    )

    @wf.tool(required=True, read_only=True)
    def find_escape_bookings(phone: str) -> str:
        """Bookings under a phone number, with booking refs (ESC-.....)."""
        if not alnum(phone).endswith("7700900286"):
            raise ToolResolutionError(f"404 no bookings under {phone!r}")
        return (
            "Lead booker Sophie Brandt:\n"
            f"- {_PLAYED}: The Alchemist's Study, Sat 2026-03-14 19:00, 5 players, "
            "COMPLETED (escaped in 52:10)\n"
            f"- {_BOOKING}: The Lighthouse Keeper, Sat 2026-06-27 18:30, 4 players, "
            "CONFIRMED, paid 96.00 GBP\n"
            f"- {_CANCELLED}: The Last Train, Sun 2026-06-28 12:00, 4 players, CANCELLED "
            "2026-06-10"
        )

    @wf.tool(required=True, read_only=True)
    def list_escape_room_slots(date: str) -> str:
        """Every room's slots on a date (YYYY-MM-DD), with slot ids (TS-.....)."""
        if date.strip() != _FRIDAY:
            return f"{date}: every room fully booked from 16:00."
        return f"Fri {_FRIDAY}:\n" + "\n".join(
            f"- {sid}: {room}, {time}, {state}" for sid, (room, time, state) in _SLOTS.items()
        )

    @wf.tool(terminal=True, prerequisites=["find_escape_bookings", "list_escape_room_slots"])
    def move_escape_booking(booking_ref: str, slot_id: str) -> str:
        """Move a booking to another slot of its room (TS- id). Ends the task."""
        ref, sid = booking_ref.strip(), slot_id.strip()
        if ref == _PLAYED:
            raise ToolResolutionError(f"409 booking_completed: {ref} was played 2026-03-14")
        if ref == _CANCELLED:
            raise ToolResolutionError(f"409 booking_cancelled: {ref} was cancelled 2026-06-10")
        if ref != _BOOKING:
            raise ToolResolutionError(f"404 booking_not_found: {booking_ref!r} (ESC- ref)")
        if sid not in _SLOTS:
            raise ToolResolutionError(f"404 slot_not_found: {slot_id!r} (TS- id)")
        room, time, state = _SLOTS[sid]
        if room != "The Lighthouse Keeper":
            raise ToolResolutionError(
                f"422 room_mismatch: {sid} is {room}; {ref} is for The Lighthouse Keeper"
            )
        if state != "free":
            raise ToolResolutionError(f"409 slot_taken: {sid} ({time}) is booked")
        return f"{ref} moved to Fri {_FRIDAY} {time}, The Lighthouse Keeper."

    @wf.tool
    def cancel_escape_booking(booking_ref: str) -> str:
        """Cancel a booking (refund only up to 7 days before)."""
        return f"{booking_ref} cancelled."

    @wf.tool
    def change_escape_team_size(booking_ref: str, players: int) -> str:
        """Change the number of players on a booking (charged per player)."""
        return f"{booking_ref} now for {players} players."

    return wf


def _check_escape(tool: str, args: dict[str, Any]) -> bool:
    return (
        tool == "move_escape_booking"
        and exact(args.get("booking_ref"), _BOOKING)
        and exact(args.get("slot_id"), _SLOT)
    )


ESCAPE_ROOM = Scenario(
    name="escape_room_booking_move",
    description="Escape room: move ESC-41388 (the confirmed Lighthouse Keeper booking found "
    "by phone, not the completed ESC-40927 nor the cancelled ESC-41402) to TS-90418 (that "
    "room's Fri 2026-06-19 20:00 slot, not the Alchemist's TS-90438 nor the 18:30 TS-90415).",
    tags=(HELDOUT12_TAG, "carry_id"),
    user_message=(
        "Hi there, Sophie Brandt, my number's 07700 900286. We're booked into the "
        "lighthouse room next weekend but half the team can't make it then. Could you move "
        "us to this Friday at eight in the evening instead? Same room please."
    ),
    build=_escape_rooms,
    validate=_check_escape,
    ideal_iterations=3,
    reference=(
        RefCall("find_escape_bookings", {"phone": "07700 900286"}),
        RefCall("list_escape_room_slots", {"date": _FRIDAY}),
        RefCall("move_escape_booking", {"booking_ref": _BOOKING, "slot_id": _SLOT}),
    ),
    forbidden_tools=("cancel_escape_booking", "change_escape_team_size"),
)

# ── hot tub hire: the bigger inflatable, Fri 28th to Tue, ready by 17:30 at 38 C, no gazebo ──

_DELIVERY, _COLLECTION = "2026-08-28", "2026-09-01"
_TUBS = {
    "HT-INF4": "inflatable, 4 seats, 145.00 GBP for the weekend",
    "HT-INF6": "inflatable, 6 seats, 185.00 GBP for the weekend",
    "HT-HS7": "hard shell with jets, 7 seats, 320.00 GBP for the weekend",
    "HT-WF8": "wood-fired cedar tub, 8 seats, 360.00 GBP for the weekend",
}

_HIRE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "tub_id": {"type": "string", "enum": list(_TUBS)},
        "delivery": {
            "type": "object",
            "properties": {
                "date": {"type": "string", "format": "date"},
                "ready_by": {
                    "type": "string",
                    "pattern": _HHMM,
                    "description": "When the tub must be full and at temperature.",
                },
                "postcode": {"type": "string", "pattern": "^[A-Za-z0-9 ]{5,8}$"},
            },
            "required": ["date", "ready_by", "postcode"],
        },
        "collection_date": {"type": "string", "format": "date"},
        "water_temperature_c": {"type": "integer", "minimum": 30, "maximum": 40},
        "gazebo": {"type": "boolean", "description": "A 3 x 3 m pop-up gazebo over the tub."},
        "extra_chemical_packs": {"type": "integer", "minimum": 0, "maximum": 6},
    },
    "required": [
        "tub_id",
        "delivery",
        "collection_date",
        "water_temperature_c",
        "gazebo",
        "extra_chemical_packs",
    ],
}


def _hot_tub_hire() -> Workflow:
    wf = Workflow(
        "hot_tub_bank_holiday_hire",
        "Book hot tub hires: delivery, set-up and collection.",
        system_prompt="You are the bookings assistant of Bubble & Brook Hot Tub Hire, "
        "serving the Welsh Marches. We deliver, fill and heat the tub, and collect it at "
        "the end of the hire. Check availability for the dates, then book. Times are "
        "24-hour HH:MM. Today is Wednesday 2026-08-05.",
    )

    @wf.tool(required=True, read_only=True)
    def check_hot_tub_availability(delivery_date: str, collection_date: str) -> str:
        """Tubs free between two dates (YYYY-MM-DD), with prices and hire terms."""
        if delivery_date.strip() != _DELIVERY:
            return f"{delivery_date}: no deliveries free; try another day."
        tubs = "\n".join(f"- {tid}: {text}, available" for tid, text in _TUBS.items())
        return (
            f"Delivery Fri {_DELIVERY}, collection {collection_date} (bank holiday weekend, "
            f"4 nights):\n{tubs}\n"
            "Delivery window 08:00-12:00; filling and heating take 5-6 hours. Water is "
            "heated to 37 C unless asked (30-40 C). One chemical pack is included; extra "
            "packs 6.50 GBP each. Gazebo 35.00 GBP. Bank holiday surcharge 20.00 GBP. "
            "Collections Tuesday to Friday, from 09:00."
        )

    def _book(args: dict[str, Any]) -> str:
        tid = _day(args.get("tub_id"))
        if tid not in _TUBS:
            raise ToolResolutionError(f"404 tub_not_found: {tid!r} ({', '.join(_TUBS)})")
        delivery = args.get("delivery") if isinstance(args.get("delivery"), dict) else {}
        if _day((delivery or {}).get("date")) != _DELIVERY:
            raise ToolResolutionError("409 no_delivery_slot: only 2026-08-28 is free")
        ready = _clock((delivery or {}).get("ready_by"))
        if ready < "14:00":
            raise ToolResolutionError(
                f"422 not_enough_heating_time: {ready}; deliveries end 12:00 and heating "
                "takes up to 6 hours"
            )
        if _day(args.get("collection_date")) <= _DELIVERY:
            raise ToolResolutionError("422 collection_before_delivery")
        return f"Hire HH-0828-{tid[3:]} booked: {tid}, ready by {ready}."

    wf.add_schema_tool(
        "book_hot_tub_hire",
        "Book a hot tub hire with delivery and collection. Ends the task.",
        _HIRE_SCHEMA,
        _book,
        terminal=True,
        prerequisites=["check_hot_tub_availability"],
    )

    @wf.tool
    def cancel_hot_tub_hire(hire_id: str) -> str:
        """Cancel a hire (deposit kept within 14 days of delivery)."""
        return f"{hire_id} cancelled."

    @wf.tool
    def schedule_tub_drain_and_collect(hire_id: str, date: str) -> str:
        """Bring a collection forward: the tub is drained and taken away that day."""
        return f"{hire_id} to be drained and collected on {date}."

    return wf


def _check_hot_tub(tool: str, args: dict[str, Any]) -> bool:
    delivery = args.get("delivery")
    temp = args.get("water_temperature_c")
    return (
        tool == "book_hot_tub_hire"
        and _day(args.get("tub_id")) == "HT-INF6"
        and isinstance(delivery, dict)
        and _day(delivery.get("date")) == _DELIVERY
        and _clock(delivery.get("ready_by")) == "17:30"
        and alnum(delivery.get("postcode")) == "LD71AB"
        and _day(args.get("collection_date")) == _COLLECTION
        and not isinstance(temp, bool)
        and isinstance(temp, int | float)
        and temp == 38
        and args.get("gazebo") is False
        and args.get("extra_chemical_packs") == 2
    )


_HOT_TUB_REF = {
    "tub_id": "HT-INF6",
    "delivery": {"date": _DELIVERY, "ready_by": "17:30", "postcode": "LD7 1AB"},
    "collection_date": _COLLECTION,
    "water_temperature_c": 38,
    "gazebo": False,
    "extra_chemical_packs": 2,
}

HOT_TUB_HIRE = Scenario(
    name="hot_tub_bank_holiday_hire",
    description="Hot tub hire: HT-INF6 ('the bigger inflatable', not the 7-seat hard shell "
    "nor the 4-seat), delivered 2026-08-28 ready by 17:30 ('half past five', not the 12:00 "
    "window end), LD7 1AB, collected 2026-09-01 ('the Tuesday after'), 38 C (not the 37 "
    "default), gazebo false, 2 extra chemical packs.",
    tags=(HELDOUT12_TAG, "user_value"),
    user_message=(
        "Hi, Rhian Cole here. We'd like a hot tub for the bank holiday weekend: delivered "
        "on Friday the 28th and picked up again on the Tuesday after. The bigger of your "
        "inflatable ones, please, there'll be six of us. We'll be home from work at half "
        "past five and would love it hot by then, thirty-eight degrees if you can. No need "
        "for the gazebo, we've a covered patio. Could you add a couple of extra chemical "
        "packs? The address is 4 Mill Lane, Knighton, LD7 1AB."
    ),
    build=_hot_tub_hire,
    validate=_check_hot_tub,
    ideal_iterations=2,
    reference=(
        RefCall(
            "check_hot_tub_availability",
            {"delivery_date": _DELIVERY, "collection_date": _COLLECTION},
        ),
        RefCall("book_hot_tub_hire", _HOT_TUB_REF),
    ),
    forbidden_tools=("cancel_hot_tub_hire", "schedule_tub_drain_and_collect"),
)

# ── llama trek: Sunday the 20th, the shorter walk at 10:15, 3 adults + 2 children, 2 llamas ──

_TREK_DAY = "2026-09-20"
# route -> (distance, duration, minimum age, start times)
_ROUTES = {
    "meadow_loop": ("4 km", "1 h 30 min", 5, ("09:30", "10:15", "13:45")),
    "ridge_trail": ("9 km", "3 h 30 min", 12, ("10:00",)),
}


def _llama_treks() -> Workflow:
    wf = Workflow(
        "llama_trek_family_booking",
        "Book guided llama treks.",
        system_prompt="You are the bookings assistant of Cwm Ffrwd Llama Treks. Guests walk "
        "with a guide, leading our llamas on a halter; a llama may be led by one walker or "
        "shared. Check the day's treks, then book. Times are 24-hour HH:MM. Today is "
        "Wednesday 2026-09-09.",
    )

    @wf.tool(required=True, read_only=True)
    def list_llama_treks(date: str) -> str:
        """The treks on a date (YYYY-MM-DD): routes, start times, places and prices."""
        if date.strip() != _TREK_DAY:
            return f"{date}: no treks with places left."
        routes = "\n".join(
            f"- {route}: {dist}, {dur}, minimum age {age}, starts {', '.join(starts)}"
            for route, (dist, dur, age, starts) in _ROUTES.items()
        )
        return (
            f"Sun {_TREK_DAY}:\n{routes}\n"
            "Adults 35.00 GBP, children (5-15) 20.00 GBP. Each llama 15.00 GBP extra; we "
            "suggest 1 llama per 2 walkers, at most 6 per group. Picnic hamper 12.00 GBP "
            "per person. Meet 15 minutes before the start at the farm gate."
        )

    @wf.tool(terminal=True, prerequisites=["list_llama_treks"])
    def book_llama_trek(
        date: str,
        route: str,
        start_time: str,
        adults: int,
        children: int,
        llamas: int,
        picnic_hamper: bool,
        lead_name: str,
    ) -> str:
        """Book a trek. route: meadow_loop or ridge_trail; start_time HH:MM; llamas: how
        many llamas the group leads (1-6). Ends the task."""
        if date.strip() != _TREK_DAY:
            raise ToolResolutionError(f"409 no_trek: no places on {date!r}")
        if route.strip() not in _ROUTES:
            raise ToolResolutionError(f"404 route_not_found: {route!r} (meadow_loop, ridge_trail)")
        starts = _ROUTES[route.strip()][3]
        if _clock(start_time) not in starts:
            raise ToolResolutionError(
                f"422 no_such_start: {route.strip()} starts at {', '.join(starts)}"
            )
        if not 1 <= llamas <= 6:
            raise ToolResolutionError(f"422 llamas_out_of_range: {llamas} (1-6)")
        return f"Trek LT-0920-{_clock(start_time).replace(':', '')} booked for {lead_name}."

    @wf.tool
    def cancel_llama_trek(booking_id: str) -> str:
        """Cancel a trek booking (full refund up to 72 hours before)."""
        return f"{booking_id} cancelled."

    @wf.tool
    def buy_llama_gift_voucher(amount: float, recipient: str) -> str:
        """Sell a gift voucher for a trek, posted to the recipient."""
        return f"Voucher for {amount} GBP to {recipient}."

    return wf


def _check_llama(tool: str, args: dict[str, Any]) -> bool:
    return (
        tool == "book_llama_trek"
        and _day(args.get("date")) == _TREK_DAY
        and _day(args.get("route")).lower() == "meadow_loop"
        and _clock(args.get("start_time")) == "10:15"
        and args.get("adults") == 3
        and args.get("children") == 2
        and args.get("llamas") == 2
        and args.get("picnic_hamper") is False
        and mentions(args.get("lead_name"), "malhotra", "dev")
    )


_LLAMA_REF = {
    "date": _TREK_DAY,
    "route": "meadow_loop",
    "start_time": "10:15",
    "adults": 3,
    "children": 2,
    "llamas": 2,
    "picnic_hamper": False,
    "lead_name": "Dev Malhotra",
}

LLAMA_TREK = Scenario(
    name="llama_trek_family_booking",
    description="Llama trek: 2026-09-20 ('Sunday the 20th' from Wed 09-09), meadow_loop "
    "('the shorter walk'), 10:15 ('quarter past ten', not 09:30 or 10:00), 3 adults and 2 "
    "children ('three grown-ups and the two kids'), 2 llamas ('one each for the children', "
    "not the suggested ratio), picnic_hamper false, lead Dev Malhotra.",
    tags=(HELDOUT12_TAG, "user_value"),
    user_message=(
        "Hello, Dev Malhotra here. We'd love to come llama trekking on Sunday the 20th: "
        "three grown-ups and our two kids, who are seven and ten, so the shorter walk "
        "please. The quarter past ten start would suit us best. We only want a couple of "
        "llamas, one for each of the children to lead; the adults are happy just walking. "
        "We'll bring our own sandwiches, so no need for the picnic hampers."
    ),
    build=_llama_treks,
    validate=_check_llama,
    ideal_iterations=2,
    reference=(
        RefCall("list_llama_treks", {"date": _TREK_DAY}),
        RefCall("book_llama_trek", _LLAMA_REF),
    ),
    forbidden_tools=("cancel_llama_trek", "buy_llama_gift_voucher"),
)


SCENARIOS: tuple[Scenario, ...] = (
    CLOCK_REPAIR,
    ESCAPE_ROOM,
    HOT_TUB_HIRE,
    LLAMA_TREK,
    *heldout12_replies.SCENARIOS,
    *heldout12_listings.SCENARIOS,
)
