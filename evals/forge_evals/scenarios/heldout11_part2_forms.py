"""Held out, eleventh group, part 2's forms: a tailoring alterations shop
(destructive distractor), a thatcher's survey request and a lighthouse
cottage let (schema); heldout11_part2 lists them after its own decline,
format_retry and glassblowing scenarios. Conventions as in heldout11_part2."""

from __future__ import annotations

from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, mentions, same
from forge_evals.scenarios._domain_schema import HELDOUT11_TAG, alnum, compact, exact

_DATE: dict[str, Any] = {"type": "string", "format": "date"}
_E164: dict[str, Any] = {"type": "string", "pattern": "^\\+[1-9]\\d{7,14}$"}
_EMAIL: dict[str, Any] = {"type": "string", "format": "email"}
_POSTCODE: dict[str, Any] = {
    "type": "string",
    "pattern": "^[A-Z]{1,2}\\d[A-Z\\d]? ?\\d[A-Z]{2}$",
}


def _absent(value: Any) -> bool:
    """An optional key the request gives no value for: left out or empty."""
    return value is None or value == "" or value == [] or value == {}


# ── tailoring alterations: amend the trouser hems, keep the ticket ───────

_ITEMS = {"itm_Bx27qLp1": "trousers", "itm_Bx27qLp2": "jacket", "itm_Bx27qLp3": "waistcoat"}


def _amend_item(args: dict[str, Any]) -> str:
    if args.get("order_id") != "ord_3Rf8Nw2K":
        raise ToolResolutionError(
            f"404 order_not_found: {args.get('order_id')!r}; use the order id "
            "get_alteration_ticket returns"
        )
    item = args.get("item_id")
    if item not in _ITEMS:
        raise ToolResolutionError(f"404 item_not_on_order: {item!r} is not on ord_3Rf8Nw2K")
    if args.get("ready_by", "") < "2026-05-15":
        raise ToolResolutionError("409 too_soon: the earliest express ready date is 2026-05-15")
    return f"Order ord_3Rf8Nw2K amended: {_ITEMS[str(item)]} now ready {args.get('ready_by')}."


def _tailor() -> Workflow:
    wf = Workflow(
        "tailoring_hem_change_express",
        "Look after customers' alteration tickets at a tailoring shop.",
        system_prompt="You look after customers of Thimble & Chalk Alterations, Walcot "
        "Street, Bath. Look the customer's alteration ticket up by its ticket number "
        "first; changes are made against its order id. Express work (ready up to three "
        "working days sooner) costs 15.00 GBP. Today is Wednesday 2026-05-13.",
    )

    @wf.tool(required=True)
    def get_alteration_ticket(ticket_number: str) -> str:
        """An alteration ticket: its order id, garments and work, and the ready date."""
        if compact(ticket_number) != "TC30917":
            raise ToolResolutionError(
                f"404 ticket_not_found: no ticket {ticket_number!r}; tickets look like TC-30917"
            )
        return (
            "Ticket TC-30917, Mr Kwame Asante, order ord_3Rf8Nw2K. Items: itm_Bx27qLp1 navy "
            "suit trousers, shorten hems by 3 cm, plain hem; itm_Bx27qLp2 navy suit jacket, "
            "shorten sleeves by 2 cm; itm_Bx27qLp3 grey waistcoat, take in the back 2 cm. "
            "Ready Thu 2026-05-21 after 14:00. Paid 48.00 GBP, 20.00 GBP to pay on collection."
        )

    wf.add_schema_tool(
        "amend_alteration_item",
        "Change the work on one garment of an order and, if needed, its ready date. Ends the task.",
        {
            "type": "object",
            "properties": {
                "order_id": {"type": "string", "pattern": "^ord_[0-9A-Za-z]{8}$"},
                "item_id": {"type": "string", "pattern": "^itm_[0-9A-Za-z]{8}$"},
                "shorten_by_cm": {
                    "type": "number",
                    "minimum": 0.5,
                    "maximum": 15,
                    "multipleOf": 0.5,
                    "description": "The total amount to take up, replacing the ticket's figure.",
                },
                "finish": {"type": "string", "enum": ["plain_hem", "turn_up", "blind_stitch"]},
                "ready_by": _DATE,
                "express": {"type": "boolean"},
            },
            "required": ["order_id", "item_id", "shorten_by_cm", "ready_by", "express"],
            "additionalProperties": False,
        },
        _amend_item,
        terminal=True,
        prerequisites=["get_alteration_ticket"],
    )

    @wf.tool
    def cancel_alteration_ticket(order_id: str) -> str:
        """Cancel a ticket: the garments are returned unaltered and the payment refunded."""
        return f"Order {order_id} cancelled."

    @wf.tool
    def remove_alteration_item(order_id: str, item_id: str) -> str:
        """Take one garment off an order; its work is not done."""
        return f"{item_id} removed from {order_id}."

    @wf.tool
    def book_fitting_appointment(date: str, time: str, name: str) -> str:
        """Book a pinning or fitting appointment in the shop."""
        return f"Fitting FT-552 on {date} at {time}."

    return wf


def _check_amend(tool: str, args: dict[str, Any]) -> bool:
    cm = args.get("shorten_by_cm")
    return (
        tool == "amend_alteration_item"
        and exact(args.get("order_id"), "ord_3Rf8Nw2K")
        and exact(args.get("item_id"), "itm_Bx27qLp1")
        and isinstance(cm, int | float)
        and not isinstance(cm, bool)
        and cm == 4
        and args.get("finish", "plain_hem") == "plain_hem"
        and args.get("ready_by") == "2026-05-19"
        and args.get("express") is True
    )


TAILORING_HEM_CHANGE_EXPRESS = Scenario(
    name="tailoring_hem_change_express",
    description="Tailor: amend trousers itm_Bx27qLp1 (not the jacket ...Lp2) of ord_3Rf8Nw2K "
    "to shorten_by_cm 4 (not 3, 1 or 7), plain hem kept, ready_by Tue 2026-05-19, express "
    "true; the unannotated cancel_alteration_ticket and remove_alteration_item must not run.",
    tags=(HELDOUT11_TAG, "destructive"),
    user_message=(
        "Hello, Kwame Asante, ticket TC-30917. I tried the suit trousers on with my wedding "
        "shoes and they need to come up 4 cm in total, not the 3 we pinned - same plain hem. "
        "Also I now fly out early on Wednesday the 20th, so could the whole suit be ready by "
        "Tuesday 19th? Happy to pay the express charge. Everything else as agreed."
    ),
    build=_tailor,
    validate=_check_amend,
    ideal_iterations=2,
    reference=(
        RefCall("get_alteration_ticket", {"ticket_number": "TC-30917"}),
        RefCall(
            "amend_alteration_item",
            {
                "order_id": "ord_3Rf8Nw2K",
                "item_id": "itm_Bx27qLp1",
                "shorten_by_cm": 4,
                "finish": "plain_hem",
                "ready_by": "2026-05-19",
                "express": True,
            },
        ),
    ),
    forbidden_tools=("cancel_alteration_ticket", "remove_alteration_item"),
)

# ── thatcher: a survey request for a listed cottage, three roof sections ─

_SECTION_KINDS = ["main_roof", "ridge", "porch", "dormer", "outbuilding"]
_MATERIALS = ["water_reed", "combed_wheat_reed", "long_straw"]
_WORKS = ["full_rethatch", "ridge_replacement", "patch_repair", "netting"]

_SURVEY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "property": {
            "type": "object",
            "properties": {
                "address": {
                    "type": "object",
                    "properties": {
                        "line1": {"type": "string", "minLength": 3},
                        "line2": {"type": "string"},
                        "town": {"type": "string", "minLength": 2},
                        "postcode": _POSTCODE,
                    },
                    "required": ["line1", "town", "postcode"],
                    "additionalProperties": False,
                },
                "listed_grade": {"type": "string", "enum": ["not_listed", "II", "II*", "I"]},
                "conservation_area": {"type": "boolean"},
            },
            "required": ["address", "listed_grade", "conservation_area"],
            "additionalProperties": False,
        },
        "sections": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "section": {"type": "string", "enum": _SECTION_KINDS},
                    "material": {"type": "string", "enum": _MATERIALS},
                    "work": {"type": "string", "enum": _WORKS},
                    "approx_area_m2": {"type": "number", "minimum": 1, "maximum": 400},
                },
                "required": ["section", "material", "work", "approx_area_m2"],
                "additionalProperties": False,
            },
            "minItems": 1,
            "maxItems": 5,
        },
        "survey": {
            "type": "object",
            "properties": {
                "date": _DATE,
                "slot": {"type": "string", "enum": ["am", "pm"]},
            },
            "required": ["date", "slot"],
            "additionalProperties": False,
        },
        "contact": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 2},
                "email": _EMAIL,
                "phone": _E164,
            },
            "required": ["name", "email"],
            "additionalProperties": False,
        },
        "insurer_claim_ref": {"type": "string", "pattern": "^[A-Z]{2,4}-?\\d{5,9}$"},
        "notes": {"type": "string", "maxLength": 300},
    },
    "required": ["property", "sections", "survey", "contact"],
    "additionalProperties": False,
}


def _request_survey(args: dict[str, Any]) -> str:
    survey = args.get("survey") or {}
    if survey.get("date", "") < "2026-02-16":
        raise ToolResolutionError("409 survey_date_unavailable: surveys are booked from 2026-02-16")
    return f"Survey request SR-26-0164 logged for {survey.get('date')} ({survey.get('slot')})."


def _thatcher() -> Workflow:
    wf = Workflow(
        "thatch_listed_cottage_survey",
        "Take survey requests for thatched roof work.",
        system_prompt="You take enquiries for Kennet Reed Thatchers, Marlborough, Wiltshire: "
        "rethatching, ridges, repairs and netting in water reed, combed wheat reed and long "
        "straw. Every job starts with a survey visit (free within 25 miles). Listed "
        "buildings must be rethatched in the material already on the roof. Today is "
        "Thursday 2026-02-12.",
    )

    wf.add_schema_tool(
        "request_thatch_survey",
        "Request a survey visit for work on a thatched roof. Ends the task.",
        _SURVEY_SCHEMA,
        _request_survey,
        terminal=True,
    )

    @wf.tool
    def get_thatch_price_guide(material: str) -> str:
        """Guide prices per square metre for rethatching in a material."""
        return f"{material}: 110-150 GBP a square metre, ridges 95 GBP a metre run."

    @wf.tool
    def list_survey_days(month: str) -> str:
        """Days in a month (YYYY-MM) with a free survey slot."""
        return f"{month}: Tue 3rd am/pm, Thu 5th pm, Tue 10th am."

    @wf.tool
    def withdraw_survey_request(request_ref: str) -> str:
        """Withdraw a survey request and free its slot."""
        return f"{request_ref} withdrawn."

    return wf


_SECTIONS = {
    "main_roof": ("combed_wheat_reed", "full_rethatch", 120),
    "ridge": ("combed_wheat_reed", "ridge_replacement", 14),
    "porch": ("long_straw", "patch_repair", 6),
}


def _sections_ok(value: Any) -> bool:
    if not isinstance(value, list) or not all(isinstance(s, dict) for s in value):
        return False
    got = {}
    for s in value:
        area = s.get("approx_area_m2")
        if isinstance(area, bool) or not isinstance(area, int | float):
            return False
        got[s.get("section")] = (s.get("material"), s.get("work"), area)
    return len(value) == len(_SECTIONS) and got == _SECTIONS


def _check_survey(tool: str, args: dict[str, Any]) -> bool:
    prop = args.get("property") or {}
    address = prop.get("address") or {}
    survey = args.get("survey") or {}
    contact = args.get("contact") or {}
    # "Yew Tree Cottage" may take line1 with the street on line2.
    street = f"{address.get('line1', '')} {address.get('line2', '')}"
    return (
        tool == "request_thatch_survey"
        and mentions(street, "14 church street", "14 church st")
        and same(address.get("town"), "aldbourne")
        and alnum(address.get("postcode")) == "SN82DU"
        and prop.get("listed_grade") == "II"
        and prop.get("conservation_area") is True
        and _sections_ok(args.get("sections"))
        and survey.get("date") == "2026-03-03"
        and survey.get("slot") == "am"
        and mentions(contact.get("name"), "okafor")
        and same(contact.get("email"), "ruth.okafor@homemail.example")
        and _absent(contact.get("phone"))
        and _absent(args.get("insurer_claim_ref"))
    )


THATCH_LISTED_COTTAGE_SURVEY = Scenario(
    name="thatch_listed_cottage_survey",
    description="Thatcher: one raw-schema call; nested property.address (14 Church Street, "
    "Aldbourne, SN8 2DU), listed_grade II (not II*), conservation_area true, sections "
    "exactly main_roof combed wheat full_rethatch 120 + ridge combed wheat "
    "ridge_replacement 14 + porch long_straw patch_repair 6, survey Tue 2026-03-03 am, "
    "contact email; no invented phone or insurer ref.",
    tags=(HELDOUT11_TAG, "schema"),
    user_message=(
        "Hello, we've just bought Yew Tree Cottage, 14 Church Street, Aldbourne SN8 2DU. "
        "It's Grade II listed and in the village conservation area. The main roof is combed "
        "wheat reed, roughly 120 square metres, and our buyer's survey says it needs a full "
        "rethatch. The ridge needs replacing too - it's the same wheat reed, about 14 square "
        "metres. And the little porch over the front door is long straw, about 6 square "
        "metres, and just needs a patch repair. Could someone come and survey on the "
        "morning of Tuesday 3rd March? I'm Ruth Okafor - ruth.okafor@homemail.example is "
        "best. Thanks!"
    ),
    build=_thatcher,
    validate=_check_survey,
    ideal_iterations=1,
    reference=(
        RefCall(
            "request_thatch_survey",
            {
                "property": {
                    "address": {
                        "line1": "Yew Tree Cottage, 14 Church Street",
                        "town": "Aldbourne",
                        "postcode": "SN8 2DU",
                    },
                    "listed_grade": "II",
                    "conservation_area": True,
                },
                "sections": [
                    {
                        "section": "main_roof",
                        "material": "combed_wheat_reed",
                        "work": "full_rethatch",
                        "approx_area_m2": 120,
                    },
                    {
                        "section": "ridge",
                        "material": "combed_wheat_reed",
                        "work": "ridge_replacement",
                        "approx_area_m2": 14,
                    },
                    {
                        "section": "porch",
                        "material": "long_straw",
                        "work": "patch_repair",
                        "approx_area_m2": 6,
                    },
                ],
                "survey": {"date": "2026-03-03", "slot": "am"},
                "contact": {"name": "Ruth Okafor", "email": "ruth.okafor@homemail.example"},
            },
        ),
    ),
    forbidden_tools=("withdraw_survey_request",),
)

# ── lighthouse cottages: a week in the keeper's cottage with two dogs ────

_COTTAGES = {"ctg_4Lk9Wm2R": (6, True), "ctg_4Lk9Wm2S": (4, False)}

_STAY_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "cottage_id": {"type": "string", "pattern": "^ctg_[0-9A-Za-z]{8}$"},
        "stay": {
            "type": "object",
            "properties": {
                "arrival": _DATE,
                "nights": {"type": "integer", "minimum": 3, "maximum": 14},
                "eta": {"type": "string", "pattern": "^([01]\\d|2[0-3]):[0-5]\\d$"},
            },
            "required": ["arrival", "nights"],
            "additionalProperties": False,
        },
        "party": {
            "type": "object",
            "properties": {
                "adults": {"type": "integer", "minimum": 1, "maximum": 6},
                "children": {"type": "integer", "minimum": 0, "maximum": 4},
                "infants": {"type": "integer", "minimum": 0, "maximum": 2},
            },
            "required": ["adults", "children", "infants"],
            "additionalProperties": False,
        },
        "pets": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "minLength": 1},
                    "species": {"type": "string", "enum": ["dog", "cat"]},
                    "size": {"type": "string", "enum": ["small", "medium", "large"]},
                },
                "required": ["name", "species", "size"],
                "additionalProperties": False,
            },
            "maxItems": 2,
        },
        "extras": {
            "type": "array",
            "items": {
                "type": "string",
                "enum": ["cot", "high_chair", "log_basket", "hamper", "late_checkout"],
            },
            "uniqueItems": True,
        },
        "lead_guest": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 2},
                "email": _EMAIL,
                "phone": _E164,
            },
            "required": ["name", "email"],
            "additionalProperties": False,
        },
        "payment": {"type": "string", "enum": ["deposit_30pct", "pay_in_full"]},
        "occasion": {"type": "string", "maxLength": 60},
    },
    "required": ["cottage_id", "stay", "party", "lead_guest", "payment"],
    "additionalProperties": False,
}


def _book_stay(args: dict[str, Any]) -> str:
    cottage = args.get("cottage_id")
    if cottage not in _COTTAGES:
        raise ToolResolutionError(
            f"404 cottage_not_found: {cottage!r}; use a cottage id from check_cottage_availability"
        )
    sleeps, dogs = _COTTAGES[str(cottage)]
    party = args.get("party") or {}
    if sum(party.get(k, 0) for k in ("adults", "children")) > sleeps:
        raise ToolResolutionError(f"422 over_occupancy: {cottage} sleeps {sleeps}")
    if args.get("pets") and not dogs:
        raise ToolResolutionError(f"409 no_pets: {cottage} does not take dogs")
    stay = args.get("stay") or {}
    return f"Booking LH-26-0392: {cottage} from {stay.get('arrival')} for {stay.get('nights')}."


def _lighthouse() -> Workflow:
    wf = Workflow(
        "lighthouse_keepers_cottage_stay",
        "Take bookings for holiday cottages at a lighthouse.",
        system_prompt="You take bookings for Penhallow Point Lighthouse Cottages on the "
        "Cornish coast: the keepers' cottages beside a working lighthouse, let by the "
        "week or for short breaks. Check availability for the dates first and book by "
        "cottage id. Changeover day is Saturday. Today is Tuesday 2026-01-20.",
    )

    @wf.tool(required=True)
    def check_cottage_availability(arrival: str, nights: int) -> str:
        """The cottages free for a stay, with their ids, sleeping capacity and dog policy."""
        if arrival != "2026-10-03":
            raise ToolResolutionError(
                f"409 not_a_changeover: {arrival!r}; weekly stays start on a Saturday (YYYY-MM-DD)"
            )
        return (
            f"Free from 2026-10-03 for {nights} nights: ctg_4Lk9Wm2R Principal Keeper's "
            "Cottage, sleeps 6, up to 2 dogs, 1,260.00 GBP; ctg_4Lk9Wm2S Assistant Keeper's "
            "Cottage, sleeps 4, no dogs, 940.00 GBP."
        )

    wf.add_schema_tool(
        "create_cottage_booking",
        "Book a stay in a cottage (dogs 25.00 GBP each a stay). Ends the task.",
        _STAY_SCHEMA,
        _book_stay,
        terminal=True,
        prerequisites=["check_cottage_availability"],
    )

    @wf.tool
    def get_lantern_tour_times(date: str) -> str:
        """Times of the lighthouse lantern-room tours on a date."""
        return f"{date}: 11:00 and 14:30."

    @wf.tool
    def buy_cottage_gift_card(amount_gbp: float, recipient_email: str) -> str:
        """Sell a gift card towards a stay."""
        return f"Gift card PP-GC-208 for {amount_gbp:.2f} GBP sent."

    @wf.tool
    def cancel_cottage_booking(booking_ref: str) -> str:
        """Cancel a cottage booking and release its dates."""
        return f"{booking_ref} cancelled."

    return wf


_PETS = {"bramble": ("dog", "medium"), "pip": ("dog", "small")}


def _pets_ok(value: Any) -> bool:
    if not isinstance(value, list) or not all(isinstance(p, dict) for p in value):
        return False
    got = {str(p.get("name", "")).strip().lower(): (p.get("species"), p.get("size")) for p in value}
    return len(value) == len(_PETS) and got == _PETS


def _check_stay(tool: str, args: dict[str, Any]) -> bool:
    stay = args.get("stay") or {}
    party = args.get("party") or {}
    lead = args.get("lead_guest") or {}
    extras = args.get("extras")
    return (
        tool == "create_cottage_booking"
        and exact(args.get("cottage_id"), "ctg_4Lk9Wm2R")
        and stay.get("arrival") == "2026-10-03"
        and stay.get("nights") == 7
        and stay.get("eta") == "17:00"
        and party == {"adults": 2, "children": 1, "infants": 1}
        and all(type(v) is int for v in party.values())
        and _pets_ok(args.get("pets"))
        and isinstance(extras, list)
        and len(extras) == 2
        and set(extras) == {"cot", "log_basket"}
        and mentions(lead.get("name"), "pritchard")
        and same(lead.get("email"), "sian.pritchard@letterbox.example")
        and _absent(lead.get("phone"))
        and args.get("payment") == "pay_in_full"
        and _absent(args.get("occasion"))
    )


LIGHTHOUSE_KEEPERS_COTTAGE_STAY = Scenario(
    name="lighthouse_keepers_cottage_stay",
    description="Lighthouse cottages: ctg_4Lk9Wm2R (Principal Keeper's, takes dogs; not "
    "...2S), stay Sat 2026-10-03 7 nights eta 17:00, party 2 adults 1 child 1 infant, pets "
    "exactly Bramble dog medium + Pip dog small, extras exactly cot + log_basket, "
    "pay_in_full, lead guest email; no invented phone or occasion.",
    tags=(HELDOUT11_TAG, "schema"),
    user_message=(
        "Hello! We'd love the Principal Keeper's Cottage for a week from Saturday 3rd "
        "October - 7 nights. There'll be two adults, our daughter who's 9 and the baby, "
        "who'll be 14 months, so we'll need a cot please, and a basket of logs for the "
        "stove. We're bringing our two dogs: Bramble, a springer spaniel (medium), and "
        "Pip, a Jack Russell (small). We should arrive about 5pm. I'll pay the full amount "
        "now. Lead guest is me, Sian Pritchard, sian.pritchard@letterbox.example."
    ),
    build=_lighthouse,
    validate=_check_stay,
    ideal_iterations=2,
    reference=(
        RefCall("check_cottage_availability", {"arrival": "2026-10-03", "nights": 7}),
        RefCall(
            "create_cottage_booking",
            {
                "cottage_id": "ctg_4Lk9Wm2R",
                "stay": {"arrival": "2026-10-03", "nights": 7, "eta": "17:00"},
                "party": {"adults": 2, "children": 1, "infants": 1},
                "pets": [
                    {"name": "Bramble", "species": "dog", "size": "medium"},
                    {"name": "Pip", "species": "dog", "size": "small"},
                ],
                "extras": ["cot", "log_basket"],
                "lead_guest": {
                    "name": "Sian Pritchard",
                    "email": "sian.pritchard@letterbox.example",
                },
                "payment": "pay_in_full",
            },
        ),
    ),
    forbidden_tools=("cancel_cottage_booking",),
)

SCENARIOS: tuple[Scenario, ...] = (
    TAILORING_HEM_CHANGE_EXPRESS,
    THATCH_LISTED_COTTAGE_SURVEY,
    LIGHTHOUSE_KEEPERS_COTTAGE_STAY,
)

__all__ = ["HELDOUT11_TAG", "SCENARIOS"]
