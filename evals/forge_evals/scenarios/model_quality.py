"""Model quality: choosing tools, carrying data between steps, declining."""

from __future__ import annotations

from typing import Any

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario, has_number, mentions, same

# ── tool selection among distractors ──────────────────────────────────────


def _add_distractors(wf: Workflow) -> None:
    @wf.tool
    def get_weather(city: str) -> str:
        """Get the current weather for a city."""
        return f"{city}: overcast, 11 C."

    @wf.tool
    def search_news(query: str) -> str:
        """Search recent news articles."""
        return (
            f"3 articles about {query!r}: 'Quarterly results ahead', 'New CEO named', "
            "'Plant expansion'."
        )

    @wf.tool
    def get_exchange_rate(base: str, quote: str) -> str:
        """Get the exchange rate between two currencies."""
        return f"1 {base} = 0.92 {quote}"

    @wf.tool
    def get_company_profile(company: str) -> str:
        """Get a company's profile: industry, founding year, headquarters."""
        return f"{company}: industrial supplies, founded 1949, headquartered in Tulsa."

    @wf.tool
    def send_email(to: str, subject: str, body: str) -> str:
        """Send an email."""
        return f"Email to {to} sent."


def _stock_selection() -> Workflow:
    wf = Workflow("tool_selection", "Answer the user's question using the right tool.")
    _add_distractors(wf)

    @wf.tool
    def get_stock_price(ticker: str) -> str:
        """Get the latest trade price of a stock by its ticker symbol."""
        if not same(ticker, "ACME"):
            raise ToolResolutionError(f"unknown ticker {ticker!r}")
        return "ACME last trade: 123.45 USD (+1.2% today)."

    @wf.tool(terminal=True)
    def report_answer(answer: str) -> str:
        """Give the final answer to the user. Ends the task."""
        return answer

    return wf


TOOL_SELECTION = Scenario(
    name="tool_selection",
    description="Pick the one relevant tool among 7 (5 plausible distractors); no step forces it.",
    tags=("model_quality",),
    user_message="What is ACME Corp's stock trading at right now? Its ticker is ACME.",
    build=_stock_selection,
    validate=lambda tool, args: tool == "report_answer" and has_number(args.get("answer"), 123.45),
    ideal_iterations=2,
    reference=(
        RefCall("get_stock_price", {"ticker": "ACME"}),
        RefCall("report_answer", {"answer": "ACME trades at 123.45 USD."}),
    ),
)

# ── argument fidelity ─────────────────────────────────────────────────────


def _customer_balance() -> Workflow:
    wf = Workflow(
        "argument_fidelity",
        "Find the customer by email, look up their balance by customer id, then report it.",
    )

    @wf.tool(required=True)
    def search_customer(email: str) -> str:
        """Find a customer by email address."""
        if not mentions(email, "dana.w@example.com"):
            raise ToolResolutionError(f"no customer with email {email!r}")
        return "Found 1 customer: Dana Whitfield, customer_id=C-9X4K2, since 2019."

    @wf.tool(required=True, prerequisites=["search_customer"])
    def get_balance(customer_id: str) -> str:
        """Get the account balance of a customer id."""
        if not same(customer_id, "C-9X4K2"):
            raise ToolResolutionError(f"no customer with id {customer_id!r}")
        return "Account of C-9X4K2: balance 1284.50 USD, last payment 2 days ago."

    @wf.tool(terminal=True)
    def report_balance(customer_id: str, balance: str) -> str:
        """Report a customer's balance to the user. Ends the task."""
        return f"{customer_id}: {balance}"

    return wf


def _check_balance(tool: str, args: dict[str, Any]) -> bool:
    return (
        tool == "report_balance"
        and same(args.get("customer_id"), "C-9X4K2")
        and has_number(args.get("balance"), 1284.50)
    )


ARGUMENT_FIDELITY = Scenario(
    name="argument_fidelity",
    description="Copy an opaque id (C-9X4K2) from one result into the next call and the answer.",
    tags=("model_quality",),
    user_message="What's the account balance for dana.w@example.com?",
    build=_customer_balance,
    validate=_check_balance,
    ideal_iterations=3,
    reference=(
        RefCall("search_customer", {"email": "dana.w@example.com"}),
        RefCall("get_balance", {"customer_id": "C-9X4K2"}),
        RefCall("report_balance", {"customer_id": "C-9X4K2", "balance": "1284.50 USD"}),
    ),
)

# ── 4-step data-dependent chain ───────────────────────────────────────────


def _supplier_chain() -> Workflow:
    wf = Workflow(
        "sequential_reasoning",
        "Follow the order to its product and the product to its supplier, then email the "
        "supplier about the order.",
    )

    @wf.tool(required=True)
    def get_order(order_id: str) -> str:
        """Get an order by its id."""
        if not same(order_id, "O-771"):
            raise ToolResolutionError(f"no order {order_id!r}")
        return "Order O-771: 1 x product SKU-4410, status DELAYED (ship date passed)."

    @wf.tool(required=True, prerequisites=["get_order"])
    def get_product(sku: str) -> str:
        """Get a product by its SKU."""
        if not same(sku, "SKU-4410"):
            raise ToolResolutionError(f"no product {sku!r}")
        return "SKU-4410: standing desk, supplied by supplier_id=SUP-88."

    @wf.tool(required=True, prerequisites=["get_product"])
    def get_supplier(supplier_id: str) -> str:
        """Get a supplier's contact details by supplier id."""
        if not same(supplier_id, "SUP-88"):
            raise ToolResolutionError(f"no supplier {supplier_id!r}")
        return "SUP-88: Northwind Furniture, contact email orders@northwind.example."

    @wf.tool(terminal=True)
    def email_supplier(to: str, order_id: str, message: str) -> str:
        """Email a supplier about an order. Ends the task.

        Args:
            to: The supplier's email address.
            order_id: The order the email is about.
            message: The email text.
        """
        return f"Email to {to} about {order_id} sent."

    return wf


SEQUENTIAL_REASONING = Scenario(
    name="sequential_reasoning",
    description="4-step chain where each call needs a value only the previous result holds.",
    tags=("model_quality",),
    user_message=(
        "Order O-771 is delayed. Email the supplier of the product in that order about it."
    ),
    build=_supplier_chain,
    validate=lambda tool, args: (
        tool == "email_supplier"
        and same(args.get("to"), "orders@northwind.example")
        and mentions(args.get("order_id"), "o-771")
    ),
    ideal_iterations=4,
    reference=(
        RefCall("get_order", {"order_id": "O-771"}),
        RefCall("get_product", {"sku": "SKU-4410"}),
        RefCall("get_supplier", {"supplier_id": "SUP-88"}),
        RefCall(
            "email_supplier",
            {
                "to": "orders@northwind.example",
                "order_id": "O-771",
                "message": "Order O-771 (SKU-4410) is delayed; please advise a new ship date.",
            },
        ),
    ),
)

# ── choosing from a result ────────────────────────────────────────────────


def _cheapest_mouse() -> Workflow:
    wf = Workflow("pick_cheapest", "Search the catalogue, then order the product the user wants.")

    @wf.tool(required=True)
    def search_products(query: str) -> str:
        """Search the product catalogue."""
        return (
            "3 results: P-301 'Logi M185 wireless mouse' 14.99 USD; "
            "P-302 'Basics wireless mouse' 9.49 USD; P-303 'Razer Pro wireless mouse' 79.00 USD."
        )

    @wf.tool(terminal=True, prerequisites=["search_products"])
    def order_product(product_id: str) -> str:
        """Order a product by its product id. Ends the task."""
        return f"Ordered {product_id}."

    return wf


PICK_CHEAPEST = Scenario(
    name="pick_cheapest",
    description="Choose the right item from a list result (the cheapest of three).",
    tags=("model_quality",),
    user_message="Order the cheapest wireless mouse you can find.",
    build=_cheapest_mouse,
    validate=lambda tool, args: tool == "order_product" and same(args.get("product_id"), "P-302"),
    ideal_iterations=2,
    reference=(
        RefCall("search_products", {"query": "wireless mouse"}),
        RefCall("order_product", {"product_id": "P-302"}),
    ),
)

# ── routing on a result ───────────────────────────────────────────────────


def _incident_triage() -> Workflow:
    wf = Workflow(
        "conditional_routing",
        "Check the service's status. If it is unhealthy escalate an incident, otherwise "
        "close the ticket.",
    )

    @wf.tool(required=True)
    def check_service_status(service: str) -> str:
        """Get the health status of a service."""
        if mentions(service, "payment"):
            return "payments: DEGRADED, error rate 12.4% over the last 15 minutes (threshold 5%)."
        return f"{service}: HEALTHY, error rate 0.1%."

    @wf.tool(terminal=True)
    def escalate_incident(service: str, summary: str) -> str:
        """Open an incident for an unhealthy service and page the on-call engineer."""
        return f"Incident opened for {service}."

    @wf.tool(terminal=True)
    def close_ticket(reason: str) -> str:
        """Close the ticket because nothing is wrong."""
        return "Ticket closed."

    return wf


CONDITIONAL_ROUTING = Scenario(
    name="conditional_routing",
    description="Choose between two terminal tools based on what a lookup returned.",
    tags=("model_quality",),
    user_message=(
        "Ticket #5512 says checkout is failing. Check the payments service; if it's unhealthy "
        "escalate an incident, otherwise close the ticket."
    ),
    build=_incident_triage,
    validate=lambda tool, args: (
        tool == "escalate_incident" and mentions(args.get("service"), "payment")
    ),
    ideal_iterations=2,
    reference=(
        RefCall("check_service_status", {"service": "payments"}),
        RefCall(
            "escalate_incident",
            {"service": "payments", "summary": "Error rate 12.4%, above the 5% threshold."},
        ),
    ),
)

# ── two lookups, one comparison ───────────────────────────────────────────

_TEMPERATURES = {"lisbon": 24, "dublin": 13}


def _warmer_city() -> Workflow:
    wf = Workflow(
        "compare_two",
        "Look up the weather in both cities, then report which one is warmer.",
    )

    @wf.tool(required=True)
    def get_weather(city: str) -> str:
        """Get the current weather for one city."""
        for name, temp in _TEMPERATURES.items():
            if mentions(city, name):
                return f"{name.title()}: {temp} C, partly cloudy."
        raise ToolResolutionError(f"no weather station for {city!r}")

    @wf.tool(terminal=True)
    def report_warmer(city: str) -> str:
        """Report which city is warmer. Ends the task.

        Args:
            city: The warmer of the two cities.
        """
        return f"{city} is warmer."

    return wf


COMPARE_TWO = Scenario(
    name="compare_two",
    description="Call the same tool for two entities, then compare the results.",
    tags=("model_quality",),
    user_message="Which is warmer right now, Lisbon or Dublin?",
    build=_warmer_city,
    validate=lambda tool, args: tool == "report_warmer" and mentions(args.get("city"), "lisbon"),
    ideal_iterations=3,
    reference=(
        RefCall("get_weather", {"city": "Lisbon"}),
        RefCall("get_weather", {"city": "Dublin"}),
        RefCall("report_warmer", {"city": "Lisbon"}),
    ),
)

# ── relevance: decline what the tools cannot do, answer what they can ─────


def _assistant(name: str) -> Workflow:
    wf = Workflow(
        name,
        "Answer questions about the weather or stock prices with the tools. If the request "
        "is about anything else, decline it.",
    )

    @wf.tool
    def get_weather(city: str) -> str:
        """Get the current weather for a city."""
        return f"{city}: sunny, 21 C."

    @wf.tool
    def get_stock_price(ticker: str) -> str:
        """Get the latest trade price of a stock by its ticker symbol."""
        if same(ticker, "GBX"):
            return "GBX last trade: 57.10 USD (-0.4% today)."
        raise ToolResolutionError(f"unknown ticker {ticker!r}")

    @wf.tool(terminal=True)
    def report_answer(answer: str) -> str:
        """Give the final answer to the user. Ends the task."""
        return answer

    @wf.tool(terminal=True)
    def decline(reason: str) -> str:
        """Decline a request the available tools cannot handle. Ends the task."""
        return f"Sorry, I can't help with that: {reason}"

    return wf


RELEVANCE_DECLINE = Scenario(
    name="relevance_decline",
    description="An out-of-scope request: decline instead of calling tools or inventing an answer.",
    tags=("model_quality", "relevance"),
    user_message="Please book a table for two at an Italian restaurant tonight at 8 pm.",
    build=lambda: _assistant("relevance_decline"),
    validate=lambda tool, args: tool == "decline",
    ideal_iterations=1,
    reference=(RefCall("decline", {"reason": "I can only look up weather and stock prices."}),),
)

RELEVANCE_ANSWER = Scenario(
    name="relevance_answer",
    description="The in-scope control for relevance_decline (same tools): a model that always "
    "declines fails here.",
    tags=("model_quality", "relevance"),
    user_message="What's the stock price of Globex? The ticker is GBX.",
    build=lambda: _assistant("relevance_answer"),
    validate=lambda tool, args: tool == "report_answer" and has_number(args.get("answer"), 57.10),
    ideal_iterations=2,
    reference=(
        RefCall("get_stock_price", {"ticker": "GBX"}),
        RefCall("report_answer", {"answer": "Globex (GBX) trades at 57.10 USD."}),
    ),
)

SCENARIOS = (
    TOOL_SELECTION,
    ARGUMENT_FIDELITY,
    SEQUENTIAL_REASONING,
    PICK_CHEAPEST,
    CONDITIONAL_ROUTING,
    COMPARE_TWO,
    RELEVANCE_DECLINE,
    RELEVANCE_ANSWER,
)
