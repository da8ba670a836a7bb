"""Events bundled and left out (StartRun.events), on the real server over
loopback, read with the raw generated stub so the wire itself is checked.

The model is a ScriptedBackend: each turn's calls are known, so the events
a run must produce are too.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import grpc
import pytest

from forge.v1 import forge_service_pb2 as pb
from forge.v1 import forge_service_pb2_grpc as pb_grpc
from forge.v1 import workflow_pb2 as wpb
from forge_client import ForgeClient, MessageAppended, RunOptions, Workflow
from forge_core.backends.scripted import ScriptedBackend, call, calls
from forge_server.app import ServerOptions
from tests.helpers import address, running_server

STEPS = 6


def script() -> ScriptedBackend:
    turns = [call("step", i=i) for i in range(1, STEPS)] + [call("finish")]
    return ScriptedBackend(scripts={"batches": turns})


def start(events: pb.EventOptions | None = None) -> pb.RunRequest:
    step = wpb.ToolSpec(
        name="step",
        description="One step.",
        parameters_json_schema='{"type":"object","properties":{"i":{"type":"integer"}},"required":["i"]}',
    )
    finish = wpb.ToolSpec(name="finish", description="Finish.", parameters_json_schema="{}")
    return pb.RunRequest(
        start=pb.StartRun(
            workflow=wpb.Workflow(
                name="batches",
                description="Call step, then finish.",
                tools=[step, finish],
                terminal_tools=["finish"],
            ),
            user_message="go",
            options=wpb.RunOptions(max_iterations=STEPS + 2),
            events=events,
        )
    )


async def drive(
    stub: pb_grpc.ForgeServiceAsyncStub,
    request: pb.RunRequest,
    output: Callable[[pb.ToolCallRequest], str] = lambda _: "ok",
) -> tuple[list[pb.RunResponse], list[pb.RunResponse]]:
    """(messages as they came on the wire, events with batches unrolled),
    answering every tool call with `output`."""
    stream = stub.Run()
    await stream.write(request)
    wire: list[pb.RunResponse] = []
    events: list[pb.RunResponse] = []
    while True:
        response = await stream.read()
        if response is grpc.aio.EOF:
            break
        assert isinstance(response, pb.RunResponse)
        wire.append(response)
        inner = (
            list(response.batch.events) if response.WhichOneof("kind") == "batch" else [response]
        )
        for event in inner:
            events.append(event)
            if event.WhichOneof("kind") == "tool_call":
                result = pb.ToolResult(
                    call_id=event.tool_call.call_id, output=output(event.tool_call)
                )
                await stream.write(pb.RunRequest(tool_result=result))
    return wire, events


def kinds(events: list[pb.RunResponse]) -> list[str]:
    return [str(e.WhichOneof("kind")) for e in events]


async def test_batches_carry_every_event_once_in_seq_order() -> None:
    async with running_server(script()) as server:
        async with grpc.aio.insecure_channel(address(server)) as channel:
            stub = pb_grpc.ForgeServiceStub(channel)
            plain_wire, plain = await drive(stub, start())
            wire, events = await drive(stub, start(pb.EventOptions(batch=True)))

    # Unasked, nothing is bundled (older clients see what they always saw).
    assert "batch" not in kinds(plain_wire)
    # Asked, the same events in the same order, numbered 1..n without gaps...
    assert kinds(events) == kinds(plain)
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert kinds(events)[-1] == "run_completed"
    assert Counter(kinds(events))["tool_call"] == STEPS
    # ...in fewer messages: a turn's appended messages ride with its call.
    batches = [m for m in wire if m.WhichOneof("kind") == "batch"]
    assert batches
    assert len(wire) <= len(events) / 2
    # A batch carries its last event's seq; no batch nests another.
    for batch in batches:
        assert batch.seq == batch.batch.events[-1].seq
        assert "batch" not in kinds(list(batch.batch.events))


async def test_omitted_kinds_never_arrive_and_the_run_is_the_same() -> None:
    omit = pb.EventOptions(omit=[pb.EVENT_KIND_MESSAGE_APPENDED, pb.EVENT_KIND_CHUNK])
    async with running_server(script()) as server:
        async with grpc.aio.insecure_channel(address(server)) as channel:
            stub = pb_grpc.ForgeServiceStub(channel)
            _, full = await drive(stub, start())
            _, lean = await drive(stub, start(omit))

    assert "message_appended" in kinds(full)
    assert "message_appended" not in kinds(lean)
    assert kinds(lean) == [k for k in kinds(full) if k != "message_appended"]
    # The final transcript does not depend on what the stream carried.
    assert len(lean[-1].run_completed.transcript) == len(full[-1].run_completed.transcript)
    assert len(full[-1].run_completed.transcript) == Counter(kinds(full))["message_appended"]


@pytest.mark.parametrize("value", [pb.EVENT_KIND_UNSPECIFIED, 99])
async def test_an_event_kind_that_cannot_be_left_out_is_refused(value: int) -> None:
    async with running_server(script()) as server:
        async with grpc.aio.insecure_channel(address(server)) as channel:
            stub = pb_grpc.ForgeServiceStub(channel)
            bad = start(pb.EventOptions(omit=[pb.EVENT_KIND_QUEUED, value]))  # type: ignore[list-item]
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await drive(stub, bad)
            assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "start.events.omit[1]" in (refused.value.details() or "")
            # The server goes on serving other streams.
            _, events = await drive(stub, start())
    assert kinds(events)[-1] == "run_completed"


async def test_python_sdk_asks_for_batches_and_delivers_every_event() -> None:
    wf = Workflow("batches", "Call step, then finish.")
    ran: list[int] = []

    @wf.tool
    def step(i: int) -> str:
        """One step."""
        ran.append(i)
        return "ok"

    @wf.tool(terminal=True)
    def finish() -> str:
        """Finish."""
        return "done"

    appended: list[int] = []
    omitted: list[int] = []
    async with running_server(script()) as server, ForgeClient(address(server)) as client:
        stream = client.start(wf, "go", options=RunOptions(max_iterations=STEPS + 2))
        assert stream._start.events.batch  # what the SDK sends
        async for event in stream:
            if isinstance(event, MessageAppended):
                appended.append(event.index)
        assert stream.result is not None
        result = await client.run(
            wf,
            "go",
            options=RunOptions(max_iterations=STEPS + 2),
            omit_events=["message_appended"],
            on_event=lambda e: omitted.append(1) if isinstance(e, MessageAppended) else None,
        )
    assert ran == [*range(1, STEPS), *range(1, STEPS)]
    assert appended == list(range(len(stream.result.transcript)))
    assert omitted == []
    assert len(result.transcript) == len(stream.result.transcript)
    with pytest.raises(ValueError, match="omit_events"):
        ForgeClient("127.0.0.1:1").start(wf, "go", omit_events=["tool_call"])


async def test_a_batch_stays_within_the_message_size_limit() -> None:
    """Two tool results of 40 KB ready at once, on a server whose messages
    may hold 64 KB: they go out in two messages, not one the client refuses."""
    limit = 64 * 1024
    backend = ScriptedBackend(
        scripts={"batches": [calls(("step", {"i": 1}), ("step", {"i": 2})), call("finish")]}
    )
    options = ServerOptions(host="127.0.0.1", port=0, max_message_bytes=limit)
    async with running_server(backend, options) as server:
        async with grpc.aio.insecure_channel(
            address(server), options=[("grpc.max_receive_message_length", limit)]
        ) as channel:
            request = start(pb.EventOptions(batch=True))
            request.start.options.parallel_tool_calls = True
            wire, events = await drive(
                pb_grpc.ForgeServiceStub(channel),
                request,
                lambda call: "x" * 40_000 if call.tool_name == "step" else "done",
            )
    assert kinds(events)[-1] == "run_completed"
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert all(m.ByteSize() <= limit for m in wire)
    results = [
        e
        for e in events
        if e.WhichOneof("kind") == "message_appended"
        and len(e.message_appended.message.content) >= 40_000
    ]
    assert len(results) == 2
    # The two results were ready together, and no single message held both.
    assert not any(
        sum(len(e.message_appended.message.content) >= 40_000 for e in m.batch.events) > 1
        for m in wire
        if m.WhichOneof("kind") == "batch"
    )
