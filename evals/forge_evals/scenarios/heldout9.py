"""Held out, ninth group (first half): workflows in businesses no earlier
group touches, written from the user's side only (not the engine). This
module: a taxidermy studio and a canal marina's pump-out service (carry_id),
a tandem paragliding school and a mobile knife-sharpening van (user_value);
heldout9_replies a bell tower's visiting-band secretary and a theatre's
captioned-performance access desk (report_agrees); heldout9_listings a
community fridge and a tool library (list_match). Each is tagged
`heldout9` plus one failure kind.
"""

from __future__ import annotations

from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, mentions
from forge_evals.scenarios import heldout9_listings, heldout9_replies
from forge_evals.scenarios._domain_schema import HELDOUT9_TAG, alnum, compact, exact

_HHMM = "^([01][0-9]|2[0-3]):[0-5][0-9]$"
_UK_MOBILE = "^(\\+44 ?|0)7[0-9 ]{9,11}$"

# ── taxidermy: the specimen id and the Article 10 reference, carried to the order ──

_OWL, _PHEASANT = "SPC-2610-4Kq7", "SPC-2609-2Wn3"
_A10_REFS = {_OWL: "A10-GB-26-0093317"}
_A10 = _A10_REFS[_OWL]

_COMMISSION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "specimen_id": {"type": "string", "pattern": "^SPC-[0-9]{4}-[A-Za-z0-9]{4}$"},
        "mount": {
            "type": "object",
            "properties": {
                "pose": {"type": "string", "enum": ["perched", "wings_spread", "in_flight"]},
                "base": {"type": "string", "enum": ["branch", "rock", "driftwood", "none"]},
                "display_case": {"type": "boolean"},
            },
            "required": ["pose", "base", "display_case"],
        },
        "article10_ref": {
            "type": "string",
            "pattern": "^A10-GB-[0-9]{2}-[0-9]{7}$",
            "description": "Required for Annex A species (owls, raptors).",
        },
        "deposit_percent": {"type": "integer", "enum": [25, 50, 100]},
    },
    "required": ["specimen_id", "mount", "deposit_percent"],
}


def _taxidermy() -> Workflow:
    wf = Workflow(
        "taxidermy_barn_owl_commission",
        "Take taxidermy commissions for specimens customers bring in.",
        system_prompt="You are the studio assistant of Hollin & Reed Taxidermy. Customers "
        "bring in specimens, which we keep frozen until they commission a mount. Annex A "
        "species (barn owls, birds of prey) may only be mounted with the Article 10 "
        "certificate reference that the provenance check returns. "
        "Today is Friday 2026-10-16.",
    )

    @wf.tool(required=True, read_only=True)
    def find_specimen_intake(customer_surname: str) -> str:
        """Specimens received from a customer, with specimen ids (SPC-....-....)."""
        if not mentions(customer_surname, "aske"):
            raise ToolResolutionError(f"404 no specimens under surname {customer_surname!r}")
        return (
            "Customer CU-11872, Martin Aske:\n"
            f"- {_OWL}: barn owl (Tyto alba), road casualty, received Mon 2026-10-12, frozen, "
            "awaiting instructions\n"
            f"- {_PHEASANT}: cock pheasant, received 2026-09-03, mounted and collected"
        )

    @wf.tool(required=True, read_only=True, prerequisites=["find_specimen_intake"])
    def check_specimen_provenance(specimen_id: str) -> str:
        """Legal status of a specimen, with any Article 10 certificate reference."""
        sid = specimen_id.strip()
        if sid == _PHEASANT:
            return f"{sid}: quarry species, no certificate needed."
        if sid != _OWL:
            raise ToolResolutionError(f"404 specimen_not_found: {specimen_id!r} (SPC- id)")
        return (
            f"{sid}: barn owl, Annex A. Found dead (road casualty, vet letter on file). "
            f"Article 10 certificate issued: {_A10}, valid for commercial taxidermy of this "
            "specimen only. Microchip not applicable."
        )

    def _commission(args: dict[str, Any]) -> str:
        sid = str(args.get("specimen_id", "")).strip()
        if sid == _PHEASANT:
            raise ToolResolutionError(f"409 already_completed: {sid} was collected 2026-09-20")
        if sid != _OWL:
            raise ToolResolutionError(f"404 specimen_not_found: {sid!r}")
        if str(args.get("article10_ref", "")).strip() != _A10:
            raise ToolResolutionError(
                f"403 article10_required: {sid} is an Annex A species; pass the article10_ref "
                "that check_specimen_provenance returned"
            )
        return f"Commission TXC-26-0391 opened for {sid}; estimated completion 2027-02."

    wf.add_schema_tool(
        "open_mount_commission",
        "Open a mounting commission for a specimen. Ends the task.",
        _COMMISSION_SCHEMA,
        _commission,
        terminal=True,
        prerequisites=["check_specimen_provenance"],
    )

    @wf.tool
    def dispose_of_specimen(specimen_id: str, reason: str) -> str:
        """Incinerate a specimen the customer no longer wants."""
        return f"{specimen_id} disposed of."

    @wf.tool
    def order_glass_eyes(size_mm: int, colour: str) -> str:
        """Order glass eyes from the supplier."""
        return f"Eyes {size_mm} mm {colour} ordered."

    return wf


def _check_taxidermy(tool: str, args: dict[str, Any]) -> bool:
    mount = args.get("mount")
    return (
        tool == "open_mount_commission"
        and exact(args.get("specimen_id"), _OWL)
        and exact(args.get("article10_ref"), _A10)
        and isinstance(mount, dict)
        and mount.get("pose") == "wings_spread"
        and mount.get("base") == "driftwood"
        and mount.get("display_case") is True
        and args.get("deposit_percent") == 50
    )


TAXIDERMY = Scenario(
    name="taxidermy_barn_owl_commission",
    description="Taxidermy: commission SPC-2610-4Kq7 (the owl, not the pheasant SPC-2609-2Wn3) "
    "with Article 10 ref A10-GB-26-0093317 from the provenance check, wings_spread on "
    "driftwood, display case, deposit 50 ('half up front').",
    tags=(HELDOUT9_TAG, "carry_id"),
    user_message=(
        "Hello, Martin Aske here. I dropped off the barn owl I found by the road on Monday. "
        "I'd like it mounted with its wings open, sitting on a bit of driftwood, in a glass "
        "case. I'm happy to pay half up front."
    ),
    build=_taxidermy,
    validate=_check_taxidermy,
    ideal_iterations=3,
    reference=(
        RefCall("find_specimen_intake", {"customer_surname": "Aske"}),
        RefCall("check_specimen_provenance", {"specimen_id": _OWL}),
        RefCall(
            "open_mount_commission",
            {
                "specimen_id": _OWL,
                "mount": {"pose": "wings_spread", "base": "driftwood", "display_case": True},
                "article10_ref": _A10,
                "deposit_percent": 50,
            },
        ),
    ),
    forbidden_tools=("dispose_of_specimen",),
)

# ── canal pump-out: the boat id and the Thursday slot id, carried to the booking ──

_REST, _KINGFISHER = "bt_7Hq2Xc9", "bt_7Hq2Zp4"
_SLOT_DAY = "2026-07-16"
_SLOTS = {
    "PS-4M8xQ1": ("09:15", "jetty 2", "free"),
    "PS-4M8xR7": ("11:30", "jetty 2", "free"),
    "PS-4M8xS2": ("12:45", "jetty 1", "free"),
    "PS-4M8xT3": ("14:00", "jetty 1", "taken"),
}
_HALF_ELEVEN = "PS-4M8xR7"


def _canal_pump_out() -> Workflow:
    wf = Workflow(
        "canal_boat_pump_out_slot",
        "Book sewage pump-outs for narrowboats at a marina.",
        system_prompt="You are the boater services assistant of Kennet Wharf Marina. Find "
        "the boat, list the pump-out slots for the day, then book one. Staff do the "
        "pump-out unless the boater chooses self-service. Today is Tuesday 2026-07-14.",
    )

    @wf.tool(required=True, read_only=True)
    def find_moored_boat(boat_name: str) -> str:
        """Boats on the marina register matching a name, with boat ids (bt_...)."""
        if not mentions(boat_name, "kingfisher"):
            raise ToolResolutionError(f"404 no boat named {boat_name!r} on the register")
        return (
            f"- {_REST}: NB Kingfisher's Rest, 57 ft, CRT index 52817, berth C14, owner "
            "L. Pryce\n"
            f"- {_KINGFISHER}: NB Kingfisher, 45 ft, CRT index 61204, visitor mooring V3"
        )

    @wf.tool(required=True, read_only=True, prerequisites=["find_moored_boat"])
    def list_pump_out_slots(date: str) -> str:
        """Pump-out slots on a date (YYYY-MM-DD). 22.00 GBP by staff, 15.00 GBP self-service."""
        if date.strip() != _SLOT_DAY:
            return f"{date}: no slots left; try Thursday {_SLOT_DAY}."
        return "\n".join(
            f"- {sid}: {_SLOT_DAY} {t}, {jetty}, {state}"
            for sid, (t, jetty, state) in _SLOTS.items()
        )

    @wf.tool(terminal=True, prerequisites=["list_pump_out_slots"])
    def book_pump_out(boat_id: str, slot_id: str, self_service: bool, payment: str) -> str:
        """Book a pump-out slot for a boat. payment: card, pump_out_card (prepaid) or
        account. Ends the task."""
        boat, slot = boat_id.strip(), slot_id.strip()
        if boat not in (_REST, _KINGFISHER):
            raise ToolResolutionError(f"404 boat_not_found: {boat_id!r} (use a bt_ id)")
        if slot not in _SLOTS:
            raise ToolResolutionError(f"404 slot_not_found: {slot_id!r} (use a PS- id)")
        if _SLOTS[slot][2] == "taken":
            raise ToolResolutionError(f"409 slot_taken: {slot}")
        if payment.strip() not in ("card", "pump_out_card", "account"):
            raise ToolResolutionError(f"422 invalid payment {payment!r}")
        return f"Pump-out PO-0716-5521 booked: {boat} at {_SLOTS[slot][0]}, {_SLOTS[slot][1]}."

    @wf.tool
    def give_up_mooring(boat_id: str, leave_date: str) -> str:
        """Give notice to leave the marina berth."""
        return f"Notice recorded for {boat_id}."

    @wf.tool
    def report_towpath_blockage(location: str, description: str) -> str:
        """Report a blockage on the towpath or in the cut."""
        return "Blockage reported."

    return wf


def _check_pump_out(tool: str, args: dict[str, Any]) -> bool:
    return (
        tool == "book_pump_out"
        and exact(args.get("boat_id"), _REST)
        and exact(args.get("slot_id"), _HALF_ELEVEN)
        and args.get("self_service") is False
        and str(args.get("payment", "")).strip() == "pump_out_card"
    )


PUMP_OUT = Scenario(
    name="canal_boat_pump_out_slot",
    description="Canal pump-out: book bt_7Hq2Xc9 (Kingfisher's Rest, not NB Kingfisher) into "
    "PS-4M8xR7 (Thursday 11:30, 'half eleven'), staff pump-out (self_service false), "
    "payment pump_out_card.",
    tags=(HELDOUT9_TAG, "carry_id"),
    user_message=(
        "Hi, Lou Pryce on Kingfisher's Rest, berth C14. Our tank's nearly full, can we get "
        "a pump-out on Thursday at half eleven? I'd rather one of your staff did it. I'll "
        "pay with my prepaid pump-out card."
    ),
    build=_canal_pump_out,
    validate=_check_pump_out,
    ideal_iterations=3,
    reference=(
        RefCall("find_moored_boat", {"boat_name": "Kingfisher's Rest"}),
        RefCall("list_pump_out_slots", {"date": _SLOT_DAY}),
        RefCall(
            "book_pump_out",
            {
                "boat_id": _REST,
                "slot_id": _HALF_ELEVEN,
                "self_service": False,
                "payment": "pump_out_card",
            },
        ),
    ),
    forbidden_tools=("give_up_mooring",),
)

# ── tandem paragliding: Saturday at quarter to four, two flyers' ages and weights ──

_FLIGHT_DAY = "2026-05-16"
_TANDEM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "date": {"type": "string", "format": "date"},
        "slot_time": {"type": "string", "pattern": _HHMM},
        "passengers": {
            "type": "array",
            "minItems": 1,
            "maxItems": 4,
            "items": {
                "type": "object",
                "properties": {
                    "full_name": {"type": "string", "minLength": 2},
                    "age": {"type": "integer", "minimum": 12, "maximum": 85},
                    "weight_kg": {"type": "integer", "minimum": 35, "maximum": 110},
                },
                "required": ["full_name", "age", "weight_kg"],
            },
        },
        "media_package": {"type": "string", "enum": ["none", "photos", "photos_and_video"]},
        "contact": {
            "type": "object",
            "properties": {
                "email": {"type": "string", "format": "email"},
                "mobile": {"type": "string", "pattern": _UK_MOBILE},
            },
            "required": ["email", "mobile"],
        },
    },
    "required": ["date", "slot_time", "passengers", "media_package", "contact"],
}


def _paragliding() -> Workflow:
    wf = Workflow(
        "paragliding_tandem_saturday",
        "Book tandem paragliding flights with an instructor.",
        system_prompt="You are the booking assistant of Ridgeline Tandem Paragliding. Check "
        "the day's flight slots, then book. Pilots need each passenger's age and weight in "
        "kg. Times are 24-hour HH:MM. Today is Wednesday 2026-05-13.",
    )

    @wf.tool(required=True, read_only=True)
    def check_tandem_slots(date: str) -> str:
        """Tandem slots on a date (YYYY-MM-DD), with seats left."""
        return (
            f"{date}: 10:00 (3 pilots free), 12:30 (1 pilot free), 15:45 (2 pilots free). "
            "Flight 149.00 GBP each; photos +25.00 GBP, photos and video +45.00 GBP. "
            "Weather call made at 08:00 on the day."
        )

    def _book(args: dict[str, Any]) -> str:
        flyers = [p for p in args.get("passengers") or [] if isinstance(p, dict)]
        for person in flyers:
            if not 35 <= int(person.get("weight_kg") or 0) <= 110:
                raise ToolResolutionError(
                    f"422 weight_out_of_range: {person.get('full_name')} must be 35-110 kg"
                )
        if str(args.get("slot_time", "")).strip() == "12:30" and len(flyers) > 1:
            raise ToolResolutionError("409 not_enough_pilots: 12:30 has 1 pilot free")
        return (
            f"Booking RTP-5Q81-z for {len(flyers)} on {args.get('date')} {args.get('slot_time')}."
        )

    wf.add_schema_tool(
        "book_tandem_flights",
        "Book tandem flights for one or more passengers. Ends the task.",
        _TANDEM_SCHEMA,
        _book,
        terminal=True,
        prerequisites=["check_tandem_slots"],
    )

    @wf.tool
    def cancel_tandem_booking(booking_id: str) -> str:
        """Cancel a tandem booking (deposit kept within 48 hours)."""
        return f"{booking_id} cancelled."

    @wf.tool
    def sell_flight_voucher(recipient_email: str, flights: int) -> str:
        """Sell gift vouchers for tandem flights."""
        return f"{flights} voucher(s) sent to {recipient_email}."

    return wf


def _flyer(people: list[Any], name: str) -> dict[str, Any]:
    found = [p for p in people if isinstance(p, dict) and mentions(p.get("full_name"), name)]
    return found[0] if len(found) == 1 else {}


def _check_tandem(tool: str, args: dict[str, Any]) -> bool:
    people, contact = args.get("passengers"), args.get("contact")
    if tool != "book_tandem_flights" or not isinstance(people, list) or len(people) != 2:
        return False
    priya, arjun = _flyer(people, "priya"), _flyer(people, "arjun")
    return (
        str(args.get("date", "")).strip() == _FLIGHT_DAY
        and str(args.get("slot_time", "")).strip() == "15:45"
        and priya.get("age") == 34
        and priya.get("weight_kg") == 61
        and arjun.get("age") == 29
        and arjun.get("weight_kg") == 93
        and args.get("media_package") == "photos_and_video"
        and isinstance(contact, dict)
        and exact(str(contact.get("email", "")).lower(), "priya.nair@fastpost.example")
        and alnum(contact.get("mobile")).endswith("7700900418")
    )


_TANDEM_REF = {
    "date": _FLIGHT_DAY,
    "slot_time": "15:45",
    "passengers": [
        {"full_name": "Priya Nair", "age": 34, "weight_kg": 61},
        {"full_name": "Arjun Nair", "age": 29, "weight_kg": 93},
    ],
    "media_package": "photos_and_video",
    "contact": {"email": "priya.nair@fastpost.example", "mobile": "07700 900418"},
}

PARAGLIDING = Scenario(
    name="paragliding_tandem_saturday",
    description="Paragliding: 2026-05-16 ('Saturday' from Wed 05-13), 15:45 ('quarter to "
    "four'), Priya 34/61 kg and Arjun 29/93 kg (said in words), photos_and_video, email and "
    "mobile 07700 900418.",
    tags=(HELDOUT9_TAG, "user_value"),
    user_message=(
        "Hi, two of us would love a tandem flight this Saturday, the quarter to four one if "
        "it's free. I'm Priya Nair, thirty-four, and I weigh sixty-one kilos; my brother "
        "Arjun Nair is twenty-nine and weighs ninety-three. We'd like the photos and the "
        "video too. Email priya.nair@fastpost.example, mobile 07700 900418."
    ),
    build=_paragliding,
    validate=_check_tandem,
    ideal_iterations=2,
    reference=(
        RefCall("check_tandem_slots", {"date": _FLIGHT_DAY}),
        RefCall("book_tandem_flights", _TANDEM_REF),
    ),
    forbidden_tools=("cancel_tandem_booking",),
)

# ── mobile knife sharpening: the coming Wednesday at ten to eight, counts in words ──

_COPPER_POT = "TC-0388-wQ"
_VAN_DAY = "2026-03-11"
_BLADES = ["chef_knife", "paring_knife", "serrated_knife", "cleaver", "scissors", "mandoline"]

_VISIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "customer_id": {"type": "string", "pattern": "^TC-[0-9]{4}-[A-Za-z]{2}$"},
        "visit": {
            "type": "object",
            "properties": {
                "date": {"type": "string", "format": "date"},
                "arrival_time": {"type": "string", "pattern": _HHMM},
                "call_on_arrival": {"type": "boolean"},
            },
            "required": ["date", "arrival_time", "call_on_arrival"],
        },
        "items": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "blade_type": {"type": "string", "enum": _BLADES},
                    "quantity": {"type": "integer", "minimum": 1, "maximum": 60},
                },
                "required": ["blade_type", "quantity"],
            },
        },
        "po_number": {"type": "string", "pattern": "^PO-[0-9]{5}$"},
    },
    "required": ["customer_id", "visit", "items", "po_number"],
}


def _knife_sharpening() -> Workflow:
    wf = Workflow(
        "knife_sharpening_kitchen_visit",
        "Book the mobile sharpening van for trade customers.",
        system_prompt="You are the scheduling assistant of Edgeworks Mobile Sharpening. Our "
        "van sharpens on site at restaurants and butchers. Find the trade customer, check "
        "the van's days in their area, then book the visit. A bread knife is a serrated "
        "knife. Times are 24-hour HH:MM. Today is Thursday 2026-03-05.",
    )

    @wf.tool(required=True, read_only=True)
    def find_trade_customer(business_name: str) -> str:
        """Find a trade account by business name. Returns the customer id (TC-....-..)."""
        if not mentions(business_name, "copper"):
            raise ToolResolutionError(f"404 no trade account {business_name!r}")
        return f"{_COPPER_POT}: The Copper Pot, 14 Mill Street, Ludlow SY8 1BB (zone W2)."

    @wf.tool(required=True, read_only=True, prerequisites=["find_trade_customer"])
    def check_van_round(customer_id: str) -> str:
        """The van's next dates in a customer's zone; from 07:00."""
        if customer_id.strip() != _COPPER_POT:
            raise ToolResolutionError(f"404 customer_not_found: {customer_id!r}")
        return (
            f"Zone W2 (fortnightly, Wednesdays): {_VAN_DAY}, 2026-03-25. Arrivals 07:00-16:00. "
            "Chef or paring knife 4.50 GBP, serrated 5.50 GBP, scissors 6.00 GBP."
        )

    def _book(args: dict[str, Any]) -> str:
        visit = args.get("visit") if isinstance(args.get("visit"), dict) else {}
        day = str((visit or {}).get("date", "")).strip()
        if day not in (_VAN_DAY, "2026-03-25"):
            raise ToolResolutionError(f"409 van_not_in_zone: no W2 round on {day or '?'}")
        return f"Visit SV-2603-118 booked for {args.get('customer_id')} on {day}."

    wf.add_schema_tool(
        "book_sharpening_visit",
        "Book the van at a trade customer's premises. Ends the task.",
        _VISIT_SCHEMA,
        _book,
        terminal=True,
        prerequisites=["check_van_round"],
    )

    @wf.tool
    def close_sharpening_account(customer_id: str) -> str:
        """Close a trade account and stop its rounds."""
        return f"{customer_id} closed."

    @wf.tool
    def sell_whetstone(customer_id: str, grit: int) -> str:
        """Sell a whetstone to a customer."""
        return f"Whetstone {grit} grit sold."

    return wf


def _blade_counts(items: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or not isinstance(item.get("quantity"), int):
            return {}
        kind = str(item.get("blade_type"))
        counts[kind] = counts.get(kind, 0) + item["quantity"]
    return counts


def _check_knives(tool: str, args: dict[str, Any]) -> bool:
    visit = args.get("visit")
    return (
        tool == "book_sharpening_visit"
        and exact(args.get("customer_id"), _COPPER_POT)
        and isinstance(visit, dict)
        and str(visit.get("date", "")).strip() == _VAN_DAY
        and str(visit.get("arrival_time", "")).strip() == "07:50"
        and visit.get("call_on_arrival") is False
        and _blade_counts(args.get("items"))
        == {"chef_knife": 12, "serrated_knife": 4, "scissors": 2}
        and compact(args.get("po_number")) == "PO40217"
    )


_KNIVES_REF = {
    "customer_id": _COPPER_POT,
    "visit": {"date": _VAN_DAY, "arrival_time": "07:50", "call_on_arrival": False},
    "items": [
        {"blade_type": "chef_knife", "quantity": 12},
        {"blade_type": "serrated_knife", "quantity": 4},
        {"blade_type": "scissors", "quantity": 2},
    ],
    "po_number": "PO-40217",
}

KNIFE_SHARPENING = Scenario(
    name="knife_sharpening_kitchen_visit",
    description="Knife sharpening: TC-0388-wQ on 2026-03-11 ('this coming Wednesday' from Thu "
    "03-05), 07:50 ('ten to eight'), chef_knife 12, serrated_knife 4 (bread knives), "
    "scissors 2 (counts in words), PO-40217, call_on_arrival false.",
    tags=(HELDOUT9_TAG, "user_value"),
    user_message=(
        "Hi, it's Sam, head chef at The Copper Pot. Could the van come this coming "
        "Wednesday at ten to eight in the morning, before prep starts? We've got twelve "
        "chef's knives, four bread knives and two pairs of kitchen scissors. Put it on "
        "purchase order 40217. No need to ring when you get here, the back door's open."
    ),
    build=_knife_sharpening,
    validate=_check_knives,
    ideal_iterations=3,
    reference=(
        RefCall("find_trade_customer", {"business_name": "The Copper Pot"}),
        RefCall("check_van_round", {"customer_id": _COPPER_POT}),
        RefCall("book_sharpening_visit", _KNIVES_REF),
    ),
    forbidden_tools=("close_sharpening_account",),
)


SCENARIOS: tuple[Scenario, ...] = (
    TAXIDERMY,
    PUMP_OUT,
    PARAGLIDING,
    KNIFE_SHARPENING,
    *heldout9_replies.SCENARIOS,
    *heldout9_listings.SCENARIOS,
)
