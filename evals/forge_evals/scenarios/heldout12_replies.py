"""Held out, twelfth group (first half, report_agrees): a planetarium's
school visits desk and a blacksmith's forging course desk, whose replies
must state what the record shows; `heldout12` includes these. Each is tagged
`heldout12` plus `report_agrees`.
"""

from __future__ import annotations

from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, has_number, mentions
from forge_evals.scenarios._domain_schema import HELDOUT12_TAG, exact

# ── planetarium: status, show start (not arrival), free adults (not all six), balance ──

_VISIT, _LAST_YEAR, _OTHER_CLASS = "PGV-3318", "PGV-2741", "PGV-3342"
_SHOW_DAY = "2026-03-19"

_VISIT_REPLY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "booking_ref": {"type": "string", "pattern": "^PGV-[0-9]{4}$"},
        "status": {"type": "string", "enum": ["CONFIRMED", "PROVISIONAL", "CANCELLED"]},
        "show": {
            "type": "object",
            "properties": {
                "date": {"type": "string", "format": "date"},
                "start_time": {
                    "type": "string",
                    "pattern": "^([01][0-9]|2[0-3]):[0-5][0-9]$",
                    "description": "When the dome show begins (24-hour HH:MM).",
                },
            },
            "required": ["date", "start_time"],
        },
        "free_adult_places": {"type": "integer", "minimum": 0},
        "balance_due": {
            "type": "object",
            "properties": {
                "amount": {"type": "number", "minimum": 0},
                "currency": {"type": "string", "enum": ["GBP"]},
            },
            "required": ["amount", "currency"],
        },
        "message": {"type": "string", "maxLength": 1500},
    },
    "required": ["booking_ref", "status", "show", "free_adult_places", "balance_due"],
}


def _planetarium() -> Workflow:
    wf = Workflow(
        "planetarium_school_visit_reply",
        "Answer schools about their planetarium group visits.",
        system_prompt="You are the schools desk assistant of the Wrekin Dome Planetarium. "
        "Look the school's visit up and answer from what the booking shows; book and change "
        "nothing unless the school asks. Times are 24-hour HH:MM. Today is Wednesday "
        "2026-03-04.",
    )

    @wf.tool(required=True, read_only=True)
    def find_school_visits(school_name: str) -> str:
        """Group visits booked by a school, with booking refs (PGV-....)."""
        if not mentions(school_name, "brookfield"):
            raise ToolResolutionError(f"404 no school named {school_name!r}")
        return (
            "School SCH-0861, Brookfield Primary, Wellington:\n"
            f"- {_LAST_YEAR}: Year 6, Thu 2025-03-20, 29 pupils, COMPLETED\n"
            f"- {_VISIT}: Year 5, Thu {_SHOW_DAY}, 32 pupils, CONFIRMED\n"
            f"- {_OTHER_CLASS}: Year 3, Tue 2026-06-09, 27 pupils, PROVISIONAL (no deposit)"
        )

    @wf.tool(required=True, read_only=True, prerequisites=["find_school_visits"])
    def get_group_visit(booking_ref: str) -> str:
        """A visit's timetable, group size, adult places and payments."""
        ref = booking_ref.strip()
        if ref == _LAST_YEAR:
            return f"{ref}: COMPLETED 2025-03-20; 29 pupils, paid in full 188.50 GBP."
        if ref == _OTHER_CLASS:
            return f"{ref}: PROVISIONAL, Year 3, Tue 2026-06-09 13:15; deposit not yet paid."
        if ref != _VISIT:
            raise ToolResolutionError(f"404 visit_not_found: {booking_ref!r} (PGV- ref)")
        return (
            f"{ref}: Brookfield Primary, Year 5, Thu {_SHOW_DAY}. Status CONFIRMED (deposit "
            "received 2026-02-20).\n"
            "Timetable: arrive 10:00 (coats, lunch boxes, toilets); dome show 'Our Place in "
            "Space' starts 10:30 (40 min); rocket workshop 11:20-12:10; lunch room to 12:45.\n"
            "Group: 32 pupils, 6 adults. One adult free per 8 pupils (4 free places); "
            "further adults 6.50 GBP each.\n"
            "Pupils 32 x 7.00 = 224.00 GBP; 2 adults x 6.50 = 13.00 GBP; total 237.00 GBP. "
            "Deposit 60.00 GBP paid; balance 177.00 GBP due by 2026-03-12.\n"
            "Dome capacity 45."
        )

    def _reply(args: dict[str, Any]) -> str:
        ref = str(args.get("booking_ref", "")).strip()
        if ref not in (_VISIT, _LAST_YEAR, _OTHER_CLASS):
            raise ToolResolutionError(f"404 visit_not_found: {ref!r}")
        return f"Reply sent to SCH-0861 about {ref}."

    wf.add_schema_tool(
        "reply_school_visit_desk",
        "Email the school what their visit booking shows. Ends the task.",
        _VISIT_REPLY_SCHEMA,
        _reply,
        terminal=True,
        prerequisites=["get_group_visit"],
    )

    @wf.tool
    def add_visit_adults(booking_ref: str, adults: int) -> str:
        """Add accompanying adults to a visit (charged beyond the free places)."""
        return f"{adults} adult(s) added to {booking_ref}."

    @wf.tool
    def cancel_school_visit(booking_ref: str, reason: str) -> str:
        """Cancel a school's visit (the deposit is kept within 28 days)."""
        return f"{booking_ref} cancelled."

    return wf


def _check_planetarium(tool: str, args: dict[str, Any]) -> bool:
    show, balance = args.get("show"), args.get("balance_due")
    free = args.get("free_adult_places")
    return (
        tool == "reply_school_visit_desk"
        and exact(args.get("booking_ref"), _VISIT)
        and str(args.get("status", "")).strip().upper() == "CONFIRMED"
        and isinstance(show, dict)
        and str(show.get("date", "")).strip() == _SHOW_DAY
        and str(show.get("start_time", "")).strip() == "10:30"
        and not isinstance(free, bool)
        and free == 4
        and isinstance(balance, dict)
        and has_number(balance.get("amount"), 177.00)
        and str(balance.get("currency", "")).strip().upper() == "GBP"
    )


PLANETARIUM = Scenario(
    name="planetarium_school_visit_reply",
    description="Planetarium: reply on PGV-3318 (the Year 5 visit, not last year's PGV-2741 "
    "nor the provisional PGV-3342), CONFIRMED, show 2026-03-19 at 10:30 (not the 10:00 "
    "arrival nor the 11:20 workshop), 4 free adult places (not the 6 adults coming), "
    "balance 177.00 GBP (not the 237.00 total, 224.00 pupils or 60.00 deposit).",
    tags=(HELDOUT12_TAG, "report_agrees"),
    user_message=(
        "Hello, Grace Adeyemi from Brookfield Primary. I'm just checking on our Year 5 trip "
        "to the planetarium: is it definitely confirmed, what time does the show itself "
        "start, how many of our six adults come free, and what do we still owe? Please "
        "don't change the booking, I only need the details for the letter home."
    ),
    build=_planetarium,
    validate=_check_planetarium,
    ideal_iterations=3,
    reference=(
        RefCall("find_school_visits", {"school_name": "Brookfield Primary"}),
        RefCall("get_group_visit", {"booking_ref": _VISIT}),
        RefCall(
            "reply_school_visit_desk",
            {
                "booking_ref": _VISIT,
                "status": "CONFIRMED",
                "show": {"date": _SHOW_DAY, "start_time": "10:30"},
                "free_adult_places": 4,
                "balance_due": {"amount": 177.00, "currency": "GBP"},
                "message": "Your Year 5 visit on Thursday 19 March is confirmed. Please "
                "arrive at 10:00; the show starts at 10:30. Four of your six adults come "
                "free, and the balance of 177.00 GBP is due by 12 March.",
            },
        ),
    ),
    forbidden_tools=("add_visit_adults", "cancel_school_visit"),
)

# ── blacksmith course: first day, arrive-by (not forges lit), balance (not total), boots ──

_COURSE, _PAST_COURSE, _WAITLIST = "BFC-1420", "BFC-1187", "BFC-1436"
_FIRST_DAY = "2026-03-14"


def _blacksmith() -> Workflow:
    wf = Workflow(
        "blacksmith_course_student_reply",
        "Answer students about their blacksmithing course bookings.",
        system_prompt="You are the course desk assistant of Hammerbrook Forge, a working "
        "smithy that runs blacksmithing and bladesmithing courses. Look the booking up and "
        "answer from what it shows; change nothing unless the student asks. Times are "
        "24-hour HH:MM. Today is Tuesday 2026-02-24.",
    )

    @wf.tool(required=True, read_only=True)
    def find_forge_course_bookings(email: str) -> str:
        """Course bookings under an email, with booking refs (BFC-....)."""
        if not mentions(email, "joe.whitfield@anvilpost"):
            raise ToolResolutionError(f"404 no bookings under {email!r}")
        return (
            f"- {_PAST_COURSE}: Intro to Forging (1 day), Sat 2025-09-13, ATTENDED\n"
            f"- {_COURSE}: Knife Making Weekend, Sat-Sun 2026-03-14/15, CONFIRMED\n"
            f"- {_WAITLIST}: Axe Making Day, Sat 2026-04-18, WAITLIST (position 2)"
        )

    @wf.tool(required=True, read_only=True, prerequisites=["find_forge_course_bookings"])
    def get_forge_course_booking(booking_ref: str) -> str:
        """A booking's days, times, payments and what to wear or bring."""
        ref = booking_ref.strip()
        if ref == _PAST_COURSE:
            return f"{ref}: ATTENDED 2025-09-13; paid in full 140.00 GBP."
        if ref == _WAITLIST:
            return f"{ref}: WAITLIST position 2 for Axe Making Day 2026-04-18; nothing paid."
        if ref != _COURSE:
            raise ToolResolutionError(f"404 booking_not_found: {booking_ref!r} (BFC- ref)")
        return (
            f"{ref}: Knife Making Weekend, Sat {_FIRST_DAY} and Sun 2026-03-15. Status "
            "CONFIRMED.\n"
            "Arrive by 08:45 on Saturday for the safety talk; forges lit 09:00; finish 16:30 "
            "both days.\n"
            "Course 320.00 GBP + Damascus billet upgrade 25.00 GBP = 345.00 GBP; deposit "
            "160.00 GBP paid 2026-01-19; balance 185.00 GBP due by 2026-03-07.\n"
            "Wear: leather boots or steel toe caps (required, not provided), cotton clothes, "
            "nothing synthetic. Provided: leather apron, gloves, safety glasses, ear "
            "defenders. Lunch included. 6 students per course."
        )

    @wf.tool(terminal=True, prerequisites=["get_forge_course_booking"])
    def reply_forge_course_student(
        booking_ref: str, status: str, first_day: str, own_boots_needed: bool, message: str
    ) -> str:
        """Message the student. status as the booking shows (e.g. CONFIRMED, WAITLIST);
        first_day YYYY-MM-DD; own_boots_needed: whether they must bring their own boots.
        Ends the task."""
        if booking_ref.strip() not in (_COURSE, _PAST_COURSE, _WAITLIST):
            raise ToolResolutionError(f"404 booking_not_found: {booking_ref!r}")
        return f"Reply sent on {booking_ref.strip()}."

    @wf.tool
    def cancel_forge_course_booking(booking_ref: str) -> str:
        """Cancel a course booking (the deposit is kept within 28 days of the course)."""
        return f"{booking_ref} cancelled."

    @wf.tool
    def take_course_balance_payment(booking_ref: str, amount: float) -> str:
        """Charge the card on file for a booking's balance."""
        return f"{amount} GBP charged on {booking_ref}."

    return wf


def _check_blacksmith(tool: str, args: dict[str, Any]) -> bool:
    message = args.get("message")
    return (
        tool == "reply_forge_course_student"
        and exact(args.get("booking_ref"), _COURSE)
        and str(args.get("status", "")).strip().upper() == "CONFIRMED"
        and str(args.get("first_day", "")).strip() == _FIRST_DAY
        and args.get("own_boots_needed") is True
        and has_number(message, 185)
        and mentions(message, "08:45", "8:45", "quarter to nine")
    )


BLACKSMITH = Scenario(
    name="blacksmith_course_student_reply",
    description="Blacksmith: reply on BFC-1420 (the knife weekend, not the attended "
    "BFC-1187 nor the waitlisted BFC-1436), CONFIRMED, first_day 2026-03-14, "
    "own_boots_needed true, and a message stating arrival by 08:45 (not only the 09:00 "
    "forge lighting) and the 185.00 balance (not the 345.00 total, 160.00 deposit or "
    "320.00 course fee); nothing charged.",
    tags=(HELDOUT12_TAG, "report_agrees"),
    user_message=(
        "Hi, Joe Whitfield here, I booked with joe.whitfield@anvilpost.example. I'm on the "
        "knife-making weekend next month. What time do I need to turn up on the first "
        "morning, how much have I still got to pay, and do I need to bring my own boots "
        "and apron? Just questions for now, please don't take any money yet."
    ),
    build=_blacksmith,
    validate=_check_blacksmith,
    ideal_iterations=3,
    reference=(
        RefCall("find_forge_course_bookings", {"email": "joe.whitfield@anvilpost.example"}),
        RefCall("get_forge_course_booking", {"booking_ref": _COURSE}),
        RefCall(
            "reply_forge_course_student",
            {
                "booking_ref": _COURSE,
                "status": "CONFIRMED",
                "first_day": _FIRST_DAY,
                "own_boots_needed": True,
                "message": "Your Knife Making Weekend starts on Saturday 14 March: please "
                "arrive by 08:45 for the safety talk. The balance is 185.00 GBP, due by 7 "
                "March. Bring leather boots or steel toe caps; we provide the apron, gloves "
                "and safety glasses.",
            },
        ),
    ),
    forbidden_tools=("cancel_forge_course_booking", "take_course_balance_payment"),
)


SCENARIOS: tuple[Scenario, ...] = (PLANETARIUM, BLACKSMITH)
