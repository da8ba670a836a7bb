"""The real gRPC server on a loopback port, driven by the real Python SDK.

The model is a ScriptedBackend (scripted turns) so each guardrail path is
deterministic; everything else — server, stream, SDK, tool execution in the
client — is the production code.
"""

from __future__ import annotations

import asyncio
import json
import time

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from forge.v1 import forge_service_pb2 as pb
from forge.v1 import forge_service_pb2_grpc as pb_grpc
from forge_client import (
    ApprovalDecided,
    ApprovalRequested,
    Chunk,
    Event,
    ForgeClient,
    MessageAppended,
    MessageType,
    RequestRejectedError,
    RunOptions,
    RunStarted,
    StepEnforcementError,
    ToolCallStarted,
    ToolExecutionError,
    ToolResolutionError,
    Workflow,
    WorkflowCancelledError,
)
from forge_core.backends.base import ChatRequest, ToolCall
from forge_core.backends.scripted import ScriptedBackend, Turn, call, calls, text
from tests.helpers import address, running_server, settled


def weather_workflow(log: list[str]) -> Workflow:
    wf = Workflow("weather", "Look up weather and report it.")

    @wf.tool(required=True)
    def get_weather(city: str) -> str:
        """Get current weather for a city."""
        log.append(f"get_weather:{city}")
        return f"72F and sunny in {city}"

    @wf.tool(terminal=True)
    def report_weather(city: str, weather: str) -> dict[str, str]:
        """Report the weather."""
        log.append(f"report_weather:{city}")
        return {"city": city, "report": weather}

    return wf


WEATHER_SCRIPT = [
    call("get_weather", city="Paris"),
    call("report_weather", city="Paris", weather="72F and sunny in Paris"),
]


async def test_tool_calls_round_trip_through_the_client() -> None:
    backend = ScriptedBackend(scripts={"weather": WEATHER_SCRIPT})
    ran: list[str] = []
    events: list[Event] = []
    async with running_server(backend) as server, ForgeClient(address(server)) as client:
        result = await client.run(
            weather_workflow(ran), "Weather in Paris?", on_event=events.append
        )

    assert ran == ["get_weather:Paris", "report_weather:Paris"]
    assert result.terminal_tool == "report_weather"
    # The SDK returns the Python value the terminal function produced...
    assert result.value == {"city": "Paris", "report": "72F and sunny in Paris"}
    # ...and the server saw its JSON encoding.
    assert json.loads(result.output) == result.value
    assert result.iterations == 2
    # The tool's output travelled client -> server -> model.
    second_request = backend.requests[1]
    assert second_request.messages[-1].content == "72F and sunny in Paris"
    assert isinstance(events[0], RunStarted)
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    assert [(e.tool_name, e.arguments) for e in started] == [
        ("get_weather", {"city": "Paris"}),
        ("report_weather", {"city": "Paris", "weather": "72F and sunny in Paris"}),
    ]
    appended = [e for e in events if isinstance(e, MessageAppended)]
    assert [e.index for e in appended] == list(range(len(appended)))
    assert [e.message.type for e in appended] == [
        MessageType.SYSTEM_PROMPT,
        MessageType.USER_INPUT,
        MessageType.TOOL_CALL,
        MessageType.TOOL_RESULT,
        MessageType.TOOL_CALL,
        MessageType.TOOL_RESULT,
    ]
    assert len(result.transcript) == len(appended)


async def test_parallel_calls_run_concurrently_and_results_keep_call_order() -> None:
    backend = ScriptedBackend(
        scripts={
            "par": [
                calls(("slow", {"n": 1}), ("fast", {"n": 2})),
                call("done", summary="ok"),
            ]
        }
    )
    finished: list[str] = []
    wf = Workflow("par")

    @wf.tool(required=True)
    async def slow(n: int) -> str:
        """Slow tool."""
        await asyncio.sleep(0.3)
        finished.append("slow")
        return f"slow{n}"

    @wf.tool(required=True)
    async def fast(n: int) -> str:
        """Fast tool."""
        finished.append("fast")
        return f"fast{n}"

    @wf.tool(terminal=True)
    def done(summary: str) -> str:
        """Finish."""
        return summary

    async with running_server(backend) as server, ForgeClient(address(server)) as client:
        t0 = time.monotonic()
        result = await client.run(wf, "go")
        elapsed = time.monotonic() - t0

    # fast answered first (out of order), yet the transcript keeps call order.
    assert finished == ["slow", "fast"] or finished == ["fast", "slow"]
    assert finished[0] == "fast"
    results = [m for m in result.transcript if m.type == MessageType.TOOL_RESULT]
    assert [(m.tool_name, m.content) for m in results[:2]] == [("slow", "slow1"), ("fast", "fast2")]
    call_msg = next(m for m in result.transcript if m.type == MessageType.TOOL_CALL)
    assert [c.id for c in call_msg.tool_calls] == [m.tool_call_id for m in results[:2]]
    assert result.value == "ok"
    assert elapsed < 5  # sanity only: the run did not hang


async def test_client_tool_exception_is_fed_back_and_counted() -> None:
    backend = ScriptedBackend(
        scripts={
            "flaky": [
                call("lookup", key="a"),
                call("lookup", key="b"),
                call("finish", answer="b"),
            ],
            # Different keys: the same rejected call would not even be sent.
            "broken": [call("lookup", key=k) for k in "xyzvw"],
        }
    )

    def make(name: str) -> Workflow:
        wf = Workflow(name)

        @wf.tool(required=True)
        def lookup(key: str) -> str:
            """Look a key up."""
            if key != "b":
                raise KeyError(f"no entry {key}")
            return "value-b"

        @wf.tool(terminal=True)
        def finish(answer: str) -> str:
            """Finish."""
            return answer

        return wf

    async with running_server(backend) as server, ForgeClient(address(server)) as client:
        result = await client.run(make("flaky"), "go")
        with pytest.raises(ToolExecutionError) as failed:
            await client.run(make("broken"), "go", options=RunOptions(max_tool_errors=1))

    errors = [m.content for m in result.transcript if m.content.startswith("[ToolError]")]
    assert errors == ["[ToolError] KeyError: 'no entry a'"]
    assert result.value == "b"
    # max_tool_errors=1: one error is fed back, the second consecutive one ends the run.
    assert failed.value.reason == "TOOL_EXECUTION"
    assert failed.value.details["tool_name"] == "lookup"
    failures = [m for m in failed.value.transcript if m.content.startswith("[ToolError]")]
    assert len(failures) == 2


async def test_resolution_error_does_not_count_or_complete_the_step() -> None:
    backend = ScriptedBackend(
        scripts={
            "res": [
                call("find", q="x"),
                call("find", q="y"),
                call("find", q="z"),
                call("answer", text="z"),
            ]
        }
    )
    wf = Workflow("res")

    @wf.tool(required=True)
    def find(q: str) -> str:
        """Find."""
        if q != "z":
            raise ToolResolutionError(f"nothing found for {q}")
        return "found z"

    @wf.tool(terminal=True)
    def answer(text: str) -> str:
        """Answer."""
        return text

    async with running_server(backend) as server, ForgeClient(address(server)) as client:
        # Two resolution errors in a row with max_tool_errors=0 still succeed.
        result = await client.run(wf, "go", options=RunOptions(max_tool_errors=0))
    assert result.value == "z"


async def test_step_enforcement_failure_reaches_the_sdk_as_a_typed_error() -> None:
    backend = ScriptedBackend(
        scripts={"weather": [call("report_weather", city="P", weather="?")] * 3}
    )
    async with running_server(backend) as server, ForgeClient(address(server)) as client:
        with pytest.raises(StepEnforcementError) as failed:
            await client.run(weather_workflow([]), "go")
    err = failed.value
    assert err.reason == "STEP_ENFORCEMENT"
    assert err.details["pending_steps"] == "get_weather"
    assert err.iterations == 3
    nudges = [m for m in err.transcript if m.type == MessageType.STEP_NUDGE]
    assert len(nudges) == 3 and all(m.transient for m in nudges)


async def test_streamed_chunks_arrive_when_requested() -> None:
    backend = ScriptedBackend(scripts={"weather": WEATHER_SCRIPT})
    events: list[Event] = []
    async with running_server(backend) as server, ForgeClient(address(server)) as client:
        await client.run(
            weather_workflow([]),
            "go",
            options=RunOptions(stream_chunks=True),
            on_event=events.append,
        )
    chunks = [e for e in events if isinstance(e, Chunk)]
    assert [c.type for c in chunks] == ["tool_call_delta", "final"] * 2
    assert json.loads(chunks[0].content) == {"tool": "get_weather", "args": {"city": "Paris"}}
    assert [c.iteration for c in chunks] == [1, 1, 2, 2]


async def test_multi_turn_continues_from_prior_messages() -> None:
    backend = ScriptedBackend(scripts={"weather": WEATHER_SCRIPT})
    async with running_server(backend) as server, ForgeClient(address(server)) as client:
        first = await client.run(weather_workflow([]), "Weather in Paris?")
        persisted = [m for m in first.transcript if not m.transient]
        await client.run(weather_workflow([]), "And now?", prior_messages=persisted)
    second_first_request = backend.requests[2]
    contents = [m.content for m in second_first_request.messages]
    assert contents[1] == "Weather in Paris?"
    assert contents[-1] == "And now?"
    assert len(second_first_request.messages) == len(persisted) + 1


async def test_client_cancel_mid_run_ends_with_cancelled_error() -> None:
    release = asyncio.Event()
    backend = ScriptedBackend(scripts={"slow": [call("wait", s=1)]})
    wf = Workflow("slow")

    @wf.tool(terminal=True)
    async def wait(s: int) -> str:
        """Wait."""
        await release.wait()
        return "never"

    async with running_server(backend) as server, ForgeClient(address(server)) as client:
        stream = client.start(wf, "go")
        with pytest.raises(WorkflowCancelledError) as cancelled:
            async for event in stream:
                if isinstance(event, ToolCallStarted):
                    await stream.cancel("user pressed stop")
        await settled(lambda: server.service.active_runs == 0)
    assert cancelled.value.reason == "CANCELLED"
    assert any(m.type == MessageType.TOOL_CALL for m in cancelled.value.transcript)


async def test_client_disconnect_releases_the_run_on_the_server() -> None:
    backend = ScriptedBackend(scripts={"slow": [call("wait", s=1)]})
    wf = Workflow("slow")
    tool_started = asyncio.Event()

    @wf.tool(terminal=True)
    async def wait(s: int) -> str:
        """Wait."""
        tool_started.set()
        await asyncio.sleep(60)
        return "never"

    async with running_server(backend) as server, ForgeClient(address(server)) as client:
        stream = client.start(wf, "go")
        events = stream.__aiter__()
        while not isinstance(await anext(events), ToolCallStarted):
            pass
        await tool_started.wait()
        assert (await client.server_info()).active_runs == 1
        await events.aclose()  # drops the stream without a cancel message
        for _ in range(100):
            if (await client.server_info()).active_runs == 0:
                break
            await asyncio.sleep(0.05)
        assert (await client.server_info()).active_runs == 0
        # The server keeps serving.
        backend.scripts["weather"] = WEATHER_SCRIPT
        result = await client.run(weather_workflow([]), "go")
        assert result.terminal_tool == "report_weather"


async def _first_tool_call(call: grpc.aio.StreamStreamCall[pb.RunRequest, pb.RunResponse]) -> str:
    while True:
        response = await call.read()
        assert response is not grpc.aio.EOF
        assert isinstance(response, pb.RunResponse)
        if response.WhichOneof("kind") == "tool_call":
            return response.tool_call.call_id


async def test_unknown_call_id_is_rejected_and_other_streams_continue() -> None:
    backend = ScriptedBackend(scripts={"weather": WEATHER_SCRIPT})
    async with running_server(backend) as server:
        async with grpc.aio.insecure_channel(address(server)) as channel:
            stub = pb_grpc.ForgeServiceStub(channel)
            bystander = stub.Run()
            await bystander.write(
                pb.RunRequest(
                    start=pb.StartRun(workflow=weather_workflow([]).to_proto(), user_message="hi")
                )
            )
            bystander_call_id = await _first_tool_call(bystander)

            bad = stub.Run()
            await bad.write(
                pb.RunRequest(
                    start=pb.StartRun(workflow=weather_workflow([]).to_proto(), user_message="hi")
                )
            )
            await _first_tool_call(bad)
            await bad.write(
                pb.RunRequest(tool_result=pb.ToolResult(call_id="call_99_0", output="x"))
            )
            with pytest.raises(grpc.aio.AioRpcError) as rejected:
                while True:
                    response = await bad.read()
                    assert response is not grpc.aio.EOF
            assert rejected.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "call_99_0" in (rejected.value.details() or "")

            # The other stream is unaffected and completes.
            await bystander.write(
                pb.RunRequest(tool_result=pb.ToolResult(call_id=bystander_call_id, output="sunny"))
            )
            second = await _first_tool_call(bystander)
            await bystander.write(
                pb.RunRequest(tool_result=pb.ToolResult(call_id=second, output="report"))
            )
            kinds = []
            while (response := await bystander.read()) is not grpc.aio.EOF:
                assert isinstance(response, pb.RunResponse)
                kinds.append(response.WhichOneof("kind"))
            assert kinds[-1] == "run_completed"


async def test_unknown_call_id_error_names_the_field_through_the_sdk_parser() -> None:
    from forge_client.errors import rpc_error as _rpc_error

    backend = ScriptedBackend(scripts={"weather": WEATHER_SCRIPT})
    async with running_server(backend) as server:
        async with grpc.aio.insecure_channel(address(server)) as channel:
            stub = pb_grpc.ForgeServiceStub(channel)
            run = stub.Run()
            await run.write(
                pb.RunRequest(
                    start=pb.StartRun(workflow=weather_workflow([]).to_proto(), user_message="x")
                )
            )
            await _first_tool_call(run)
            await run.write(pb.RunRequest(tool_result=pb.ToolResult(call_id="nope")))
            with pytest.raises(grpc.aio.AioRpcError) as rejected:
                while await run.read() is not grpc.aio.EOF:
                    pass
    err = _rpc_error(rejected.value)
    assert isinstance(err, RequestRejectedError)
    assert (err.code, err.reason, err.field) == (
        "INVALID_ARGUMENT",
        "UNKNOWN_CALL_ID",
        "tool_result.call_id",
    )


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda wf: wf.terminal_tools.__setitem__(0, "missing"), "workflow.terminal_tools[0]"),
        (lambda wf: wf.required_steps.append("nope"), "workflow.required_steps[1]"),
        (
            lambda wf: setattr(wf.tools[0], "parameters_json_schema", '{"type": 12}'),
            "workflow.tools[0].parameters_json_schema",
        ),
        (
            lambda wf: setattr(wf.tools[1], "parameters_json_schema", "{not json"),
            "workflow.tools[1].parameters_json_schema",
        ),
        (lambda wf: setattr(wf.tools[1], "name", "get_weather"), "workflow.tools[1].name"),
    ],
)
async def test_invalid_workflow_is_rejected_naming_the_field(mutate: object, field: str) -> None:
    backend = ScriptedBackend(scripts={"weather": WEATHER_SCRIPT})
    proto = weather_workflow([]).to_proto()
    assert callable(mutate)
    mutate(proto)
    async with running_server(backend) as server:
        async with grpc.aio.insecure_channel(address(server)) as channel:
            stub = pb_grpc.ForgeServiceStub(channel)
            run = stub.Run()
            await run.write(pb.RunRequest(start=pb.StartRun(workflow=proto, user_message="hi")))
            with pytest.raises(grpc.aio.AioRpcError) as rejected:
                await run.read()
            from forge_client.errors import rpc_error as _rpc_error

            err = _rpc_error(rejected.value)
        # The server is still healthy for the next caller.
        async with ForgeClient(address(server)) as client:
            ok = await client.run(weather_workflow([]), "go")
    assert rejected.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert isinstance(err, RequestRejectedError)
    assert err.reason == "INVALID_WORKFLOW"
    assert err.field == field
    assert field in err.message
    assert ok.terminal_tool == "report_weather"


async def test_sdk_surfaces_invalid_workflow_as_request_rejected() -> None:
    wf = Workflow("w")

    @wf.tool
    def a(x: int) -> int:
        """A."""
        return x

    wf.terminal("not_a_tool")
    async with (
        running_server(ScriptedBackend()) as server,
        ForgeClient(address(server)) as client,
    ):
        with pytest.raises(RequestRejectedError) as rejected:
            await client.run(wf, "go")
    assert rejected.value.field == "workflow.terminal_tools[0]"


async def test_first_message_must_be_start() -> None:
    async with running_server(ScriptedBackend()) as server:
        async with grpc.aio.insecure_channel(address(server)) as channel:
            run = pb_grpc.ForgeServiceStub(channel).Run()
            await run.write(pb.RunRequest(cancel=pb.CancelRun()))
            with pytest.raises(grpc.aio.AioRpcError) as rejected:
                await run.read()
    assert rejected.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "start" in (rejected.value.details() or "")


async def test_one_failing_run_does_not_affect_concurrent_runs() -> None:
    def responder(request: ChatRequest, index: int) -> Turn:
        if request.workflow_name == "doomed":
            return text("I refuse to call tools.")
        return WEATHER_SCRIPT[index]

    backend = ScriptedBackend(responder=responder)
    doomed = weather_workflow([])
    doomed.name = "doomed"
    async with running_server(backend) as server, ForgeClient(address(server)) as client:
        outcomes = await asyncio.gather(
            *(client.run(weather_workflow([]), "go") for _ in range(5)),
            client.run(doomed, "go", options=RunOptions(max_retries=1)),
            return_exceptions=True,
        )
    assert [type(o).__name__ for o in outcomes] == ["RunResult"] * 5 + ["ToolCallError"]


async def test_health_reflection_and_server_info() -> None:
    backend = ScriptedBackend(context_budget_tokens=1234)
    async with running_server(backend) as server:
        async with grpc.aio.insecure_channel(address(server)) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            for service in ("", "forge.v1.ForgeService"):
                reply = await health.Check(health_pb2.HealthCheckRequest(service=service))
                assert reply.status == health_pb2.HealthCheckResponse.SERVING

            reflection = reflection_pb2_grpc.ServerReflectionStub(channel)
            answers = reflection.ServerReflectionInfo(
                iter([reflection_pb2.ServerReflectionRequest(list_services="")])
            )
            names = set()
            async for answer in answers:
                names |= {s.name for s in answer.list_services_response.service}
            assert {"forge.v1.ForgeService", "grpc.health.v1.Health"} <= names

        async with ForgeClient(address(server)) as client:
            info = await client.server_info()
    assert (info.backend, info.context_budget_tokens, info.tool_call_mode) == (
        "scripted",
        1234,
        "scripted",
    )
    assert info.version


def test_scripted_tool_call_turn_shapes() -> None:
    # Guards the helpers the tests above rely on.
    assert call("a", x=1).response == [ToolCall("a", {"x": 1})]


def cleanup_workflow(ran: list[str]) -> Workflow:
    wf = Workflow("cleanup", "Manage log files.")

    @wf.tool(terminal=True, destructive=True)
    def delete_logs(service: str) -> str:
        """Delete a service's log files."""
        ran.append(f"delete_logs:{service}")
        return "deleted"

    @wf.tool(terminal=True)
    def explain(message: str) -> str:
        """Tell the user what happened."""
        return message

    return wf


CLEANUP_SCRIPT = [
    call("delete_logs", service="billing"),
    call("explain", message="not allowed"),
]


async def test_an_approver_that_raises_denies_with_its_message() -> None:
    backend = ScriptedBackend(scripts={"cleanup": CLEANUP_SCRIPT})
    ran: list[str] = []
    seen: list[Event] = []

    async def approve(request: ApprovalRequested) -> bool:
        assert request.arguments == {"service": "billing"}
        raise PermissionError("billing logs are under legal hold")

    async with running_server(backend) as server, ForgeClient(address(server)) as client:
        result = await client.run(
            cleanup_workflow(ran),
            "Delete the billing logs.",
            options=RunOptions(approve_destructive_calls=True),
            approve=approve,
            on_event=seen.append,
        )
    assert ran == []
    assert result.terminal_tool == "explain"
    assert [e.tool_name for e in seen if isinstance(e, ApprovalRequested)] == ["delete_logs"]
    [decided] = [e for e in seen if isinstance(e, ApprovalDecided)]
    assert (decided.tool_name, decided.approved) == ("delete_logs", False)
    assert decided.error == decided.reason == "billing logs are under legal hold"
    # Surfaced right after the request, before what the server answered.
    kinds = [type(e) for e in seen]
    assert kinds.index(ApprovalDecided) == kinds.index(ApprovalRequested) + 1
    denial = next(m.content for m in result.transcript if "did not approve" in m.content)
    assert "legal hold" in denial


async def test_an_approval_nobody_asked_for_is_rejected_naming_the_field() -> None:
    backend = ScriptedBackend(scripts={"weather": WEATHER_SCRIPT})
    async with running_server(backend) as server:
        async with grpc.aio.insecure_channel(address(server)) as channel:
            stream = pb_grpc.ForgeServiceStub(channel).Run()
            await stream.write(
                pb.RunRequest(
                    start=pb.StartRun(workflow=weather_workflow([]).to_proto(), user_message="hi")
                )
            )
            await _first_tool_call(stream)
            await stream.write(
                pb.RunRequest(approval=pb.ApprovalDecision(call_id="call_1", approved=True))
            )
            with pytest.raises(grpc.aio.AioRpcError) as rejected:
                while True:
                    assert await stream.read() is not grpc.aio.EOF
    assert rejected.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "approval.call_id" in (rejected.value.details() or "")


async def test_an_approval_that_comes_too_late_is_a_denial_and_is_then_ignored() -> None:
    # The model thinks a while before its second turn, so the late decision
    # reaches a live stream.
    backend = ScriptedBackend(
        scripts={"cleanup": [CLEANUP_SCRIPT[0], Turn(CLEANUP_SCRIPT[1].response, delay_s=1.0)]}
    )
    ran: list[str] = []

    async def slow(request: ApprovalRequested) -> bool:
        await asyncio.sleep(0.6)
        return True  # after the server stopped waiting: must change nothing

    async with running_server(backend) as server, ForgeClient(address(server)) as client:
        result = await client.run(
            cleanup_workflow(ran),
            "Delete the billing logs.",
            options=RunOptions(approve_destructive_calls=True, tool_timeout_s=0.2),
            approve=slow,
        )
    assert ran == []
    assert result.terminal_tool == "explain"
    denial = next(m.content for m in result.transcript if "did not approve" in m.content)
    assert "no decision within 0.2s" in denial


async def test_a_schema_that_points_at_a_local_file_is_rejected_and_nothing_is_read(
    tmp_path: object,
) -> None:
    from pathlib import Path

    assert isinstance(tmp_path, Path)
    secret = tmp_path / "secret.json"
    secret.write_text('{"description": "TOP-SECRET-7731"}')
    proto = weather_workflow([]).to_proto()
    proto.tools[0].parameters_json_schema = json.dumps(
        {"type": "object", "properties": {"city": {"$ref": secret.as_uri()}}}
    )
    backend = ScriptedBackend(scripts={"weather": WEATHER_SCRIPT})
    async with running_server(backend) as server:
        async with grpc.aio.insecure_channel(address(server)) as channel:
            run = pb_grpc.ForgeServiceStub(channel).Run()
            await run.write(pb.RunRequest(start=pb.StartRun(workflow=proto, user_message="hi")))
            with pytest.raises(grpc.aio.AioRpcError) as rejected:
                await run.read()
    from forge_client.errors import rpc_error as _rpc_error

    err = _rpc_error(rejected.value)
    assert isinstance(err, RequestRejectedError)
    assert (err.reason, err.field) == (
        "INVALID_WORKFLOW",
        "workflow.tools[0].parameters_json_schema",
    )
    assert secret.as_uri() in err.message
    assert "TOP-SECRET" not in (rejected.value.details() or "")
