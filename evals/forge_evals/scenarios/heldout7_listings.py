"""Held out, seventh group (first half, list_match): an allotment society's
rent reminders and a theatre costume store's reservation; `heldout7` includes
these. Each is tagged `heldout7` plus `list_match`.
"""

from __future__ import annotations

from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, mentions
from forge_evals.scenarios._domain_schema import HELDOUT7_TAG

# ── allotment society: reminders to exactly the unpaid plots at one site ──

_PLOTS = [
    ("HB-03A", "Hollybush", "half plot", "rent PAID 2026-10-02"),
    ("HB-07", "Hollybush", "full plot", "rent UNPAID (34.00 GBP due 2026-11-01)"),
    ("HB-11B", "Hollybush", "half plot", "rent UNPAID (17.00 GBP due 2026-11-01)"),
    ("HB-12", "Hollybush", "full plot", "rent WAIVED (committee member)"),
    ("HB-19", "Hollybush", "full plot", "rent UNPAID (34.00 GBP due 2026-11-01)"),
    ("MR-02", "Mill Road", "full plot", "rent UNPAID (34.00 GBP due 2026-11-01)"),
    ("HB-21A", "Hollybush", "half plot", "rent PAID 2026-11-20"),
]
_UNPAID_HB = ["HB-07", "HB-11B", "HB-19"]

_REMINDER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "plot_ids": {
            "type": "array",
            "minItems": 1,
            "uniqueItems": True,
            "items": {"type": "string", "pattern": "^[A-Z]{2}-[0-9]{2}[AB]?$"},
        },
        "template": {"type": "string", "enum": ["first_reminder", "final_notice"]},
        "channel": {"type": "string", "enum": ["email", "letter"]},
    },
    "required": ["plot_ids", "template", "channel"],
}


def _allotments() -> Workflow:
    wf = Workflow(
        "allotment_rent_reminders",
        "Run the plot register of an allotment society.",
        system_prompt="You are the secretary's assistant of Eastfield Allotment Society "
        "(sites Hollybush and Mill Road). Rent for the year was due 2026-11-01. "
        "Today is Tuesday 2026-12-01.",
    )

    @wf.tool(required=True, read_only=True)
    def list_plots(site: str) -> str:
        """The society's plots (all sites), with tenancy and rent status."""
        return "\n".join(f"- {pid} ({where}, {size}): {rent}" for pid, where, size, rent in _PLOTS)

    def _send(args: dict[str, Any]) -> str:
        ids = args.get("plot_ids") or []
        unknown = [p for p in ids if p not in {row[0] for row in _PLOTS}]
        if unknown:
            raise ToolResolutionError(f"404 unknown plot ids: {unknown}")
        return f"{len(ids)} {args.get('template')} reminders queued by {args.get('channel')}."

    wf.add_schema_tool(
        "send_rent_reminders",
        "Send rent reminders to the tenants of the given plots. Ends the task.",
        _REMINDER_SCHEMA,
        _send,
        terminal=True,
        prerequisites=["list_plots"],
    )

    @wf.tool
    def terminate_tenancy(plot_id: str, reason: str) -> str:
        """End a plot tenancy and offer the plot to the waiting list."""
        return f"Tenancy of {plot_id} terminated."

    @wf.tool
    def add_to_waiting_list(name: str, email: str, site: str) -> str:
        """Add someone to a site's waiting list."""
        return f"{name} added to the {site} waiting list."

    return wf


def _check_plots(tool: str, args: dict[str, Any]) -> bool:
    ids = args.get("plot_ids")
    return (
        tool == "send_rent_reminders"
        and isinstance(ids, list)
        and len(ids) == len(_UNPAID_HB)
        and sorted(str(i).strip().upper() for i in ids) == _UNPAID_HB
        and args.get("template") == "first_reminder"
        and args.get("channel") == "email"
    )


ALLOTMENT_REMINDERS = Scenario(
    name="allotment_rent_reminders",
    description="Allotments: first_reminder by email to exactly HB-07, HB-11B, HB-19 (the "
    "unpaid Hollybush plots; not waived HB-12, paid plots nor Mill Road's MR-02).",
    tags=(HELDOUT7_TAG, "list_match"),
    user_message=(
        "Could you email a first reminder to everyone at Hollybush who still hasn't paid "
        "this year's rent? Leave the Mill Road lot for now, I'll deal with them myself, "
        "and obviously not anyone whose rent was waived."
    ),
    build=_allotments,
    validate=_check_plots,
    ideal_iterations=2,
    reference=(
        RefCall("list_plots", {"site": "Hollybush"}),
        RefCall(
            "send_rent_reminders",
            {"plot_ids": list(_UNPAID_HB), "template": "first_reminder", "channel": "email"},
        ),
    ),
    forbidden_tools=("terminate_tenancy",),
)

# ── theatre costume hire: every Victorian costume in size 12 that is free ──

_COSTUMES = [
    ("CST-V-1142", "Victorian bustle dress, burgundy, size 12, available"),
    ("CST-V-1187", "Victorian mourning dress, black, size 12, available"),
    ("CST-V-1190", "Victorian bustle dress, green, size 14, available"),
    ("CST-E-0831", "Edwardian tea gown, ivory, size 12, available"),
    ("CST-V-1203", "Victorian maid's uniform, size 12, OUT on hire until 2027-01-10"),
    ("CST-V-1215", "Victorian riding habit, navy, size 12, available"),
]
_WANTED = ["CST-V-1142", "CST-V-1187", "CST-V-1215"]


def _costumes() -> Workflow:
    wf = Workflow(
        "costume_hire_victorian_size12",
        "Hire stage costumes to theatre companies.",
        system_prompt="You are the hire desk assistant of the Northgate Theatre costume "
        "store. Search the stock, then reserve items for a hire period. "
        "Today is Saturday 2026-11-28.",
    )

    @wf.tool(required=True, read_only=True)
    def search_costumes(era: str, size: int) -> str:
        """Search costume stock by era (e.g. Victorian) and UK dress size."""
        return "\n".join(f"- {sku}: {text}" for sku, text in _COSTUMES)

    @wf.tool(terminal=True, prerequisites=["search_costumes"])
    def reserve_costumes(skus: list[str], hire_from: str, hire_to: str, company: str) -> str:
        """Reserve costumes for a hire period (dates YYYY-MM-DD). Ends the task."""
        bad = [s for s in skus if s not in {c[0] for c in _COSTUMES}]
        if bad:
            raise ToolResolutionError(f"404 unknown skus: {bad}")
        return f"Reservation RSV-C-6621 for {len(skus)} costumes, {hire_from} to {hire_to}."

    @wf.tool
    def write_off_costume(sku: str, reason: str) -> str:
        """Write a damaged costume out of stock."""
        return f"{sku} written off."

    @wf.tool
    def book_costume_fitting(company: str, date: str) -> str:
        """Book a fitting appointment at the store."""
        return f"Fitting for {company} on {date}."

    return wf


def _check_costumes(tool: str, args: dict[str, Any]) -> bool:
    skus = args.get("skus")
    return (
        tool == "reserve_costumes"
        and isinstance(skus, list)
        and len(skus) == len(_WANTED)
        and sorted(str(s).strip().upper() for s in skus) == _WANTED
        and str(args.get("hire_from", "")).strip() == "2026-12-07"
        and str(args.get("hire_to", "")).strip() == "2026-12-20"
        and mentions(args.get("company"), "lantern")
    )


COSTUME_HIRE = Scenario(
    name="costume_hire_victorian_size12",
    description="Costume hire: exactly CST-V-1142, CST-V-1187, CST-V-1215 (free Victorian "
    "size 12; not the size 14, the Edwardian gown nor the one out on hire), 12-07 to 12-20.",
    tags=(HELDOUT7_TAG, "list_match"),
    user_message=(
        "Hello, Lantern Players here. For our Christmas Carol we'd like every Victorian "
        "costume you have in a size 12 that's free, from Monday week (7 December) to "
        "Sunday 20 December. Strictly Victorian please, no Edwardian."
    ),
    build=_costumes,
    validate=_check_costumes,
    ideal_iterations=2,
    reference=(
        RefCall("search_costumes", {"era": "Victorian", "size": 12}),
        RefCall(
            "reserve_costumes",
            {
                "skus": list(_WANTED),
                "hire_from": "2026-12-07",
                "hire_to": "2026-12-20",
                "company": "Lantern Players",
            },
        ),
    ),
    forbidden_tools=("write_off_costume",),
)


SCENARIOS: tuple[Scenario, ...] = (ALLOTMENT_REMINDERS, COSTUME_HIRE)
