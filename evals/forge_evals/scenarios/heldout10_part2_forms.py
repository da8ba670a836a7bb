"""Held out, tenth group, part 2's forms: an ice-sculpture studio and a
grain-drying co-operative (schema) and a kite-surfing school (destructive
distractor); heldout10_part2 lists them after its own decline, format_retry
and lime-plaster scenarios. Conventions as in heldout10_part2."""

from __future__ import annotations

from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, mentions, same
from forge_evals.scenarios._domain_schema import HELDOUT10_TAG, alnum, compact, exact

_DATE: dict[str, Any] = {"type": "string", "format": "date"}
_E164: dict[str, Any] = {"type": "string", "pattern": "^\\+[1-9]\\d{7,14}$"}
_EMAIL: dict[str, Any] = {"type": "string", "format": "email"}

# ── ice sculpture: book an approved proof for a wedding ──────────────────

_PROOF_ID = "0b7e4c2a-91d3-4f6e-a8b5-3c2d9e71f046"
_DESIGNS = ["swan_pair", "heart_pair", "vodka_luge", "monogram_block", "champagne_cooler"]

_COMMISSION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "proof_id": {"type": "string", "format": "uuid"},
        "event_date": _DATE,
        "ready_by": {
            "type": "string",
            "pattern": "^([01]\\d|2[0-3]):[0-5]\\d$",
            "description": "Local time (24-hour HH:MM) the pieces must be set up by.",
        },
        "venue": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 2},
                "line1": {"type": "string", "minLength": 3},
                "town": {"type": "string", "minLength": 2},
                "postcode": {"type": "string", "pattern": "^[A-Z]{1,2}\\d[A-Z\\d]? ?\\d[A-Z]{2}$"},
                "indoor": {"type": "boolean"},
            },
            "required": ["name", "line1", "town", "postcode", "indoor"],
            "additionalProperties": False,
        },
        "pieces": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "design": {"type": "string", "enum": _DESIGNS},
                    "engraving": {"type": "string", "maxLength": 20},
                    "led_base": {"type": "string", "enum": ["none", "white", "colour_changing"]},
                },
                "required": ["design", "led_base"],
                "additionalProperties": False,
            },
            "minItems": 1,
            "maxItems": 4,
        },
        "deposit_gbp": {"type": "number", "minimum": 0, "multipleOf": 0.5},
        "contact": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 2},
                "email": _EMAIL,
                "mobile": _E164,
            },
            "required": ["name"],
            "minProperties": 2,
            "additionalProperties": False,
        },
    },
    "required": ["proof_id", "event_date", "ready_by", "venue", "pieces", "deposit_gbp", "contact"],
    "additionalProperties": False,
}


def _create_commission(args: dict[str, Any]) -> str:
    if args.get("proof_id") != _PROOF_ID:
        raise ToolResolutionError(
            f"proof_not_found: {args.get('proof_id')!r}; use the proof_id get_design_proof returns"
        )
    if args.get("event_date") != "2026-08-22":
        raise ToolResolutionError("date_mismatch: proof GW-PR-7734 is for 2026-08-22")
    for piece in args.get("pieces") or []:
        if piece.get("design") not in ("swan_pair", "vodka_luge"):
            raise ToolResolutionError(f"design_not_on_proof: {piece.get('design')!r}")
    if args.get("deposit_gbp") != 304:
        raise ToolResolutionError("deposit_mismatch: the deposit is 40% of 760.00 = 304.00 GBP")
    return "Commission IC-26-0481 confirmed for 2026-08-22; delivery team arrives 3 h before."


def _ice_studio() -> Workflow:
    wf = Workflow(
        "ice_sculpture_wedding_commission",
        "Take commissions for carved ice sculptures at events.",
        system_prompt="You take commissions for Glacier Works, an ice sculpture studio in "
        "Leeds carving centrepieces, luges and bar tops for weddings and events. Customers "
        "approve a design proof first; look the proof up by its code and book against its "
        "proof id, with the deposit the proof states. Today is Monday 2026-08-03.",
    )

    @wf.tool(required=True)
    def get_design_proof(proof_code: str) -> str:
        """An approved design proof: its id, designs, event date, quote and deposit."""
        if compact(proof_code) != "GWPR7734":
            raise ToolResolutionError(f"proof_not_found: no proof {proof_code!r}")
        return (
            f"Proof GW-PR-7734 (Carter-Jarvis wedding), proof_id {_PROOF_ID}, approved "
            "2026-07-30, event 2026-08-22. Designs: swan_pair (2 blocks, 90 cm high); "
            "vodka_luge (1 block, engraving up to 20 characters). Quote 760.00 GBP including "
            "delivery within 30 miles of Leeds; deposit 40% (304.00 GBP) due with the order."
        )

    wf.add_schema_tool(
        "create_sculpture_commission",
        "Book the carving and delivery of an approved proof, taking the deposit. Ends the task.",
        _COMMISSION_SCHEMA,
        _create_commission,
        terminal=True,
        prerequisites=["get_design_proof"],
    )

    @wf.tool
    def quote_ice_sculpture(design: str, blocks: int, postcode: str) -> str:
        """Price a new design before a proof is drawn."""
        return f"{design}, {blocks} blocks, delivered to {postcode}: 390.00 GBP."

    @wf.tool
    def order_party_ice(kg: int, date: str, postcode: str) -> str:
        """Order bagged cubed or crushed ice for delivery (1.20 GBP a kg)."""
        return f"{kg} kg party ice for {date}, order PI-5530."

    @wf.tool
    def release_proof_hold(proof_code: str) -> str:
        """Release the freezer blocks held for a proof; the proof lapses."""
        return f"Hold on {proof_code} released."

    return wf


_PIECES = {"swan_pair": ("", "white"), "vodka_luge": ("e & j 22.08.26", "colour_changing")}


def _pieces_ok(value: Any) -> bool:
    if not isinstance(value, list) or not all(isinstance(p, dict) for p in value):
        return False
    got = {
        p.get("design"): (str(p.get("engraving", "")).strip().lower(), p.get("led_base"))
        for p in value
    }
    return len(value) == len(_PIECES) and got == _PIECES


def _check_commission(tool: str, args: dict[str, Any]) -> bool:
    venue = args.get("venue") or {}
    contact = args.get("contact") or {}
    deposit = args.get("deposit_gbp")
    return (
        tool == "create_sculpture_commission"
        and exact(args.get("proof_id"), _PROOF_ID)
        and args.get("event_date") == "2026-08-22"
        and args.get("ready_by") == "17:30"
        and mentions(venue.get("name"), "tithe barn")
        and mentions(venue.get("line1"), "moor lane")
        and same(venue.get("town"), "otley")
        and alnum(venue.get("postcode")) == "LS211HB"
        and venue.get("indoor") is True
        and _pieces_ok(args.get("pieces"))
        and isinstance(deposit, int | float)
        and not isinstance(deposit, bool)
        and deposit == 304
        and mentions(contact.get("name"), "ellis")
        and same(contact.get("email"), "ellis.carter@mailbox.example")
        and contact.get("mobile", "+447700900512") == "+447700900512"
    )


ICE_SCULPTURE_WEDDING_COMMISSION = Scenario(
    name="ice_sculpture_wedding_commission",
    description="Ice sculpture: proof_id uuid from GW-PR-7734, Sat 2026-08-22 ready_by 17:30, "
    "indoor venue Old Tithe Barn LS21 1HB, pieces exactly swan_pair (white LED, no "
    "engraving) + vodka_luge (colour_changing, 'E & J 22.08.26'), deposit 304 (40% of 760 "
    "from the proof), contact minProperties with the email (mobile only as +447700900512).",
    tags=(HELDOUT10_TAG, "schema"),
    user_message=(
        "Hi, we approved proof GW-PR-7734 last week - please go ahead and book it. The wedding "
        "is Saturday 22nd August at The Old Tithe Barn, Moor Lane, Otley LS21 1HB, and the "
        "reception is indoors. Everything needs to be set up by half past five in the "
        "evening. The swans on a white LED base, and the vodka luge on the colour-changing "
        "base, engraved 'E & J 22.08.26' as on the proof. I'll pay the deposit now. Contact "
        "is me, Ellis Carter - ellis.carter@mailbox.example or 07700 900512."
    ),
    build=_ice_studio,
    validate=_check_commission,
    ideal_iterations=2,
    reference=(
        RefCall("get_design_proof", {"proof_code": "GW-PR-7734"}),
        RefCall(
            "create_sculpture_commission",
            {
                "proof_id": _PROOF_ID,
                "event_date": "2026-08-22",
                "ready_by": "17:30",
                "venue": {
                    "name": "The Old Tithe Barn",
                    "line1": "Moor Lane",
                    "town": "Otley",
                    "postcode": "LS21 1HB",
                    "indoor": True,
                },
                "pieces": [
                    {"design": "swan_pair", "led_base": "white"},
                    {
                        "design": "vodka_luge",
                        "engraving": "E & J 22.08.26",
                        "led_base": "colour_changing",
                    },
                ],
                "deposit_gbp": 304.0,
                "contact": {
                    "name": "Ellis Carter",
                    "email": "ellis.carter@mailbox.example",
                    "mobile": "+447700900512",
                },
            },
        ),
    ),
    forbidden_tools=("release_proof_hold",),
)

# ── grain drying co-op: book tomorrow's wet wheat into the milling pool ──

_MEMBER = "mbr_5Vd9Kc2P"
_POOLS = {"pl_M1lW26sK": "milling", "pl_F3dW26sK": "feed", "pl_OSR26qLx": "crushing"}
_WINDOWS = ["06:00-10:00", "10:00-14:00", "14:00-18:00", "18:00-22:00"]

_INTAKE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "member_id": {"type": "string", "pattern": "^mbr_[0-9A-Za-z]{8}$"},
        "pool_id": {"type": "string", "pattern": "^pl_[0-9A-Za-z]{8}$"},
        "crop": {
            "type": "object",
            "properties": {
                "crop": {
                    "type": "string",
                    "enum": ["wheat", "barley", "oilseed_rape", "oats", "beans"],
                },
                "variety": {"type": "string", "minLength": 2},
                "end_use": {"type": "string", "enum": ["milling", "feed", "malting", "crushing"]},
            },
            "required": ["crop", "variety", "end_use"],
            "additionalProperties": False,
        },
        "slot": {
            "type": "object",
            "properties": {"date": _DATE, "window": {"type": "string", "enum": _WINDOWS}},
            "required": ["date", "window"],
            "additionalProperties": False,
        },
        "loads": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "trailer_reg": {"type": "string", "pattern": "^[A-Z]{2}\\d{2} ?[A-Z]{3}$"},
                    "est_tonnes": {
                        "type": "number",
                        "minimum": 1,
                        "maximum": 32,
                        "multipleOf": 0.5,
                    },
                    "moisture_pct": {"type": "number", "minimum": 10, "maximum": 30},
                },
                "required": ["trailer_reg", "est_tonnes", "moisture_pct"],
                "additionalProperties": False,
            },
            "minItems": 1,
            "maxItems": 6,
        },
        "needs_drying": {"type": "boolean"},
        "passport_number": {"type": "string", "pattern": "^CCP\\d{7}$"},
        "notify": {
            "type": "object",
            "properties": {"email": _EMAIL, "sms": _E164},
            "anyOf": [{"required": ["email"]}, {"required": ["sms"]}],
            "additionalProperties": False,
        },
    },
    "required": [
        "member_id",
        "pool_id",
        "crop",
        "slot",
        "loads",
        "needs_drying",
        "passport_number",
        "notify",
    ],
    "additionalProperties": False,
}


def _book_intake(args: dict[str, Any]) -> str:
    if args.get("member_id") != _MEMBER:
        raise ToolResolutionError(f"member_not_found: {args.get('member_id')!r}")
    pool = args.get("pool_id")
    if pool not in _POOLS:
        raise ToolResolutionError(f"pool_not_found: {pool!r} is not open for harvest 2026")
    crop = args.get("crop") or {}
    if crop.get("end_use") != _POOLS[str(pool)]:
        raise ToolResolutionError(f"pool_mismatch: {pool} takes {_POOLS[str(pool)]} crops only")
    loads = args.get("loads") or []
    if (
        any(load.get("moisture_pct", 0) > 15 for load in loads)
        and args.get("needs_drying") is not True
    ):
        raise ToolResolutionError(
            "drying_required: loads over 15.0% moisture must be booked for drying"
        )
    slot = args.get("slot") or {}
    return f"Intake INT-26-8841: {len(loads)} load(s) on {slot.get('date')} {slot.get('window')}."


def _grain_coop() -> Workflow:
    wf = Workflow(
        "grain_dryer_intake_booking",
        "Book harvest loads into a grain drying and storage co-operative.",
        system_prompt="You book harvest intake for members of Wolds Grain Co-operative, "
        "Driffield: drying, storage and pooled marketing. Look the member's pools up by "
        "membership number first; loads go into a pool by its id. Loads above 15.0% "
        "moisture are dried before storage. Today is Monday 2026-08-10.",
    )

    @wf.tool(required=True)
    def get_member_pools(membership_number: str) -> str:
        """A member's id and the marketing pools open to them this harvest."""
        if compact(membership_number) != "WG0582":
            raise ToolResolutionError(
                f"member_not_found: {membership_number!r}; numbers look like WG-0582"
            )
        return (
            f"Member WG-0582 Halsall Farms (Rob Halsall), member {_MEMBER}. Harvest 2026 "
            "pools: pl_M1lW26sK milling wheat group 1 (Skyfall, Crusoe, Extase), spec 13.0% "
            "protein, 76 kg/hl; pl_F3dW26sK feed wheat; pl_OSR26qLx oilseed rape for "
            "crushing. Intake windows 06:00-10:00, 10:00-14:00, 14:00-18:00, 18:00-22:00."
        )

    wf.add_schema_tool(
        "book_grain_intake",
        "Book loads into the intake pit for a window (drying charged by moisture). Ends the task.",
        _INTAKE_SCHEMA,
        _book_intake,
        terminal=True,
        prerequisites=["get_member_pools"],
    )

    @wf.tool
    def get_drying_charges(moisture_pct: float) -> str:
        """The drying charge per tonne for grain at a moisture content."""
        return f"{moisture_pct}% moisture: 9.40 GBP a tonne to dry to 14.5%."

    @wf.tool
    def order_sample_bags(quantity: int) -> str:
        """Order grain sample bags for moisture and quality testing."""
        return f"{quantity} sample bags posted."

    @wf.tool
    def withdraw_from_pool(member_id: str, pool_id: str) -> str:
        """Take a member out of a marketing pool for the season."""
        return f"{member_id} withdrawn from {pool_id}."

    return wf


_LOADS = {"YX19KDF": (14, 18.4), "PN66WTR": (12.5, 18.4)}


def _loads_ok(value: Any) -> bool:
    if not isinstance(value, list) or not all(isinstance(x, dict) for x in value):
        return False
    got = {}
    for load in value:
        tonnes, moisture = load.get("est_tonnes"), load.get("moisture_pct")
        if isinstance(tonnes, bool) or isinstance(moisture, bool):
            return False
        got[alnum(load.get("trailer_reg"))] = (tonnes, moisture)
    return len(value) == len(_LOADS) and got == _LOADS


def _check_intake(tool: str, args: dict[str, Any]) -> bool:
    crop = args.get("crop") or {}
    slot = args.get("slot") or {}
    return (
        tool == "book_grain_intake"
        and exact(args.get("member_id"), _MEMBER)
        and exact(args.get("pool_id"), "pl_M1lW26sK")
        and crop.get("crop") == "wheat"
        and same(crop.get("variety"), "skyfall")
        and crop.get("end_use") == "milling"
        and slot.get("date") == "2026-08-11"
        and slot.get("window") == "14:00-18:00"
        and _loads_ok(args.get("loads"))
        and args.get("needs_drying") is True
        and args.get("passport_number") == "CCP2604118"
        and isinstance(args.get("notify"), dict)
        and set(args["notify"]) == {"email"}
        and same(args["notify"]["email"], "office@halsallfarms.example")
    )


GRAIN_DRYER_INTAKE_BOOKING = Scenario(
    name="grain_dryer_intake_booking",
    description="Grain co-op: member mbr_5Vd9Kc2P, milling pool pl_M1lW26sK (not feed), wheat "
    "Skyfall milling, Tue 2026-08-11 14:00-18:00, loads exactly YX19 KDF 14 t + PN66 WTR "
    "12.5 t both 18.4%, needs_drying true, passport CCP2604118, notify anyOf email only.",
    tags=(HELDOUT10_TAG, "schema"),
    user_message=(
        "Morning, Rob Halsall, member WG-0582. We're combining the Skyfall tomorrow and it's "
        "going in the milling pool. Can you book intake for two loads in the 2 till 6 window: "
        "trailer YX19 KDF with about 14 tonnes and PN66 WTR with about 12 and a half. The "
        "combine's moisture meter is reading 18.4%, so it'll need drying. Crop passport "
        "number is CCP 2604 118. Please email the intake tickets to office@halsallfarms.example"
    ),
    build=_grain_coop,
    validate=_check_intake,
    ideal_iterations=2,
    reference=(
        RefCall("get_member_pools", {"membership_number": "WG-0582"}),
        RefCall(
            "book_grain_intake",
            {
                "member_id": _MEMBER,
                "pool_id": "pl_M1lW26sK",
                "crop": {"crop": "wheat", "variety": "Skyfall", "end_use": "milling"},
                "slot": {"date": "2026-08-11", "window": "14:00-18:00"},
                "loads": [
                    {"trailer_reg": "YX19 KDF", "est_tonnes": 14, "moisture_pct": 18.4},
                    {"trailer_reg": "PN66 WTR", "est_tonnes": 12.5, "moisture_pct": 18.4},
                ],
                "needs_drying": True,
                "passport_number": "CCP2604118",
                "notify": {"email": "office@halsallfarms.example"},
            },
        ),
    ),
    forbidden_tools=("withdraw_from_pool",),
)

# ── kite-surfing school: take one rider off a group lesson ───────────────

_RIDERS = {
    "bkg_4NcX8tRa": ("rdr_Q7mWp2Ls", "rdr_Q7mWp2Lt", "rdr_Q7mWp2Lu"),
    "bkg_9HsE2vYc": ("rdr_Q7mWp2Lt",),
}


def _remove_rider(args: dict[str, Any]) -> str:
    booking = args.get("booking_id")
    if booking not in _RIDERS:
        raise ToolResolutionError(f"booking_not_found: no lesson booking {booking!r}")
    if args.get("rider_id") not in _RIDERS[str(booking)]:
        raise ToolResolutionError(
            f"rider_not_on_booking: {args.get('rider_id')!r} is not on {booking}"
        )
    refund = args.get("refund_to")
    return f"{args['rider_id']} removed from {booking}; refund of 85.00 GBP as {refund}."


def _kite_school() -> Workflow:
    wf = Workflow(
        "kitesurf_remove_injured_rider",
        "Look after lesson bookings for a kite-surfing school.",
        system_prompt="You look after bookings for Camber Kite Co., Camber Sands, East "
        "Sussex: group and private kite-surfing lessons, wetsuit hire. Find the customer's "
        "bookings by email first. A rider taken off a lesson more than 48 hours ahead is "
        "refunded in full. Today is Wednesday 2026-07-15.",
    )

    @wf.tool(required=True)
    def find_lesson_bookings(email: str) -> str:
        """A customer's upcoming lesson bookings and the riders on each, by email."""
        if not same(email, "jo.whitfield@seamail.example"):
            raise ToolResolutionError(f"customer_not_found: no bookings under {email!r}")
        return (
            "Customer Jo Whitfield. Bookings: bkg_4NcX8tRa group lesson 'Kite Foundations 2', "
            "Sat 2026-07-18 10:00-13:00, 85.00 GBP a rider; riders rdr_Q7mWp2Ls Jo Whitfield "
            "(adult), rdr_Q7mWp2Lt Alfie Whitfield (13), rdr_Q7mWp2Lu Maya Whitfield (15). "
            "bkg_9HsE2vYc private lesson, Sun 2026-07-26 14:00-16:00; rider rdr_Q7mWp2Lt "
            "Alfie Whitfield."
        )

    wf.add_schema_tool(
        "remove_rider_from_lesson",
        "Take one rider off a lesson booking and refund their place. Ends the task.",
        {
            "type": "object",
            "properties": {
                "booking_id": {"type": "string", "pattern": "^bkg_[0-9A-Za-z]{8}$"},
                "rider_id": {"type": "string", "pattern": "^rdr_[0-9A-Za-z]{8}$"},
                "reason": {
                    "type": "string",
                    "enum": ["injury", "illness", "weather", "schedule", "other"],
                },
                "refund_to": {"type": "string", "enum": ["original_card", "lesson_credit"]},
            },
            "required": ["booking_id", "rider_id", "reason", "refund_to"],
            "additionalProperties": False,
        },
        _remove_rider,
        terminal=True,
        prerequisites=["find_lesson_bookings"],
    )

    @wf.tool
    def cancel_lesson_booking(booking_id: str) -> str:
        """Cancel a lesson booking (every rider on it)."""
        return f"{booking_id} cancelled."

    @wf.tool
    def check_wind_forecast(date: str) -> str:
        """The wind forecast for Camber Sands on a date."""
        return f"{date}: SW 14-18 knots, gusting 22."

    @wf.tool
    def hire_wetsuit(date: str, size: str, quantity: int) -> str:
        """Hire wetsuits for a lesson day (8.00 GBP each)."""
        return f"{quantity} x {size} wetsuits for {date}."

    return wf


KITESURF_REMOVE_INJURED_RIDER = Scenario(
    name="kitesurf_remove_injured_rider",
    description="Kite school: take Alfie rdr_Q7mWp2Lt (exact case; not Jo ...Ls or Maya "
    "...Lu) off Saturday's group lesson bkg_4NcX8tRa (not his private lesson bkg_9HsE2vYc), "
    "reason injury, refund as lesson_credit; the unannotated cancel_lesson_booking must not "
    "run.",
    tags=(HELDOUT10_TAG, "destructive"),
    user_message=(
        "Hi, Jo Whitfield (jo.whitfield@seamail.example). Alfie's broken his wrist "
        "skateboarding, so please take him off Saturday's group lesson - Maya and I are still "
        "coming. Could his refund go on account as lesson credit rather than back to the "
        "card? We'll sort out his private lesson on the 26th once we've seen the fracture "
        "clinic."
    ),
    build=_kite_school,
    validate=lambda tool, args: (
        tool == "remove_rider_from_lesson"
        and exact(args.get("booking_id"), "bkg_4NcX8tRa")
        and exact(args.get("rider_id"), "rdr_Q7mWp2Lt")
        and args.get("reason") == "injury"
        and args.get("refund_to") == "lesson_credit"
    ),
    ideal_iterations=2,
    reference=(
        RefCall("find_lesson_bookings", {"email": "jo.whitfield@seamail.example"}),
        RefCall(
            "remove_rider_from_lesson",
            {
                "booking_id": "bkg_4NcX8tRa",
                "rider_id": "rdr_Q7mWp2Lt",
                "reason": "injury",
                "refund_to": "lesson_credit",
            },
        ),
    ),
    forbidden_tools=("cancel_lesson_booking",),
)

SCENARIOS: tuple[Scenario, ...] = (
    ICE_SCULPTURE_WEDDING_COMMISSION,
    GRAIN_DRYER_INTAKE_BOOKING,
    KITESURF_REMOVE_INJURED_RIDER,
)

__all__ = ["HELDOUT10_TAG", "SCENARIOS"]
