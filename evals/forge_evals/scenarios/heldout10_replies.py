"""Held out, tenth group (first half, report_agrees): a rare-book appraiser's
client desk and a mobile sauna hire's customer desk, whose replies must state
what the record shows; `heldout10` includes these. Each is tagged
`heldout10` plus `report_agrees`.
"""

from __future__ import annotations

from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, has_number, mentions
from forge_evals.scenarios._domain_schema import HELDOUT10_TAG, exact

# ── rare books: the appraisal's status, the insurance value (not the auction estimate), the fee ──

_ORIGIN, _FACSIMILE = "APR-26-1193-Lw", "APR-26-0871-Lt"


def _rare_books() -> Workflow:
    wf = Workflow(
        "rare_book_appraisal_status_reply",
        "Answer clients about books left with us for appraisal.",
        system_prompt="You are the client desk assistant of Marchmont Rare Books, "
        "antiquarian booksellers and appraisers. Clients leave books with us for a written "
        "appraisal. Look the item up and answer from what its record shows; change nothing "
        "unless the client asks. Today is Monday 2026-05-11.",
    )

    @wf.tool(required=True, read_only=True)
    def find_appraisal_items(client_surname: str) -> str:
        """Items a client has left for appraisal, with item ids (APR-..-....-..)."""
        if not mentions(client_surname, "prentice"):
            raise ToolResolutionError(f"404 no appraisal items under {client_surname!r}")
        return (
            "Client CL-6620, Dr Rowan Prentice:\n"
            f"- {_ORIGIN}: Darwin, On the Origin of Species, second edition (John Murray, "
            "1860), received 2026-04-20\n"
            f"- {_FACSIMILE}: Kelmscott Chaucer, 1958 facsimile, appraised 2026-01-14, "
            "returned to client"
        )

    @wf.tool(required=True, read_only=True, prerequisites=["find_appraisal_items"])
    def get_appraisal_record(item_id: str) -> str:
        """The appraisal record of an item: status, values, condition and fee."""
        iid = item_id.strip()
        if iid == _FACSIMILE:
            return f"{iid}: COMPLETE 2026-01-14; insurance value 450.00 GBP; fee paid."
        if iid != _ORIGIN:
            raise ToolResolutionError(f"404 item_not_found: {item_id!r} (APR- id)")
        return (
            f"{iid}: Darwin, Origin of Species, 2nd ed., 1860 (3,000 copies printed).\n"
            "Status: COMPLETE (written report signed by J. Marchmont FRSA, 2026-05-07; "
            "ready to collect with the book).\n"
            "Condition: original green cloth, rebacked with the spine laid down, light "
            "foxing to prelims, no inscriptions.\n"
            "Insurance (replacement) value: 6,500.00 GBP.\n"
            "Auction estimate: 3,800.00-4,500.00 GBP (for information only).\n"
            "Appraisal fee: 95.00 GBP, OUTSTANDING (invoice INV-55102, payable on "
            "collection)."
        )

    @wf.tool(terminal=True, prerequisites=["get_appraisal_record"])
    def reply_to_appraisal_client(
        item_id: str,
        status: str,
        insurance_value_gbp: float,
        fee_outstanding_gbp: float,
        message: str,
    ) -> str:
        """Email the client. status as the record shows (e.g. COMPLETE, IN_PROGRESS);
        fee_outstanding_gbp is 0 when nothing is owed. Ends the task."""
        if item_id.strip() not in (_ORIGIN, _FACSIMILE):
            raise ToolResolutionError(f"404 item_not_found: {item_id!r}")
        return f"Reply sent to CL-6620 about {item_id.strip()}."

    @wf.tool
    def consign_to_auction(item_id: str, reserve_gbp: float) -> str:
        """Consign an appraised book to our next auction with a reserve."""
        return f"{item_id} consigned, reserve {reserve_gbp} GBP."

    @wf.tool
    def waive_appraisal_fee(item_id: str, reason: str) -> str:
        """Waive an item's outstanding appraisal fee."""
        return f"Fee on {item_id} waived."

    return wf


def _check_books(tool: str, args: dict[str, Any]) -> bool:
    message = args.get("message")
    return (
        tool == "reply_to_appraisal_client"
        and exact(args.get("item_id"), _ORIGIN)
        and str(args.get("status", "")).strip().upper() == "COMPLETE"
        and has_number(args.get("insurance_value_gbp"), 6500.00)
        and has_number(args.get("fee_outstanding_gbp"), 95.00)
        and has_number(message, 6500)
        and has_number(message, 95)
    )


RARE_BOOKS = Scenario(
    name="rare_book_appraisal_status_reply",
    description="Rare books: reply on APR-26-1193-Lw (the Darwin, not the facsimile) with "
    "status COMPLETE, insurance value 6500.00 (not the 3,800-4,500 auction estimate), fee "
    "outstanding 95.00 (not 0); nothing consigned or waived.",
    tags=(HELDOUT10_TAG, "report_agrees"),
    user_message=(
        "Good morning, this is Rowan Prentice. I left my Darwin with you last month. Is "
        "the appraisal finished yet? What figure should I give my insurers, and do I owe "
        "you anything? Please don't do anything with the book yet, I'm only asking."
    ),
    build=_rare_books,
    validate=_check_books,
    ideal_iterations=3,
    reference=(
        RefCall("find_appraisal_items", {"client_surname": "Prentice"}),
        RefCall("get_appraisal_record", {"item_id": _ORIGIN}),
        RefCall(
            "reply_to_appraisal_client",
            {
                "item_id": _ORIGIN,
                "status": "COMPLETE",
                "insurance_value_gbp": 6500.00,
                "fee_outstanding_gbp": 95.00,
                "message": "Your appraisal is complete and the signed report is ready to "
                "collect with the book. For your insurers, the replacement value is "
                "6,500.00 GBP. The appraisal fee of 95.00 GBP is still outstanding, "
                "payable on collection.",
            },
        ),
    ),
    forbidden_tools=("consign_to_auction", "waive_appraisal_fee"),
)

# ── mobile sauna: the delivery window, the balance due (not the total), firewood ──

_SAUNA, _OLD_SAUNA = "KMS-bk-40218", "KMS-bk-37790"


def _sauna_hire() -> Workflow:
    wf = Workflow(
        "mobile_sauna_hire_booking_reply",
        "Answer customers about their mobile sauna hire bookings.",
        system_prompt="You are the customer assistant of Kelda Mobile Saunas. We tow "
        "wood-fired sauna trailers to customers' homes and events for a few days at a time. "
        "Look the booking up and answer from what it shows; change nothing unless asked. "
        "Times are 24-hour HH:MM. Today is Wednesday 2026-11-04.",
    )

    @wf.tool(required=True, read_only=True)
    def find_sauna_hires(phone: str) -> str:
        """Hire bookings under a phone number, with booking ids (KMS-bk-.....)."""
        if not phone.replace(" ", "").endswith("7700900815"):
            raise ToolResolutionError(f"404 no bookings for {phone!r}")
        return (
            f"- {_SAUNA}: 'Fjell' 6-seat barrel sauna, Fri 2026-11-13 to Sun 2026-11-15, "
            "delivery to 3 Quarry Row, Hebden Bridge HX7 8AB\n"
            f"- {_OLD_SAUNA}: 'Fjell', 2026-02-20 to 2026-02-22, completed"
        )

    @wf.tool(required=True, read_only=True, prerequisites=["find_sauna_hires"])
    def get_sauna_hire(booking_id: str) -> str:
        """Delivery, payments and inclusions of a hire booking."""
        bid = booking_id.strip()
        if bid == _OLD_SAUNA:
            return f"{bid}: COMPLETED 2026-02-22; paid in full 465.00 GBP; hold released."
        if bid != _SAUNA:
            raise ToolResolutionError(f"404 booking_not_found: {booking_id!r} (KMS-bk- id)")
        return (
            f"{_SAUNA}: status CONFIRMED.\n"
            "Delivery: Fri 2026-11-13, window 08:30-10:00 (driver phones 30 minutes ahead); "
            "collection Mon 2026-11-16 from 09:00.\n"
            "Hire: 3 days x 145.00 GBP = 435.00 GBP; delivery and collection 60.00 GBP; "
            "total 495.00 GBP. Deposit paid 150.00 GBP (2026-10-02). Balance due 345.00 GBP "
            "by Fri 2026-11-06. Damage hold 200.00 GBP taken on the card at delivery, "
            "released on collection.\n"
            "Included: two 15 kg nets of kiln-dried birch firewood, kindling, bucket and "
            "ladle. Extra nets 12.00 GBP each."
        )

    @wf.tool(terminal=True, prerequisites=["get_sauna_hire"])
    def reply_sauna_customer(
        booking_id: str,
        delivery_window_start: str,
        balance_due_gbp: float,
        firewood_included: bool,
        message: str,
    ) -> str:
        """Message the customer. delivery_window_start is HH:MM. Ends the task."""
        if booking_id.strip() not in (_SAUNA, _OLD_SAUNA):
            raise ToolResolutionError(f"404 booking_not_found: {booking_id!r}")
        return f"Reply sent on {booking_id.strip()}."

    @wf.tool
    def extend_sauna_hire(booking_id: str, extra_days: int) -> str:
        """Add days to a hire (charged at the daily rate)."""
        return f"{booking_id} extended by {extra_days} day(s)."

    @wf.tool
    def cancel_sauna_hire(booking_id: str, reason: str) -> str:
        """Cancel a hire (deposit kept within 14 days)."""
        return f"{booking_id} cancelled."

    return wf


def _check_sauna(tool: str, args: dict[str, Any]) -> bool:
    message = args.get("message")
    return (
        tool == "reply_sauna_customer"
        and exact(args.get("booking_id"), _SAUNA)
        and str(args.get("delivery_window_start", "")).strip() == "08:30"
        and has_number(args.get("balance_due_gbp"), 345.00)
        and args.get("firewood_included") is True
        and has_number(message, 345)
        and mentions(message, "08:30", "8:30", "half past eight", "half eight")
    )


SAUNA_HIRE = Scenario(
    name="mobile_sauna_hire_booking_reply",
    description="Mobile sauna: reply on KMS-bk-40218 (not the completed KMS-bk-37790) with "
    "delivery from 08:30, balance due 345.00 (not the 495.00 total, the 150.00 deposit nor "
    "the 200.00 hold), firewood included true; nothing extended or cancelled.",
    tags=(HELDOUT10_TAG, "report_agrees"),
    user_message=(
        "Hiya, it's Megan on 07700 900815. We've got the sauna coming for my fortieth "
        "next weekend. What time will it turn up on the Friday, how much have I still got "
        "to pay, and do I need to buy firewood or does that come with it? Not changing "
        "anything, just checking."
    ),
    build=_sauna_hire,
    validate=_check_sauna,
    ideal_iterations=3,
    reference=(
        RefCall("find_sauna_hires", {"phone": "07700 900815"}),
        RefCall("get_sauna_hire", {"booking_id": _SAUNA}),
        RefCall(
            "reply_sauna_customer",
            {
                "booking_id": _SAUNA,
                "delivery_window_start": "08:30",
                "balance_due_gbp": 345.00,
                "firewood_included": True,
                "message": "The sauna arrives on Friday 13 November between 08:30 and "
                "10:00; the driver will phone 30 minutes ahead. You have 345.00 GBP left "
                "to pay, by Friday 6 November. Two nets of birch firewood and kindling "
                "come with it, so no need to buy any.",
            },
        ),
    ),
    forbidden_tools=("extend_sauna_hire", "cancel_sauna_hire"),
)


SCENARIOS: tuple[Scenario, ...] = (RARE_BOOKS, SAUNA_HIRE)
