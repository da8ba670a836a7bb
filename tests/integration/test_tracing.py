"""OpenTelemetry traces across the caller, the server and the tools (issue 35).

The production server on loopback, configured by the OTEL_* variables,
exports OTLP/gRPC to a real receiver (tests/otlp_receiver.py); the test
process is the caller, with its own SDK tracer provider and an in-memory
exporter, and runs the Python SDK, whose tool spans land there. The model
is a ScriptedBackend. One trace must run caller → server run span → chat
and execute_tool spans → the SDK's tool span.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import httpx
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from forge.v1 import forge_service_pb2 as pb
from forge.v1 import forge_service_pb2_grpc as pb_grpc
from forge_client import ForgeClient, RunOptions, Workflow
from forge_client.errors import RunFailedError
from forge_client.tracing import run_metadata
from forge_core.backends.scripted import ScriptedBackend, call, text
from forge_core.llama_host.process import free_port
from forge_server.app import ServerOptions
from forge_server.openai_app import OpenAIEndpoint, WorkflowRegistry, serve_openai
from forge_server.tracing import ServerTracing
from tests.helpers import address, running_server, wait_for_server
from tests.otlp_receiver import OtlpReceiver, ReceivedSpan


class _WhileTesting(SimpleSpanProcessor):
    """Keeps spans only while a test of this module runs: the provider stays
    installed for the rest of the process (OpenTelemetry cannot uninstall
    one), and later tests' spans must not pile up in memory."""

    active = False

    def on_end(self, span: ReadableSpan) -> None:
        if self.active:
            super().on_end(span)


# The caller's provider: set once for the whole test process (OpenTelemetry
# refuses to replace a global provider).
CALLER_SPANS = InMemorySpanExporter()
_GATE = _WhileTesting(CALLER_SPANS)
if not isinstance(trace.get_tracer_provider(), TracerProvider):
    _provider = TracerProvider()
    _provider.add_span_processor(_GATE)
    trace.set_tracer_provider(_provider)
else:  # another test module installed one first
    trace.get_tracer_provider().add_span_processor(_GATE)  # type: ignore[attr-defined]


class ShelfError(Exception):
    pass


def shelving_workflow() -> Workflow:
    wf = Workflow("shelve", "Find a shelf, label it, then finish.")

    @wf.tool(required=True)
    def find_shelf(aisle: int) -> str:
        """Find a free shelf in an aisle."""
        return f"shelf {aisle}-B"

    @wf.tool()
    def label_shelf(shelf: str) -> str:
        """Label a shelf."""
        raise ShelfError("the label printer is out of tape")

    @wf.tool(terminal=True)
    def finish(summary: str) -> str:
        """Finish."""
        return summary

    return wf


def shelving_backend() -> ScriptedBackend:
    return ScriptedBackend(
        scripts={
            "shelve": [
                call("find_shelf", aisle="7"),  # coerced to 7: a guardrail event
                call("label_shelf", shelf="7-B"),
                call("finish", summary="shelf 7-B found, not labelled"),
            ]
        }
    )


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    r = OtlpReceiver()
    try:
        yield r
    finally:
        r.stop()


@pytest.fixture
def tracing(receiver: OtlpReceiver, monkeypatch: pytest.MonkeyPatch) -> Iterator[ServerTracing]:
    """The server's tracing as forge-server builds it: from OTEL_* alone."""
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
    monkeypatch.setenv("OTEL_SERVICE_NAME", "forge-under-test")
    built = ServerTracing.from_env()
    assert built is not None
    try:
        yield built
    finally:
        built.shutdown()


async def exported(tracing: ServerTracing, receiver: OtlpReceiver) -> list[ReceivedSpan]:
    assert await asyncio.to_thread(tracing.provider.force_flush)  # type: ignore[attr-defined]
    return receiver.spans()


def caller_spans(name_prefix: str) -> list[ReadableSpan]:
    return [s for s in CALLER_SPANS.get_finished_spans() if s.name.startswith(name_prefix)]


def hex_ids(span: ReadableSpan) -> tuple[str, str, str]:
    """(trace id, span id, parent span id) as OTLP's hex strings."""
    context = span.get_span_context()
    assert context is not None
    parent = span.parent.span_id.to_bytes(8, "big").hex() if span.parent else ""
    return (
        context.trace_id.to_bytes(16, "big").hex(),
        context.span_id.to_bytes(8, "big").hex(),
        parent,
    )


@pytest.fixture(autouse=True)
def fresh_caller_spans() -> Iterator[None]:
    CALLER_SPANS.clear()
    _GATE.active = True
    try:
        yield
    finally:
        _GATE.active = False
        CALLER_SPANS.clear()


async def test_one_trace_runs_from_the_caller_through_the_server_into_each_tool(
    tracing: ServerTracing, receiver: OtlpReceiver
) -> None:
    caller = trace.get_tracer("test-caller")
    options = ServerOptions(host="127.0.0.1", port=0, tracing=tracing)
    async with running_server(shelving_backend(), options) as server:
        async with ForgeClient(address(server)) as client:
            with caller.start_as_current_span("caller"):
                result = await client.run(shelving_workflow(), "Shelve the crate in aisle 7")
    assert result.terminal_tool == "finish"
    server_spans = await exported(tracing, receiver)

    [caller_span] = caller_spans("caller")
    trace_id, caller_id, _ = hex_ids(caller_span)
    assert {s.trace_id for s in server_spans} == {trace_id}
    assert {s.resource.get("service.name") for s in server_spans} == {"forge-under-test"}

    # caller → run
    [run] = [s for s in server_spans if s.name == "invoke_agent shelve"]
    assert run.parent_span_id == caller_id
    assert run.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert run.attributes["gen_ai.agent.name"] == "shelve"
    assert run.attributes["forge.run_id"] == result.run_id
    assert run.attributes["forge.terminal_tool"] == "finish"
    assert run.attributes["forge.iterations"] == 3
    assert not run.failed
    coercions = [a for name, a in run.events if name == "forge.coercion"]
    assert [(a["gen_ai.tool.name"], a["forge.argument.path"]) for a in coercions] == [
        ("find_shelf", "/aisle")
    ]

    # run → one chat span per model call
    chats = [s for s in server_spans if s.name == "chat scripted"]
    assert [c.attributes["forge.iteration"] for c in chats] == [1, 2, 3]
    for chat in chats:
        assert chat.parent_span_id == run.span_id
        assert chat.attributes["gen_ai.operation.name"] == "chat"
        assert chat.attributes["gen_ai.request.model"] == "scripted"
        assert chat.attributes["forge.constraint"] == "none"  # the scripted backend's

    # run → one execute_tool span per call, finish included
    tools = {
        s.attributes["gen_ai.tool.name"]: s
        for s in server_spans
        if s.name.startswith("execute_tool ")
    }
    assert set(tools) == {"find_shelf", "label_shelf", "finish"}
    for name, span in tools.items():
        assert span.name == f"execute_tool {name}"
        assert span.parent_span_id == run.span_id
        assert span.attributes["gen_ai.tool.type"] == "function"
    assert tools["label_shelf"].failed
    assert tools["label_shelf"].attributes["error.type"] == "ShelfError"
    assert not tools["find_shelf"].failed

    # server's tool span → the SDK's span around the function
    sdk_tools = caller_spans("execute_tool ")
    assert len(sdk_tools) == 3
    for sdk_span in sdk_tools:
        sdk_trace, _, sdk_parent = hex_ids(sdk_span)
        attributes = dict(sdk_span.attributes or {})
        server_span = tools[str(attributes["gen_ai.tool.name"])]
        assert sdk_trace == trace_id
        assert sdk_parent == server_span.span_id
        assert attributes["gen_ai.tool.call.id"] == server_span.attributes["gen_ai.tool.call.id"]
        assert sdk_span.kind is trace.SpanKind.INTERNAL
    [failed] = [s for s in sdk_tools if s.name == "execute_tool label_shelf"]
    assert failed.status.status_code is trace.StatusCode.ERROR
    assert [e.name for e in failed.events] == ["exception"]


async def test_a_failed_run_ends_its_span_with_the_failure_reason(
    tracing: ServerTracing, receiver: OtlpReceiver
) -> None:
    backend = ScriptedBackend(
        scripts={"shelve": [text("Which aisle?"), call("find_shelf", aisle=3)]}
    )
    options = ServerOptions(host="127.0.0.1", port=0, tracing=tracing)
    async with running_server(backend, options) as server:
        async with ForgeClient(address(server)) as client:
            with pytest.raises(RunFailedError):
                await client.run(
                    shelving_workflow(), "Shelve it", options=RunOptions(max_iterations=2)
                )
    spans = await exported(tracing, receiver)
    [run] = [s for s in spans if s.name == "invoke_agent shelve"]
    assert run.failed
    assert run.attributes["error.type"] == "MAX_ITERATIONS"
    assert run.parent_span_id == ""  # no caller span: the run is the root
    # The free-text reply was refused and the model nudged: run span events.
    interventions = [
        (name, a.get("forge.nudge.kind"))
        for name, a in run.events
        if name in ("forge.reply_rejected", "forge.nudge")
    ]
    assert interventions == [("forge.reply_rejected", None), ("forge.nudge", "retry")]


async def test_forge_server_exports_by_the_otel_variables_and_flushes_on_exit(
    receiver: OtlpReceiver, tmp_path: Path
) -> None:
    """The server as users start it: a process configured by OTEL_* alone,
    whose batched spans are exported when SIGTERM stops it."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"shelve": [
        {"tool_calls": [{"name": "find_shelf", "args": {"aisle": 2}}]},
        {"tool_calls": [{"name": "finish", "args": {"summary": "2-B"}}]},
    ]}))  # fmt: skip
    port = free_port()
    env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
           # Longer than the test: only the shutdown can have exported them.
           "OTEL_BSP_SCHEDULE_DELAY": "600000"}  # fmt: skip
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "forge_server", "--backend", "scripted", "--script", str(script),
        "--port", str(port), "--journal", "none", env=env, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    try:
        await wait_for_server(f"127.0.0.1:{port}", 60)
        async with ForgeClient(f"127.0.0.1:{port}") as client:
            with trace.get_tracer("test-caller").start_as_current_span("caller"):
                result = await client.run(shelving_workflow(), "Shelve it in aisle 2")
        assert receiver.spans() == []
    finally:
        proc.send_signal(signal.SIGTERM)
        _, stderr = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 0, stderr.decode()
    spans = receiver.spans()
    [run] = [s for s in spans if s.name == "invoke_agent shelve"]
    assert run.attributes["forge.run_id"] == result.run_id
    assert run.resource["service.name"] == "forge-server"
    assert run.parent_span_id == hex_ids(caller_spans("caller")[-1])[1]
    assert sorted(s.name for s in spans if s.parent_span_id == run.span_id) == [
        "chat scripted", "chat scripted", "execute_tool find_shelf", "execute_tool finish"
    ]  # fmt: skip


async def test_tracing_off_sends_no_context_and_exports_nothing(
    receiver: OtlpReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("OTEL_TRACES_EXPORTER", raising=False)
    assert ServerTracing.from_env() is None
    # Configured, but switched off by the standard switches.
    assert ServerTracing.from_env({"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
                                   "OTEL_TRACES_EXPORTER": "none"}) is None  # fmt: skip
    assert ServerTracing.from_env({"OTEL_TRACES_EXPORTER": "otlp",
                                   "OTEL_SDK_DISABLED": "true"}) is None  # fmt: skip

    caller = trace.get_tracer("test-caller")
    async with running_server(shelving_backend()) as server:
        # The raw stream: what the server puts in the ToolCallRequest.
        async with grpc.aio.insecure_channel(address(server)) as channel:
            stub = pb_grpc.ForgeServiceStub(channel)
            with caller.start_as_current_span("caller"):
                metadata = run_metadata()
            assert [k for k, _ in metadata] == ["traceparent"]
            stream = stub.Run(metadata=metadata)
            await stream.write(
                pb.RunRequest(
                    start=pb.StartRun(
                        workflow=shelving_workflow().to_proto(), user_message="Shelve it"
                    )
                )
            )
            request = await first_tool_call(stream)
            assert request.tool_name == "find_shelf"
            assert dict(request.trace_context) == {}
            stream.cancel()
        # The SDK still traces its tools under the caller's span.
        async with ForgeClient(address(server)) as client:
            with caller.start_as_current_span("caller"):
                await client.run(shelving_workflow(), "Shelve the crate in aisle 7")
    assert receiver.spans() == []
    caller_span = caller_spans("caller")[-1]  # the second run's
    _, caller_id, _ = hex_ids(caller_span)
    sdk_tools = caller_spans("execute_tool ")
    assert len(sdk_tools) == 3
    assert {hex_ids(s)[2] for s in sdk_tools} == {caller_id}


async def first_tool_call(
    stream: grpc.aio.StreamStreamCall[pb.RunRequest, pb.RunResponse],
) -> pb.ToolCallRequest:
    async for response in _responses(stream):
        if response.WhichOneof("kind") == "tool_call":
            return response.tool_call
    raise AssertionError("the run made no tool call")


async def _responses(
    stream: grpc.aio.StreamStreamCall[pb.RunRequest, pb.RunResponse],
) -> AsyncIterator[pb.RunResponse]:
    while True:
        response = await stream.read()
        if response is grpc.aio.EOF:
            return
        assert isinstance(response, pb.RunResponse)
        if response.WhichOneof("kind") == "batch":
            for inner in response.batch.events:
                yield inner
        else:
            yield response


async def test_the_openai_endpoint_traces_each_request_under_its_traceparent(
    tracing: ServerTracing, receiver: OtlpReceiver
) -> None:
    backend = ScriptedBackend(responder=lambda request, index: call("get_weather", city="Oslo"))
    endpoint = OpenAIEndpoint(backend, WorkflowRegistry(), tracing=tracing)
    server = await serve_openai(endpoint, "127.0.0.1", 0)
    trace_id, parent_id = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
    body = {
        "model": "forge",
        "messages": [{"role": "user", "content": "Weather in Oslo?"}],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": "Current weather for a city.",
                    "parameters": {
                        "type": "object",
                        "properties": {"city": {"type": "string"}},
                        "required": ["city"],
                    },
                },
            }
        ],
        "tool_choice": "required",
    }
    try:
        async with httpx.AsyncClient() as http:
            reply = await http.post(
                f"http://127.0.0.1:{server.port}/v1/chat/completions",
                json=body,
                headers={"traceparent": f"00-{trace_id}-{parent_id}-01"},
            )
            assert reply.status_code == 200, reply.text
            streamed = await http.post(
                f"http://127.0.0.1:{server.port}/v1/chat/completions",
                json={**body, "stream": True},
                headers={"traceparent": f"00-{trace_id}-{parent_id}-01"},
            )
            assert streamed.status_code == 200
    finally:
        await server.stop()
    completion = reply.json()
    assert json.loads(
        completion["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
    ) == {"city": "Oslo"}
    spans = await exported(tracing, receiver)
    runs = [s for s in spans if s.name.startswith("invoke_agent ")]
    assert len(runs) == 2
    for run in runs:
        assert (run.trace_id, run.parent_span_id) == (trace_id, parent_id)
        assert run.attributes["forge.api"] == "openai"
        assert run.attributes["gen_ai.usage.output_tokens"] >= 0
        [chat] = [s for s in spans if s.parent_span_id == run.span_id]
        assert chat.name == "chat scripted"
        assert chat.attributes["gen_ai.operation.name"] == "chat"
    assert completion["id"] in {r.attributes["forge.run_id"] for r in runs}
