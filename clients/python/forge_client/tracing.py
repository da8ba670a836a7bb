"""OpenTelemetry in the Python SDK: trace context out, a span per tool call.

The SDK depends on the OpenTelemetry API only and configures nothing: the
application's tracer provider, when it installed one, records the spans;
without one nothing is built. Conventions shared with the Go and TypeScript
SDKs (docs/tracing.md):

- opening a run's stream, the caller's current context goes to the server as
  gRPC metadata `traceparent`/`tracestate` (W3C); the SDK opens no span
  around the run, so the caller's span is the server's run span's parent;
- each tool function runs inside an `execute_tool {tool}` span (INTERNAL)
  whose parent is the server's span for that call
  (`ToolCallRequest.trace_context`), or the current context when the
  server sent none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from opentelemetry import trace
from opentelemetry.trace import (
    NoOpTracerProvider,
    ProxyTracerProvider,
    SpanKind,
    Status,
    StatusCode,
)
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from forge.v1 import forge_service_pb2 as pb

if TYPE_CHECKING:
    from forge_client.tools import Tool

# W3C Trace Context whatever OTEL_PROPAGATORS says: the server reads exactly
# these keys, from every SDK.
W3C = TraceContextTextMapPropagator()
TRACER_NAME = "forge_client"


def run_metadata() -> tuple[tuple[str, str], ...]:
    """The caller's current trace context as gRPC metadata (empty when
    there is no valid current span)."""
    carrier: dict[str, str] = {}
    W3C.inject(carrier)
    return tuple(carrier.items())


def _recording() -> bool:
    """Whether the application installed a tracer provider."""
    return not isinstance(trace.get_tracer_provider(), ProxyTracerProvider | NoOpTracerProvider)


async def invoke(tool: Tool, request: pb.ToolCallRequest) -> Any:
    """`tool` called with the request's arguments, inside its span."""
    if not _recording():
        return await tool.invoke(request.arguments_json)
    parent = W3C.extract(request.trace_context) if request.trace_context else None
    tracer = trace.get_tracer(TRACER_NAME)
    with tracer.start_as_current_span(
        f"execute_tool {request.tool_name}",
        context=parent,
        kind=SpanKind.INTERNAL,
        attributes={
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": request.tool_name,
            "gen_ai.tool.call.id": request.call_id,
            "gen_ai.tool.type": "function",
        },
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        try:
            return await tool.invoke(request.arguments_json)
        except Exception as exc:
            error_type = type(exc).__name__
            span.record_exception(exc)
            span.set_attribute("error.type", error_type)
            span.set_status(Status(StatusCode.ERROR, error_type))
            raise
