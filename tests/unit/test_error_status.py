"""An error's HTTP status is no value: "404 no tower in 'Frampton'" was
answered with `place: "404"`, then "40404..." (id_grounding.py)."""

from __future__ import annotations

import json

from forge_core.backends.scripted import ScriptedBackend, call
from forge_core.grammar import build_grammar
from forge_core.guardrails.error_values import error_status
from forge_core.loop import run_workflow
from forge_core.workflow import Workflow
from tests.unit.test_choice_guardrails import LOOKUP, SUBMIT, Executor, accepts


def test_the_status_an_error_starts_with() -> None:
    assert error_status("404 no tower in 'Frampton'") == "404"
    assert error_status("HTTP 422 - invalid colour") == "422"
    assert error_status("no tower 404 here") is None
    # As the Python SDK reports a tool's exception: its class's name first.
    assert error_status("ToolResolutionError: 422 invalid return_method 'pickup'") == "422"
    assert error_status("ValueError: bad 404 here") is None


async def test_a_failed_calls_status_is_offered_to_no_string() -> None:
    wf = Workflow(name="wf", tools=[LOOKUP, SUBMIT], terminal_tools=["submit"])
    backend = ScriptedBackend(
        scripts={
            "wf": [
                call("get_invoice", invoice_id="INV-1"),
                call("get_invoice", invoice_id="INV-2"),
                call("submit", answer="paid"),
            ]
        }
    )
    executor = Executor({"INV-2": "paid"}, error="404 invoice not found")
    result = await run_workflow(wf, "Is invoice INV-2 paid?", backend=backend, executor=executor)
    assert result.terminal_tool == "submit"
    after = backend.requests[1]
    assert "404" not in (after.grounded_values or [])
    assert "404" in after.unseen_examples["get_invoice.invoice_id"]
    assert "404" in after.unseen_examples["submit.answer"]
    # So the grammar writes neither the status nor its growth.
    grammar = build_grammar([SUBMIT], grounded=[], unseen_examples=after.unseen_examples)
    assert grammar is not None
    for value in ("404", "40404"):
        assert not accepts(grammar, "submit-args-answer", json.dumps(value)), value
    assert accepts(grammar, "submit-args-answer", json.dumps("paid"))


async def test_a_status_the_user_wrote_stays_a_value() -> None:
    wf = Workflow(name="wf", tools=[LOOKUP, SUBMIT], terminal_tools=["submit"])
    backend = ScriptedBackend(
        scripts={"wf": [call("get_invoice", invoice_id="INV-9"), call("submit", answer="x")]}
    )
    executor = Executor({}, error="404 invoice not found")
    await run_workflow(wf, "Is invoice 404 paid?", backend=backend, executor=executor)
    assert len(backend.requests) >= 2
    assert "404" not in backend.requests[1].unseen_examples.get("submit.answer", [])
