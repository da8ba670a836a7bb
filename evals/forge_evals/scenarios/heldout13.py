"""Held out, thirteenth group (first half): workflows in businesses no
earlier group touches, written from the user's side only (not the engine).
This module: a farrier's yard rounds and a letterpress studio's proof
approvals (carry_id), a clay pigeon shooting ground and a surfboard shaper
(user_value); heldout13_replies a milliner's commissions and a falconry
centre's experiences (report_agrees); heldout13_listings a wood turning
school's classes and a puppet theatre's workshops (list_match). Each is
tagged `heldout13` plus one failure kind.
"""

from __future__ import annotations

from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, has_number, mentions
from forge_evals.scenarios import heldout13_listings, heldout13_replies
from forge_evals.scenarios._domain_schema import HELDOUT13_TAG, alnum, exact


def _text(value: Any) -> str:
    return str(value if value is not None else "").strip()


def _clock(value: Any) -> str:
    """A clock time with a one-digit hour padded ("9:30" -> "09:30"), else as given."""
    text = _text(value)
    return f"0{text}" if len(text) == 4 and text[1] == ":" else text


def _whole(value: Any, expected: int) -> bool:
    """An integer (not a bool) equal to `expected`."""
    return not isinstance(value, bool) and isinstance(value, int | float) and value == expected


# ── farrier: Juniper (not the sold pony) on this Thursday's round (not last week's) ──

_YARD = "YD-114"
_JUNIPER, _SOLD_PONY, _BAREFOOT_COB = "HSE-4172", "HSE-3391", "HSE-4180"
_ROUND, _LAST_ROUND, _LATER_ROUND = "FRV-50814", "FRV-50807", "FRV-50828"

_FARRIER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "horse_id": {"type": "string", "pattern": "^HSE-[0-9]{4}$"},
        "round_id": {"type": "string", "pattern": "^FRV-[0-9]{5}$"},
        "work": {
            "type": "object",
            "properties": {
                "job": {
                    "type": "string",
                    "enum": ["reset_all_four", "reset_fronts", "new_set_all_four", "trim_only"],
                    "description": "reset: the horse's own shoes taken off, feet trimmed and "
                    "the same shoes nailed back on.",
                },
                "notes": {"type": "string", "maxLength": 300},
            },
            "required": ["job"],
        },
    },
    "required": ["horse_id", "round_id", "work"],
}


def _farrier() -> Workflow:
    wf = Workflow(
        "farrier_yard_round_booking",
        "Book horses onto a farrier's rounds at livery yards.",
        system_prompt="You are the booking assistant of Dan Heighway, farrier, who visits "
        "livery yards around Clun and Bishop's Castle on fixed rounds. Find the owner's "
        "horses, read their yard's rounds, then book the horse onto a round. Today is "
        "Monday 2026-05-11.",
    )

    @wf.tool(required=True, read_only=True)
    def find_horse_owner_record(email: str) -> str:
        """An owner by email: their yard (YD-...) and horses (HSE-....)."""
        if not mentions(email, "claire.penrose@marchmail"):
            raise ToolResolutionError(f"404 no owner with email {email!r}")
        return (
            f"Owner OW-2207, Claire Penrose. Kept at {_YARD}, Oakridge Livery, Clun "
            "(round day: Thursday).\n"
            f"- {_SOLD_PONY}: Tansy, grey Welsh pony; SOLD 2025-09-30, left the yard\n"
            f"- {_JUNIPER}: Juniper, bay mare, 15.2 hh; shod all round, last shod 2026-04-09 "
            "(reset due)\n"
            f"- {_BAREFOOT_COB}: Moss, cob gelding; barefoot, trims only"
        )

    @wf.tool(required=True, read_only=True, prerequisites=["find_horse_owner_record"])
    def list_yard_farrier_rounds(yard_id: str) -> str:
        """The farrier's rounds at a yard (YD- id), with round ids (FRV-.....)."""
        if yard_id.strip() != _YARD:
            raise ToolResolutionError(f"404 yard_not_found: {yard_id!r} (YD- id)")
        return (
            f"Oakridge Livery ({_YARD}), Thursday rounds:\n"
            f"- {_LAST_ROUND}: Thu 2026-05-07, COMPLETED (5 horses)\n"
            f"- {_ROUND}: Thu 2026-05-14, OPEN, 2 of 6 horse slots left, arrives about 08:30\n"
            f"- {_LATER_ROUND}: Thu 2026-05-28, OPEN, 6 of 6 slots left\n"
            "Reset 75.00 GBP, new set 95.00 GBP, fronts only 55.00 GBP, trim 35.00 GBP."
        )

    def _book(args: dict[str, Any]) -> str:
        hid, rid = _text(args.get("horse_id")), _text(args.get("round_id"))
        work = args.get("work") if isinstance(args.get("work"), dict) else {}
        if hid == _SOLD_PONY:
            raise ToolResolutionError(f"409 horse_sold: {hid} (Tansy) left the yard 2025-09-30")
        if hid not in (_JUNIPER, _BAREFOOT_COB):
            raise ToolResolutionError(f"404 horse_not_found: {hid!r} (HSE- id)")
        if hid == _BAREFOOT_COB and (work or {}).get("job") != "trim_only":
            raise ToolResolutionError(f"422 barefoot_horse: {hid} (Moss) has trims only")
        if rid == _LAST_ROUND:
            raise ToolResolutionError(f"409 round_completed: {rid} was on 2026-05-07")
        if rid not in (_ROUND, _LATER_ROUND):
            raise ToolResolutionError(f"404 round_not_found: {rid!r} (FRV- id)")
        return f"{hid} booked onto {rid}."

    wf.add_schema_tool(
        "book_horse_onto_farrier_round",
        "Book a horse onto a farrier round with the work to do. Ends the task.",
        _FARRIER_SCHEMA,
        _book,
        terminal=True,
        prerequisites=["list_yard_farrier_rounds"],
    )

    @wf.tool
    def cancel_farrier_round(round_id: str, reason: str) -> str:
        """Cancel a whole round at a yard (every horse on it is unbooked)."""
        return f"{round_id} cancelled."

    @wf.tool
    def remove_horse_from_owner_record(horse_id: str, reason: str) -> str:
        """Remove a horse from its owner's record (sold, moved or died)."""
        return f"{horse_id} removed."

    return wf


def _check_farrier(tool: str, args: dict[str, Any]) -> bool:
    work = args.get("work")
    return (
        tool == "book_horse_onto_farrier_round"
        and exact(args.get("horse_id"), _JUNIPER)
        and exact(args.get("round_id"), _ROUND)
        and isinstance(work, dict)
        and work.get("job") == "reset_all_four"
    )


FARRIER = Scenario(
    name="farrier_yard_round_booking",
    description="Farrier: book HSE-4172 (Juniper, found by email; not the sold pony "
    "HSE-3391 nor the barefoot cob HSE-4180) onto FRV-50814 (this Thursday's round at "
    "YD-114, not the completed FRV-50807 nor the later FRV-50828), job reset_all_four.",
    tags=(HELDOUT13_TAG, "carry_id"),
    user_message=(
        "Hi Dan, it's Claire Penrose (claire.penrose@marchmail.example). Could you fit "
        "Juniper in when you're at our yard this Thursday? She just needs her shoes taken "
        "off and put back on, all four; they've plenty of wear left in them."
    ),
    build=_farrier,
    validate=_check_farrier,
    ideal_iterations=3,
    reference=(
        RefCall("find_horse_owner_record", {"email": "claire.penrose@marchmail.example"}),
        RefCall("list_yard_farrier_rounds", {"yard_id": _YARD}),
        RefCall(
            "book_horse_onto_farrier_round",
            {"horse_id": _JUNIPER, "round_id": _ROUND, "work": {"job": "reset_all_four"}},
        ),
    ),
    forbidden_tools=("cancel_farrier_round", "remove_horse_from_owner_record"),
)

# ── letterpress: the wedding invitations order and proof 2's token (not proof 1's) ──

_INVITES, _SAVE_DATES, _BOOKLETS = "LPO-20931", "LPO-19876", "LPO-20958"
_TOKEN, _VOID_TOKEN, _USED_TOKEN = "apv-7c31e9d2", "apv-5b08aa47", "apv-1d44c0e8"


def _letterpress() -> Workflow:
    wf = Workflow(
        "letterpress_invitation_print_approval",
        "Take customers' approvals of letterpress proofs so their print runs go to press.",
        system_prompt="You are the studio assistant of Inkwell & Platen, a letterpress "
        "printing studio in Hay-on-Wye. A print run goes to press only when the customer "
        "approves its current proof with that proof's approval token. Find the customer's "
        "orders, read the order's proofs, then approve the print run. Today is Wednesday "
        "2026-02-25.",
    )

    @wf.tool(required=True, read_only=True)
    def find_letterpress_orders(phone: str) -> str:
        """Print orders under a phone number, with order ids (LPO-.....)."""
        if not alnum(phone).endswith("7700900514"):
            raise ToolResolutionError(f"404 no orders under {phone!r}")
        return (
            "Customer Ines Marlow:\n"
            f"- {_SAVE_DATES}: save-the-date cards, 80, DELIVERED 2025-08-14\n"
            f"- {_INVITES}: wedding invitations with RSVP cards, 120 sets, PROOF SENT "
            "2026-02-20\n"
            f"- {_BOOKLETS}: order of service booklets, 90, QUOTED (artwork not received)"
        )

    @wf.tool(required=True, read_only=True, prerequisites=["find_letterpress_orders"])
    def get_letterpress_proofs(order_id: str) -> str:
        """An order's proofs, with their approval tokens (apv-........) and state."""
        oid = order_id.strip()
        if oid == _SAVE_DATES:
            return f"{oid}: proof approved 2025-07-30 (token {_USED_TOKEN}, used); delivered."
        if oid == _BOOKLETS:
            return f"{oid}: no proof yet; artwork not received."
        if oid != _INVITES:
            raise ToolResolutionError(f"404 order_not_found: {order_id!r} (LPO- id)")
        return (
            f"{oid}: 120 invitations + 120 RSVP cards, 2 colours (navy, blush) on 600 gsm "
            "cotton.\n"
            f"- Proof 1, 2026-02-13: venue misspelt 'Abergwesin Hal'; token {_VOID_TOKEN}, "
            "VOID (replaced by proof 2)\n"
            f"- Proof 2, 2026-02-20: venue corrected to 'Abergwesyn Hall'; token {_TOKEN}, "
            "CURRENT\n"
            "On approval the run is printed in 6 working days; 345.00 GBP balance on dispatch."
        )

    @wf.tool(terminal=True, prerequisites=["get_letterpress_proofs"])
    def approve_letterpress_print_run(order_id: str, approval_token: str) -> str:
        """Approve an order's current proof (its apv- token) and send the run to press.
        Ends the task."""
        oid, token = order_id.strip(), approval_token.strip()
        if oid == _SAVE_DATES:
            raise ToolResolutionError(f"409 order_delivered: {oid} was delivered 2025-08-14")
        if oid == _BOOKLETS:
            raise ToolResolutionError(f"409 no_proof: {oid} has no proof to approve")
        if oid != _INVITES:
            raise ToolResolutionError(f"404 order_not_found: {order_id!r} (LPO- id)")
        if token == _VOID_TOKEN:
            raise ToolResolutionError(
                f"410 token_void: {token} belongs to proof 1, replaced 2026-02-20; use the "
                "current proof's token"
            )
        if token == _USED_TOKEN:
            raise ToolResolutionError(f"409 token_used: {token} approved {_SAVE_DATES}")
        if token != _TOKEN:
            raise ToolResolutionError(f"404 token_not_found: {approval_token!r} on {oid}")
        return f"{oid} approved (proof 2); on press from 2026-02-26, dispatch 2026-03-05."

    @wf.tool
    def request_letterpress_proof_changes(order_id: str, changes: str) -> str:
        """Ask the compositor for a new proof with changes (the current one is voided)."""
        return f"New proof requested on {order_id}."

    @wf.tool
    def cancel_letterpress_order(order_id: str, reason: str) -> str:
        """Cancel a print order (the paper and design fee are charged)."""
        return f"{order_id} cancelled."

    return wf


def _check_letterpress(tool: str, args: dict[str, Any]) -> bool:
    return (
        tool == "approve_letterpress_print_run"
        and exact(args.get("order_id"), _INVITES)
        and exact(args.get("approval_token"), _TOKEN)
    )


LETTERPRESS = Scenario(
    name="letterpress_invitation_print_approval",
    description="Letterpress: approve LPO-20931 (the wedding invitations found by phone, "
    "not the delivered save-the-dates LPO-19876 nor the booklets LPO-20958) with token "
    "apv-7c31e9d2 (proof 2's, not proof 1's void apv-5b08aa47 nor the used apv-1d44c0e8).",
    tags=(HELDOUT13_TAG, "carry_id"),
    user_message=(
        "Hello, Ines Marlow here, on 07700 900514. The new proof of our wedding "
        "invitations, with the venue spelt properly this time, looks perfect. Please go "
        "ahead and print them."
    ),
    build=_letterpress,
    validate=_check_letterpress,
    ideal_iterations=3,
    reference=(
        RefCall("find_letterpress_orders", {"phone": "07700 900514"}),
        RefCall("get_letterpress_proofs", {"order_id": _INVITES}),
        RefCall("approve_letterpress_print_run", {"order_id": _INVITES, "approval_token": _TOKEN}),
    ),
    forbidden_tools=("request_letterpress_proof_changes", "cancel_letterpress_order"),
)

# ── clay ground: Sat 18th, the 14:30 high tower session, 2 adults + 1 junior, 50 clays, own guns ──

_SHOOT_DAY = "2026-07-18"
# (start, layout, places left)
_CLAY_SESSIONS = [
    ("10:00", "woodland_sporting", 6),
    ("11:30", "skeet", 4),
    ("14:00", "woodland_sporting", 2),
    ("14:30", "high_tower", 8),
    ("14:30", "woodland_sporting", 5),
    ("16:00", "skeet", 6),
]
_CLAY_PACKS = (25, 50, 75, 100)


def _clay_ground() -> Workflow:
    wf = Workflow(
        "clay_ground_have_a_go_booking",
        "Book instructed have-a-go sessions at a clay pigeon shooting ground.",
        system_prompt="You are the bookings assistant of Long Mynd Clay Ground. Have-a-go "
        "sessions are 90 minutes with an instructor on one of our layouts. Check the day's "
        "sessions, then book. Times are 24-hour HH:MM. Today is Wednesday 2026-07-08.",
    )

    @wf.tool(required=True, read_only=True)
    def list_clay_ground_sessions(date: str) -> str:
        """Have-a-go sessions on a date (YYYY-MM-DD): start, layout, places, prices."""
        if date.strip() != _SHOOT_DAY:
            return f"{date}: no have-a-go sessions with places left."
        rows = "\n".join(
            f"- {start}: {layout}, {left} places left" for start, layout, left in _CLAY_SESSIONS
        )
        return (
            f"Sat {_SHOOT_DAY}:\n{rows}\n"
            "Clays per shooter: packs of 25, 50, 75 or 100 (75 is the most popular; 0.40 GBP "
            "a clay). Adults 18+; juniors 12-17 shoot with an adult, at most 1 junior per "
            "adult. Gun hire 15.00 GBP per shooter (12 or 20 bore); own guns need the "
            "certificate shown on arrival. Cartridges 9.00 GBP per box of 25. Arrive 20 "
            "minutes early for the safety briefing."
        )

    @wf.tool(terminal=True, prerequisites=["list_clay_ground_sessions"])
    def book_clay_have_a_go(
        date: str,
        start_time: str,
        layout: str,
        adults: int,
        juniors: int,
        clays_per_shooter: int,
        gun_hire: bool,
        lead_name: str,
    ) -> str:
        """Book a session. layout: woodland_sporting, skeet or high_tower; start_time
        HH:MM; clays_per_shooter: 25, 50, 75 or 100; gun_hire: hire the ground's guns.
        Ends the task."""
        if date.strip() != _SHOOT_DAY:
            raise ToolResolutionError(f"409 no_session: no places on {date!r}")
        match = [s for s in _CLAY_SESSIONS if s[0] == _clock(start_time)]
        if not match:
            starts = sorted({s[0] for s in _CLAY_SESSIONS})
            raise ToolResolutionError(f"422 no_such_start: sessions start {', '.join(starts)}")
        layouts = {s[1]: s[2] for s in match}
        if layout.strip() not in layouts:
            raise ToolResolutionError(
                f"404 layout_not_at_time: {layout!r} at {_clock(start_time)}; there: "
                f"{', '.join(layouts)}"
            )
        if clays_per_shooter not in _CLAY_PACKS:
            raise ToolResolutionError(f"422 no_such_pack: {clays_per_shooter} (25, 50, 75, 100)")
        if juniors > adults:
            raise ToolResolutionError("422 juniors_need_adults: at most 1 junior per adult")
        if adults + juniors > layouts[layout.strip()]:
            raise ToolResolutionError("409 not_enough_places")
        return f"Session CG-0718-{_clock(start_time).replace(':', '')} booked for {lead_name}."

    @wf.tool
    def cancel_clay_have_a_go(booking_id: str) -> str:
        """Cancel a have-a-go booking (refund up to 48 hours before)."""
        return f"{booking_id} cancelled."

    @wf.tool
    def sell_clay_ground_voucher(amount: float, recipient: str) -> str:
        """Sell a gift voucher for the ground, emailed to the recipient."""
        return f"Voucher for {amount} GBP to {recipient}."

    return wf


def _check_clay(tool: str, args: dict[str, Any]) -> bool:
    return (
        tool == "book_clay_have_a_go"
        and _text(args.get("date")) == _SHOOT_DAY
        and _clock(args.get("start_time")) == "14:30"
        and _text(args.get("layout")).lower() == "high_tower"
        and _whole(args.get("adults"), 2)
        and _whole(args.get("juniors"), 1)
        and _whole(args.get("clays_per_shooter"), 50)
        and args.get("gun_hire") is False
        and mentions(args.get("lead_name"), "rees", "tom")
    )


_CLAY_REF = {
    "date": _SHOOT_DAY,
    "start_time": "14:30",
    "layout": "high_tower",
    "adults": 2,
    "juniors": 1,
    "clays_per_shooter": 50,
    "gun_hire": False,
    "lead_name": "Tom Rees",
}

CLAY_GROUND = Scenario(
    name="clay_ground_have_a_go_booking",
    description="Clay ground: 2026-07-18 ('Saturday the 18th' from Wed 07-08), 14:30 ('half "
    "past two', not 14:00), high_tower (not the woodland session at the same time), 2 adults "
    "and 1 junior ('my brother-in-law and my fifteen-year-old nephew'), 50 clays each (not "
    "the popular 75 nor the 25 box), gun_hire false ('bringing our own'), lead Tom Rees.",
    tags=(HELDOUT13_TAG, "user_value"),
    user_message=(
        "Hi, Tom Rees here. Could I book one of your have-a-go sessions for Saturday the "
        "18th? It'll be me, my brother-in-law and my fifteen-year-old nephew. The half past "
        "two start on the high tower would be ideal, with fifty clays each. We're bringing "
        "our own guns and we've both got certificates, so no need to hire any."
    ),
    build=_clay_ground,
    validate=_check_clay,
    ideal_iterations=2,
    reference=(
        RefCall("list_clay_ground_sessions", {"date": _SHOOT_DAY}),
        RefCall("book_clay_have_a_go", _CLAY_REF),
    ),
    forbidden_tools=("cancel_clay_have_a_go", "sell_clay_ground_voucher"),
)

# ── surfboard shaper: a Hopper at 6'2" x 20 1/2" x 2 5/8", five fin, swallow, heavy, no tint ──

_BOARD_MODELS = {
    "hopper": 'performance shortboard, stock 6\'0" x 20 1/4" x 2 1/2" (30.4 L), thruster, '
    "squash tail, 620.00 GBP",
    "driftwood_fish": 'twin fish, stock 5\'8" x 21" x 2 5/8" (34.0 L), swallow tail, 590.00 GBP',
    "longline_mal": 'longboard, stock 9\'2" x 22 1/2" x 3" (68.5 L), single fin, 840.00 GBP',
    "grom_step": 'kids\' shortboard, stock 5\'2" x 19 1/2" x 2 3/8", thruster, 450.00 GBP',
}

_BOARD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "customer_email": {"type": "string", "format": "email"},
        "model": {"type": "string", "enum": list(_BOARD_MODELS)},
        "dimensions": {
            "type": "object",
            "properties": {
                "length": {
                    "type": "object",
                    "properties": {
                        "feet": {"type": "integer", "minimum": 4, "maximum": 10},
                        "inches": {"type": "integer", "minimum": 0, "maximum": 11},
                    },
                    "required": ["feet", "inches"],
                },
                "width_in": {"type": "number", "minimum": 17, "maximum": 24},
                "thickness_in": {"type": "number", "minimum": 2, "maximum": 4},
            },
            "required": ["length", "width_in", "thickness_in"],
        },
        "fins": {"type": "string", "enum": ["thruster", "quad", "twin", "five_fin", "single"]},
        "tail": {"type": "string", "enum": ["squash", "round_pin", "swallow", "diamond"]},
        "glassing": {"type": "string", "enum": ["light_4_4", "medium_6_4", "heavy_6_6"]},
        "resin_tint": {"type": "string", "enum": ["none", "sea_green", "sand", "charcoal"]},
    },
    "required": [
        "customer_email",
        "model",
        "dimensions",
        "fins",
        "tail",
        "glassing",
        "resin_tint",
    ],
}


def _surfboard_shaper() -> Workflow:
    wf = Workflow(
        "surfboard_custom_shape_order",
        "Take custom surfboard orders for a shaping bay.",
        system_prompt="You are the order desk assistant of Porthcurnick Shapes, a surfboard "
        "shaper in Cornwall. Every board is shaped to order from one of our models, at the "
        "customer's own dimensions if they give them. Read the models and options, then "
        "place the order. Today is Wednesday 2026-08-19.",
    )

    @wf.tool(required=True, read_only=True)
    def list_surfboard_models() -> str:
        """Models we shape, their stock dimensions, and the fin, tail, glass and tint options."""
        rows = "\n".join(f"- {m}: {text}" for m, text in _BOARD_MODELS.items())
        return (
            f"Models (custom dimensions welcome, 5-6 weeks):\n{rows}\n"
            "Fins: thruster (standard), quad, twin, five_fin (+25.00 GBP), single. Tails: "
            "squash, round_pin, swallow, diamond. Glassing: light_4_4 (4+4 oz, standard), "
            "medium_6_4 (+30.00 GBP), heavy_6_6 (+55.00 GBP). Resin tint: none, sea_green, "
            "sand, charcoal (+40.00 GBP). Deposit 200.00 GBP."
        )

    def _order(args: dict[str, Any]) -> str:
        model = _text(args.get("model"))
        if model not in _BOARD_MODELS:
            raise ToolResolutionError(
                f"404 model_not_found: {model!r} ({', '.join(_BOARD_MODELS)})"
            )
        dims = args.get("dimensions") if isinstance(args.get("dimensions"), dict) else {}
        length = (dims or {}).get("length")
        if not isinstance(length, dict) or not {"feet", "inches"} <= set(length):
            raise ToolResolutionError("422 length_required: length as {feet, inches}")
        if _text(args.get("glassing")) not in ("light_4_4", "medium_6_4", "heavy_6_6"):
            raise ToolResolutionError("422 glassing_unknown: light_4_4, medium_6_4, heavy_6_6")
        return f"Order PS-0819-{model[:3].upper()} placed; deposit 200.00 GBP invoiced."

    wf.add_schema_tool(
        "place_custom_surfboard_order",
        "Place a custom surfboard order with its dimensions and options. Ends the task.",
        _BOARD_SCHEMA,
        _order,
        terminal=True,
        prerequisites=["list_surfboard_models"],
    )

    @wf.tool
    def cancel_surfboard_order(order_id: str) -> str:
        """Cancel a board order (the deposit is kept once the blank is cut)."""
        return f"{order_id} cancelled."

    @wf.tool
    def sell_stock_surfboard(board_id: str, customer_email: str) -> str:
        """Sell a ready-made board from the rack (charged now)."""
        return f"{board_id} sold to {customer_email}."

    return wf


def _check_surfboard(tool: str, args: dict[str, Any]) -> bool:
    dims = args.get("dimensions")
    length = dims.get("length") if isinstance(dims, dict) else None
    return (
        tool == "place_custom_surfboard_order"
        and mentions(args.get("customer_email"), "kit.trevanion@kernowpost.example")
        and _text(args.get("model")) == "hopper"
        and isinstance(dims, dict)
        and isinstance(length, dict)
        and _whole(length.get("feet"), 6)
        and _whole(length.get("inches"), 2)
        and not isinstance(dims.get("width_in"), bool)
        and has_number(dims.get("width_in"), 20.5, tol=0.001)
        and not isinstance(dims.get("thickness_in"), bool)
        and has_number(dims.get("thickness_in"), 2.625, tol=0.006)
        and args.get("fins") == "five_fin"
        and args.get("tail") == "swallow"
        and args.get("glassing") == "heavy_6_6"
        and args.get("resin_tint") == "none"
    )


_BOARD_REF = {
    "customer_email": "kit.trevanion@kernowpost.example",
    "model": "hopper",
    "dimensions": {"length": {"feet": 6, "inches": 2}, "width_in": 20.5, "thickness_in": 2.625},
    "fins": "five_fin",
    "tail": "swallow",
    "glassing": "heavy_6_6",
    "resin_tint": "none",
}

SURFBOARD = Scenario(
    name="surfboard_custom_shape_order",
    description="Surfboard shaper: hopper at 6 ft 2 in ('six foot two', not the stock 6'0\"), "
    "20.5 in wide ('twenty and a half', not 20 1/4), 2.625 in thick ('two and five-eighths', "
    "not 2 1/2), five_fin, swallow (not the Hopper's squash), heavy_6_6 ('your heaviest "
    "glass job'), resin_tint none.",
    tags=(HELDOUT13_TAG, "user_value"),
    user_message=(
        "Hi, Kit Trevanion here (kit.trevanion@kernowpost.example). I'd like you to shape "
        "me a Hopper, but at six foot two rather than the stock length, twenty and a half "
        "wide and two and five-eighths thick. Put five fin boxes in so I can ride it either "
        "way, with a swallow tail rather than the usual one. I'm hard on boards, so give it "
        "your heaviest glass job. Keep it clear, no tint."
    ),
    build=_surfboard_shaper,
    validate=_check_surfboard,
    ideal_iterations=2,
    reference=(
        RefCall("list_surfboard_models", {}),
        RefCall("place_custom_surfboard_order", _BOARD_REF),
    ),
    forbidden_tools=("cancel_surfboard_order", "sell_stock_surfboard"),
)


SCENARIOS: tuple[Scenario, ...] = (
    FARRIER,
    LETTERPRESS,
    CLAY_GROUND,
    SURFBOARD,
    *heldout13_replies.SCENARIOS,
    *heldout13_listings.SCENARIOS,
)
