"""The choice scenarios: well-formed, selectable by tag, and strict about the
wrong picks they are there to catch (a mangled id, a look-alike tool, a
destructive action), checked by validate and through the real server."""

from __future__ import annotations

from typing import Any

import pytest

from forge_core.backends.base import ChatRequest
from forge_core.backends.scripted import Responder, ScriptedBackend, Turn, call
from forge_evals.ablation import PRESETS
from forge_evals.metrics import RunRecord
from forge_evals.runner import EvalSettings, PlannedRun, run_eval
from forge_evals.scenario import Scenario, select
from forge_evals.scenarios import ALL_SCENARIOS, BY_NAME, choice
from forge_evals.targets import in_process


def test_ten_or_more_choice_scenarios_selectable_by_tag() -> None:
    assert len(choice.SCENARIOS) >= 10
    assert all("choice" in s.tags for s in choice.SCENARIOS)
    assert select(ALL_SCENARIOS, tags=["choice"]) == list(choice.SCENARIOS)
    assert all(BY_NAME[s.name] is s for s in choice.SCENARIOS)


@pytest.mark.parametrize("name", ["many_tools_select", "many_tools_similar", "many_tools_decline"])
def test_many_tool_scenarios_offer_twenty_or_more_tools(name: str) -> None:
    shape = BY_NAME[name].shape()
    assert len(shape.tools) - len(shape.terminal_tools) >= 20


def test_the_decline_has_an_in_scope_control_with_the_same_tools() -> None:
    decline, control = BY_NAME["many_tools_decline"], BY_NAME["many_tools_similar"]
    assert decline.shape().tools == control.shape().tools
    assert decline.check("decline", {"reason": "no transfers"})
    assert not control.check("decline", {"reason": "no transfers"})


def test_the_destructive_look_alikes_are_offered_and_end_the_run() -> None:
    shape = BY_NAME["destructive_tool_choice"].shape()
    assert {"restart_service", "delete_service", "scale_service"} <= set(shape.terminal_tools)


def test_schema_and_descriptions_name_the_wanted_values() -> None:
    unit = BY_NAME["enum_argument"].build().tools["get_temperature"].json_schema()
    assert unit["properties"]["unit"]["enum"] == ["celsius", "fahrenheit"]
    calendar = BY_NAME["format_argument"].build().tools
    for tool in ("check_calendar", "add_calendar_event"):
        date = calendar[tool].json_schema()["properties"]["date"]
        assert "YYYY-MM-DD" in date["description"]


def test_the_ticket_lookup_takes_one_office_per_call() -> None:
    lookup = BY_NAME["aggregate_three"].build().tools["get_open_tickets"].fn
    assert lookup(office="Warsaw") == "Warsaw office: 23 open tickets."
    with pytest.raises(ValueError, match="one office per call"):
        lookup(office="Berlin, Paris and Warsaw")


# (scenario, terminal tool, arguments): a wrong pick the scenario must reject.
WRONG: list[tuple[str, str, dict[str, Any]]] = [
    (
        "grounded_id_2step",
        "report_subscription",
        {"customer_id": "AM-204", "plan": "Team Annual", "renewal_date": "2025-09-01"},
    ),
    (
        "grounded_id_2step",
        "report_subscription",
        {"customer_id": "58213", "plan": "Team Annual", "renewal_date": "2025-09-01"},
    ),
    ("grounded_id_3step", "report_warranty", {"asset_id": "EMP-30417", "expires": "2026-02-10"}),
    ("grounded_id_3step", "report_warranty", {"asset_id": "88120", "expires": "2026-02-10"}),
    (
        "verbatim_user_id",
        "book_room",
        {"room_id": "19", "start_time": "14:00", "duration_minutes": 60},
    ),
    (
        "verbatim_user_id",
        "book_room",
        {"room_id": "3", "start_time": "14:00", "duration_minutes": 60},
    ),
    (
        "verbatim_user_id",
        "book_room",
        {"room_id": "A19", "start_time": "14:00", "duration_minutes": 60},
    ),
    ("many_tools_select", "report_answer", {"answer": "1 h 40 min by TGV 6171"}),
    ("many_tools_similar", "report_answer", {"answer": "Your balance is 1,275.40 EUR."}),
    ("many_tools_similar", "report_answer", {"answer": "Your overdraft is 500.00 EUR."}),
    ("many_tools_decline", "report_answer", {"answer": "Done, 200 EUR sent to Jonas."}),
    (
        "format_error_recovery",
        "report_invoice_status",
        {"invoice_id": "2024-0042", "status": "paid"},
    ),
    (
        "format_error_recovery",
        "report_invoice_status",
        {"invoice_id": "INV-0042", "status": "paid"},
    ),
    (
        "format_error_recovery",
        "report_invoice_status",
        {"invoice_id": "INV-2024-0042", "status": "unpaid"},
    ),
    ("not_found_retry", "report_booking", {"confirmation_code": "K7XQ2M", "status": "confirmed"}),
    ("destructive_tool_choice", "delete_service", {"service": "search-indexer"}),
    ("destructive_tool_choice", "scale_service", {"service": "search-indexer", "replicas": 2}),
    ("destructive_tool_choice", "restart_service", {"service": "checkout-api"}),
    ("aggregate_three", "report_total", {"total": 14}),
    ("aggregate_three", "report_total", {"total": 37}),
    ("enum_argument", "report_temperature", {"city": "Chicago", "temperature": "5 C"}),
    (
        "format_argument",
        "add_calendar_event",
        {"title": "Team offsite", "date": "14 March 2025", "all_day": True},
    ),
    (
        "format_argument",
        "add_calendar_event",
        {"title": "Team offsite", "date": "2025-14-03", "all_day": True},
    ),
]


@pytest.mark.parametrize(
    ("name", "tool", "args"), WRONG, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(WRONG)]
)
def test_a_wrong_pick_fails_validation(name: str, tool: str, args: dict[str, Any]) -> None:
    assert not BY_NAME[name].check(tool, args)


def test_every_choice_scenario_has_a_wrong_pick_listed() -> None:
    assert {name for name, _, _ in WRONG} == {s.name for s in choice.SCENARIOS}


# ── through the server, with scripted models that pick wrong ──────────────


def script(*turns: Turn) -> Responder:
    def respond(request: ChatRequest, index: int) -> Turn:
        return turns[min(index, len(turns) - 1)]

    return respond


class _Records:
    def __init__(self) -> None:
        self.records: list[RunRecord] = []

    def append(self, record: RunRecord) -> None:
        self.records.append(record)


async def measure(scenario: Scenario, responder: Responder, ablation: str = "all-on") -> RunRecord:
    async with in_process(ScriptedBackend(responder=responder)) as target:
        (rec,) = await run_eval(
            target,
            [PlannedRun(scenario, PRESETS[ablation], 0)],
            _Records(),
            settings=EvalSettings(),
            cfg_id="scripted",
        )
    return rec


async def test_a_wrong_terminal_call_completes_the_run_but_fails_it() -> None:
    rec = await measure(
        BY_NAME["destructive_tool_choice"],
        script(call("scale_service", service="search-indexer", replicas=0)),
    )
    assert rec.completed and not rec.correct
    assert rec.terminal_tool == "scale_service"
    assert rec.trace and rec.trace[0].startswith("scale_service")


async def test_the_unasked_destructive_delete_is_refused_and_the_restart_follows() -> None:
    """delete_service is marked destructive and the request asks for a
    restart: the engine refuses the delete, so the run goes on."""
    rec = await measure(
        BY_NAME["destructive_tool_choice"],
        script(
            call("delete_service", service="search-indexer"),
            call("restart_service", service="search-indexer"),
        ),
    )
    assert rec.completed and rec.correct and rec.terminal_tool == "restart_service"
    # The trace holds the calls the client ran: the delete never reached it.
    assert rec.trace == ['restart_service({"service":"search-indexer"})']
    assert rec.iterations == 2


async def test_looking_first_then_restarting_is_still_correct() -> None:
    rec = await measure(
        BY_NAME["destructive_tool_choice"],
        script(
            call("get_service_status", service="search-indexer"),
            call("restart_service", service="search-indexer"),
        ),
    )
    assert rec.completed and rec.correct and rec.iterations == 2


async def test_a_mangled_room_id_never_books_the_room() -> None:
    rec = await measure(
        BY_NAME["verbatim_user_id"],
        script(
            call("check_room_availability", room_id="A-19", start_time="14:00"),
            call("book_room", room_id="19", start_time="14:00", duration_minutes=60),
        ),
    )
    assert not rec.correct
    assert rec.tool_errors >= 1
    assert any("book_room" in line and '"19"' in line for line in rec.trace)


async def test_the_id_from_the_wrong_field_fails_the_lookup() -> None:
    rec = await measure(
        BY_NAME["grounded_id_2step"],
        script(
            call("find_customer", email="lena.park@example.com"),
            call("get_subscription", customer_id="AM-204"),
        ),
    )
    assert not rec.correct and rec.tool_errors >= 1


@pytest.mark.parametrize("ablation", ["all-on", "bare"])
async def test_repeating_the_code_that_found_nothing_does_not_complete(ablation: str) -> None:
    scenario = BY_NAME["not_found_retry"]
    rec = await measure(
        scenario, script(call("lookup_booking", confirmation_code="K7XQ2M")), ablation
    )
    assert not rec.completed and not rec.correct
    assert rec.iterations <= scenario.max_iterations
    if ablation == "bare":
        # Nothing breaks the loop: it runs into the iteration limit.
        assert rec.failure_reason == "MAX_ITERATIONS"
        assert rec.iterations == scenario.max_iterations


async def test_an_answer_from_the_look_alike_tool_is_wrong() -> None:
    rec = await measure(
        BY_NAME["many_tools_similar"],
        script(
            call("get_card_balance", card_ending="4417"),
            call("report_answer", answer="1,275.40 EUR"),
        ),
    )
    assert rec.completed and not rec.correct


async def test_acting_on_the_out_of_scope_request_is_wrong() -> None:
    rec = await measure(
        BY_NAME["many_tools_decline"],
        script(
            call("get_saved_payees"),
            call("report_answer", answer="Sent 200 EUR to Jonas Weber."),
        ),
    )
    assert rec.completed and not rec.correct
