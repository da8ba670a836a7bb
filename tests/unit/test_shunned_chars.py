"""Free strings write no markup the conversation never shows.

A base model closed a decline's reason with `</h4>` and ran an e-mail
address on into a chat token (`...example<|im`). Where neither the
workflow nor the conversation has `<` or `>`, no free string writes them.
"""

from __future__ import annotations

import json

from forge_core.backends.scripted import ScriptedBackend, call
from forge_core.grammar import build_grammar
from forge_core.guardrails.free_strings import shunned_chars
from forge_core.loop import run_workflow
from forge_core.workflow import ToolSpec, Workflow
from tests.unit.test_choice_guardrails import LOOKUP, SUBMIT, Executor, accepts

RULE = "get-invoice-args-invoice-id"
MARKUP_VALUES = ("decline</h4>", "a@b.example<|im", "x>y")


def test_a_shunned_character_is_in_no_free_string() -> None:
    plain = build_grammar([LOOKUP], max_tokens=512, shunned_chars="<>")
    excluding = build_grammar(
        [LOOKUP],
        max_tokens=512,
        excluded=[("get_invoice", {"invoice_id": "A-1"})],
        shunned_chars="<>",
    )
    for grammar in (plain, excluding):
        assert grammar is not None
        for value in (*MARKUP_VALUES, "<", ">b"):
            assert not accepts(grammar, RULE, json.dumps(value)), value
        for value in ("decline", "a@b.example", "A-19"):
            assert accepts(grammar, RULE, json.dumps(value)), value
    # Without it, the same values are free strings like any other.
    unshunned = build_grammar([LOOKUP], max_tokens=512)
    assert unshunned is not None
    for value in MARKUP_VALUES:
        assert accepts(unshunned, RULE, json.dumps(value)), value


def test_only_markup_the_workflow_and_conversation_lack_is_shunned() -> None:
    wf = Workflow(name="wf", tools=[LOOKUP, SUBMIT], terminal_tools=["submit"])
    assert shunned_chars(wf, ["Is invoice INV-1 paid?"]) == "<>"
    # The request or a result shows one: that one is written.
    assert shunned_chars(wf, ["Is the total > 100?"]) == "<"
    assert shunned_chars(wf, ["ok", "<b>paid</b>"]) == ""
    # So does a tool's schema, or the system prompt.
    html = ToolSpec(
        "render",
        "Render a snippet",
        {"type": "object", "properties": {"html": {"type": "string", "description": "e.g. <p>"}}},
    )
    assert shunned_chars(Workflow(name="wf", tools=[html, SUBMIT]), []) == ""
    prompted = Workflow(name="wf", tools=[LOOKUP], system_prompt="Answer as <answer>")
    assert shunned_chars(prompted, []) == ""


async def test_each_turn_asks_the_backend_to_shun_what_the_conversation_lacks() -> None:
    wf = Workflow(name="wf", tools=[LOOKUP, SUBMIT], terminal_tools=["submit"])
    backend = ScriptedBackend(
        scripts={"wf": [call("get_invoice", invoice_id="INV-7"), call("submit", answer="paid")]}
    )
    executor = Executor({"INV-7": "<b>paid</b>"})
    result = await run_workflow(wf, "Is invoice INV-7 paid?", backend=backend, executor=executor)
    assert result.terminal_tool == "submit"
    # Nothing shows markup before the result; the result then shows both.
    assert [r.shunned_chars for r in backend.requests] == ["<>", ""]
