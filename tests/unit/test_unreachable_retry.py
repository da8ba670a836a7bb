"""A call whose result never came back (ToolErrorKind.UNREACHABLE): tried
once more for read-only and idempotent tools, never for the others, and the
model is told that the effect is unknown.

Guardrail logic on the scripted backend; the executor is a test double that
loses the first answer of chosen tools.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from forge_core.backends.scripted import ScriptedBackend, call, calls
from forge_core.loop import ToolErrorKind, ToolOutcome, run_workflow
from forge_core.messages import MessageType, ToolCallInfo
from forge_core.workflow import ToolSpec, Workflow, validate_workflow

WF = "orders"
ORDER = {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}
LOOKUP = ToolSpec("lookup_order", "Look up an order.", ORDER, read_only=True)
PRIORITY = ToolSpec("set_priority", "Set an order's priority.", ORDER, idempotent=True)
NOTE = ToolSpec("add_note", "Add a note to an order.", ORDER)
DONE = ToolSpec("done", "Report. Ends the task.", {"type": "object", "properties": {}})


def workflow() -> Workflow:
    wf = Workflow(name=WF, tools=[LOOKUP, PRIORITY, NOTE, DONE], terminal_tools=["done"])
    validate_workflow(wf)
    return wf


class LosingExecutor:
    """Loses the answer of the first `lose[name]` calls of each tool."""

    def __init__(self, lose: dict[str, int]) -> None:
        self.lose = Counter(lose)
        self.sent: list[tuple[str, str, dict[str, Any]]] = []

    async def execute(self, infos: list[ToolCallInfo], iteration: int) -> list[ToolOutcome]:
        outcomes = []
        for c in infos:
            self.sent.append((c.call_id, c.name, c.args))
            if self.lose[c.name] > 0:
                self.lose[c.name] -= 1
                outcomes.append(
                    ToolOutcome(error="connection reset", error_kind=ToolErrorKind.UNREACHABLE)
                )
            else:
                outcomes.append(ToolOutcome(output=f"{c.name} {c.args.get('order_id', '')} ok"))
        return outcomes


def tool_results(result: Any) -> dict[str, str]:
    return {m.tool_name: m.content for m in result.transcript if m.type is MessageType.TOOL_RESULT}


async def test_read_only_and_idempotent_calls_are_made_once_more_under_their_own_ids() -> None:
    script = [
        calls(
            ("lookup_order", {"order_id": "A1"}),
            ("set_priority", {"order_id": "A1"}),
            ("add_note", {"order_id": "A1"}),
        ),
        call("done"),
    ]
    executor = LosingExecutor({"lookup_order": 1, "set_priority": 1, "add_note": 1})
    result = await run_workflow(
        workflow(),
        "Look into order A1.",
        backend=ScriptedBackend(scripts={WF: script}),
        executor=executor,
    )
    assert result.terminal_tool == "done"
    sent = [(i, n) for i, n, _ in executor.sent]
    first = {n: i for i, n in sent[:3]}
    # The batch, then the two repeatable calls again with the same arguments.
    assert sent[3:5] == [
        (first["lookup_order"] + ".retry", "lookup_order"),
        (first["set_priority"] + ".retry", "set_priority"),
    ]
    assert [n for _, n in sent].count("add_note") == 1
    results = tool_results(result)
    # The model sees the second try's answers, under the calls it made...
    assert results["lookup_order"] == "lookup_order A1 ok"
    assert results["set_priority"] == "set_priority A1 ok"
    # ...and, for the call that was not repeated, that its effect is unknown.
    assert "connection reset" in results["add_note"]
    assert "'add_note' was tried once" in results["add_note"]
    assert "whether it took effect is unknown" in results["add_note"]


async def test_a_second_lost_answer_reaches_the_model_as_a_hard_error() -> None:
    executor = LosingExecutor({"lookup_order": 2})
    result = await run_workflow(
        workflow(),
        "Look into order A1.",
        backend=ScriptedBackend(scripts={WF: [call("lookup_order", order_id="A1"), call("done")]}),
        executor=executor,
    )
    assert [n for _, n, _ in executor.sent] == ["lookup_order", "lookup_order", "done"]
    assert "'lookup_order' was tried twice" in tool_results(result)["lookup_order"]


async def test_without_hints_nothing_is_repeated() -> None:
    plain = Workflow(
        name=WF,
        tools=[
            ToolSpec("lookup_order", "Look up an order.", ORDER),
            DONE,
        ],
        terminal_tools=["done"],
    )
    validate_workflow(plain)
    executor = LosingExecutor({"lookup_order": 1})
    result = await run_workflow(
        plain,
        "Look into order A1.",
        backend=ScriptedBackend(scripts={WF: [call("lookup_order", order_id="A1"), call("done")]}),
        executor=executor,
    )
    assert [n for _, n, _ in executor.sent] == ["lookup_order", "done"]
    assert "whether it took effect is unknown" in tool_results(result)["lookup_order"]
