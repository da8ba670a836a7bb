"""Destructive tools: offered only when asked for, run alone, approved first.

Guardrail logic on the scripted backend (the model's turns are replayed; the
requests the loop sends are inspected for what the grammar would allow).
"""

from __future__ import annotations

from typing import Any

from forge_core.backends.scripted import ScriptedBackend, call, calls
from forge_core.errors import ToolCallError
from forge_core.guardrails.destructive import asked_for, destructive_tools, inferred_destructive
from forge_core.hooks import RunHooks
from forge_core.loop import Approval, ToolOutcome, run_workflow
from forge_core.messages import MessageType, ToolCallInfo
from forge_core.workflow import RunOptions, ToolSpec, Workflow, validate_workflow

WF = "service_ops"
SERVICE = {"type": "object", "properties": {"service": {"type": "string"}}, "required": ["service"]}
STATUS = ToolSpec("get_service_status", "Get the health status of a service", SERVICE)
RESTART = ToolSpec("restart_service", "Restart a service's running replicas.", SERVICE)
DELETE = ToolSpec(
    "delete_service",
    "Delete a service and its deployment permanently.",
    SERVICE,
    destructive=True,
)
DONE = ToolSpec(
    "done", "Report what was done. Ends the task.", {"type": "object", "properties": {}}
)


def workflow(required: list[str] | None = None) -> Workflow:
    wf = Workflow(
        name=WF,
        tools=[STATUS, RESTART, DELETE, DONE],
        terminal_tools=["done"],
        required_steps=required or [],
    )
    validate_workflow(wf)
    return wf


class Executor:
    def __init__(self) -> None:
        self.executed: list[tuple[str, dict[str, Any]]] = []

    async def execute(self, infos: list[ToolCallInfo], iteration: int) -> list[ToolOutcome]:
        self.executed += [(c.name, c.args) for c in infos]
        return [ToolOutcome(output=f"{c.name} ok") for c in infos]


def test_a_destructive_tool_is_asked_for_only_by_its_action() -> None:
    tools = [STATUS, RESTART, DELETE, DONE]
    marked = {"delete_service"}

    def ask(text: str) -> set[str]:
        return asked_for(tools, marked, text)

    assert ask("The search-indexer service is stuck. Please restart it.") == set()
    assert ask("Delete the old staging service.") == {"delete_service"}
    assert ask("We are deleting staging; remove its deployments.") == {"delete_service"}
    assert ask("") == set()
    # A word of its description alone ("deployment") does not ask for it.
    assert ask("Show me the deployment of the staging service.") == set()
    # Nothing benign to tell it apart from: any word of its name asks for it.
    assert asked_for([DELETE], marked, "the staging service") == {"delete_service"}


def test_a_common_word_of_the_description_does_not_offer_a_destructive_tool() -> None:
    listing = ToolSpec("list_datasets", "List the datasets of a project", SERVICE)
    drop = ToolSpec("delete_dataset", "Delete a dataset and its data", SERVICE)
    tools = [listing, drop]
    assert asked_for(tools, {"delete_dataset"}, "Summarise the data in my project") == set()
    assert asked_for(tools, {"delete_dataset"}, "Remove the old dataset") == {"delete_dataset"}


def test_a_name_word_that_is_no_verb_does_not_ask_for_a_destructive_tool() -> None:
    booking = ToolSpec("book_boiler_service", "Book a boiler service visit", SERVICE)
    end = ToolSpec("cancel_service_plan", "End a property's annual service plan", SERVICE)
    tools = [booking, end]
    serviced = "Book the boiler; the plan for the flat was serviced in spring."
    assert asked_for(tools, {"cancel_service_plan"}, serviced) == set()
    assert asked_for(tools, {"cancel_service_plan"}, "Please call off my plan.") == {
        "cancel_service_plan"
    }


def test_unannotated_tools_are_destructive_by_their_name_or_description() -> None:
    plain = {"type": "object", "properties": {}}
    purge = ToolSpec("purge_history", "Erase all records of a service", plain)
    tear = ToolSpec("shutdown_environment", "Tear down an environment and all in it", plain)
    close = ToolSpec("close_account", "Close a customer account for good", plain)
    lookup = ToolSpec("list_builds", "List the builds of a service", plain)
    reset = ToolSpec("reset_password", "Send a password reset link", plain)
    assert [inferred_destructive(t) for t in (purge, tear, close, lookup, reset)] == [
        True,
        True,
        True,
        False,
        False,
    ]
    # Marks win: read-only, or the schema's own x-forge-destructive.
    assert not inferred_destructive(ToolSpec("delete_draft", "", plain, read_only=True))
    spared = ToolSpec("delete_draft", "", {**plain, "x-forge-destructive": False})
    assert not inferred_destructive(spared)
    # The workflow's own terminal tools and required steps are never inferred.
    assert destructive_tools([purge, close], spared={"close_account"}) == {"purge_history"}


def test_a_change_to_where_money_is_paid_is_held_until_asked_for() -> None:
    plain = {"type": "object", "properties": {}}
    payout = ToolSpec("set_payout_account", "Choose where a seller's earnings are paid to", plain)
    iban = ToolSpec("replace_vendor_iban", "Replace the IBAN on a vendor's invoices", plain)
    read = ToolSpec("get_bank_details", "Read the bank account on file", plain)
    address = ToolSpec("update_address", "Change a seller's postal address", plain)
    card = ToolSpec("set_payment_method", "Pick the card an order is charged to", plain)
    assert [inferred_destructive(t) for t in (payout, iban, read, address, card)] == [
        True,
        True,
        False,
        False,
        False,
    ]
    tools = [read, address, payout]
    # Money the request mentions is not a request to redirect payments...
    sent = asked_for(tools, {"set_payout_account"}, "Send 40 euros from my account to Ana")
    assert sent == set()
    # ... asking for the change by its words is.
    moved = asked_for(tools, {"set_payout_account"}, "Please set my payout account to the new one")
    assert moved == {"set_payout_account"}


async def test_unasked_destructive_tool_is_neither_offered_nor_run() -> None:
    backend = ScriptedBackend(
        scripts={
            WF: [
                call("delete_service", service="search-indexer"),
                call("restart_service", service="search-indexer"),
                call("done"),
            ]
        }
    )
    executor = Executor()
    result = await run_workflow(
        workflow(),
        "The search-indexer service is stuck. Please restart it.",
        backend=backend,
        executor=executor,
    )
    assert result.terminal_tool == "done"
    assert [n for n, _ in executor.executed] == ["restart_service", "done"]
    assert all("delete_service" not in r.allowed and r.allowed for r in backend.requests)
    refused = [m.content for m in result.transcript if m.type is MessageType.RETRY_NUDGE]
    assert len(refused) == 1 and "'delete_service' is destructive" in refused[0]


async def test_policy_off_offers_and_runs_it() -> None:
    backend = ScriptedBackend(
        scripts={WF: [call("delete_service", service="search-indexer"), call("done")]}
    )
    executor = Executor()
    await run_workflow(
        workflow(),
        "The search-indexer service is stuck. Please restart it.",
        backend=backend,
        executor=executor,
        options=RunOptions(destructive_policy=False),
    )
    assert executor.executed[0] == ("delete_service", {"service": "search-indexer"})
    allowed = backend.requests[0].allowed
    assert not allowed or "delete_service" in allowed


async def test_a_pending_required_destructive_step_is_offered() -> None:
    backend = ScriptedBackend(scripts={WF: [call("delete_service", service="tmp"), call("done")]})
    executor = Executor()
    await run_workflow(
        workflow(required=["delete_service"]),
        "Clean up after the test run.",
        backend=backend,
        executor=executor,
    )
    assert executor.executed[0] == ("delete_service", {"service": "tmp"})


async def test_a_destructive_call_runs_alone() -> None:
    backend = ScriptedBackend(
        scripts={
            WF: [
                calls(
                    ("get_service_status", {"service": "staging"}),
                    ("delete_service", {"service": "staging"}),
                ),
                call("delete_service", service="staging"),
                call("done"),
            ]
        }
    )
    executor = Executor()
    result = await run_workflow(
        workflow(),
        "Check the staging service, then delete it.",
        backend=backend,
        executor=executor,
        options=RunOptions(parallel_tool_calls=True),
    )
    assert [n for n, _ in executor.executed] == ["get_service_status", "delete_service", "done"]
    deferred = [m.content for m in result.transcript if "[Deferred]" in m.content]
    assert len(deferred) == 1 and "runs alone" in deferred[0]
    # Sent back, not failed: the same call later is no "repeated failure".
    assert not any(m.type is MessageType.RETRY_NUDGE for m in result.transcript)


async def test_approval_denied_is_the_result_and_the_call_never_runs() -> None:
    asked: list[tuple[str, dict[str, Any], int]] = []

    async def approver(call_info: ToolCallInfo, iteration: int) -> Approval:
        asked.append((call_info.name, call_info.args, iteration))
        return Approval(False, "change freeze")

    backend = ScriptedBackend(
        scripts={WF: [call("delete_service", service="staging"), call("done")]}
    )
    executor = Executor()
    result = await run_workflow(
        workflow(),
        "Delete the staging service.",
        backend=backend,
        executor=executor,
        options=RunOptions(approve_destructive_calls=True),
        hooks=RunHooks(approver=approver),
    )
    assert asked == [("delete_service", {"service": "staging"}, 1)]
    assert [n for n, _ in executor.executed] == ["done"]
    results = [m.content for m in result.transcript if m.type is MessageType.TOOL_RESULT]
    assert "did not approve" in results[0] and "change freeze" in results[0]
    # Loop breaking: the denied call is left out of what the model can write.
    assert ("delete_service", {"service": "staging"}) in backend.requests[1].excluded_calls


async def test_approval_granted_runs_it_and_no_approver_denies() -> None:
    async def yes(call_info: ToolCallInfo, iteration: int) -> Approval:
        return Approval(True)

    for approver, ran in ((yes, True), (None, False)):
        backend = ScriptedBackend(
            scripts={WF: [call("delete_service", service="staging"), call("done")]}
        )
        executor = Executor()
        await run_workflow(
            workflow(),
            "Delete the staging service.",
            backend=backend,
            executor=executor,
            options=RunOptions(approve_destructive_calls=True),
            hooks=RunHooks(approver=approver),
        )
        assert (("delete_service", {"service": "staging"}) in executor.executed) is ran


async def test_the_model_that_insists_on_an_unasked_destructive_call_fails_the_run() -> None:
    backend = ScriptedBackend(scripts={WF: [call("delete_service", service="x")] * 6})
    try:
        await run_workflow(
            workflow(),
            "Is the x service healthy?",
            backend=backend,
            executor=Executor(),
            options=RunOptions(max_retries=2),
        )
    except ToolCallError as exc:
        assert "destructive tool 'delete_service'" in exc.message
    else:
        raise AssertionError("the run should fail")


def test_a_question_is_not_offered_the_tools_that_change_something() -> None:
    from forge_core.guardrails.destructive import asks_only, unasked_writes

    status = ToolSpec("get_order_status", "Get an order's status", SERVICE, read_only=True)
    note = ToolSpec("add_order_note", "Add a note to an order", SERVICE)
    report = ToolSpec("report_status", "Report the status", SERVICE)
    tools = [status, note, report]
    assert asks_only("What is the status of order A1?")
    assert not asks_only("Add a note to A1: call back.")
    spared = {"report_status"}
    assert unasked_writes(tools, spared, "What is the status of order A1?") == {"add_order_note"}
    assert unasked_writes(tools, spared, "Can you add a note to order A1?") == set()
    # Unmarked, a name that starts with a reading verb reads; the rest write.
    unmarked = [ToolSpec("get_order_status", "", SERVICE), note, report]
    assert unasked_writes(unmarked, spared, "What is the status of order A1?") == {"add_order_note"}
    # No tool reads by its name or mark: nothing to tell apart.
    writers = [ToolSpec("order_status", "", SERVICE), note, report]
    assert unasked_writes(writers, spared, "What is the status of order A1?") == set()
    # Sentences that only tell do not make a question a request; "please" does.
    told = "I ordered A1 last week. Has it shipped yet?"
    assert unasked_writes(unmarked, spared, told) == {"add_order_note"}
    assert not asks_only("Please check A1. Has it shipped?")
    # An imperative beside a question asks for something done too.
    assert not asks_only("Reserve a table for four. Is there parking?")
    check_in = ToolSpec("check_in_guest", "Check a guest in", SERVICE)
    assert unasked_writes([status, check_in, report], spared, "Is A1 here?") == {"check_in_guest"}


def test_a_workflow_that_ends_offers_only_the_writes_the_request_asks_for() -> None:
    from forge_core.guardrails.destructive import unasked_writes

    look = ToolSpec("find_invoice", "Find an invoice", SERVICE)
    draft = ToolSpec("draft_invoice", "Draft an invoice for a client. Ends the task.", SERVICE)
    send = ToolSpec("send_invoice", "Email an invoice to the client", SERVICE)
    credit = ToolSpec("issue_credit_note", "Credit part of an invoice back", SERVICE)
    tools = [look, draft, send, credit]
    spared = {"draft_invoice"}
    request = "Please draft an invoice for 12 hours of design work, don't send it yet."
    # The terminal tool is what the workflow is for; the other writes wait
    # for words that ask for their action.
    unasked = unasked_writes(tools, spared, request, ends=True)
    assert unasked == {"send_invoice", "issue_credit_note"}
    asked = "Draft the invoice and send it to the client, please."
    assert unasked_writes(tools, spared, asked, ends=True) == {"issue_credit_note"}
    # Without terminal tools (a chat's tools) only a question holds writes back.
    assert unasked_writes(tools, spared, request) == set()


def test_a_name_that_reads_with_a_description_that_acts_is_a_write() -> None:
    from forge_core.guardrails.destructive import inferred_read_only
    from forge_core.workflow import ToolSpec

    empty = {"type": "object", "properties": {}}
    advert = ToolSpec("list_layout_for_sale", "Advertise a club layout for sale.", empty)
    listing = ToolSpec("list_layouts", "The club's layouts with ids and sizes.", empty)
    assert not inferred_read_only(advert)
    assert inferred_read_only(listing)
