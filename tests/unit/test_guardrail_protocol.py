"""The engine's guardrails as plug-ins: one interface, phases over a public
RunState, no state of their own.

These drive single guardrails directly, the way the scheduler
(loop.GuardedRun) does, over a RunState built here: no model, no executor.
The end-to-end behaviour of each guardrail is in its own tests
(test_loop.py, test_guardrail_switches.py, test_destructive_policy.py, ...).
"""

from __future__ import annotations

import inspect

from forge_core.backends.base import ChatRequest
from forge_core.errors import StepEnforcementError
from forge_core.guardrails import engine_set
from forge_core.guardrails.loop_breaking import LoopBreaking
from forge_core.guardrails.protocol import BaseGuardrail, Guardrail
from forge_core.guardrails.repeat_guard import RepeatGuard
from forge_core.guardrails.step_enforcement import StepEnforcement
from forge_core.messages import Message, MessageRole, MessageType, ToolCallInfo
from forge_core.run_state import RunState
from forge_core.tool_execution import ToolErrorKind, ToolOutcome
from forge_core.workflow import RunOptions, ToolSpec, Workflow

ID = {"type": "object", "properties": {"kiln": {"type": "string"}}, "required": ["kiln"]}


def workflow() -> Workflow:
    return Workflow(
        name="pottery",
        tools=[
            ToolSpec("inspect_kiln", "Inspect a kiln by id", ID),
            ToolSpec("fire_kiln", "Fire a kiln", ID),
            ToolSpec("report", "Report the firing", ID),
        ],
        required_steps=["inspect_kiln"],
        terminal_tools=["report"],
    )


def state(**options: object) -> RunState:
    run = RunState(workflow(), RunOptions(**options), "run-1")  # type: ignore[arg-type]
    run.transcript.append(Message(MessageRole.USER, "Fire kiln K-7", MessageType.USER_INPUT))
    return run


def request(run: RunState) -> ChatRequest:
    return ChatRequest(run.run_id, run.wf.name, list(run.transcript), run.wf.tools, allowed=[])


def test_every_engine_guardrail_has_every_phase_and_a_name() -> None:
    phases = [
        name
        for name, _ in inspect.getmembers(Guardrail, inspect.isfunction)
        if not name.startswith("_")
    ]
    assert set(phases) == {
        "shape",
        "filter_calls",
        "check",
        "on_result",
        "on_batch",
        "compaction_note",
    }
    names = [g.name for g in engine_set.ALL]
    assert len(names) == len(set(names)) and all(names)
    for guardrail in engine_set.ALL:
        assert isinstance(guardrail, BaseGuardrail)
        assert all(callable(getattr(guardrail, phase)) for phase in phases)


def test_each_phase_lists_only_guardrails_that_take_part_in_it() -> None:
    # A guardrail listed for a phase overrides it (else listing it is noise).
    for phase, listed in [
        ("shape", engine_set.SHAPE),
        ("filter_calls", engine_set.FILTER),
        ("check", engine_set.CHECK),
        ("on_result", engine_set.REACT),
        ("on_batch", engine_set.BATCH),
        ("compaction_note", engine_set.COMPACTION),
    ]:
        for guardrail in listed:
            assert getattr(type(guardrail), phase) is not getattr(BaseGuardrail, phase), (
                guardrail.name,
                phase,
            )


def test_step_enforcement_shapes_refuses_and_remembers_over_the_state() -> None:
    run = state(max_premature_attempts=2)
    steps = StepEnforcement()
    turn = request(run)
    steps.shape(run, turn)
    assert "report" not in turn.allowed  # a required step is pending
    early = [ToolCallInfo("call_1", "report", {"kiln": "K-7"})]
    refusal = steps.check(run, early)
    assert refusal is not None and refusal.then is None and not refusal.counts_as_retry
    assert refusal.nudge_type is MessageType.STEP_NUDGE and run.premature == 1
    second = steps.check(run, early)
    assert second is not None and isinstance(second.then, StepEnforcementError)
    inspect_call = ToolCallInfo("call_2", "inspect_kiln", {"kiln": "K-7"})
    steps.on_result(run, inspect_call, ToolOutcome(output="kiln K-7: ready"), "kiln K-7: ready")
    assert run.steps.pending() == [] and steps.check(run, early) is None
    assert "inspect_kiln" in steps.compaction_note(run)


def test_loop_breaking_remembers_a_failure_and_refuses_it_again() -> None:
    run = state()
    loops = LoopBreaking()
    call = ToolCallInfo("call_1", "inspect_kiln", {"kiln": "K-9"})
    failed = ToolOutcome(error="no kiln 'K-9'", error_kind=ToolErrorKind.RESOLUTION)
    loops.on_result(run, call, failed, "no kiln 'K-9'")
    again = [ToolCallInfo("call_2", "inspect_kiln", {"kiln": "K-9"})]
    refusal = loops.check(run, again)
    assert refusal is not None and refusal.counts_as_retry
    assert "already failed" in refusal.why and "K-9" in refusal.texts[0]
    turn = request(run)
    loops.shape(run, turn)
    assert turn.excluded_calls == [("inspect_kiln", {"kiln": "K-9"})]
    # Switched off: the same state refuses nothing.
    off = state(loop_breaking=False)
    loops.on_result(off, call, failed, "no kiln 'K-9'")
    assert loops.check(off, again) is None


def test_the_repeat_guard_bans_a_repeated_tool_for_one_turn() -> None:
    run = state()
    guard = RepeatGuard()
    batch = [ToolCallInfo("call_1", "inspect_kiln", {"kiln": "K-7"})]
    guard.on_batch(run, batch, [ToolOutcome(output="ready")])
    assert guard.check(run, [ToolCallInfo("call_2", "inspect_kiln", {"kiln": "K-7"})])
    first, second = request(run), request(run)
    guard.shape(run, first)
    guard.shape(run, second)
    assert "inspect_kiln" not in first.allowed and second.allowed == []
