"""ForgeClient.guard against the real loopback server: a caller's own loop
gets Run's decisions as the SDK's typed verdicts, Run's failures as the
RunFailedError subclasses and bad input as RequestRejectedError."""

from __future__ import annotations

import pytest

from forge_client import (
    ForgeClient,
    GuardCalls,
    GuardDone,
    GuardRetry,
    Message,
    MessageType,
    RequestRejectedError,
    Role,
    RunOptions,
    ToolCall,
    ToolCallError,
)
from forge_core.backends.scripted import ScriptedBackend
from tests.helpers import address, running_server
from tests.integration.test_run_stream import weather_workflow

USER = Message(Role.USER, "Weather in Paris?")


async def test_a_guarded_loop_is_corrected_runs_its_calls_and_is_done() -> None:
    ran: list[str] = []
    wf = weather_workflow(ran)
    async with running_server(ScriptedBackend()) as server, ForgeClient(address(server)) as client:
        history = [USER]
        # The terminal tool before the required step: a step correction.
        early = await client.guard(
            wf,
            history,
            reply_text='{"tool": "report_weather", "args": {"city": "Paris", "weather": "?"}}',
        )
        assert isinstance(early, GuardRetry)
        assert early.attempt == 1
        assert "get_weather" in early.reason
        assert early.messages[-1].type == MessageType.STEP_NUDGE
        assert all(m.transient for m in early.messages)
        history += early.messages

        # A native-API reply keeps its id; 7 is coerced to "7".
        calls = await client.guard(
            wf, history, reply_tool_calls=[ToolCall("x1", "get_weather", '{"city": 7}')]
        )
        assert isinstance(calls, GuardCalls)
        (call,) = calls.calls
        assert (call.call_id, call.tool_name, call.arguments) == (
            "x1",
            "get_weather",
            {"city": "7"},
        )
        assert [c.path for c in call.coercions] == ["/city"]
        assert calls.message.role == Role.ASSISTANT
        assert calls.message.tool_calls == (ToolCall("x1", "get_weather", call.arguments_json),)
        # The caller runs its tools itself (here: the workflow's own function).
        output = str(await wf.tools[call.tool_name].invoke(call.arguments_json))
        history += [calls.message, call.result_message(output)]
        assert ran == ["get_weather:7"]

        final = await client.guard(
            wf,
            history,
            reply_tool_calls=[
                ToolCall("x2", "report_weather", '{"city": "7", "weather": "72F and sunny in 7"}')
            ],
        )
        assert isinstance(final, GuardCalls)
        history += [final.message, final.calls[0].result_message("sent")]

        done = await client.guard(wf, history)
        assert done == GuardDone("report_weather", "sent", "x2")
        # The workflow's tools never ran on the server's behalf.
        assert ran == ["get_weather:7"]


async def test_a_failed_call_is_recorded_as_a_tool_error() -> None:
    wf = weather_workflow([])
    async with running_server(ScriptedBackend()) as server, ForgeClient(address(server)) as client:
        calls = await client.guard(
            wf, [USER], reply_tool_calls=[ToolCall("a", "get_weather", '{"city": "Paris"}')]
        )
        assert isinstance(calls, GuardCalls)
        failed = calls.calls[0].result_message(error="weather service down")
        assert failed.content == "[ToolError] weather service down"
        # A failed lookup did not complete the step: reporting now is early.
        early = await client.guard(
            wf,
            [USER, calls.message, failed],
            reply_tool_calls=[ToolCall("b", "report_weather", '{"city": "Paris", "weather": "x"}')],
        )
        assert isinstance(early, GuardRetry)
        assert early.messages[-1].type == MessageType.STEP_NUDGE


async def test_the_retry_budget_ends_in_the_run_failed_error() -> None:
    wf = weather_workflow([])
    async with running_server(ScriptedBackend()) as server, ForgeClient(address(server)) as client:
        history = [USER]
        first = await client.guard(
            wf, history, reply_text="It is probably sunny.", options=RunOptions(max_retries=1)
        )
        assert isinstance(first, GuardRetry)
        history += first.messages
        with pytest.raises(ToolCallError) as failed:
            await client.guard(
                wf, history, reply_text="Still sunny.", options=RunOptions(max_retries=1)
            )
        assert failed.value.reason == "TOOL_CALL"
        # The transcript is the conversation the guard was given.
        assert failed.value.transcript[0].content == USER.content
        assert len(failed.value.transcript) == len(history)


@pytest.mark.parametrize(
    ("messages", "kwargs", "field"),
    [
        ([USER, Message(Role.TOOL, "out", tool_call_id="nope")], {}, "messages[1].tool_call_id"),
        ([USER], {}, "reply_text"),
        (
            [USER],
            {"reply_text": "x", "reply_tool_calls": [ToolCall("a", "get_weather")]},
            "reply_tool_calls",
        ),
        ([USER], {"reply_tool_calls": [ToolCall("a", "")]}, "reply_tool_calls[0].name"),
    ],
)
async def test_bad_input_is_a_rejection_naming_the_field(
    messages: list[Message], kwargs: dict[str, object], field: str
) -> None:
    wf = weather_workflow([])
    async with running_server(ScriptedBackend()) as server, ForgeClient(address(server)) as client:
        with pytest.raises(RequestRejectedError) as rejected:
            await client.guard(wf, messages, **kwargs)  # type: ignore[arg-type]
        assert rejected.value.code == "INVALID_ARGUMENT"
        assert rejected.value.field == field
