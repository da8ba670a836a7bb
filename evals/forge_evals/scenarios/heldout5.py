"""Held out, fifth group: workflows in businesses no earlier group touches,
written from the user's side only (not the engine) after `heldout4` had been
tuned on, and run once at the commit they were written on before any tuning
for them. This module: an escape-room venue and a print-on-demand shop
(carry_id), a piano tuner and a firewood merchant (user_value);
heldout5_listings an MOT history app and a soil laboratory (report_agrees),
a pottery studio's kiln and a coffee roaster's subscription (list_match);
heldout5_part2 (and heldout5_part2_forms) the other eight.
Each is tagged `heldout5` plus one failure kind of issue 34 (the names
`heldout` uses).
"""

from __future__ import annotations

import hashlib
import string
from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, has_number, mentions, same
from forge_evals.scenarios import heldout5_listings, heldout5_part2
from forge_evals.scenarios._domain_schema import HELDOUT5_TAG, alnum, exact

_BASE62 = string.digits + string.ascii_letters


def _derived_id(prefix: str, *parts: object) -> str:
    """A stable API-looking id for an input nobody expects ("hld_" + 10 chars)."""
    number = int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest(), 16)
    chars = []
    for _ in range(10):
        number, rest = divmod(number, 62)
        chars.append(_BASE62[rest])
    return prefix + "".join(chars)


# ── escape rooms: the session id buys a hold; the hold id books it ───────

_SESSIONS = {
    "14:00": "ses_Ae41mQ8c",
    "16:15": "ses_Ae41nR2d",
    "18:30": "ses_Ae41pT6f",
    "20:45": "ses_Ae41qW9h",
}
_HOLD_ID = "hld_9vQ2mX7rT4"
_GUEST_EMAIL = "priya.natarajan@mailbox.example"


def _hold_id(session_id: str, players: int) -> str:
    """Each hold is for one session and party size: another gets another id."""
    if (session_id, players) == (_SESSIONS["16:15"], 5):
        return _HOLD_ID
    return _derived_id("hld_", session_id, players)


_CONFIRM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "hold_id": {"type": "string", "pattern": "^hld_[A-Za-z0-9]{10}$"},
        "lead_booker": {
            "type": "object",
            "properties": {
                "full_name": {"type": "string", "minLength": 2},
                "email": {"type": "string", "format": "email"},
                "phone": {"type": "string", "pattern": "^\\+?[0-9 ]{10,16}$"},
            },
            "required": ["full_name", "email"],
            "additionalProperties": False,
        },
        "add_ons": {
            "type": "array",
            "items": {
                "type": "string",
                "enum": ["photo_pack", "birthday_setup", "drinks_package"],
            },
            "uniqueItems": True,
        },
        "marketing_opt_in": {"type": "boolean"},
    },
    "required": ["hold_id", "lead_booker", "add_ons"],
    "additionalProperties": False,
}


def _escape_room() -> Workflow:
    wf = Workflow(
        "escape_room_hold_booking",
        "Book escape-room sessions for Lockstep Escape Rooms' customers.",
        system_prompt="You are the online booking assistant of Lockstep Escape Rooms, "
        "Manchester (rooms: The Alchemist's Vault ALCH, Signal Lost SGNL, The Last "
        "Carriage CARR). A session must be held before it can be confirmed. "
        "Today is Wednesday 2026-08-12.",
    )

    @wf.tool(required=True, read_only=True)
    def list_room_sessions(room: str, date: str) -> str:
        """List a room's sessions on a date (YYYY-MM-DD) with session ids and free places.

        Args:
            room: room name or code, e.g. ALCH
            date: the day, YYYY-MM-DD
        """
        if not mentions(room, "alch", "vault"):
            raise ToolResolutionError(f"room {room!r} has no sessions on {date}; try ALCH")
        if date.strip() != "2026-08-15":
            return f"The Alchemist's Vault (ALCH), {date}: fully booked."
        times = list(_SESSIONS.items())
        return (
            "The Alchemist's Vault (ALCH), Sat 2026-08-15, 60 minutes, 2-6 players, 27.50 GBP "
            "per player:\n"
            f"- {times[0][0]} session {times[0][1]}, available\n"
            f"- {times[1][0]} session {times[1][1]}, available\n"
            f"- {times[2][0]} session {times[2][1]}, FULL\n"
            f"- {times[3][0]} session {times[3][1]}, available"
        )

    @wf.tool(required=True, prerequisites=["list_room_sessions"])
    def create_session_hold(session_id: str, players: int) -> str:
        """Hold a session for a party for 10 minutes. Returns the hold id to confirm with."""
        sid = session_id.strip()
        if sid not in _SESSIONS.values():
            raise ToolResolutionError(f"404 session_not_found: {session_id!r}")
        if sid == _SESSIONS["18:30"]:
            raise ToolResolutionError(f"409 session_full: {sid} has no places left")
        if not 2 <= players <= 6:
            raise ToolResolutionError("422 invalid_party_size: players must be 2 to 6")
        return (
            f"Hold {_hold_id(sid, players)} created on {sid} for {players} players, total "
            f"{27.5 * players:.2f} GBP, expires in 10 minutes (basket bsk_Q7fz1LmA)."
        )

    wf.add_schema_tool(
        "confirm_held_booking",
        "Confirm a held session for the lead booker and email the tickets. Ends the task.",
        _CONFIRM_SCHEMA,
        lambda args: f"Booking LSE-26-30418 confirmed from {args.get('hold_id')}.",
        terminal=True,
        prerequisites=["create_session_hold"],
    )

    @wf.tool
    def cancel_room_booking(booking_reference: str) -> str:
        """Cancel a confirmed booking (refund less a 10 GBP admin fee)."""
        return f"{booking_reference} cancelled."

    @wf.tool
    def buy_gift_voucher(amount_gbp: int, recipient_email: str) -> str:
        """Email a Lockstep gift voucher."""
        return f"Voucher for {amount_gbp} GBP sent to {recipient_email}."

    return wf


def _check_escape(tool: str, args: dict[str, Any]) -> bool:
    booker = args.get("lead_booker")
    add_ons = args.get("add_ons")
    return (
        tool == "confirm_held_booking"
        and exact(args.get("hold_id"), _HOLD_ID)
        and isinstance(booker, dict)
        and same(booker.get("email"), _GUEST_EMAIL)
        and isinstance(add_ons, list)
        and [str(a).strip() for a in add_ons] == ["birthday_setup"]
    )


ESCAPE_ROOM_HOLD_BOOKING = Scenario(
    name="escape_room_hold_booking",
    description="Escape room: confirm hold hld_9vQ2mX7rT4 (the 16:15 session ses_Ae41nR2d held "
    "for 5; not the session id, the basket id or another slot's or size's hold), birthday "
    "setup only, lead booker priya.natarajan@mailbox.example.",
    tags=(HELDOUT5_TAG, "carry_id"),
    user_message=(
        "Hi! Could you book the Alchemist's Vault for this Saturday, the quarter past four "
        "session, for five of us? It's my sister's birthday so the birthday setup would be "
        "lovely, but we don't need the photo pack. Put it under Priya Natarajan, "
        "priya.natarajan@mailbox.example."
    ),
    build=_escape_room,
    validate=_check_escape,
    ideal_iterations=3,
    reference=(
        RefCall("list_room_sessions", {"room": "ALCH", "date": "2026-08-15"}),
        RefCall("create_session_hold", {"session_id": _SESSIONS["16:15"], "players": 5}),
        RefCall(
            "confirm_held_booking",
            {
                "hold_id": _HOLD_ID,
                "lead_booker": {"full_name": "Priya Natarajan", "email": _GUEST_EMAIL},
                "add_ons": ["birthday_setup"],
            },
        ),
    ),
    forbidden_tools=("cancel_room_booking",),
)

# ── print on demand: the imported asset's id gets a quote; the quote's id orders

_ASSET_ID = "ast_7Rw2Kd9QxB"
_QUOTE_ID = "qte_4hN8sV1mYc"
_ARTWORK_URL = "https://drive.seasalt-events.example/f/harbour-day-2026-A2.pdf"
_POSTER_LINE = {"product": "poster", "size": "A2", "paper": "fine_art_310gsm", "quantity": 25}


def _quote_id(asset_id: str, lines: list[dict[str, Any]]) -> str:
    """A quote prices one asset and set of lines: other specs get another quote id."""
    key = sorted(tuple(str(d.get(k)) for k in _POSTER_LINE) for d in lines)
    if asset_id == _ASSET_ID and key == [tuple(str(v) for v in _POSTER_LINE.values())]:
        return _QUOTE_ID
    return _derived_id("qte_", asset_id, key)


def _quote(args: dict[str, Any]) -> str:
    asset_id = str(args.get("asset_id", "")).strip()
    if asset_id != _ASSET_ID:
        raise ToolResolutionError(f"asset_not_found: {asset_id!r} (import the artwork first)")
    lines = args.get("lines") or []
    quote_id = _quote_id(asset_id, lines)
    priced = "; ".join(
        f"{d.get('quantity')} x {d.get('product')} {d.get('size')} {d.get('paper')}" for d in lines
    )
    return (
        f"Quote {quote_id} for {asset_id}, valid 7 days: {priced}. Subtotal 195.00 GBP, "
        "delivery standard 6.50 GBP / express 14.00 GBP. Digital proof PRF-20931 attached."
    )


_PRINT_LINES: dict[str, Any] = {
    "type": "array",
    "minItems": 1,
    "maxItems": 10,
    "items": {
        "type": "object",
        "properties": {
            "product": {"type": "string", "enum": ["poster", "canvas", "framed_print"]},
            "size": {"type": "string", "enum": ["A4", "A3", "A2", "A1"]},
            "paper": {
                "type": "string",
                "enum": ["silk_170gsm", "matte_200gsm", "fine_art_310gsm"],
            },
            "quantity": {"type": "integer", "minimum": 1, "maximum": 500},
        },
        "required": ["product", "size", "paper", "quantity"],
        "additionalProperties": False,
    },
}
_ORDER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "quote_id": {"type": "string", "pattern": "^qte_[A-Za-z0-9]{10}$"},
        "shipping": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "line1": {"type": "string"},
                "city": {"type": "string"},
                "postcode": {"type": "string", "maxLength": 10},
                "country_code": {"type": "string", "pattern": "^[A-Z]{2}$"},
            },
            "required": ["name", "line1", "city", "postcode", "country_code"],
            "additionalProperties": False,
        },
        "service": {"type": "string", "enum": ["standard", "express"]},
    },
    "required": ["quote_id", "shipping", "service"],
    "additionalProperties": False,
}


def _print_shop() -> Workflow:
    wf = Workflow(
        "poster_print_quote_order",
        "Take print orders for a print-on-demand shop.",
        system_prompt="You take orders for Inkwell Print Co. Artwork is imported from the "
        "customer's link, quoted, and the quote is ordered. Today is Monday 2026-03-09.",
    )

    @wf.tool(required=True)
    def import_artwork(source_url: str) -> str:
        """Fetch a print-ready file from a link and preflight it. Returns the asset id."""
        if "harbour-day-2026" not in source_url:
            raise ToolResolutionError(f"fetch_failed: nothing to download at {source_url!r}")
        return (
            f"Asset {_ASSET_ID}: harbour-day-2026-A2.pdf, 1 page, 4961x7016 px (A2 at 300 "
            "dpi), CMYK, fonts embedded. Preflight report PF-55120: passed."
        )

    wf.add_schema_tool(
        "quote_print_job",
        "Price printing an imported asset. Returns a quote id, valid for 7 days.",
        {
            "type": "object",
            "properties": {
                "asset_id": {"type": "string", "pattern": "^ast_[A-Za-z0-9]{10}$"},
                "lines": _PRINT_LINES,
            },
            "required": ["asset_id", "lines"],
            "additionalProperties": False,
        },
        _quote,
        required=True,
        prerequisites=["import_artwork"],
    )
    wf.add_schema_tool(
        "place_print_order",
        "Order a quote, charged to the saved card, and ship it. Ends the task.",
        _ORDER_SCHEMA,
        lambda args: f"Order IPC-774215 placed from {args.get('quote_id')}.",
        terminal=True,
        prerequisites=["quote_print_job"],
    )

    @wf.tool
    def delete_asset(asset_id: str) -> str:
        """Delete an imported asset and every quote made from it."""
        return f"{asset_id} deleted."

    @wf.tool
    def request_hard_proof(quote_id: str) -> str:
        """Post a printed proof of a quote first (adds 3 working days, 12.00 GBP)."""
        return f"Hard proof of {quote_id} requested."

    return wf


def _check_print(tool: str, args: dict[str, Any]) -> bool:
    shipping = args.get("shipping")
    return (
        tool == "place_print_order"
        and exact(args.get("quote_id"), _QUOTE_ID)
        and isinstance(shipping, dict)
        and alnum(shipping.get("postcode")) == "CT51AB"
        and args.get("service") == "standard"
    )


POSTER_PRINT_QUOTE_ORDER = Scenario(
    name="poster_print_quote_order",
    description="Print shop: order quote qte_4hN8sV1mYc (25 x A2 poster on fine art paper "
    "for asset ast_7Rw2Kd9QxB; not the asset, proof or preflight id, not a quote of other "
    "specs), standard delivery to CT5 1AB.",
    tags=(HELDOUT5_TAG, "carry_id"),
    user_message=(
        "Hello, can you print our Harbour Day poster? The file is at "
        f"{_ARTWORK_URL} . We need 25 copies at A2 on the fine art paper. Standard "
        "delivery is fine, to Seasalt Events, 3 Quay Street, Whitstable CT5 1AB."
    ),
    build=_print_shop,
    validate=_check_print,
    ideal_iterations=3,
    reference=(
        RefCall("import_artwork", {"source_url": _ARTWORK_URL}),
        RefCall("quote_print_job", {"asset_id": _ASSET_ID, "lines": [dict(_POSTER_LINE)]}),
        RefCall(
            "place_print_order",
            {
                "quote_id": _QUOTE_ID,
                "shipping": {
                    "name": "Seasalt Events",
                    "line1": "3 Quay Street",
                    "city": "Whitstable",
                    "postcode": "CT5 1AB",
                    "country_code": "GB",
                },
                "service": "standard",
            },
        ),
    ),
    forbidden_tools=("delete_asset",),
)

# ── piano tuning: the grand not the upright, "four forty-two", Thursday the 12th


def _piano_tuner() -> Workflow:
    wf = Workflow(
        "piano_tuning_visit",
        "Book visits for a piano tuning and repair business.",
        system_prompt="You book visits for Keystone Piano Services, Harrogate. Find the "
        "client first. Today is Monday 2026-02-02.",
    )

    @wf.tool(required=True, read_only=True)
    def find_piano_client(postcode: str, house_number: str) -> str:
        """Find a client by postcode and house number. Returns the client id and pianos."""
        if alnum(postcode) != "HG28PL" or alnum(house_number) != "14":
            raise ToolResolutionError(f"no client at {house_number}, {postcode}")
        return (
            "Client CL-20931 (Mrs E. Fairbairn), 14 Larch Grove, Harrogate HG2 8PL. Pianos:\n"
            "- PN-40217 Yamaha U1 upright (front room), last tuned 2025-09-02 at A=440 Hz\n"
            "- PN-40218 Bosendorfer 170 grand (music room), last tuned 2023-02-14 at A=440 "
            "Hz, measured 18 cents flat at last visit"
        )

    visit = {
        "type": "object",
        "properties": {
            "date": {"type": "string", "format": "date"},
            "window": {"type": "string", "enum": ["morning", "afternoon", "evening"]},
        },
        "required": ["date", "window"],
        "additionalProperties": False,
    }
    wf.add_schema_tool(
        "book_tuning_visit",
        "Book a tuner to tune one piano at the client's home. Ends the task.",
        {
            "type": "object",
            "properties": {
                "client_id": {"type": "string", "pattern": "^CL-[0-9]{5}$"},
                "piano_id": {"type": "string", "pattern": "^PN-[0-9]{5}$"},
                "visit": visit,
                "pitch_hz": {
                    "type": "integer",
                    "minimum": 415,
                    "maximum": 446,
                    "description": "Frequency to tune A4 to; concert pitch is 440.",
                },
                "pitch_raise": {
                    "type": "boolean",
                    "description": "Bring a flat piano up to pitch first (extra 45 GBP).",
                },
                "notes": {"type": "string", "maxLength": 300},
            },
            "required": ["client_id", "piano_id", "visit", "pitch_hz", "pitch_raise"],
            "additionalProperties": False,
        },
        lambda args: f"Visit KPS-V-6120 booked for {args.get('piano_id')}.",
        terminal=True,
        prerequisites=["find_piano_client"],
    )

    @wf.tool(read_only=True)
    def get_tuning_history(piano_id: str) -> str:
        """Show a piano's tuning and repair history."""
        return f"{piano_id}: 6 visits since 2019."

    @wf.tool
    def cancel_tuning_visit(visit_reference: str) -> str:
        """Cancel a booked visit."""
        return f"{visit_reference} cancelled."

    @wf.tool
    def book_piano_removal(piano_id: str, to_address: str) -> str:
        """Book the removal team to move a piano to another address."""
        return f"Removal of {piano_id} to {to_address} booked."

    return wf


def _check_tuning(tool: str, args: dict[str, Any]) -> bool:
    visit = args.get("visit")
    return (
        tool == "book_tuning_visit"
        and same(args.get("client_id"), "CL-20931")
        and same(args.get("piano_id"), "PN-40218")
        and isinstance(visit, dict)
        and visit.get("date") == "2026-02-12"
        and visit.get("window") == "afternoon"
        and has_number(args.get("pitch_hz"), 442)
        and args.get("pitch_raise") is True
    )


_TUNING = {
    "client_id": "CL-20931",
    "piano_id": "PN-40218",
    "visit": {"date": "2026-02-12", "window": "afternoon"},
    "pitch_hz": 442,
    "pitch_raise": True,
}

PIANO_TUNING_VISIT = Scenario(
    name="piano_tuning_visit",
    description="Piano tuner: the grand PN-40218 (not the upright), Thursday 2026-02-12 "
    "afternoon, A=442 ('four forty-two', not concert 440), pitch raise yes.",
    tags=(HELDOUT5_TAG, "user_value"),
    user_message=(
        "Hello, it's Mrs Fairbairn, 14 Larch Grove, HG2 8PL. Could someone come and tune the "
        "grand on Thursday the 12th, in the afternoon? Our quartet plays at four forty-two "
        "these days, so tune it to that rather than concert pitch. It's been three years, "
        "so yes, do the pitch raise as well."
    ),
    build=_piano_tuner,
    validate=_check_tuning,
    ideal_iterations=2,
    reference=(
        RefCall("find_piano_client", {"postcode": "HG2 8PL", "house_number": "14"}),
        RefCall("book_tuning_visit", dict(_TUNING)),
    ),
    forbidden_tools=("cancel_tuning_visit", "book_piano_removal"),
)

# ── firewood: "a cubic metre and a half", "two metres forty", Saturday after next


def _log_merchant() -> Workflow:
    wf = Workflow(
        "firewood_log_delivery",
        "Take orders for a firewood merchant that delivers logs.",
        system_prompt="You take orders for Oakhollow Logs, North Yorkshire. Check the "
        "customer's postcode is in a delivery zone first. Today is Wednesday 2026-10-07.",
    )

    @wf.tool(required=True, read_only=True)
    def check_delivery_zone(postcode: str) -> str:
        """Check whether a postcode is in a delivery zone. Returns the zone id and days."""
        if not alnum(postcode).startswith("YO62"):
            raise ToolResolutionError(f"{postcode!r} is outside our delivery area")
        return (
            "Zone DZ-07 (Ryedale): deliveries on Tuesdays and Saturdays, free over 1 m3. "
            "Our tipper lorry is 2.3 m wide; for gates under 2.3 m we send the 1.8 m van."
        )

    product = {
        "type": "object",
        "properties": {
            "species": {"type": "string", "enum": ["ash", "oak", "birch", "mixed_hardwood"]},
            "seasoning": {"type": "string", "enum": ["kiln_dried", "seasoned", "green"]},
            "volume_m3": {"type": "number", "minimum": 0.5, "maximum": 6, "multipleOf": 0.5},
        },
        "required": ["species", "seasoning", "volume_m3"],
        "additionalProperties": False,
    }
    delivery = {
        "type": "object",
        "properties": {
            "date": {"type": "string", "format": "date"},
            "drop": {"type": "string", "enum": ["tip_on_drive", "barrow_to_store", "stack"]},
            "gate_width_cm": {"type": "integer", "minimum": 100, "maximum": 500},
        },
        "required": ["date", "drop", "gate_width_cm"],
        "additionalProperties": False,
    }
    wf.add_schema_tool(
        "place_log_order",
        "Order logs for delivery, paid on delivery. Ends the task.",
        {
            "type": "object",
            "properties": {
                "zone_id": {"type": "string", "pattern": "^DZ-[0-9]{2}$"},
                "product": product,
                "delivery": delivery,
                "kindling_bags": {"type": "integer", "minimum": 0, "maximum": 10},
            },
            "required": ["zone_id", "product", "delivery", "kindling_bags"],
            "additionalProperties": False,
        },
        lambda args: f"Order OHL-26-1187 for zone {args.get('zone_id')}.",
        terminal=True,
        prerequisites=["check_delivery_zone"],
    )

    @wf.tool(read_only=True)
    def get_log_prices(species: str) -> str:
        """Price per cubic metre of a species, by seasoning."""
        return f"{species}: kiln dried 165 GBP/m3, seasoned 120 GBP/m3, green 85 GBP/m3."

    @wf.tool
    def start_winter_plan(postcode: str, deliveries: int) -> str:
        """Sign the customer up for monthly deliveries through the winter."""
        return f"Winter plan of {deliveries} deliveries started for {postcode}."

    return wf


_LOGS: dict[str, Any] = {
    "zone_id": "DZ-07",
    "product": {"species": "ash", "seasoning": "kiln_dried", "volume_m3": 1.5},
    "delivery": {"date": "2026-10-17", "drop": "tip_on_drive", "gate_width_cm": 240},
    "kindling_bags": 3,
}


def _check_logs(tool: str, args: dict[str, Any]) -> bool:
    product, delivery = args.get("product"), args.get("delivery")
    return (
        tool == "place_log_order"
        and same(args.get("zone_id"), "DZ-07")
        and isinstance(product, dict)
        and product.get("species") == "ash"
        and product.get("seasoning") == "kiln_dried"
        and has_number(product.get("volume_m3"), 1.5)
        and isinstance(delivery, dict)
        and delivery.get("date") == "2026-10-17"
        and delivery.get("drop") == "tip_on_drive"
        and has_number(delivery.get("gate_width_cm"), 240)
        and has_number(args.get("kindling_bags"), 3)
    )


FIREWOOD_LOG_DELIVERY = Scenario(
    name="firewood_log_delivery",
    description="Firewood: 1.5 m3 ('a cubic metre and a half') kiln-dried ash on Saturday "
    "2026-10-17 (not this Saturday the 10th), tipped on the drive, gate 240 cm ('two metres "
    "forty'), 3 kindling bags, zone DZ-07.",
    tags=(HELDOUT5_TAG, "user_value"),
    user_message=(
        "Hi, I'm at YO62 5AB. I'd like a cubic metre and a half of kiln-dried ash, please. "
        "Not this Saturday, the one after. Just tip it on the drive, I'll barrow it round "
        "myself. The gate's two metres forty wide. Oh, and three bags of kindling."
    ),
    build=_log_merchant,
    validate=_check_logs,
    ideal_iterations=2,
    reference=(
        RefCall("check_delivery_zone", {"postcode": "YO62 5AB"}),
        RefCall("place_log_order", dict(_LOGS)),
    ),
    forbidden_tools=("start_winter_plan",),
)


SCENARIOS: tuple[Scenario, ...] = (
    ESCAPE_ROOM_HOLD_BOOKING,
    POSTER_PRINT_QUOTE_ORDER,
    PIANO_TUNING_VISIT,
    FIREWOOD_LOG_DELIVERY,
    *heldout5_listings.SCENARIOS,
    *heldout5_part2.SCENARIOS,
)
