"""Held out, twelfth group (first half, list_match): a model aircraft club's
flying field sessions and a vineyard's group tours; `heldout12` includes
these. Each is tagged `heldout12` plus `list_match`.
"""

from __future__ import annotations

from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, has_number, mentions
from forge_evals.scenarios._domain_schema import HELDOUT12_TAG, exact, exact_ids

# ── model aircraft club: April's electric-only sessions with room, none of Colin's ──

_PILOT = "MAC-0412"
# session id, weekday, date, hours, kind, run by, places
_SESSIONS: list[tuple[str, str, str, str, str, str, str]] = [
    ("FS-2611", "Sat", "2026-04-11", "10:00-13:00", "electric only", "Colin Marsh", "3 left"),
    (
        "FS-2612",
        "Sat",
        "2026-04-11",
        "13:30-17:00",
        "open (i.c. and electric)",
        "Priya Nair",
        "5 left",
    ),
    ("FS-2615", "Sun", "2026-04-12", "10:00-13:00", "electric only", "Dave Ollerton", "2 left"),
    ("FS-2619", "Wed", "2026-04-15", "18:00-20:30", "electric only", "Priya Nair", "FULL"),
    ("FS-2623", "Sat", "2026-04-18", "10:00-13:00", "electric only", "Priya Nair", "6 left"),
    (
        "FS-2624",
        "Sat",
        "2026-04-18",
        "13:30-17:00",
        "i.c. only (glow and petrol)",
        "Dave Ollerton",
        "4 left",
    ),
    ("FS-2627", "Wed", "2026-04-22", "18:00-20:30", "electric only", "Colin Marsh", "5 left"),
    ("FS-2630", "Sun", "2026-04-26", "10:00-13:00", "electric only", "Dave Ollerton", "1 left"),
    (
        "FS-2631",
        "Sun",
        "2026-04-26",
        "13:30-17:00",
        "open (i.c. and electric)",
        "Colin Marsh",
        "4 left",
    ),
    ("FS-2634", "Thu", "2026-04-30", "18:00-20:30", "electric only", "Priya Nair", "3 left"),
    ("FS-2638", "Sat", "2026-05-02", "10:00-13:00", "electric only", "Dave Ollerton", "6 left"),
    ("FS-2642", "Sun", "2026-05-03", "10:00-13:00", "electric only", "Priya Nair", "5 left"),
]
_BOOKED = ["FS-2615", "FS-2623", "FS-2630", "FS-2634"]

_SESSION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "member_id": {"type": "string", "pattern": "^MAC-[0-9]{4}$"},
        "session_ids": {
            "type": "array",
            "minItems": 1,
            "uniqueItems": True,
            "items": {"type": "string", "pattern": "^FS-[0-9]{4}$"},
        },
        "aircraft": {
            "type": "object",
            "properties": {
                "power": {"type": "string", "enum": ["electric", "ic_glow", "ic_petrol"]},
                "weight_kg": {"type": "number", "exclusiveMinimum": 0, "maximum": 7.5},
            },
            "required": ["power", "weight_kg"],
        },
    },
    "required": ["member_id", "session_ids", "aircraft"],
}


def _model_aircraft_club() -> Workflow:
    wf = Workflow(
        "model_aircraft_field_sessions",
        "Book members onto a model aircraft club's flying field sessions.",
        system_prompt="You are the field bookings assistant of Clee Hill Model Flying Club. "
        "Members book places on supervised flying sessions at the club field; each session "
        "is for electric aircraft only, i.c. (engine) aircraft only, or open to both. Find "
        "the member, read the session list, then book. Today is Wednesday 2026-04-08.",
    )

    @wf.tool(required=True, read_only=True)
    def find_flying_club_member(email: str) -> str:
        """A member by email, with their id (MAC-....) and flying certificates."""
        if not mentions(email, "ben.carver@skylark"):
            raise ToolResolutionError(f"404 no member with email {email!r}")
        return (
            f"{_PILOT}: Ben Carver, full member, membership ACTIVE to 2026-12-31. BMFA "
            "number 274019. A certificate (fixed wing) passed 2026-03-28."
        )

    @wf.tool(required=True, read_only=True)
    def list_flying_field_sessions() -> str:
        """Published field sessions: ids (FS-....), date, hours, aircraft allowed, the
        supervising instructor and places left."""
        return "Field sessions (published to 2026-05-31):\n" + "\n".join(
            f"- {sid}: {day} {date} {hours}, {kind}, run by {who}, {places}"
            for sid, day, date, hours, kind, who, places in _SESSIONS
        )

    def _book(args: dict[str, Any]) -> str:
        if str(args.get("member_id", "")).strip() != _PILOT:
            raise ToolResolutionError(f"404 member_not_found: {args.get('member_id')!r}")
        known = {row[0]: row for row in _SESSIONS}
        aircraft = args.get("aircraft") if isinstance(args.get("aircraft"), dict) else {}
        ids = [str(s).strip() for s in args.get("session_ids") or []]
        for sid in ids:
            if sid not in known:
                raise ToolResolutionError(f"404 session_not_found: {sid!r} (FS- id)")
            if known[sid][6] == "FULL":
                raise ToolResolutionError(f"409 session_full: {sid}")
            if known[sid][4].startswith("i.c. only") and (aircraft or {}).get("power") == (
                "electric"
            ):
                raise ToolResolutionError(f"422 power_mismatch: {sid} is for i.c. only")
        return f"{_PILOT} booked onto {len(ids)} session(s)."

    wf.add_schema_tool(
        "book_flying_field_sessions",
        "Book a member and their aircraft onto field sessions. Ends the task.",
        _SESSION_SCHEMA,
        _book,
        terminal=True,
        prerequisites=["find_flying_club_member", "list_flying_field_sessions"],
    )

    @wf.tool
    def cancel_field_session_place(session_id: str, member_id: str) -> str:
        """Take a member off a session they are booked onto."""
        return f"{member_id} removed from {session_id}."

    @wf.tool
    def ground_member_aircraft(member_id: str, reason: str) -> str:
        """Ground a member's aircraft after a safety check failure; their places are freed."""
        return f"{member_id}'s aircraft grounded."

    return wf


def _check_aircraft(tool: str, args: dict[str, Any]) -> bool:
    aircraft = args.get("aircraft")
    return (
        tool == "book_flying_field_sessions"
        and exact(args.get("member_id"), _PILOT)
        and exact_ids(args.get("session_ids"), _BOOKED)
        and isinstance(aircraft, dict)
        and aircraft.get("power") == "electric"
        and has_number(aircraft.get("weight_kg"), 1.4, tol=0.05)
    )


MODEL_AIRCRAFT = Scenario(
    name="model_aircraft_field_sessions",
    description="Model aircraft club: book MAC-0412 onto exactly FS-2615, FS-2623, FS-2630 "
    "and FS-2634 (April's electric-only sessions with places left, none run by Colin); not "
    "Colin's FS-2611/FS-2627, the full FS-2619, the open or i.c. sessions nor May's; "
    "aircraft electric, 1.4 kg.",
    tags=(HELDOUT12_TAG, "list_match"),
    user_message=(
        "Hi, it's Ben Carver (ben.carver@skylark-post.example). Now I've got my A "
        "certificate, could you book me onto every electric-only session left this month "
        "that still has room? Not any that Colin's running though, he's asked me to fly "
        "with the other instructors for a while. I'll be bringing my electric foam trainer, "
        "it weighs 1.4 kilos."
    ),
    build=_model_aircraft_club,
    validate=_check_aircraft,
    ideal_iterations=3,
    reference=(
        RefCall("find_flying_club_member", {"email": "ben.carver@skylark-post.example"}),
        RefCall("list_flying_field_sessions", {}),
        RefCall(
            "book_flying_field_sessions",
            {
                "member_id": _PILOT,
                "session_ids": list(_BOOKED),
                "aircraft": {"power": "electric", "weight_kg": 1.4},
            },
        ),
    ),
    forbidden_tools=("cancel_field_session_place", "ground_member_aircraft"),
)

# ── vineyard: October's cellar tours with tasting under 20 GBP with room for 12, not the 17th ──

_GROUP = "GRP-2207"
# tour id, weekday, date, tour, price per head (GBP), places left
_TOURS: list[tuple[str, str, str, str, str, int]] = [
    ("VT-0926", "Sat", "2026-09-26", "Cellar tour & tasting", "18.00", 20),
    ("VT-1003", "Sat", "2026-10-03", "Cellar tour & tasting", "18.00", 20),
    ("VT-1004", "Sun", "2026-10-04", "Vineyard walk (no tasting)", "12.00", 25),
    ("VT-1010", "Sat", "2026-10-10", "Cellar tour & tasting", "18.00", 8),
    ("VT-1011", "Sun", "2026-10-11", "Sparkling masterclass in the cellars", "32.00", 14),
    ("VT-1014", "Wed", "2026-10-14", "Evening cellar tour & tasting", "19.00", 14),
    ("VT-1017", "Sat", "2026-10-17", "Cellar tour & tasting", "18.00", 30),
    ("VT-1018", "Sun", "2026-10-18", "Cellar tour & tasting", "19.50", 16),
    ("VT-1024", "Sat", "2026-10-24", "Cellar tour & tasting with harvest lunch", "29.00", 18),
    ("VT-1025", "Sun", "2026-10-25", "Cellar tour & tasting", "20.00", 22),
    ("VT-1031", "Sat", "2026-10-31", "Cellar tour & tasting by candlelight", "17.50", 12),
    ("VT-1107", "Sat", "2026-11-07", "Cellar tour & tasting", "18.00", 30),
]
_HELD = ["VT-1003", "VT-1014", "VT-1018", "VT-1031"]


def _vineyard() -> Workflow:
    wf = Workflow(
        "vineyard_group_tour_holds",
        "Hold places on vineyard tours for group accounts.",
        system_prompt="You are the group bookings assistant of Caer Vallis Vineyard, "
        "Monmouthshire. Group accounts may hold places on published tours for a whole "
        "party; a hold needs enough places left on each tour. Find the group's account, "
        "read the tour calendar, then place the holds. Today is Monday 2026-09-14.",
    )

    @wf.tool(required=True, read_only=True)
    def find_tour_group_account(group_name: str) -> str:
        """A group account by name, with its id (GRP-....)."""
        if not mentions(group_name, "severn vale"):
            raise ToolResolutionError(f"404 no group account named {group_name!r}")
        return (
            f"{_GROUP}: Severn Vale Wine Circle, organiser Hilary Bastow. Last visit "
            "2025-10-11, party of 16. Invoiced after each tour, 30-day terms."
        )

    @wf.tool(required=True, read_only=True)
    def list_vineyard_tours() -> str:
        """The tour calendar: tour ids (VT-....), date, tour, price per head, places left."""
        return "Tours (published to 2026-11-30), all start 14:00:\n" + "\n".join(
            f"- {tid}: {day} {date}, {tour}, {price} GBP per head, {left} places left"
            for tid, day, date, tour, price, left in _TOURS
        )

    @wf.tool(terminal=True, prerequisites=["find_tour_group_account", "list_vineyard_tours"])
    def hold_group_tour_places(group_id: str, tour_ids: list[str], party_size: int) -> str:
        """Hold places for a group's party on tours (VT- ids). Ends the task."""
        if group_id.strip() != _GROUP:
            raise ToolResolutionError(f"404 group_not_found: {group_id!r} (GRP- id)")
        known = {row[0]: row for row in _TOURS}
        for tid in tour_ids:
            if tid.strip() not in known:
                raise ToolResolutionError(f"404 tour_not_found: {tid!r} (VT- id)")
            left = known[tid.strip()][5]
            if party_size > left:
                raise ToolResolutionError(
                    f"409 not_enough_places: {tid.strip()} has {left} places left"
                )
        return f"{_GROUP}: {party_size} places held on {len(tour_ids)} tour(s) for 7 days."

    @wf.tool
    def release_group_tour_hold(group_id: str, tour_id: str) -> str:
        """Release a group's hold on a tour."""
        return f"Hold on {tour_id} released."

    @wf.tool
    def order_wine_case(group_id: str, wine: str, cases: int) -> str:
        """Order cases of wine on a group's account, invoiced."""
        return f"{cases} case(s) of {wine} ordered."

    return wf


def _check_vineyard(tool: str, args: dict[str, Any]) -> bool:
    size = args.get("party_size")
    return (
        tool == "hold_group_tour_places"
        and exact(args.get("group_id"), _GROUP)
        and exact_ids(args.get("tour_ids"), _HELD)
        and not isinstance(size, bool)
        and size == 12
    )


VINEYARD = Scenario(
    name="vineyard_group_tour_holds",
    description="Vineyard: hold 12 places for GRP-2207 on exactly VT-1003, VT-1014, VT-1018 "
    "and VT-1031 (October cellar tours with tasting under 20 GBP with 12 places); not the "
    "AGM day VT-1017, VT-1010 (8 left), VT-1025 (20.00), the walk, masterclass or lunch "
    "tours, September's nor November's.",
    tags=(HELDOUT12_TAG, "list_match"),
    user_message=(
        "Hello, Hilary Bastow from the Severn Vale Wine Circle. We're planning our October "
        "outings. Could you hold places for twelve of us on every cellar tour with a "
        "tasting in October that costs under twenty pounds a head? Not the one on the 17th "
        "though, that's our AGM."
    ),
    build=_vineyard,
    validate=_check_vineyard,
    ideal_iterations=3,
    reference=(
        RefCall("find_tour_group_account", {"group_name": "Severn Vale Wine Circle"}),
        RefCall("list_vineyard_tours", {}),
        RefCall(
            "hold_group_tour_places",
            {"group_id": _GROUP, "tour_ids": list(_HELD), "party_size": 12},
        ),
    ),
    forbidden_tools=("release_group_tour_hold", "order_wine_case"),
)


SCENARIOS: tuple[Scenario, ...] = (MODEL_AIRCRAFT, VINEYARD)
