"""Held out, eleventh group (first half): workflows in businesses no earlier
group touches, written from the user's side only (not the engine). This
module: a rowing club's boat bookings and a sailmaker's repair releases
(carry_id), tennis court bookings and a cider press's pressing days
(user_value); heldout11_replies an aquarium maintenance firm and a gin
distillery's tours (report_agrees); heldout11_listings a dog agility trial's
class entries and a tram museum's volunteer rota (list_match). Each is
tagged `heldout11` plus one failure kind.
"""

from __future__ import annotations

from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, mentions
from forge_evals.scenarios import heldout11_listings, heldout11_replies
from forge_evals.scenarios._domain_schema import HELDOUT11_TAG, alnum, exact

_HHMM = "^([01][0-9]|2[0-3]):[0-5][0-9]$"


def _clock(value: Any) -> str:
    """A clock time with a one-digit hour padded ("7:00" -> "07:00"), else as given."""
    text = str(value if value is not None else "").strip()
    return f"0{text}" if len(text) == 4 and text[1] == ":" else text


# ── rowing club: the active membership id (not the closed junior one) and the boat id ──

_MEMBER, _OLD_MEMBER = "RCM-48213", "RCM-31907"
_KESTREL, _KESTREL_II = "BT-1x-07", "BT-1x-12"
_OUTING_DAY = "2026-05-16"
_BOATS = {
    "BT-1x-03": "'Heron', Janousek single, crew weight 60-75 kg, in service",
    _KESTREL: "'Kestrel', Filippi F15 single, crew weight 75-90 kg, in service",
    _KESTREL_II: "'Kestrel II', Hudson single, crew weight 60-75 kg, OUT OF SERVICE since "
    "2026-05-02 (cracked rigger)",
    "BT-2x-05": "'Osprey', Empacher double, crew weight 70-85 kg, in service",
    "BT-4x-02": "'Thames Spirit', Stampfli quad, crew weight 75-90 kg, in service",
}


def _rowing_club() -> Workflow:
    wf = Workflow(
        "rowing_club_boat_outing_booking",
        "Book club boats for members' outings.",
        system_prompt="You are the boat bookings assistant of Thamesreach Rowing Club. "
        "Members book club boats for outings under their membership id; only active "
        "memberships may book. Look the member up, check the fleet, then book. Times are "
        "24-hour HH:MM. Today is Thursday 2026-05-14.",
    )

    @wf.tool(required=True, read_only=True)
    def find_rowing_member(email: str) -> str:
        """Memberships on file under an email, with membership ids (RCM-.....)."""
        if not mentions(email, "p.sandhu@towpath"):
            raise ToolResolutionError(f"404 no membership under {email!r}")
        return (
            f"- {_OLD_MEMBER}: Priya Sandhu, junior section, membership CLOSED 2023-09-30.\n"
            f"- {_MEMBER}: Priya Sandhu, senior sculler, grade S2, membership ACTIVE to "
            "2026-12-31. Outings this season: 11."
        )

    @wf.tool(required=True, read_only=True)
    def list_club_boats() -> str:
        """The club fleet with boat ids (BT-..-..), crew weights and service state."""
        return "Club fleet:\n" + "\n".join(f"- {bid}: {text}" for bid, text in _BOATS.items())

    @wf.tool(terminal=True, prerequisites=["find_rowing_member", "list_club_boats"])
    def book_boat_outing(member_id: str, boat_id: str, date: str, launch_time: str) -> str:
        """Book a club boat for an outing. date YYYY-MM-DD, launch_time HH:MM. Ends the task."""
        mid, bid = member_id.strip(), boat_id.strip()
        if mid == _OLD_MEMBER:
            raise ToolResolutionError(
                f"410 membership_closed: {mid} closed 2023-09-30; book under the member's "
                "active membership id"
            )
        if mid != _MEMBER:
            raise ToolResolutionError(f"404 member_not_found: {member_id!r} (RCM- id)")
        if bid not in _BOATS:
            raise ToolResolutionError(f"404 boat_not_found: {boat_id!r} (BT- id from the fleet)")
        if "OUT OF SERVICE" in _BOATS[bid]:
            raise ToolResolutionError(f"409 boat_out_of_service: {bid} cannot be booked")
        return f"Outing OUT-26-3308 booked: {bid} for {mid} on {date} at {launch_time}."

    @wf.tool
    def report_boat_damage(boat_id: str, description: str) -> str:
        """Report damage to a boat; it is taken out of service until the bosun clears it."""
        return f"{boat_id} reported damaged and taken out of service."

    @wf.tool
    def cancel_boat_outing(outing_id: str) -> str:
        """Cancel a booked outing."""
        return f"{outing_id} cancelled."

    return wf


def _check_rowing(tool: str, args: dict[str, Any]) -> bool:
    return (
        tool == "book_boat_outing"
        and exact(args.get("member_id"), _MEMBER)
        and exact(args.get("boat_id"), _KESTREL)
        and str(args.get("date", "")).strip() == _OUTING_DAY
        and _clock(args.get("launch_time")) == "07:00"
    )


ROWING_CLUB = Scenario(
    name="rowing_club_boat_outing_booking",
    description="Rowing club: book BT-1x-07 ('Kestrel', not the out-of-service 'Kestrel II' "
    "BT-1x-12) under RCM-48213 (the active membership found by email, not the closed "
    "junior RCM-31907) on 2026-05-16 ('this Saturday' from Thu 05-14) at 07:00.",
    tags=(HELDOUT11_TAG, "carry_id"),
    user_message=(
        "Hi, it's Priya Sandhu (p.sandhu@towpath.example). Could I book Kestrel for an "
        "outing this Saturday? I'd like to be on the water at seven in the morning."
    ),
    build=_rowing_club,
    validate=_check_rowing,
    ideal_iterations=3,
    reference=(
        RefCall("find_rowing_member", {"email": "p.sandhu@towpath.example"}),
        RefCall("list_club_boats", {}),
        RefCall(
            "book_boat_outing",
            {
                "member_id": _MEMBER,
                "boat_id": _KESTREL,
                "date": _OUTING_DAY,
                "launch_time": "07:00",
            },
        ),
    ),
    forbidden_tools=("report_boat_damage", "cancel_boat_outing"),
)

# ── sailmaker: the ready mainsail's order id and its current release token, to the berth ──

_MAINSAIL, _SPINNAKER, _GENOA = "SLR-40562", "SLR-40571", "SLR-38815"
_TOKEN, _OLD_TOKEN, _USED_TOKEN = "RLS-7fQ2k9", "RLS-4pX8m1", "RLS-2dW5n7"
_DELIVERY_DAY = "2026-03-13"

_RELEASE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "order_id": {"type": "string", "pattern": "^SLR-[0-9]{5}$"},
        "release_token": {"type": "string", "pattern": "^RLS-[A-Za-z0-9]{6}$"},
        "handover": {
            "type": "object",
            "properties": {
                "method": {"type": "string", "enum": ["collect_from_loft", "marina_delivery"]},
                "date": {"type": "string", "format": "date"},
                "berth": {
                    "type": "string",
                    "pattern": "^[A-Z][0-9]{1,3}$",
                    "description": "Pontoon letter and berth number; marina_delivery only.",
                },
            },
            "required": ["method", "date"],
        },
    },
    "required": ["order_id", "release_token", "handover"],
}


def _sailmaker() -> Workflow:
    wf = Workflow(
        "sailmaker_repair_release",
        "Release repaired sails to their owners.",
        system_prompt="You are the customer desk assistant of Bainbridge & Orr Sailmakers, "
        "Lymington. A repaired sail is released against the order's current release token, "
        "either collected from the loft or delivered to the owner's marina berth (marina "
        "deliveries run on Tuesdays and Fridays). Today is Tuesday 2026-03-10.",
    )

    @wf.tool(required=True, read_only=True)
    def find_sail_orders(phone: str) -> str:
        """Repair orders under a customer's phone number, with order ids (SLR-.....)."""
        if not alnum(phone).endswith("7700900431"):
            raise ToolResolutionError(f"404 no customer with phone {phone!r}")
        return (
            "Customer SC-11872, Tom Ferris, yacht 'Curlew' (Sadler 29), berth C14, "
            "Lymington Yacht Haven:\n"
            f"- {_GENOA}: genoa, UV strip replaced; COLLECTED 2025-10-03\n"
            f"- {_MAINSAIL}: mainsail, leech restitched and two batten pockets renewed; "
            "READY since 2026-03-06\n"
            f"- {_SPINNAKER}: spinnaker, ripstop panel let in; IN WORK, due 2026-03-24"
        )

    @wf.tool(required=True, read_only=True, prerequisites=["find_sail_orders"])
    def get_sail_order(order_id: str) -> str:
        """An order's work, invoice and release token (RLS-......)."""
        oid = order_id.strip()
        if oid == _GENOA:
            return f"{oid}: COLLECTED 2025-10-03 with token {_USED_TOKEN} (used)."
        if oid == _SPINNAKER:
            return f"{oid}: IN WORK, due 2026-03-24. No release token until it is ready."
        if oid != _MAINSAIL:
            raise ToolResolutionError(f"404 order_not_found: {order_id!r} (SLR- id)")
        return (
            f"{oid}: mainsail (Curlew), leech restitched, 2 batten pockets renewed, 1 reef "
            "cringle replaced. READY since 2026-03-06, bagged in the loft, rack 4.\n"
            "Invoice INV-S-60412: 212.40 GBP, PAID 2026-03-06.\n"
            f"Release token {_TOKEN} (issued 2026-03-06; replaces {_OLD_TOKEN}, cancelled "
            "when the invoice was reissued).\n"
            "Marina delivery 15.00 GBP, Tuesdays and Fridays, to the berth on file."
        )

    def _release(args: dict[str, Any]) -> str:
        oid, token = str(args.get("order_id", "")).strip(), str(args.get("release_token", ""))
        if oid in (_GENOA, _SPINNAKER):
            raise ToolResolutionError(f"409 order_not_ready: {oid} has no open release")
        if oid != _MAINSAIL:
            raise ToolResolutionError(f"404 order_not_found: {oid!r} (SLR- id)")
        if token.strip() in (_OLD_TOKEN, _USED_TOKEN):
            raise ToolResolutionError(
                f"409 release_token_cancelled: {token.strip()}; use the order's current token"
            )
        if token.strip() != _TOKEN:
            raise ToolResolutionError(f"403 release_token_mismatch: {token!r} for {oid}")
        handover = args.get("handover") if isinstance(args.get("handover"), dict) else {}
        if (handover or {}).get("method") == "marina_delivery" and str(
            (handover or {}).get("date", "")
        ).strip() not in ("2026-03-10", _DELIVERY_DAY, "2026-03-17", "2026-03-20"):
            raise ToolResolutionError("422 no_delivery_run: marina deliveries are Tue and Fri")
        return f"Release REL-0313-22 booked for {oid}."

    wf.add_schema_tool(
        "arrange_sail_release",
        "Release a repaired sail against its release token, collected or delivered. Ends the task.",
        _RELEASE_SCHEMA,
        _release,
        terminal=True,
        prerequisites=["get_sail_order"],
    )

    @wf.tool
    def cancel_sail_repair(order_id: str, reason: str) -> str:
        """Cancel a repair order (work done so far is charged)."""
        return f"{order_id} cancelled."

    @wf.tool
    def quote_new_sail(boat_model: str, sail_type: str) -> str:
        """Ask the loft for a quote for a new sail."""
        return f"Quote request for a {sail_type} for a {boat_model} sent."

    return wf


def _check_sail(tool: str, args: dict[str, Any]) -> bool:
    handover = args.get("handover")
    return (
        tool == "arrange_sail_release"
        and exact(args.get("order_id"), _MAINSAIL)
        and exact(args.get("release_token"), _TOKEN)
        and isinstance(handover, dict)
        and handover.get("method") == "marina_delivery"
        and str(handover.get("date", "")).strip() == _DELIVERY_DAY
        and alnum(handover.get("berth")) == "C14"
    )


SAILMAKER = Scenario(
    name="sailmaker_repair_release",
    description="Sailmaker: release SLR-40562 (the ready mainsail, not the spinnaker in work "
    "SLR-40571 nor the collected genoa SLR-38815) with token RLS-7fQ2k9 (not the cancelled "
    "RLS-4pX8m1), marina_delivery on 2026-03-13 ('this Friday' from Tue 03-10) to berth C14.",
    tags=(HELDOUT11_TAG, "carry_id"),
    user_message=(
        "Hello, Tom Ferris here, 07700 900431. I had a text to say my mainsail is finished. "
        "Could you have it delivered down to the boat this Friday? She's on her usual berth."
    ),
    build=_sailmaker,
    validate=_check_sail,
    ideal_iterations=3,
    reference=(
        RefCall("find_sail_orders", {"phone": "07700 900431"}),
        RefCall("get_sail_order", {"order_id": _MAINSAIL}),
        RefCall(
            "arrange_sail_release",
            {
                "order_id": _MAINSAIL,
                "release_token": _TOKEN,
                "handover": {"method": "marina_delivery", "date": _DELIVERY_DAY, "berth": "C14"},
            },
        ),
    ),
    forbidden_tools=("cancel_sail_repair",),
)

# ── tennis: this Thursday, half past six for an hour and a half, two members and two guests ──

_MATCH_DAY = "2026-10-15"
_COURT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "membership_id": {"type": "string", "pattern": "^LTC-[0-9]{4}$"},
        "date": {"type": "string", "format": "date"},
        "court": {
            "type": "object",
            "properties": {
                "number": {"type": "integer", "minimum": 1, "maximum": 6},
                "surface": {"type": "string", "enum": ["hard", "clay", "artificial_grass"]},
            },
            "required": ["number", "surface"],
        },
        "start_time": {"type": "string", "pattern": _HHMM},
        "duration_minutes": {"type": "integer", "enum": [60, 90, 120]},
        "players": {
            "type": "object",
            "properties": {
                "members": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": 4,
                    "description": "Club members playing, the booker included.",
                },
                "guests": {"type": "integer", "minimum": 0, "maximum": 3},
            },
            "required": ["members", "guests"],
        },
        "floodlights": {"type": "boolean"},
        "ball_hire": {"type": "boolean", "description": "A tube of club balls (3.50 GBP)."},
    },
    "required": [
        "membership_id",
        "date",
        "court",
        "start_time",
        "duration_minutes",
        "players",
        "floodlights",
        "ball_hire",
    ],
}
# court number -> (surface, floodlit, free from, free until) on the match day
_COURTS = {
    1: ("hard", True, "17:00", "18:00"),
    2: ("hard", True, "18:00", "22:00"),
    3: ("clay", True, "18:30", "21:30"),
    4: ("clay", False, "14:00", "17:30"),
}


def _tennis_club() -> Workflow:
    wf = Workflow(
        "tennis_court_evening_booking",
        "Book the club's tennis courts for members.",
        system_prompt="You are the court bookings assistant of Larkfield Lawn Tennis Club. "
        "Members book courts for themselves and their guests; check what is free, then "
        "book. Times are 24-hour HH:MM. Today is Monday 2026-10-12.",
    )

    @wf.tool(required=True, read_only=True)
    def check_court_availability(date: str) -> str:
        """Free court times on a date (YYYY-MM-DD), with surfaces and prices."""
        if date.strip() != _MATCH_DAY:
            return f"{date}: all courts booked from 17:00 (league matches)."
        courts = "\n".join(
            f"- Court {n} ({surface}, {'floodlit' if lit else 'no floodlights'}): free "
            f"{start}-{end}"
            for n, (surface, lit, start, end) in _COURTS.items()
        )
        return (
            f"Thursday {_MATCH_DAY}:\n{courts}\n"
            "Peak rate 18:00-21:00: 14.00 GBP per court per hour; guests 6.00 GBP each; "
            "floodlights 4.50 GBP per hour. Sunset 18:14."
        )

    def _book(args: dict[str, Any]) -> str:
        court = args.get("court") if isinstance(args.get("court"), dict) else {}
        number = (court or {}).get("number")
        if number not in _COURTS:
            raise ToolResolutionError(f"404 court_not_available: court {number!r} is not free")
        surface, lit, start, end = _COURTS[number]
        if (court or {}).get("surface") != surface:
            raise ToolResolutionError(f"422 surface_mismatch: court {number} is {surface}")
        if args.get("floodlights") and not lit:
            raise ToolResolutionError(f"422 no_floodlights: court {number} has none")
        begin = str(args.get("start_time", "")).strip()
        if not start <= begin < end:
            raise ToolResolutionError(f"409 slot_taken: court {number} is free {start}-{end}")
        return f"Court booking CB-1015-{number}41 made for {args.get('date')} at {begin}."

    wf.add_schema_tool(
        "book_tennis_court",
        "Book a court for a member and guests. Ends the task.",
        _COURT_SCHEMA,
        _book,
        terminal=True,
        prerequisites=["check_court_availability"],
    )

    @wf.tool
    def cancel_court_booking(booking_id: str) -> str:
        """Cancel a court booking (charged in full within 24 hours)."""
        return f"{booking_id} cancelled."

    @wf.tool
    def suspend_club_membership(membership_id: str, reason: str) -> str:
        """Suspend a membership; its bookings are released."""
        return f"{membership_id} suspended."

    return wf


def _check_tennis(tool: str, args: dict[str, Any]) -> bool:
    court, players = args.get("court"), args.get("players")
    return (
        tool == "book_tennis_court"
        and alnum(args.get("membership_id")) == "LTC2291"
        and str(args.get("date", "")).strip() == _MATCH_DAY
        and isinstance(court, dict)
        and court.get("number") == 3
        and court.get("surface") == "clay"
        and _clock(args.get("start_time")) == "18:30"
        and args.get("duration_minutes") == 90
        and isinstance(players, dict)
        and players.get("members") == 2
        and players.get("guests") == 2
        and args.get("floodlights") is True
        and args.get("ball_hire") is False
    )


_TENNIS_REF = {
    "membership_id": "LTC-2291",
    "date": _MATCH_DAY,
    "court": {"number": 3, "surface": "clay"},
    "start_time": "18:30",
    "duration_minutes": 90,
    "players": {"members": 2, "guests": 2},
    "floodlights": True,
    "ball_hire": False,
}

TENNIS_CLUB = Scenario(
    name="tennis_court_evening_booking",
    description="Tennis: LTC-2291 books court 3 (the floodlit clay one, not court 4) on "
    "2026-10-15 ('this Thursday' from Mon 10-12) at 18:30 ('half past six'), 90 minutes "
    "('an hour and a half'), 2 members and 2 guests, floodlights true, ball_hire false.",
    tags=(HELDOUT11_TAG, "user_value"),
    user_message=(
        "Evening! Dan Whitlock, membership LTC-2291. Could you get me a clay court this "
        "Thursday from half past six in the evening, for an hour and a half? We're playing "
        "doubles: me, one other member and a couple of guests. It'll be dark by then so "
        "we'll want the lights. We're bringing our own balls, no need to hire any."
    ),
    build=_tennis_club,
    validate=_check_tennis,
    ideal_iterations=2,
    reference=(
        RefCall("check_court_availability", {"date": _MATCH_DAY}),
        RefCall("book_tennis_court", _TENNIS_REF),
    ),
    forbidden_tools=("cancel_court_booking", "suspend_club_membership"),
)

# ── cider press: Saturday week in the morning, 180 kg, not pasteurised, six 20-litre boxes ──

_PRESS_DAY = "2026-10-10"
# date -> {session: places left}
_PRESS_DAYS = {
    "2026-10-03": {"morning": 0, "afternoon": 2},
    _PRESS_DAY: {"morning": 3, "afternoon": 1},
    "2026-10-17": {"morning": 4, "afternoon": 4},
}
_BOX_SIZES = (5, 10, 20)


def _cider_press() -> Workflow:
    wf = Workflow(
        "cider_pressing_day_slot",
        "Book slots on a community cider press's pressing days.",
        system_prompt="You are the booking assistant of Orchard Gate Community Press. "
        "People bring their own apples on our Saturday pressing days; we scratt and press "
        "them and fill bag-in-boxes with the juice, pasteurised or not. Check the pressing "
        "days, then book a slot. Today is Monday 2026-09-28.",
    )

    @wf.tool(required=True, read_only=True)
    def list_pressing_days() -> str:
        """The coming pressing days with places left per session, and prices."""
        days = "\n".join(
            f"- Sat {day}: morning {'FULL' if s['morning'] == 0 else str(s['morning']) + ' left'}"
            f", afternoon {s['afternoon']} left"
            for day, s in _PRESS_DAYS.items()
        )
        return (
            f"Pressing days:\n{days}\n"
            "Sessions: morning 09:00-12:30, afternoon 13:30-17:00. 50 to 400 kg of apples "
            "per slot, 0.40 GBP per kg pressed; expect 60-65 litres of juice per 100 kg. "
            "Pasteurising 0.90 GBP per litre. Bag-in-boxes: 5 litre 3.20 GBP, 10 litre "
            "4.80 GBP, 20 litre 7.50 GBP."
        )

    @wf.tool(terminal=True, prerequisites=["list_pressing_days"])
    def book_pressing_slot(
        date: str,
        session: str,
        apples_kg: int,
        pasteurise: bool,
        bag_in_box_litres: int,
        bag_in_boxes: int,
        contact_name: str,
    ) -> str:
        """Book a pressing slot. session: morning or afternoon; bag_in_box_litres: 5, 10
        or 20. Ends the task."""
        day, part = date.strip(), session.strip().lower()
        if day not in _PRESS_DAYS or part not in ("morning", "afternoon"):
            raise ToolResolutionError(f"404 no_session: {date!r} {session!r}")
        if _PRESS_DAYS[day][part] == 0:
            raise ToolResolutionError(f"409 session_full: {day} {part}")
        if not 50 <= apples_kg <= 400:
            raise ToolResolutionError(f"422 apples_kg_out_of_range: {apples_kg} (50-400 kg)")
        if bag_in_box_litres not in _BOX_SIZES:
            raise ToolResolutionError(f"422 no_such_box: {bag_in_box_litres} L (5, 10 or 20)")
        return f"Slot PS-1010-M07 booked: {day} {part}, {apples_kg} kg."

    @wf.tool
    def cancel_pressing_slot(slot_id: str) -> str:
        """Cancel a booked pressing slot."""
        return f"{slot_id} cancelled."

    @wf.tool
    def hire_apple_scratter(date: str, days: int) -> str:
        """Hire out the hand scratter and a small press to take home."""
        return f"Scratter hired from {date} for {days} day(s)."

    return wf


def _check_cider(tool: str, args: dict[str, Any]) -> bool:
    return (
        tool == "book_pressing_slot"
        and str(args.get("date", "")).strip() == _PRESS_DAY
        and str(args.get("session", "")).strip().lower() == "morning"
        and args.get("apples_kg") == 180
        and args.get("pasteurise") is False
        and args.get("bag_in_box_litres") == 20
        and args.get("bag_in_boxes") == 6
        and mentions(args.get("contact_name"), "pryce", "gwen")
    )


_CIDER_REF = {
    "date": _PRESS_DAY,
    "session": "morning",
    "apples_kg": 180,
    "pasteurise": False,
    "bag_in_box_litres": 20,
    "bag_in_boxes": 6,
    "contact_name": "Gwen Pryce",
}

CIDER_PRESS = Scenario(
    name="cider_pressing_day_slot",
    description="Cider press: 2026-10-10 ('Saturday week, the tenth' from Mon 09-28) morning, "
    "180 kg ('a hundred and eighty kilos'), pasteurise false ('don't heat it'), 20-litre "
    "boxes ('the biggest'), 6 of them, contact Gwen Pryce.",
    tags=(HELDOUT11_TAG, "user_value"),
    user_message=(
        "Hello, Gwen Pryce here. We'd like to come and press on Saturday week, the tenth, "
        "in the morning session. We'll have about a hundred and eighty kilos of apples, "
        "mostly Dabinett with a few Bramleys. Please don't heat the juice, we're going to "
        "ferment it into cider. We'll take it in your biggest bag-in-boxes, half a dozen "
        "of them."
    ),
    build=_cider_press,
    validate=_check_cider,
    ideal_iterations=2,
    reference=(
        RefCall("list_pressing_days", {}),
        RefCall("book_pressing_slot", _CIDER_REF),
    ),
    forbidden_tools=("cancel_pressing_slot",),
)


SCENARIOS: tuple[Scenario, ...] = (
    ROWING_CLUB,
    SAILMAKER,
    TENNIS_CLUB,
    CIDER_PRESS,
    *heldout11_replies.SCENARIOS,
    *heldout11_listings.SCENARIOS,
)
