"""Held out, ninth group (first half, report_agrees): a bell tower's
visiting-band secretary and a theatre's captioned-performance access desk,
whose replies must state what the request or the booking shows; `heldout9`
includes these. Each is tagged `heldout9` plus `report_agrees`.
"""

from __future__ import annotations

from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, has_number, mentions
from forge_evals.scenarios._domain_schema import HELDOUT9_TAG, alnum, exact

# ── bell tower: the visit request's status, the donation and the last ringing time ──

_TOWER, _REQUEST = "TWR-FRM-0412", "VR-26-0815-Fq"


def _bell_tower() -> Workflow:
    wf = Workflow(
        "bell_tower_visiting_band_reply",
        "Handle visiting bands' requests to ring at a church tower.",
        system_prompt="You are the tower secretary's assistant for the Frampton branch of "
        "the Diocesan Guild of Church Bell Ringers. Visiting bands ask to ring on a tower's "
        "bells; only the incumbent can approve a visit. Answer from what the request shows "
        "and change nothing unless asked. Times are 24-hour HH:MM. "
        "Today is Monday 2026-08-03.",
    )

    @wf.tool(required=True, read_only=True)
    def find_ringing_tower(dedication: str, place: str) -> str:
        """Find a tower by its church's dedication and place. Returns the tower id."""
        if not mentions(place, "frampton"):
            raise ToolResolutionError(f"404 no tower in {place!r}")
        return (
            f"{_TOWER}: St Peter, Frampton; 8 bells, tenor 14-2-9 in F; ground-floor ring; "
            "practice night Tuesday 19:30-21:00."
        )

    @wf.tool(required=True, read_only=True, prerequisites=["find_ringing_tower"])
    def get_visit_requests(tower_id: str) -> str:
        """Visiting bands' requests for a tower, with status, donation and times."""
        if tower_id.strip() != _TOWER:
            raise ToolResolutionError(f"404 tower_not_found: {tower_id!r} (TWR- id)")
        return (
            f"- {_REQUEST}: Wessex Wanderers outing, Saturday 2026-08-15, 10:30-12:00 asked. "
            "Status PROVISIONAL (awaiting the incumbent's approval, usually within 5 days). "
            "Ringing must stop by 11:15: wedding at 12:00, the bells are rung for it from "
            "11:40. Donation asked: 30.00 GBP per band to the bell restoration fund (peal "
            "fee 60.00 GBP does not apply, quarter peals only).\n"
            "- VR-26-0822-Kd: Avon Valley youth band, Saturday 2026-08-22, CONFIRMED."
        )

    @wf.tool(terminal=True, prerequisites=["get_visit_requests"])
    def reply_to_visiting_band(
        request_id: str, status: str, donation_gbp: float, ring_until: str, message: str
    ) -> str:
        """Email the band's organiser. status is the request's status as shown;
        ring_until is HH:MM. Ends the task."""
        if request_id.strip() not in (_REQUEST, "VR-26-0822-Kd"):
            raise ToolResolutionError(f"404 request_not_found: {request_id!r}")
        return f"Reply sent on {request_id}."

    @wf.tool
    def approve_visit_request(request_id: str) -> str:
        """Mark a visit request approved (incumbent's authority needed)."""
        return f"{request_id} approved."

    @wf.tool
    def withdraw_visit_request(request_id: str, reason: str) -> str:
        """Withdraw a visit request."""
        return f"{request_id} withdrawn."

    return wf


def _check_bells(tool: str, args: dict[str, Any]) -> bool:
    return (
        tool == "reply_to_visiting_band"
        and exact(args.get("request_id"), _REQUEST)
        and alnum(args.get("status")) == "PROVISIONAL"
        and has_number(args.get("donation_gbp"), 30.00)
        and str(args.get("ring_until", "")).strip() == "11:15"
        and has_number(args.get("message"), 30)
        and mentions(args.get("message"), "11:15", "quarter past eleven")
    )


BELL_TOWER = Scenario(
    name="bell_tower_visiting_band_reply",
    description="Bell tower: reply on VR-26-0815-Fq with status PROVISIONAL (not confirmed), "
    "donation 30.00 (not the 60.00 peal fee), ring until 11:15 (not the 12:00 asked nor "
    "the wedding); nothing approved or withdrawn.",
    tags=(HELDOUT9_TAG, "report_agrees"),
    user_message=(
        "Hello, I'm organising the Wessex Wanderers' outing on the fifteenth. Is our visit "
        "to St Peter's at Frampton confirmed yet? How much do you ask as a donation, and "
        "until what time can we ring? Please don't change anything, just let me know."
    ),
    build=_bell_tower,
    validate=_check_bells,
    ideal_iterations=3,
    reference=(
        RefCall("find_ringing_tower", {"dedication": "St Peter", "place": "Frampton"}),
        RefCall("get_visit_requests", {"tower_id": _TOWER}),
        RefCall(
            "reply_to_visiting_band",
            {
                "request_id": _REQUEST,
                "status": "PROVISIONAL",
                "donation_gbp": 30.00,
                "ring_until": "11:15",
                "message": "Your visit on Saturday 15 August is still provisional, awaiting "
                "the incumbent's approval. We ask a donation of 30.00 GBP to the bell fund. "
                "Please stop ringing by 11:15, as there is a wedding at noon.",
            },
        ),
    ),
    forbidden_tools=("approve_visit_request", "withdraw_visit_request"),
)

# ── captioned theatre: the total paid after the concession, the seats, captioning ──

_BOOKING, _OLD_BOOKING = "AB-7731-kX", "AB-7102-mP"
_SEATS = ["C11", "C12"]


def _captioned_theatre() -> Workflow:
    wf = Workflow(
        "captioned_performance_access_reply",
        "Answer access customers about captioned and BSL-interpreted performances.",
        system_prompt="You are the access bookings assistant of the Lyric Playhouse. "
        "Customers book captioned and BSL-interpreted performances with an access "
        "concession. Look the booking up and answer from what it shows; change nothing "
        "unless asked. Today is Tuesday 2026-01-20.",
    )

    @wf.tool(required=True, read_only=True)
    def find_access_bookings(email: str) -> str:
        """Access bookings made under an email address, with booking ids (AB-....-..)."""
        if not mentions(email, "h.adeyemi"):
            raise ToolResolutionError(f"404 no bookings for {email!r}")
        return (
            f"- {_BOOKING}: The Winter's Tale, captioned performance, Thursday 2026-02-05 "
            "19:30, 2 tickets\n"
            f"- {_OLD_BOOKING}: Blood Brothers, BSL-interpreted performance, Saturday "
            "2025-11-15 14:30, 2 tickets (attended)"
        )

    @wf.tool(required=True, read_only=True, prerequisites=["find_access_bookings"])
    def get_access_booking(booking_id: str) -> str:
        """Seats, payment and access arrangements of a booking."""
        if booking_id.strip() not in (_BOOKING, _OLD_BOOKING):
            raise ToolResolutionError(f"404 booking_not_found: {booking_id!r}")
        return (
            f"{_BOOKING}: seats Stalls C11 and C12 (clear sightline to the caption screen); "
            "2 x 32.00 GBP = 64.00 GBP, access concession 25% off, total paid 48.00 GBP "
            "(card ending 4417, 2026-01-09). Captioning: PENDING (captioner not yet assigned; "
            "confirmed no later than 10 days before). Booking status: PAID. Exchanges free up "
            "to 48 hours before."
        )

    @wf.tool(terminal=True, prerequisites=["get_access_booking"])
    def reply_access_enquiry(
        booking_id: str,
        total_paid_gbp: float,
        seats: list[str],
        captioning_status: str,
        message: str,
    ) -> str:
        """Reply to the customer. captioning_status: confirmed, pending or cancelled;
        seats as shown (e.g. C11). Ends the task."""
        if booking_id.strip() not in (_BOOKING, _OLD_BOOKING):
            raise ToolResolutionError(f"404 booking_not_found: {booking_id!r}")
        if captioning_status.strip().lower() not in ("confirmed", "pending", "cancelled"):
            raise ToolResolutionError(f"422 invalid captioning_status {captioning_status!r}")
        return f"Reply sent on {booking_id}."

    @wf.tool
    def exchange_access_tickets(booking_id: str, performance_date: str) -> str:
        """Move a booking to another performance."""
        return f"{booking_id} moved to {performance_date}."

    @wf.tool
    def refund_access_booking(booking_id: str) -> str:
        """Cancel a booking and refund it to the card."""
        return f"{booking_id} refunded."

    return wf


def _seat_list(value: Any) -> list[str]:
    if not isinstance(value, list):
        return []
    return sorted(alnum(v).removeprefix("STALLS") for v in value)


def _check_theatre(tool: str, args: dict[str, Any]) -> bool:
    return (
        tool == "reply_access_enquiry"
        and exact(args.get("booking_id"), _BOOKING)
        and has_number(args.get("total_paid_gbp"), 48.00)
        and _seat_list(args.get("seats")) == _SEATS
        and str(args.get("captioning_status", "")).strip().lower() == "pending"
        and has_number(args.get("message"), 48)
    )


THEATRE_CAPTIONS = Scenario(
    name="captioned_performance_access_reply",
    description="Captioned theatre: reply on AB-7731-kX (not last year's AB-7102-mP) with "
    "total paid 48.00 (after 25% off; not 64.00), seats C11 and C12, captioning pending "
    "(not confirmed); nothing exchanged or refunded.",
    tags=(HELDOUT9_TAG, "report_agrees"),
    user_message=(
        "Hi, it's Halima Adeyemi, h.adeyemi@inbox.example. I booked for the captioned "
        "Winter's Tale next month. Can you remind me what I paid altogether and which seats "
        "we've got? And is the captioning definitely confirmed for that night? I don't want "
        "to change anything."
    ),
    build=_captioned_theatre,
    validate=_check_theatre,
    ideal_iterations=3,
    reference=(
        RefCall("find_access_bookings", {"email": "h.adeyemi@inbox.example"}),
        RefCall("get_access_booking", {"booking_id": _BOOKING}),
        RefCall(
            "reply_access_enquiry",
            {
                "booking_id": _BOOKING,
                "total_paid_gbp": 48.00,
                "seats": list(_SEATS),
                "captioning_status": "pending",
                "message": "You paid 48.00 GBP in total, after the 25% access concession, "
                "for seats C11 and C12 in the stalls. The captioning is not confirmed yet: "
                "a captioner is still to be assigned, at the latest 10 days before.",
            },
        ),
    ),
    forbidden_tools=("exchange_access_tickets", "refund_access_booking"),
)


SCENARIOS: tuple[Scenario, ...] = (BELL_TOWER, THEATRE_CAPTIONS)
