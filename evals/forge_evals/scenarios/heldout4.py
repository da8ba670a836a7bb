"""Held out, fourth group: sixteen workflows in businesses no earlier group
touches, written from the user's side only (not the engine) after `heldout3`
had been tuned on, and run once at the commit they were written on before any
tuning for them. This module: airport parking and a stock-photo library
(carry_id), a smart thermostat and a travel-money counter (user_value);
heldout4_listings an internet provider and an airline's loyalty club
(report_agrees), a Sunday-league team app and a swim school (list_match);
heldout4_part2 the other eight. Each is tagged `heldout4` plus one failure
kind of issue 34 (the names `heldout` uses).
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, has_number, mentions, same
from forge_evals.scenarios import heldout4_listings, heldout4_part2
from forge_evals.scenarios._domain_schema import HELDOUT4_TAG


def _exact(value: Any, expected: str) -> bool:
    """Equal as text after trimming space; case counts (API ids are case-sensitive)."""
    return isinstance(value, str) and value.strip() == expected


def _digits(value: Any) -> str:
    return "".join(ch for ch in str(value) if ch.isdigit())


def _alnum(value: Any) -> str:
    """`value` with only its letters and digits, upper case ("KX19 TPV" -> "KX19TPV")."""
    return "".join(ch for ch in str(value) if ch.isalnum()).upper()


# ── airport parking: the customer id, then the chosen offer's id ─────────

_CUSTOMER_ID = "cus_R4t8Wm2Q"
_OFFERS = {
    "meet_greet": "ofr_2Lq9XzV71c",
    "short_stay": "ofr_8Hn3KpT04m",
    "long_stay": "ofr_5Wd7RbJ62s",
}
_ISO_DAY = re.compile(r"^\s*(\d{4}-\d{2}-\d{2})")


def _day_of(value: Any, field: str) -> str:
    match = _ISO_DAY.match(str(value))
    if match is None:
        raise ToolResolutionError(f"{field} must be an ISO 8601 date-time, got {value!r}")
    return match.group(1)


def _offer_id(product: str, drop_off: str, pick_up: str) -> str:
    """Offers belong to one search: another stay gets other offer ids."""
    if (drop_off, pick_up) == ("2026-07-04", "2026-07-10"):
        return _OFFERS[product]
    digest = hashlib.sha256(f"{product}{drop_off}{pick_up}".encode()).hexdigest()
    return "ofr_" + digest[:10]


def _parking() -> Workflow:
    wf = Workflow(
        "airport_parking_offer",
        "Book airport car parking for SkyPark customers.",
        system_prompt="You are the booking assistant of SkyPark, which runs the car parks at "
        "Bristol Airport. Find the customer's profile, search offers for their dates and "
        "book the one they choose. Today is Wednesday 2026-07-01.",
    )

    @wf.tool(required=True, read_only=True)
    def find_customer_profile(email: str) -> str:
        """Find a customer's profile by email. Returns the customer id and saved vehicles."""
        if not same(email, "dana.whitlock@fastmail.example"):
            raise ToolResolutionError(f"no customer with email {email!r}")
        return (
            f"Customer {_CUSTOMER_ID} (Dana Whitlock), SkyPark Rewards number SPR-771203. "
            "Saved vehicle: KX19 TPV, grey Skoda Octavia. Last booking BK-2026-04417 "
            "(2026-03-14 to 2026-03-21, Long Stay)."
        )

    @wf.tool(required=True, read_only=True)
    def search_parking_offers(airport: str, drop_off: str, pick_up: str) -> str:
        """Search parking offers for a stay. drop_off and pick_up are ISO 8601 date-times.

        Each product comes back with an offer id to book it by."""
        if not mentions(airport, "brs", "bristol"):
            raise ToolResolutionError(f"SkyPark has no car parks at {airport!r}")
        start, end = _day_of(drop_off, "drop_off"), _day_of(pick_up, "pick_up")
        if end < start:
            raise ToolResolutionError("pick_up is before drop_off")
        meet, short, long_ = (_offer_id(p, start, end) for p in _OFFERS)
        return (
            f"Search srch_0c4E1aY9, Bristol Airport (BRS), {drop_off} to {pick_up}:\n"
            f"- Meet & Greet, hand over the car at the terminal: 129.00 GBP, offer {meet}\n"
            f"- Short Stay, 5 minutes' walk: 96.50 GBP, offer {short}\n"
            f"- Long Stay, shuttle bus every 15 minutes: 61.00 GBP, offer {long_}\n"
            "Offers are held for 20 minutes."
        )

    wf.add_schema_tool(
        "create_parking_booking",
        "Book a parking offer for a customer and charge their saved card. Ends the task.",
        {
            "type": "object",
            "properties": {
                "customer_id": {"type": "string", "pattern": "^cus_[A-Za-z0-9]{8}$"},
                "offer_id": {
                    "type": "string",
                    "pattern": "^ofr_[A-Za-z0-9]{10}$",
                    "description": "The offer to book, from the search.",
                },
                "vehicle": {
                    "type": "object",
                    "properties": {
                        "registration": {"type": "string", "minLength": 2, "maxLength": 10},
                        "description": {"type": "string"},
                    },
                    "required": ["registration"],
                    "additionalProperties": False,
                },
            },
            "required": ["customer_id", "offer_id", "vehicle"],
            "additionalProperties": False,
        },
        lambda args: f"Booked {args.get('offer_id')}: booking BK-2026-09152.",
        terminal=True,
        prerequisites=["find_customer_profile", "search_parking_offers"],
    )

    @wf.tool
    def cancel_parking_booking(booking_reference: str) -> str:
        """Cancel a parking booking; refunds follow the product's terms."""
        return f"{booking_reference} cancelled."

    @wf.tool
    def add_fast_track(booking_reference: str, passengers: int) -> str:
        """Add security fast-track passes to a parking booking (8.50 GBP each)."""
        return f"{passengers} fast-track passes added to {booking_reference}."

    return wf


def _check_parking(tool: str, args: dict[str, Any]) -> bool:
    vehicle = args.get("vehicle")
    return (
        tool == "create_parking_booking"
        and _exact(args.get("customer_id"), _CUSTOMER_ID)
        and _exact(args.get("offer_id"), _OFFERS["long_stay"])
        and isinstance(vehicle, dict)
        and _alnum(vehicle.get("registration")) == "KX19TPV"
    )


AIRPORT_PARKING_OFFER = Scenario(
    name="airport_parking_offer",
    description="Airport parking: book the Long Stay offer ofr_5Wd7RbJ62s of the search for "
    "Sat 07-04 to Fri 07-10 (not another product's or the search id) for cus_R4t8Wm2Q (not "
    "the rewards number), car KX19 TPV.",
    tags=(HELDOUT4_TAG, "carry_id"),
    user_message=(
        "Hello, it's dana.whitlock@fastmail.example. I need parking at Bristol from 5am this "
        "Saturday until about 10pm the Friday after. Long Stay is fine, it's the cheapest. "
        "Same car as last time."
    ),
    build=_parking,
    validate=_check_parking,
    ideal_iterations=3,
    reference=(
        RefCall("find_customer_profile", {"email": "dana.whitlock@fastmail.example"}),
        RefCall(
            "search_parking_offers",
            {"airport": "BRS", "drop_off": "2026-07-04T05:00", "pick_up": "2026-07-10T22:00"},
        ),
        RefCall(
            "create_parking_booking",
            {
                "customer_id": _CUSTOMER_ID,
                "offer_id": _OFFERS["long_stay"],
                "vehicle": {"registration": "KX19 TPV"},
            },
        ),
    ),
    forbidden_tools=("cancel_parking_booking",),
)

# ── stock photos: the next_page_token, then an image id from page two ────

_PAGE_TOKEN = "Cg5saWdodGhvdXNlIGR1c2sQAxgD"
_CALDER_DUSK = "img_51Vz2Hk8"


def _photos() -> Workflow:
    wf = Workflow(
        "stock_photo_next_page",
        "License stock images for a magazine's picture desk.",
        system_prompt="You help the picture desk of Coastline Magazine license images from "
        "the Lumenstock library; licences are billed to the magazine's account. "
        "Today is Thursday 2026-11-19.",
    )

    @wf.tool(required=True, read_only=True)
    def search_images(query: str, page_token: str = "") -> str:
        """Search the image library, most relevant first, three images a page.

        While there are more results the page ends with a next_page_token; pass it
        as page_token (with the same query) to get the next page."""
        if page_token.strip():
            if page_token.strip() != _PAGE_TOKEN:
                raise ToolResolutionError("invalid page_token")
            return (
                "Page 2:\n"
                f"- {_CALDER_DUSK} 'Lighthouse at dusk, Whitby pier' by Ines Calder, 6000x4000\n"
                "- img_51Vz3Jp4 'Lighthouse in sea fog' by Ines Calder, 5472x3648\n"
                "- img_51Vz6Nq0 'Harbour lights at dusk' by Marta Quist, 4000x6000\n"
                "No more pages."
            )
        if not mentions(query, "lighthouse"):
            return f"0 results for {query!r}."
        return (
            "Page 1:\n"
            "- img_40Tq7Lm2 'Lighthouse at dusk, Cornwall' by Aled Price, 6000x4000\n"
            "- img_40Tq8Xc5 'Red lighthouse, winter storm' by Sara Lund, 5000x3333\n"
            "- img_40Tq9Rb1 'Lighthouse keeper's cottage' by Tom Okoye, 4500x3000\n"
            f"next_page_token: {_PAGE_TOKEN}"
        )

    wf.add_schema_tool(
        "license_image",
        "Buy a licence for one image for the magazine. Ends the task.",
        {
            "type": "object",
            "properties": {
                "image_id": {"type": "string", "pattern": "^img_[A-Za-z0-9]{8}$"},
                "licence": {
                    "type": "string",
                    "enum": ["editorial_web", "editorial_print", "editorial_all", "commercial"],
                    "description": "editorial_all covers print and web.",
                },
            },
            "required": ["image_id", "licence"],
            "additionalProperties": False,
        },
        lambda args: f"Licence LIC-883019 for {args.get('image_id')}; download link emailed.",
        terminal=True,
        prerequisites=["search_images"],
    )

    @wf.tool(read_only=True)
    def get_image_details(image_id: str) -> str:
        """Show an image's caption, keywords and model releases."""
        return f"{image_id}: caption and keywords."

    @wf.tool
    def add_to_lightbox(image_id: str, lightbox: str) -> str:
        """Save an image to one of the team's lightboxes."""
        return f"{image_id} saved to {lightbox}."

    return wf


STOCK_PHOTO_NEXT_PAGE = Scenario(
    name="stock_photo_next_page",
    description="Stock photos: Ines Calder's dusk lighthouse is on page 2, fetched with the "
    "next_page_token; license img_51Vz2Hk8 (not page 1's dusk shot, not her fog shot) "
    "editorial_web.",
    tags=(HELDOUT4_TAG, "carry_id"),
    user_message=(
        "Can you license Ines Calder's lighthouse at dusk photo for us? It's only going on "
        "the website, editorial use."
    ),
    build=_photos,
    validate=lambda tool, args: (
        tool == "license_image"
        and _exact(args.get("image_id"), _CALDER_DUSK)
        and args.get("licence") == "editorial_web"
    ),
    ideal_iterations=3,
    reference=(
        RefCall("search_images", {"query": "lighthouse at dusk"}),
        RefCall("search_images", {"query": "lighthouse at dusk", "page_token": _PAGE_TOKEN}),
        RefCall("license_image", {"image_id": _CALDER_DUSK, "licence": "editorial_web"}),
    ),
)

# ── smart thermostat: weekdays, "twenty and a half", "quarter past five" ──

_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday"]
_HH_MM = "^([01][0-9]|2[0-3]):[0-5][0-9]$"
_OFFICE_PERIOD = {"start": "07:30", "end": "17:15", "target_celsius": 20.5}


def _thermostat() -> Workflow:
    wf = Workflow(
        "thermostat_weekday_schedule",
        "Set up heating schedules in a smart-heating app.",
        system_prompt="You are the assistant in the Hearthly smart heating app. Look up the "
        "user's heating zones, then set schedules as they ask. Today is Sunday 2026-10-18.",
    )

    @wf.tool(required=True, read_only=True)
    def list_heating_zones() -> str:
        """List the heating zones of the user's home with their ids and current state."""
        return (
            "Home HH-2207-K 'Elm Cottage'. Zones: ZN-01 Living room, 18.5 °C, schedule "
            "'Winter weekdays'; ZN-02 Bedrooms, 17.0 °C, schedule 'Nights'; ZN-03 Kitchen, "
            "19.0 °C, no schedule; ZN-04 Home office, 16.5 °C, no schedule (radiator valve "
            "battery 12%)."
        )

    period = {
        "type": "object",
        "properties": {
            "start": {"type": "string", "pattern": _HH_MM, "description": "24-hour HH:MM"},
            "end": {"type": "string", "pattern": _HH_MM, "description": "24-hour HH:MM"},
            "target_celsius": {
                "type": "number",
                "minimum": 5,
                "maximum": 28,
                "multipleOf": 0.5,
            },
        },
        "required": ["start", "end", "target_celsius"],
        "additionalProperties": False,
    }
    wf.add_schema_tool(
        "set_heating_schedule",
        "Replace a zone's heating schedule: on the given days, heat to each period's "
        "target between its start and end. Ends the task.",
        {
            "type": "object",
            "properties": {
                "zone_id": {"type": "string", "pattern": "^ZN-[0-9]{2}$"},
                "days": {
                    "type": "array",
                    "items": {"type": "string", "enum": [*_WEEKDAYS, "saturday", "sunday"]},
                    "minItems": 1,
                    "maxItems": 7,
                    "uniqueItems": True,
                },
                "periods": {"type": "array", "items": period, "minItems": 1, "maxItems": 6},
                "preheat": {
                    "type": "boolean",
                    "description": "Start heating early so the room is at target by the start.",
                },
            },
            "required": ["zone_id", "days", "periods", "preheat"],
            "additionalProperties": False,
        },
        lambda args: f"Schedule saved for {args.get('zone_id')}.",
        terminal=True,
        prerequisites=["list_heating_zones"],
    )

    @wf.tool(read_only=True)
    def get_zone_schedule(zone_id: str) -> str:
        """Show a zone's current heating schedule."""
        return f"{zone_id}: no schedule."

    @wf.tool
    def boost_zone(zone_id: str, minutes: int, target_celsius: float) -> str:
        """Heat a zone to a temperature for a while, ignoring its schedule."""
        return f"{zone_id} boosted to {target_celsius} °C for {minutes} minutes."

    @wf.tool
    def clear_all_schedules(home_id: str) -> str:
        """Remove every zone's schedule in a home (heating then stays off)."""
        return f"All schedules in {home_id} removed."

    return wf


def _covers_office_hours(periods: Any) -> bool:
    """One period 07:30-17:15 at 20.5 C, or back-to-back ones that add up to it."""
    if not isinstance(periods, list) or not periods:
        return False
    spans = sorted((p["start"], p["end"]) for p in periods)
    return (
        all(has_number(p["target_celsius"], 20.5) for p in periods)
        and spans[0][0] == _OFFICE_PERIOD["start"]
        and spans[-1][1] == _OFFICE_PERIOD["end"]
        and all(spans[i][1] == spans[i + 1][0] for i in range(len(spans) - 1))
    )


def _check_heating(tool: str, args: dict[str, Any]) -> bool:
    days = args.get("days")
    return (
        tool == "set_heating_schedule"
        and same(args.get("zone_id"), "ZN-04")
        and isinstance(days, list)
        and len(days) == len(_WEEKDAYS)
        and {str(d).strip().lower() for d in days} == set(_WEEKDAYS)
        and _covers_office_hours(args.get("periods"))
        and args.get("preheat") is False
    )


THERMOSTAT_WEEKDAY_SCHEDULE = Scenario(
    name="thermostat_weekday_schedule",
    description="Thermostat: home office ZN-04, Monday to Friday ('weekdays only'), 07:30 to "
    "17:15 ('quarter past five', not 05:15) at 20.5 C ('twenty and a half'), preheat false.",
    tags=(HELDOUT4_TAG, "user_value"),
    user_message=(
        "Can you set the heating up for my home office? Weekdays only: twenty and a half "
        "degrees from half past seven in the morning until quarter past five. I don't want "
        "it firing up early to get there, just start at half seven."
    ),
    build=_thermostat,
    validate=_check_heating,
    ideal_iterations=2,
    reference=(
        RefCall("list_heating_zones", {}),
        RefCall(
            "set_heating_schedule",
            {
                "zone_id": "ZN-04",
                "days": list(_WEEKDAYS),
                "periods": [dict(_OFFICE_PERIOD)],
                "preheat": False,
            },
        ),
    ),
    forbidden_tools=("clear_all_schedules",),
)

# ── travel money: euros not pounds, "the day before we fly", a yes and a no

_ORDER = {
    "store_id": "HTM-0415",
    "currency": "EUR",
    "foreign_amount": 750,
    "collection_date": "2026-05-22",
    "buyback_guarantee": True,
    "sms_when_ready": False,
    "mobile": "07923 448106",
}


def _travel_money() -> Workflow:
    wf = Workflow(
        "travel_money_order",
        "Take travel money orders for collection in store.",
        system_prompt="You take orders for Halcyon Travel Money. Customers collect their "
        "currency in store, so find the store first. Today is Tuesday 2026-05-12.",
    )

    @wf.tool(required=True, read_only=True)
    def find_stores(location: str) -> str:
        """Find Halcyon stores near a town, postcode or airport. Returns store ids."""
        if not mentions(location, "leeds", "bradford", "lba"):
            raise ToolResolutionError(f"no stores near {location!r}")
        return (
            "HTM-0412 Leeds Trinity Centre, Mon-Sat 09:00-17:30; HTM-0415 Leeds Bradford "
            "Airport, departures hall, daily 04:00-21:00; HTM-0431 Bradford Broadway, "
            "Mon-Sat 09:30-17:00. Orders placed before 14:00 can be collected the next day."
        )

    @wf.tool(read_only=True)
    def get_travel_rates(currency_code: str) -> str:
        """Today's rate for buying a currency with pounds, and the buy-back terms."""
        return (
            f"1 GBP = 1.1432 {currency_code} (orders over 500 GBP: 1.1480). Buy-back "
            "guarantee 4.99 GBP: sell unused notes back at the same rate within 30 days."
        )

    wf.add_schema_tool(
        "place_currency_order",
        "Order foreign currency for collection at a store, paid by card now. Ends the task.",
        {
            "type": "object",
            "properties": {
                "store_id": {"type": "string", "pattern": "^HTM-[0-9]{4}$"},
                "currency": {
                    "type": "string",
                    "pattern": "^[A-Z]{3}$",
                    "description": "ISO 4217 code of the currency to buy.",
                },
                "foreign_amount": {
                    "type": "number",
                    "minimum": 50,
                    "maximum": 2500,
                    "multipleOf": 5,
                    "description": "How much of the foreign currency (not pounds).",
                },
                "collection_date": {"type": "string", "format": "date"},
                "buyback_guarantee": {"type": "boolean"},
                "sms_when_ready": {
                    "type": "boolean",
                    "description": "Text the customer when the order is ready to collect.",
                },
                "mobile": {"type": "string", "pattern": "^\\+?[0-9 ]{10,16}$"},
            },
            "required": list(_ORDER),
            "additionalProperties": False,
        },
        lambda args: f"Order HTM-ORD-558210 placed for {args.get('store_id')}.",
        terminal=True,
        prerequisites=["find_stores"],
    )

    @wf.tool
    def cancel_currency_order(order_reference: str) -> str:
        """Cancel a travel money order and refund the card."""
        return f"{order_reference} cancelled."

    return wf


def _check_order(tool: str, args: dict[str, Any]) -> bool:
    return (
        tool == "place_currency_order"
        and same(args.get("store_id"), "HTM-0415")
        and args.get("currency") == "EUR"
        and has_number(args.get("foreign_amount"), 750)
        and args.get("collection_date") == "2026-05-22"
        and args.get("buyback_guarantee") is True
        and args.get("sms_when_ready") is False
        and _digits(args.get("mobile")).endswith("7923448106")
    )


TRAVEL_MONEY_ORDER = Scenario(
    name="travel_money_order",
    description="Travel money: 750 EUR ('seven hundred and fifty euros', not pounds) at the "
    "airport store HTM-0415 on 2026-05-22 (the day before the 23rd), buy-back yes, text no.",
    tags=(HELDOUT4_TAG, "user_value"),
    user_message=(
        "Hiya, I'd like to order seven hundred and fifty euros to pick up at the Leeds "
        "Bradford airport branch. We fly out early on the 23rd so I'll collect it the day "
        "before. Yes please to the buy-back guarantee, but don't bother texting me when it's "
        "ready. My mobile's 07923 448106."
    ),
    build=_travel_money,
    validate=_check_order,
    ideal_iterations=2,
    reference=(
        RefCall("find_stores", {"location": "Leeds Bradford Airport"}),
        RefCall("place_currency_order", dict(_ORDER)),
    ),
    forbidden_tools=("cancel_currency_order",),
)


SCENARIOS: tuple[Scenario, ...] = (
    AIRPORT_PARKING_OFFER,
    STOCK_PHOTO_NEXT_PAGE,
    THERMOSTAT_WEEKDAY_SCHEDULE,
    TRAVEL_MONEY_ORDER,
    *heldout4_listings.SCENARIOS,
    *heldout4_part2.SCENARIOS,
)
