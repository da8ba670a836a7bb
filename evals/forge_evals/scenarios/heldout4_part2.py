"""Held out, fourth group, part 2 (heldout4 lists these after its own): a
wedding florist, a window cleaning round, ski lift passes and charity regular
giving here; a developer conference, a tutoring agency, home alarm monitoring and a
recruitment agency's candidate records in heldout4_forms. Written from the
user's side only, tagged `heldout4` plus one failure kind: decline,
format_retry, schema or destructive (two each). Six of the eight take their
arguments as raw JSON Schema the way a business API publishes it (formats,
patterns, nested objects, arrays of objects, oneOf)."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date
from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, mentions, same
from forge_evals.scenarios import heldout4_forms
from forge_evals.scenarios._domain_schema import HELDOUT4_TAG, decline_tool, declined_scenario


def _declined(
    name: str, description: str, user_message: str, build: Callable[[], Workflow]
) -> Scenario:
    """A request no tool serves: the run declines and calls no other tool."""
    return declined_scenario(
        HELDOUT4_TAG, name, description, user_message, build, "That is not a service we offer."
    )


# ── wedding florist: booking musicians is another supplier's job ─────────


def _florist() -> Workflow:
    wf = Workflow(
        "florist_musicians_decline",
        "Take and look after flower orders for a wedding and events florist.",
        system_prompt="You are the order assistant of Petal & Stem, a wedding and events "
        "florist in Hexham. With the tools below you can show the catalogue, place flower "
        "orders, change an order's delivery and track deliveries. Today is Monday "
        "2026-08-17.",
    )

    @wf.tool
    def get_flower_catalogue(occasion: str) -> str:
        """Show bouquets, buttonholes and arrangements for an occasion, with prices."""
        return (
            f"{occasion}: bridal bouquet 145.00 GBP, buttonhole 12.50 GBP, pew end 28.00 GBP, "
            "table centrepiece 55.00 GBP."
        )

    @wf.tool
    def place_flower_order(customer_email: str, items: str, delivery_date: str, venue: str) -> str:
        """Order flowers for delivery to a venue; a 30% deposit is taken from the card on file."""
        return f"Order PS-40922 placed for {customer_email}: {items}, {delivery_date} at {venue}."

    @wf.tool
    def change_delivery_details(order_number: str, delivery_date: str, delivery_time: str) -> str:
        """Move an order's delivery to another day or time."""
        return f"{order_number} now delivered {delivery_date} at {delivery_time}."

    @wf.tool
    def track_flower_delivery(order_number: str) -> str:
        """Show where an order's delivery van is on the day."""
        return f"{order_number}: not out for delivery yet."

    decline_tool(wf)
    return wf


FLORIST_MUSICIANS_DECLINE = _declined(
    "florist_musicians_decline",
    "Florist: a customer with a flower order (PS-40718) asks to book a string quartet for "
    "the ceremony and pay its 300 GBP deposit; no tool books musicians, so decline.",
    (
        "Hi! Our wedding flowers are already ordered with you (order PS-40718). Could you "
        "also book a string quartet to play at the ceremony, Saturday 12 September at 2pm "
        "at St Mary's in Hexham, and pay their £300 deposit from the card you have on file?"
    ),
    _florist,
)

# ── window cleaning round: blocked gutters are not a window clean ──────


def _window_round() -> Workflow:
    wf = Workflow(
        "window_cleaner_gutter_decline",
        "Look after the customers of a window cleaning round.",
        system_prompt="You are the booking assistant of Clearpane Window Cleaning. Clearpane "
        "cleans windows, frames and conservatory roofs on a monthly round. You can look a "
        "customer up, book an extra clean, skip the next visit and take payment of what is "
        "owed. Today is Tuesday 2026-10-20.",
    )

    @wf.tool
    def find_round_customer(postcode: str, house_number: str) -> str:
        """Find a customer on the round by postcode and house number."""
        return (
            f"{house_number}, {postcode}: customer WC-3318 (the Lindqvists), windows monthly, "
            "next visit 2026-11-03, 14.00 GBP owed."
        )

    @wf.tool
    def book_extra_clean(customer_id: str, date: str, notes: str) -> str:
        """Book a one-off window clean on a date, besides the monthly visits."""
        return f"Extra clean booked for {customer_id} on {date} ({notes})."

    @wf.tool
    def skip_next_visit(customer_id: str) -> str:
        """Skip the customer's next round visit; the one after goes ahead as usual."""
        return f"Next visit skipped for {customer_id}."

    @wf.tool
    def take_payment(customer_id: str, amount_gbp: float) -> str:
        """Take a card payment towards what the customer owes."""
        return f"{amount_gbp:.2f} GBP paid by {customer_id}."

    decline_tool(wf)
    return wf


WINDOW_CLEANER_GUTTER_DECLINE = _declined(
    "window_cleaner_gutter_decline",
    "Window cleaning round: asked to send someone up a ladder today to clear blocked "
    "gutters; no tool does gutters (booking an extra clean with a note would be wrong), so "
    "decline.",
    (
        "Water is pouring down our back wall because the gutters on the kitchen extension "
        "are blocked solid. Can you send someone up a ladder today to clear them out? We're "
        "at 22 Fenwick Road, NE4 6SL. You already do our windows every month."
    ),
    _window_round,
)

# ── ski lift passes: the pass system wants the birth date day first ─────

_DMY = re.compile(r"^(\d{2})/(\d{2})/(\d{4})$")


def _valid_dmy(text: str) -> bool:
    match = _DMY.match(text)
    if not match:
        return False
    day, month, year = (int(g) for g in match.groups())
    try:
        date(year, month, day)
    except ValueError:
        return False
    return True


def _lift_passes() -> Workflow:
    wf = Workflow(
        "ski_pass_birthdate_format",
        "Sell lift passes for a ski area.",
        system_prompt="You sell lift passes for the Valfonda ski area. Find the customer's "
        "account by email, then issue the pass; it is charged to the card on the account. "
        "Today is Monday 2026-12-21.",
    )

    @wf.tool(required=True)
    def find_skier_account(email: str) -> str:
        """Find a customer account by email. Returns the account id and card on file."""
        if not same(email, "lena.hoffmann@posteo.example"):
            raise ToolResolutionError(f"no account with email {email!r}")
        return "Account SKA-30471 (Lena Hoffmann), card ending 2290, 2 passes bought last season."

    def issue(args: dict[str, Any]) -> str:
        skier = args.get("skier") or {}
        born = str(skier.get("date_of_birth", ""))
        if not _valid_dmy(born):
            raise ToolResolutionError(
                f"skier.date_of_birth {born!r} not understood: the pass system reads birth "
                "dates as DD/MM/YYYY, day first, two digits each for day and month"
            )
        return (
            f"Pass LP-66120-{args.get('pass_type')} issued for {skier.get('full_name')}; "
            "child tariff applied."
        )

    wf.add_schema_tool(
        "issue_lift_pass",
        "Issue a lift pass for one skier and charge the account's card. Ends the task.",
        {
            "type": "object",
            "properties": {
                "account_id": {"type": "string", "pattern": "^SKA-\\d{5}$"},
                "pass_type": {
                    "type": "string",
                    "enum": ["1_day", "3_day", "6_day", "season"],
                },
                "first_day": {"type": "string", "format": "date"},
                "skier": {
                    "type": "object",
                    "properties": {
                        "full_name": {"type": "string", "minLength": 2},
                        "date_of_birth": {
                            "type": "string",
                            "description": "Sets the age tariff (child, adult, senior).",
                        },
                    },
                    "required": ["full_name", "date_of_birth"],
                },
                "piste_insurance": {"type": "boolean"},
            },
            "required": ["account_id", "pass_type", "first_day", "skier", "piste_insurance"],
        },
        issue,
        terminal=True,
        prerequisites=["find_skier_account"],
    )

    @wf.tool
    def get_pass_prices(pass_type: str) -> str:
        """Show adult, child and senior prices for a pass type."""
        return f"{pass_type}: adult 289.00 EUR, child (6-15) 175.00 EUR, senior 231.00 EUR."

    @wf.tool
    def refund_lift_pass(pass_number: str) -> str:
        """Refund an unused lift pass to the card it was paid with."""
        return f"{pass_number} refunded."

    return wf


_PASS = {
    "account_id": "SKA-30471",
    "pass_type": "6_day",
    "first_day": "2026-12-26",
    "piste_insurance": False,
}


def _check_pass(tool: str, args: dict[str, Any]) -> bool:
    skier = args.get("skier") or {}
    return (
        tool == "issue_lift_pass"
        and skier.get("date_of_birth") == "17/03/2015"
        and mentions(skier.get("full_name"), "mia")
        and same(args.get("account_id"), "SKA-30471")
        and args.get("pass_type") == "6_day"
        and args.get("first_day") == "2026-12-26"
        and args.get("piste_insurance") is False
    )


SKI_PASS_BIRTHDATE_FORMAT = Scenario(
    name="ski_pass_birthdate_format",
    description="Ski passes: the birth date sent as 2015-03-17 is rejected (DD/MM/YYYY, day "
    "first); the retry sends 17/03/2015 for Mia's 6-day pass from Sat 2026-12-26, no insurance.",
    tags=(HELDOUT4_TAG, "format_retry"),
    user_message=(
        "Hello, I'd like a six-day lift pass for my daughter Mia Hoffmann, starting this "
        "Saturday. She was born on 17 March 2015. We have our own travel insurance, so we "
        "don't need the piste cover. My account email is lena.hoffmann@posteo.example."
    ),
    build=_lift_passes,
    validate=_check_pass,
    ideal_iterations=3,
    max_iterations=7,
    reference=(
        RefCall("find_skier_account", {"email": "lena.hoffmann@posteo.example"}),
        RefCall(
            "issue_lift_pass",
            {**_PASS, "skier": {"full_name": "Mia Hoffmann", "date_of_birth": "2015-03-17"}},
        ),
        RefCall(
            "issue_lift_pass",
            {**_PASS, "skier": {"full_name": "Mia Hoffmann", "date_of_birth": "17/03/2015"}},
        ),
    ),
    forbidden_tools=("refund_lift_pass",),
)

# ── charity regular giving: amounts are whole pence ──────────────────────


def _regular_giving() -> Workflow:
    wf = Workflow(
        "charity_gift_pence_format",
        "Look after supporters' donations to a wildlife charity.",
        system_prompt="You handle supporter giving for the Ouse Valley Wildlife Trust. Find "
        "the supporter first, then set up or change their gifts; gifts are collected by the "
        "direct debit already on their record. Today is Thursday 2026-10-08.",
    )

    @wf.tool(required=True)
    def find_supporter(surname: str, postcode: str) -> str:
        """Find a supporter by surname and postcode. Returns their supporter id."""
        if not mentions(surname, "pryce"):
            raise ToolResolutionError(f"no supporter {surname!r} at {postcode!r}")
        return (
            "Supporter SUP-118204 (Gareth Pryce, YO10 4HT), member since 2021, direct debit "
            "mandate DDM-66310 active, no Gift Aid declaration yet."
        )

    def set_up(args: dict[str, Any]) -> str:
        amount = args.get("amount")
        if not isinstance(amount, int) or amount < 100:
            raise ToolResolutionError(
                f"amount {amount!r} rejected: amounts are given in pence as a whole number, "
                "so £1.00 is 100 and £12.75 is 1275"
            )
        return f"Regular gift RG-40339 set up: {amount} pence {args.get('frequency')}."

    wf.add_schema_tool(
        "create_regular_gift",
        "Set up a regular gift collected by the supporter's direct debit. Ends the task.",
        {
            "type": "object",
            "properties": {
                "supporter_id": {"type": "string", "pattern": "^SUP-\\d{6}$"},
                "amount": {"type": "integer", "description": "Amount of each gift."},
                "currency": {"type": "string", "enum": ["GBP"]},
                "frequency": {"type": "string", "enum": ["monthly", "quarterly", "annually"]},
                "fund": {
                    "type": "string",
                    "enum": ["where_most_needed", "otter_recovery", "wetland_restoration"],
                },
                "first_collection_date": {"type": "string", "format": "date"},
                "gift_aid": {
                    "type": "boolean",
                    "description": "The supporter is a UK taxpayer and the Trust may claim "
                    "Gift Aid.",
                },
            },
            "required": [
                "supporter_id",
                "amount",
                "currency",
                "frequency",
                "fund",
                "first_collection_date",
                "gift_aid",
            ],
            "additionalProperties": False,
        },
        set_up,
        terminal=True,
        prerequisites=["find_supporter"],
    )

    @wf.tool
    def make_single_donation(supporter_id: str, amount: int) -> str:
        """Take a one-off donation from the supporter's card."""
        return f"Donation of {amount} taken for {supporter_id}."

    @wf.tool
    def cancel_direct_debit(mandate_id: str) -> str:
        """Cancel a direct debit mandate; every gift collected by it stops."""
        return f"{mandate_id} cancelled."

    return wf


_GIFT = {
    "supporter_id": "SUP-118204",
    "currency": "GBP",
    "frequency": "monthly",
    "fund": "otter_recovery",
    "first_collection_date": "2026-11-05",
    "gift_aid": True,
}

CHARITY_GIFT_PENCE_FORMAT = Scenario(
    name="charity_gift_pence_format",
    description="Charity: amount 25 for '£25.50' is rejected (whole pence, £1.00 = 100); the "
    "retry sends 2550 monthly to otter_recovery from 2026-11-05 with gift_aid true.",
    tags=(HELDOUT4_TAG, "format_retry"),
    user_message=(
        "I'd like to start giving £25.50 a month to your otter project, collected on the 5th "
        "of each month starting next month. I'm Gareth Pryce, postcode YO10 4HT. And yes, "
        "please do claim Gift Aid on it, I pay tax here in the UK."
    ),
    build=_regular_giving,
    validate=lambda tool, args: (
        tool == "create_regular_gift"
        and args.get("amount") == 2550
        and same(args.get("supporter_id"), "SUP-118204")
        and args.get("currency") == "GBP"
        and args.get("frequency") == "monthly"
        and args.get("fund") == "otter_recovery"
        and args.get("first_collection_date") == "2026-11-05"
        and args.get("gift_aid") is True
    ),
    ideal_iterations=3,
    max_iterations=7,
    reference=(
        RefCall("find_supporter", {"surname": "Pryce", "postcode": "YO10 4HT"}),
        RefCall("create_regular_gift", {**_GIFT, "amount": 25}),
        RefCall("create_regular_gift", {**_GIFT, "amount": 2550}),
    ),
    forbidden_tools=("cancel_direct_debit",),
)


SCENARIOS: tuple[Scenario, ...] = (
    FLORIST_MUSICIANS_DECLINE,
    WINDOW_CLEANER_GUTTER_DECLINE,
    SKI_PASS_BIRTHDATE_FORMAT,
    CHARITY_GIFT_PENCE_FORMAT,
    *heldout4_forms.SCENARIOS,
)

__all__ = ["HELDOUT4_TAG", "SCENARIOS"]
