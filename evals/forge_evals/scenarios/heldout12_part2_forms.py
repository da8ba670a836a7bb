"""Held out, twelfth group, part 2's forms: a typewriter repair workshop
(destructive distractor), a violin bow rehair drop-off and a chimney liner
survey request (schema); heldout12_part2 lists them after its own decline,
format_retry and cinema scenarios. Conventions as in heldout12_part2."""

from __future__ import annotations

from datetime import date
from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, mentions, same
from forge_evals.scenarios._domain_schema import HELDOUT12_TAG, alnum, compact, exact

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


def _number(value: Any, target: float) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value == target


# ── typewriter repair: add platen and roller work, keep the job open ─────

_WORK = ["platen_recover", "feed_rollers", "ribbon_vibrator", "escapement", "typeface_solder"]


def _add_work(args: dict[str, Any]) -> str:
    if args.get("job_id") != "job_2Fk8Lw5T":
        raise ToolResolutionError(
            f"404 job_not_found: {args.get('job_id')!r}; use the job id get_typewriter_repair_job "
            "returns"
        )
    work = args.get("add_work")
    if not isinstance(work, list) or not work or any(w not in _WORK for w in work):
        raise ToolResolutionError(f"422 add_work {work!r}: give a list of work codes from {_WORK}")
    return f"Job job_2Fk8Lw5T updated: {', '.join(work)} added; return {args.get('return_method')}."


def _typewriter_shop() -> Workflow:
    wf = Workflow(
        "typewriter_platen_rollers_courier",
        "Look after customers' typewriter repair jobs at a workshop.",
        system_prompt="You look after customers of Keystrike Typewriter Workshop, Kirkstall, "
        "Leeds, who service and restore manual typewriters. Look the customer's repair job "
        "up by its job number first; changes are made against its job id. Extra work found "
        "on the bench is only done with the customer's go-ahead and up to the limit they "
        "set. Today is Tuesday 2026-10-13.",
    )

    @wf.tool(required=True)
    def get_typewriter_repair_job(job_number: str) -> str:
        """A repair job: its job id, the machine, the work booked, estimate and return plan."""
        if compact(job_number) != "KW2214":
            raise ToolResolutionError(
                f"404 job_not_found: no job {job_number!r}; job numbers look like KW-2214"
            )
        return (
            "Job KW-2214, Harriet Vale, job job_2Fk8Lw5T. Machine: Olympia SM3 (1958), serial "
            "SM3-1174402. Booked: clean_and_oil, new black ribbon, 85.00 GBP. Bench note: "
            "platen hardened and cracked, feed rollers flattened; awaiting the customer's "
            "go-ahead. Return: collect in the workshop."
        )

    wf.add_schema_tool(
        "add_typewriter_repair_work",
        "Add approved extra work to a repair job and set how the machine comes back. Ends the "
        "task.",
        {
            "type": "object",
            "properties": {
                "job_id": {"type": "string", "pattern": "^job_[0-9A-Za-z]{8}$"},
                "add_work": {
                    "type": "array",
                    "items": {"type": "string", "enum": _WORK},
                    "minItems": 1,
                    "uniqueItems": True,
                },
                "max_extra_gbp": {"type": "number", "minimum": 0, "maximum": 500},
                "return_method": {
                    "type": "string",
                    "enum": ["collect_in_workshop", "tracked_courier"],
                },
                "ready_by": _DATE,
            },
            "required": ["job_id", "add_work", "max_extra_gbp", "return_method"],
            "additionalProperties": False,
        },
        _add_work,
        terminal=True,
        prerequisites=["get_typewriter_repair_job"],
    )

    @wf.tool
    def close_typewriter_repair_job(job_id: str) -> str:
        """Close a repair job: the work stops and the machine is sent back as it is."""
        return f"Job {job_id} closed."

    @wf.tool
    def sign_typewriter_over_for_parts(job_id: str) -> str:
        """Sign the machine over to the workshop for spare parts and close its job."""
        return f"Machine on {job_id} signed over for parts."

    @wf.tool
    def order_typewriter_ribbon(model: str, colour: str, spools: int) -> str:
        """Order replacement ribbons for a typewriter model (6.50 GBP a spool)."""
        return f"{spools} {colour} ribbons for {model} ordered."

    return wf


def _check_add_work(tool: str, args: dict[str, Any]) -> bool:
    work = args.get("add_work")
    return (
        tool == "add_typewriter_repair_work"
        and exact(args.get("job_id"), "job_2Fk8Lw5T")
        and isinstance(work, list)
        and len(work) == 2
        and set(work) == {"platen_recover", "feed_rollers"}
        and _number(args.get("max_extra_gbp"), 90)
        and args.get("return_method") == "tracked_courier"
        and _absent(args.get("ready_by"))
    )


TYPEWRITER_PLATEN_ROLLERS_COURIER = Scenario(
    name="typewriter_platen_rollers_courier",
    description="Typewriter workshop: add exactly platen_recover + feed_rollers (no other "
    "work) to job_2Fk8Lw5T, max_extra_gbp 90 (not 85 or 175), return tracked_courier, no "
    "invented ready date; the customer nearly scrapped it, so the unannotated "
    "sign_typewriter_over_for_parts and close_typewriter_repair_job must not run.",
    tags=(HELDOUT12_TAG, "destructive"),
    user_message=(
        "Hello, Harriet Vale, job KW-2214 (the Olympia SM3). Thanks for ringing about the "
        "cracked platen. I did wonder about just letting you keep it for parts, but it was "
        "my grandfather's, so no - please go ahead and re-cover the platen, and replace the "
        "feed rollers while it's apart. Keep the extra work under 90 pounds on top of the "
        "original estimate. And rather than me collecting it, could you courier it back to "
        "me? Thank you!"
    ),
    build=_typewriter_shop,
    validate=_check_add_work,
    ideal_iterations=2,
    reference=(
        RefCall("get_typewriter_repair_job", {"job_number": "KW-2214"}),
        RefCall(
            "add_typewriter_repair_work",
            {
                "job_id": "job_2Fk8Lw5T",
                "add_work": ["platen_recover", "feed_rollers"],
                "max_extra_gbp": 90,
                "return_method": "tracked_courier",
            },
        ),
    ),
    forbidden_tools=("close_typewriter_repair_job", "sign_typewriter_over_for_parts"),
)

# ── violin bow rehair: three bows dropped off on one morning ─────────────

_BOW_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "customer": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 2},
                "email": _EMAIL,
                "phone": _E164,
            },
            "required": ["name", "email"],
            "additionalProperties": False,
        },
        "bows": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "instrument": {
                        "type": "string",
                        "enum": ["violin", "viola", "cello", "double_bass"],
                    },
                    "size": {"type": "string", "enum": ["4/4", "7/8", "3/4", "1/2", "1/4", "1/8"]},
                    "stick": {
                        "type": "string",
                        "enum": ["pernambuco", "brazilwood", "carbon_fibre", "snakewood"],
                    },
                    "hair": {
                        "type": "string",
                        "enum": [
                            "white_mongolian",
                            "white_siberian",
                            "black_stallion",
                            "salt_and_pepper",
                        ],
                    },
                    "extras": {
                        "type": "array",
                        "items": {
                            "type": "string",
                            "enum": ["thumb_grip", "rewind_lapping", "new_eyelet", "camber_check"],
                        },
                        "uniqueItems": True,
                    },
                },
                "required": ["instrument", "size", "stick", "hair"],
                "additionalProperties": False,
            },
            "minItems": 1,
            "maxItems": 4,
        },
        "drop_off": {
            "type": "object",
            "properties": {
                "date": _DATE,
                "slot": {"type": "string", "enum": ["morning", "afternoon"]},
            },
            "required": ["date", "slot"],
            "additionalProperties": False,
        },
        "return_method": {"type": "string", "enum": ["collect", "insured_post"]},
        "rush": {"type": "boolean"},
        "insurance_policy_ref": {"type": "string", "pattern": "^[A-Z]{2,4}\\d{6,10}$"},
        "notes": {"type": "string", "maxLength": 300},
    },
    "required": ["customer", "bows", "drop_off", "return_method"],
    "additionalProperties": False,
}


def _book_rehair(args: dict[str, Any]) -> str:
    drop = args.get("drop_off") or {}
    try:
        day = date.fromisoformat(str(drop.get("date")))
    except ValueError as exc:
        raise ToolResolutionError(
            f"422 drop_off.date {drop.get('date')!r}: use YYYY-MM-DD"
        ) from exc
    if day.weekday() in (0, 6) or day < date(2026, 9, 3):
        raise ToolResolutionError(
            f"409 workshop_closed: no drop-off on {day}; the workshop takes bows Tuesday to "
            "Saturday from 2026-09-03"
        )
    bows = args.get("bows") or []
    return f"Rehair booking HB-26-0655: {len(bows)} bows, drop-off {day} {drop.get('slot')}."


def _bow_workshop() -> Workflow:
    wf = Workflow(
        "violin_bow_rehair_three_bows",
        "Take rehair bookings for violin, viola, cello and bass bows.",
        system_prompt="You take bookings for Hartwell Bow Workshop, Cheltenham, who rehair "
        "and repair bows for string players. Bows are dropped off at the workshop in a "
        "morning or afternoon slot, Tuesday to Saturday, and are usually ready within a "
        "week. Today is Wednesday 2026-09-02.",
    )

    wf.add_schema_tool(
        "book_bow_rehair",
        "Book one or more bows in for rehairing and any extra work. Ends the task.",
        _BOW_SCHEMA,
        _book_rehair,
        terminal=True,
    )

    @wf.tool
    def get_bow_rehair_prices() -> str:
        """Rehair prices by instrument and hair, and the price of each extra."""
        return (
            "Violin 55.00 GBP, viola 58.00, cello 65.00, bass 75.00; Siberian hair +15.00; "
            "thumb grip 18.00, rewind lapping 30.00, eyelet 25.00."
        )

    @wf.tool
    def list_bow_drop_off_days(month: str) -> str:
        """Days in a month (YYYY-MM) with free drop-off slots."""
        return f"{month}: Thu 10th morning, Fri 11th afternoon, Tue 15th morning."

    @wf.tool
    def cancel_bow_rehair(booking_ref: str) -> str:
        """Cancel a rehair booking and free its drop-off slot."""
        return f"{booking_ref} cancelled."

    return wf


_BOWS = {
    ("violin", "4/4"): ("pernambuco", "white_siberian", ["thumb_grip"]),
    ("cello", "4/4"): ("carbon_fibre", "black_stallion", ["rewind_lapping"]),
    ("violin", "1/2"): ("brazilwood", "white_mongolian", []),
}


def _bows_ok(value: Any) -> bool:
    if not isinstance(value, list) or not all(isinstance(b, dict) for b in value):
        return False
    got = {}
    for b in value:
        extras = b.get("extras") or []
        if not isinstance(extras, list):
            return False
        got[(b.get("instrument"), b.get("size"))] = (b.get("stick"), b.get("hair"), sorted(extras))
    return len(value) == len(_BOWS) and got == _BOWS


def _check_rehair(tool: str, args: dict[str, Any]) -> bool:
    customer = args.get("customer") or {}
    drop = args.get("drop_off") or {}
    return (
        tool == "book_bow_rehair"
        and mentions(customer.get("name"), "castellano")
        and same(customer.get("email"), "ines.castellano@bowmail.example")
        and _absent(customer.get("phone"))
        and _bows_ok(args.get("bows"))
        and drop.get("date") == "2026-09-10"
        and drop.get("slot") == "morning"
        and args.get("return_method") == "collect"
        and args.get("rush") in (None, False)
        and _absent(args.get("insurance_policy_ref"))
        and _absent(args.get("notes"))
    )


VIOLIN_BOW_REHAIR_THREE_BOWS = Scenario(
    name="violin_bow_rehair_three_bows",
    description="Bow workshop: one raw-schema call; bows exactly violin 4/4 pernambuco "
    "white_siberian + thumb_grip, cello 4/4 carbon_fibre black_stallion + rewind_lapping, "
    "violin 1/2 brazilwood white_mongolian no extras; drop-off Thu 2026-09-10 morning, "
    "collect, not rush, customer email; no invented phone, insurance ref or notes.",
    tags=(HELDOUT12_TAG, "schema"),
    user_message=(
        "Hello, I'd like to drop three bows in for rehairing on the morning of Thursday "
        "10th September. First, my own full-size violin bow - pernambuco - with white "
        "Siberian hair please, and it needs a new thumb grip. Second, my cello bow (full "
        "size, carbon fibre): black stallion hair, and the silver wire lapping wants "
        "rewinding. Third, my son's half-size violin bow, brazilwood, just ordinary white "
        "Mongolian hair, nothing else. No rush at all, and I'll collect them when they're "
        "ready. Ines Castellano, ines.castellano@bowmail.example"
    ),
    build=_bow_workshop,
    validate=_check_rehair,
    ideal_iterations=1,
    reference=(
        RefCall(
            "book_bow_rehair",
            {
                "customer": {
                    "name": "Ines Castellano",
                    "email": "ines.castellano@bowmail.example",
                },
                "bows": [
                    {
                        "instrument": "violin",
                        "size": "4/4",
                        "stick": "pernambuco",
                        "hair": "white_siberian",
                        "extras": ["thumb_grip"],
                    },
                    {
                        "instrument": "cello",
                        "size": "4/4",
                        "stick": "carbon_fibre",
                        "hair": "black_stallion",
                        "extras": ["rewind_lapping"],
                    },
                    {
                        "instrument": "violin",
                        "size": "1/2",
                        "stick": "brazilwood",
                        "hair": "white_mongolian",
                    },
                ],
                "drop_off": {"date": "2026-09-10", "slot": "morning"},
                "return_method": "collect",
                "rush": False,
            },
        ),
    ),
    forbidden_tools=("cancel_bow_rehair",),
)

# ── chimney lining: a survey request for two flues of a semi ─────────────

_LOCATIONS = ["living_room", "dining_room", "kitchen", "bedroom", "snug"]
_APPLIANCES = ["wood_burner", "multifuel_stove", "open_fire", "gas_fire", "oil_boiler"]
_LINERS = ["stainless_316", "stainless_904", "pumice_block", "undecided"]

_LINER_SURVEY_SCHEMA: dict[str, Any] = {
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
                "type": {
                    "type": "string",
                    "enum": ["detached", "semi_detached", "terraced", "bungalow", "flat"],
                },
                "storeys": {"type": "integer", "minimum": 1, "maximum": 4},
                "listed": {"type": "boolean"},
            },
            "required": ["address", "type", "storeys", "listed"],
            "additionalProperties": False,
        },
        "flues": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "room": {"type": "string", "enum": _LOCATIONS},
                    "appliance": {"type": "string", "enum": _APPLIANCES},
                    "liner": {"type": "string", "enum": _LINERS},
                    "approx_height_m": {"type": "number", "minimum": 3, "maximum": 20},
                    "appliance_output_kw": {"type": "number", "minimum": 1, "maximum": 30},
                },
                "required": ["room", "appliance", "liner", "approx_height_m"],
                "additionalProperties": False,
            },
            "minItems": 1,
            "maxItems": 4,
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
        "notes": {"type": "string", "maxLength": 300},
    },
    "required": ["property", "flues", "survey", "contact"],
    "additionalProperties": False,
}


def _request_liner_survey(args: dict[str, Any]) -> str:
    survey = args.get("survey") or {}
    if str(survey.get("date", "")) < "2026-08-24":
        raise ToolResolutionError(
            "409 survey_date_unavailable: liner surveys are booked from 2026-08-24"
        )
    return f"Liner survey LS-26-0917 logged for {survey.get('date')} ({survey.get('slot')})."


def _chimney_liners() -> Workflow:
    wf = Workflow(
        "chimney_liner_survey_two_flues",
        "Take survey requests for chimney liner installation.",
        system_prompt="You take enquiries for Greystone Flue & Liner, Halifax, West "
        "Yorkshire, who fit flexible stainless and pumice liners in chimneys for stoves and "
        "open fires. Every installation starts with a survey visit, including a smoke test "
        "of each flue. Today is Thursday 2026-08-20.",
    )

    wf.add_schema_tool(
        "request_chimney_liner_survey",
        "Request a survey visit for lining one or more chimney flues. Ends the task.",
        _LINER_SURVEY_SCHEMA,
        _request_liner_survey,
        terminal=True,
    )

    @wf.tool
    def get_chimney_liner_prices(liner: str) -> str:
        """Guide prices per metre for a liner type, fitted."""
        return f"{liner}: 70-95 GBP a metre fitted, cowl and register plate extra."

    @wf.tool
    def list_liner_survey_slots(week_commencing: str) -> str:
        """Free survey slots in a week (Monday's date, YYYY-MM-DD)."""
        return f"Week of {week_commencing}: Wed am, Fri am, Fri pm."

    @wf.tool
    def withdraw_chimney_liner_survey(survey_ref: str) -> str:
        """Withdraw a survey request and free its slot."""
        return f"{survey_ref} withdrawn."

    return wf


_FLUES = {
    "living_room": ("multifuel_stove", "stainless_904", 9, 5),
    "dining_room": ("open_fire", "undecided", 8, None),
}


def _flues_ok(value: Any) -> bool:
    if not isinstance(value, list) or not all(isinstance(f, dict) for f in value):
        return False
    got = {}
    for f in value:
        height, kw = f.get("approx_height_m"), f.get("appliance_output_kw")
        if isinstance(height, bool) or not isinstance(height, int | float):
            return False
        if kw is not None and (isinstance(kw, bool) or not isinstance(kw, int | float)):
            return False
        got[f.get("room")] = (f.get("appliance"), f.get("liner"), height, kw)
    return len(value) == len(_FLUES) and got == _FLUES


def _check_liner_survey(tool: str, args: dict[str, Any]) -> bool:
    prop = args.get("property") or {}
    address = prop.get("address") or {}
    survey = args.get("survey") or {}
    contact = args.get("contact") or {}
    street = f"{address.get('line1', '')} {address.get('line2', '')}"
    return (
        tool == "request_chimney_liner_survey"
        and mentions(street, "27 mill lane")
        and same(address.get("town"), "hebden bridge")
        and alnum(address.get("postcode")) == "HX76DQ"
        and prop.get("type") == "semi_detached"
        and type(prop.get("storeys")) is int
        and prop.get("storeys") == 2
        and prop.get("listed") is False
        and _flues_ok(args.get("flues"))
        and survey.get("date") == "2026-09-04"
        and survey.get("slot") == "am"
        and mentions(contact.get("name"), "pryce")
        and same(contact.get("email"), "owen.pryce@hearthpost.example")
        and _absent(contact.get("phone"))
        and _absent(args.get("notes"))
    )


CHIMNEY_LINER_SURVEY_TWO_FLUES = Scenario(
    name="chimney_liner_survey_two_flues",
    description="Chimney liners: one raw-schema call; nested property.address (27 Mill "
    "Lane, Hebden Bridge, HX7 6DQ), semi_detached, storeys 2, listed false, flues exactly "
    "living_room multifuel_stove stainless_904 9 m 5 kW + dining_room open_fire undecided "
    "8 m (no kW), survey Fri 2026-09-04 am, contact email; no invented phone or notes.",
    tags=(HELDOUT12_TAG, "schema"),
    user_message=(
        "Hi, we'd like a survey for chimney liners at 27 Mill Lane, Hebden Bridge HX7 6DQ. "
        "It's a two-storey stone semi, not listed. Two flues need lining: the living room, "
        "where we're putting in a new 5 kW multifuel stove - we'd like the 904-grade "
        "stainless liner, and the flue is about 9 metres; and the dining room open fire, "
        "about 8 metres, where we haven't decided on a liner yet. Could you come on the "
        "morning of Friday 4th September? Owen Pryce, owen.pryce@hearthpost.example."
    ),
    build=_chimney_liners,
    validate=_check_liner_survey,
    ideal_iterations=1,
    reference=(
        RefCall(
            "request_chimney_liner_survey",
            {
                "property": {
                    "address": {
                        "line1": "27 Mill Lane",
                        "town": "Hebden Bridge",
                        "postcode": "HX7 6DQ",
                    },
                    "type": "semi_detached",
                    "storeys": 2,
                    "listed": False,
                },
                "flues": [
                    {
                        "room": "living_room",
                        "appliance": "multifuel_stove",
                        "liner": "stainless_904",
                        "approx_height_m": 9,
                        "appliance_output_kw": 5,
                    },
                    {
                        "room": "dining_room",
                        "appliance": "open_fire",
                        "liner": "undecided",
                        "approx_height_m": 8,
                    },
                ],
                "survey": {"date": "2026-09-04", "slot": "am"},
                "contact": {"name": "Owen Pryce", "email": "owen.pryce@hearthpost.example"},
            },
        ),
    ),
    forbidden_tools=("withdraw_chimney_liner_survey",),
)

SCENARIOS: tuple[Scenario, ...] = (
    TYPEWRITER_PLATEN_ROLLERS_COURIER,
    VIOLIN_BOW_REHAIR_THREE_BOWS,
    CHIMNEY_LINER_SURVEY_TWO_FLUES,
)

__all__ = ["HELDOUT12_TAG", "SCENARIOS"]
