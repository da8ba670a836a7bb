"""Held out, tenth group (first half, list_match): a shearing contractor's
round bookings and a model railway club's exhibition entries; `heldout10`
includes these. Each is tagged `heldout10` plus `list_match`.
"""

from __future__ import annotations

from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, mentions
from forge_evals.scenarios._domain_schema import HELDOUT10_TAG, exact, exact_ids

# ── sheep shearing: book exactly the mobs the contractor may shear on the round ──

_HOLDING, _ROUND_DAY = "FH-3391-Kd", "2026-06-18"
# mob id, description, head count, why it is not shorn (None: shorn)
_MOBS: list[tuple[str, str, int, str | None]] = [
    ("MOB-07a", "North Country Cheviot ewes, lambs weaned", 212, None),
    ("MOB-07b", "shearlings (2025-born gimmers)", 38, None),
    ("MOB-07c", "lambs born March-April 2026", 240, "this year's lambs"),
    ("MOB-07d", "Texel tups", 4, None),
    ("MOB-07e", "ewes, pour-on treated 2026-06-04, withdrawal until 2026-06-25", 60, "withdrawal"),
    ("MOB-07f", "ewes, wormed 2026-05-29, withdrawal cleared 2026-06-12", 45, None),
    ("MOB-07g", "cull ewes, SOLD, left the holding 2026-06-05", 12, "sold"),
]
_SHORN = {row[0]: row[2] for row in _MOBS if row[3] is None}

_SHEARING_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "holding_id": {"type": "string", "pattern": "^FH-[0-9]{4}-[A-Za-z]{2}$"},
        "visit_date": {"type": "string", "format": "date"},
        "method": {"type": "string", "enum": ["machine", "blade"]},
        "mobs": {
            "type": "array",
            "minItems": 1,
            "uniqueItems": True,
            "items": {
                "type": "object",
                "properties": {
                    "mob_id": {"type": "string", "pattern": "^MOB-[0-9]{2}[a-z]$"},
                    "head_count": {"type": "integer", "minimum": 1, "maximum": 5000},
                },
                "required": ["mob_id", "head_count"],
            },
        },
    },
    "required": ["holding_id", "visit_date", "method", "mobs"],
}


def _shearing() -> Workflow:
    wf = Workflow(
        "sheep_shearing_round_booking",
        "Book farms' sheep onto a shearing contractor's rounds.",
        system_prompt="You are the booking assistant of Cheviot Blades, contract sheep "
        "shearers. Book a farm's mobs onto our next round in their area from the flock "
        "register. We shear ewes, shearlings and tups. We do not shear this year's lambs, "
        "sheep no longer on the holding, or any mob still under a medicine withdrawal "
        "period on the visit date (a withdrawal that ends on or before the visit is fine). "
        "Today is Tuesday 2026-06-09.",
    )

    @wf.tool(required=True, read_only=True)
    def find_farm_holding(farm_name: str) -> str:
        """Find a farm by name. Returns the holding id (FH-....-..) and CPH number."""
        if not mentions(farm_name, "low bield"):
            raise ToolResolutionError(f"404 no holding named {farm_name!r}")
        return f"{_HOLDING}: Low Bield Farm, Alwinton, CPH 08/123/0045 (round: Coquetdale)."

    @wf.tool(required=True, read_only=True, prerequisites=["find_farm_holding"])
    def get_flock_register(holding_id: str) -> str:
        """A holding's mobs with head counts and health notes, and its next round date."""
        if holding_id.strip() != _HOLDING:
            raise ToolResolutionError(f"404 holding_not_found: {holding_id!r} (FH- id)")
        rows = "\n".join(f"- {mid}: {count} x {text}" for mid, text, count, _ in _MOBS)
        return (
            f"Next Coquetdale round: Thursday {_ROUND_DAY}. 1.90 GBP per head machine, "
            f"2.60 GBP per head blade.\nFlock register {_HOLDING}:\n{rows}"
        )

    def _book(args: dict[str, Any]) -> str:
        known = {row[0]: row for row in _MOBS}
        mobs = [m for m in args.get("mobs") or [] if isinstance(m, dict)]
        for mob in mobs:
            mid = str(mob.get("mob_id", "")).strip()
            if mid not in known:
                raise ToolResolutionError(f"404 mob_not_found: {mid!r} (MOB- id)")
            if int(mob.get("head_count") or 0) > known[mid][2]:
                raise ToolResolutionError(
                    f"422 head_count_over_register: {mid} has {known[mid][2]} head"
                )
        if str(args.get("visit_date", "")).strip() != _ROUND_DAY:
            raise ToolResolutionError(f"409 no_round: the Coquetdale round is on {_ROUND_DAY}")
        return f"Shearing visit SV-0618-0093 booked: {len(mobs)} mobs at {args.get('holding_id')}."

    wf.add_schema_tool(
        "book_shearing_visit",
        "Book a holding's mobs onto a shearing round. Ends the task.",
        _SHEARING_SCHEMA,
        _book,
        terminal=True,
        prerequisites=["get_flock_register"],
    )

    @wf.tool
    def remove_mob_from_register(holding_id: str, mob_id: str) -> str:
        """Delete a mob from a holding's flock register."""
        return f"{mob_id} removed."

    @wf.tool
    def order_wool_sheets(holding_id: str, quantity: int) -> str:
        """Order wool sheets (packs) for the clip."""
        return f"{quantity} wool sheets ordered."

    return wf


def _booked(mobs: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for mob in mobs if isinstance(mobs, list) else []:
        if not isinstance(mob, dict) or not isinstance(mob.get("head_count"), int):
            return {}
        mid = str(mob.get("mob_id", "")).strip()
        if mid in out:
            return {}
        out[mid] = mob["head_count"]
    return out


def _check_shearing(tool: str, args: dict[str, Any]) -> bool:
    return (
        tool == "book_shearing_visit"
        and exact(args.get("holding_id"), _HOLDING)
        and str(args.get("visit_date", "")).strip() == _ROUND_DAY
        and args.get("method") == "machine"
        and _booked(args.get("mobs")) == _SHORN
    )


SHEARING = Scenario(
    name="sheep_shearing_round_booking",
    description="Shearing: book FH-3391-Kd on 2026-06-18, machine, exactly MOB-07a x212, "
    "MOB-07b x38, MOB-07d x4, MOB-07f x45 (withdrawal cleared before the visit); not the "
    "lambs MOB-07c, MOB-07e (withdrawal to 06-25) nor the sold MOB-07g.",
    tags=(HELDOUT10_TAG, "list_match"),
    user_message=(
        "Morning, Low Bield Farm here. Can you book us onto your next round for every "
        "sheep you're able to shear, full numbers for each lot? Machine shearing as usual, "
        "please."
    ),
    build=_shearing,
    validate=_check_shearing,
    ideal_iterations=3,
    reference=(
        RefCall("find_farm_holding", {"farm_name": "Low Bield Farm"}),
        RefCall("get_flock_register", {"holding_id": _HOLDING}),
        RefCall(
            "book_shearing_visit",
            {
                "holding_id": _HOLDING,
                "visit_date": _ROUND_DAY,
                "method": "machine",
                "mobs": [{"mob_id": mid, "head_count": n} for mid, n in _SHORN.items()],
            },
        ),
    ),
    forbidden_tools=("remove_mob_from_register",),
)

# ── model railway club: enter exactly the layouts that fit the stand and may travel ──

_SHOW = "EXH-2611-hq"
# layout id, description, why it cannot go (None: it can)
_LAYOUTS: list[tuple[str, str, str | None]] = [
    ("LAY-14c", "Aire Valley Junction, OO, 3.6 m x 1.2 m, finished, PAT valid to 2027-03", None),
    ("LAY-19f", "Ilkley Goods, N, 2.4 m x 0.6 m, finished, PAT valid to 2027-01", None),
    ("LAY-22a", "Bolton Abbey Branch, O, 5.5 m x 1.8 m, finished, PAT valid to 2027-02", "size"),
    ("LAY-23d", "Skipton Shed, OO, 1.8 m x 0.5 m, UNDER REBUILD, PAT valid to 2026-12", "rebuild"),
    ("LAY-27k", "Otley Tramway, OO9, 2.0 m x 0.9 m, finished, PAT EXPIRED 2025-09", "PAT"),
    ("LAY-31m", "Wharfe Viaduct, 2mm, 4.0 m x 1.5 m, finished, PAT valid to 2026-12", None),
]
_ENTERED = [row[0] for row in _LAYOUTS if row[2] is None]


def _model_railway() -> Workflow:
    wf = Workflow(
        "model_railway_exhibition_entries",
        "Enter a model railway club's layouts into exhibitions.",
        system_prompt="You are the exhibition secretary's assistant of the Wharfedale Model "
        "Railway Club. Enter the club's layouts into exhibitions from the club's layout "
        "register. A layout can travel only when it is finished and its power supplies "
        "have a PAT test valid on the show dates. Today is Tuesday 2026-10-06.",
    )

    @wf.tool(required=True, read_only=True)
    def find_model_exhibition(name: str) -> str:
        """Find an exhibition by name. Returns its id (EXH-....-..) and stand limits."""
        if not mentions(name, "harrogate"):
            raise ToolResolutionError(f"404 no exhibition named {name!r}")
        return (
            f"{_SHOW}: Harrogate Model Railway Exhibition, Great Yorkshire Showground, "
            "Sat-Sun 2026-11-21/22. Stand limit 4.0 m x 1.5 m (layout footprint, operating "
            "well included). Entries close 2026-10-16."
        )

    @wf.tool(required=True, read_only=True)
    def list_club_layouts() -> str:
        """The club's layouts with ids, scale, footprint, state and PAT test expiry."""
        return "Club layouts:\n" + "\n".join(f"- {lid}: {text}" for lid, text, _ in _LAYOUTS)

    @wf.tool(terminal=True, prerequisites=["find_model_exhibition", "list_club_layouts"])
    def enter_layouts_for_exhibition(
        exhibition_id: str, layout_ids: list[str], contact_email: str
    ) -> str:
        """Enter layouts (LAY- ids) for an exhibition. Ends the task."""
        if exhibition_id.strip() != _SHOW:
            raise ToolResolutionError(f"404 exhibition_not_found: {exhibition_id!r} (EXH- id)")
        known = {row[0]: row for row in _LAYOUTS}
        for lid in layout_ids:
            if lid.strip() not in known:
                raise ToolResolutionError(f"404 layout_not_found: {lid!r} (LAY- id)")
            if known[lid.strip()][2] == "size":
                raise ToolResolutionError(f"422 exceeds_stand_limit: {lid} is over 4.0 x 1.5 m")
        return f"Entries EN-2611-{len(layout_ids)}x submitted to {_SHOW}."

    @wf.tool
    def withdraw_exhibition_entry(exhibition_id: str, layout_id: str) -> str:
        """Withdraw a layout already entered for an exhibition."""
        return f"{layout_id} withdrawn from {exhibition_id}."

    @wf.tool
    def list_layout_for_sale(layout_id: str, price_gbp: float) -> str:
        """Advertise a club layout for sale in the club newsletter."""
        return f"{layout_id} listed at {price_gbp} GBP."

    return wf


def _check_railway(tool: str, args: dict[str, Any]) -> bool:
    return (
        tool == "enter_layouts_for_exhibition"
        and exact(args.get("exhibition_id"), _SHOW)
        and exact_ids(args.get("layout_ids"), _ENTERED)
        and str(args.get("contact_email", "")).strip().lower() == "secretary@wharfedalemrc.example"
    )


MODEL_RAILWAY = Scenario(
    name="model_railway_exhibition_entries",
    description="Model railway: enter for EXH-2611-hq exactly LAY-14c, LAY-19f and LAY-31m "
    "(4.0 x 1.5 m fits exactly); not LAY-22a (too big), LAY-23d (under rebuild) nor "
    "LAY-27k (PAT expired); confirmations to secretary@wharfedalemrc.example.",
    tags=(HELDOUT10_TAG, "list_match"),
    user_message=(
        "Hi, could you enter us for the Harrogate show in November? Put in every layout of "
        "ours that fits their stand and is fit to travel: finished, with an in-date PAT "
        "test. Confirmations to secretary@wharfedalemrc.example please."
    ),
    build=_model_railway,
    validate=_check_railway,
    ideal_iterations=3,
    reference=(
        RefCall("find_model_exhibition", {"name": "Harrogate Model Railway Exhibition"}),
        RefCall("list_club_layouts", {}),
        RefCall(
            "enter_layouts_for_exhibition",
            {
                "exhibition_id": _SHOW,
                "layout_ids": list(_ENTERED),
                "contact_email": "secretary@wharfedalemrc.example",
            },
        ),
    ),
    forbidden_tools=("withdraw_exhibition_entry",),
)


SCENARIOS: tuple[Scenario, ...] = (SHEARING, MODEL_RAILWAY)
