"""Held out, eighth group, part 2's forms: a vinyl pressing plant
(destructive), a stained-glass conservation studio and a roof surveyor
(schema); heldout8_part2 lists them after its own decline, format_retry and
car-share scenarios. Conventions as in heldout8_part2."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, mentions, same
from forge_evals.scenarios._domain_schema import HELDOUT8_TAG, alnum, compact, exact

_DATE: dict[str, Any] = {"type": "string", "format": "date"}

# ── vinyl pressing: drop the colour variant, not the whole order ─────────

_LINES = {"ln_3Fq8TzWa": 500, "ln_3Fq8TzWb": 300}
_LINE_ID: dict[str, Any] = {"type": "string", "pattern": "^ln_[0-9A-Za-z]{8}$"}


def _pressing_plant() -> Workflow:
    wf = Workflow(
        "vinyl_pressing_drop_variant",
        "Look after the label customers of a vinyl record pressing plant.",
        system_prompt="You look after label customers of Groove Foundry Pressing, Sheffield. "
        "Find the pressing order by its reference first. Records are pressed in multiples of "
        "100 per line (at least 100). Today is Tuesday 2026-09-15.",
    )

    @wf.tool(required=True)
    def get_pressing_order(order_ref: str) -> str:
        """A pressing order's lines, test pressing status and pressing slot."""
        if compact(order_ref) != "PO260731":
            raise ToolResolutionError(f"order_not_found: no pressing order {order_ref!r}")
        return (
            "Order PO-26-0731, label Fennel Records (lbl_Qe72Hx), FNL-031 'Glass Harbour' LP. "
            "Test pressings approved 2026-09-09. Lines: ln_3Fq8TzWa 500 x 140 g black vinyl, "
            "printed inner sleeve; ln_3Fq8TzWb 300 x 140 g translucent blue vinyl, printed "
            "inner sleeve. Pressing slot: week of 2026-10-05. Stampers STP-0731-A/B in store."
        )

    def amend(args: dict[str, Any]) -> str:
        for change in args.get("changes") or []:
            if change.get("line_id") not in _LINES:
                raise ToolResolutionError(f"line_not_found: {change.get('line_id')!r}")
            qty = change.get("quantity")
            if change.get("action") == "set_quantity" and (not isinstance(qty, int) or qty % 100):
                raise ToolResolutionError("quantity must be a whole multiple of 100")
        return f"Order {args.get('order_ref')} amended (revision 3); slot unchanged."

    wf.add_schema_tool(
        "amend_pressing_order",
        "Change the lines of a pressing order: remove a line or set a line's quantity. "
        "Ends the task.",
        {
            "type": "object",
            "properties": {
                "order_ref": {"type": "string", "pattern": "^PO-\\d{2}-\\d{4}$"},
                "changes": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 10,
                    "items": {
                        "oneOf": [
                            {
                                "type": "object",
                                "properties": {
                                    "action": {"const": "remove_line"},
                                    "line_id": _LINE_ID,
                                },
                                "required": ["action", "line_id"],
                                "additionalProperties": False,
                            },
                            {
                                "type": "object",
                                "properties": {
                                    "action": {"const": "set_quantity"},
                                    "line_id": _LINE_ID,
                                    "quantity": {
                                        "type": "integer",
                                        "minimum": 100,
                                        "maximum": 10000,
                                        "multipleOf": 100,
                                    },
                                },
                                "required": ["action", "line_id", "quantity"],
                                "additionalProperties": False,
                            },
                        ]
                    },
                },
                "note": {"type": "string", "maxLength": 300},
            },
            "required": ["order_ref", "changes"],
            "additionalProperties": False,
        },
        amend,
        terminal=True,
        prerequisites=["get_pressing_order"],
    )

    @wf.tool
    def cancel_pressing_order(order_ref: str) -> str:
        """Cancel a pressing order: its slot is released and its stampers are scrapped."""
        return f"{order_ref} cancelled; stampers scrapped."

    @wf.tool
    def request_test_pressings(order_ref: str, copies: int) -> str:
        """Order another round of test pressings (60.00 GBP for 5)."""
        return f"{copies} test pressings of {order_ref} queued."

    @wf.tool
    def quote_shipping(order_ref: str, postcode: str) -> str:
        """Pallet delivery price for the finished records."""
        return f"{order_ref} to {postcode}: 145.00 GBP, one pallet."

    return wf


def _change_set(changes: Any) -> set[tuple[Any, ...]] | None:
    if not isinstance(changes, list):
        return None
    out: set[tuple[Any, ...]] = set()
    for c in changes:
        qty = c.get("quantity")
        out.add((c.get("action"), c.get("line_id"), qty if type(qty) is int else None))
    return out if len(out) == len(changes) else None


_AMEND = [
    {"action": "remove_line", "line_id": "ln_3Fq8TzWb"},
    {"action": "set_quantity", "line_id": "ln_3Fq8TzWa", "quantity": 700},
]

VINYL_PRESSING_DROP_VARIANT = Scenario(
    name="vinyl_pressing_drop_variant",
    description="Vinyl pressing: 'scrap the blue variant' means remove line ln_3Fq8TzWb and "
    "set black ln_3Fq8TzWa to 700 on PO-26-0731 (exact ids, both changes, nothing else); "
    "the unannotated cancel_pressing_order must not run.",
    tags=(HELDOUT8_TAG, "destructive"),
    user_message=(
        "Hi, it's Aisha at Fennel Records about PO-26-0731 (Glass Harbour). Our distributor "
        "has pulled out of the coloured vinyl exclusive, so please scrap the blue variant "
        "altogether - we'll just do black. Can you take the black up to 700 copies to make up "
        "for it? Everything else stays as it is and we definitely want to keep our slot."
    ),
    build=_pressing_plant,
    validate=lambda tool, args: (
        tool == "amend_pressing_order"
        and same(args.get("order_ref"), "PO-26-0731")
        and _change_set(args.get("changes"))
        == {("remove_line", "ln_3Fq8TzWb", None), ("set_quantity", "ln_3Fq8TzWa", 700)}
    ),
    ideal_iterations=2,
    reference=(
        RefCall("get_pressing_order", {"order_ref": "PO-26-0731"}),
        RefCall("amend_pressing_order", {"order_ref": "PO-26-0731", "changes": _AMEND}),
    ),
    forbidden_tools=("cancel_pressing_order",),
)

# ── stained glass: a conservation work order from the condition survey ──

_PANELS = ("W3-A1", "W3-B1", "W3-C1", "W3-B2")
_TREATMENTS = ["clean", "relead", "replace_quarries", "repaint", "consolidate_paint"]

_GLASS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "survey_ref": {"type": "string", "pattern": "^CS-\\d{2}-\\d{4}$"},
        "panels": {
            "type": "array",
            "minItems": 1,
            "maxItems": 20,
            "uniqueItems": True,
            "items": {
                "type": "object",
                "properties": {
                    "panel_ref": {"type": "string", "pattern": "^W\\d{1,2}-[A-E]\\d$"},
                    "treatments": {
                        "type": "array",
                        "items": {"type": "string", "enum": _TREATMENTS},
                        "minItems": 1,
                        "uniqueItems": True,
                    },
                    "quarries_to_replace": {"type": "integer", "minimum": 0, "maximum": 200},
                },
                "required": ["panel_ref", "treatments"],
                "additionalProperties": False,
            },
        },
        "protective_glazing": {"type": "boolean"},
        "consent": {
            "oneOf": [
                {
                    "type": "object",
                    "properties": {
                        "kind": {"const": "faculty"},
                        "reference": {"type": "string", "pattern": "^FAC-\\d{4}-\\d{4}$"},
                    },
                    "required": ["kind", "reference"],
                    "additionalProperties": False,
                },
                {
                    "type": "object",
                    "properties": {
                        "kind": {"const": "listed_building_consent"},
                        "reference": {"type": "string", "pattern": "^LBC/\\d{2}/\\d{4,5}$"},
                    },
                    "required": ["kind", "reference"],
                    "additionalProperties": False,
                },
                {
                    "type": "object",
                    "properties": {"kind": {"const": "not_required"}},
                    "required": ["kind"],
                    "additionalProperties": False,
                },
            ]
        },
        "removal_date": _DATE,
        "contact": {
            "type": "object",
            "properties": {
                "name": {"type": "string", "minLength": 2},
                "email": {"type": "string", "format": "email"},
            },
            "required": ["name", "email"],
            "additionalProperties": False,
        },
    },
    "required": [
        "survey_ref",
        "panels",
        "protective_glazing",
        "consent",
        "removal_date",
        "contact",
    ],
    "additionalProperties": False,
}


def _create_glass_job(args: dict[str, Any]) -> str:
    for panel in args.get("panels") or []:
        ref = panel.get("panel_ref")
        if ref not in _PANELS:
            raise ToolResolutionError(f"panel_not_in_survey: {ref!r} is not in CS-26-0418")
        quarries = panel.get("quarries_to_replace") or 0
        if ("replace_quarries" in (panel.get("treatments") or [])) != (quarries > 0):
            raise ToolResolutionError(
                f"{ref}: give quarries_to_replace (1 or more) exactly when the panel's "
                "treatments include replace_quarries"
            )
    return "Work order WO-26-0552 created for CS-26-0418; removal booked."


def _stained_glass() -> Workflow:
    wf = Workflow(
        "stained_glass_window_work_order",
        "Raise conservation work orders for a stained-glass studio.",
        system_prompt="You raise work orders for Ambrose & Tull Stained Glass, Lincoln, who "
        "conserve leaded and stained glass in churches and historic houses. Look up the "
        "condition survey first: the workshop uses its panel refs. Work on a Church of "
        "England building needs its faculty reference. Today is Wednesday 2026-04-22.",
    )

    @wf.tool(required=True)
    def get_condition_survey(survey_ref: str) -> str:
        """A window condition survey: the building, its panels and their defects."""
        if compact(survey_ref) != "CS260418":
            raise ToolResolutionError(f"survey_not_found: {survey_ref!r}")
        return (
            "Survey CS-26-0418, St Oswald's Church, Heckington (Grade I), north aisle window W3, "
            "Kempe glass of 1888. Panels: W3-A1 lower left light - 4 cracked quarries, lead "
            "sound; W3-B1 lower centre light - lead fatigued, bulging 30 mm; W3-C1 lower right "
            "light - lead fatigued, 2 cracked quarries; W3-B2 upper tracery - sound. Optional: "
            "isothermal protective glazing for the whole window."
        )

    wf.add_schema_tool(
        "create_conservation_work_order",
        "Create the conservation work order for surveyed panels (50% deposit invoiced). "
        "Ends the task.",
        _GLASS_SCHEMA,
        _create_glass_job,
        terminal=True,
        prerequisites=["get_condition_survey"],
    )

    @wf.tool
    def quote_protective_glazing(survey_ref: str) -> str:
        """Price of isothermal protective glazing for a surveyed window."""
        return f"{survey_ref}: protective glazing 6,480.00 GBP + VAT."

    @wf.tool
    def book_survey_visit(address: str, date: str) -> str:
        """Book a conservator to survey another window (320.00 GBP)."""
        return f"Survey visit booked at {address} on {date}."

    return wf


def _panels_of(value: Any) -> dict[str, tuple[list[str], int]] | None:
    if not isinstance(value, list):
        return None
    out = {
        p.get("panel_ref"): (sorted(p.get("treatments") or []), p.get("quarries_to_replace") or 0)
        for p in value
    }
    return out if len(out) == len(value) else None


def _check_glass(tool: str, args: dict[str, Any]) -> bool:
    consent = args.get("consent") or {}
    contact = args.get("contact") or {}
    return (
        tool == "create_conservation_work_order"
        and same(args.get("survey_ref"), "CS-26-0418")
        and _panels_of(args.get("panels"))
        == {
            "W3-A1": (["replace_quarries"], 4),
            "W3-B1": (["relead"], 0),
            "W3-C1": (["relead", "replace_quarries"], 2),
        }
        and args.get("protective_glazing") is False
        and consent.get("kind") == "faculty"
        and exact(consent.get("reference"), "FAC-2026-0117")
        and args.get("removal_date") == "2026-07-13"
        and same(contact.get("email"), "churchwarden.heckington@parishmail.example")
        and mentions(contact.get("name"), "barnes")
    )


_GLASS_PANELS = [
    {"panel_ref": "W3-A1", "treatments": ["replace_quarries"], "quarries_to_replace": 4},
    {"panel_ref": "W3-B1", "treatments": ["relead"]},
    {"panel_ref": "W3-C1", "treatments": ["relead", "replace_quarries"], "quarries_to_replace": 2},
]

STAINED_GLASS_WINDOW_WORK_ORDER = Scenario(
    name="stained_glass_window_work_order",
    description="Stained glass: work order on CS-26-0418 for exactly W3-A1 (4 quarries), "
    "W3-B1 (relead) and W3-C1 (relead + 2 quarries), not the sound W3-B2; no protective "
    "glazing; consent oneOf faculty FAC-2026-0117; removal Mon 2026-07-13.",
    tags=(HELDOUT8_TAG, "schema"),
    user_message=(
        "Hello, Peter Barnes, churchwarden at St Oswald's, Heckington. We've now got our "
        "faculty, FAC-2026-0117, for the north aisle window in your survey CS-26-0418, so "
        "please set up the job: relead the two lower lights whose lead is failing (the centre "
        "and the right-hand one), and replace the cracked quarries - the 4 in the left-hand "
        "light and the 2 in the right-hand one. We'll leave the protective glazing for "
        "another year. Removal can start on Monday 13th July. Email me at "
        "churchwarden.heckington@parishmail.example"
    ),
    build=_stained_glass,
    validate=_check_glass,
    ideal_iterations=2,
    reference=(
        RefCall("get_condition_survey", {"survey_ref": "CS-26-0418"}),
        RefCall(
            "create_conservation_work_order",
            {
                "survey_ref": "CS-26-0418",
                "panels": _GLASS_PANELS,
                "protective_glazing": False,
                "consent": {"kind": "faculty", "reference": "FAC-2026-0117"},
                "removal_date": "2026-07-13",
                "contact": {
                    "name": "Peter Barnes",
                    "email": "churchwarden.heckington@parishmail.example",
                },
            },
        ),
    ),
)

# ── roof surveys: a storm-damage inspection for an insurance claim ───────

_SLOTS = {
    datetime(2026, 2, 12, 8, 30, tzinfo=UTC): "ladder",
    datetime(2026, 2, 12, 13, 0, tzinfo=UTC): "drone",
    datetime(2026, 2, 13, 10, 0, tzinfo=UTC): "drone",
}
_COVERINGS = [
    "clay_tile",
    "concrete_tile",
    "natural_slate",
    "flat_felt",
    "flat_epdm",
    "flat_grp",
    "metal",
]

_ROOF_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "slot_start": {"type": "string", "format": "date-time"},
        "inspection_type": {
            "type": "string",
            "enum": ["condition_survey", "storm_damage", "pre_purchase", "leak_investigation"],
        },
        "method": {"type": "string", "enum": ["ladder", "drone"]},
        "property": {
            "type": "object",
            "properties": {
                "address_line1": {"type": "string", "minLength": 3},
                "postcode": {"type": "string", "pattern": "^[A-Z]{1,2}\\d[A-Z\\d]? ?\\d[A-Z]{2}$"},
                "storeys": {"type": "integer", "minimum": 1, "maximum": 6},
                "roof_sections": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": 6,
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string"},
                            "covering": {"type": "string", "enum": _COVERINGS},
                        },
                        "required": ["name", "covering"],
                        "additionalProperties": False,
                    },
                },
            },
            "required": ["address_line1", "postcode", "storeys", "roof_sections"],
            "additionalProperties": False,
        },
        "insurance": {
            "type": "object",
            "properties": {
                "insurer": {
                    "type": "string",
                    "enum": ["aviva", "axa", "direct_line", "lv", "other"],
                },
                "claim_id": {"type": "string", "format": "uuid"},
            },
            "required": ["insurer", "claim_id"],
            "additionalProperties": False,
        },
        "water_coming_in": {"type": "boolean"},
        "notify": {
            "type": "object",
            "properties": {
                "email": {"type": "string", "format": "email"},
                "sms": {"type": "string", "pattern": "^\\+44\\d{10}$"},
            },
            "minProperties": 1,
            "additionalProperties": False,
        },
    },
    "required": [
        "slot_start",
        "inspection_type",
        "method",
        "property",
        "water_coming_in",
        "notify",
    ],
    "additionalProperties": False,
}


def _instant(value: Any) -> datetime | None:
    """An ISO 8601 date-time with an offset, as an aware datetime; else None."""
    try:
        when = datetime.fromisoformat(str(value))
    except ValueError:
        return None
    return when if when.tzinfo is not None else None


def _book_roof(args: dict[str, Any]) -> str:
    when = _instant(args.get("slot_start"))
    if when not in _SLOTS:
        raise ToolResolutionError(
            f"slot_unavailable: {args.get('slot_start')!r} is not a free slot; book one of the "
            "slot starts find_inspection_slots lists, with its UTC offset"
        )
    if _SLOTS[when] != args.get("method"):
        raise ToolResolutionError(f"method_mismatch: that slot is a {_SLOTS[when]} inspection")
    return "Inspection RI-26-02117 booked; the surveyor will call 30 minutes before."


def _roofer() -> Workflow:
    wf = Workflow(
        "roof_storm_damage_inspection",
        "Book roof inspections for a roof surveying firm.",
        system_prompt="You book roof inspections for Ridgeway Roof Surveys, Bristol and Bath. "
        "Find the surveyors' free slots first and book one of them exactly as listed (times "
        "carry their UTC offset). A storm-damage inspection for an insurance claim carries "
        "the insurer's claim id. Today is Tuesday 2026-02-10.",
    )

    @wf.tool(required=True)
    def find_inspection_slots(postcode: str, inspection_type: str) -> str:
        """Free inspection slots near a postcode, with the surveyor and method."""
        if not alnum(postcode).startswith("BS"):
            raise ToolResolutionError(f"outside_area: {postcode!r}; we cover BS and BA only")
        return (
            "Slots near BS6, 2 h each: 2026-02-12T08:30:00+00:00 Dev Patel, ladder and pole "
            "camera; 2026-02-12T13:00:00+00:00 Dev Patel, drone; 2026-02-13T10:00:00+00:00 "
            "Sian Lloyd, drone."
        )

    wf.add_schema_tool(
        "book_roof_inspection",
        "Book a roof inspection in a free slot (storm damage report 195.00 GBP). Ends the task.",
        _ROOF_SCHEMA,
        _book_roof,
        terminal=True,
        prerequisites=["find_inspection_slots"],
    )

    @wf.tool
    def quote_roof_repair(postcode: str, description: str) -> str:
        """A rough repair estimate, before any inspection."""
        return f"{postcode}: from 450.00 GBP, subject to inspection."

    @wf.tool
    def order_emergency_tarp(address: str) -> str:
        """Send a crew to sheet a roof with a temporary tarpaulin today (280.00 GBP)."""
        return f"Tarp crew TC-118 dispatched to {address}."

    return wf


_CLAIM = "3f9c2a17-8b4e-4d2a-9f61-0c7e5b2d8a43"
_SLOT = datetime(2026, 2, 12, 13, 0, tzinfo=UTC)


def _check_roof(tool: str, args: dict[str, Any]) -> bool:
    prop = args.get("property") or {}
    insurance = args.get("insurance") or {}
    notify = args.get("notify") or {}
    sections = prop.get("roof_sections")
    return (
        tool == "book_roof_inspection"
        and _instant(args.get("slot_start")) == _SLOT
        and args.get("inspection_type") == "storm_damage"
        and args.get("method") == "drone"
        and mentions(prop.get("address_line1"), "27 cotham vale")
        and alnum(prop.get("postcode")) == "BS66HR"
        and prop.get("storeys") == 3
        and isinstance(sections, list)
        and sorted(s.get("covering") for s in sections) == ["flat_felt", "natural_slate"]
        and insurance.get("insurer") == "aviva"
        and exact(insurance.get("claim_id"), _CLAIM)
        and args.get("water_coming_in") is True
        and set(notify) == {"email"}
        and same(notify.get("email"), "lucy.brennan@inboxmail.example")
    )


ROOF_STORM_DAMAGE_INSPECTION = Scenario(
    name="roof_storm_damage_inspection",
    description="Roof survey: storm_damage by drone in the Thu afternoon slot "
    "2026-02-12T13:00:00+00:00 (not the 08:30 ladder one), 27 Cotham Vale BS6 6HR, 3 storeys, "
    "sections natural_slate + flat_felt, Aviva claim uuid exact, leaking, notify email only.",
    tags=(HELDOUT8_TAG, "schema"),
    user_message=(
        "Hi, Storm Ingrid took about a dozen slates off our main roof on Saturday and the "
        "flat felt roof over the kitchen extension has been letting water into the kitchen "
        "ever since. Our insurer, Aviva, wants a roofer's storm damage report - the claim "
        "reference they gave me is 3f9c2a17-8b4e-4d2a-9f61-0c7e5b2d8a43. Could someone come "
        "and look with a drone on Thursday afternoon? It's 27 Cotham Vale, Bristol BS6 6HR, a "
        "three-storey Victorian terrace with a natural slate main roof. Just email me the "
        "confirmation please: lucy.brennan@inboxmail.example"
    ),
    build=_roofer,
    validate=_check_roof,
    ideal_iterations=2,
    reference=(
        RefCall(
            "find_inspection_slots", {"postcode": "BS6 6HR", "inspection_type": "storm_damage"}
        ),
        RefCall(
            "book_roof_inspection",
            {
                "slot_start": "2026-02-12T13:00:00+00:00",
                "inspection_type": "storm_damage",
                "method": "drone",
                "property": {
                    "address_line1": "27 Cotham Vale",
                    "postcode": "BS6 6HR",
                    "storeys": 3,
                    "roof_sections": [
                        {"name": "main roof", "covering": "natural_slate"},
                        {"name": "kitchen extension", "covering": "flat_felt"},
                    ],
                },
                "insurance": {"insurer": "aviva", "claim_id": _CLAIM},
                "water_coming_in": True,
                "notify": {"email": "lucy.brennan@inboxmail.example"},
            },
        ),
    ),
    forbidden_tools=("order_emergency_tarp",),
)


SCENARIOS: tuple[Scenario, ...] = (
    VINYL_PRESSING_DROP_VARIANT,
    STAINED_GLASS_WINDOW_WORK_ORDER,
    ROOF_STORM_DAMAGE_INSPECTION,
)

__all__ = ["HELDOUT8_TAG", "SCENARIOS"]
