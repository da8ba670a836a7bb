"""Result binding and number bounds (issue 12): a report copies what a tool
returned, and an integer cannot be longer than any number in the
conversation allows.

The model is a ScriptedBackend; tools run in an in-process executor.
"""

from __future__ import annotations

import json
from typing import Any

from forge_core.backends.scripted import ScriptedBackend, call
from forge_core.grammar import build_grammar
from forge_core.guardrails.binding import (
    bound_values,
    is_subject,
    labelled_values,
    numbers_of,
    result_values,
)
from forge_core.guardrails.value_pools import number_digits
from forge_core.loop import ToolErrorKind, ToolOutcome, run_workflow
from forge_core.messages import ToolCallInfo
from forge_core.workflow import RunOptions, ToolSpec, Workflow, validate_workflow
from tests.unit.test_choice_guardrails import accepts

WF = "binding"


def _tool(name: str, **props: dict[str, Any]) -> ToolSpec:
    return ToolSpec(
        name,
        f"The {name} tool",
        {"type": "object", "properties": props, "required": list(props)},
    )


LOOKUP = _tool("get_invoice", invoice_id={"type": "string"})
RATE = _tool("get_exchange_rate", base={"type": "string"}, quote={"type": "string"})
REPORT = _tool(
    "report_invoice",
    invoice_id={"type": "string"},
    total={"type": "string"},
    items={"type": "integer"},
    note={"type": "string"},
)
REPORT_RATE = _tool("report_rate", rate={"type": "string"})


# --------------------------------------------------------------------------- the rules


def test_a_label_gives_the_value_to_the_end_of_its_clause() -> None:
    text = "Invoice INV-000123: 3 items, total 418.20 EUR, status unpaid."
    assert labelled_values("total", text) == ["418.20 EUR"]
    assert labelled_values("status", text) == ["unpaid"]
    assert labelled_values("items", "Order O-1: items: 3; shipped") == ["3"]
    assert labelled_values("customer_id", "Found: customer_id=C-9X4K2, since 2019.") == ["C-9X4K2"]
    # A word inside another word is no label.
    assert labelled_values("total", "subtotals were 3 EUR") == []
    assert labelled_values("rate", "1 USD = 0.92 EUR") == []


def test_the_subject_is_the_end_of_a_lookup_tools_name() -> None:
    assert is_subject("rate", "get_exchange_rate")
    assert is_subject("exchange_rate", "get_exchange_rate")
    assert is_subject("weather", "getWeather")
    assert is_subject("orders", "list_orders")
    assert not is_subject("service", "list_services")
    # The tool's whole name is no lookup of it, nor is a middle word.
    assert not is_subject("weather", "weather")
    assert not is_subject("exchange", "get_exchange_rate")


def test_a_result_is_quoted_whole_or_by_clause() -> None:
    values = result_values("Oslo: light snow, -3 C, wind 20 km/h from the north.")
    assert values[0] == "Oslo: light snow, -3 C, wind 20 km/h from the north."
    assert "light snow, -3 C, wind 20 km/h from the north" in values
    assert "-3 C" in values and "Oslo" not in values
    assert numbers_of(["credit limit 3,000 EUR", "0.92"], integer=False) == [3000, 0.92]
    assert numbers_of(["0.92 or 12"], integer=True) == [12]


def test_a_label_beats_the_subject_and_failures_bind_nothing() -> None:
    results = [("get_balance", "Account of C-9: balance 1284.50 USD, last payment 2 days ago.")]
    assert bound_values("balance", {"type": "string"}, results) == ["1284.50 USD"]
    assert bound_values(
        "rate", {"type": "string"}, [("get_exchange_rate", "1 USD = 0.92 EUR")]
    ) == ["1 USD = 0.92 EUR"]
    assert bound_values(
        "rate", {"type": "number"}, [("get_exchange_rate", "1 USD = 0.92 EUR")]
    ) == [
        1,
        0.92,
    ]
    # Schemas with their own rule are left alone.
    for schema in (
        {"type": "string", "enum": ["a", "b"]},
        {"type": "string", "pattern": "^x$"},
        {"type": "string", "x-forge-grounded": True},
        {"type": "boolean"},
    ):
        assert bound_values("rate", schema, [("get_exchange_rate", "1 USD = 0.92 EUR")]) == []
    assert bound_values("rate", {"type": "string"}, []) == []


# --------------------------------------------------------------------------- the grammar


def test_a_bound_parameter_takes_only_its_values() -> None:
    bound: dict[str, list[Any]] = {
        "report_invoice.total": ["418.20 EUR"],
        "report_invoice.items": [3],
    }
    grammar = build_grammar([REPORT], bound=bound)
    assert grammar is not None
    assert accepts(grammar, "report-invoice-args-total", json.dumps("418.20 EUR"))
    assert not accepts(grammar, "report-invoice-args-total", json.dumps(":{"))
    assert accepts(grammar, "report-invoice-args-items", "3")
    assert not accepts(grammar, "report-invoice-args-items", "1000000000000000")
    # Unbound parameters stay free.
    assert accepts(grammar, "report-invoice-args-note", json.dumps("anything at all"))
    free = build_grammar([REPORT])
    assert free is not None and accepts(free, "report-invoice-args-total", json.dumps(":{"))


def test_number_digits_bound_integers() -> None:
    assert number_digits([]) == 3
    assert number_digits(["Book room A-19 for 14:00", "1 hour"]) == 3
    assert number_digits(["order 1234567"]) == 8
    grammar = build_grammar([REPORT], number_digits=3)
    assert grammar is not None
    assert accepts(grammar, "integer", "999") and accepts(grammar, "integer", "-60")
    assert not accepts(grammar, "integer", "1400")
    default = build_grammar([REPORT])
    assert default is not None and accepts(default, "integer", "1400000000000000")


# --------------------------------------------------------------------------- the loop


class Invoices:
    """get_invoice knows INV-1; a miss is a resolution error. Records calls."""

    def __init__(self) -> None:
        self.executed: list[str] = []

    async def execute(self, infos: list[ToolCallInfo], iteration: int) -> list[ToolOutcome]:
        out = []
        for c in infos:
            self.executed.append(c.name)
            if c.name == "get_invoice" and c.args["invoice_id"] != "INV-1":
                out.append(
                    ToolOutcome(
                        error="no invoice; total 5 EUR is a guess",
                        error_kind=ToolErrorKind.RESOLUTION,
                    )
                )
            elif c.name == "get_invoice":
                out.append(ToolOutcome(output="Invoice INV-1: 3 items, total 418.20 EUR, unpaid."))
            else:
                out.append(ToolOutcome(output="reported"))
        return out


def _workflow() -> Workflow:
    wf = Workflow(name=WF, tools=[LOOKUP, RATE, REPORT], terminal_tools=["report_invoice"])
    validate_workflow(wf)
    return wf


async def test_the_loop_binds_a_report_to_the_results_that_answered_it() -> None:
    backend = ScriptedBackend(
        scripts={
            WF: [
                call("get_invoice", invoice_id="INV-9"),
                call("get_invoice", invoice_id="INV-1"),
                call("report_invoice", invoice_id="INV-1", total="418.20 EUR", items=3, note="ok"),
            ]
        }
    )
    for binding in (True, False):
        await run_workflow(
            _workflow(),
            "What is the total of invoice INV-1?",
            backend=backend,
            executor=Invoices(),
            options=RunOptions(result_binding=binding),
        )
        first, after_miss, after_hit = list(backend.requests)[-3:]
        if not binding:
            assert after_hit.bound_values == {}
            continue
        # Nothing answered yet; a failed call's error binds nothing.
        assert first.bound_values == {} and after_miss.bound_values == {}
        # The terminal tool's labelled parameters are bound; the grounded id
        # keeps its own rule and unlabelled text stays free.
        assert after_hit.bound_values == {
            "report_invoice.total": ["418.20 EUR"],
            "report_invoice.items": [3],
        }


async def test_number_digits_follow_the_conversation() -> None:
    backend = ScriptedBackend(
        scripts={WF: [call("report_invoice", invoice_id="INV-1", total="1", items=1, note="x")]}
    )
    for bounds in (True, False):
        await run_workflow(
            _workflow(),
            "Report invoice INV-1234567.",
            backend=backend,
            executor=Invoices(),
            options=RunOptions(number_bounds=bounds),
        )
        assert backend.requests[-1].number_digits == (8 if bounds else 0)


def test_a_report_of_its_own_subject_takes_the_last_result() -> None:
    results = [("get_stock_price", "ACME last trade: 123.45 USD (+1.2% today).")]
    answer = bound_values("answer", {"type": "string"}, results, "report_answer")
    assert "ACME last trade: 123.45 USD (+1.2% today)" in answer
    # Not its subject: nothing binds `reason` of decline.
    assert bound_values("reason", {"type": "string"}, results, "decline") == []
    # A label still comes first.
    labelled = [("get_card", "Card 4417: credit limit 3,000 EUR, answer pending.")]
    assert bound_values("answer", {"type": "string"}, labelled, "report_answer") == ["pending"]


def test_a_total_is_the_sum_of_what_a_repeated_lookup_returned() -> None:
    offices = [
        ("get_open_tickets", "Berlin office: 14 open tickets."),
        ("get_open_tickets", "Paris office: 9 open tickets."),
        ("get_open_tickets", "Warsaw office: 23 open tickets."),
    ]
    total = {"type": "integer", "description": "The sum over all the offices."}
    assert bound_values("total", total, offices, "report_total") == [46]
    assert bound_values("cost", {"type": "number", "description": "Total cost"}, offices) == [46.0]
    # One lookup: nothing to add up; the report's own subject takes over.
    assert bound_values("total", total, offices[:1], "report_total") == [14]
    # Not a total, and results with several numbers each are not summed.
    assert bound_values("count", {"type": "integer"}, offices, "report_total") == []
    mixed = [("get_price", "A: 3 EUR, 2 left"), ("get_price", "B: 4 EUR, 1 left")]
    assert bound_values("total", total, mixed) == []
