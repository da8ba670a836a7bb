"""Held out, eighth group (first half, list_match): a beekeeping supplies
shop's back order and a coworking space's desk pass extensions; `heldout8`
includes these. Each is tagged `heldout8` plus `list_match`.
"""

from __future__ import annotations

from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, mentions
from forge_evals.scenarios._domain_schema import HELDOUT8_TAG, exact

# ── bee supplies: a back order of exactly the National items out of stock ──

_CUSTOMER = "CUS-40917"
_STOCK = [
    (
        "HHB-FRM-N-DN4",
        "National DN4 brood frames, flat pack of 10",
        18.50,
        "OUT OF STOCK, due 05-06",
    ),
    ("HHB-FRM-N-SN4", "National SN4 super frames, pack of 10", 16.90, "in stock (42)"),
    (
        "HHB-FND-N-BRD",
        "National brood foundation, wired, 10 sheets",
        21.00,
        "OUT OF STOCK, due 05-13",
    ),
    (
        "HHB-FND-N-SUP",
        "National super foundation, unwired, 10 sheets",
        14.50,
        "OUT OF STOCK, due 05-06",
    ),
    ("HHB-FRM-L-DP", "Langstroth deep frames, pack of 10", 22.00, "OUT OF STOCK, due 05-20"),
    ("HHB-FRM-C-BRD", "Commercial brood frames, pack of 10", 19.80, "OUT OF STOCK, due 06-01"),
    (
        "HHB-FND-N-THN",
        "National thin super foundation (cut comb), 10 sheets",
        12.00,
        "in stock (12)",
    ),
]
_NATIONAL_OUT = ["HHB-FND-N-BRD", "HHB-FND-N-SUP", "HHB-FRM-N-DN4"]

_BACK_ORDER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "customer_id": {"type": "string", "pattern": "^CUS-[0-9]{5}$"},
        "lines": {
            "type": "array",
            "minItems": 1,
            "uniqueItems": True,
            "items": {
                "type": "object",
                "properties": {
                    "sku": {"type": "string", "pattern": "^HHB-[A-Z]{3}-[A-Z]-[A-Z0-9]{2,4}$"},
                    "packs": {"type": "integer", "minimum": 1, "maximum": 50},
                },
                "required": ["sku", "packs"],
            },
        },
        "substitutions_allowed": {"type": "boolean"},
    },
    "required": ["customer_id", "lines", "substitutions_allowed"],
}


def _bee_supplies() -> Workflow:
    wf = Workflow(
        "bee_supplies_national_backorder",
        "Take mail orders for beekeeping equipment.",
        system_prompt="You are the order desk assistant of Heather Hill Bee Supplies. Look "
        "customers up by email. Items out of stock can go on a back order, which ships when "
        "they come in; items in stock are ordered normally. Today is Wednesday 2026-04-22.",
    )

    @wf.tool(required=True, read_only=True)
    def find_beekeeper_account(email: str) -> str:
        """Find a customer by email. Returns the customer id (CUS-XXXXX)."""
        if not mentions(email, "rhys.morgan"):
            raise ToolResolutionError(f"404 no customer with email {email!r}")
        return f"Customer {_CUSTOMER}: Rhys Morgan, delivery to Llandeilo SA19 6NA."

    @wf.tool(required=True, read_only=True, prerequisites=["find_beekeeper_account"])
    def list_frames_and_foundation(hive_type: str) -> str:
        """The frames and foundation catalogue (every hive type), with stock status."""
        return "\n".join(f"- {sku}: {text}, {p:.2f} GBP, {stock}" for sku, text, p, stock in _STOCK)

    def _back_order(args: dict[str, Any]) -> str:
        known = {row[0]: row[3] for row in _STOCK}
        lines = [ln for ln in args.get("lines") or [] if isinstance(ln, dict)]
        for line in lines:
            sku = str(line.get("sku", "")).strip()
            if sku not in known:
                raise ToolResolutionError(f"404 unknown sku: {sku!r}")
            if "in stock" in known[sku]:
                raise ToolResolutionError(f"409 in_stock: {sku} is in stock; order it normally")
        return f"Back order BO-7Hk2201 for {args.get('customer_id')}: {len(lines)} lines."

    wf.add_schema_tool(
        "place_back_order",
        "Put out-of-stock items on back order for a customer. Ends the task.",
        _BACK_ORDER_SCHEMA,
        _back_order,
        terminal=True,
        prerequisites=["list_frames_and_foundation"],
    )

    @wf.tool
    def place_stock_order(customer_id: str, skus: list[str]) -> str:
        """Order items that are in stock for dispatch today."""
        return f"Order for {customer_id} placed."

    @wf.tool
    def close_beekeeper_account(customer_id: str) -> str:
        """Close a customer account."""
        return f"{customer_id} closed."

    return wf


def _check_bees(tool: str, args: dict[str, Any]) -> bool:
    lines = args.get("lines")
    if tool != "place_back_order" or not isinstance(lines, list):
        return False
    ok = all(isinstance(ln, dict) and ln.get("packs") == 2 for ln in lines)
    skus = sorted(str(ln.get("sku", "")).strip().upper() for ln in lines if isinstance(ln, dict))
    return (
        ok
        and skus == _NATIONAL_OUT
        and exact(args.get("customer_id"), _CUSTOMER)
        and args.get("substitutions_allowed") is False
    )


BEE_SUPPLIES = Scenario(
    name="bee_supplies_national_backorder",
    description="Bee supplies: back order for CUS-40917 of exactly HHB-FRM-N-DN4, "
    "HHB-FND-N-BRD, HHB-FND-N-SUP (National and out of stock; not Langstroth, Commercial "
    "nor in-stock items), 2 packs each, no substitutes.",
    tags=(HELDOUT8_TAG, "list_match"),
    user_message=(
        "Hi, Rhys Morgan here, rhys.morgan@cymru-mail.example. I keep National hives. Could "
        "you put me down for two packs of each National frame and foundation you've "
        "currently run out of? Nothing that's in stock, I'll get that locally, and please "
        "don't send substitutes."
    ),
    build=_bee_supplies,
    validate=_check_bees,
    ideal_iterations=3,
    reference=(
        RefCall("find_beekeeper_account", {"email": "rhys.morgan@cymru-mail.example"}),
        RefCall("list_frames_and_foundation", {"hive_type": "National"}),
        RefCall(
            "place_back_order",
            {
                "customer_id": _CUSTOMER,
                "lines": [{"sku": sku, "packs": 2} for sku in _NATIONAL_OUT],
                "substitutions_allowed": False,
            },
        ),
    ),
    forbidden_tools=("close_beekeeper_account",),
)

# ── coworking: extend exactly the passes that run out this week, bar a leaver ──

_ACCOUNT = "ACC-FY-3310"
_PASSES = [
    ("DP-3310-A41", "Ana Sousa, hot desk, expires Tue 2026-09-15"),
    ("DP-3310-B07", "Jamie Cole, hot desk, expires Wed 2026-09-16"),
    ("DP-3310-A58", "Ravi Menon, fixed desk 2.14, expires Fri 2026-09-18"),
    ("DP-3310-C12", "Kofi Mensah, hot desk, expires Thu 2026-09-17"),
    ("DP-3310-A33", "Mei Lin, hot desk, EXPIRED 2026-09-10"),
    ("DP-3310-B19", "Sol Ortega, fixed desk 2.09, expires Tue 2026-09-22"),
    ("DP-3310-C25", "Priti Shah, hot desk, expires Sat 2026-10-31"),
]
_THIS_WEEK = ["DP-3310-A41", "DP-3310-A58", "DP-3310-C12"]


def _coworking_passes() -> Workflow:
    wf = Workflow(
        "cowork_pass_extensions",
        "Manage company desk passes at a coworking space.",
        system_prompt="You are the member services assistant of Foundry Yard Coworking. "
        "Company accounts hold desk passes for their staff; a pass can be extended by whole "
        "months before it expires. Today is Monday 2026-09-14.",
    )

    @wf.tool(required=True, read_only=True)
    def find_company_account(company_name: str) -> str:
        """Find a company account by name. Returns the account id."""
        if not mentions(company_name, "lumen"):
            raise ToolResolutionError(f"404 no company account {company_name!r}")
        return f"Account {_ACCOUNT}: Lumen Analytics Ltd, 7 desk passes."

    @wf.tool(required=True, read_only=True, prerequisites=["find_company_account"])
    def list_desk_passes(account_id: str) -> str:
        """The desk passes of a company account, with holder and expiry."""
        if account_id.strip() != _ACCOUNT:
            raise ToolResolutionError(f"404 account_not_found: {account_id!r}")
        return "\n".join(f"- {pid}: {text}" for pid, text in _PASSES)

    @wf.tool(terminal=True, prerequisites=["list_desk_passes"])
    def extend_desk_passes(pass_ids: list[str], months: int) -> str:
        """Extend desk passes by whole months (1 to 12). Ends the task."""
        rows = dict(_PASSES)
        for pid in pass_ids:
            if pid.strip() not in rows:
                raise ToolResolutionError(f"404 pass_not_found: {pid!r}")
            if "EXPIRED" in rows[pid.strip()]:
                raise ToolResolutionError(f"409 pass_expired: {pid} (buy a new pass instead)")
        return f"{len(pass_ids)} passes extended by {months} month(s); invoice INV-FY-88120."

    @wf.tool
    def cancel_desk_pass(pass_id: str) -> str:
        """Cancel a desk pass now (no refund for the current month)."""
        return f"{pass_id} cancelled."

    @wf.tool
    def buy_guest_day_pass(account_id: str, guest_name: str, date: str) -> str:
        """Buy a day pass for a visitor."""
        return f"Day pass for {guest_name} on {date}."

    return wf


def _check_passes(tool: str, args: dict[str, Any]) -> bool:
    ids = args.get("pass_ids")
    return (
        tool == "extend_desk_passes"
        and isinstance(ids, list)
        and len(ids) == len(_THIS_WEEK)
        and sorted(str(i).strip().upper() for i in ids) == _THIS_WEEK
        and args.get("months") == 1
    )


COWORK_PASSES = Scenario(
    name="cowork_pass_extensions",
    description="Coworking: extend exactly DP-3310-A41, DP-3310-A58, DP-3310-C12 (expiring "
    "this week; not leaver Jamie's B07, expired A33 nor next week's B19) by 1 month; "
    "nothing cancelled.",
    tags=(HELDOUT8_TAG, "list_match"),
    user_message=(
        "Morning, it's the office manager at Lumen Analytics. Could you extend by one month "
        "every one of our desk passes that runs out this week? Except Jamie's, he's leaving "
        "us, so just let his run out."
    ),
    build=_coworking_passes,
    validate=_check_passes,
    ideal_iterations=3,
    reference=(
        RefCall("find_company_account", {"company_name": "Lumen Analytics"}),
        RefCall("list_desk_passes", {"account_id": _ACCOUNT}),
        RefCall("extend_desk_passes", {"pass_ids": list(_THIS_WEEK), "months": 1}),
    ),
    forbidden_tools=("cancel_desk_pass",),
)


SCENARIOS: tuple[Scenario, ...] = (BEE_SUPPLIES, COWORK_PASSES)
