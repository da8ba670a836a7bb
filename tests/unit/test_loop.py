"""Unit tests for the guarded agentic loop (forge_core.loop.run_workflow).

The model is a ScriptedBackend; tools run in a small in-process executor that
records every batch it receives, so each test can assert both what the model
was told and what actually ran.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any

import pytest

from forge_core.backends.base import (
    ChatRequest,
    ChunkType,
    StreamChunk,
    TextResponse,
    ToolCall,
)
from forge_core.backends.scripted import ScriptedBackend, Turn, call, calls, text
from forge_core.cancel import CancelSignal
from forge_core.errors import (
    FailureReason,
    ForgeError,
    MaxIterationsError,
    PrerequisiteError,
    StepEnforcementError,
    ToolCallError,
    ToolExecutionError,
    WorkflowCancelledError,
)
from forge_core.hooks import RunHooks
from forge_core.loop import RunResult, ToolErrorKind, ToolOutcome, run_workflow
from forge_core.messages import Message, MessageRole, MessageType, ToolCallInfo
from forge_core.workflow import Prerequisite, RunOptions, ToolSpec, Workflow, validate_workflow

WF = "wf"

FETCH_PARAMS = {
    "type": "object",
    "properties": {"id": {"type": "string"}},
    "required": ["id"],
}
SUBMIT_PARAMS = {
    "type": "object",
    "properties": {"answer": {"type": "string"}},
    "required": ["answer"],
}
CHECK_PARAMS = {"type": "object", "properties": {}}


def make_workflow(
    *,
    extra_tools: list[ToolSpec] | None = None,
    required: list[str] | None = None,
    system_prompt: str = "",
) -> Workflow:
    tools = [
        ToolSpec("fetch", "Fetch a record by id", FETCH_PARAMS),
        ToolSpec("check", "Check the record", CHECK_PARAMS),
        *(extra_tools or []),
        ToolSpec("submit", "Submit the final answer", SUBMIT_PARAMS),
    ]
    wf = Workflow(
        name=WF,
        tools=tools,
        required_steps=["fetch"] if required is None else required,
        terminal_tools=["submit"],
        description="Look a record up and report on it.",
        system_prompt=system_prompt,
    )
    validate_workflow(wf)
    return wf


Outcomes = ToolOutcome | list[ToolOutcome] | Callable[[ToolCallInfo], ToolOutcome]


class RecordingExecutor:
    """Records each batch; answers from `outcomes[name]` or with '<name> ok'.

    A list of outcomes is consumed one per call of that tool; its last entry
    then repeats.
    """

    def __init__(self, outcomes: dict[str, Outcomes] | None = None) -> None:
        self.outcomes: dict[str, Outcomes] = dict(outcomes or {})
        self.batches: list[tuple[int, list[ToolCallInfo]]] = []

    async def execute(self, calls: list[ToolCallInfo], iteration: int) -> list[ToolOutcome]:
        self.batches.append((iteration, list(calls)))
        return [self.outcome(c) for c in calls]

    def outcome(self, c: ToolCallInfo) -> ToolOutcome:
        spec = self.outcomes.get(c.name)
        if spec is None:
            return ToolOutcome(output=f"{c.name} ok")
        if isinstance(spec, ToolOutcome):
            return spec
        if isinstance(spec, list):
            return spec.pop(0) if len(spec) > 1 else spec[0]
        return spec(c)

    @property
    def executed(self) -> list[str]:
        return [c.name for _, batch in self.batches for c in batch]


async def run(
    turns: list[Turn],
    *,
    wf: Workflow | None = None,
    executor: RecordingExecutor | None = None,
    options: RunOptions | None = None,
    backend: ScriptedBackend | None = None,
    **kwargs: Any,
) -> RunResult:
    return await run_workflow(
        wf or make_workflow(),
        "Report on record 42.",
        backend=backend or ScriptedBackend(scripts={WF: turns}),
        executor=executor or RecordingExecutor(),
        options=options,
        **kwargs,
    )


def types_of(transcript: list[Message]) -> list[MessageType]:
    return [m.type for m in transcript]


def tool_messages(transcript: list[Message], kind: MessageType) -> list[Message]:
    return [m for m in transcript if m.type is kind]


def assert_paired(transcript: list[Message]) -> None:
    """Every assistant tool-call message is followed by exactly one tool message
    per call, in call order, with matching ids and names."""
    i = 0
    while i < len(transcript):
        msg = transcript[i]
        if msg.role is MessageRole.ASSISTANT and msg.type is MessageType.TOOL_CALL:
            answers = transcript[i + 1 : i + 1 + len(msg.tool_calls)]
            assert [a.role for a in answers] == [MessageRole.TOOL] * len(msg.tool_calls)
            assert [a.tool_call_id for a in answers] == [c.call_id for c in msg.tool_calls]
            assert [a.tool_name for a in answers] == [c.name for c in msg.tool_calls]
            i += 1 + len(msg.tool_calls)
            continue
        assert msg.role is not MessageRole.TOOL, f"unpaired tool message at {i}: {msg}"
        i += 1


# --------------------------------------------------------------------------- happy path


async def test_two_step_happy_path() -> None:
    executor = RecordingExecutor({"submit": ToolOutcome(output="record 42 is fine")})
    backend = ScriptedBackend(scripts={WF: [call("fetch", id="42"), call("submit", answer="fine")]})
    result = await run([], backend=backend, executor=executor)

    assert result.terminal_tool == "submit"
    assert result.result == "record 42 is fine"
    assert result.iterations == 2
    assert result.terminal_call_id == "call_2"
    assert result.usage.model_calls == 2
    assert len(backend.requests) == 2

    t = result.transcript
    assert types_of(t) == [
        MessageType.SYSTEM_PROMPT,
        MessageType.USER_INPUT,
        MessageType.TOOL_CALL,
        MessageType.TOOL_RESULT,
        MessageType.TOOL_CALL,
        MessageType.TOOL_RESULT,
    ]
    assert [m.role for m in t] == [
        MessageRole.SYSTEM,
        MessageRole.USER,
        MessageRole.ASSISTANT,
        MessageRole.TOOL,
        MessageRole.ASSISTANT,
        MessageRole.TOOL,
    ]
    assert "'wf'" in t[0].content
    assert "Look a record up" in t[0].content
    assert t[1].content == "Report on record 42."
    assert t[2].tool_calls == [ToolCallInfo("call_1", "fetch", {"id": "42"})]
    assert t[3].tool_call_id == "call_1"
    assert t[3].tool_name == "fetch"
    assert t[3].content == "fetch ok"
    assert t[4].tool_calls == [ToolCallInfo("call_2", "submit", {"answer": "fine"})]
    assert t[5].tool_call_id == "call_2"
    assert t[5].content == "record 42 is fine"
    assert [m.step_index for m in t[2:]] == [1, 1, 2, 2]
    assert not any(m.transient for m in t)
    assert_paired(t)

    assert [(it, [(c.name, c.args) for c in b]) for it, b in executor.batches] == [
        (1, [("fetch", {"id": "42"})]),
        (2, [("submit", {"answer": "fine"})]),
    ]


async def test_custom_system_prompt_replaces_default() -> None:
    wf = make_workflow(system_prompt="You are a careful auditor.")
    result = await run([call("fetch", id="1"), call("submit", answer="x")], wf=wf)
    assert result.transcript[0].content == "You are a careful auditor."


# --------------------------------------------------------------------------- text replies


async def test_text_with_embedded_json_call_is_rescued_without_a_retry() -> None:
    executor = RecordingExecutor()
    reply = 'Sure, here it is:\n```json\n{"tool": "fetch", "args": {"id": "7"}}\n```\nDone.'
    result = await run(
        [text(reply), call("submit", answer="x")],
        executor=executor,
        # With no retry budget at all, a retry would end the run.
        options=RunOptions(max_retries=0),
    )
    assert result.iterations == 2
    assert executor.batches[0] == (1, [ToolCallInfo("call_1", "fetch", {"id": "7"})])
    assert MessageType.TEXT_RESPONSE not in types_of(result.transcript)
    assert MessageType.RETRY_NUDGE not in types_of(result.transcript)


async def test_bare_text_gets_a_transient_retry_nudge() -> None:
    executor = RecordingExecutor()
    result = await run(
        [text("I think the record is fine."), call("fetch", id="1"), call("submit", answer="x")],
        executor=executor,
    )
    t = result.transcript
    assert types_of(t)[2:4] == [MessageType.TEXT_RESPONSE, MessageType.RETRY_NUDGE]
    assert t[2].role is MessageRole.ASSISTANT
    assert t[2].content == "I think the record is fine."
    assert t[3].role is MessageRole.USER
    assert t[2].transient and t[3].transient
    for name in ("fetch", "check", "submit"):
        assert name in t[3].content
    assert result.iterations == 3
    assert result.usage.model_calls == 3
    # The text turn ran nothing.
    assert executor.batches[0][0] == 2


async def test_consecutive_text_replies_raise_tool_call_error() -> None:
    executor = RecordingExecutor()
    turns = [text(f"answer {i}") for i in range(3)] + [call("fetch", id="1")]
    with pytest.raises(ToolCallError) as info:
        await run(turns, executor=executor, options=RunOptions(max_retries=2))

    err = info.value
    assert err.reason is FailureReason.TOOL_CALL
    assert err.details["retries"] == "3"
    assert err.iterations == 3
    assert err.usage is not None and err.usage.model_calls == 3
    assert types_of(err.transcript) == [
        MessageType.SYSTEM_PROMPT,
        MessageType.USER_INPUT,
        *[MessageType.TEXT_RESPONSE, MessageType.RETRY_NUDGE] * 3,
    ]
    assert [m.content for m in tool_messages(err.transcript, MessageType.TEXT_RESPONSE)] == [
        "answer 0",
        "answer 1",
        "answer 2",
    ]
    assert executor.batches == []


async def test_default_budget_allows_max_retries_failures() -> None:
    # Default max_retries=3: three failures are survivable, a fourth is not.
    ok = await run(
        [text("a"), text("b"), text("c"), call("fetch", id="1"), call("submit", answer="x")]
    )
    assert ok.iterations == 5
    with pytest.raises(ToolCallError) as info:
        await run([text("a"), text("b"), text("c"), text("d"), call("fetch", id="1")])
    assert info.value.iterations == 4


async def test_retry_counter_resets_after_a_valid_call() -> None:
    turns = [
        text("a"),
        text("b"),
        call("fetch", id="1"),
        text("c"),
        text("d"),
        call("submit", answer="x"),
    ]
    result = await run(turns, options=RunOptions(max_retries=2))
    assert result.iterations == 6


async def test_empty_tool_call_list_costs_a_retry() -> None:
    with pytest.raises(ToolCallError) as info:
        await run([Turn([]), call("fetch", id="1")], options=RunOptions(max_retries=0))
    assert "empty" in info.value.message
    assert types_of(info.value.transcript)[2:] == [MessageType.RETRY_NUDGE]


# --------------------------------------------------------------------------- invalid calls


async def test_unknown_tool_is_rejected_with_a_nudge_listing_tools() -> None:
    executor = RecordingExecutor()
    result = await run(
        [call("delete_all", force=True), call("fetch", id="1"), call("submit", answer="x")],
        executor=executor,
    )
    t = result.transcript
    assert types_of(t)[2:4] == [MessageType.TOOL_CALL, MessageType.RETRY_NUDGE]
    assert t[2].transient
    assert t[2].tool_calls[0].name == "delete_all"
    nudge = t[3]
    assert nudge.role is MessageRole.TOOL
    assert nudge.transient
    assert nudge.tool_call_id == "call_1"
    assert "Unknown tool 'delete_all'" in nudge.content
    assert "fetch, check, submit" in nudge.content
    assert "delete_all" not in executor.executed
    assert executor.executed == ["fetch", "submit"]
    assert_paired(t)


async def test_unknown_tool_counts_as_a_retry() -> None:
    executor = RecordingExecutor()
    with pytest.raises(ToolCallError):
        await run(
            [call("nope"), call("fetch", id="1")],
            executor=executor,
            options=RunOptions(max_retries=0),
        )
    assert executor.batches == []


async def test_missing_required_property_is_never_executed() -> None:
    executor = RecordingExecutor()
    result = await run(
        [call("fetch"), call("fetch", id="1"), call("submit", answer="x")], executor=executor
    )
    nudges = tool_messages(result.transcript, MessageType.RETRY_NUDGE)
    assert len(nudges) == 1
    assert "Invalid arguments for 'fetch'" in nudges[0].content
    assert "'id' is a required property" in nudges[0].content
    assert executor.batches[0][1] == [ToolCallInfo("call_2", "fetch", {"id": "1"})]


async def test_wrong_argument_type_names_the_field() -> None:
    executor = RecordingExecutor()
    result = await run(
        [call("fetch", id=42), call("fetch", id="42"), call("submit", answer="x")],
        executor=executor,
        options=RunOptions(coercion=False),
    )
    (nudge,) = tool_messages(result.transcript, MessageType.RETRY_NUDGE)
    assert "at 'id'" in nudge.content
    assert "is not of type 'string'" in nudge.content
    assert [c.args for _, b in executor.batches for c in b] == [{"id": "42"}, {"answer": "x"}]


async def test_invalid_arguments_count_as_retries() -> None:
    executor = RecordingExecutor()
    with pytest.raises(ToolCallError) as info:
        await run(
            [call("fetch", id=[1, 2]), call("fetch"), call("fetch", id="1")],
            executor=executor,
            options=RunOptions(max_retries=1),
        )
    assert info.value.iterations == 2
    assert executor.batches == []


async def test_one_invalid_call_blocks_the_whole_batch() -> None:
    executor = RecordingExecutor()
    result = await run(
        [
            calls(("fetch", {"id": "1"}), ("check", {}), ("nope", {})),
            call("fetch", id="1"),
            call("submit", answer="x"),
        ],
        executor=executor,
    )
    t = result.transcript
    assert types_of(t)[2:6] == [MessageType.TOOL_CALL] + [MessageType.RETRY_NUDGE] * 3
    assert "[Skipped] 'fetch'" in t[3].content
    assert "[Skipped] 'check'" in t[4].content
    assert "Unknown tool 'nope'" in t[5].content
    assert executor.executed == ["fetch", "submit"]
    assert_paired(t)


# --------------------------------------------------------------------------- required steps


async def test_premature_terminal_call_escalates_then_fails() -> None:
    executor = RecordingExecutor()
    with pytest.raises(StepEnforcementError) as info:
        await run([call("submit", answer="x")] * 3 + [call("fetch", id="1")], executor=executor)

    err = info.value
    assert err.reason is FailureReason.STEP_ENFORCEMENT
    assert err.details["pending_steps"] == "fetch"
    assert err.details["terminal_tool"] == "submit"
    assert err.details["attempts"] == "3"
    assert err.iterations == 3
    assert executor.batches == []

    nudges = tool_messages(err.transcript, MessageType.STEP_NUDGE)
    assert len(nudges) == 3
    assert all(n.role is MessageRole.TOOL and n.transient for n in nudges)
    assert [n.tool_call_id for n in nudges] == ["call_1", "call_2", "call_3"]
    tier1, tier2, tier3 = (n.content for n in nudges)
    assert "cannot run yet" in tier1 and "fetch" in tier1
    assert "Again" in tier2 and "Call 'fetch' now" in tier2
    assert "Final warning" in tier3 and "must call 'fetch'" in tier3
    assert len({tier1, tier2, tier3}) == 3
    assert_paired(err.transcript)


async def test_premature_call_then_step_then_terminal_succeeds() -> None:
    executor = RecordingExecutor()
    result = await run(
        [call("submit", answer="x"), call("fetch", id="1"), call("submit", answer="x")],
        executor=executor,
        # Step nudges have their own budget; they are not retries.
        options=RunOptions(max_retries=0),
    )
    assert result.iterations == 3
    assert len(tool_messages(result.transcript, MessageType.STEP_NUDGE)) == 1
    assert executor.executed == ["fetch", "submit"]


async def test_step_nudge_lists_only_the_steps_still_pending() -> None:
    wf = make_workflow(required=["fetch", "check"])
    with pytest.raises(StepEnforcementError) as info:
        await run(
            [
                call("submit", answer="x"),
                call("fetch", id="1"),
                # The passing fetch batch resets the premature count: three more.
                call("submit", answer="x"),
                call("submit", answer="x"),
                call("submit", answer="x"),
            ],
            wf=wf,
        )
    err = info.value
    first, *later = tool_messages(err.transcript, MessageType.STEP_NUDGE)
    assert "fetch, check" in first.content
    assert all("check" in n.content and "fetch" not in n.content for n in later)
    assert err.details["pending_steps"] == "check"


async def test_terminal_call_in_same_batch_as_required_step_is_blocked() -> None:
    """Steps are checked against what completed before the batch."""
    executor = RecordingExecutor()
    result = await run(
        [
            calls(("fetch", {"id": "1"}), ("submit", {"answer": "x"})),
            call("fetch", id="1"),
            call("submit", answer="x"),
        ],
        executor=executor,
    )
    assert executor.batches[0][0] == 2
    assert len(tool_messages(result.transcript, MessageType.STEP_NUDGE)) == 2


# --------------------------------------------------------------------------- prerequisites


def prereq_workflow(match_arg: str = "") -> Workflow:
    update = ToolSpec(
        "update",
        "Update a record",
        FETCH_PARAMS,
        prerequisites=[Prerequisite("fetch", match_arg)],
    )
    return make_workflow(extra_tools=[update], required=[])


async def test_name_only_prerequisite_blocks_then_allows() -> None:
    executor = RecordingExecutor()
    result = await run(
        [
            call("update", id="1"),
            call("fetch", id="9"),
            call("update", id="1"),
            call("submit", answer="x"),
        ],
        wf=prereq_workflow(),
        executor=executor,
    )
    (nudge,) = tool_messages(result.transcript, MessageType.PREREQUISITE_NUDGE)
    assert nudge.role is MessageRole.TOOL and nudge.transient
    assert nudge.tool_name == "update"
    assert "'update' requires calling fetch first" in nudge.content
    assert executor.executed == ["fetch", "update", "submit"]
    assert_paired(result.transcript)


async def test_consecutive_prerequisite_violations_raise() -> None:
    executor = RecordingExecutor()
    with pytest.raises(PrerequisiteError) as info:
        await run(
            [call("update", id="1"), call("update", id="1"), call("fetch", id="1")],
            wf=prereq_workflow(),
            executor=executor,
        )
    err = info.value
    assert err.reason is FailureReason.PREREQUISITE
    assert err.details == {
        "tool_name": "update",
        "violations": "2",
        "missing_prerequisites": "fetch",
    }
    assert err.iterations == 2
    assert len(tool_messages(err.transcript, MessageType.PREREQUISITE_NUDGE)) == 2
    assert executor.batches == []


async def test_match_arg_prerequisite_needs_the_same_argument() -> None:
    executor = RecordingExecutor()
    result = await run(
        [
            call("fetch", id="a"),
            call("update", id="b"),  # blocked: fetch ran for 'a' only
            call("update", id="a"),
            call("submit", answer="x"),
        ],
        wf=prereq_workflow(match_arg="id"),
        executor=executor,
    )
    (nudge,) = tool_messages(result.transcript, MessageType.PREREQUISITE_NUDGE)
    assert "fetch(id='b')" in nudge.content
    assert [(c.name, c.args) for _, b in executor.batches for c in b] == [
        ("fetch", {"id": "a"}),
        ("update", {"id": "a"}),
        ("submit", {"answer": "x"}),
    ]


async def test_prerequisite_violations_reset_after_a_passing_batch() -> None:
    result = await run(
        [
            call("update", id="b"),
            call("fetch", id="a"),
            call("update", id="c"),
            call("fetch", id="c"),
            call("update", id="c"),
            call("submit", answer="x"),
        ],
        wf=prereq_workflow(match_arg="id"),
    )
    assert len(tool_messages(result.transcript, MessageType.PREREQUISITE_NUDGE)) == 2


async def test_blocked_call_skips_its_valid_neighbours() -> None:
    executor = RecordingExecutor()
    result = await run(
        [
            calls(("check", {}), ("update", {"id": "1"})),
            call("fetch", id="1"),
            call("submit", answer="x"),
        ],
        wf=prereq_workflow(),
        executor=executor,
    )
    skipped, blocked = tool_messages(result.transcript, MessageType.PREREQUISITE_NUDGE)
    assert "[Skipped] 'check'" in skipped.content
    assert "requires calling fetch" in blocked.content
    assert "check" not in executor.executed


# --------------------------------------------------------------------------- tool errors


async def test_hard_tool_error_is_fed_back_and_does_not_complete_a_step() -> None:
    executor = RecordingExecutor(
        {"fetch": [ToolOutcome(error="database unavailable"), ToolOutcome(output="row")]}
    )
    result = await run(
        [
            call("fetch", id="1"),
            call("submit", answer="x"),  # fetch failed, so still premature
            call("fetch", id="1"),
            call("submit", answer="x"),
        ],
        executor=executor,
    )
    results = tool_messages(result.transcript, MessageType.TOOL_RESULT)
    assert results[0].content == "[ToolError] database unavailable"
    assert not results[0].transient
    assert results[1].content == "row"
    assert len(tool_messages(result.transcript, MessageType.STEP_NUDGE)) == 1


async def test_repeated_hard_tool_errors_raise_tool_execution_error() -> None:
    executor = RecordingExecutor({"fetch": ToolOutcome(error="boom")})
    # The same failing call every time: loop breaking would refuse the third
    # (test_guardrail_switches); this test is about the error budget.
    with pytest.raises(ToolExecutionError) as info:
        await run(
            [call("fetch", id="1")] * 4,
            executor=executor,
            options=RunOptions(loop_breaking=False),
        )
    err = info.value
    assert err.reason is FailureReason.TOOL_EXECUTION
    # Default max_tool_errors=2: the third consecutive failing batch ends the run.
    assert err.details["consecutive_errors"] == "3"
    assert err.details["tool_name"] == "fetch"
    assert "boom" in err.message
    assert len(executor.batches) == 3
    assert err.iterations == 3
    assert [m.content for m in tool_messages(err.transcript, MessageType.TOOL_RESULT)] == [
        "[ToolError] boom"
    ] * 3


async def test_zero_tool_error_budget_fails_on_first_error() -> None:
    executor = RecordingExecutor({"fetch": ToolOutcome(error="boom")})
    with pytest.raises(ToolExecutionError):
        await run(
            [call("fetch", id="1")] * 2, executor=executor, options=RunOptions(max_tool_errors=0)
        )
    assert len(executor.batches) == 1


async def test_successful_batch_resets_the_tool_error_count() -> None:
    outcomes = [
        ToolOutcome(error="e1"),
        ToolOutcome(error="e2"),
        ToolOutcome(output="ok"),
        ToolOutcome(error="e3"),
        ToolOutcome(error="e4"),
        ToolOutcome(output="ok"),
    ]
    executor = RecordingExecutor({"fetch": outcomes})
    result = await run(
        [call("fetch", id="1")] * 6 + [call("submit", answer="x")],
        executor=executor,
        options=RunOptions(max_iterations=7, loop_breaking=False),
    )
    assert result.iterations == 7


async def test_resolution_errors_do_not_count_and_do_not_complete_a_step() -> None:
    miss = ToolOutcome(error="no record 'zz'", error_kind=ToolErrorKind.RESOLUTION)
    executor = RecordingExecutor({"fetch": [miss, miss, miss, ToolOutcome(output="row")]})
    result = await run(
        [
            call("fetch", id="zz"),
            call("submit", answer="x"),  # premature: the failed fetch is no step
            # Different ids: an identical repeat of a lookup that found nothing
            # is rejected by the repeat guard (test_guardrail_switches).
            call("fetch", id="yy"),
            call("fetch", id="xx"),
            call("fetch", id="1"),
            call("submit", answer="x"),
        ],
        executor=executor,
        options=RunOptions(max_tool_errors=0),
    )
    assert result.iterations == 6
    contents = [m.content for m in tool_messages(result.transcript, MessageType.TOOL_RESULT)]
    assert contents[:3] == ["[ToolError] no record 'zz'"] * 3
    assert len(tool_messages(result.transcript, MessageType.STEP_NUDGE)) == 1


async def test_executor_returning_wrong_number_of_outcomes_fails_the_run() -> None:
    class Short(RecordingExecutor):
        async def execute(self, calls: list[ToolCallInfo], iteration: int) -> list[ToolOutcome]:
            return []

    with pytest.raises(ForgeError) as info:
        await run([call("fetch", id="1")], executor=Short())
    assert info.value.reason is FailureReason.INTERNAL
    assert info.value.iterations == 1
    assert info.value.transcript


# --------------------------------------------------------------------------- terminal


async def test_terminal_tool_with_empty_output_ends_the_run() -> None:
    backend = ScriptedBackend(
        scripts={WF: [call("fetch", id="1"), call("submit", answer="x"), call("check")]}
    )
    executor = RecordingExecutor({"submit": ToolOutcome(output="")})
    result = await run([], backend=backend, executor=executor)
    assert result.result == ""
    assert result.terminal_tool == "submit"
    assert result.iterations == 2
    assert len(backend.requests) == 2


async def test_terminal_tool_with_hard_error_does_not_end_the_run() -> None:
    executor = RecordingExecutor(
        {"submit": [ToolOutcome(error="rejected"), ToolOutcome(output="accepted")]}
    )
    result = await run(
        [call("fetch", id="1"), call("submit", answer="x"), call("submit", answer="y")],
        executor=executor,
    )
    assert result.result == "accepted"
    assert result.terminal_call_id == "call_3"


# --------------------------------------------------------------------------- parallel calls


async def test_parallel_calls_run_as_one_batch_in_call_order() -> None:
    def echo(c: ToolCallInfo) -> ToolOutcome:
        return ToolOutcome(output=f"record {c.args['id']}")

    executor = RecordingExecutor({"fetch": echo})
    result = await run(
        [
            calls(("fetch", {"id": "a"}), ("check", {}), ("fetch", {"id": "b"})),
            calls(("check", {}), ("submit", {"answer": "x"})),
        ],
        executor=executor,
    )
    assert len(executor.batches) == 2
    iteration, batch = executor.batches[0]
    assert iteration == 1
    assert [(c.call_id, c.name) for c in batch] == [
        ("call_1", "fetch"),
        ("call_2", "check"),
        ("call_3", "fetch"),
    ]
    t = result.transcript
    assert types_of(t)[2:6] == [MessageType.TOOL_CALL] + [MessageType.TOOL_RESULT] * 3
    assert len(t[2].tool_calls) == 3
    assert [(m.tool_call_id, m.content) for m in t[3:6]] == [
        ("call_1", "record a"),
        ("call_2", "check ok"),
        ("call_3", "record b"),
    ]
    assert result.terminal_call_id == "call_5"
    assert_paired(t)


# --------------------------------------------------------------------------- limits


async def test_max_iterations() -> None:
    executor = RecordingExecutor()
    wf = make_workflow(required=["fetch", "check"])
    with pytest.raises(MaxIterationsError) as info:
        await run(
            [call("fetch", id=str(i)) for i in range(10)],
            wf=wf,
            executor=executor,
            options=RunOptions(max_iterations=3),
        )
    err = info.value
    assert err.reason is FailureReason.MAX_ITERATIONS
    assert err.iterations == 3
    assert err.details["completed_steps"] == "fetch"
    assert err.details["pending_steps"] == "check"
    assert len(executor.batches) == 3


async def test_retries_consume_iterations() -> None:
    with pytest.raises(MaxIterationsError):
        await run(
            [text("hmm"), text("hmm"), call("fetch", id="1"), call("submit", answer="x")],
            options=RunOptions(max_iterations=3),
        )


# --------------------------------------------------------------------------- cancellation

# A plain asyncio.Event (raced against each await) and the CancelSignal the
# server uses (the awaiting task is interrupted): the same outcomes.
CANCELS = pytest.mark.parametrize("make_cancel", [asyncio.Event, CancelSignal])


@CANCELS
async def test_cancel_while_executor_is_blocked(make_cancel: Callable[[], asyncio.Event]) -> None:
    started = asyncio.Event()
    seen_cancel = asyncio.Event()

    class Blocking(RecordingExecutor):
        async def execute(self, calls: list[ToolCallInfo], iteration: int) -> list[ToolOutcome]:
            self.batches.append((iteration, list(calls)))
            started.set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                seen_cancel.set()
                raise
            raise AssertionError("unreachable")

    cancel = make_cancel()
    backend = ScriptedBackend(scripts={WF: [call("fetch", id="1"), call("submit", answer="x")]})
    task = asyncio.create_task(run([], backend=backend, executor=Blocking(), cancel=cancel))
    await asyncio.wait_for(started.wait(), 1.0)
    cancel.set()
    with pytest.raises(WorkflowCancelledError) as info:
        await asyncio.wait_for(task, 1.0)
    err = info.value
    assert err.reason is FailureReason.CANCELLED
    assert err.details["iteration"] == "1"
    assert err.iterations == 1
    assert seen_cancel.is_set(), "the executor's task should have been cancelled"
    assert len(backend.requests) == 1  # the model is not asked again


@CANCELS
async def test_cancel_while_model_is_thinking(make_cancel: Callable[[], asyncio.Event]) -> None:
    cancel = make_cancel()
    slow = Turn([ToolCall("fetch", {"id": "1"})], delay_s=5.0)
    task = asyncio.create_task(run([slow], cancel=cancel))
    await asyncio.sleep(0.02)
    cancel.set()
    with pytest.raises(WorkflowCancelledError):
        await asyncio.wait_for(task, 1.0)


@CANCELS
async def test_cancel_set_before_the_run_makes_no_model_call(
    make_cancel: Callable[[], asyncio.Event],
) -> None:
    cancel = make_cancel()
    cancel.set()
    backend = ScriptedBackend(scripts={WF: [call("fetch", id="1")]})
    with pytest.raises(WorkflowCancelledError):
        await run([], backend=backend, cancel=cancel)
    assert len(backend.requests) == 0


async def test_a_cancelled_task_is_not_turned_into_a_cancelled_run() -> None:
    """Cancelling the run's task from outside (the server moving the run to
    another replica) ends it with CancelledError, not WorkflowCancelledError,
    even with a CancelSignal waiting."""
    slow = Turn([ToolCall("fetch", {"id": "1"})], delay_s=5.0)
    task = asyncio.create_task(run([slow], cancel=CancelSignal()))
    await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 1.0)


async def test_after_a_signalled_cancel_the_task_awaits_normally() -> None:
    """The signal's interruption is taken back once it became the run's
    outcome: the task that ran the workflow goes on awaiting (the server
    sends run_failed from it)."""
    cancel = CancelSignal()
    slow = Turn([ToolCall("fetch", {"id": "1"})], delay_s=5.0)

    async def body() -> str:
        with pytest.raises(WorkflowCancelledError):
            await run([slow], cancel=cancel)
        await asyncio.sleep(0.01)
        return "went on"

    task = asyncio.create_task(body())
    await asyncio.sleep(0.02)
    cancel.set()
    assert await asyncio.wait_for(task, 1.0) == "went on"


async def test_work_that_swallows_the_interruption_leaves_no_cancel_behind() -> None:
    """A tool batch that catches the signal's interruption and returns: the
    run still ends cancelled at its next step, and its task has no
    cancellation left pending for whatever it awaits after."""
    cancel = CancelSignal()
    started = asyncio.Event()

    class Stubborn(RecordingExecutor):
        async def execute(self, calls: list[ToolCallInfo], iteration: int) -> list[ToolOutcome]:
            started.set()
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.Event().wait()
            return await super().execute(calls, iteration)

    backend = ScriptedBackend(scripts={WF: [call("fetch", id="1"), call("submit", answer="x")]})

    async def body() -> str:
        with pytest.raises(WorkflowCancelledError):
            await run([], backend=backend, executor=Stubborn(), cancel=cancel)
        # No cancellation request left: asyncio.timeout() and TaskGroup count them.
        current = asyncio.current_task()
        assert current is not None and current.cancelling() == 0
        await asyncio.sleep(0.01)
        return "went on"

    task = asyncio.create_task(body())
    await asyncio.wait_for(started.wait(), 1.0)
    cancel.set()
    assert await asyncio.wait_for(task, 1.0) == "went on"
    assert len(backend.requests) == 1


async def test_a_cancel_set_by_the_run_itself_ends_it_at_the_next_step() -> None:
    """Set from inside the engine's own task (a tool executor), the signal
    interrupts nothing mid-step: the next model call sees it."""
    cancel = CancelSignal()

    class Cancelling(RecordingExecutor):
        async def execute(self, calls: list[ToolCallInfo], iteration: int) -> list[ToolOutcome]:
            cancel.set()
            await asyncio.sleep(0)
            return await super().execute(calls, iteration)

    backend = ScriptedBackend(scripts={WF: [call("fetch", id="1"), call("submit", answer="x")]})
    with pytest.raises(WorkflowCancelledError):
        await run([], backend=backend, executor=Cancelling(), cancel=cancel)
    assert len(backend.requests) == 1


# --------------------------------------------------------------------------- callbacks


async def test_on_message_sees_every_message_with_increasing_index() -> None:
    seen: list[tuple[Message, int]] = []

    async def sink(message: Message, index: int) -> None:
        seen.append((message, index))

    result = await run(
        [text("hi"), call("submit", answer="x"), call("fetch", id="1"), call("submit", answer="x")],
        hooks=RunHooks(on_message=sink),
    )
    assert [i for _, i in seen] == list(range(len(result.transcript)))
    assert all(m is result.transcript[i] for m, i in seen)
    assert len(seen) == 2 + 2 + 2 + 2 + 2


async def test_on_message_is_called_for_failed_runs_too() -> None:
    seen: list[int] = []

    async def sink(message: Message, index: int) -> None:
        seen.append(index)

    with pytest.raises(ToolCallError) as info:
        await run([text("x")], hooks=RunHooks(on_message=sink), options=RunOptions(max_retries=0))
    assert seen == list(range(len(info.value.transcript))) == [0, 1, 2, 3]


async def test_on_chunk_receives_chunks_tagged_with_iteration() -> None:
    chunks: list[tuple[StreamChunk, int]] = []

    async def on_chunk(chunk: StreamChunk, iteration: int) -> None:
        chunks.append((chunk, iteration))

    await run(
        [call("fetch", id="1"), call("submit", answer="x")],
        hooks=RunHooks(on_chunk=on_chunk),
        options=RunOptions(stream_chunks=True),
    )
    assert [(c.type, i) for c, i in chunks] == [
        (ChunkType.TOOL_CALL_DELTA, 1),
        (ChunkType.FINAL, 1),
        (ChunkType.TOOL_CALL_DELTA, 2),
        (ChunkType.FINAL, 2),
    ]
    assert '"fetch"' in chunks[0][0].content

    chunks.clear()
    await run(
        [call("fetch", id="1"), call("submit", answer="x")], hooks=RunHooks(on_chunk=on_chunk)
    )
    assert chunks == []  # stream_chunks defaults to off


# --------------------------------------------------------------------------- prior messages


async def test_prior_messages_with_system_prompt_are_kept_and_not_re_emitted() -> None:
    prior = [
        Message(MessageRole.SYSTEM, "Earlier system prompt.", MessageType.SYSTEM_PROMPT),
        Message(MessageRole.USER, "Earlier question.", MessageType.USER_INPUT),
        Message(MessageRole.ASSISTANT, "Earlier answer.", MessageType.TEXT_RESPONSE),
    ]
    seen: list[tuple[Message, int]] = []

    async def sink(message: Message, index: int) -> None:
        seen.append((message, index))

    result = await run(
        [call("fetch", id="1"), call("submit", answer="x")],
        prior_messages=prior,
        hooks=RunHooks(on_message=sink),
    )
    t = result.transcript
    assert t[:3] == prior
    assert [m.type for m in t].count(MessageType.SYSTEM_PROMPT) == 1
    assert t[3].type is MessageType.USER_INPUT
    assert t[3].content == "Report on record 42."
    assert all(m is not p for m, _ in seen for p in prior)
    assert [i for _, i in seen] == list(range(3, len(t)))
    assert prior == t[:3] and len(prior) == 3  # the caller's list is not mutated


async def test_prior_messages_without_system_prompt_get_one_inserted() -> None:
    prior = [
        Message(MessageRole.USER, "Earlier question.", MessageType.USER_INPUT),
        Message(MessageRole.ASSISTANT, "Earlier answer.", MessageType.TEXT_RESPONSE),
    ]
    seen: list[tuple[Message, int]] = []

    async def sink(message: Message, index: int) -> None:
        seen.append((message, index))

    result = await run(
        [call("fetch", id="1"), call("submit", answer="x")],
        prior_messages=prior,
        hooks=RunHooks(on_message=sink),
    )
    t = result.transcript
    assert t[0].type is MessageType.SYSTEM_PROMPT
    assert t[0].role is MessageRole.SYSTEM
    assert "'wf'" in t[0].content
    assert t[1:3] == prior
    assert t[3].type is MessageType.USER_INPUT
    assert seen[0] == (t[0], 0)
    assert seen[1] == (t[3], 3)
    assert all(m is not p for m, _ in seen for p in prior)


async def test_model_sees_the_prior_messages() -> None:
    prior = [Message(MessageRole.USER, "Earlier question.", MessageType.USER_INPUT)]
    first_request: list[list[str]] = []

    def responder(request: ChatRequest, index: int) -> Turn:
        if index == 0:
            first_request.append([m.content for m in request.messages])
            return call("fetch", id="1")
        return call("submit", answer="x")

    await run([], backend=ScriptedBackend(responder=responder), prior_messages=prior)
    (contents,) = first_request
    assert contents[1:] == ["Earlier question.", "Report on record 42."]


async def test_call_ids_stay_unique_when_continuing_a_transcript() -> None:
    first = await run([call("fetch", id="1"), call("submit", answer="x")])
    second = await run(
        [call("fetch", id="2"), call("submit", answer="y")], prior_messages=first.transcript
    )
    ids = [c.call_id for m in second.transcript for c in m.tool_calls]
    assert len(ids) == 4
    assert len(set(ids)) == len(ids), ids


# --------------------------------------------------------------------------- constraint


def constraint_workflow() -> Workflow:
    return make_workflow(
        extra_tools=[
            ToolSpec("note", "Annotate", CHECK_PARAMS, prerequisites=[Prerequisite("fetch")]),
            ToolSpec("update", "Update", FETCH_PARAMS, prerequisites=[Prerequisite("fetch", "id")]),
        ]
    )


async def test_allowed_tools_follow_steps_and_prerequisites() -> None:
    backend = ScriptedBackend(
        scripts={WF: [call("check"), call("fetch", id="1"), call("submit", answer="x")]}
    )
    # Steps and prerequisites alone: the write policy (which would hold back
    # 'note' and 'update', writes "Report on record 42." does not ask for)
    # is tested in test_destructive_policy.
    await run(
        [],
        wf=constraint_workflow(),
        backend=backend,
        options=RunOptions(destructive_policy=False),
    )
    allowed = [r.allowed for r in backend.requests]
    # Before fetch: no terminal (step pending), no 'note' (name-only prerequisite
    # unmet); 'update' only has a match_arg prerequisite, so it stays.
    assert allowed[0] == ["fetch", "check", "update"]
    assert allowed[1] == ["fetch", "check", "update"]
    assert allowed[2] == ["fetch", "check", "note", "update", "submit"]
    assert all(r.constrained for r in backend.requests)
    # Every tool is still described to the model.
    assert [t.name for t in backend.requests[0].tools] == [
        "fetch",
        "check",
        "note",
        "update",
        "submit",
    ]


async def test_terminal_excluded_while_steps_pending_even_after_other_calls() -> None:
    wf = make_workflow(required=["fetch", "check"])
    backend = ScriptedBackend(
        scripts={WF: [call("fetch", id="1"), call("check"), call("submit", answer="x")]}
    )
    await run([], wf=wf, backend=backend)
    assert ["submit" in r.allowed for r in backend.requests] == [False, False, True]


async def test_unconstrained_runs_still_say_which_tools_are_allowed() -> None:
    # Without a grammar the allowed set still filters native tool lists.
    backend = ScriptedBackend(scripts={WF: [call("fetch", id="1"), call("submit", answer="x")]})
    await run([], backend=backend, options=RunOptions(constrained_decoding=False))
    assert [r.allowed for r in backend.requests] == [
        ["fetch", "check"],
        ["fetch", "check", "submit"],
    ]
    assert not any(r.constrained for r in backend.requests)


async def test_nudge_only_enforcement_offers_every_tool() -> None:
    backend = ScriptedBackend(scripts={WF: [call("fetch", id="1"), call("submit", answer="x")]})
    await run([], backend=backend, options=RunOptions(enforcement="nudge"))
    assert backend.requests[0].allowed == []


async def test_integer_given_for_a_string_field_is_coerced_and_recorded() -> None:
    executor = RecordingExecutor()
    await run([call("fetch", id=42), call("submit", answer="x")], executor=executor)
    first = executor.batches[0][1][0]
    assert first.args == {"id": "42"}
    assert [(c.path, c.original, c.coerced) for c in first.coercions] == [("/id", 42, "42")]


async def test_request_carries_options_and_workflow_name() -> None:
    backend = ScriptedBackend(scripts={WF: [call("fetch", id="1"), call("submit", answer="x")]})
    result = await run(
        [],
        backend=backend,
        options=RunOptions(temperature=0.7, max_tokens=99),
        run_id="run-123",
    )
    assert result.iterations == 2
    for r in backend.requests:
        assert (r.run_id, r.workflow_name, r.temperature, r.max_tokens) == (
            "run-123",
            WF,
            0.7,
            99,
        )


async def test_text_response_type_is_not_confused_with_calls() -> None:
    # A TextResponse holding JSON that is not a call is treated as text.
    with pytest.raises(ToolCallError) as info:
        await run([Turn(TextResponse('{"answer": 42}'))], options=RunOptions(max_retries=0))
    assert types_of(info.value.transcript)[2] is MessageType.TEXT_RESPONSE
