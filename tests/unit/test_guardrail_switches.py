"""Unit tests for the loop's guardrail switches (RunOptions ablations), argument
coercion, reasoning capture and the built-in respond tool.

The model is a ScriptedBackend (or a tiny backend that reports reasoning apart
from the answer); tools run in an in-process executor that records each batch.
"""

from __future__ import annotations

from typing import Any

import pytest

from forge_core.backends.base import (
    Backend,
    BackendInfo,
    BackendReply,
    ChatRequest,
    ChunkSink,
    LLMResponse,
    TextResponse,
    ToolCall,
    Usage,
)
from forge_core.backends.scripted import ScriptedBackend, Turn, call, calls, text
from forge_core.errors import ToolCallError, ToolExecutionError
from forge_core.guardrails.coercion import Coercion
from forge_core.loop import RunResult, ToolErrorKind, ToolOutcome, run_workflow
from forge_core.messages import Message, MessageRole, MessageType, ToolCallInfo
from forge_core.workflow import (
    RESPOND_TOOL,
    Prerequisite,
    RunOptions,
    ToolSpec,
    Workflow,
    WorkflowError,
    validate_workflow,
)

WF = "wf"

FETCH = ToolSpec(
    "fetch",
    "Fetch a record by id",
    {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]},
)
PAGE = ToolSpec(
    "page",
    "List a page of records",
    {
        "type": "object",
        "properties": {
            "n": {"type": "integer"},
            "filters": {"type": "object", "properties": {"exact": {"type": "boolean"}}},
        },
        "required": ["n"],
    },
)
SUBMIT = ToolSpec(
    "submit",
    "Submit the final answer",
    {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]},
)


def make_workflow(
    *, required: list[str] | None = None, check_needs_fetch: bool = False
) -> Workflow:
    check = ToolSpec(
        "check",
        "Check the record",
        {"type": "object", "properties": {}},
        prerequisites=[Prerequisite("fetch")] if check_needs_fetch else [],
    )
    wf = Workflow(
        name=WF,
        tools=[FETCH, PAGE, check, SUBMIT],
        required_steps=["fetch"] if required is None else required,
        terminal_tools=["submit"],
    )
    validate_workflow(wf)
    return wf


class RecordingExecutor:
    """Records each batch; answers from `outcomes[name]` or with '<name> ok'."""

    def __init__(self, outcomes: dict[str, ToolOutcome] | None = None) -> None:
        self.outcomes = dict(outcomes or {})
        self.batches: list[tuple[int, list[ToolCallInfo]]] = []

    async def execute(self, calls: list[ToolCallInfo], iteration: int) -> list[ToolOutcome]:
        self.batches.append((iteration, list(calls)))
        return [self.outcomes.get(c.name, ToolOutcome(output=f"{c.name} ok")) for c in calls]

    @property
    def executed(self) -> list[str]:
        return [c.name for _, batch in self.batches for c in batch]


async def run(
    turns: list[Turn],
    *,
    wf: Workflow | None = None,
    executor: RecordingExecutor | None = None,
    options: RunOptions | None = None,
    backend: Backend | None = None,
) -> RunResult:
    return await run_workflow(
        wf or make_workflow(),
        "Report on record 42.",
        backend=backend or ScriptedBackend(scripts={WF: turns}),
        executor=executor or RecordingExecutor(),
        options=options,
    )


def types_of(transcript: list[Message]) -> list[MessageType]:
    return [m.type for m in transcript]


def of_type(transcript: list[Message], kind: MessageType) -> list[Message]:
    return [m for m in transcript if m.type is kind]


# --------------------------------------------------------------------------- coercion


async def test_coercion_is_applied_and_recorded() -> None:
    executor = RecordingExecutor()
    result = await run(
        [
            call("page", n="3", filters={"exact": "true"}),
            call("fetch", id=42),
            call("submit", answer="x"),
        ],
        executor=executor,
        options=RunOptions(max_retries=0),
    )
    assert result.iterations == 3
    assert MessageType.RETRY_NUDGE not in types_of(result.transcript)

    (page,) = executor.batches[0][1]
    assert page.args == {"n": 3, "filters": {"exact": True}}
    assert sorted(page.coercions, key=lambda c: c.path) == [
        Coercion("/filters/exact", "true", True),
        Coercion("/n", "3", 3),
    ]
    (fetch,) = executor.batches[1][1]
    assert fetch.args == {"id": "42"}
    assert fetch.coercions == (Coercion("/id", 42, "42"),)
    (submit,) = executor.batches[2][1]
    assert submit.coercions == ()

    # The transcript keeps the fixed call, coercions included.
    tool_calls = of_type(result.transcript, MessageType.TOOL_CALL)
    assert tool_calls[0].tool_calls == [page]
    assert tool_calls[1].tool_calls == [fetch]


async def test_coercion_disabled_rejects_the_call_with_a_retry_nudge() -> None:
    executor = RecordingExecutor()
    result = await run(
        [call("page", n="3"), call("page", n=3), call("fetch", id="1"), call("submit", answer="x")],
        executor=executor,
        options=RunOptions(coercion=False),
    )
    t = result.transcript
    assert types_of(t)[2:4] == [MessageType.TOOL_CALL, MessageType.RETRY_NUDGE]
    assert t[2].transient
    assert t[2].tool_calls[0].args == {"n": "3"}
    assert t[2].tool_calls[0].coercions == ()
    assert "Invalid arguments for 'page'" in t[3].content
    assert "at 'n'" in t[3].content
    # The rejected call never ran; the model's own fix did.
    assert executor.batches[0] == (2, [ToolCallInfo("call_2", "page", {"n": 3})])


async def test_coercion_disabled_counts_as_a_retry() -> None:
    with pytest.raises(ToolCallError):
        await run(
            [call("page", n="3"), call("page", n=3)],
            options=RunOptions(coercion=False, max_retries=0),
        )


async def test_uncoercible_value_is_still_rejected() -> None:
    executor = RecordingExecutor()
    result = await run(
        [call("page", n="three"), call("fetch", id="1"), call("submit", answer="x")],
        executor=executor,
    )
    (nudge,) = of_type(result.transcript, MessageType.RETRY_NUDGE)
    assert "Invalid arguments for 'page'" in nudge.content
    assert "page" not in executor.executed


# --------------------------------------------------------------------------- rescue


PROSE_CALL = 'Sure, here it is: {"tool": "fetch", "args": {"id": "1"}} - done.'


async def test_rescue_on_runs_a_prose_wrapped_call() -> None:
    executor = RecordingExecutor()
    result = await run([text(PROSE_CALL), call("submit", answer="x")], executor=executor)
    assert result.iterations == 2
    assert executor.batches[0] == (1, [ToolCallInfo("call_1", "fetch", {"id": "1"})])


async def test_rescue_off_makes_prose_wrapped_json_a_text_response() -> None:
    executor = RecordingExecutor()
    result = await run(
        [text(PROSE_CALL), call("fetch", id="1"), call("submit", answer="x")],
        executor=executor,
        options=RunOptions(rescue=False),
    )
    t = result.transcript
    assert types_of(t)[2:4] == [MessageType.TEXT_RESPONSE, MessageType.RETRY_NUDGE]
    assert t[2].content == PROSE_CALL
    assert t[2].role is MessageRole.ASSISTANT
    assert t[3].role is MessageRole.USER
    assert executor.batches[0][0] == 2


async def test_rescue_off_still_accepts_an_exact_json_reply() -> None:
    executor = RecordingExecutor()
    result = await run(
        [text('{"tool": "fetch", "args": {"id": "1"}}'), call("submit", answer="x")],
        executor=executor,
        options=RunOptions(rescue=False, max_retries=0),
    )
    assert result.iterations == 2
    assert executor.executed == ["fetch", "submit"]


# --------------------------------------------------------------------------- retry nudges


async def test_retry_nudges_off_first_text_reply_raises() -> None:
    with pytest.raises(ToolCallError) as info:
        await run(
            [text("hello"), call("fetch", id="1"), call("submit", answer="x")],
            options=RunOptions(retry_nudges=False),
        )
    assert info.value.iterations == 1


async def test_retry_nudges_off_first_invalid_call_raises() -> None:
    executor = RecordingExecutor()
    with pytest.raises(ToolCallError) as info:
        await run(
            [call("nope"), call("fetch", id="1"), call("submit", answer="x")],
            executor=executor,
            options=RunOptions(retry_nudges=False, max_retries=5),
        )
    assert info.value.iterations == 1
    assert executor.batches == []


async def test_retry_nudges_on_survives_the_same_reply() -> None:
    result = await run([text("hello"), call("fetch", id="1"), call("submit", answer="x")])
    assert result.iterations == 3


# --------------------------------------------------------------------------- error recovery


HARD = ToolOutcome(error="boom", error_kind=ToolErrorKind.HARD)


async def test_error_recovery_off_first_hard_error_raises() -> None:
    executor = RecordingExecutor({"fetch": HARD})
    with pytest.raises(ToolExecutionError) as info:
        await run(
            [call("fetch", id="1"), call("fetch", id="2"), call("submit", answer="x")],
            executor=executor,
            options=RunOptions(error_recovery=False, max_tool_errors=5),
        )
    assert info.value.iterations == 1
    assert info.value.details["tool_name"] == "fetch"
    assert executor.executed == ["fetch"]


async def test_error_recovery_on_feeds_the_error_back() -> None:
    executor = RecordingExecutor({"check": HARD})
    result = await run(
        [call("fetch", id="1"), call("check"), call("submit", answer="x")], executor=executor
    )
    assert result.iterations == 3
    assert "[ToolError] boom" in [m.content for m in result.transcript]


async def test_error_recovery_off_does_not_count_resolution_errors() -> None:
    executor = RecordingExecutor(
        {"check": ToolOutcome(error="no such record", error_kind=ToolErrorKind.RESOLUTION)}
    )
    result = await run(
        [call("fetch", id="1"), call("check"), call("submit", answer="x")],
        executor=executor,
        options=RunOptions(error_recovery=False),
    )
    assert result.terminal_tool == "submit"


# --------------------------------------------------------------------------- step enforcement


async def test_step_enforcement_off_premature_terminal_ends_the_run() -> None:
    executor = RecordingExecutor({"submit": ToolOutcome(output="submitted")})
    backend = ScriptedBackend(scripts={WF: [call("submit", answer="early")]})
    result = await run(
        [], backend=backend, executor=executor, options=RunOptions(step_enforcement=False)
    )
    assert result.terminal_tool == "submit"
    assert result.result == "submitted"
    assert result.iterations == 1
    assert executor.executed == ["submit"]
    assert MessageType.STEP_NUDGE not in types_of(result.transcript)
    assert backend.requests[0].allowed == []


async def test_step_enforcement_off_ignores_prerequisites() -> None:
    executor = RecordingExecutor()
    result = await run(
        [call("check"), call("submit", answer="x")],
        wf=make_workflow(required=[], check_needs_fetch=True),
        executor=executor,
        options=RunOptions(step_enforcement=False, max_retries=0),
    )
    assert executor.executed == ["check", "submit"]
    assert MessageType.PREREQUISITE_NUDGE not in types_of(result.transcript)


async def test_step_enforcement_on_blocks_prerequisite_violations() -> None:
    executor = RecordingExecutor()
    result = await run(
        [call("check"), call("fetch", id="1"), call("check"), call("submit", answer="x")],
        wf=make_workflow(required=[], check_needs_fetch=True),
        executor=executor,
    )
    assert executor.executed == ["fetch", "check", "submit"]
    assert len(of_type(result.transcript, MessageType.PREREQUISITE_NUDGE)) == 1


async def test_default_enforcement_nudges_and_constrains() -> None:
    executor = RecordingExecutor()
    backend = ScriptedBackend(
        scripts={
            WF: [call("submit", answer="early"), call("fetch", id="1"), call("submit", answer="x")]
        }
    )
    result = await run([], backend=backend, executor=executor)
    assert len(of_type(result.transcript, MessageType.STEP_NUDGE)) == 1
    assert "submit" not in backend.requests[0].allowed
    assert "fetch" in backend.requests[0].allowed
    assert executor.executed == ["fetch", "submit"]


async def test_enforcement_constraint_restricts_allowed_without_nudges() -> None:
    executor = RecordingExecutor()
    backend = ScriptedBackend(scripts={WF: [call("fetch", id="1"), call("submit", answer="x")]})
    await run([], backend=backend, executor=executor, options=RunOptions(enforcement="constraint"))
    first, second = backend.requests
    assert "submit" not in first.allowed
    assert "fetch" in first.allowed
    assert "submit" in second.allowed


async def test_enforcement_constraint_sends_no_step_nudge() -> None:
    # The scripted model ignores the constraint; with nudges off nothing else
    # stops the premature terminal call.
    executor = RecordingExecutor()
    backend = ScriptedBackend(scripts={WF: [call("submit", answer="early")]})
    result = await run(
        [], backend=backend, executor=executor, options=RunOptions(enforcement="constraint")
    )
    assert "submit" not in backend.requests[0].allowed
    assert MessageType.STEP_NUDGE not in types_of(result.transcript)
    assert result.terminal_tool == "submit"
    assert executor.executed == ["submit"]


async def test_enforcement_nudge_allows_everything_but_nudges() -> None:
    executor = RecordingExecutor()
    backend = ScriptedBackend(
        scripts={
            WF: [call("submit", answer="early"), call("fetch", id="1"), call("submit", answer="x")]
        }
    )
    result = await run(
        [], backend=backend, executor=executor, options=RunOptions(enforcement="nudge")
    )
    assert [r.allowed for r in backend.requests] == [[], [], []]
    assert len(of_type(result.transcript, MessageType.STEP_NUDGE)) == 1
    assert executor.executed == ["fetch", "submit"]


# --------------------------------------------------------------------------- reasoning


class ReplyBackend:
    """Returns prepared BackendReplies in order (reasoning reported apart)."""

    def __init__(self, replies: list[BackendReply]) -> None:
        self.replies = list(replies)
        self.requests: list[ChatRequest] = []

    def info(self) -> BackendInfo:
        return BackendInfo(name="replies", model="m", context_budget_tokens=8192)

    async def complete(self, request: ChatRequest, on_chunk: ChunkSink | None) -> BackendReply:
        self.requests.append(request)
        return self.replies.pop(0)

    async def aclose(self) -> None:
        return None


def reply(response: LLMResponse, reasoning: str = "") -> BackendReply:
    return BackendReply(response=response, usage=Usage(model_calls=1), reasoning=reasoning)


async def test_think_block_becomes_a_reasoning_message_before_the_call() -> None:
    executor = RecordingExecutor()
    result = await run(
        [
            text('<think>I need the record.</think>{"tool": "fetch", "args": {"id": "1"}}'),
            call("submit", answer="x"),
        ],
        executor=executor,
        options=RunOptions(max_retries=0),
    )
    t = result.transcript
    assert types_of(t)[2:5] == [
        MessageType.REASONING,
        MessageType.TOOL_CALL,
        MessageType.TOOL_RESULT,
    ]
    assert t[2].role is MessageRole.ASSISTANT
    assert t[2].content == "I need the record."
    assert not t[2].transient
    assert t[3].tool_calls == [ToolCallInfo("call_1", "fetch", {"id": "1"})]
    assert executor.executed == ["fetch", "submit"]


async def test_backend_reported_reasoning_becomes_a_reasoning_message() -> None:
    backend = ReplyBackend(
        [
            reply([ToolCall("fetch", {"id": "1"})], reasoning="Fetch first."),
            reply([ToolCall("submit", {"answer": "x"})]),
        ]
    )
    result = await run([], backend=backend)
    t = result.transcript
    assert types_of(t)[2:] == [
        MessageType.REASONING,
        MessageType.TOOL_CALL,
        MessageType.TOOL_RESULT,
        MessageType.TOOL_CALL,
        MessageType.TOOL_RESULT,
    ]
    assert (t[2].role, t[2].content) == (MessageRole.ASSISTANT, "Fetch first.")


async def test_backend_reasoning_and_think_block_are_joined() -> None:
    backend = ReplyBackend(
        [
            reply(
                TextResponse('<think>second</think>{"tool": "fetch", "args": {"id": "1"}}'),
                reasoning="first",
            ),
            reply([ToolCall("submit", {"answer": "x"})]),
        ]
    )
    result = await run([], backend=backend)
    (reasoning,) = of_type(result.transcript, MessageType.REASONING)
    assert reasoning.content == "first\nsecond"


async def test_reasoning_only_reply_costs_a_retry_without_text() -> None:
    result = await run(
        [text("<think>Hmm, which tool?</think>"), call("fetch", id="1"), call("submit", answer="x")]
    )
    assert types_of(result.transcript)[2:4] == [MessageType.REASONING, MessageType.RETRY_NUDGE]
    assert MessageType.TEXT_RESPONSE not in types_of(result.transcript)


async def test_call_rehearsed_while_thinking_is_not_executed() -> None:
    executor = RecordingExecutor()
    result = await run(
        [
            text('<think>maybe submit[ARGS]{"answer": "guess"}</think>fetch[ARGS]{"id": "1"}'),
            call("submit", answer="x"),
        ],
        executor=executor,
    )
    assert executor.batches[0] == (1, [ToolCallInfo("call_1", "fetch", {"id": "1"})])
    assert result.result == "submit ok"


# --------------------------------------------------------------------------- respond tool


def respond_workflow(*, tools: list[ToolSpec] | None = None) -> Workflow:
    wf = Workflow(name=WF, tools=[FETCH] if tools is None else tools, respond_tool=True)
    validate_workflow(wf)
    return wf.with_builtins()


def test_with_builtins_adds_a_terminal_respond_tool() -> None:
    wf = respond_workflow()
    assert [t.name for t in wf.tools] == ["fetch", RESPOND_TOOL]
    assert wf.terminal_tools == [RESPOND_TOOL]
    spec = wf.tool(RESPOND_TOOL)
    assert spec is not None
    assert spec.parameters["required"] == ["message"]
    assert spec.validator.is_valid({"message": "hi"})
    assert not spec.validator.is_valid({})
    # Idempotent.
    assert [t.name for t in wf.with_builtins().tools] == ["fetch", RESPOND_TOOL]


def test_with_builtins_without_respond_tool_is_unchanged() -> None:
    wf = make_workflow()
    assert wf.with_builtins() is wf
    assert RESPOND_TOOL not in [t.name for t in wf.tools]


async def test_respond_ends_the_run_without_the_executor() -> None:
    executor = RecordingExecutor()
    result = await run(
        [call(RESPOND_TOOL, message="Hello there!")], wf=respond_workflow(), executor=executor
    )
    assert result.terminal_tool == RESPOND_TOOL
    assert result.result == "Hello there!"
    assert result.iterations == 1
    assert executor.batches == []
    last = result.transcript[-1]
    assert (last.role, last.type, last.content) == (
        MessageRole.TOOL,
        MessageType.TOOL_RESULT,
        "Hello there!",
    )


async def test_respond_after_a_client_tool() -> None:
    executor = RecordingExecutor()
    result = await run(
        [call("fetch", id="1"), call(RESPOND_TOOL, message="Record 1 is fine.")],
        wf=respond_workflow(),
        executor=executor,
    )
    assert result.result == "Record 1 is fine."
    assert executor.executed == ["fetch"]


@pytest.mark.parametrize("respond_first", [True, False])
async def test_batch_mixing_respond_and_a_client_tool(respond_first: bool) -> None:
    executor = RecordingExecutor()
    pairs: list[tuple[str, dict[str, Any]]] = [
        (RESPOND_TOOL, {"message": "bye"}),
        ("fetch", {"id": "1"}),
    ]
    if not respond_first:
        pairs.reverse()
    result = await run([calls(*pairs)], wf=respond_workflow(), executor=executor)

    assert [[c.name for c in batch] for _, batch in executor.batches] == [["fetch"]]
    results = of_type(result.transcript, MessageType.TOOL_RESULT)
    expected = [(RESPOND_TOOL, "bye"), ("fetch", "fetch ok")]
    if not respond_first:
        expected.reverse()
    assert [(m.tool_name, m.content) for m in results] == expected
    (call_msg,) = of_type(result.transcript, MessageType.TOOL_CALL)
    assert [m.tool_call_id for m in results] == [c.call_id for c in call_msg.tool_calls]
    assert result.terminal_tool == RESPOND_TOOL
    assert result.result == "bye"


async def test_respond_without_message_is_rejected() -> None:
    executor = RecordingExecutor()
    result = await run(
        [call(RESPOND_TOOL), call(RESPOND_TOOL, message="ok")],
        wf=respond_workflow(),
        executor=executor,
    )
    (nudge,) = of_type(result.transcript, MessageType.RETRY_NUDGE)
    assert "'message' is a required property" in nudge.content
    assert result.result == "ok"


async def test_user_tool_named_respond_goes_to_the_executor_without_the_builtin() -> None:
    user_respond = ToolSpec(RESPOND_TOOL, parameters={"type": "object", "properties": {}})
    wf = Workflow(name=WF, tools=[user_respond], terminal_tools=[RESPOND_TOOL])
    validate_workflow(wf)
    executor = RecordingExecutor({RESPOND_TOOL: ToolOutcome(output="from client")})
    result = await run([call(RESPOND_TOOL)], wf=wf.with_builtins(), executor=executor)
    assert executor.executed == [RESPOND_TOOL]
    assert result.result == "from client"


def test_validate_accepts_respond_only_workflow() -> None:
    validate_workflow(Workflow(name=WF, tools=[], respond_tool=True))
    wf = respond_workflow(tools=[])
    assert [t.name for t in wf.tools] == [RESPOND_TOOL]
    assert wf.terminal_tools == [RESPOND_TOOL]


def test_validate_still_requires_tools_without_respond_tool() -> None:
    with pytest.raises(WorkflowError) as info:
        validate_workflow(Workflow(name=WF, tools=[]))
    assert info.value.field == "workflow.tools"
    with pytest.raises(WorkflowError) as info:
        validate_workflow(Workflow(name=WF, tools=[FETCH]))
    assert info.value.field == "workflow.terminal_tools"


def test_validate_rejects_user_tool_named_respond_when_builtin_enabled() -> None:
    wf = Workflow(
        name=WF,
        tools=[FETCH, ToolSpec(RESPOND_TOOL)],
        respond_tool=True,
    )
    with pytest.raises(WorkflowError) as info:
        validate_workflow(wf)
    assert info.value.field == "workflow.tools[1].name"
    # Without the built-in the name is an ordinary tool name.
    validate_workflow(
        Workflow(name=WF, tools=[FETCH, ToolSpec(RESPOND_TOOL)], terminal_tools=[RESPOND_TOOL])
    )


# --------------------------------------------------------------------------- request options


@pytest.mark.parametrize("parallel", [True, False])
async def test_parallel_tool_calls_sets_chat_request_parallel(parallel: bool) -> None:
    backend = ScriptedBackend(scripts={WF: [call("fetch", id="1"), call("submit", answer="x")]})
    await run([], backend=backend, options=RunOptions(parallel_tool_calls=parallel))
    assert [r.parallel for r in backend.requests] == [parallel, parallel]


async def test_reasoning_replay_is_forwarded_to_the_backend() -> None:
    backend = ScriptedBackend(scripts={WF: [call("fetch", id="1"), call("submit", answer="x")]})
    await run([], backend=backend, options=RunOptions(reasoning_replay="full"))
    assert [r.reasoning_replay for r in backend.requests] == ["full", "full"]


async def test_constrained_decoding_switch_is_forwarded() -> None:
    backend = ScriptedBackend(scripts={WF: [call("fetch", id="1"), call("submit", answer="x")]})
    await run([], backend=backend, options=RunOptions(constrained_decoding=False))
    assert [r.constrained for r in backend.requests] == [False, False]


async def test_repeating_a_lookup_that_found_nothing_is_rejected_and_counted() -> None:
    """The 270M model repeated an identical 'not found' call until max_iterations
    (eval: 15 times per run); the identical repeat now costs a retry instead of
    another tool execution."""
    from forge_core.backends.scripted import ScriptedBackend, call
    from forge_core.errors import ToolCallError
    from forge_core.loop import ToolErrorKind, ToolOutcome, run_workflow
    from forge_core.workflow import RunOptions, ToolSpec, Workflow

    executed: list[dict[str, object]] = []

    class NotFound:
        async def execute(self, calls: list[ToolCallInfo], iteration: int) -> list[ToolOutcome]:
            executed.extend(c.args for c in calls)
            return [
                ToolOutcome(error="no user named Bob", error_kind=ToolErrorKind.RESOLUTION)
                for _ in calls
            ]

    schema = {"type": "object", "properties": {"user": {"type": "string"}}}
    wf = Workflow(
        "lookup",
        tools=[ToolSpec("find_user", "Find", schema), ToolSpec("done", "Done", schema)],
        required_steps=["find_user"],
        terminal_tools=["done"],
    )
    backend = ScriptedBackend(scripts={"lookup": [call("find_user", user="Bob")] * 10})
    with pytest.raises(ToolCallError) as failed:
        await run_workflow(
            wf,
            "Find Bob",
            backend=backend,
            executor=NotFound(),
            options=RunOptions(max_retries=2, max_iterations=10),
        )
    # Executed once; the next three identical calls were rejected (3 > max_retries 2).
    assert executed == [{"user": "Bob"}]
    assert failed.value.iterations == 4
    nudges = [m.content for m in failed.value.transcript if m.content.startswith("[Repeated]")]
    assert len(nudges) == 3 and "no user named Bob" in nudges[0]
