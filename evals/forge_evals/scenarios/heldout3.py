"""Held out, third group: sixteen workflows in businesses no earlier group
touches, written from the user's side only (not the engine) after `heldout2`
had been tuned on, and run once at the commit they were written on before any
tuning for them. This module: a domain registrar, an outdoor shop's returns,
home cleaning and freelance invoicing (carry_id, user_value);
heldout3_listings a visa centre, ocean freight, a letting agent and a recipe
box (report_agrees, list_match); heldout3_part2 the other eight. Each is
tagged `heldout3` plus one failure kind of issue 34 (the names `heldout` uses).
"""

from __future__ import annotations

from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, has_number, mentions, same
from forge_evals.scenarios import heldout3_listings, heldout3_part2
from forge_evals.scenarios._domain_schema import HELDOUT3_TAG, enum_param, obj

# ── domain registrar: the account id, then the availability hold token ───

_HOLD_TOKEN = "6f1d2c84-3b7a-4e59-a0c2-91d5e7b38f40"
_OTHER_HOLD_TOKEN = "a4e09b7c-51f2-4d3e-8c6a-0f7b2e9d1c53"


def _registrar() -> Workflow:
    wf = Workflow(
        "domain_registration_token",
        "Register and look after domain names for a registrar's customers.",
        system_prompt="You are the support assistant of Quillnet, a domain registrar. Find "
        "the customer's account, check that the domain is free and register it for them. "
        "Today is Monday 2026-10-05.",
    )

    @wf.tool(required=True, read_only=True)
    def find_account(email: str) -> str:
        """Find a customer account by its login email. Returns the account id."""
        if not same(email, "fern.okafor@mailbox.example"):
            raise ToolResolutionError(f"no account with login {email!r}")
        return (
            "Account QN-48213-K (Fern Okafor), contact handle CH-77102, card ending 4417. "
            "Domains: larkspur-cakes.com (expires 2027-01-14), fernokafor.me (expires "
            "2026-12-02)."
        )

    @wf.tool(required=True, read_only=True)
    def check_domain_availability(domain: str) -> str:
        """Check whether a domain can be registered; a free one is held for 15 minutes."""
        name = str(domain).strip().lower()
        if name == "larkspurbakery.com":
            return "larkspurbakery.com is registered elsewhere (since 2019); not available."
        token = _HOLD_TOKEN if name == "larkspurbakery.co.uk" else _OTHER_HOLD_TOKEN
        return f"{name} is available at 8.99 GBP a year. Hold token {token} (15 minutes)."

    wf.add_schema_tool(
        "register_domain",
        "Register a held domain on a customer account and charge the card on file. Ends the task.",
        obj(
            account_id={"type": "string", "pattern": r"^QN-\d{5}-[A-Z]$"},
            hold_token={"type": "string", "format": "uuid", "description": "From the check."},
            years={"type": "integer", "minimum": 1, "maximum": 10},
        ),
        lambda args: f"Registered on {args.get('account_id')}, order DR-551907.",
        terminal=True,
        prerequisites=["find_account", "check_domain_availability"],
    )

    @wf.tool
    def transfer_domain_out(domain: str) -> str:
        """Unlock a domain and email its transfer code so it can move to another registrar."""
        return f"{domain} unlocked; transfer code sent."

    @wf.tool
    def update_nameservers(domain: str, nameservers: list[str]) -> str:
        """Point a domain at other nameservers."""
        return f"{domain} now uses {', '.join(nameservers)}."

    return wf


DOMAIN_REGISTRATION_TOKEN = Scenario(
    name="domain_registration_token",
    description="Registrar: register larkspurbakery.co.uk on account QN-48213-K (not the "
    "email or contact handle) with the hold token from the availability check, 2 years.",
    tags=(HELDOUT3_TAG, "carry_id"),
    user_message=(
        "Hi, Fern Okafor here, I log in with fern.okafor@mailbox.example. Could you "
        "register larkspurbakery.co.uk on my account for two years please?"
    ),
    build=_registrar,
    validate=lambda tool, args: (
        tool == "register_domain"
        and same(args.get("account_id"), "QN-48213-K")
        and same(args.get("hold_token"), _HOLD_TOKEN)
        and has_number(args.get("years"), 2)
    ),
    ideal_iterations=3,
    reference=(
        RefCall("find_account", {"email": "fern.okafor@mailbox.example"}),
        RefCall("check_domain_availability", {"domain": "larkspurbakery.co.uk"}),
        RefCall(
            "register_domain",
            {"account_id": "QN-48213-K", "hold_token": _HOLD_TOKEN, "years": 2},
        ),
    ),
    forbidden_tools=("transfer_domain_out",),
)

# ── outdoor shop returns: the item id, then the return's RMA number ───────

_RMA_BY_ITEM = {"IT-5512": "RMA-88C4166", "IT-5530": "RMA-88C4172", "IT-5547": "RMA-88C4179"}


def _returns() -> Workflow:
    wf = Workflow(
        "web_return_label",
        "Handle returns for an online outdoor-clothing shop.",
        system_prompt="You are the returns assistant of Tarn & Fell Outdoor. Find the order, "
        "open a return for what the customer sends back, then make its postage label. "
        "Today is Thursday 2026-06-11.",
    )

    @wf.tool(required=True, read_only=True)
    def find_web_order(order_number: str, postcode: str) -> str:
        """Find a web order by its order number and the delivery postcode."""
        if not mentions(order_number, "30917") or not mentions(postcode, "LA22"):
            raise ToolResolutionError(f"no order {order_number!r} for postcode {postcode!r}")
        return (
            "Order TF-2026-30917, delivered 2026-06-01 to L. Marsh, LA22 0BX. Items: IT-5512 "
            "Ridgeline waterproof jacket, men's L, 149.00 GBP; IT-5530 merino base layer, "
            "men's M, 55.00 GBP; IT-5547 trekking poles (pair), 64.00 GBP. Returnable until "
            "2026-07-01."
        )

    @wf.tool(required=True, prerequisites=["find_web_order"])
    def open_return(order_number: str, item_id: str, reason: str) -> str:
        """Open a return for one item of an order. Returns the return's RMA number."""
        rma = _RMA_BY_ITEM.get(str(item_id).strip().upper())
        if rma is None:
            raise ToolResolutionError(f"order {order_number} has no item {item_id!r}")
        return f"Return {rma} opened for {item_id} ({reason}). Refund on receipt: to card."

    wf.add_schema_tool(
        "create_return_label",
        "Create the prepaid postage label for an open return. Ends the task.",
        obj(
            rma_number={"type": "string", "description": "The return's RMA number."},
            method=enum_param("parcel_shop_drop_off", "home_collection", "locker"),
        ),
        lambda args: f"Label for {args.get('rma_number')} emailed to the customer.",
        terminal=True,
        prerequisites=["open_return"],
    )

    @wf.tool
    def cancel_web_order(order_number: str) -> str:
        """Cancel an order and refund everything on it."""
        return f"{order_number} cancelled."

    @wf.tool
    def issue_store_credit(order_number: str, amount_gbp: float) -> str:
        """Give store credit against an order instead of a refund."""
        return f"{amount_gbp} GBP credit on {order_number}."

    return wf


WEB_RETURN_LABEL = Scenario(
    name="web_return_label",
    description="Returns: open the return for the base layer IT-5530, then the label for "
    "its RMA-88C4172 (not the order number or item id), dropped at a parcel shop.",
    tags=(HELDOUT3_TAG, "carry_id"),
    user_message=(
        "Hello, order TF-2026-30917, postcode LA22 0BX. The merino base layer came up too "
        "small so I'd like to send it back. I'll drop it off at a parcel shop."
    ),
    build=_returns,
    validate=lambda tool, args: (
        tool == "create_return_label"
        and same(args.get("rma_number"), "RMA-88C4172")
        and args.get("method") == "parcel_shop_drop_off"
    ),
    ideal_iterations=3,
    reference=(
        RefCall("find_web_order", {"order_number": "TF-2026-30917", "postcode": "LA22 0BX"}),
        RefCall(
            "open_return",
            {"order_number": "TF-2026-30917", "item_id": "IT-5530", "reason": "too small"},
        ),
        RefCall(
            "create_return_label",
            {"rma_number": "RMA-88C4172", "method": "parcel_shop_drop_off"},
        ),
    ),
    forbidden_tools=("cancel_web_order", "issue_store_credit"),
)

# ── home cleaning: "every other week", "this Thursday", "quarter to nine" ─

_CLEANS = {
    "home_id": "HM-60291",
    "frequency": "fortnightly",
    "first_date": "2026-08-13",
    "arrival_time": "08:45",
    "hours": 3,
    "bring_supplies": False,
}


def _cleaning() -> Workflow:
    wf = Workflow(
        "home_cleaning_booking",
        "Book regular home cleans.",
        system_prompt="You book cleans for Brightside Home Cleaning. Find the customer's home "
        "by their phone number, then set up the cleans as they ask. "
        "Today is Monday 2026-08-10.",
    )

    @wf.tool(required=True, read_only=True)
    def find_home(phone: str) -> str:
        """Find a customer's home record by phone number. Returns the home id."""
        if not "".join(ch for ch in str(phone) if ch.isdigit()).endswith("7781203456"):
            raise ToolResolutionError(f"no home with phone {phone!r}")
        return (
            "Home HM-60291: 14 Orchard Rise, Didsbury M20 6TQ. 3 bedrooms, 2 bathrooms, "
            "1 cat. No cleans booked. Key safe by the back door."
        )

    wf.add_schema_tool(
        "schedule_cleans",
        "Set up a repeating clean for a home. Ends the task.",
        obj(
            home_id={"type": "string", "pattern": r"^HM-\d{5}$"},
            frequency=enum_param("weekly", "fortnightly", "monthly"),
            first_date={"type": "string", "format": "date"},
            arrival_time={"type": "string", "pattern": r"^([01]\d|2[0-3]):[0-5]\d$"},
            hours={"type": "integer", "minimum": 2, "maximum": 8},
            bring_supplies={"type": "boolean", "description": "Cleaner brings products."},
        ),
        lambda args: f"Cleans scheduled for {args.get('home_id')}, plan CP-20417.",
        terminal=True,
        prerequisites=["find_home"],
    )

    @wf.tool(read_only=True)
    def get_cleaner_availability(postcode: str, date: str) -> str:
        """List when cleaners are free near a postcode on a day."""
        return f"{postcode} {date}: 08:00-12:00 and 13:00-17:00."

    @wf.tool
    def cancel_all_cleans(home_id: str) -> str:
        """Cancel every booked clean for a home."""
        return f"All cleans for {home_id} cancelled."

    return wf


HOME_CLEANING_BOOKING = Scenario(
    name="home_cleaning_booking",
    description="Cleaning: HM-60291 fortnightly ('every other week') from this Thursday "
    "2026-08-13 at 08:45 ('quarter to nine'), three hours, bring_supplies false.",
    tags=(HELDOUT3_TAG, "user_value"),
    user_message=(
        "Hi, my number's 07781 203456. Could you set us up with a clean every other week, "
        "starting this Thursday? Arriving at quarter to nine, three hours each time. No "
        "need to bring supplies, we've got everything here."
    ),
    build=_cleaning,
    validate=lambda tool, args: (
        tool == "schedule_cleans"
        and same(args.get("home_id"), "HM-60291")
        and all(args.get(k) == _CLEANS[k] for k in ("frequency", "first_date", "arrival_time"))
        and has_number(args.get("hours"), 3)
        and args.get("bring_supplies") is False
    ),
    ideal_iterations=2,
    reference=(
        RefCall("find_home", {"phone": "07781 203456"}),
        RefCall("schedule_cleans", dict(_CLEANS)),
    ),
    forbidden_tools=("cancel_all_cleans",),
)

# ── freelance invoicing: hours, euros, a VAT percentage, "due in thirty days"


def _invoicing() -> Workflow:
    wf = Workflow(
        "freelance_invoice",
        "Draft and send invoices for a freelance design studio.",
        system_prompt="You are the invoicing assistant of Mireille Dufour Design. Find the "
        "client, then draft the invoice to the billing email on file, in the client's "
        "currency. Today is Tuesday 2026-09-15.",
    )

    @wf.tool(required=True, read_only=True)
    def search_contacts(name: str) -> str:
        """Search the studio's clients by name. Returns client ids and billing details."""
        if not mentions(name, "hartwell"):
            raise ToolResolutionError(f"no client matching {name!r}")
        return (
            "CL-0392 Hartwell Studio BV, Keizersgracht 221, Amsterdam. Billing email "
            "accounts@hartwellstudio.example. Currency EUR. Usual terms: 14 days."
        )

    line_item = obj(
        description={"type": "string", "minLength": 1},
        quantity={"type": "number", "exclusiveMinimum": 0},
        unit_price={"type": "number", "minimum": 0},
    )
    wf.add_schema_tool(
        "create_invoice",
        "Create an invoice for a client (a draft unless send_now). Ends the task.",
        obj(
            client_id={"type": "string", "pattern": r"^CL-\d{4}$"},
            bill_to_email={"type": "string", "format": "email"},
            currency=enum_param("EUR", "GBP", "USD"),
            line_items={"type": "array", "items": line_item, "minItems": 1},
            vat_rate_percent={"type": "number", "minimum": 0, "maximum": 30},
            due_date={"type": "string", "format": "date"},
            send_now={"type": "boolean", "description": "Email it to the client now."},
        ),
        lambda args: f"Invoice INV-2026-0418 created for {args.get('client_id')}.",
        terminal=True,
        prerequisites=["search_contacts"],
    )

    @wf.tool
    def send_invoice(invoice_number: str) -> str:
        """Email an invoice to the client's billing address."""
        return f"{invoice_number} sent."

    @wf.tool
    def void_invoice(invoice_number: str) -> str:
        """Void an issued invoice."""
        return f"{invoice_number} voided."

    return wf


def _line_total(items: Any) -> float:
    """The invoice's net total: each line's quantity times its unit price."""
    return sum(float(item["quantity"]) * float(item["unit_price"]) for item in items)


def _check_invoice(tool: str, args: dict[str, Any]) -> bool:
    items = args.get("line_items")
    return (
        tool == "create_invoice"
        and same(args.get("client_id"), "CL-0392")
        and same(args.get("bill_to_email"), "accounts@hartwellstudio.example")
        and args.get("currency") == "EUR"
        and isinstance(items, list)
        and abs(_line_total(items) - 850) < 0.01  # 12.5 hours at 68 EUR, however split
        and has_number(args.get("vat_rate_percent"), 21)
        and args.get("due_date") == "2026-10-15"
        and args.get("send_now") is False
    )


_INVOICE = {
    "client_id": "CL-0392",
    "bill_to_email": "accounts@hartwellstudio.example",
    "currency": "EUR",
    "line_items": [{"description": "Brand refresh", "quantity": 12.5, "unit_price": 68}],
    "vat_rate_percent": 21,
    "due_date": "2026-10-15",
    "send_now": False,
}

FREELANCE_INVOICE = Scenario(
    name="freelance_invoice",
    description="Invoicing: CL-0392, 12.5 hours ('twelve and a half') at 68 EUR = 850 net, "
    "VAT 21 (percent, not 0.21), due 2026-10-15 ('thirty days'), send_now false.",
    tags=(HELDOUT3_TAG, "user_value"),
    user_message=(
        "Please invoice Hartwell Studio for the brand refresh: twelve and a half hours at "
        "€68 an hour, plus VAT at 21%. Make it due in thirty days rather than their usual "
        "terms, and don't send it yet, I want to look it over first."
    ),
    build=_invoicing,
    validate=_check_invoice,
    ideal_iterations=2,
    reference=(
        RefCall("search_contacts", {"name": "Hartwell Studio"}),
        RefCall("create_invoice", dict(_INVOICE)),
    ),
    forbidden_tools=("send_invoice", "void_invoice"),
)


SCENARIOS: tuple[Scenario, ...] = (
    DOMAIN_REGISTRATION_TOKEN,
    WEB_RETURN_LABEL,
    HOME_CLEANING_BOOKING,
    FREELANCE_INVOICE,
    *heldout3_listings.SCENARIOS,
    *heldout3_part2.SCENARIOS,
)
