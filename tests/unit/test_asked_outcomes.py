"""The outcome the user asked for, and values copied from the schema
(issue 12): before any tool returned, only the terminal tools the request
names; a free string cannot be a schema example or a name with a number.

The model is a ScriptedBackend; tools run in an in-process executor.
"""

from __future__ import annotations

import json
from typing import Any

from forge_core.backends.scripted import ScriptedBackend, call
from forge_core.grammar import build_grammar
from forge_core.guardrails.grounding import schema_examples
from forge_core.guardrails.relevance import asked_among
from forge_core.loop import ToolErrorKind, ToolOutcome, run_workflow
from forge_core.messages import ToolCallInfo
from forge_core.workflow import RunOptions, ToolSpec, Workflow, validate_workflow
from tests.unit.test_choice_guardrails import accepts

WF = "ops"


def _tool(name: str, description: str, **props: dict[str, Any]) -> ToolSpec:
    return ToolSpec(
        name, description, {"type": "object", "properties": props, "required": list(props)}
    )


SERVICE = {"service": {"type": "string"}}
STATUS = _tool("get_status", "Get the health status of a service.", **SERVICE)
RESTART = _tool("restart_service", "Restart a service's running replicas.", **SERVICE)
SCALE = _tool(
    "scale_service",
    "Change the number of replicas a service runs.",
    service={"type": "string"},
    replicas={"type": "integer"},
)
DELETE = _tool("delete_service", "Delete a service and its deployment permanently.", **SERVICE)
ALL = {"get_status", "restart_service", "scale_service", "delete_service"}


def test_a_request_asks_for_the_outcome_it_names_alone() -> None:
    outcomes = [RESTART, SCALE, DELETE]
    assert asked_among(outcomes, "The indexer is stuck. Please restart it.") == {"restart_service"}
    # "replicas" is shared by restart and scale: it names neither alone.
    assert asked_among(outcomes, "How many replicas run?") == set()
    assert asked_among(outcomes, "Restart it, or scale it down") == {
        "restart_service",
        "scale_service",
    }
    assert asked_among(outcomes, "Book a table for two") == set()
    assert asked_among([RESTART], "restart it") == set()


class Ops:
    async def execute(self, infos: list[ToolCallInfo], iteration: int) -> list[ToolOutcome]:
        return [ToolOutcome(output=f"{c.name}: ok") for c in infos]


def _ops() -> Workflow:
    wf = Workflow(
        name=WF,
        tools=[STATUS, RESTART, SCALE, DELETE],
        terminal_tools=["restart_service", "scale_service", "delete_service"],
    )
    validate_workflow(wf)
    return wf


async def test_before_any_result_only_the_asked_for_outcome_is_offered() -> None:
    backend = ScriptedBackend(
        scripts={
            WF: [
                call("get_status", service="indexer"),
                call("restart_service", service="indexer"),
            ]
        }
    )
    for relevance in (True, False):
        await run_workflow(
            _ops(),
            "The indexer is stuck. Please restart it.",
            backend=backend,
            executor=Ops(),
            options=RunOptions(tool_relevance=relevance),
        )
        first, second = list(backend.requests)[-2:]
        if not relevance:
            assert set(first.allowed) == ALL
            continue
        assert set(first.allowed) == {"get_status", "restart_service"}
        # Once a tool has returned, its result may call for another outcome.
        assert set(second.allowed) == ALL


async def test_a_request_that_names_no_outcome_narrows_nothing() -> None:
    backend = ScriptedBackend(scripts={WF: [call("restart_service", service="indexer")]})
    await run_workflow(
        _ops(), "Something is wrong with the indexer.", backend=backend, executor=Ops()
    )
    assert set(backend.requests[0].allowed) == ALL


def test_schema_examples_with_digits() -> None:
    assert schema_examples({"description": "The start time, e.g. 09:30."}) == ["09:30"]
    assert schema_examples({"description": "As YYYY-MM-DD (e.g. 2025-01-31)."}) == ["2025-01-31"]
    assert schema_examples({"description": "ids like INV-7", "examples": ["INV-8"]}) == [
        "INV-8",
        "INV-7",
    ]
    # A word may be a real value; it is not an example to avoid.
    assert schema_examples({"description": "a fruit such as apples"}) == []


def test_a_free_string_is_no_unseen_example_and_no_numbered_name() -> None:
    booking = _tool(
        "book_room",
        "Book a room.",
        start_time={"type": "string", "description": "The start time, e.g. 09:30."},
    )
    rule = "book-room-args-start-time"
    grammar = build_grammar(
        [booking, STATUS], grounded=[], unseen_examples={"book_room.start_time": ["09:30"]}
    )
    assert grammar is not None
    assert not accepts(grammar, rule, json.dumps("09:30"))
    assert accepts(grammar, rule, json.dumps("14:00"))
    assert not accepts(grammar, rule, json.dumps("09:30 "))
    assert accepts(grammar, rule, json.dumps("09:35"))
    status = "get-status-args-service"
    for invented in ("service1", "service12", "service_name", "get_status"):
        assert not accepts(grammar, status, json.dumps(invented))
    assert accepts(grammar, status, json.dumps("payments"))
    # Grounding off: the schema's own values are allowed again.
    free = build_grammar([booking, STATUS])
    assert free is not None
    assert accepts(free, rule, json.dumps("09:30")) and accepts(
        free, status, json.dumps("service1")
    )


async def test_the_loop_leaves_out_only_examples_the_conversation_lacks() -> None:
    booking = _tool(
        "book_room",
        "Book a room.",
        start_time={"type": "string", "description": "The start time, e.g. 09:30."},
    )
    wf = Workflow(name="rooms", tools=[booking], terminal_tools=["book_room"])
    validate_workflow(wf)
    backend = ScriptedBackend(scripts={"rooms": [call("book_room", start_time="14:00")]})
    await run_workflow(wf, "Book it for 14:00.", backend=backend, executor=Ops())
    assert backend.requests[-1].unseen_examples == {"book_room.start_time": ["09:30"]}
    await run_workflow(wf, "Book it for 09:30.", backend=backend, executor=Ops())
    assert backend.requests[-1].unseen_examples == {}
    await run_workflow(
        wf, "Book it.", backend=backend, executor=Ops(), options=RunOptions(grounding=False)
    )
    assert backend.requests[-1].unseen_examples == {}


def test_named_values_are_what_the_conversation_calls_by_the_noun() -> None:
    from forge_core.guardrails.grounding import named_values

    assert named_values("service", ["Check the payments service; if unhealthy, escalate"]) == [
        "payments"
    ]
    assert named_values("office", ["Do the Berlin, Paris and Warsaw offices have tickets?"]) == [
        "Berlin",
        "Paris",
        "Warsaw",
    ]
    # An identifier after the noun names it exactly; a determiner names nothing.
    assert named_values("room", ["Book meeting room A-19"]) == ["A-19"]
    assert named_values("service_name", ["Restart the service now"]) == []
    assert named_values("city", ["What's the weather in Oslo?"]) == []
    # A word of the schema's names makes a compound noun, not a value.
    assert named_values("rate", ["the exchange rate today"], {"get", "exchange", "rate"}) == []
    assert named_values("rate", ["the exchange rate today"]) == ["exchange"]
    # Compound names have no single noun.
    assert named_values("start_time", ["at the start time 14:00"]) == []


async def test_a_named_value_is_the_only_value_a_free_string_takes() -> None:
    backend = ScriptedBackend(scripts={WF: [call("restart_service", service="payments")]})
    for grounding in (True, False):
        await run_workflow(
            _ops(),
            "The payments service is stuck.",
            backend=backend,
            executor=Ops(),
            options=RunOptions(grounding=grounding),
        )
        request = backend.requests[-1]
        assert request.named_values.get("get_status.service") == (
            ["payments"] if grounding else None
        )
    grammar = build_grammar(
        [STATUS], grounded=[], named_values={"get_status.service": ["payments"]}
    )
    assert grammar is not None
    assert accepts(grammar, "get-status-args-service", json.dumps("payments"))
    assert not accepts(grammar, "get-status-args-service", json.dumps("checkout"))


# --------------------------------------------------------------------------- relevance


def test_a_look_alike_far_below_the_best_tool_is_left_out() -> None:
    from forge_core.guardrails.relevance import DOMINANCE, relevant, scores
    from tests.unit.test_choice_guardrails import simple_tool

    cards = [
        simple_tool("get_card_limit", "Get the credit limit of a card.", "card"),
        simple_tool("get_card_balance", "Get the balance of a card.", "card"),
        simple_tool("get_card_status", "Get whether a card is active.", "card"),
        simple_tool("get_branch_hours", "Get a branch's opening hours.", "city"),
    ]
    query = "What's the credit limit on my card?"
    ranked = scores(cards, query)
    assert ranked["get_card_balance"] < DOMINANCE * ranked["get_card_limit"]
    assert relevant(cards, query) == ["get_card_limit"]
    # Near ties keep both.
    both = relevant(cards, "card balance and card status")
    assert both is not None and {"get_card_balance", "get_card_status"} <= set(both)


async def test_relevance_follows_the_request_not_the_last_results_words() -> None:
    from tests.unit.test_choice_guardrails import MANY, SUBMIT, simple_tool

    class Quotes:
        async def execute(self, infos: list[ToolCallInfo], iteration: int) -> list[ToolOutcome]:
            return [
                ToolOutcome(output="ACME last trade: 123.45 USD; see also search_news")
                for _ in infos
            ]

    del simple_tool
    wf = Workflow(name="quotes", tools=MANY, terminal_tools=[SUBMIT.name])
    validate_workflow(wf)
    backend = ScriptedBackend(
        scripts={"quotes": [call("get_stock_price", ticker="ACME"), call("submit", answer="x")]}
    )
    await run_workflow(wf, "What is ACME's stock price?", backend=backend, executor=Quotes())
    second = backend.requests[-1]
    # "USD" in the result does not bring in the exchange rate; a tool the
    # result names by its name does come in.
    assert "get_exchange_rate" not in second.allowed
    assert {"get_stock_price", "search_news", "submit"} <= set(second.allowed)


# --------------------------------------------------------------------------- finishing too early


async def test_a_terminal_call_refused_as_premature_waits_for_progress() -> None:
    inspect = _tool("inspect_section", "Inspect one section.", section={"type": "string"})
    close = _tool("close_audit", "Close the audit.", audit_id={"type": "string"})

    class Audit:
        def __init__(self) -> None:
            self.inspected = 0

        async def execute(self, infos: list[ToolCallInfo], iteration: int) -> list[ToolOutcome]:
            out = []
            for c in infos:
                if c.name == "inspect_section":
                    self.inspected += 1
                    out.append(ToolOutcome(output=f"section {c.args['section']} done"))
                elif self.inspected < 2:
                    out.append(
                        ToolOutcome(
                            error="section S2 is not inspected yet",
                            error_kind=ToolErrorKind.HARD,
                        )
                    )
                else:
                    out.append(ToolOutcome(output="closed"))
            return out

    wf = Workflow(name="audit", tools=[inspect, close], terminal_tools=["close_audit"])
    validate_workflow(wf)
    script = [
        call("inspect_section", section="S1"),
        call("close_audit", audit_id="A-19"),
        call("inspect_section", section="S2"),
        call("close_audit", audit_id="A-19"),
    ]
    for breaking in (True, False):
        backend = ScriptedBackend(scripts={"audit": script})
        result = await run_workflow(
            wf,
            "Audit A-19.",
            backend=backend,
            executor=Audit(),
            options=RunOptions(loop_breaking=breaking),
        )
        assert result.terminal_tool == "close_audit"
        after_refusal, after_progress = backend.requests[2], backend.requests[3]
        if breaking:
            assert after_refusal.allowed == ["inspect_section"]
            assert "close_audit" in after_progress.allowed
            # The refusal named no value: A-19 is still a good answer.
            assert after_refusal.excluded_calls == []
        else:
            assert "close_audit" in after_refusal.allowed


def test_values_shaped_like_the_schema_example() -> None:
    from forge_core.guardrails.grounding import example_shape, shaped_values

    schema = {"type": "string", "description": "The start time, e.g. 09:30."}
    assert shaped_values(schema, ["Book it for 14:00 today", "free from 13:00 to 17:00"]) == [
        "14:00",
        "13:00",
        "17:00",
    ]
    assert shaped_values({"description": "e.g. S1"}, ["First: S1. Next: S12; not XS3"]) == [
        "S1",
        "S12",
    ]
    shape = example_shape("2025-01-31")
    assert shape is not None and not shape.search("14 March 2025")
    assert example_shape("no digits") is None


async def test_a_repeated_relevant_tool_left_out_brings_no_distractors_back() -> None:
    from tests.unit.test_choice_guardrails import MANY, SUBMIT

    class Quotes:
        async def execute(self, infos: list[ToolCallInfo], iteration: int) -> list[ToolOutcome]:
            return [ToolOutcome(output="ACME last trade: 123.45 USD") for _ in infos]

    wf = Workflow(name="again", tools=MANY, terminal_tools=[SUBMIT.name])
    validate_workflow(wf)
    script = [
        call("get_stock_price", ticker="ACME"),
        call("get_stock_price", ticker="ACME"),  # the repeat guard refuses it
        call("submit", answer="123.45"),
    ]
    backend = ScriptedBackend(scripts={"again": script})
    await run_workflow(wf, "What is ACME's stock price?", backend=backend, executor=Quotes())
    after_repeat = backend.requests[2]
    assert after_repeat.allowed == ["submit"]


async def test_only_a_rejection_reshapes_values_into_the_errors_format() -> None:
    lookup = _tool("close_audit", "Close the audit.", audit_id={"type": "string"})

    class Refuses:
        def __init__(self, error: str) -> None:
            self.error = error

        async def execute(self, infos: list[ToolCallInfo], iteration: int) -> list[ToolOutcome]:
            return [ToolOutcome(error=self.error, error_kind=ToolErrorKind.HARD) for _ in infos]

    wf = Workflow(name="close", tools=[lookup, STATUS], terminal_tools=["close_audit"])
    validate_workflow(wf)
    for error, reshaped in (
        ("section S2 is not inspected yet", {}),
        (
            "malformed audit id 'A-19': ids look like AUD-0042",
            {"close_audit.audit_id": ["AUD-0019"]},
        ),
        # A rejection that quotes no value of the call is about something else.
        ("ValueError: sections S2, S3 are not inspected yet", {}),
    ):
        backend = ScriptedBackend(
            scripts={
                "close": [call("close_audit", audit_id="A-19"), call("get_status", service="x")]
            }
        )
        backend_error = None
        try:
            await run_workflow(wf, "Close audit A-19", backend=backend, executor=Refuses(error))
        except Exception as exc:  # the script ends; only the requests matter
            backend_error = exc
        assert backend_error is not None
        assert backend.requests[1].grounded_formats == reshaped


async def test_a_tool_whose_named_values_are_used_up_is_not_offered() -> None:
    tickets = _tool("get_open_tickets", "Open tickets of one office.", office={"type": "string"})
    report = _tool("report_total", "Report the total.", total={"type": "integer"})
    wf = Workflow(name="offices", tools=[tickets, report], terminal_tools=["report_total"])
    validate_workflow(wf)
    script = [
        call("get_open_tickets", office="Berlin"),
        call("get_open_tickets", office="Paris"),
        call("report_total", total=2),
    ]
    backend = ScriptedBackend(scripts={"offices": script})
    await run_workflow(
        wf, "Tickets of the Berlin and Paris offices?", backend=backend, executor=Ops()
    )
    first, second, third = backend.requests
    assert first.named_values == {"get_open_tickets.office": ["Berlin", "Paris"]}
    # Berlin is done: only Paris is left to ask about...
    assert second.named_values == {"get_open_tickets.office": ["Paris"]}
    assert "get_open_tickets" in second.allowed
    # ...and then nothing: the lookup is not offered any more.
    assert third.allowed == ["report_total"]


async def test_after_a_premature_finish_the_run_ends_only_when_what_was_missing_is_done() -> None:
    inspect = _tool(
        "inspect_section",
        "Inspect one section.",
        section={"type": "string", "description": "The section, e.g. S1."},
    )
    close = _tool("close_audit", "Close the audit.", audit_id={"type": "string"})

    class Audit:
        def __init__(self) -> None:
            self.done: list[str] = []

        async def execute(self, infos: list[ToolCallInfo], iteration: int) -> list[ToolOutcome]:
            out = []
            for c in infos:
                if c.name == "inspect_section":
                    self.done.append(c.args["section"])
                    out.append(ToolOutcome(output=f"{c.args['section']} inspected"))
                elif len(self.done) < 3:
                    missing = ", ".join(s for s in ("S1", "S2", "S3") if s not in self.done)
                    out.append(
                        ToolOutcome(
                            error=f"ValueError: sections {missing} are not inspected yet",
                            error_kind=ToolErrorKind.HARD,
                        )
                    )
                else:
                    out.append(ToolOutcome(output="closed"))
            return out

    wf = Workflow(name="audit3", tools=[inspect, close], terminal_tools=["close_audit"])
    validate_workflow(wf)
    script = [
        call("inspect_section", section="S1"),
        call("close_audit", audit_id="A-19"),
        call("inspect_section", section="S2"),
        call("inspect_section", section="S3"),
        call("close_audit", audit_id="A-19"),
    ]
    backend = ScriptedBackend(scripts={"audit3": script})
    result = await run_workflow(wf, "Audit A-19: S1 first.", backend=backend, executor=Audit())
    assert result.terminal_tool == "close_audit"
    refused, after_s2, after_s3 = backend.requests[2], backend.requests[3], backend.requests[4]
    assert refused.allowed == ["inspect_section"]
    # S3 is still offered and was named missing: the audit stays open.
    assert after_s2.shaped_values == {"inspect_section.section": ["S3"]}
    assert after_s2.allowed == ["inspect_section"]
    # Nothing named is left: the terminal tool is back (and the lookup, with
    # every value used, is not).
    assert after_s3.allowed == ["close_audit"]


async def test_the_users_values_come_before_the_results() -> None:
    start = {"type": "string", "description": "The start time, e.g. 09:30."}
    check = _tool("check_room", "Check a room.", start_time=start)
    book = _tool("book_room", "Book a room.", start_time=start)
    wf = Workflow(name="rooms2", tools=[check, book], terminal_tools=["book_room"])
    validate_workflow(wf)

    class Free:
        async def execute(self, infos: list[ToolCallInfo], iteration: int) -> list[ToolOutcome]:
            return [ToolOutcome(output="free from 13:00 to 17:00") for _ in infos]

    backend = ScriptedBackend(
        scripts={
            "rooms2": [
                call("check_room", start_time="14:00"),
                call("book_room", start_time="14:00"),
            ]
        }
    )
    await run_workflow(wf, "Book it for 14:00.", backend=backend, executor=Free())
    after = backend.requests[1].shaped_values
    assert after["book_room.start_time"] == ["14:00"]
    # The check already took the user's value: the results' values are next.
    assert after["check_room.start_time"] == ["13:00", "17:00"]


def test_the_workflow_name_is_no_value() -> None:
    grammar = build_grammar([STATUS], grounded=[], workflow_name="bfcl")
    assert grammar is not None
    assert not accepts(grammar, "get-status-args-service", json.dumps("bfcl"))
    assert accepts(grammar, "get-status-args-service", json.dumps("bfcl-api"))
    free = build_grammar([STATUS], workflow_name="bfcl")
    assert free is not None and accepts(free, "get-status-args-service", json.dumps("bfcl"))
