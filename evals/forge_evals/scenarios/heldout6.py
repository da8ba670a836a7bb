"""Held out, sixth group: workflows in businesses no earlier group touches,
written from the user's side only (not the engine) after `heldout5` had been
tuned on, and run once at the commit they were written on before any tuning
for them. This module: a self-storage site and a calibration laboratory
(carry_id), a made-to-measure blinds maker and a chimney sweep (user_value);
heldout6_listings an auction house and a gas engineer's landlord records
(report_agrees), a dance school's exam entries and a record shop's wants
list (list_match). Each is tagged `heldout6` plus one failure kind of issue
34 (the names `heldout` uses).
"""

from __future__ import annotations

import hashlib
import string
from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, has_number, mentions, same
from forge_evals.scenarios import heldout6_listings
from forge_evals.scenarios._domain_schema import HELDOUT6_TAG, alnum, exact

_BASE62 = string.digits + string.ascii_letters


def _derived_id(prefix: str, *parts: object) -> str:
    """A stable API-looking id for an input nobody expects (prefix + 10 chars)."""
    number = int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest(), 16)
    chars = []
    for _ in range(10):
        number, rest = divmod(number, 62)
        chars.append(_BASE62[rest])
    return prefix + "".join(chars)


# ── self storage: the ground-floor 50 sq ft unit, reserved for Saturday ──

_UNITS = {
    "U-RDG-1-014": "25 sq ft, ground floor, 18.50 GBP/week",
    "U-RDG-2-031": "50 sq ft, first floor (lift access), 27.00 GBP/week",
    "U-RDG-1-022": "50 sq ft, ground floor, drive-up door, 31.00 GBP/week",
    "U-RDG-1-027": "75 sq ft, ground floor, 38.00 GBP/week",
}
_GROUND_50 = "U-RDG-1-022"
_MOVE_IN = "2026-07-11"
_RESERVATION = "rsv_3TqX8wLp2M"
_SON_EMAIL = "tomasz.wojcik@post.example"


def _reservation_id(unit_id: str, move_in: str) -> str:
    """A reservation is for one unit from one day: another gets another id."""
    if (unit_id, move_in) == (_GROUND_50, _MOVE_IN):
        return _RESERVATION
    return _derived_id("rsv_", unit_id, move_in)


_RENTAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reservation_id": {"type": "string", "pattern": "^rsv_[A-Za-z0-9]{10}$"},
        "tenant": {
            "type": "object",
            "properties": {
                "full_name": {"type": "string", "minLength": 2},
                "email": {"type": "string", "format": "email"},
                "phone": {"type": "string", "pattern": "^\\+?[0-9 ]{10,16}$"},
            },
            "required": ["full_name", "email"],
            "additionalProperties": False,
        },
        "contents_cover": {
            "type": "string",
            "enum": ["own_insurance", "cover_2000", "cover_5000", "cover_10000"],
            "description": "Contents protection up to that value in GBP, or own insurance.",
        },
        "billing_cycle": {"type": "string", "enum": ["weekly", "four_weekly", "monthly"]},
    },
    "required": ["reservation_id", "tenant", "contents_cover"],
    "additionalProperties": False,
}


def _self_storage() -> Workflow:
    wf = Workflow(
        "self_storage_move_in",
        "Let storage units to customers of a self-storage company.",
        system_prompt="You are the lettings assistant of Boxwell Self Storage (sites: Reading "
        "RDG, Slough SLO, Basingstoke BSK). A unit is reserved for a move-in date and the "
        "rental is then started from the reservation. Today is Tuesday 2026-07-07.",
    )

    @wf.tool(required=True, read_only=True)
    def list_available_units(site_code: str, move_in_date: str) -> str:
        """Units free at a site from a move-in date (YYYY-MM-DD), with ids, size and price."""
        if not mentions(site_code, "rdg", "reading"):
            raise ToolResolutionError(f"unknown site {site_code!r}; sites are RDG, SLO, BSK")
        lines = "\n".join(f"- {uid} {text}" for uid, text in _UNITS.items())
        return f"Reading (RDG), free from {move_in_date.strip()}:\n{lines}"

    @wf.tool(required=True, prerequisites=["list_available_units"])
    def reserve_unit(unit_id: str, move_in_date: str) -> str:
        """Reserve a unit for a move-in date for 48 hours. Returns the reservation id."""
        uid, day = unit_id.strip().upper(), move_in_date.strip()
        if uid not in _UNITS:
            raise ToolResolutionError(f"404 unit_not_found: {unit_id!r}")
        if not ("2026-07-07" <= day <= "2026-10-31") or len(day) != 10:
            raise ToolResolutionError(
                f"422 invalid_move_in_date: {move_in_date!r} (YYYY-MM-DD, today or later)"
            )
        return (
            f"Reservation {_reservation_id(uid, day)} holds {uid} for move-in on {day} "
            "(48 hours). Offer: first 4 weeks half price. Gate PIN is issued at move-in; "
            "padlock sold on site (LCK-200, 9.99 GBP)."
        )

    wf.add_schema_tool(
        "start_storage_rental",
        "Start the rental of a reserved unit in the tenant's name and take the first "
        "payment. Ends the task.",
        _RENTAL_SCHEMA,
        lambda args: f"Rental agreement BX-RA-552180 started from {args.get('reservation_id')}.",
        terminal=True,
        prerequisites=["reserve_unit"],
    )

    @wf.tool
    def cancel_unit_reservation(reservation_id: str) -> str:
        """Cancel a reservation and release the unit."""
        return f"{reservation_id} cancelled."

    @wf.tool
    def order_packing_supplies(site_code: str, boxes: int, tape_rolls: int) -> str:
        """Order boxes and tape to collect at a site."""
        return f"{boxes} boxes and {tape_rolls} rolls of tape ordered at {site_code}."

    return wf


def _check_storage(tool: str, args: dict[str, Any]) -> bool:
    tenant = args.get("tenant")
    return (
        tool == "start_storage_rental"
        and exact(args.get("reservation_id"), _RESERVATION)
        and isinstance(tenant, dict)
        and mentions(tenant.get("full_name"), "stanis")
        and mentions(tenant.get("full_name"), "wojcik", "wójcik")
        and same(tenant.get("email"), _SON_EMAIL)
        and args.get("contents_cover") == "cover_2000"
    )


SELF_STORAGE_MOVE_IN = Scenario(
    name="self_storage_move_in",
    description="Self storage: start the rental from rsv_3TqX8wLp2M (the ground-floor 50 sq "
    "ft unit U-RDG-1-022 reserved for Saturday 2026-07-11; not the unit id, the first-floor "
    "unit's or another day's reservation), in the father's name with the son's email, "
    "cover_2000.",
    tags=(HELDOUT6_TAG, "carry_id"),
    user_message=(
        "Hi there, I need a storage unit at your Reading site from this Saturday. Fifty "
        "square foot should do it, but it has to be on the ground floor because my dad can't "
        "manage stairs. Please put it in his name, Stanisław Wójcik, but use my email for "
        f"everything: {_SON_EMAIL}. We'll take the two grand contents cover."
    ),
    build=_self_storage,
    validate=_check_storage,
    ideal_iterations=3,
    reference=(
        RefCall("list_available_units", {"site_code": "RDG", "move_in_date": _MOVE_IN}),
        RefCall("reserve_unit", {"unit_id": _GROUND_50, "move_in_date": _MOVE_IN}),
        RefCall(
            "start_storage_rental",
            {
                "reservation_id": _RESERVATION,
                "tenant": {"full_name": "Stanisław Wójcik", "email": _SON_EMAIL},
                "contents_cover": "cover_2000",
            },
        ),
    ),
    forbidden_tools=("cancel_unit_reservation",),
)

# ── calibration lab: the two wrenches' equipment ids, then the order's id ─

_INSTRUMENTS = {
    "eqp_7Hs2KdQ9": "Norbar TTi 60 torque wrench, serial TW-88412, 12-60 N m, due 2026-03-24",
    "eqp_7Hs2Lm4R": "Norbar TTi 200 torque wrench, serial TW-88419, 40-200 N m, due 2026-03-30",
    "eqp_7Hs2Np8W": "Fluke 87V multimeter, serial 41190227, due 2026-09-02",
    "eqp_7Hs3Aa1C": "Norbar TTi 60 torque wrench, serial TW-88491, 12-60 N m, due 2026-11-15",
}
_WRENCHES = ["eqp_7Hs2KdQ9", "eqp_7Hs2Lm4R"]
_ORDER_ID = "cal_8RzT2wKv5N"


def _order_id(items: list[Any], turnaround: str) -> str:
    """An order is for one set of instruments, accreditation and turnaround."""
    key = sorted(
        (str(i.get("equipment_id")).strip(), str(i.get("accreditation")))
        for i in items
        if isinstance(i, dict)
    )
    if key == [(e, "ukas") for e in _WRENCHES] and turnaround == "standard":
        return _ORDER_ID
    return _derived_id("cal_", key, turnaround)


def _create_order(args: dict[str, Any]) -> str:
    if alnum(args.get("account_number")) != "HE2210":
        raise ToolResolutionError(f"account_not_found: {args.get('account_number')!r}")
    items = args.get("items") or []
    for item in items:
        eid = str(item.get("equipment_id", "")).strip() if isinstance(item, dict) else item
        if eid not in _INSTRUMENTS:
            raise ToolResolutionError(
                f"equipment_not_found: {eid!r} (use the eqp_ id from the account's list, "
                "not the serial number)"
            )
    turnaround = str(args.get("turnaround"))
    days = 10 if turnaround == "standard" else 3
    return (
        f"Calibration order {_order_id(items, turnaround)}: {len(items)} instrument(s), "
        f"{turnaround} ({days} working days from receipt). Quote QT-26-1187: 148.00 GBP + VAT. "
        "Book a courier collection with the order id; print label LBL-4471902 for the box."
    )


_ITEM = {
    "type": "object",
    "properties": {
        "equipment_id": {"type": "string", "pattern": "^eqp_[A-Za-z0-9]{8}$"},
        "accreditation": {"type": "string", "enum": ["ukas", "traceable"]},
        "adjust_if_out_of_tolerance": {"type": "boolean"},
    },
    "required": ["equipment_id", "accreditation"],
    "additionalProperties": False,
}
_COLLECTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "order_id": {"type": "string", "pattern": "^cal_[A-Za-z0-9]{10}$"},
        "collection_date": {"type": "string", "format": "date"},
        "address": {
            "type": "object",
            "properties": {
                "company": {"type": "string"},
                "line1": {"type": "string"},
                "town": {"type": "string"},
                "postcode": {"type": "string", "maxLength": 10},
            },
            "required": ["company", "line1", "town", "postcode"],
            "additionalProperties": False,
        },
        "contact_name": {"type": "string"},
        "parcels": {"type": "integer", "minimum": 1, "maximum": 10},
    },
    "required": ["order_id", "collection_date", "address", "contact_name", "parcels"],
    "additionalProperties": False,
}


def _calibration_lab() -> Workflow:
    wf = Workflow(
        "calibration_order_collection",
        "Take calibration orders for an instrument calibration laboratory.",
        system_prompt="You take orders for Metrix Calibration Services, Southampton. An "
        "order lists the customer's registered instruments by equipment id; a courier then "
        "collects it by the order id. Today is Thursday 2026-03-19.",
    )

    @wf.tool(required=True, read_only=True)
    def list_account_instruments(account_number: str) -> str:
        """A customer account's registered instruments with equipment ids and serials."""
        if alnum(account_number) != "HE2210":
            raise ToolResolutionError(f"no account {account_number!r}")
        lines = "\n".join(f"- {eid} {text}" for eid, text in _INSTRUMENTS.items())
        return f"Account HE-2210 Harbourside Engineering Ltd, registered instruments:\n{lines}"

    wf.add_schema_tool(
        "create_calibration_order",
        "Order calibration of registered instruments. Returns the order id.",
        {
            "type": "object",
            "properties": {
                "account_number": {"type": "string"},
                "items": {"type": "array", "items": _ITEM, "minItems": 1, "maxItems": 20},
                "turnaround": {"type": "string", "enum": ["standard", "express"]},
            },
            "required": ["account_number", "items", "turnaround"],
            "additionalProperties": False,
        },
        _create_order,
        required=True,
        prerequisites=["list_account_instruments"],
    )
    wf.add_schema_tool(
        "book_courier_collection",
        "Book a courier to collect an order's instruments. Ends the task.",
        _COLLECTION_SCHEMA,
        lambda args: f"Collection CC-90114 booked for {args.get('order_id')}.",
        terminal=True,
        prerequisites=["create_calibration_order"],
    )

    @wf.tool
    def retire_instrument(equipment_id: str, reason: str) -> str:
        """Mark an instrument scrapped and stop its recall reminders."""
        return f"{equipment_id} retired."

    @wf.tool(read_only=True)
    def download_calibration_certificate(equipment_id: str) -> str:
        """The latest calibration certificate of an instrument as a PDF link."""
        return f"https://certs.metrix.example/{equipment_id}/latest.pdf"

    return wf


def _check_calibration(tool: str, args: dict[str, Any]) -> bool:
    address = args.get("address")
    return (
        tool == "book_courier_collection"
        and exact(args.get("order_id"), _ORDER_ID)
        and args.get("collection_date") == "2026-03-20"
        and isinstance(address, dict)
        and alnum(address.get("postcode")) == "BH151HJ"
        and mentions(args.get("contact_name"), "bev")
        and has_number(args.get("parcels"), 1)
    )


_ADDRESS = {
    "company": "Harbourside Engineering Ltd",
    "line1": "Unit 4, Quayside Trading Estate",
    "town": "Poole",
    "postcode": "BH15 1HJ",
}

CALIBRATION_ORDER_COLLECTION = Scenario(
    name="calibration_order_collection",
    description="Calibration lab: collect order cal_8RzT2wKv5N (both wrenches eqp_7Hs2KdQ9 and "
    "eqp_7Hs2Lm4R, UKAS, standard; not the serials, quote or label, not an order with "
    "TW-88491 or express), tomorrow 2026-03-20, one parcel, BH15 1HJ, ask for Bev.",
    tags=(HELDOUT6_TAG, "carry_id"),
    user_message=(
        "Morning, it's Harbourside Engineering, account HE-2210. Two of our torque wrenches "
        "are coming up for calibration, serials TW-88412 and TW-88419. We need UKAS certs "
        "this time round because a customer's auditing us, but normal turnaround is fine. "
        "Can you get them collected tomorrow? They'll both be in the one box. Goods-in is "
        "at Unit 4, Quayside Trading Estate, Poole BH15 1HJ; the driver should ask for Bev."
    ),
    build=_calibration_lab,
    validate=_check_calibration,
    ideal_iterations=3,
    reference=(
        RefCall("list_account_instruments", {"account_number": "HE-2210"}),
        RefCall(
            "create_calibration_order",
            {
                "account_number": "HE-2210",
                "items": [{"equipment_id": e, "accreditation": "ukas"} for e in _WRENCHES],
                "turnaround": "standard",
            },
        ),
        RefCall(
            "book_courier_collection",
            {
                "order_id": _ORDER_ID,
                "collection_date": "2026-03-20",
                "address": dict(_ADDRESS),
                "contact_name": "Bev",
                "parcels": 1,
            },
        ),
    ),
    forbidden_tools=("retire_instrument",),
)

# ── blinds: "one metre twenty", "two metres ten", a pair, "a week on Thursday"

_BLIND: dict[str, Any] = {
    "type": "object",
    "properties": {
        "room": {"type": "string"},
        "blind_type": {"type": "string", "enum": ["roller", "roman", "venetian", "vertical"]},
        "quantity": {"type": "integer", "minimum": 1, "maximum": 10},
        "width_mm": {"type": "integer", "minimum": 300, "maximum": 3000},
        "drop_mm": {"type": "integer", "minimum": 300, "maximum": 3500},
        "fit": {"type": "string", "enum": ["inside_recess", "outside_recess"]},
        "control_side": {"type": "string", "enum": ["left", "right"]},
        "fabric_code": {"type": "string", "pattern": "^[A-Z]{2}-[0-9]{3}$"},
        "lining": {"type": "string", "enum": ["none", "thermal", "blackout"]},
    },
    "additionalProperties": False,
}
_BLIND["required"] = [k for k in _BLIND["properties"] if k not in ("room", "lining")]
_BLIND_ORDER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "customer": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "address_line1": {"type": "string"},
                "postcode": {"type": "string", "maxLength": 10},
            },
            "required": ["name", "address_line1", "postcode"],
            "additionalProperties": False,
        },
        "items": {"type": "array", "items": _BLIND, "minItems": 1, "maxItems": 12},
        "fitting": {
            "type": "object",
            "properties": {
                "required": {"type": "boolean"},
                "date": {"type": "string", "format": "date"},
            },
            "required": ["required"],
            "additionalProperties": False,
        },
    },
    "required": ["customer", "items", "fitting"],
    "additionalProperties": False,
}


def _blinds() -> Workflow:
    wf = Workflow(
        "made_to_measure_blinds",
        "Take orders for a made-to-measure blinds company.",
        system_prompt="You take orders for Shadecraft Blinds, Halifax. Sizes are in "
        "millimetres; roller blinds cannot be lined. Our fitters work Monday to Saturday. "
        "Today is Monday 2026-10-12.",
    )

    @wf.tool(required=True, read_only=True)
    def list_fabrics(search: str) -> str:
        """Search fabrics by name or colour: codes and the blind types each suits."""
        if not mentions(search, "linen", "oat"):
            return f"No fabrics match {search!r}; try a colour or a material."
        return (
            "Fabrics matching:\n"
            "- LN-204 Oatmeal Linen: roller, roman\n"
            "- LN-207 Oat Weave: roller only\n"
            "- LN-210 Natural Linen: roman only\n"
            "- LN-231 Oatmeal Linen FR (flame retardant, commercial): roller"
        )

    wf.add_schema_tool(
        "place_blind_order",
        "Order made-to-measure blinds, with or without fitting; a deposit link is emailed. "
        "Ends the task.",
        _BLIND_ORDER_SCHEMA,
        lambda args: f"Order SC-26-30981 placed, {len(args.get('items') or [])} lines.",
        terminal=True,
        prerequisites=["list_fabrics"],
    )

    @wf.tool
    def send_fabric_samples(fabric_codes: list[str], postcode: str) -> str:
        """Post free fabric swatches."""
        return f"{len(fabric_codes)} samples posted to {postcode}."

    @wf.tool
    def book_measuring_visit(postcode: str, date: str) -> str:
        """Book a surveyor to measure the windows (refunded against an order)."""
        return f"Measuring visit at {postcode} on {date} booked."

    return wf


# Each blind as (type, width, drop, fit, control side, fabric, lining).
_BLIND_KEYS = ("blind_type", "width_mm", "drop_mm", "fit", "control_side", "fabric_code", "lining")
_ROLLER = ("roller", 1200, 900, "inside_recess", "right", "LN-204", "none")
_ROMAN = ("roman", 1850, 2100, "outside_recess", "left", "LN-204", "blackout")
_WANTED_BLINDS = sorted([_ROLLER, _ROLLER, _ROMAN], key=str)
_KITCHEN = {"room": "kitchen", "quantity": 2, **dict(zip(_BLIND_KEYS, _ROLLER, strict=True))}
_BEDROOM = {"room": "bedroom", "quantity": 1, **dict(zip(_BLIND_KEYS, _ROMAN, strict=True))}


def _each_blind(items: Any) -> list[tuple[Any, ...]]:
    """The order's blinds one by one (a line of quantity 2 counts twice)."""
    blinds: list[tuple[Any, ...]] = []
    for item in items if isinstance(items, list) else []:
        count = item.get("quantity")
        if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= 10:
            return []
        blind = tuple(item.get(k) for k in _BLIND_KEYS[:5])
        fabric = str(item.get("fabric_code")).strip().upper()
        blinds += [(*blind, fabric, item.get("lining") or "none")] * count
    return sorted(blinds, key=str)


def _check_blinds(tool: str, args: dict[str, Any]) -> bool:
    fitting, customer = args.get("fitting"), args.get("customer")
    return (
        tool == "place_blind_order"
        and _each_blind(args.get("items")) == _WANTED_BLINDS
        and isinstance(fitting, dict)
        and fitting.get("required") is True
        and fitting.get("date") == "2026-10-22"
        and isinstance(customer, dict)
        and alnum(customer.get("postcode")) == "HX78AD"
    )


MADE_TO_MEASURE_BLINDS = Scenario(
    name="made_to_measure_blinds",
    description="Blinds: two roller blinds 1200 x 900 mm ('one metre twenty by ninety "
    "centimetres') inside the recess, chain right, and one Roman 1850 x 2100 mm outside, "
    "chain left, blackout, all LN-204 Oatmeal Linen (not LN-207 or LN-231), fitted Thursday "
    "2026-10-22 ('a week on Thursday', not the 15th).",
    tags=(HELDOUT6_TAG, "user_value"),
    user_message=(
        "Hiya, we'd like to order some made-to-measure blinds please. Two roller blinds for "
        "the kitchen, both windows are the same, one metre twenty wide and ninety "
        "centimetres drop, fitted inside the recess with the chain on the right. Then a "
        "Roman blind for our bedroom, one metre eighty-five wide by two metres ten drop, "
        "that one outside the recess, chain on the left, with a blackout lining. The "
        "oatmeal linen from your brochure for all of them. Could your fitter come and put "
        "them up a week on Thursday? It's Helen and Rob Ashworth, 9 Mill Lane, Hebden "
        "Bridge HX7 8AD."
    ),
    build=_blinds,
    validate=_check_blinds,
    ideal_iterations=2,
    reference=(
        RefCall("list_fabrics", {"search": "oatmeal linen"}),
        RefCall(
            "place_blind_order",
            {
                "customer": {
                    "name": "Helen and Rob Ashworth",
                    "address_line1": "9 Mill Lane, Hebden Bridge",
                    "postcode": "HX7 8AD",
                },
                "items": [dict(_KITCHEN), dict(_BEDROOM)],
                "fitting": {"required": True, "date": "2026-10-22"},
            },
        ),
    ),
    forbidden_tools=("book_measuring_visit",),
)

# ── chimney sweep: the wood burner, "Tuesday the seventeenth", a phone in words


_SWEEP_PROPS: dict[str, Any] = {
    "property_id": {"type": "string", "pattern": "^PR-[0-9]{5}$"},
    "appliance_id": {"type": "string", "pattern": "^AP-[0-9]$"},
    "service": {
        "type": "string",
        "enum": ["standard_sweep", "sweep_and_nest_removal", "power_sweep"],
    },
    "date": {"type": "string", "format": "date"},
    "arrival_window": {
        "type": "string",
        "enum": ["08:00-10:00", "10:00-12:00", "12:00-14:00", "14:00-16:00"],
    },
    "certificate": {
        "type": "boolean",
        "description": "Issue a sweeping certificate (for insurers, HETAS).",
    },
    "on_site_contact": {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "phone": {"type": "string", "pattern": "^\\+?[0-9 ]{10,16}$"},
        },
        "required": ["name", "phone"],
        "additionalProperties": False,
    },
}
_SWEEP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": _SWEEP_PROPS,
    "required": list(_SWEEP_PROPS),
    "additionalProperties": False,
}


def _chimney_sweep() -> Workflow:
    wf = Workflow(
        "chimney_sweep_booking",
        "Book visits for a chimney sweeping business.",
        system_prompt="You book visits for Sootaway Chimney Sweeps, South Lakes. Find the "
        "property first. Today is Wednesday 2026-11-04.",
    )

    @wf.tool(required=True, read_only=True)
    def find_sweep_property(postcode: str, house: str) -> str:
        """Find a property by postcode and house name or number, with its appliances."""
        if alnum(postcode) != "LA62BD" or not mentions(house, "3", "church view"):
            raise ToolResolutionError(f"no property {house!r} at {postcode!r}")
        return (
            "Property PR-66120, 3 Church View, Kirkby Lonsdale LA6 2BD (Mrs J. Thwaite). "
            "Appliances:\n"
            "- AP-1 Clearview Vision 500 wood burner (lounge), 6 in liner, last swept "
            "2024-03-08\n"
            "- AP-2 open fireplace (dining room), capped off 2019, not in use"
        )

    wf.add_schema_tool(
        "book_chimney_sweep",
        "Book a sweep of one appliance's flue. Ends the task.",
        _SWEEP_SCHEMA,
        lambda args: f"Sweep SW-26-4410 booked for {args.get('appliance_id')}.",
        terminal=True,
        prerequisites=["find_sweep_property"],
    )

    @wf.tool
    def book_cctv_flue_survey(property_id: str, appliance_id: str, date: str) -> str:
        """Book a camera inspection of a flue (95 GBP)."""
        return f"CCTV survey of {appliance_id} on {date} booked."

    @wf.tool
    def cancel_sweep_visit(booking_reference: str) -> str:
        """Cancel a booked visit."""
        return f"{booking_reference} cancelled."

    return wf


def _check_sweep(tool: str, args: dict[str, Any]) -> bool:
    contact = args.get("on_site_contact")
    phone = alnum(contact.get("phone")) if isinstance(contact, dict) else ""
    return (
        tool == "book_chimney_sweep"
        and same(args.get("property_id"), "PR-66120")
        and same(args.get("appliance_id"), "AP-1")
        and args.get("service") == "sweep_and_nest_removal"
        and args.get("date") == "2026-11-17"
        and args.get("arrival_window") == "08:00-10:00"
        and args.get("certificate") is True
        and isinstance(contact, dict)
        and mentions(contact.get("name"), "graham")
        and phone in ("07700900312", "447700900312")
    )


_SWEEP: dict[str, Any] = {
    "property_id": "PR-66120",
    "appliance_id": "AP-1",
    "service": "sweep_and_nest_removal",
    "date": "2026-11-17",
    "arrival_window": "08:00-10:00",
    "certificate": True,
    "on_site_contact": {"name": "Graham Thwaite", "phone": "07700 900312"},
}

CHIMNEY_SWEEP_BOOKING = Scenario(
    name="chimney_sweep_booking",
    description="Chimney sweep: the wood burner AP-1 (not the capped fireplace), sweep and "
    "nest removal, Tuesday 2026-11-17 ('the seventeenth'), 08:00-10:00 ('before ten'), "
    "certificate yes, contact Graham on 07700 900312 (spoken 'oh seven seven double-oh...').",
    tags=(HELDOUT6_TAG, "user_value"),
    user_message=(
        "Hello, Jean Thwaite, 3 Church View, LA6 2BD. Could you send someone to sweep the "
        "log burner on Tuesday the seventeenth? First thing if possible, before ten. We "
        "think the jackdaws have been nesting up there over the summer, so the nest will "
        "need clearing too. I'll need a certificate for the insurance. I'm at work that "
        "day, so it'll be my husband Graham who lets you in; his mobile is oh seven seven "
        "double-oh, nine double-oh, three one two."
    ),
    build=_chimney_sweep,
    validate=_check_sweep,
    ideal_iterations=2,
    reference=(
        RefCall("find_sweep_property", {"postcode": "LA6 2BD", "house": "3 Church View"}),
        RefCall("book_chimney_sweep", dict(_SWEEP)),
    ),
    forbidden_tools=("cancel_sweep_visit",),
)


SCENARIOS: tuple[Scenario, ...] = (
    SELF_STORAGE_MOVE_IN,
    CALIBRATION_ORDER_COLLECTION,
    MADE_TO_MEASURE_BLINDS,
    CHIMNEY_SWEEP_BOOKING,
    *heldout6_listings.SCENARIOS,
)
