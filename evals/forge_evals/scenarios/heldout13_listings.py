"""Held out, thirteenth group (first half, list_match): a wood turning
school's evening classes and a puppet theatre's half-term workshops;
`heldout13` includes these. Each is tagged `heldout13` plus `list_match`.
"""

from __future__ import annotations

from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, mentions
from forge_evals.scenarios._domain_schema import HELDOUT13_TAG, exact, exact_ids

# ── wood turning: March's bowl classes under 45 GBP with a lathe free, own gouges ──

_STUDENT = "WTS-0388"
# class id, weekday, date, hours, class, tutor, price (GBP), lathes left
_CLASSES: list[tuple[str, str, str, str, str, str, str, str]] = [
    (
        "WT-3101",
        "Sat",
        "2026-02-28",
        "10:00-16:00",
        "Bowl turning day",
        "Gareth Lloyd",
        "82.00",
        "3 left",
    ),
    (
        "WT-3105",
        "Tue",
        "2026-03-03",
        "18:30-21:30",
        "Bowl turning: first bowls",
        "Gareth Lloyd",
        "38.00",
        "2 left",
    ),
    (
        "WT-3107",
        "Thu",
        "2026-03-05",
        "18:30-21:30",
        "Spindle turning: candlesticks",
        "Nia Probert",
        "35.00",
        "4 left",
    ),
    (
        "WT-3110",
        "Sat",
        "2026-03-07",
        "10:00-16:00",
        "Bowl turning day",
        "Gareth Lloyd",
        "85.00",
        "3 left",
    ),
    (
        "WT-3112",
        "Tue",
        "2026-03-10",
        "18:30-21:30",
        "Bowl turning: first bowls",
        "Gareth Lloyd",
        "38.00",
        "FULL",
    ),
    (
        "WT-3114",
        "Thu",
        "2026-03-12",
        "18:30-21:00",
        "Pen turning",
        "Nia Probert",
        "29.00",
        "5 left",
    ),
    (
        "WT-3117",
        "Tue",
        "2026-03-17",
        "18:30-21:30",
        "Bowl turning: natural-edge bowls",
        "Gareth Lloyd",
        "44.00",
        "1 left",
    ),
    (
        "WT-3119",
        "Wed",
        "2026-03-18",
        "18:00-21:30",
        "Bowl turning: green wood bowls",
        "Nia Probert",
        "48.00",
        "3 left",
    ),
    (
        "WT-3121",
        "Tue",
        "2026-03-24",
        "18:30-21:30",
        "Bowl turning: first bowls",
        "Gareth Lloyd",
        "38.00",
        "4 left",
    ),
    (
        "WT-3124",
        "Thu",
        "2026-03-26",
        "18:30-21:30",
        "Lidded boxes",
        "Nia Probert",
        "42.00",
        "2 left",
    ),
    (
        "WT-3130",
        "Wed",
        "2026-03-25",
        "18:30-21:00",
        "Bowl turning: finishing and colouring",
        "Nia Probert",
        "36.00",
        "3 left",
    ),
    (
        "WT-3126",
        "Tue",
        "2026-03-31",
        "18:30-21:30",
        "Bowl turning: platters and shallow bowls",
        "Gareth Lloyd",
        "45.00",
        "2 left",
    ),
    (
        "WT-3128",
        "Tue",
        "2026-04-07",
        "18:30-21:30",
        "Bowl turning: first bowls",
        "Gareth Lloyd",
        "38.00",
        "6 left",
    ),
]
_BOOKED = ["WT-3105", "WT-3117", "WT-3121", "WT-3130"]

_TURNING_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "student_id": {"type": "string", "pattern": "^WTS-[0-9]{4}$"},
        "class_ids": {
            "type": "array",
            "minItems": 1,
            "uniqueItems": True,
            "items": {"type": "string", "pattern": "^WT-[0-9]{4}$"},
        },
        "equipment": {
            "type": "object",
            "properties": {
                "gouges": {
                    "type": "string",
                    "enum": ["hire_set", "own_set"],
                    "description": "hire_set: the school's gouges, 5.00 GBP a class.",
                },
            },
            "required": ["gouges"],
        },
    },
    "required": ["student_id", "class_ids", "equipment"],
}


def _wood_turning() -> Workflow:
    wf = Workflow(
        "wood_turning_bowl_class_bookings",
        "Book students onto a wood turning school's classes.",
        system_prompt="You are the bookings assistant of Teme Valley Turning School. Each "
        "class has a fixed number of lathes; a student books one lathe per class. Find the "
        "student, read the class list, then book. Today is Wednesday 2026-02-25.",
    )

    @wf.tool(required=True, read_only=True)
    def find_turning_student(email: str) -> str:
        """A student by email, with their id (WTS-....)."""
        if not mentions(email, "owen.pryce@lathepost"):
            raise ToolResolutionError(f"404 no student with email {email!r}")
        return (
            f"{_STUDENT}: Owen Pryce, student since 2025-10. Completed: Introduction to the "
            "lathe (2025-10-14), Spindle basics (2025-11-11). Lathe safety sign-off: yes."
        )

    @wf.tool(required=True, read_only=True)
    def list_wood_turning_classes() -> str:
        """Published classes: ids (WT-....), date, hours, class, tutor, price, lathes left."""
        return "Classes (published to 2026-04-30):\n" + "\n".join(
            f"- {cid}: {day} {date} {hours}, {title}, with {tutor}, {price} GBP, {left}"
            for cid, day, date, hours, title, tutor, price, left in _CLASSES
        )

    def _book(args: dict[str, Any]) -> str:
        if str(args.get("student_id", "")).strip() != _STUDENT:
            raise ToolResolutionError(f"404 student_not_found: {args.get('student_id')!r}")
        known = {row[0]: row for row in _CLASSES}
        ids = [str(c).strip() for c in args.get("class_ids") or []]
        for cid in ids:
            if cid not in known:
                raise ToolResolutionError(f"404 class_not_found: {cid!r} (WT- id)")
            if known[cid][7] == "FULL":
                raise ToolResolutionError(f"409 class_full: {cid} has no lathe free")
        return f"{_STUDENT} booked onto {len(ids)} class(es)."

    wf.add_schema_tool(
        "book_wood_turning_classes",
        "Book a student onto classes, one lathe each. Ends the task.",
        _TURNING_SCHEMA,
        _book,
        terminal=True,
        prerequisites=["find_turning_student", "list_wood_turning_classes"],
    )

    @wf.tool
    def cancel_turning_class_place(class_id: str, student_id: str) -> str:
        """Take a student off a class they are booked onto."""
        return f"{student_id} removed from {class_id}."

    @wf.tool
    def order_turning_blanks(student_id: str, species: str, quantity: int) -> str:
        """Order bowl blanks for a student, charged to their account."""
        return f"{quantity} {species} blank(s) ordered."

    return wf


def _check_turning(tool: str, args: dict[str, Any]) -> bool:
    equipment = args.get("equipment")
    return (
        tool == "book_wood_turning_classes"
        and exact(args.get("student_id"), _STUDENT)
        and exact_ids(args.get("class_ids"), _BOOKED)
        and isinstance(equipment, dict)
        and equipment.get("gouges") == "own_set"
    )


WOOD_TURNING = Scenario(
    name="wood_turning_bowl_class_bookings",
    description="Wood turning: book WTS-0388 onto exactly WT-3105, WT-3117, WT-3121 and "
    "WT-3130 (March bowl classes under 45 GBP with a lathe free); not the full WT-3112, the "
    "45.00 WT-3126, the 48.00 or day classes, spindle, pen or box classes, February's nor "
    "April's; gouges own_set.",
    tags=(HELDOUT13_TAG, "list_match"),
    user_message=(
        "Hi, Owen Pryce here (owen.pryce@lathepost.example). I've caught the bowl bug! "
        "Could you book me onto every bowl turning class in March that's under forty-five "
        "pounds and still has a lathe free? I've bought my own gouges now, so I won't need "
        "to hire a set."
    ),
    build=_wood_turning,
    validate=_check_turning,
    ideal_iterations=3,
    reference=(
        RefCall("find_turning_student", {"email": "owen.pryce@lathepost.example"}),
        RefCall("list_wood_turning_classes", {}),
        RefCall(
            "book_wood_turning_classes",
            {
                "student_id": _STUDENT,
                "class_ids": list(_BOOKED),
                "equipment": {"gouges": "own_set"},
            },
        ),
    ),
    forbidden_tools=("cancel_turning_class_place", "order_turning_blanks"),
)

# ── puppet theatre: half-term workshops for six-year-olds with room for 9, no marionettes ──

_GROUP = "PTG-0419"
# workshop id, weekday, date, workshop, ages, places left
_WORKSHOPS: list[tuple[str, str, str, str, str, int]] = [
    ("PW-2211", "Wed", "2026-02-11", "Shadow puppets", "5-11", 14),
    ("PW-2216", "Mon", "2026-02-16", "Sock puppets and voices", "4-8", 10),
    ("PW-2217", "Mon", "2026-02-16", "Marionette making", "6-12", 12),
    ("PW-2218", "Tue", "2026-02-17", "Shadow puppet theatre", "5-11", 9),
    ("PW-2219", "Tue", "2026-02-17", "Rod puppets", "7-12", 15),
    ("PW-2221", "Wed", "2026-02-18", "Glove puppet show in a day", "5-10", 6),
    ("PW-2222", "Thu", "2026-02-19", "Table-top puppets", "6-11", 12),
    ("PW-2224", "Thu", "2026-02-19", "Giant carnival puppets", "8-14", 20),
    ("PW-2225", "Fri", "2026-02-20", "String puppets for beginners (marionettes)", "5-9", 10),
    ("PW-2226", "Fri", "2026-02-20", "Paper puppets and pop-ups", "5-8", 11),
    ("PW-2230", "Mon", "2026-02-23", "Sock puppets and voices", "4-8", 10),
]
_RESERVED = ["PW-2216", "PW-2218", "PW-2222", "PW-2226"]


def _puppet_theatre() -> Workflow:
    wf = Workflow(
        "puppet_theatre_half_term_workshops",
        "Reserve places for groups on a puppet theatre's children's workshops.",
        system_prompt="You are the learning team assistant of the Borderlands Puppet "
        "Theatre, Hay-on-Wye. Group accounts (schools, clubs, home educators) may reserve "
        "children's places on workshops; accompanying adults come free. Find the group's "
        "account, read the workshop list, then reserve. Today is Wednesday 2026-02-04.",
    )

    @wf.tool(required=True, read_only=True)
    def find_puppet_group_account(group_name: str) -> str:
        """A group account by name, with its id (PTG-....)."""
        if not mentions(group_name, "wyeside"):
            raise ToolResolutionError(f"404 no group account named {group_name!r}")
        return (
            f"{_GROUP}: Wyeside Home Educators, contact Rosie Lark. Usually 8-12 children "
            "aged 5-9. Invoiced monthly."
        )

    @wf.tool(required=True, read_only=True)
    def list_puppet_workshops() -> str:
        """Children's workshops: ids (PW-....), date, workshop, ages, places left."""
        return (
            "Workshops, all 10:00-12:30 (half term, Powys schools: Mon 2026-02-16 to Fri "
            "2026-02-20), 9.50 GBP per child:\n"
            + "\n".join(
                f"- {wid}: {day} {date}, {title}, ages {ages}, {left} children's places left"
                for wid, day, date, title, ages, left in _WORKSHOPS
            )
        )

    @wf.tool(terminal=True, prerequisites=["find_puppet_group_account", "list_puppet_workshops"])
    def reserve_puppet_workshop_places(
        group_id: str, workshop_ids: list[str], children: int, adults: int
    ) -> str:
        """Reserve children's places (and free adult places) for a group on workshops
        (PW- ids). Ends the task."""
        if group_id.strip() != _GROUP:
            raise ToolResolutionError(f"404 group_not_found: {group_id!r} (PTG- id)")
        known = {row[0]: row for row in _WORKSHOPS}
        for wid in workshop_ids:
            if wid.strip() not in known:
                raise ToolResolutionError(f"404 workshop_not_found: {wid!r} (PW- id)")
            left = known[wid.strip()][5]
            if children > left:
                raise ToolResolutionError(
                    f"409 not_enough_places: {wid.strip()} has {left} places left"
                )
        return f"{_GROUP}: {children} children reserved on {len(workshop_ids)} workshop(s)."

    @wf.tool
    def release_puppet_workshop_places(group_id: str, workshop_id: str) -> str:
        """Release a group's reserved places on a workshop."""
        return f"Places on {workshop_id} released."

    @wf.tool
    def book_puppet_show_tickets(group_id: str, show: str, seats: int) -> str:
        """Book seats at an evening puppet show on a group's account, invoiced."""
        return f"{seats} seat(s) for {show} booked."

    return wf


def _check_puppets(tool: str, args: dict[str, Any]) -> bool:
    children, adults = args.get("children"), args.get("adults")
    return (
        tool == "reserve_puppet_workshop_places"
        and exact(args.get("group_id"), _GROUP)
        and exact_ids(args.get("workshop_ids"), _RESERVED)
        and not isinstance(children, bool)
        and children == 9
        and not isinstance(adults, bool)
        and adults == 3
    )


PUPPET_THEATRE = Scenario(
    name="puppet_theatre_half_term_workshops",
    description="Puppet theatre: reserve 9 children and 3 adults for PTG-0419 on exactly "
    "PW-2216, PW-2218, PW-2222 and PW-2226 (half-term workshops that take six-year-olds "
    "with room for 9, no marionettes); not PW-2217/PW-2225 (strings), PW-2219 (7+), "
    "PW-2224 (8+), PW-2221 (6 places), nor PW-2211/PW-2230 outside half term.",
    tags=(HELDOUT13_TAG, "list_match"),
    user_message=(
        "Hello, Rosie Lark from Wyeside Home Educators. Could you reserve places for our "
        "nine children on every workshop in half-term week that takes six-year-olds? Three "
        "of us parents will come along too. Nothing with strings though, please, the "
        "marionettes are far too fiddly for our lot."
    ),
    build=_puppet_theatre,
    validate=_check_puppets,
    ideal_iterations=3,
    reference=(
        RefCall("find_puppet_group_account", {"group_name": "Wyeside Home Educators"}),
        RefCall("list_puppet_workshops", {}),
        RefCall(
            "reserve_puppet_workshop_places",
            {"group_id": _GROUP, "workshop_ids": list(_RESERVED), "children": 9, "adults": 3},
        ),
    ),
    forbidden_tools=("release_puppet_workshop_places", "book_puppet_show_tickets"),
)


SCENARIOS: tuple[Scenario, ...] = (WOOD_TURNING, PUPPET_THEATRE)
