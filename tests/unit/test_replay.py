"""One turn decided from a recorded conversation (forge_core/replay.py): the
engine state a `Run` would have (steps, prerequisites, retry counts, failed
calls) is rebuilt from the conversation, so a caller's own loop gets the same
decisions. No model runs here: replies are given, as a Guard caller gives
them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest

from forge_core.backends.base import BackendReply
from forge_core.backends.scripted import ScriptedBackend, call
from forge_core.errors import PrerequisiteError, StepEnforcementError, ToolCallError
from forge_core.hooks import RunHooks
from forge_core.loop import ToolOutcome, run_workflow
from forge_core.messages import Message, MessageRole, MessageType, ToolCallInfo
from forge_core.replay import (
    ConversationError,
    TurnCalls,
    TurnDone,
    TurnRetry,
    calls_reply,
    next_turn,
    resume_run,
    text_reply,
)
from forge_core.workflow import Prerequisite, RunOptions, ToolSpec, Workflow, validate_workflow

ORDER = {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}
WF = Workflow(
    name="refunds",
    tools=[
        ToolSpec("get_order", "Look up an order.", ORDER),
        ToolSpec(
            "refund",
            "Refund an order.",
            {
                "type": "object",
                "properties": {"order_id": {"type": "string"}, "amount": {"type": "number"}},
                "required": ["order_id", "amount"],
            },
            prerequisites=[Prerequisite("get_order", match_arg="order_id")],
        ),
        ToolSpec(
            "finish",
            "Report the outcome.",
            {"type": "object", "properties": {"summary": {"type": "string"}}},
        ),
    ],
    required_steps=["get_order"],
    terminal_tools=["finish"],
)
validate_workflow(WF)

USER = Message(MessageRole.USER, "Refund order A-1 in full.", MessageType.USER_INPUT)


def _calls(*calls: tuple[str, str, dict[str, object]]) -> Message:
    return Message(
        MessageRole.ASSISTANT,
        "",
        MessageType.TOOL_CALL,
        tool_calls=[ToolCallInfo(i, n, a) for i, n, a in calls],
    )


def _result(call_id: str, name: str, content: str) -> Message:
    return Message(
        MessageRole.TOOL, content, MessageType.TOOL_RESULT, tool_call_id=call_id, tool_name=name
    )


def _reply(name: str, args: dict[str, object], call_id: str = "m1") -> BackendReply:
    return calls_reply([(call_id, name, json.dumps(args))])


async def test_a_terminal_call_before_the_required_step_is_refused_with_the_step_nudge() -> None:
    verdict = await next_turn(WF, [USER], reply=_reply("finish", {"summary": "done"}))
    assert isinstance(verdict, TurnRetry)
    assert verdict.attempt == 1
    assert "get_order" in verdict.reason
    # The refused call and its correction, answering the same id.
    assert verdict.messages[0].tool_calls[0].call_id == "m1"
    assert verdict.messages[0].transient
    assert verdict.messages[1].type is MessageType.STEP_NUDGE
    assert verdict.messages[1].tool_call_id == "m1"


async def test_a_step_recorded_in_the_conversation_counts_across_requests() -> None:
    history = [
        USER,
        _calls(("c1", "get_order", {"order_id": "A-1"})),
        _result("c1", "get_order", "A-1: 40.00 EUR"),
    ]
    verdict = await next_turn(WF, history, reply=_reply("finish", {"summary": "refunded"}, "m2"))
    assert isinstance(verdict, TurnCalls)
    assert [(c.call_id, c.name) for c in verdict.calls] == [("m2", "finish")]


async def test_a_failed_step_does_not_count() -> None:
    history = [
        USER,
        _calls(("c1", "get_order", {"order_id": "A-1"})),
        _result("c1", "get_order", "[ToolError] order service unavailable"),
    ]
    verdict = await next_turn(WF, history, reply=_reply("finish", {"summary": "x"}))
    assert isinstance(verdict, TurnRetry)


async def test_prerequisites_follow_the_recorded_arguments() -> None:
    history = [
        USER,
        _calls(("c1", "get_order", {"order_id": "A-1"})),
        _result("c1", "get_order", "A-1: 40 EUR"),
    ]
    other = await next_turn(WF, history, reply=_reply("refund", {"order_id": "B-2", "amount": 40}))
    assert isinstance(other, TurnRetry)
    assert other.messages[1].type is MessageType.PREREQUISITE_NUDGE
    same = await next_turn(WF, history, reply=_reply("refund", {"order_id": "A-1", "amount": "40"}))
    assert isinstance(same, TurnCalls)
    # Coerced like a Run's call: "40" -> 40, and the coercion is reported.
    assert same.calls[0].args == {"order_id": "A-1", "amount": 40}
    assert [c.path for c in same.calls[0].coercions] == ["/amount"]


async def test_the_terminal_result_in_the_conversation_is_done() -> None:
    history = [
        USER,
        _calls(("c1", "get_order", {"order_id": "A-1"})),
        _result("c1", "get_order", "A-1: 40 EUR"),
        _calls(("c2", "finish", {"summary": "refunded"})),
        _result("c2", "finish", "reported"),
    ]
    verdict = await next_turn(WF, history)
    assert isinstance(verdict, TurnDone)
    assert (verdict.result.terminal_tool, verdict.result.result) == ("finish", "reported")
    assert verdict.result.terminal_call_id == "c2"


async def test_no_reply_and_no_terminal_result_names_the_reply() -> None:
    with pytest.raises(ConversationError) as err:
        await next_turn(WF, [USER])
    assert err.value.field_path == "reply"


async def test_a_conversation_without_a_user_request_is_refused() -> None:
    with pytest.raises(ConversationError) as err:
        await next_turn(WF, [], reply=_reply("get_order", {"order_id": "A-1"}))
    assert err.value.field_path == "messages"


async def test_kept_corrections_count_toward_the_retry_budget() -> None:
    """A caller that appends each correction and retries runs into the same
    consecutive-retry budget a Run has."""
    options = RunOptions(max_retries=2)
    history = [USER]
    bad = text_reply("I think the order is fine.")
    attempts = []
    with pytest.raises(ToolCallError):
        for _ in range(5):
            verdict = await next_turn(WF, history, options=options, reply=bad)
            assert isinstance(verdict, TurnRetry)
            attempts.append(verdict.attempt)
            history = history + verdict.messages
    assert attempts == [1, 2]


async def test_premature_terminal_calls_end_the_run_at_the_step_limit() -> None:
    options = RunOptions(max_premature_attempts=2)
    history = [USER]
    with pytest.raises(StepEnforcementError):
        for _ in range(4):
            verdict = await next_turn(WF, history, options=options, reply=_reply("finish", {}))
            assert isinstance(verdict, TurnRetry)
            history = history + verdict.messages


async def test_prerequisite_violations_end_the_run_at_their_limit() -> None:
    options = RunOptions(max_prereq_violations=2)
    history = [USER]
    with pytest.raises(PrerequisiteError):
        for _ in range(4):
            verdict = await next_turn(
                WF,
                history,
                options=options,
                reply=_reply("refund", {"order_id": "A-1", "amount": 1}),
            )
            assert isinstance(verdict, TurnRetry)
            history = history + verdict.messages


async def test_a_text_reply_is_read_with_the_rescue_parser() -> None:
    verdict = await next_turn(
        WF, [USER], reply=text_reply('{"tool": "get_order", "args": {"order_id": "A-1"}}')
    )
    assert isinstance(verdict, TurnCalls)
    assert verdict.calls[0].name == "get_order"
    # The model gave no id: the call is numbered after nothing recorded.
    assert verdict.calls[0].call_id == "call_1"


async def test_new_ids_never_repeat_recorded_ones() -> None:
    history = [
        USER,
        _calls(("call_1", "get_order", {"order_id": "A-1"})),
        _result("call_1", "get_order", "ok"),
    ]
    verdict = await next_turn(WF, history, reply=text_reply('{"tool": "finish", "args": {}}'))
    assert isinstance(verdict, TurnCalls)
    assert verdict.calls[0].call_id == "call_2"


async def test_a_repeated_failed_call_is_refused_from_the_recorded_failure() -> None:
    history = [
        USER,
        _calls(("c1", "get_order", {"order_id": "A-9"})),
        _result("c1", "get_order", "[ToolError] ValueError: malformed order id 'A-9'"),
    ]
    verdict = await next_turn(WF, history, reply=_reply("get_order", {"order_id": "A-9"}))
    assert isinstance(verdict, TurnRetry)
    assert "already failed" in verdict.reason


async def test_with_a_live_backend_refusals_are_retried_inside_the_turn() -> None:
    """The OpenAI endpoint's mode: a refused reply goes back to the model with
    its correction, and only the accepted call comes out."""
    backend = ScriptedBackend(
        {WF.name: [call("finish", summary="early"), call("get_order", order_id="A-1")]}
    )
    verdict = await next_turn(WF, [USER], backend=backend)
    assert isinstance(verdict, TurnCalls)
    assert [c.name for c in verdict.calls] == ["get_order"]
    assert verdict.usage.model_calls == 2


@dataclass
class _Tracking(ScriptedBackend):
    forgotten: list[str] = field(default_factory=list)

    def forget_run(self, run_id: str) -> None:
        self.forgotten.append(run_id)


async def test_the_live_backend_forgets_each_turn_s_run() -> None:
    """Each turn is a run of its own: a backend's per-run state (slot
    affinity) is dropped when the turn ends, or it would grow per request."""
    backend = _Tracking({WF.name: [call("get_order", order_id="A-1")]})
    await next_turn(WF, [USER], backend=backend)
    assert backend.forgotten == [backend.requests[-1].run_id]


class _Tools:
    """Runs the refunds workflow's tools, counting each call id it ran."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    async def execute(self, calls: list[ToolCallInfo], iteration: int) -> list[ToolOutcome]:
        self.ran += [c.call_id for c in calls]
        return [ToolOutcome(output=f"{c.name} ok") for c in calls]


async def test_a_resumed_run_repeats_no_model_call_and_no_answered_tool_call() -> None:
    """A run stopped after its first tool call was sent but before the result
    came back (the server died): resumed from its transcript, the model is
    not asked for that turn again, the unanswered call is sent once more, and
    the run ends as it would have."""
    script = [call("finish", summary="early"), call("get_order", order_id="A-1")]
    script += [call("finish", summary="refunded")]
    first = ScriptedBackend({WF.name: script})
    transcript: list[Message] = []

    async def record(message: Message, index: int) -> None:
        transcript.append(message)

    class Dies:
        async def execute(self, calls: list[ToolCallInfo], iteration: int) -> list[ToolOutcome]:
            raise RuntimeError("the server was killed")

    with pytest.raises(RuntimeError):
        await run_workflow(
            WF, USER.content, backend=first, executor=Dies(), hooks=RunHooks(on_message=record)
        )
    assert [m.type for m in transcript][-1] is MessageType.TOOL_CALL
    sent = transcript[-1].tool_calls[0].call_id

    later = ScriptedBackend({WF.name: [call("finish", summary="refunded")]})
    tools = _Tools()
    new: list[Message] = []

    async def heard(message: Message, index: int) -> None:
        new.append(message)

    result = await resume_run(
        WF, transcript, backend=later, executor=tools, hooks=RunHooks(on_message=heard)
    )
    assert result.terminal_tool == "finish"
    # Only the finishing turn asked the model; get_order ran once more, then finish.
    assert result.usage.model_calls == 1
    assert tools.ran == [sent, "call_3"]
    # The callbacks heard only what is new: no message of the first run again.
    assert new[0].tool_call_id == sent and new[0].type is MessageType.TOOL_RESULT


async def test_a_resumed_run_uses_the_results_the_server_kept() -> None:
    """A result the client sent before the crash (journaled, not yet in the
    transcript) is used, not asked for again."""
    script = [call("get_order", order_id="A-1")]
    transcript: list[Message] = []

    async def record(message: Message, index: int) -> None:
        transcript.append(message)

    class Dies:
        async def execute(self, calls: list[ToolCallInfo], iteration: int) -> list[ToolOutcome]:
            raise RuntimeError("killed")

    with pytest.raises(RuntimeError):
        await run_workflow(
            WF,
            USER.content,
            backend=ScriptedBackend({WF.name: script}),
            executor=Dies(),
            hooks=RunHooks(on_message=record),
        )
    sent = transcript[-1].tool_calls[0].call_id
    tools = _Tools()
    result = await resume_run(
        WF,
        transcript,
        backend=ScriptedBackend({WF.name: [call("finish", summary="done")]}),
        executor=tools,
        known_results={sent: ToolOutcome(output="A-1: 40 EUR")},
    )
    assert result.terminal_tool == "finish"
    assert tools.ran == ["call_2"]
    assert any(m.content == "A-1: 40 EUR" for m in result.transcript)
