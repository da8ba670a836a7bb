"""Hostile and careless input on the real loopback server (issue 13).

Each test sends what a broken or malicious client sends — through raw
generated stubs or hand-made bytes, since the SDKs never produce it — and
checks two things: the answer is a typed gRPC status naming the problem, and
the server keeps serving (a normal run succeeds afterwards). The model is a
ScriptedBackend; everything else is the production server.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from forge.v1 import forge_service_pb2 as pb
from forge.v1 import forge_service_pb2_grpc as pb_grpc
from forge.v1 import messages_pb2 as mpb
from forge.v1 import workflow_pb2 as wpb
from forge_client import (
    Event,
    ForgeClient,
    Message,
    MessageAppended,
    MessageType,
    RequestRejectedError,
    Role,
    ShuttingDownError,
    Workflow,
)
from forge_client.errors import rejected_error as _rejected
from forge_core.backends.scripted import ScriptedBackend, call
from forge_server.app import ForgeServer, ServerOptions
from tests.helpers import address, running_server, settled
from tests.integration.test_run_stream import WEATHER_SCRIPT, weather_workflow

RUN_METHOD = "/forge.v1.ForgeService/Run"


def start_request(**start: Any) -> pb.RunRequest:
    start.setdefault("workflow", weather_workflow([]).to_proto())
    start.setdefault("user_message", "Weather in Paris?")
    return pb.RunRequest(start=pb.StartRun(**start))


async def rejection(call_: Any) -> tuple[grpc.aio.AioRpcError, RequestRejectedError]:
    """Read `call_` until it fails; the status and the SDK's parse of it."""
    with pytest.raises(grpc.aio.AioRpcError) as failed:
        while (await asyncio.wait_for(call_.read(), 30)) is not grpc.aio.EOF:
            pass
    err = failed.value
    return err, _rejected(err.code(), err.details() or "", err.trailing_metadata())


async def next_tool_call(run: Any) -> str:
    """The call id of the next tool_call on a raw stream."""
    while True:
        response = await asyncio.wait_for(run.read(), 30)
        assert isinstance(response, pb.RunResponse)
        if response.WhichOneof("kind") == "tool_call":
            return response.tool_call.call_id


async def still_serves(server: ForgeServer) -> None:
    async with ForgeClient(address(server)) as client:
        result = await client.run(weather_workflow([]), "Weather in Paris?")
    assert result.terminal_tool == "report_weather"
    await settled(lambda: server.service.open_streams == 0)


def weather_backend() -> ScriptedBackend:
    return ScriptedBackend(scripts={"weather": WEATHER_SCRIPT})


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


async def reject_start(server: ForgeServer, request: pb.RunRequest) -> RequestRejectedError:
    async with grpc.aio.insecure_channel(address(server)) as channel:
        run = pb_grpc.ForgeServiceStub(channel).Run()
        await run.write(request)
        status, err = await rejection(run)
    assert status.code() == grpc.StatusCode.INVALID_ARGUMENT
    return err


async def test_json_nested_10000_deep_in_a_schema_is_invalid_argument() -> None:
    proto = weather_workflow([]).to_proto()
    proto.tools[0].parameters_json_schema = (
        '{"type": "object", "properties": {"city": {"enum": ' + nested(10_000) + "}}}"
    )
    async with running_server(weather_backend()) as server:
        err = await reject_start(server, start_request(workflow=proto))
        await still_serves(server)
    assert (err.reason, err.field) == (
        "INVALID_WORKFLOW",
        "workflow.tools[0].parameters_json_schema",
    )
    assert "deeper than 64" in err.message


async def test_json_nested_10000_deep_in_prior_arguments_is_invalid_argument() -> None:
    prior = mpb.Message(
        role=mpb.ROLE_ASSISTANT,
        tool_calls=[
            mpb.ToolCall(
                id="c1", name="get_weather", arguments_json='{"a": ' + nested(10_000) + "}"
            )
        ],
    )
    async with running_server(weather_backend()) as server:
        err = await reject_start(server, start_request(prior_messages=[prior]))
        await still_serves(server)
    assert (err.reason, err.field) == (
        "INVALID_WORKFLOW",
        "start.prior_messages[0].tool_calls[0].arguments_json",
    )


async def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    proto = weather_workflow([]).to_proto()
    deep_text = nested(500)
    proto.tools[0].parameters_json_schema = (
        '{"type": "object", "properties": {"city": {"type": "string", "description": "'
        + deep_text
        + '"}}, "required": ["city"]}'
    )
    async with running_server(weather_backend()) as server:
        async with grpc.aio.insecure_channel(address(server)) as channel:
            run = pb_grpc.ForgeServiceStub(channel).Run()
            await run.write(start_request(workflow=proto))
            first = await asyncio.wait_for(run.read(), 30)
            run.cancel()
    assert isinstance(first, pb.RunResponse)
    assert first.WhichOneof("kind") == "run_started"


def _with_bad_utf8(request: pb.RunRequest, placeholder: str) -> bytes:
    """`request` serialised, with `placeholder`'s bytes replaced by invalid
    UTF-8 of the same length (no generated stub can send that)."""
    raw = request.SerializeToString()
    marker = placeholder.encode()
    assert raw.count(marker) == 1
    return raw.replace(marker, b"\xff" * len(marker))


def raw_run(channel: grpc.aio.Channel) -> Any:
    return channel.stream_stream(
        RUN_METHOD,
        request_serializer=lambda data: data,
        response_deserializer=pb.RunResponse.FromString,
    )()


async def test_invalid_utf8_in_the_first_message_is_invalid_argument() -> None:
    async with running_server(weather_backend()) as server:
        async with grpc.aio.insecure_channel(address(server)) as channel:
            run = raw_run(channel)
            await run.write(
                _with_bad_utf8(start_request(user_message="PLACEHOLDER"), "PLACEHOLDER")
            )
            status, err = await rejection(run)
        await still_serves(server)
    assert status.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert err.reason == "INVALID_REQUEST"
    assert "UTF-8" in err.message


def _result_with(field: str) -> Callable[[str], pb.RunRequest]:
    def build(call_id: str) -> pb.RunRequest:
        result = pb.ToolResult(call_id=call_id, output="fine")
        if field == "output":
            result.output = "PLACEHOLDER"
        elif field == "call_id":
            result.call_id = "PLACEHOLDER"
        else:
            error = pb.ToolError(message="boom", kind=pb.TOOL_ERROR_KIND_HARD)
            setattr(error, field.removeprefix("error."), "PLACEHOLDER")
            result.error.CopyFrom(error)
        return pb.RunRequest(tool_result=result)

    return build


def _cancel_request(call_id: str) -> pb.RunRequest:
    return pb.RunRequest(cancel=pb.CancelRun(reason="PLACEHOLDER"))


@pytest.mark.parametrize(
    "build",
    [
        _result_with("output"),
        _result_with("call_id"),
        _result_with("error.message"),
        _result_with("error.type"),
        _cancel_request,
    ],
    ids=["output", "call_id", "error.message", "error.type", "cancel.reason"],
)
async def test_invalid_utf8_in_a_later_message_ends_the_stream_at_once(
    build: Callable[[str], pb.RunRequest],
) -> None:
    async with running_server(weather_backend()) as server:
        async with grpc.aio.insecure_channel(address(server)) as channel:
            run = raw_run(channel)
            await run.write(
                start_request(options=wpb.RunOptions(tool_timeout_ms=600_000)).SerializeToString()
            )
            call_id = await next_tool_call(run)
            await run.write(_with_bad_utf8(build(call_id), "PLACEHOLDER"))
            # Before the fix the run waited for the 600 s tool timeout here.
            status, err = await rejection(run)
        await settled(lambda: server.service.active_runs == 0)
        await still_serves(server)
    assert status.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert err.reason == "INVALID_REQUEST"
    assert "UTF-8" in err.message


async def test_10000_tools_are_rejected_before_any_schema_is_parsed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import forge_server.convert as convert
    from forge_core.json_limits import loads_bounded

    parsed: list[str] = []

    def spy(text: str) -> Any:
        parsed.append(text)
        return loads_bounded(text)

    monkeypatch.setattr(convert, "loads_bounded", spy)
    proto = weather_workflow([]).to_proto()
    template = proto.tools[0]
    for i in range(10_000):
        extra = proto.tools.add()
        extra.CopyFrom(template)
        extra.name = f"tool_{i}"
    async with running_server(weather_backend()) as server:
        err = await reject_start(server, start_request(workflow=proto))
        assert parsed == []
        await still_serves(server)
    assert (err.reason, err.field) == ("INVALID_WORKFLOW", "workflow.tools")
    assert "at most 128" in err.message


async def test_a_5000_character_call_id_is_invalid_argument_with_small_trailers() -> None:
    async with running_server(weather_backend()) as server:
        async with grpc.aio.insecure_channel(address(server)) as channel:
            run = pb_grpc.ForgeServiceStub(channel).Run()
            await run.write(start_request())
            await next_tool_call(run)
            await run.write(pb.RunRequest(tool_result=pb.ToolResult(call_id="x" * 5000)))
            status, err = await rejection(run)
        await still_serves(server)
    # Before the fix the echoed id outgrew the client's 8 KiB trailer limit
    # and arrived as RESOURCE_EXHAUSTED.
    assert status.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert (err.reason, err.field) == ("UNKNOWN_CALL_ID", "tool_result.call_id")
    assert len(err.message.encode()) <= 512
    assert "truncated" in err.message


async def test_a_5000_character_tool_name_is_invalid_argument() -> None:
    proto = weather_workflow([]).to_proto()
    proto.tools[0].name = "é" * 5000
    async with running_server(weather_backend()) as server:
        err = await reject_start(server, start_request(workflow=proto))
    assert (err.reason, err.field) == ("INVALID_WORKFLOW", "workflow.tools[0].name")
    assert len(err.message.encode()) <= 512


def _options(mutate: Callable[[pb.RunRequest], None]) -> pb.RunRequest:
    request = start_request()
    mutate(request)
    return request


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (
            lambda r: setattr(r.start.options.guardrails, "enforcement", 99),
            "options.guardrails.enforcement",
        ),
        (lambda r: setattr(r.start.options, "compaction", 99), "options.compaction"),
        (lambda r: setattr(r.start.options, "reasoning_replay", 99), "options.reasoning_replay"),
        (
            lambda r: r.start.prior_messages.add(role=mpb.ROLE_USER, content="hi", type=99),
            "start.prior_messages[0].type",
        ),
        (
            lambda r: r.start.prior_messages.add(role=42, content="hi"),
            "start.prior_messages[0].role",
        ),
    ],
)
async def test_enum_values_the_contract_does_not_define_are_rejected(
    mutate: Callable[[pb.RunRequest], None], field: str
) -> None:
    async with running_server(weather_backend()) as server:
        err = await reject_start(server, _options(mutate))
    assert (err.reason, err.field) == ("INVALID_WORKFLOW", field)
    assert "unknown enum value" in err.message


async def test_an_undefined_tool_error_kind_is_rejected() -> None:
    async with running_server(weather_backend()) as server:
        async with grpc.aio.insecure_channel(address(server)) as channel:
            run = pb_grpc.ForgeServiceStub(channel).Run()
            await run.write(start_request())
            call_id = await next_tool_call(run)
            error = pb.ToolError(message="boom", kind=7)  # type: ignore[arg-type]
            await run.write(pb.RunRequest(tool_result=pb.ToolResult(call_id=call_id, error=error)))
            status, err = await rejection(run)
        await still_serves(server)
    assert status.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert (err.reason, err.field) == ("INVALID_REQUEST", "tool_result.error.kind")


async def test_streams_without_start_count_against_the_limit_and_time_out() -> None:
    options = ServerOptions(host="127.0.0.1", port=0, max_active_runs=2, start_timeout_s=1.0)
    async with running_server(weather_backend(), options) as server:
        async with grpc.aio.insecure_channel(address(server)) as channel:
            stub = pb_grpc.ForgeServiceStub(channel)
            idle = [stub.Run(), stub.Run()]
            for stream in idle:
                # Headers only: the stream is open but says nothing.
                await stream.wait_for_connection()
            await settled(lambda: server.service.open_streams == 2)

            third = stub.Run()
            await third.write(start_request())
            busy, busy_err = await rejection(third)

            silent = [await rejection(stream) for stream in idle]
        await settled(lambda: server.service.open_streams == 0)
        await still_serves(server)
    assert busy.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert busy_err.reason == "SERVER_BUSY"
    for status, err in silent:
        assert status.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        assert (err.reason, err.field) == ("START_TIMEOUT", "start")


def big_output_workflow(size: int) -> Workflow:
    wf = Workflow("big", "Fetch two large documents, then summarise.")

    @wf.tool(required=True)
    def fetch(part: int) -> str:
        """Fetch a document part."""
        return f"part {part}: " + "x" * size

    @wf.tool(terminal=True)
    def summarise(text: str) -> str:
        """Summarise."""
        return text

    return wf


async def test_a_final_message_over_the_size_limit_omits_the_transcript_not_the_outcome() -> None:
    backend = ScriptedBackend(
        scripts={
            "big": [call("fetch", part=1), call("fetch", part=2), call("summarise", text="ok")]
        }
    )
    options = ServerOptions(host="127.0.0.1", port=0, max_message_bytes=300_000)
    prior = [
        Message(role=Role.USER, content="Earlier: hello"),
        Message(role=Role.ASSISTANT, content="Earlier: hi"),
    ]
    events: list[Event] = []
    async with running_server(backend, options) as server, ForgeClient(address(server)) as client:
        result = await client.run(
            big_output_workflow(160_000),
            "Summarise both parts",
            prior_messages=prior,
            on_event=events.append,
        )
    streamed = [e.message for e in events if isinstance(e, MessageAppended)]
    assert result.terminal_tool == "summarise"
    assert result.value == "ok"
    # The server left the transcript out (2 x 160 KB > 300 KB)
    # and the SDK rebuilt it from the prior and the streamed messages.
    assert result.transcript == prior + streamed
    assert sum(len(m.content) for m in result.transcript) > 320_000


async def test_the_server_marks_an_omitted_transcript() -> None:
    backend = ScriptedBackend(
        scripts={
            "big": [call("fetch", part=1), call("fetch", part=2), call("summarise", text="ok")]
        }
    )
    options = ServerOptions(host="127.0.0.1", port=0, max_message_bytes=300_000)
    async with running_server(backend, options) as server:
        async with grpc.aio.insecure_channel(
            address(server), options=[("grpc.max_receive_message_length", 300_000)]
        ) as channel:
            run = pb_grpc.ForgeServiceStub(channel).Run()
            await run.write(
                pb.RunRequest(
                    start=pb.StartRun(
                        workflow=big_output_workflow(0).to_proto(), user_message="Summarise"
                    )
                )
            )
            final = None
            while (response := await asyncio.wait_for(run.read(), 30)) is not grpc.aio.EOF:
                assert isinstance(response, pb.RunResponse)
                if response.WhichOneof("kind") == "tool_call":
                    part = response.tool_call.arguments_json
                    await run.write(
                        pb.RunRequest(
                            tool_result=pb.ToolResult(
                                call_id=response.tool_call.call_id, output=part + "y" * 120_000
                            )
                        )
                    )
                if response.WhichOneof("kind") == "run_completed":
                    final = response.run_completed
    assert final is not None
    assert final.transcript_omitted
    assert len(final.transcript) == 0
    assert final.terminal_tool == "summarise"
    assert final.result.endswith("y" * 120_000)


async def test_sigterm_past_the_grace_period_ends_runs_in_band_with_their_transcript() -> None:
    backend = weather_backend()
    server_cm = running_server(backend)
    server = await server_cm.__aenter__()
    stopping: list[asyncio.Task[None]] = []
    health_during_drain: list[int] = []
    wf = Workflow("weather", "Look up weather and report it.")

    @wf.tool(required=True)
    async def get_weather(city: str) -> str:
        """Get current weather for a city."""
        stopping.append(asyncio.create_task(server.stop(1.0)))
        await asyncio.sleep(0.1)
        async with grpc.aio.insecure_channel(address(server)) as channel:
            reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
        health_during_drain.append(reply.status)
        await asyncio.sleep(60)  # still running when the grace period ends
        return "late"

    @wf.tool(terminal=True)
    def report_weather(city: str, weather: str) -> str:
        """Report the weather."""
        return weather

    try:
        async with ForgeClient(address(server)) as client:
            with pytest.raises(ShuttingDownError) as failed:
                await asyncio.wait_for(client.run(wf, "Weather in Paris?"), 30)
        await stopping[0]
    finally:
        await server_cm.__aexit__(None, None, None)
    assert failed.value.reason == "SHUTTING_DOWN"
    types = [m.type for m in failed.value.transcript]
    assert types[-2:] == [MessageType.TOOL_CALL, MessageType.TOOL_RESULT]
    assert health_during_drain == [health_pb2.HealthCheckResponse.NOT_SERVING]


async def test_a_stream_opened_during_the_drain_is_refused_as_shutting_down() -> None:
    """Every client that writes its start sees SHUTTING_DOWN: the server
    refuses once it has read the start, so the refusal never races with the
    client's write (grpc.aio reports such a lost race as INTERNAL)."""
    async with running_server(weather_backend()) as server:
        server.service.draining = True
        async with grpc.aio.insecure_channel(address(server)) as channel:

            async def opened() -> tuple[grpc.aio.AioRpcError, RequestRejectedError]:
                run = pb_grpc.ForgeServiceStub(channel).Run()
                await run.write(start_request())
                return await rejection(run)

            refused = await asyncio.gather(*(opened() for _ in range(20)))
    assert {(status.code(), err.reason) for status, err in refused} == {
        (grpc.StatusCode.UNAVAILABLE, "SHUTTING_DOWN")
    }


async def _complete_raw(server: ForgeServer, terminal_output: str) -> pb.RunCompleted:
    """A weather run on raw stubs whose terminal tool answers `terminal_output`."""
    limit = [("grpc.max_receive_message_length", 16 * 1024 * 1024)]
    limit.append(("grpc.max_send_message_length", 16 * 1024 * 1024))
    async with grpc.aio.insecure_channel(address(server), options=limit) as channel:
        run = pb_grpc.ForgeServiceStub(channel).Run()
        await run.write(start_request())
        while (response := await asyncio.wait_for(run.read(), 60)) is not grpc.aio.EOF:
            assert isinstance(response, pb.RunResponse)
            kind = response.WhichOneof("kind")
            if kind == "tool_call":
                call_ = response.tool_call
                output = terminal_output if call_.tool_name == "report_weather" else "72F"
                await run.write(
                    pb.RunRequest(tool_result=pb.ToolResult(call_id=call_.call_id, output=output))
                )
            elif kind == "run_completed":
                return response.run_completed
    raise AssertionError("the run did not complete")


async def test_the_completion_carries_the_terminal_result_once() -> None:
    six_mib = "r" * (6 * 1024 * 1024)
    async with running_server(weather_backend()) as server:
        done = await _complete_raw(server, six_mib)
    assert done.result == six_mib
    # Before issue 22 the transcript repeated it: a 12.6 MB message.
    assert not done.transcript_omitted
    assert done.ByteSize() < len(six_mib) + 64 * 1024
    [terminal] = [m for m in done.transcript if m.tool_call_id == done.terminal_call_id]
    assert terminal.role == mpb.ROLE_TOOL
    assert terminal.content == ""


async def test_a_9_mib_terminal_result_completes_and_the_sdk_puts_it_back() -> None:
    nine_mib = "n" * (9 * 1024 * 1024)
    wf = Workflow("weather", "Look up weather and report it.")

    @wf.tool(required=True)
    def get_weather(city: str) -> str:
        """Get current weather for a city."""
        return "72F"

    @wf.tool(terminal=True)
    def report_weather(city: str, weather: str) -> str:
        """Report the weather."""
        return nine_mib

    async with running_server(weather_backend()) as server, ForgeClient(address(server)) as client:
        result = await client.run(wf, "Weather in Paris?")
    assert result.output == nine_mib
    terminal = result.transcript[-1]
    assert (terminal.role, terminal.tool_name) == (Role.TOOL, "report_weather")
    assert terminal.content == nine_mib


async def test_json_nested_10000_deep_in_a_tool_result_is_data_not_an_error() -> None:
    wf = Workflow("weather", "Look up weather and report it.")

    @wf.tool(required=True)
    def get_weather(city: str) -> str:
        """Get current weather for a city."""
        return '{"weather": ' + nested(10_000) + "}"

    @wf.tool(terminal=True)
    def report_weather(city: str, weather: str) -> str:
        """Report the weather."""
        return "reported"

    async with running_server(weather_backend()) as server, ForgeClient(address(server)) as client:
        result = await client.run(wf, "Weather in Paris?")
    assert result.output == "reported"
    assert any(nested(10_000) in m.content for m in result.transcript)
