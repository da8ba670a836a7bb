"""Held out, eleventh group (first half, report_agrees): an aquarium
maintenance firm's contract desk and a gin distillery's tour desk, whose
replies must state what the record shows; `heldout11` includes these. Each
is tagged `heldout11` plus `report_agrees`.
"""

from __future__ import annotations

from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, has_number, mentions
from forge_evals.scenarios._domain_schema import HELDOUT11_TAG, exact

# ── aquarium contract: plan, status, next visit (not the last), fee (not the old one), chiller ──

_REEF, _OLD_TANK = "MC-26-0912", "MC-24-0318"

_CONTRACT_REPLY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "contract_id": {"type": "string", "pattern": "^MC-[0-9]{2}-[0-9]{4}$"},
        "plan": {"type": "string", "enum": ["ESSENTIAL", "REEF_PLUS", "PUBLIC_DISPLAY"]},
        "status": {"type": "string", "enum": ["ACTIVE", "SUSPENDED", "TERMINATED"]},
        "next_visit": {
            "type": "object",
            "properties": {
                "date": {"type": "string", "format": "date"},
                "window": {"type": "string", "enum": ["morning", "afternoon"]},
            },
            "required": ["date", "window"],
        },
        "monthly_fee": {
            "type": "object",
            "properties": {
                "amount": {"type": "number", "minimum": 0},
                "currency": {"type": "string", "enum": ["GBP", "EUR"]},
            },
            "required": ["amount", "currency"],
        },
        "chiller_covered": {
            "type": "boolean",
            "description": "Whether the contract covers repairs to the tank's chiller.",
        },
        "message": {"type": "string", "maxLength": 1200},
    },
    "required": [
        "contract_id",
        "plan",
        "status",
        "next_visit",
        "monthly_fee",
        "chiller_covered",
    ],
}


def _aquarium() -> Workflow:
    wf = Workflow(
        "aquarium_maintenance_contract_reply",
        "Answer business clients about their aquarium maintenance contracts.",
        system_prompt="You are the client desk assistant of Tidewell Aquatics, who keep "
        "display aquariums in restaurants, surgeries and offices on maintenance contracts. "
        "Look the contract up and answer from what it shows; book and change nothing "
        "unless the client asks. Today is Wednesday 2026-07-08.",
    )

    @wf.tool(required=True, read_only=True)
    def find_aquarium_contracts(business_name: str) -> str:
        """Maintenance contracts of a business client, with contract ids (MC-..-....)."""
        if not mentions(business_name, "salt & vine", "salt and vine", "salt&vine"):
            raise ToolResolutionError(f"404 no client named {business_name!r}")
        return (
            "Client AQC-5530, Salt & Vine Bistro, 14 Quay Street:\n"
            f"- {_OLD_TANK}: 400 L freshwater community tank, plan ESSENTIAL, TERMINATED "
            "2026-03-31\n"
            f"- {_REEF}: 900 L reef display, plan REEF_PLUS, ACTIVE since 2026-04-01"
        )

    @wf.tool(required=True, read_only=True, prerequisites=["find_aquarium_contracts"])
    def get_maintenance_contract(contract_id: str) -> str:
        """A contract's plan, visit schedule, fees and what equipment it covers."""
        cid = contract_id.strip()
        if cid == _OLD_TANK:
            return f"{cid}: ESSENTIAL, TERMINATED 2026-03-31 (tank removed); 79.00 GBP/month."
        if cid != _REEF:
            raise ToolResolutionError(f"404 contract_not_found: {contract_id!r} (MC- id)")
        return (
            f"{cid}: 900 L reef display (bar wall). Plan REEF_PLUS, status ACTIVE, term "
            "2026-04-01 to 2027-03-31.\n"
            "Visits: fortnightly, Tuesday morning round (08:00-11:00). Last visit 2026-07-07 "
            "(water change 90 L, skimmer cleaned). Next scheduled visit Tue 2026-07-21, "
            "morning.\n"
            "Monthly fee 189.00 GBP from 2026-04-01 (164.00 GBP under the previous term). "
            "Emergency call-out 85.00 GBP, attended within 24 h.\n"
            "Covered, parts and labour: return pumps, wavemakers, heaters, controller. NOT "
            "covered: chiller (TK-1000, client-owned, excluded at renewal), lighting."
        )

    def _reply(args: dict[str, Any]) -> str:
        cid = str(args.get("contract_id", "")).strip()
        if cid not in (_REEF, _OLD_TANK):
            raise ToolResolutionError(f"404 contract_not_found: {cid!r}")
        return f"Reply sent to AQC-5530 about {cid}."

    wf.add_schema_tool(
        "reply_contract_client",
        "Email the client what their contract shows. Ends the task.",
        _CONTRACT_REPLY_SCHEMA,
        _reply,
        terminal=True,
        prerequisites=["get_maintenance_contract"],
    )

    @wf.tool
    def book_emergency_callout(contract_id: str, problem: str) -> str:
        """Send an engineer out within 24 hours (85.00 GBP call-out)."""
        return f"Call-out booked on {contract_id}."

    @wf.tool
    def terminate_maintenance_contract(contract_id: str, reason: str) -> str:
        """End a contract at the end of the month."""
        return f"{contract_id} terminated."

    return wf


def _check_aquarium(tool: str, args: dict[str, Any]) -> bool:
    visit, fee = args.get("next_visit"), args.get("monthly_fee")
    return (
        tool == "reply_contract_client"
        and exact(args.get("contract_id"), _REEF)
        and str(args.get("plan", "")).strip().upper() == "REEF_PLUS"
        and str(args.get("status", "")).strip().upper() == "ACTIVE"
        and isinstance(visit, dict)
        and str(visit.get("date", "")).strip() == "2026-07-21"
        and str(visit.get("window", "")).strip().lower() == "morning"
        and isinstance(fee, dict)
        and has_number(fee.get("amount"), 189.00)
        and str(fee.get("currency", "")).strip().upper() == "GBP"
        and args.get("chiller_covered") is False
    )


AQUARIUM = Scenario(
    name="aquarium_maintenance_contract_reply",
    description="Aquarium contract: reply on MC-26-0912 (the reef tank, not the terminated "
    "MC-24-0318), REEF_PLUS, ACTIVE, next visit 2026-07-21 morning (not the last visit "
    "07-07), monthly fee 189.00 GBP (not the old 164.00 nor the 85.00 call-out), "
    "chiller_covered false; no call-out booked.",
    tags=(HELDOUT11_TAG, "report_agrees"),
    user_message=(
        "Hi, Nadia at Salt & Vine here, the bistro on Quay Street. The reef tank's looking "
        "a bit cloudy. When's your next regular visit, what are we paying a month these "
        "days, and if the chiller packs up, is that covered? I just want the facts for now, "
        "please don't send anyone out extra."
    ),
    build=_aquarium,
    validate=_check_aquarium,
    ideal_iterations=3,
    reference=(
        RefCall("find_aquarium_contracts", {"business_name": "Salt & Vine"}),
        RefCall("get_maintenance_contract", {"contract_id": _REEF}),
        RefCall(
            "reply_contract_client",
            {
                "contract_id": _REEF,
                "plan": "REEF_PLUS",
                "status": "ACTIVE",
                "next_visit": {"date": "2026-07-21", "window": "morning"},
                "monthly_fee": {"amount": 189.00, "currency": "GBP"},
                "chiller_covered": False,
                "message": "Our next regular visit is Tuesday 21 July, on the morning round. "
                "Your Reef Plus contract is 189.00 GBP a month. The chiller is not covered: "
                "it was excluded at renewal.",
            },
        ),
    ),
    forbidden_tools=("book_emergency_callout", "terminate_maintenance_contract"),
)

# ── gin distillery: arrive-by time (not the tour start), balance (not the total), driver's pack ──

_TOUR, _WAITLIST, _PAST_TOUR = "GDT-77415", "GDT-77498", "GDT-70932"


def _gin_distillery() -> Workflow:
    wf = Workflow(
        "gin_distillery_tour_guest_reply",
        "Answer guests about their distillery tour bookings.",
        system_prompt="You are the visitor desk assistant of Hollow Fen Distillery, a small "
        "gin distillery that runs guided tours with tastings. Look the booking up and "
        "answer from what it shows; change nothing unless the guest asks. Times are "
        "24-hour HH:MM. Today is Friday 2026-11-20.",
    )

    @wf.tool(required=True, read_only=True)
    def find_tour_bookings(email: str) -> str:
        """Tour bookings under an email, with booking refs (GDT-.....)."""
        if not mentions(email, "marcus.lind@fenpost"):
            raise ToolResolutionError(f"404 no bookings under {email!r}")
        return (
            f"- {_PAST_TOUR}: Still House Tour, Sat 2026-06-13 11:00, 2 guests, ATTENDED\n"
            f"- {_TOUR}: Blender's Tour, Sat 2026-11-28 14:30, 4 guests, CONFIRMED\n"
            f"- {_WAITLIST}: Gin School, Sat 2026-11-21 10:00, 2 guests, WAITLIST (position 3)"
        )

    @wf.tool(required=True, read_only=True, prerequisites=["find_tour_bookings"])
    def get_tour_booking(booking_ref: str) -> str:
        """A booking's times, payments, tasting and driver arrangements."""
        ref = booking_ref.strip()
        if ref == _PAST_TOUR:
            return f"{ref}: ATTENDED 2026-06-13; paid in full 56.00 GBP."
        if ref == _WAITLIST:
            return f"{ref}: WAITLIST position 3 for Gin School 2026-11-21; nothing paid."
        if ref != _TOUR:
            raise ToolResolutionError(f"404 booking_not_found: {booking_ref!r} (GDT- ref)")
        return (
            f"{ref}: Blender's Tour, Sat 2026-11-28. Status CONFIRMED.\n"
            "Tour starts 14:30; guests must arrive by 14:10 for the still house safety "
            "briefing (closed-toe shoes).\n"
            "4 guests x 42.00 GBP = 168.00 GBP; deposit 60.00 GBP paid 2026-10-30; balance "
            "108.00 GBP due on arrival.\n"
            "Tasting: three 25 ml gins, 40-47% ABV. Designated drivers: a free driver's pack "
            "(non-alcoholic botanical tasting plus a 20 cl bottle to take home), one per "
            "booking, handed out on arrival; not yet noted on this booking.\n"
            "Free cancellation until 2026-11-21."
        )

    @wf.tool(terminal=True, prerequisites=["get_tour_booking"])
    def reply_tour_guest(
        booking_ref: str, status: str, non_alcoholic_tasting: bool, message: str
    ) -> str:
        """Message the guest. status as the booking shows (e.g. CONFIRMED, WAITLIST);
        non_alcoholic_tasting: whether a driver can taste without alcohol. Ends the task."""
        if booking_ref.strip() not in (_TOUR, _WAITLIST, _PAST_TOUR):
            raise ToolResolutionError(f"404 booking_not_found: {booking_ref!r}")
        return f"Reply sent on {booking_ref.strip()}."

    @wf.tool
    def cancel_tour_booking(booking_ref: str) -> str:
        """Cancel a tour booking (deposit refunded only before the free-cancellation date)."""
        return f"{booking_ref} cancelled."

    @wf.tool
    def change_tour_guests(booking_ref: str, guests: int) -> str:
        """Change the number of guests on a booking."""
        return f"{booking_ref} now for {guests} guests."

    return wf


def _check_gin(tool: str, args: dict[str, Any]) -> bool:
    message = args.get("message")
    return (
        tool == "reply_tour_guest"
        and exact(args.get("booking_ref"), _TOUR)
        and str(args.get("status", "")).strip().upper() == "CONFIRMED"
        and args.get("non_alcoholic_tasting") is True
        and has_number(message, 108)
        and mentions(message, "14:10", "2:10", "ten past two")
    )


GIN_DISTILLERY = Scenario(
    name="gin_distillery_tour_guest_reply",
    description="Gin distillery: reply on GDT-77415 (the Blender's Tour, not the waitlisted "
    "GDT-77498 nor the attended GDT-70932), status CONFIRMED, non_alcoholic_tasting true, "
    "and a message stating arrival by 14:10 (not only the 14:30 start) and the 108.00 "
    "balance (not the 168.00 total, 60.00 deposit or 42.00 per head); nothing changed.",
    tags=(HELDOUT11_TAG, "report_agrees"),
    user_message=(
        "Hello, Marcus Lind here, the bookings are under marcus.lind@fenpost.example. We're "
        "coming on the blending tour on the 28th. What time do we actually need to be "
        "there, how much is left to pay, and my wife's driving, so can she do the tasting "
        "without any alcohol? Just questions, please don't change anything."
    ),
    build=_gin_distillery,
    validate=_check_gin,
    ideal_iterations=3,
    reference=(
        RefCall("find_tour_bookings", {"email": "marcus.lind@fenpost.example"}),
        RefCall("get_tour_booking", {"booking_ref": _TOUR}),
        RefCall(
            "reply_tour_guest",
            {
                "booking_ref": _TOUR,
                "status": "CONFIRMED",
                "non_alcoholic_tasting": True,
                "message": "Your Blender's Tour on Saturday 28 November is confirmed. The "
                "tour starts at 14:30, but please arrive by 14:10 for the safety briefing. "
                "The balance of 108.00 GBP is due on arrival. Your wife can have the free "
                "driver's pack: a non-alcoholic botanical tasting and a bottle to take home.",
            },
        ),
    ),
    forbidden_tools=("cancel_tour_booking", "change_tour_guests"),
)


SCENARIOS: tuple[Scenario, ...] = (AQUARIUM, GIN_DISTILLERY)
