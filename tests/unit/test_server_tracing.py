"""The server's RunTrace turns a run's events into spans and span events
(forge_server/tracing.py). A real OpenTelemetry SDK provider with its
in-memory exporter; the events are the RunResponses a run emits."""

from __future__ import annotations

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

from forge.v1 import forge_service_pb2 as pb
from forge.v1 import workflow_pb2 as wpb
from forge_core.backends.base import BackendReply, ChatRequest
from forge_core.backends.scripted import ScriptedBackend
from forge_core.calls import ToolCall, Usage
from forge_server.tracing import RunTrace, ServerTracing


def traced_run(
    backend_name: str = "scripted",
) -> tuple[RunTrace, InMemorySpanExporter]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracing = ServerTracing(provider)
    backend = ScriptedBackend(name=backend_name)
    run = tracing.start_run(backend, "run-1", "kilns", [], session_id="s-9")
    return run, exporter


def by_name(exporter: InMemorySpanExporter, name: str) -> list[ReadableSpan]:
    return [s for s in exporter.get_finished_spans() if s.name == name]


def request(**fields: object) -> ChatRequest:
    base = ChatRequest(run_id="run-1", workflow_name="kilns", messages=[], tools=[], allowed=[])
    for key, value in fields.items():
        setattr(base, key, value)
    return base


def test_a_model_call_records_usage_constraint_and_the_value_guardrails_that_shaped_it() -> None:
    run, exporter = traced_run()
    call = run.model_call(
        3,
        request(
            allowed=["fire_kiln"],
            preferred_values={"fire_kiln.kiln_id": ["K-2", "K-7"]},
            preferred_reasons={"fire_kiln.kiln_id": "listings"},
        ),
    )
    call.done(BackendReply([ToolCall("fire_kiln", {})], Usage(1, 120, 9, 100)))
    run.close()
    [chat] = by_name(exporter, "chat scripted")
    [agent] = by_name(exporter, "invoke_agent kilns")
    assert chat.parent is not None and chat.parent.span_id == agent.context.span_id
    attributes = dict(chat.attributes or {})
    assert attributes["gen_ai.usage.input_tokens"] == 120
    assert attributes["gen_ai.usage.output_tokens"] == 9
    assert attributes["gen_ai.usage.cache_read.input_tokens"] == 100
    assert attributes["forge.iteration"] == 3
    assert attributes["forge.constraint"] == "none"
    assert list(attributes["forge.tools.allowed"]) == ["fire_kiln"]  # type: ignore[arg-type]
    [event] = chat.events
    assert event.name == "forge.value_guardrail"
    assert dict(event.attributes or {}) == {
        "forge.parameter": "fire_kiln.kiln_id",
        "forge.guardrail": "listings",
        "forge.values": 2,
    }
    assert dict(agent.attributes or {})["gen_ai.conversation.id"] == "s-9"


def test_a_replayed_turn_gets_no_span_and_a_failed_call_an_error() -> None:
    run, exporter = traced_run()
    run.model_call(1, request()).done(BackendReply([], replayed=True))
    run.model_call(2, request()).failed(TimeoutError())
    run.close()
    [chat] = by_name(exporter, "chat scripted")
    assert dict(chat.attributes or {})["error.type"] == "TimeoutError"
    assert chat.status.status_code is StatusCode.ERROR


def test_tool_spans_carry_their_context_to_the_client_and_end_with_the_answer() -> None:
    run, exporter = traced_run()
    sent = [
        pb.RunResponse(tool_call=pb.ToolCallRequest(call_id=f"call_{i}", tool_name=name))
        for i, name in enumerate(("glaze", "load", "cool"))
    ]
    for event in sent:
        run.observe(event)
    contexts = [dict(e.tool_call.trace_context) for e in sent]
    assert all(set(c) == {"traceparent"} for c in contexts)
    assert len({c["traceparent"] for c in contexts}) == 3
    run.answered(pb.ToolResult(call_id="call_0", output="glazed"))
    run.answered(
        pb.ToolResult(
            call_id="call_1",
            error=pb.ToolError(message="kiln full", kind=pb.TOOL_ERROR_KIND_RESOLUTION),
        )
    )
    run.observe(
        pb.RunResponse(
            tool_call_cancelled=pb.ToolCallCancelled(call_id="call_2", reason="no result within 5s")
        )
    )
    spans = {s.name: s for s in exporter.get_finished_spans()}
    assert spans["execute_tool glaze"].status.status_code is StatusCode.UNSET
    assert dict(spans["execute_tool load"].attributes or {})["error.type"] == "resolution"
    assert dict(spans["execute_tool cool"].attributes or {})["error.type"] == "timeout"
    for name in ("glaze", "load", "cool"):
        span_id = spans[f"execute_tool {name}"].context.span_id
        assert f"{span_id:016x}" in contexts[("glaze", "load", "cool").index(name)]["traceparent"]


def test_guardrail_interventions_are_events_on_the_run_span() -> None:
    run, exporter = traced_run()
    for event in (
        pb.RunResponse(compacted=pb.Compacted(iteration=4, tokens_before=900, tokens_after=300)),
        pb.RunResponse(approval_request=pb.ApprovalRequest(call_id="call_5", tool_name="vent")),
        pb.RunResponse(
            tool_output_screened=pb.ToolOutputScreened(
                call_id="call_6",
                tool_name="read_log",
                action=wpb.TOOL_OUTPUT_POLICY_REDACT,
                secret_types=["AWS Access Key"],
                secrets=1,
            )
        ),
        pb.RunResponse(queued=pb.Queued(position=2)),
    ):
        run.observe(event)
    run.answered(pb.ApprovalDecision(call_id="call_5", approved=False))
    run.observe(pb.RunResponse(run_failed=pb.RunFailed(reason=pb.FAILURE_REASON_MAX_ITERATIONS)))
    [agent] = by_name(exporter, "invoke_agent kilns")
    names = [e.name for e in agent.events]
    assert names == [
        "forge.compaction",
        "forge.destructive_hold",
        "forge.tool_output_screened",
        "forge.queued",
        "forge.approval",
    ]
    assert dict(agent.events[4].attributes or {})["forge.approved"] is False
    compaction = dict(agent.events[0].attributes or {})
    assert (
        compaction["forge.compaction.tokens_before"],
        compaction["forge.compaction.tokens_after"],
    ) == (900, 300)
    assert dict(agent.events[2].attributes or {})["forge.screening.action"] == "redact"
    assert agent.status.status_code is StatusCode.ERROR
    assert dict(agent.attributes or {})["error.type"] == "MAX_ITERATIONS"


def test_the_caller_context_parents_the_run_and_the_backend_names_the_provider() -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    run = ServerTracing(provider).start_run(
        ScriptedBackend(name="llama-server"), "run-2", "kilns",
        [("traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
         ("authorization", "Bearer x")],
    )  # fmt: skip
    run.close()
    [agent] = exporter.get_finished_spans()
    assert f"{agent.context.trace_id:032x}" == "4bf92f3577b34da6a3ce929d0e0e4736"
    assert agent.parent is not None and f"{agent.parent.span_id:016x}" == "00f067aa0ba902b7"
    assert dict(agent.attributes or {})["gen_ai.provider.name"] == "llama.cpp"


def test_the_otlp_protocol_variable_picks_the_exporter_and_names_itself_when_unknown() -> None:
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as Grpc
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as Http

    from forge_server.tracing import otlp_exporter

    assert isinstance(otlp_exporter({}), Grpc)
    assert isinstance(otlp_exporter({"OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"}), Http)
    traces_wins = {
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc",
    }
    assert isinstance(otlp_exporter(traces_wins), Grpc)
    with pytest.raises(SystemExit, match="OTEL_EXPORTER_OTLP_PROTOCOL='http/json'"):
        otlp_exporter({"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"})
