"""Held out, eighth group (first half, report_agrees): an organ builder's
tuning office and a wedding-cake bakery, whose replies must state what the
estimate or the order account shows; `heldout8` includes these. Each is
tagged `heldout8` plus `report_agrees`.
"""

from __future__ import annotations

from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, has_number, mentions
from forge_evals.scenarios._domain_schema import HELDOUT8_TAG, alnum, exact

# ── organ tuning: the estimate's total with VAT and the earliest visit, reported ──

_CONTRACT, _ESTIMATE = "OTC-0219-SM", "EST-26-0447"


def _organ_tuning() -> Workflow:
    wf = Workflow(
        "organ_tuning_estimate_reply",
        "Answer customers of a pipe organ builder's tuning service.",
        system_prompt="You are the office assistant of Pennant & Hart Organ Builders. "
        "Customers with a tuning contract ask for estimates; reply with what the estimate "
        "says and book nothing unless asked. Today is Tuesday 2026-02-24.",
    )

    @wf.tool(required=True, read_only=True)
    def find_tuning_contract(venue_name: str, town: str) -> str:
        """Find a tuning contract by venue and town. Returns the contract id."""
        if not mentions(town, "thornbury"):
            raise ToolResolutionError(f"404 no contract in {town!r}")
        return (
            f"Contract {_CONTRACT}: St Mary's Church, Thornbury; two-manual Nicholson organ "
            "(1894); tuned before Easter and before Christmas."
        )

    @wf.tool(required=True, read_only=True, prerequisites=["find_tuning_contract"])
    def get_visit_estimate(contract_id: str, visit_type: str) -> str:
        """Estimate for a visit under a contract (e.g. pre_easter_tuning, repair)."""
        if contract_id.strip() != _CONTRACT:
            raise ToolResolutionError(f"404 contract_not_found: {contract_id!r}")
        return (
            f"Estimate {_ESTIMATE} ({_CONTRACT}, pre-Easter tuning): full tuning of flue "
            "and reed stops 310.00 GBP; releathering two pedal pallets 55.00 GBP; subtotal "
            "365.00 GBP; VAT at 20% 73.00 GBP; total 438.00 GBP. Earliest visit Tuesday "
            "2026-03-17 (the tuner's Thornbury round). Valid 30 days."
        )

    @wf.tool(terminal=True, prerequisites=["get_visit_estimate"])
    def send_estimate_to_customer(
        contract_id: str,
        estimate_id: str,
        total_inc_vat_gbp: float,
        vat_rate_percent: float,
        earliest_visit_date: str,
        message: str,
    ) -> str:
        """Email the estimate to the contract holder (date YYYY-MM-DD). Ends the task."""
        if estimate_id.strip() != _ESTIMATE:
            raise ToolResolutionError(f"404 estimate_not_found: {estimate_id!r}")
        return f"Estimate {estimate_id} sent for {contract_id}."

    @wf.tool
    def book_organ_tuner_visit(contract_id: str, date: str) -> str:
        """Book the tuner's visit on a date."""
        return f"Visit booked for {contract_id} on {date}."

    @wf.tool
    def end_tuning_contract(contract_id: str, reason: str) -> str:
        """End a tuning contract."""
        return f"{contract_id} ended."

    return wf


def _check_organ(tool: str, args: dict[str, Any]) -> bool:
    return (
        tool == "send_estimate_to_customer"
        and exact(args.get("contract_id"), _CONTRACT)
        and exact(args.get("estimate_id"), _ESTIMATE)
        and has_number(args.get("total_inc_vat_gbp"), 438.00)
        and has_number(args.get("vat_rate_percent"), 20)
        and str(args.get("earliest_visit_date", "")).strip() == "2026-03-17"
        and has_number(args.get("message"), 438)
    )


ORGAN_TUNING = Scenario(
    name="organ_tuning_estimate_reply",
    description="Organ tuning: send EST-26-0447 for OTC-0219-SM with total 438.00 (with VAT; "
    "not the 365.00 subtotal), VAT 20 (percent, not 0.2), earliest 2026-03-17; nothing booked.",
    tags=(HELDOUT8_TAG, "report_agrees"),
    user_message=(
        "Hello, I'm the churchwarden at St Mary's in Thornbury. We'd like the organ tuned "
        "before Easter as usual. What will it cost altogether, VAT included, and what's the "
        "earliest your tuner can come? Please don't book anything yet, the parochial church "
        "council has to approve the cost first."
    ),
    build=_organ_tuning,
    validate=_check_organ,
    ideal_iterations=3,
    reference=(
        RefCall("find_tuning_contract", {"venue_name": "St Mary's Church", "town": "Thornbury"}),
        RefCall("get_visit_estimate", {"contract_id": _CONTRACT, "visit_type": "pre_easter"}),
        RefCall(
            "send_estimate_to_customer",
            {
                "contract_id": _CONTRACT,
                "estimate_id": _ESTIMATE,
                "total_inc_vat_gbp": 438.00,
                "vat_rate_percent": 20,
                "earliest_visit_date": "2026-03-17",
                "message": "The pre-Easter tuning comes to 438.00 GBP including VAT at 20%. "
                "The earliest visit is Tuesday 17 March. Nothing is booked yet.",
            },
        ),
    ),
    forbidden_tools=("book_organ_tuner_visit", "end_tuning_contract"),
)

# ── wedding-cake bakery: the balance, its due date and the design status ──

_CAKE_ORDER = "WC-2608-0117-B"


def _cake_bakery() -> Workflow:
    wf = Workflow(
        "wedding_cake_balance_query",
        "Answer wedding couples about their cake orders.",
        system_prompt="You are the customer assistant of Sugarloaf Cakes, a wedding-cake "
        "bakery. Look the order up and answer from what its account shows. "
        "Today is Wednesday 2026-07-29.",
    )

    @wf.tool(required=True, read_only=True)
    def find_cake_order(surname: str, wedding_date: str) -> str:
        """Find a cake order by a surname and the wedding date (YYYY-MM-DD)."""
        if not mentions(surname, "okonjo") or wedding_date.strip() != "2026-08-22":
            raise ToolResolutionError(f"404 no order for {surname!r} on {wedding_date!r}")
        return (
            f"Order {_CAKE_ORDER}: Okonjo-Reyes wedding, Saturday 2026-08-22; three tiers "
            "(lemon and elderflower, chocolate, vanilla), semi-naked with sugar flowers."
        )

    @wf.tool(required=True, read_only=True, prerequisites=["find_cake_order"])
    def get_cake_order_account(order_id: str) -> str:
        """Payments, balance and design status of an order."""
        if order_id.strip() != _CAKE_ORDER:
            raise ToolResolutionError(f"404 order_not_found: {order_id!r}")
        return (
            f"{_CAKE_ORDER}: price 640.00 GBP; deposit 160.00 GBP paid 2026-01-12; second "
            "payment 120.00 GBP paid 2026-05-03; balance 360.00 GBP due Saturday 2026-08-08 "
            "(two weeks before the wedding). Design status: AWAITING_SIGN_OFF (sugar flower "
            "colour proof emailed 2026-07-20, not yet approved). Delivery to the venue "
            "2026-08-22 at 11:00."
        )

    @wf.tool(terminal=True, prerequisites=["get_cake_order_account"])
    def reply_cake_enquiry(
        order_id: str, balance_gbp: float, balance_due_date: str, design_status: str, message: str
    ) -> str:
        """Reply to the couple. design_status is the status code as shown. Ends the task."""
        return f"Reply sent on {order_id}."

    @wf.tool
    def take_cake_payment(order_id: str, amount_gbp: float) -> str:
        """Charge the card on file towards an order."""
        return f"{amount_gbp} GBP charged on {order_id}."

    @wf.tool
    def cancel_cake_order(order_id: str) -> str:
        """Cancel a cake order (deposit not refunded)."""
        return f"{order_id} cancelled."

    return wf


def _check_cake(tool: str, args: dict[str, Any]) -> bool:
    return (
        tool == "reply_cake_enquiry"
        and exact(args.get("order_id"), _CAKE_ORDER)
        and has_number(args.get("balance_gbp"), 360.00)
        and str(args.get("balance_due_date", "")).strip() == "2026-08-08"
        and alnum(args.get("design_status")) == "AWAITINGSIGNOFF"
        and mentions(args.get("message"), "proof", "sign off", "sign-off", "approv")
    )


WEDDING_CAKE = Scenario(
    name="wedding_cake_balance_query",
    description="Wedding cake: reply on WC-2608-0117-B with balance 360.00 (not the 640 price "
    "nor 480 after the deposit), due 2026-08-08, design AWAITING_SIGN_OFF, proof to approve.",
    tags=(HELDOUT8_TAG, "report_agrees"),
    user_message=(
        "Hi, it's Ade Okonjo-Reyes, our wedding is on the 22nd of August. How much do we "
        "still owe you for the cake, and by when? And is the design all finalised now, or "
        "do you need anything from us? Please don't take any payment yet."
    ),
    build=_cake_bakery,
    validate=_check_cake,
    ideal_iterations=3,
    reference=(
        RefCall("find_cake_order", {"surname": "Okonjo-Reyes", "wedding_date": "2026-08-22"}),
        RefCall("get_cake_order_account", {"order_id": _CAKE_ORDER}),
        RefCall(
            "reply_cake_enquiry",
            {
                "order_id": _CAKE_ORDER,
                "balance_gbp": 360.00,
                "balance_due_date": "2026-08-08",
                "design_status": "AWAITING_SIGN_OFF",
                "message": "The balance is 360.00 GBP, due by Saturday 8 August. The design "
                "is awaiting your sign-off: please approve the sugar flower colour proof we "
                "emailed on 20 July.",
            },
        ),
    ),
    forbidden_tools=("take_cake_payment", "cancel_cake_order"),
)


SCENARIOS: tuple[Scenario, ...] = (ORGAN_TUNING, WEDDING_CAKE)
