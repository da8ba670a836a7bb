"""Held out, ninth group (first half, list_match): a community fridge's
donation log and a tool library's loan renewals; `heldout9` includes these.
Each is tagged `heldout9` plus `list_match`.
"""

from __future__ import annotations

from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, mentions
from forge_evals.scenarios._domain_schema import HELDOUT9_TAG, exact

# ── community fridge: log exactly the manifest lines the fridge may take ──

_DONOR = "DNR-0420-mk"
# line id, description, quantity, why it is refused (None: accepted)
_MANIFEST: list[tuple[str, str, int, str | None]] = [
    ("ML-81a2", "semi-skimmed milk 2 L, sealed, use by 2026-06-15", 6, None),
    ("ML-81a3", "raw chicken thighs 500 g, sealed, use by 2026-06-14", 10, "raw meat"),
    ("ML-81a4", "houmous tubs 200 g, sealed, use by 2026-06-12", 4, "past use-by"),
    ("ML-81a5", "prepacked sandwiches, sealed, use by 2026-06-13", 12, None),
    ("ML-81a6", "natural yogurt 500 g, sealed, use by 2026-06-17", 8, None),
    ("ML-81a7", "mature cheddar 400 g, packaging split, use by 2026-07-02", 3, "not sealed"),
    ("ML-81a8", "bagged mixed salad 200 g, sealed, use by 2026-06-14", 5, None),
    ("ML-81a9", "smoked salmon 100 g, sealed, use by 2026-06-20", 6, "raw fish"),
]
_ACCEPTED = {row[0]: row[2] for row in _MANIFEST if row[3] is None}

_LOG_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "donor_id": {"type": "string", "pattern": "^DNR-[0-9]{4}-[a-z]{2}$"},
        "received_on": {"type": "string", "format": "date"},
        "volunteer_name": {"type": "string", "minLength": 2},
        "items": {
            "type": "array",
            "minItems": 1,
            "uniqueItems": True,
            "items": {
                "type": "object",
                "properties": {
                    "line_id": {"type": "string", "pattern": "^ML-[0-9a-f]{4}$"},
                    "quantity": {"type": "integer", "minimum": 1, "maximum": 200},
                },
                "required": ["line_id", "quantity"],
            },
        },
    },
    "required": ["donor_id", "received_on", "volunteer_name", "items"],
}


def _community_fridge() -> Workflow:
    wf = Workflow(
        "community_fridge_donation_log",
        "Log food donations at a community fridge.",
        system_prompt="You are the volunteer assistant of the Eastgate Community Fridge. "
        "Shops donate surplus food; log what the fridge takes from each collection. House "
        "rules: sealed packaging only, on or before its use-by date (a use-by of today is "
        "fine), no raw meat or raw fish, no alcohol. Today is Saturday 2026-06-13.",
    )

    @wf.tool(required=True, read_only=True)
    def find_food_donor(name: str) -> str:
        """Find a registered donor by name. Returns the donor id (DNR-....-..)."""
        if not mentions(name, "greenleaf"):
            raise ToolResolutionError(f"404 no donor named {name!r}")
        return f"{_DONOR}: Greenleaf Co-op, Eastgate branch (daily collection, 08:30)."

    @wf.tool(required=True, read_only=True, prerequisites=["find_food_donor"])
    def get_collection_manifest(donor_id: str, date: str) -> str:
        """The lines of a donor's collection on a date (YYYY-MM-DD), with quantities."""
        if donor_id.strip() != _DONOR:
            raise ToolResolutionError(f"404 donor_not_found: {donor_id!r} (DNR- id)")
        rows = "\n".join(f"- {lid}: {qty} x {text}" for lid, text, qty, _ in _MANIFEST)
        return f"Collection COL-0613-22 from {_DONOR}, {date}:\n{rows}"

    def _log(args: dict[str, Any]) -> str:
        known = {row[0]: row for row in _MANIFEST}
        items = [i for i in args.get("items") or [] if isinstance(i, dict)]
        for item in items:
            lid = str(item.get("line_id", "")).strip()
            if lid not in known:
                raise ToolResolutionError(f"404 line_not_found: {lid!r} (ML- id)")
            if int(item.get("quantity") or 0) > known[lid][2]:
                raise ToolResolutionError(f"422 more than delivered: {lid} had {known[lid][2]}")
        return f"Donation DON-26-3381 logged: {len(items)} lines from {args.get('donor_id')}."

    wf.add_schema_tool(
        "log_fridge_donation",
        "Log the items of a collection that go into the fridge. Ends the task.",
        _LOG_SCHEMA,
        _log,
        terminal=True,
        prerequisites=["get_collection_manifest"],
    )

    @wf.tool
    def record_food_waste(line_id: str, weight_kg: float) -> str:
        """Record food thrown away, for the waste report."""
        return f"{weight_kg} kg of {line_id} recorded as waste."

    @wf.tool
    def suspend_food_donor(donor_id: str, reason: str) -> str:
        """Suspend a donor's collections."""
        return f"{donor_id} suspended."

    return wf


def _logged(items: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or not isinstance(item.get("quantity"), int):
            return {}
        lid = str(item.get("line_id", "")).strip()
        if lid in out:
            return {}
        out[lid] = item["quantity"]
    return out


def _check_fridge(tool: str, args: dict[str, Any]) -> bool:
    return (
        tool == "log_fridge_donation"
        and exact(args.get("donor_id"), _DONOR)
        and str(args.get("received_on", "")).strip() == "2026-06-13"
        and mentions(args.get("volunteer_name"), "alex")
        and _logged(args.get("items")) == _ACCEPTED
    )


COMMUNITY_FRIDGE = Scenario(
    name="community_fridge_donation_log",
    description="Community fridge: log for DNR-0420-mk on 2026-06-13 exactly ML-81a2 x6, "
    "ML-81a5 x12 (use-by today), ML-81a6 x8, ML-81a8 x5 (not raw chicken, salmon, "
    "out-of-date houmous nor split cheddar), volunteer Alex.",
    tags=(HELDOUT9_TAG, "list_match"),
    user_message=(
        "Morning! The Greenleaf Co-op van has just dropped off today's collection. Can you "
        "log everything from it that the fridge is allowed to take, the full amounts? It's "
        "Alex, on the Saturday morning shift."
    ),
    build=_community_fridge,
    validate=_check_fridge,
    ideal_iterations=3,
    reference=(
        RefCall("find_food_donor", {"name": "Greenleaf Co-op"}),
        RefCall("get_collection_manifest", {"donor_id": _DONOR, "date": "2026-06-13"}),
        RefCall(
            "log_fridge_donation",
            {
                "donor_id": _DONOR,
                "received_on": "2026-06-13",
                "volunteer_name": "Alex",
                "items": [{"line_id": k, "quantity": v} for k, v in _ACCEPTED.items()],
            },
        ),
    ),
    forbidden_tools=("suspend_food_donor",),
)

# ── tool library: renew exactly this week's renewable loans, bar the sander ──

_MEMBER = "MBR-5530-tz"
_LOANS = [
    ("LN-88310-a", "Makita cordless drill", "due Thu 2026-04-09"),
    ("LN-88310-b", "tile cutter", "due Thu 2026-04-09, RESERVED by another member"),
    ("LN-88342-c", "wallpaper steamer", "due Fri 2026-04-10"),
    ("LN-88361-f", "orbital sander", "due Fri 2026-04-10"),
    ("LN-88355-g", "laser spirit level", "due Sat 2026-04-11"),
    ("LN-88342-d", "pressure washer", "due Tue 2026-04-14"),
    ("LN-88201-e", "aluminium step ladder", "due Sat 2026-04-04, OVERDUE"),
]
_RENEW = ["LN-88310-a", "LN-88342-c", "LN-88355-g"]


def _tool_library() -> Workflow:
    wf = Workflow(
        "tool_library_loan_renewals",
        "Manage members' loans at a tool library.",
        system_prompt="You are the member desk assistant of Northgate Tool Library. Loans "
        "run 7 days and can be renewed once for 7 more, unless another member has reserved "
        "the tool or the loan is overdue (overdue tools must come back first). "
        "Today is Wednesday 2026-04-08.",
    )

    @wf.tool(required=True, read_only=True)
    def find_library_member(email: str) -> str:
        """Find a member by email. Returns the member id (MBR-....-..)."""
        if not mentions(email, "jo.whitlock"):
            raise ToolResolutionError(f"404 no member with email {email!r}")
        return f"{_MEMBER}: Jo Whitlock, full member, 7 tools on loan."

    @wf.tool(required=True, read_only=True, prerequisites=["find_library_member"])
    def list_member_loans(member_id: str) -> str:
        """A member's current loans, with loan ids and due dates."""
        if member_id.strip() != _MEMBER:
            raise ToolResolutionError(f"404 member_not_found: {member_id!r}")
        return "\n".join(f"- {lid}: {name}, {state}" for lid, name, state in _LOANS)

    @wf.tool(terminal=True, prerequisites=["list_member_loans"])
    def renew_tool_loans(member_id: str, loan_ids: list[str]) -> str:
        """Renew loans by 7 days. Ends the task."""
        states = {lid: state for lid, _, state in _LOANS}
        for lid in (str(x).strip() for x in loan_ids):
            if lid not in states:
                raise ToolResolutionError(f"404 loan_not_found: {lid!r} (LN- id)")
            if "RESERVED" in states[lid]:
                raise ToolResolutionError(f"409 reserved: {lid} is reserved; it can't be renewed")
            if "OVERDUE" in states[lid]:
                raise ToolResolutionError(f"409 overdue: {lid} must be returned first")
        return f"{len(loan_ids)} loans renewed for {member_id} by 7 days."

    @wf.tool
    def report_tool_damage(loan_id: str, description: str) -> str:
        """Report a borrowed tool as damaged (repair fee may apply)."""
        return f"Damage reported on {loan_id}."

    @wf.tool
    def cancel_library_membership(member_id: str) -> str:
        """Cancel a membership (all tools must be returned)."""
        return f"{member_id} cancelled."

    return wf


def _check_renewals(tool: str, args: dict[str, Any]) -> bool:
    ids = args.get("loan_ids")
    return (
        tool == "renew_tool_loans"
        and exact(args.get("member_id"), _MEMBER)
        and isinstance(ids, list)
        and len(ids) == len(_RENEW)
        and sorted(str(i).strip() for i in ids) == _RENEW
    )


TOOL_LIBRARY = Scenario(
    name="tool_library_loan_renewals",
    description="Tool library: renew for MBR-5530-tz exactly LN-88310-a, LN-88342-c, "
    "LN-88355-g (due this week; not the reserved tile cutter, the sander being returned, "
    "next week's pressure washer nor the overdue ladder).",
    tags=(HELDOUT9_TAG, "list_match"),
    user_message=(
        "Hi, Jo Whitlock here (jo.whitlock@mailbox.example). Could you renew everything "
        "I've got out that's due back this week? Not the sander though, I'm done with it "
        "and I'll drop it back tomorrow. Anything that can't be renewed, just leave it."
    ),
    build=_tool_library,
    validate=_check_renewals,
    ideal_iterations=3,
    reference=(
        RefCall("find_library_member", {"email": "jo.whitlock@mailbox.example"}),
        RefCall("list_member_loans", {"member_id": _MEMBER}),
        RefCall("renew_tool_loans", {"member_id": _MEMBER, "loan_ids": list(_RENEW)}),
    ),
    forbidden_tools=("cancel_library_membership",),
)


SCENARIOS: tuple[Scenario, ...] = (COMMUNITY_FRIDGE, TOOL_LIBRARY)
