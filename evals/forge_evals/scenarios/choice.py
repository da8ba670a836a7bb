"""Choice: the picks a small model gets wrong on its own.

Which id to pass on (one seen only in an earlier result, or one the user
wrote in a form easy to mangle), which of many tools to call (or none),
which of several look-alike actions is the one asked for, and which value an
argument's schema or description asks for.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, has_number, mentions, same

# ── grounded ids: an id only an earlier result holds ──────────────────────


def _subscription_lookup() -> Workflow:
    wf = Workflow(
        "grounded_id_2step",
        "Find the customer by email, look up their subscription by customer id, then report it.",
    )

    @wf.tool(required=True)
    def find_customer(email: str) -> str:
        """Find a customer by email address."""
        if not mentions(email, "lena.park@example.com"):
            raise ToolResolutionError(f"no customer with email {email!r}")
        return (
            "Found 1 customer: Lena Park (Park Design Studio), customer_id=CUS-58213, "
            "account manager AM-204, billing contact BC-7781, customer since 2021."
        )

    @wf.tool(required=True, prerequisites=["find_customer"])
    def get_subscription(customer_id: str) -> str:
        """Get the current subscription of a customer id."""
        if not same(customer_id, "CUS-58213"):
            raise ToolResolutionError(f"no customer with id {customer_id!r}")
        return "CUS-58213: plan Team Annual, 12 seats, renews on 2025-09-01, auto-renew on."

    @wf.tool(terminal=True)
    def report_subscription(customer_id: str, plan: str, renewal_date: str) -> str:
        """Report a customer's subscription to the user. Ends the task.

        Args:
            customer_id: The customer's id.
            plan: The subscription plan.
            renewal_date: When the subscription renews.
        """
        return f"{customer_id}: {plan}, renews {renewal_date}"

    return wf


def _check_subscription(tool: str, args: dict[str, Any]) -> bool:
    return (
        tool == "report_subscription"
        and same(args.get("customer_id"), "CUS-58213")
        and mentions(args.get("plan"), "team annual")
        and mentions(args.get("renewal_date"), "2025-09-01")
    )


GROUNDED_ID_2STEP = Scenario(
    name="grounded_id_2step",
    description="Pass on the customer id (CUS-58213) that only the email lookup returned, "
    "among other ids in the same result.",
    tags=("choice", "model_quality"),
    user_message="Which plan is lena.park@example.com on, and when does it renew?",
    build=_subscription_lookup,
    validate=_check_subscription,
    ideal_iterations=3,
    reference=(
        RefCall("find_customer", {"email": "lena.park@example.com"}),
        RefCall("get_subscription", {"customer_id": "CUS-58213"}),
        RefCall(
            "report_subscription",
            {"customer_id": "CUS-58213", "plan": "Team Annual", "renewal_date": "2025-09-01"},
        ),
    ),
)


def _laptop_warranty() -> Workflow:
    wf = Workflow(
        "grounded_id_3step",
        "Find the employee by email, then the laptop assigned to them, then that laptop's "
        "warranty, and report when the warranty expires.",
    )

    @wf.tool(required=True)
    def find_employee(email: str) -> str:
        """Find an employee by work email address."""
        if not mentions(email, "tomas.ruiz@example.com"):
            raise ToolResolutionError(f"no employee with email {email!r}")
        return (
            "Tomás Ruiz, employee_id=EMP-30417, department Finance (cost centre CC-112), "
            "office Madrid."
        )

    @wf.tool(required=True, prerequisites=["find_employee"])
    def get_assigned_laptop(employee_id: str) -> str:
        """Get the laptop assigned to an employee id."""
        if not same(employee_id, "EMP-30417"):
            raise ToolResolutionError(f"no employee with id {employee_id!r}")
        return "EMP-30417 has laptop asset_id=AST-88120 (ThinkPad T14 Gen 3, issued 2023-02-11)."

    @wf.tool(required=True, prerequisites=["get_assigned_laptop"])
    def get_warranty(asset_id: str) -> str:
        """Get the warranty of a hardware asset by its asset id."""
        if not same(asset_id, "AST-88120"):
            raise ToolResolutionError(f"no asset with id {asset_id!r}")
        return "AST-88120: 3-year on-site warranty, active, expires on 2026-02-10."

    @wf.tool(terminal=True)
    def report_warranty(asset_id: str, expires: str) -> str:
        """Report a laptop's warranty to the user. Ends the task.

        Args:
            asset_id: The laptop's asset id.
            expires: When the warranty expires.
        """
        return f"Warranty of {asset_id} expires {expires}."

    return wf


GROUNDED_ID_3STEP = Scenario(
    name="grounded_id_3step",
    description="Three lookups in a chain, each needing the id (EMP-30417, AST-88120) the "
    "previous result returned.",
    tags=("choice", "model_quality"),
    user_message="Is the laptop of tomas.ruiz@example.com still under warranty? Until when?",
    build=_laptop_warranty,
    validate=lambda tool, args: (
        tool == "report_warranty"
        and same(args.get("asset_id"), "AST-88120")
        and mentions(args.get("expires"), "2026-02-10")
    ),
    ideal_iterations=4,
    reference=(
        RefCall("find_employee", {"email": "tomas.ruiz@example.com"}),
        RefCall("get_assigned_laptop", {"employee_id": "EMP-30417"}),
        RefCall("get_warranty", {"asset_id": "AST-88120"}),
        RefCall("report_warranty", {"asset_id": "AST-88120", "expires": "2026-02-10"}),
    ),
)

# ── an id from the user's message, copied verbatim ────────────────────────

ROOM_ID = "A-19"


def _room_booking() -> Workflow:
    wf = Workflow(
        "verbatim_user_id",
        "Check that the meeting room is free, then book it for the user.",
    )

    @wf.tool(required=True)
    def check_room_availability(room_id: str, start_time: str) -> str:
        """Check whether a meeting room is free at a time today.

        Args:
            room_id: The room's id.
            start_time: The start time, e.g. 09:30.
        """
        if not same(room_id, ROOM_ID):
            raise ToolResolutionError(f"no meeting room {room_id!r}")
        return f"Room {ROOM_ID} (floor 3, 8 seats, video screen) is free from 13:00 to 17:00."

    @wf.tool(terminal=True, prerequisites=["check_room_availability"])
    def book_room(room_id: str, start_time: str, duration_minutes: int) -> str:
        """Book a meeting room for today. Ends the task.

        Args:
            room_id: The room's id.
            start_time: The start time, e.g. 09:30.
            duration_minutes: How long the booking lasts.
        """
        if not same(room_id, ROOM_ID):
            raise ToolResolutionError(f"no meeting room {room_id!r}")
        return f"Room {room_id} booked at {start_time} for {duration_minutes} minutes."

    return wf


def _check_room(tool: str, args: dict[str, Any]) -> bool:
    return (
        tool == "book_room"
        and same(args.get("room_id"), ROOM_ID)
        and mentions(args.get("start_time"), "14")
        and has_number(args.get("duration_minutes"), 60)
    )


VERBATIM_USER_ID = Scenario(
    name="verbatim_user_id",
    description="Copy a short id from the user's message as written (A-19, not 19 or 3).",
    tags=("choice", "model_quality"),
    user_message="Book meeting room A-19 on the 3rd floor for 14:00 today, for one hour.",
    build=_room_booking,
    validate=_check_room,
    ideal_iterations=2,
    reference=(
        RefCall("check_room_availability", {"room_id": ROOM_ID, "start_time": "14:00"}),
        RefCall("book_room", {"room_id": ROOM_ID, "start_time": "14:00", "duration_minutes": 60}),
    ),
)

# ── many tools, one answers ───────────────────────────────────────────────


def _add_assistant_tools(wf: Workflow) -> None:
    """21 everyday lookups in many domains; none knows road distances."""

    @wf.tool
    def get_weather(city: str) -> str:
        """Get the current weather for a city."""
        return f"{city}: sunny, 22 C, light wind."

    @wf.tool
    def get_local_time(city: str) -> str:
        """Get the current local time in a city."""
        return f"It is 14:05 in {city}."

    @wf.tool
    def get_train_times(origin: str, destination: str) -> str:
        """List today's train departures between two stations."""
        return f"Trains {origin} to {destination}: 09:04 (TGV 6171), 11:04, 13:04; 1 h 40 min."

    @wf.tool
    def search_flights(origin: str, destination: str, date: str) -> str:
        """Search flights between two cities on a date."""
        return f"No direct flights from {origin} to {destination} on {date}."

    @wf.tool
    def search_hotels(city: str, nights: int) -> str:
        """Search hotels in a city for a number of nights."""
        return f"3 hotels in {city} for {nights} nights, from 89 EUR a night."

    @wf.tool
    def find_restaurants(city: str, cuisine: str) -> str:
        """Find restaurants in a city serving a cuisine."""
        return f"2 {cuisine} restaurants in {city}: Chez Paul, Le Comptoir."

    @wf.tool
    def get_exchange_rate(base: str, quote: str) -> str:
        """Get the exchange rate between two currencies."""
        return f"1 {base} = 0.92 {quote}"

    @wf.tool
    def get_stock_price(ticker: str) -> str:
        """Get the latest trade price of a stock by its ticker symbol."""
        return f"{ticker} last trade: 48.10 USD."

    @wf.tool
    def search_news(query: str) -> str:
        """Search recent news articles."""
        return f"2 articles about {query!r}: 'Roadworks on the A7', 'New tram line opens'."

    @wf.tool
    def translate_text(text: str, target_language: str) -> str:
        """Translate text into another language."""
        return f"({target_language}) {text}"

    @wf.tool
    def define_word(word: str) -> str:
        """Look up the dictionary definition of a word."""
        return f"{word}: no definition found."

    @wf.tool
    def convert_units(value: float, from_unit: str, to_unit: str) -> str:
        """Convert a quantity from one unit to another (e.g. miles to km)."""
        return f"{value} {from_unit} is {round(value * 1.609, 2)} {to_unit}."

    @wf.tool
    def calculate(expression: str) -> str:
        """Evaluate an arithmetic expression."""
        return f"{expression} = 42"

    @wf.tool
    def track_package(tracking_number: str) -> str:
        """Get the delivery status of a parcel by its tracking number."""
        return f"Parcel {tracking_number}: in transit, expected tomorrow."

    @wf.tool
    def get_calendar_events(date: str) -> str:
        """List the events in the user's calendar on a date."""
        return f"{date}: 10:00 team stand-up, 15:00 dentist."

    @wf.tool
    def set_reminder(text: str, time: str) -> str:
        """Set a reminder at a time."""
        return f"Reminder set for {time}: {text}"

    @wf.tool
    def send_email(to: str, subject: str, body: str) -> str:
        """Send an email."""
        return f"Email to {to} sent."

    @wf.tool
    def get_sports_scores(team: str) -> str:
        """Get the latest match result of a sports team."""
        return f"{team} won 2-1 on Saturday."

    @wf.tool
    def get_movie_showtimes(city: str) -> str:
        """List today's cinema showtimes in a city."""
        return f"{city}: 'Dune: Part Two' at 18:30 and 21:15."

    @wf.tool
    def get_public_holidays(country: str, year: int) -> str:
        """List the public holidays of a country in a year."""
        return f"{country} has 11 public holidays in {year}."

    @wf.tool
    def get_air_quality(city: str) -> str:
        """Get the current air quality index of a city."""
        return f"{city}: AQI 38, good."


def _road_distance() -> Workflow:
    wf = Workflow("many_tools_select", "Answer the user's question using the right tool.")
    _add_assistant_tools(wf)

    @wf.tool
    def get_driving_distance(origin: str, destination: str) -> str:
        """Get the road distance and driving time between two places."""
        if mentions(origin, "lyon") and mentions(destination, "marseille"):
            return "Lyon to Marseille by road: 314 km, about 3 h 5 min via the A7."
        raise ToolResolutionError(f"no route from {origin!r} to {destination!r}")

    @wf.tool(terminal=True)
    def report_answer(answer: str) -> str:
        """Give the final answer to the user. Ends the task."""
        return answer

    return wf


MANY_TOOLS_SELECT = Scenario(
    name="many_tools_select",
    description="Pick the one tool that answers among 22 lookups in many domains (train "
    "times and unit conversion are near misses).",
    tags=("choice", "model_quality"),
    user_message="How far is it to drive from Lyon to Marseille?",
    build=_road_distance,
    validate=lambda tool, args: tool == "report_answer" and has_number(args.get("answer"), 314),
    ideal_iterations=2,
    reference=(
        RefCall("get_driving_distance", {"origin": "Lyon", "destination": "Marseille"}),
        RefCall("report_answer", {"answer": "It is 314 km by road, about 3 h 5 min."}),
    ),
)

# ── many look-alike tools: answer with the right one, or decline ──────────

CARD = "4417"


def _bank(name: str) -> Workflow:
    wf = Workflow(
        name,
        "You are a banking assistant with read-only tools. Answer the user's question with "
        "the right tool. If no tool can do what the user asks, decline.",
    )

    def card(card_ending: str) -> str:
        if not mentions(card_ending, CARD):
            raise ToolResolutionError(f"no card ending in {card_ending!r}")
        return f"Card ending {CARD}"

    @wf.tool
    def get_account_balance(account_id: str) -> str:
        """Get the current balance of a bank account."""
        return f"{account_id}: balance 2,310.75 EUR."

    @wf.tool
    def get_account_details(account_id: str) -> str:
        """Get a bank account's type, IBAN and opening date."""
        return f"{account_id}: checking account, IBAN DE44 5001 0517 5407 3249 31, opened 2016."

    @wf.tool
    def get_account_statement(account_id: str, month: str) -> str:
        """Get the monthly statement of a bank account."""
        return f"{account_id} statement for {month}: 41 transactions, closing 2,310.75 EUR."

    @wf.tool
    def get_account_transactions(account_id: str) -> str:
        """List the latest transactions of a bank account."""
        return f"{account_id}: -54.20 EUR grocery store, -1,050.00 EUR rent, +3,400.00 EUR salary."

    @wf.tool
    def get_overdraft_limit(account_id: str) -> str:
        """Get the arranged overdraft limit of a bank account."""
        return f"{account_id}: arranged overdraft 500.00 EUR."

    @wf.tool
    def get_savings_balance(account_id: str) -> str:
        """Get the balance of a savings account."""
        return f"{account_id}: savings balance 8,920.00 EUR."

    @wf.tool
    def get_savings_rate() -> str:
        """Get the current interest rate on savings accounts."""
        return "Savings accounts pay 2.25% a year."

    @wf.tool
    def get_loan_balance(loan_id: str) -> str:
        """Get the outstanding balance of a loan."""
        return f"{loan_id}: 11,480.00 EUR outstanding."

    @wf.tool
    def get_loan_schedule(loan_id: str) -> str:
        """Get the repayment schedule of a loan."""
        return f"{loan_id}: 38 monthly payments of 312.40 EUR left."

    @wf.tool
    def get_mortgage_rate() -> str:
        """Get the current mortgage interest rates."""
        return "10-year fixed 3.45%, 20-year fixed 3.80%."

    @wf.tool
    def get_card_balance(card_ending: str) -> str:
        """Get the current balance owed on a credit card.

        Args:
            card_ending: The last four digits of the card.
        """
        return f"{card(card_ending)}: current balance 1,275.40 EUR, statement due 2024-11-05."

    @wf.tool
    def get_card_limit(card_ending: str) -> str:
        """Get the credit limit of a credit card.

        Args:
            card_ending: The last four digits of the card.
        """
        return f"{card(card_ending)}: credit limit 3,000.00 EUR."

    @wf.tool
    def get_card_transactions(card_ending: str) -> str:
        """List the latest purchases on a credit card.

        Args:
            card_ending: The last four digits of the card.
        """
        return f"{card(card_ending)}: 89.99 EUR electronics, 42.10 EUR restaurant."

    @wf.tool
    def get_card_status(card_ending: str) -> str:
        """Get whether a card is active, frozen or expired.

        Args:
            card_ending: The last four digits of the card.
        """
        return f"{card(card_ending)}: active, expires 09/27."

    @wf.tool
    def get_card_rewards(card_ending: str) -> str:
        """Get the reward points collected on a credit card.

        Args:
            card_ending: The last four digits of the card.
        """
        return f"{card(card_ending)}: 4,120 reward points."

    @wf.tool
    def get_credit_score() -> str:
        """Get the user's current credit score."""
        return "Credit score: 742 (good)."

    @wf.tool
    def get_exchange_rate(base: str, quote: str) -> str:
        """Get the bank's exchange rate between two currencies."""
        return f"1 {base} = 1.08 {quote}"

    @wf.tool
    def get_direct_debits(account_id: str) -> str:
        """List the direct debits set up on a bank account."""
        return f"{account_id}: electricity 64.00 EUR monthly, gym 29.90 EUR monthly."

    @wf.tool
    def get_standing_orders(account_id: str) -> str:
        """List the standing orders of a bank account."""
        return f"{account_id}: rent 1,050.00 EUR on the 1st of each month."

    @wf.tool
    def get_saved_payees() -> str:
        """List the payees the user has saved."""
        return "Saved payees: Jonas Weber, City Utilities, Anna Weber."

    @wf.tool
    def get_branch_hours(city: str) -> str:
        """Get the opening hours of the bank's branches in a city."""
        return f"{city} branches: Mon-Fri 9:00-17:00."

    @wf.tool
    def find_atm(city: str) -> str:
        """Find the nearest cash machines in a city."""
        return f"2 ATMs in {city}: Hauptbahnhof, Marktplatz."

    @wf.tool(terminal=True)
    def report_answer(answer: str) -> str:
        """Give the final answer to the user. Ends the task."""
        return answer

    @wf.tool(terminal=True)
    def decline(reason: str) -> str:
        """Decline a request the available tools cannot handle. Ends the task."""
        return f"Sorry, I can't help with that: {reason}"

    return wf


MANY_TOOLS_SIMILAR = Scenario(
    name="many_tools_similar",
    description="Pick get_card_limit among 22 banking lookups with look-alike names "
    "(get_card_balance, get_overdraft_limit, ...).",
    tags=("choice", "model_quality", "relevance"),
    user_message=f"What's the credit limit on my card ending in {CARD}?",
    build=lambda: _bank("many_tools_similar"),
    validate=lambda tool, args: tool == "report_answer" and has_number(args.get("answer"), 3000),
    ideal_iterations=2,
    reference=(
        RefCall("get_card_limit", {"card_ending": CARD}),
        RefCall("report_answer", {"answer": f"The card ending {CARD} has a 3,000 EUR limit."}),
    ),
)

MANY_TOOLS_DECLINE = Scenario(
    name="many_tools_decline",
    description="The same 22 read-only banking tools, asked for a transfer none can make: "
    "decline (many_tools_similar is the in-scope control).",
    tags=("choice", "model_quality", "relevance"),
    user_message="Please transfer 200 euros from my checking account to my brother Jonas.",
    build=lambda: _bank("many_tools_decline"),
    validate=lambda tool, args: tool == "decline",
    ideal_iterations=1,
    reference=(RefCall("decline", {"reason": "I can only look up accounts, not move money."}),),
)

# ── recovering from a format error ───────────────────────────────────────

_INVOICE_ID = re.compile(r"^INV-\d{4}-\d{4}$")


def _invoice_status() -> Workflow:
    wf = Workflow(
        "format_error_recovery",
        "Look up the invoice, then report whether it is paid. If a tool rejects an argument, "
        "read the error and fix the argument.",
    )

    @wf.tool(required=True)
    def get_invoice(invoice_id: str) -> str:
        """Get an invoice by its id."""
        if not _INVOICE_ID.match(invoice_id.strip()):
            raise ValueError(
                f"malformed invoice id {invoice_id!r}: invoice ids look like INV-2023-0107 "
                "('INV-', the year, a dash, then the four-digit invoice number)"
            )
        if invoice_id.strip() != "INV-2024-0042":
            raise ToolResolutionError(f"no invoice {invoice_id}")
        return "Invoice INV-2024-0042: 312.00 EUR, issued 2024-05-03, status PAID on 2024-06-10."

    @wf.tool(terminal=True)
    def report_invoice_status(invoice_id: str, status: str) -> str:
        """Report whether an invoice is paid. Ends the task."""
        return f"{invoice_id}: {status}"

    return wf


FORMAT_ERROR_RECOVERY = Scenario(
    name="format_error_recovery",
    description="The tool rejects the invoice number as written (2024-0042) and names the id "
    "format; the fix (INV-2024-0042) keeps every part of it.",
    tags=("choice", "model_quality", "error_recovery"),
    user_message="A customer says they paid invoice 2024-0042 last month. Is it marked as paid?",
    build=_invoice_status,
    validate=lambda tool, args: (
        tool == "report_invoice_status"
        and same(args.get("invoice_id"), "INV-2024-0042")
        and mentions(args.get("status"), "paid")
        and not mentions(args.get("status"), "unpaid", "not paid")
    ),
    ideal_iterations=3,
    reference=(
        RefCall("get_invoice", {"invoice_id": "2024-0042"}),
        RefCall("get_invoice", {"invoice_id": "INV-2024-0042"}),
        RefCall("report_invoice_status", {"invoice_id": "INV-2024-0042", "status": "paid"}),
    ),
)

# ── "not found": try the other value the user gave, don't loop ────────────


def _booking_status() -> Workflow:
    wf = Workflow(
        "not_found_retry",
        "Look up the booking by its confirmation code, then report its status.",
    )

    @wf.tool(required=True)
    def lookup_booking(confirmation_code: str) -> str:
        """Look up a flight booking by its six-character confirmation code."""
        if not same(confirmation_code, "K7XQ2N"):
            raise ToolResolutionError(f"no booking with confirmation code {confirmation_code!r}")
        return (
            "Booking K7XQ2N: Lisbon to Amsterdam, flight TP 668 on 2024-10-12 at 06:55, "
            "status CONFIRMED, seat 23A."
        )

    @wf.tool(terminal=True)
    def report_booking(confirmation_code: str, status: str) -> str:
        """Report a booking's status to the user. Ends the task."""
        return f"{confirmation_code}: {status}"

    return wf


NOT_FOUND_RETRY = Scenario(
    name="not_found_retry",
    description="The first of two codes the user gave finds nothing; try the second instead "
    "of repeating or inventing one (a loop ends at max_iterations and fails).",
    tags=("choice", "model_quality", "error_recovery"),
    user_message=(
        "What's the status of my flight booking? The confirmation code is K7XQ2M, or maybe "
        "K7XQ2N, the last letter is smudged."
    ),
    build=_booking_status,
    validate=lambda tool, args: (
        tool == "report_booking"
        and same(args.get("confirmation_code"), "K7XQ2N")
        and mentions(args.get("status"), "confirmed")
    ),
    ideal_iterations=3,
    max_iterations=6,
    reference=(
        RefCall("lookup_booking", {"confirmation_code": "K7XQ2M"}),
        RefCall("lookup_booking", {"confirmation_code": "K7XQ2N"}),
        RefCall("report_booking", {"confirmation_code": "K7XQ2N", "status": "confirmed"}),
    ),
)

# ── the action asked for, not a destructive look-alike ────────────────────


def _service_ops() -> Workflow:
    wf = Workflow(
        "destructive_tool_choice",
        "Carry out the operation the user asks for on the service. Every operation ends the task.",
    )

    @wf.tool
    def list_services() -> str:
        """List the services running in the cluster."""
        return "Services: checkout-api (3 replicas), search-indexer (2 replicas), mailer (1)."

    @wf.tool
    def get_service_status(service: str) -> str:
        """Get the health status of a service."""
        if mentions(service, "search-indexer"):
            return "search-indexer: STALLED, no progress for 47 minutes, 2/2 replicas running."
        return f"{service}: HEALTHY."

    @wf.tool
    def get_service_logs(service: str) -> str:
        """Get the latest log lines of a service."""
        return f"{service}: 'waiting for lock on segment 1182' (repeated 940 times)."

    @wf.tool(terminal=True)
    def restart_service(service: str) -> str:
        """Restart a service's running replicas. Ends the task."""
        return f"{service} restarted."

    @wf.tool(terminal=True)
    def scale_service(service: str, replicas: int) -> str:
        """Change the number of replicas a service runs. Ends the task."""
        return f"{service} scaled to {replicas} replicas."

    @wf.tool(terminal=True, destructive=True)
    def delete_service(service: str) -> str:
        """Delete a service and its deployment permanently. Ends the task."""
        return f"{service} deleted."

    return wf


DESTRUCTIVE_TOOL_CHOICE = Scenario(
    name="destructive_tool_choice",
    description="Restart a stuck service; delete_service and scale_service are offered too, "
    "and calling either ends the run wrong.",
    tags=("choice", "model_quality"),
    user_message="The search-indexer service is stuck. Please restart it.",
    build=_service_ops,
    validate=lambda tool, args: (
        tool == "restart_service" and same(args.get("service"), "search-indexer")
    ),
    ideal_iterations=1,
    reference=(RefCall("restart_service", {"service": "search-indexer"}),),
)

# ── three lookups, one total ──────────────────────────────────────────────

_OPEN_TICKETS = {"berlin": 14, "paris": 9, "warsaw": 23}


def _ticket_total() -> Workflow:
    wf = Workflow(
        "aggregate_three",
        "Look up the open tickets of each office the user names, then report the total.",
    )

    @wf.tool(required=True)
    def get_open_tickets(office: str) -> str:
        """Get the number of open support tickets of one office."""
        named = [name for name in _OPEN_TICKETS if mentions(office, name)]
        if len(named) > 1:
            raise ValueError(f"{office!r} names {len(named)} offices; ask for one office per call")
        if not named:
            raise ToolResolutionError(f"no office {office!r}")
        return f"{named[0].title()} office: {_OPEN_TICKETS[named[0]]} open tickets."

    @wf.tool(terminal=True)
    def report_total(total: int) -> str:
        """Report the total number of open tickets. Ends the task.

        Args:
            total: The sum over all the offices asked about.
        """
        return f"{total} open tickets in total."

    return wf


AGGREGATE_THREE = Scenario(
    name="aggregate_three",
    description="Call one tool for each of three offices, then report the sum (14 + 9 + 23).",
    tags=("choice", "model_quality"),
    user_message=(
        "How many open support tickets do the Berlin, Paris and Warsaw offices have in total?"
    ),
    build=_ticket_total,
    validate=lambda tool, args: tool == "report_total" and has_number(args.get("total"), 46),
    ideal_iterations=4,
    reference=(
        RefCall("get_open_tickets", {"office": "Berlin"}),
        RefCall("get_open_tickets", {"office": "Paris"}),
        RefCall("get_open_tickets", {"office": "Warsaw"}),
        RefCall("report_total", {"total": 46}),
    ),
)

# ── argument values the schema dictates ───────────────────────────────────


def _temperature_unit() -> Workflow:
    wf = Workflow(
        "enum_argument",
        "Look up the temperature in the unit the user wants, then report it.",
    )

    @wf.tool(required=True)
    def get_temperature(city: str, unit: Literal["celsius", "fahrenheit"]) -> str:
        """Get the current temperature of a city.

        Args:
            city: The city.
            unit: The temperature scale of the answer.
        """
        if not mentions(city, "chicago"):
            raise ToolResolutionError(f"no weather station for {city!r}")
        return "Chicago: 41 F, overcast." if unit == "fahrenheit" else "Chicago: 5 C, overcast."

    @wf.tool(terminal=True)
    def report_temperature(city: str, temperature: str) -> str:
        """Report the temperature to the user. Ends the task."""
        return f"{city}: {temperature}"

    return wf


ENUM_ARGUMENT = Scenario(
    name="enum_argument",
    description="The user writes °F; the unit parameter only takes 'celsius' or 'fahrenheit'.",
    tags=("choice", "model_quality"),
    user_message="How cold is it in Chicago right now, in °F?",
    build=_temperature_unit,
    validate=lambda tool, args: (
        tool == "report_temperature" and has_number(args.get("temperature"), 41)
    ),
    ideal_iterations=2,
    reference=(
        RefCall("get_temperature", {"city": "Chicago", "unit": "fahrenheit"}),
        RefCall("report_temperature", {"city": "Chicago", "temperature": "41 F"}),
    ),
)

_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _iso_date(date: str) -> str:
    if not _ISO_DATE.match(date.strip()):
        raise ValueError(f"invalid date {date!r}: write it as YYYY-MM-DD, e.g. 2025-01-31")
    return date.strip()


def _calendar_entry() -> Workflow:
    wf = Workflow(
        "format_argument",
        "Check the user's calendar on the day, then add the event.",
    )

    @wf.tool(required=True)
    def check_calendar(date: str) -> str:
        """List the events already in the user's calendar on a day.

        Args:
            date: The day, as YYYY-MM-DD (e.g. 2025-01-31).
        """
        day = _iso_date(date)
        if day == "2025-03-14":
            return "2025-03-14 (Friday): no events, the whole day is free."
        return f"{day}: 09:00 weekly planning."

    @wf.tool(terminal=True, prerequisites=["check_calendar"])
    def add_calendar_event(title: str, date: str, all_day: bool) -> str:
        """Add an event to the user's calendar. Ends the task.

        Args:
            title: The event's title.
            date: The day, as YYYY-MM-DD (e.g. 2025-01-31).
            all_day: Whether the event lasts the whole day.
        """
        return f"Added {title!r} on {_iso_date(date)}."

    return wf


FORMAT_ARGUMENT = Scenario(
    name="format_argument",
    description="The user writes '14 March 2025'; the date parameters' descriptions ask for "
    "YYYY-MM-DD.",
    tags=("choice", "model_quality"),
    user_message="Put the team offsite in my calendar for Friday 14 March 2025, all day.",
    build=_calendar_entry,
    validate=lambda tool, args: (
        tool == "add_calendar_event"
        and same(args.get("date"), "2025-03-14")
        and mentions(args.get("title"), "offsite")
    ),
    ideal_iterations=2,
    reference=(
        RefCall("check_calendar", {"date": "2025-03-14"}),
        RefCall(
            "add_calendar_event", {"title": "Team offsite", "date": "2025-03-14", "all_day": True}
        ),
    ),
)

SCENARIOS = (
    GROUNDED_ID_2STEP,
    GROUNDED_ID_3STEP,
    VERBATIM_USER_ID,
    MANY_TOOLS_SELECT,
    MANY_TOOLS_SIMILAR,
    MANY_TOOLS_DECLINE,
    FORMAT_ERROR_RECOVERY,
    NOT_FOUND_RETRY,
    DESTRUCTIVE_TOOL_CHOICE,
    AGGREGATE_THREE,
    ENUM_ARGUMENT,
    FORMAT_ARGUMENT,
)
