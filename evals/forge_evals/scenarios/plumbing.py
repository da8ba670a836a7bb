"""Plumbing: can the model get through a fixed sequence of steps at all?"""

from __future__ import annotations

import re
from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, has_number, mentions, same


def _weather_2step() -> Workflow:
    wf = Workflow("basic_2step", "Look up the current weather for the city, then report it.")

    @wf.tool(required=True)
    def get_weather(city: str) -> str:
        """Get the current weather for a city."""
        if mentions(city, "oslo"):
            return "Oslo: light snow, -3 C, wind 20 km/h from the north."
        return f"{city}: clear sky, 18 C."

    @wf.tool(terminal=True)
    def report_weather(city: str, weather: str) -> str:
        """Report the weather to the user. Ends the task.

        Args:
            city: The city the report is about.
            weather: The weather as get_weather described it.
        """
        return f"Weather in {city}: {weather}"

    return wf


def _check_2step(tool: str, args: dict[str, Any]) -> bool:
    return (
        tool == "report_weather"
        and mentions(args.get("city"), "oslo")
        and mentions(args.get("weather"), "snow", "-3")
    )


BASIC_2STEP = Scenario(
    name="basic_2step",
    description="One required lookup, then the terminal tool: does the model call tools at all?",
    tags=("plumbing",),
    user_message="What's the weather in Oslo right now?",
    build=_weather_2step,
    validate=_check_2step,
    ideal_iterations=2,
    reference=(
        RefCall("get_weather", {"city": "Oslo"}),
        RefCall("report_weather", {"city": "Oslo", "weather": "light snow, -3 C"}),
    ),
)


def _flight_3step() -> Workflow:
    wf = Workflow(
        "sequential_3step",
        "Find the flight, book a seat on it, then send the user the booking confirmation.",
    )

    @wf.tool(required=True)
    def find_flight(origin: str, destination: str) -> str:
        """Find the next morning flight between two cities."""
        return f"Flight FL-2207 from {origin} to {destination} departs 09:40, seats available."

    @wf.tool(required=True, prerequisites=["find_flight"])
    def book_seat(flight_id: str) -> str:
        """Book a seat on a flight by its flight id (e.g. FL-1234)."""
        if not same(flight_id, "FL-2207"):
            raise ToolResolutionError(f"no flight {flight_id!r}; use the id find_flight returned")
        return "Seat 14C on FL-2207 is booked. Booking reference: BK-5531."

    @wf.tool(terminal=True)
    def send_confirmation(booking_reference: str) -> str:
        """Send the booking confirmation to the user. Ends the task."""
        return f"Confirmation for {booking_reference} sent."

    return wf


SEQUENTIAL_3STEP = Scenario(
    name="sequential_3step",
    description="Two required steps in order (a prerequisite), the second using the first's id.",
    tags=("plumbing",),
    user_message=(
        "Book me a seat on the morning flight from Boston to Denver and send me the confirmation."
    ),
    build=_flight_3step,
    validate=lambda tool, args: (
        tool == "send_confirmation" and mentions(args.get("booking_reference"), "bk-5531")
    ),
    ideal_iterations=3,
    reference=(
        RefCall("find_flight", {"origin": "Boston", "destination": "Denver"}),
        RefCall("book_seat", {"flight_id": "FL-2207"}),
        RefCall("send_confirmation", {"booking_reference": "BK-5531"}),
    ),
)


def _rate_with_outage() -> Workflow:
    wf = Workflow(
        "error_recovery",
        "Get the USD to EUR exchange rate, then report it. Tools can fail; if one does, "
        "read the error and try again.",
    )
    attempts = [0]

    @wf.tool(required=True)
    def get_exchange_rate(base: str, quote: str) -> str:
        """Get the exchange rate between two currencies (ISO codes such as USD)."""
        attempts[0] += 1
        if attempts[0] == 1:
            raise RuntimeError("rate service timed out; please try the same request again")
        return f"1 {base.upper()} = 0.92 {quote.upper()}"

    @wf.tool(terminal=True)
    def report_rate(rate: str) -> str:
        """Report the exchange rate to the user. Ends the task."""
        return f"The rate is {rate}."

    return wf


ERROR_RECOVERY = Scenario(
    name="error_recovery",
    description="The first lookup fails with a transient error; the model has to call it again.",
    tags=("plumbing", "error_recovery"),
    user_message="What's the exchange rate from US dollars to euros today?",
    build=_rate_with_outage,
    validate=lambda tool, args: tool == "report_rate" and has_number(args.get("rate"), 0.92),
    ideal_iterations=3,
    reference=(
        RefCall("get_exchange_rate", {"base": "USD", "quote": "EUR"}),
        RefCall("get_exchange_rate", {"base": "USD", "quote": "EUR"}),
        RefCall("report_rate", {"rate": "1 USD = 0.92 EUR"}),
    ),
)


_INVOICE_ID = re.compile(r"^INV-\d{6}$")


def _invoice_format() -> Workflow:
    wf = Workflow(
        "error_recovery_format",
        "Look up the invoice, then report its total. If a tool rejects an argument, "
        "read the error and fix the argument.",
    )

    @wf.tool(required=True)
    def get_invoice(invoice_id: str) -> str:
        """Get an invoice by its id."""
        if not _INVOICE_ID.match(invoice_id.strip()):
            raise ValueError(
                f"malformed invoice id {invoice_id!r}: invoice ids are 'INV-' followed by "
                "six digits, e.g. invoice 42 is INV-000042"
            )
        if invoice_id.strip() != "INV-000123":
            raise ToolResolutionError(f"no invoice {invoice_id}")
        return "Invoice INV-000123: 3 items, total 418.20 EUR, status unpaid."

    @wf.tool(terminal=True)
    def report_invoice(invoice_id: str, total: str) -> str:
        """Report an invoice's total to the user. Ends the task."""
        return f"{invoice_id}: {total}"

    return wf


ERROR_RECOVERY_FORMAT = Scenario(
    name="error_recovery_format",
    description="The tool rejects the id as the user wrote it; the error says the right format.",
    tags=("plumbing", "error_recovery"),
    user_message="What is the total of invoice number 123?",
    build=_invoice_format,
    validate=lambda tool, args: tool == "report_invoice" and has_number(args.get("total"), 418.20),
    ideal_iterations=3,
    reference=(
        RefCall("get_invoice", {"invoice_id": "123"}),
        RefCall("get_invoice", {"invoice_id": "INV-000123"}),
        RefCall("report_invoice", {"invoice_id": "INV-000123", "total": "418.20 EUR"}),
    ),
)

SCENARIOS = (BASIC_2STEP, SEQUENTIAL_3STEP, ERROR_RECOVERY, ERROR_RECOVERY_FORMAT)
