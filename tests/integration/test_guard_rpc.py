"""ForgeService.Guard on the real loopback server, through the generated stubs:
a caller that runs its own loop and model calls gets Run's decisions (steps,
coercion, retry budget) and Run's error model for bad input. The server's
backend is a ScriptedBackend that Guard never calls.
"""

from __future__ import annotations

import json

import grpc
import pytest

from forge.v1 import forge_service_pb2 as pb
from forge.v1 import forge_service_pb2_grpc as pb_grpc
from forge.v1 import messages_pb2 as mpb
from forge.v1 import workflow_pb2 as wpb
from forge_client.errors import rejected_error as _rejected
from forge_core.backends.scripted import ScriptedBackend
from tests.helpers import address, running_server
from tests.integration.test_run_stream import weather_workflow

USER = mpb.Message(role=mpb.ROLE_USER, content="Weather in Paris?")


def _workflow() -> wpb.Workflow:
    return weather_workflow([]).to_proto()


def _call(call_id: str, name: str, **args: object) -> mpb.Message:
    return mpb.Message(
        role=mpb.ROLE_ASSISTANT,
        tool_calls=[mpb.ToolCall(id=call_id, name=name, arguments_json=json.dumps(args))],
    )


def _result(call_id: str, content: str) -> mpb.Message:
    return mpb.Message(role=mpb.ROLE_TOOL, content=content, tool_call_id=call_id)


async def test_a_guarded_loop_is_corrected_then_runs_then_is_done() -> None:
    async with running_server(ScriptedBackend()) as server:
        async with grpc.aio.insecure_channel(address(server)) as channel:
            stub = pb_grpc.ForgeServiceStub(channel)
            history = [USER]
            # The model skips the required step: a correction, nothing to run.
            early = await stub.Guard(
                pb.GuardRequest(
                    workflow=_workflow(),
                    messages=history,
                    reply_text=json.dumps(
                        {"tool": "report_weather", "args": {"city": "Paris", "weather": "?"}}
                    ),
                )
            )
            assert early.WhichOneof("verdict") == "retry"
            assert early.retry.attempt == 1
            assert "get_weather" in early.retry.reason
            nudge = early.retry.messages[-1]
            assert nudge.type == mpb.MESSAGE_TYPE_STEP_NUDGE and nudge.transient
            history += list(early.retry.messages)

            # A native-API reply with its own id; 7 is coerced to "7".
            ok = await stub.Guard(
                pb.GuardRequest(
                    workflow=_workflow(),
                    messages=history,
                    reply_tool_calls=[
                        mpb.ToolCall(id="x1", name="get_weather", arguments_json='{"city": 7}')
                    ],
                )
            )
            assert ok.WhichOneof("verdict") == "calls"
            (run,) = ok.calls.calls
            assert (run.call_id, run.tool_name, json.loads(run.arguments_json)) == (
                "x1",
                "get_weather",
                {"city": "7"},
            )
            assert [c.path for c in run.coercions] == ["/city"]
            history += [_call("x1", "get_weather", city="7"), _result("x1", "72F in 7")]

            final = await stub.Guard(
                pb.GuardRequest(
                    workflow=_workflow(),
                    messages=history,
                    reply_tool_calls=[
                        mpb.ToolCall(
                            id="x2",
                            name="report_weather",
                            arguments_json='{"city": "7", "weather": "72F"}',
                        )
                    ],
                )
            )
            assert final.WhichOneof("verdict") == "calls"
            history += [
                _call("x2", "report_weather", city="7", weather="72F"),
                _result("x2", "sent"),
            ]

            done = await stub.Guard(pb.GuardRequest(workflow=_workflow(), messages=history))
            assert done.WhichOneof("verdict") == "done"
            assert (done.done.terminal_tool, done.done.result, done.done.terminal_call_id) == (
                "report_weather",
                "sent",
                "x2",
            )


async def test_the_retry_budget_spans_requests_and_ends_in_failed() -> None:
    options = wpb.RunOptions(max_retries=1)
    async with running_server(ScriptedBackend()) as server:
        async with grpc.aio.insecure_channel(address(server)) as channel:
            stub = pb_grpc.ForgeServiceStub(channel)
            history = [USER]
            verdicts = []
            for _ in range(3):
                reply = await stub.Guard(
                    pb.GuardRequest(
                        workflow=_workflow(),
                        options=options,
                        messages=history,
                        reply_text="It is probably sunny.",
                    )
                )
                verdicts.append(reply.WhichOneof("verdict"))
                if reply.WhichOneof("verdict") != "retry":
                    break
                history += list(reply.retry.messages)
            assert verdicts == ["retry", "failed"]
            assert reply.failed.reason == pb.FAILURE_REASON_TOOL_CALL


@pytest.mark.parametrize(
    ("request_", "field"),
    [
        (pb.GuardRequest(messages=[USER], reply_text="x"), "workflow"),
        (
            pb.GuardRequest(workflow=_workflow(), messages=[USER, _result("nope", "out")]),
            "messages[1].tool_call_id",
        ),
        (pb.GuardRequest(workflow=_workflow(), messages=[USER]), "reply_text"),
        (
            pb.GuardRequest(
                workflow=_workflow(),
                messages=[mpb.Message(role=mpb.ROLE_SYSTEM, content="be brief")],
                reply_text="x",
            ),
            "messages",
        ),
        (
            pb.GuardRequest(
                workflow=_workflow(),
                messages=[USER],
                reply_text="x",
                reply_tool_calls=[mpb.ToolCall(id="a", name="get_weather")],
            ),
            "reply_tool_calls",
        ),
    ],
)
async def test_bad_input_is_invalid_argument_naming_the_field(
    request_: pb.GuardRequest, field: str
) -> None:
    async with running_server(ScriptedBackend()) as server:
        async with grpc.aio.insecure_channel(address(server)) as channel:
            stub = pb_grpc.ForgeServiceStub(channel)
            with pytest.raises(grpc.aio.AioRpcError) as failed:
                await stub.Guard(request_)
            err = failed.value
            assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert (
                _rejected(err.code(), err.details() or "", err.trailing_metadata()).field == field
            )
            # The server goes on serving.
            ok = await stub.Guard(
                pb.GuardRequest(
                    workflow=_workflow(),
                    messages=[USER],
                    reply_text='{"tool": "get_weather", "args": {"city": "Paris"}}',
                )
            )
            assert ok.WhichOneof("verdict") == "calls"
