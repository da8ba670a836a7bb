"""Held out, thirteenth group (first half, report_agrees): a milliner's
commission desk and a falconry centre's experience desk, whose replies must
state what the record shows; `heldout13` includes these. Each is tagged
`heldout13` plus `report_agrees`.
"""

from __future__ import annotations

from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, has_number, mentions
from forge_evals.scenarios._domain_schema import HELDOUT13_TAG, alnum, exact

# ── milliner: status, final fitting (not the first, nor collection), balance (not total) ──

_HAT, _OLD_HAT, _QUOTE_ONLY = "MIL-2614", "MIL-2290", "MIL-2631"
_FITTING_DAY = "2026-06-10"

_HAT_REPLY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "commission_ref": {"type": "string", "pattern": "^MIL-[0-9]{4}$"},
        "status": {
            "type": "string",
            "enum": ["QUOTED", "IN_MAKING", "READY_TO_COLLECT", "DELIVERED", "QUOTE_EXPIRED"],
        },
        "final_fitting": {
            "type": "object",
            "properties": {
                "date": {"type": "string", "format": "date"},
                "time": {
                    "type": "string",
                    "pattern": "^([01][0-9]|2[0-3]):[0-5][0-9]$",
                    "description": "When the fitting appointment begins (24-hour HH:MM).",
                },
            },
            "required": ["date", "time"],
        },
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
    "required": ["commission_ref", "status", "final_fitting", "balance_due"],
}


def _milliner() -> Workflow:
    wf = Workflow(
        "millinery_commission_progress_reply",
        "Answer clients about their hat commissions.",
        system_prompt="You are the studio assistant of Hester Vane Millinery, Ludlow, who "
        "makes hats and headpieces to commission. Look the client's commission up and "
        "answer from what it shows; add and change nothing unless the client asks. Times "
        "are 24-hour HH:MM. Today is Monday 2026-06-01.",
    )

    @wf.tool(required=True, read_only=True)
    def find_hat_commissions(email: str) -> str:
        """A client's hat commissions by email, with refs (MIL-....)."""
        if not mentions(email, "harriet.ashdown@tweedpost"):
            raise ToolResolutionError(f"404 no client with email {email!r}")
        return (
            "Client Harriet Ashdown:\n"
            f"- {_OLD_HAT}: ivory silk fascinator (a June wedding), DELIVERED 2025-06-21\n"
            f"- {_HAT}: navy sinamay picture hat for Royal Ascot, IN_MAKING\n"
            f"- {_QUOTE_ONLY}: grey fur-felt trilby, QUOTE_EXPIRED 2026-05-20"
        )

    @wf.tool(required=True, read_only=True, prerequisites=["find_hat_commissions"])
    def get_hat_commission(commission_ref: str) -> str:
        """A commission's making stage, fittings, collection and payments."""
        ref = commission_ref.strip()
        if ref == _OLD_HAT:
            return f"{ref}: DELIVERED 2025-06-21; paid in full 310.00 GBP."
        if ref == _QUOTE_ONLY:
            return f"{ref}: quote 240.00 GBP expired 2026-05-20; nothing made or paid."
        if ref != _HAT:
            raise ToolResolutionError(f"404 commission_not_found: {commission_ref!r} (MIL- ref)")
        return (
            f"{ref}: navy sinamay picture hat, 58 cm head fitting, hand-rolled edge, silk "
            "abaca flowers. Status IN_MAKING (blocked 2026-05-22; trimming under way).\n"
            "First fitting done Tue 2026-05-19. Final fitting Wed 2026-06-10 at 14:15 (45 "
            "min) at the studio. Ready to collect from Fri 2026-06-12; Ladies' Day Thu "
            "2026-06-18.\n"
            "Hat 560.00 GBP + silk abaca flowers 85.00 GBP = 645.00 GBP. Deposit 280.00 "
            "GBP paid 2026-04-14; balance 365.00 GBP due at the final fitting.\n"
            "Optional: lined hat box 25.00 GBP (not added)."
        )

    def _reply(args: dict[str, Any]) -> str:
        ref = str(args.get("commission_ref", "")).strip()
        if ref not in (_HAT, _OLD_HAT, _QUOTE_ONLY):
            raise ToolResolutionError(f"404 commission_not_found: {ref!r}")
        return f"Reply sent to Harriet Ashdown about {ref}."

    wf.add_schema_tool(
        "reply_hat_commission_client",
        "Email the client what their commission shows. Ends the task.",
        _HAT_REPLY_SCHEMA,
        _reply,
        terminal=True,
        prerequisites=["get_hat_commission"],
    )

    @wf.tool
    def add_hat_box_to_commission(commission_ref: str) -> str:
        """Add a lined hat box (25.00 GBP) to a commission."""
        return f"Hat box added to {commission_ref}."

    @wf.tool
    def cancel_hat_commission(commission_ref: str, reason: str) -> str:
        """Cancel a commission (the deposit is kept once the hat is blocked)."""
        return f"{commission_ref} cancelled."

    return wf


def _check_milliner(tool: str, args: dict[str, Any]) -> bool:
    fitting, balance = args.get("final_fitting"), args.get("balance_due")
    amount = balance.get("amount") if isinstance(balance, dict) else None
    return (
        tool == "reply_hat_commission_client"
        and exact(args.get("commission_ref"), _HAT)
        and str(args.get("status", "")).strip().upper() == "IN_MAKING"
        and isinstance(fitting, dict)
        and str(fitting.get("date", "")).strip() == _FITTING_DAY
        and str(fitting.get("time", "")).strip() == "14:15"
        and isinstance(balance, dict)
        and not isinstance(amount, bool)
        and has_number(amount, 365.00)
        and str(balance.get("currency", "")).strip().upper() == "GBP"
    )


MILLINER = Scenario(
    name="millinery_commission_progress_reply",
    description="Milliner: reply on MIL-2614 (the Ascot hat, not the delivered MIL-2290 "
    "nor the expired MIL-2631), IN_MAKING (not ready), final fitting 2026-06-10 at 14:15 "
    "(not the first fitting 05-19, the 06-12 collection nor Ladies' Day), balance 365.00 "
    "GBP (not the 645.00 total, 280.00 deposit, 560.00 hat or 390.00 with the box).",
    tags=(HELDOUT13_TAG, "report_agrees"),
    user_message=(
        "Hello, Harriet Ashdown here (harriet.ashdown@tweedpost.example). I'm getting "
        "nervous about my Ascot hat! Is it still being made or is it ready, when is my "
        "final fitting, and how much do I need to bring with me to it? I've got my own hat "
        "box, thanks, so no need to add one."
    ),
    build=_milliner,
    validate=_check_milliner,
    ideal_iterations=3,
    reference=(
        RefCall("find_hat_commissions", {"email": "harriet.ashdown@tweedpost.example"}),
        RefCall("get_hat_commission", {"commission_ref": _HAT}),
        RefCall(
            "reply_hat_commission_client",
            {
                "commission_ref": _HAT,
                "status": "IN_MAKING",
                "final_fitting": {"date": _FITTING_DAY, "time": "14:15"},
                "balance_due": {"amount": 365.00, "currency": "GBP"},
                "message": "Your Ascot hat is being trimmed now. Your final fitting is on "
                "Wednesday 10 June at 14:15, when the balance of 365.00 GBP is due; it will "
                "be ready to collect from 12 June.",
            },
        ),
    ),
    forbidden_tools=("add_hat_box_to_commission", "cancel_hat_commission"),
)

# ── falconry: status, walk date, child may fly (9 >= 8), meet time (not start), balance ──

_WALK, _OWLS, _EAGLE = "FX-5012", "FX-4477", "FX-5038"
_WALK_DAY = "2026-05-02"


def _falconry() -> Workflow:
    wf = Workflow(
        "falconry_hawk_walk_guest_reply",
        "Answer guests about their falconry experience bookings.",
        system_prompt="You are the guest desk assistant of Kestrel Ridge Falconry, "
        "Radnorshire. Look the guest's booking up and answer from what it shows; change "
        "nothing and take no payment unless the guest asks. Times are 24-hour HH:MM. Today "
        "is Wednesday 2026-04-22.",
    )

    @wf.tool(required=True, read_only=True)
    def find_falconry_bookings(phone: str) -> str:
        """Experience bookings under a phone number, with refs (FX-....)."""
        if not alnum(phone).endswith("7700900733"):
            raise ToolResolutionError(f"404 no bookings under {phone!r}")
        return (
            "Lead guest Chidi Okonkwo:\n"
            f"- {_OWLS}: Owl Encounter, Sun 2025-10-19, 2 guests, ATTENDED\n"
            f"- {_WALK}: Hawk Walk (half day), Sat {_WALK_DAY}, 3 guests, CONFIRMED\n"
            f"- {_EAGLE}: Eagle Flying Day, Sat 2026-06-13, 1 guest, CANCELLED 2026-04-01"
        )

    @wf.tool(required=True, read_only=True, prerequisites=["find_falconry_bookings"])
    def get_falconry_booking(booking_ref: str) -> str:
        """A booking's day, times, guests, age rules and payments."""
        ref = booking_ref.strip()
        if ref == _OWLS:
            return f"{ref}: ATTENDED 2025-10-19; paid in full 110.00 GBP."
        if ref == _EAGLE:
            return f"{ref}: CANCELLED 2026-04-01; 95.00 GBP refunded."
        if ref != _WALK:
            raise ToolResolutionError(f"404 booking_not_found: {booking_ref!r} (FX- ref)")
        return (
            f"{ref}: Hawk Walk, Sat {_WALK_DAY}. Status CONFIRMED. Guests: 2 adults, 1 child "
            "(age 9 at booking).\n"
            "Meet 09:40 at the mews for the welcome and safety talk; the walk sets off 10:00 "
            "and is back about 13:00.\n"
            "Each guest flies 2 Harris hawks; the centre houses 14 birds. Children from 8 "
            "may fly the hawks beside a parent; under-12s may not hold the eagle owl.\n"
            "Adults 2 x 85.00 + child 1 x 55.00 = 225.00 GBP; deposit 75.00 GBP paid "
            "2026-03-09; balance 150.00 GBP due on the day.\n"
            "Wear walking boots; gloves provided."
        )

    @wf.tool(terminal=True, prerequisites=["get_falconry_booking"])
    def reply_falconry_guest(
        booking_ref: str,
        status: str,
        experience_date: str,
        child_may_fly: bool,
        message: str,
    ) -> str:
        """Message the guest. status as the booking shows (e.g. CONFIRMED, CANCELLED);
        experience_date YYYY-MM-DD; child_may_fly: whether the child in the party may fly
        the birds. Ends the task."""
        if booking_ref.strip() not in (_WALK, _OWLS, _EAGLE):
            raise ToolResolutionError(f"404 booking_not_found: {booking_ref!r}")
        return f"Reply sent on {booking_ref.strip()}."

    @wf.tool
    def take_falconry_balance(booking_ref: str, amount: float) -> str:
        """Charge the card on file for a booking's balance."""
        return f"{amount} GBP charged on {booking_ref}."

    @wf.tool
    def change_falconry_guest_count(booking_ref: str, adults: int, children: int) -> str:
        """Change how many guests a booking is for (priced per guest)."""
        return f"{booking_ref} now {adults} adults, {children} children."

    return wf


def _check_falconry(tool: str, args: dict[str, Any]) -> bool:
    message = args.get("message")
    return (
        tool == "reply_falconry_guest"
        and exact(args.get("booking_ref"), _WALK)
        and str(args.get("status", "")).strip().upper() == "CONFIRMED"
        and str(args.get("experience_date", "")).strip() == _WALK_DAY
        and args.get("child_may_fly") is True
        and mentions(message, "09:40", "9:40", "twenty to ten")
        and has_number(message, 150)
    )


FALCONRY = Scenario(
    name="falconry_hawk_walk_guest_reply",
    description="Falconry: reply on FX-5012 (the hawk walk, not the attended FX-4477 nor the "
    "cancelled FX-5038), CONFIRMED, 2026-05-02, child_may_fly true (9, from 8; not the "
    "under-12 owl rule), and a message stating the 09:40 meet (not only the 10:00 start) "
    "and the 150.00 balance (not the 225.00 total, 75.00 deposit or 85.00 adult price).",
    tags=(HELDOUT13_TAG, "report_agrees"),
    user_message=(
        "Hi, Chidi Okonkwo, on 07700 900733. We've got the hawk walk coming up a week on "
        "Saturday. What time do we actually need to get there, will my nine-year-old be "
        "allowed to fly the hawks too, and how much is left to pay? Just asking for now, "
        "I'll pay on the day."
    ),
    build=_falconry,
    validate=_check_falconry,
    ideal_iterations=3,
    reference=(
        RefCall("find_falconry_bookings", {"phone": "07700 900733"}),
        RefCall("get_falconry_booking", {"booking_ref": _WALK}),
        RefCall(
            "reply_falconry_guest",
            {
                "booking_ref": _WALK,
                "status": "CONFIRMED",
                "experience_date": _WALK_DAY,
                "child_may_fly": True,
                "message": "Your Hawk Walk on Saturday 2 May is confirmed. Please meet at the "
                "mews at 09:40 for the safety talk; the walk sets off at 10:00. Children "
                "from 8 may fly the hawks beside a parent, so your son can. The balance is "
                "150.00 GBP, payable on the day.",
            },
        ),
    ),
    forbidden_tools=("take_falconry_balance", "change_falconry_guest_count"),
)


SCENARIOS: tuple[Scenario, ...] = (MILLINER, FALCONRY)
