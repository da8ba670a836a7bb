package forge

// OpenTelemetry in the Go SDK: the caller's trace context goes to the server
// with each run, and each tool function runs inside a span.
//
// The SDK depends on the OpenTelemetry API only and configures nothing: the
// application's tracer provider (otel.SetTracerProvider), when it installed
// one, records the spans; without one the API's no-op tracer makes none.
// Conventions shared with the Python and TypeScript SDKs (docs/tracing.md):
//
//   - opening a run's stream (and the streams that reattach it), the
//     caller's current context goes to the server as gRPC metadata
//     traceparent/tracestate (W3C); the SDK opens no span around the run, so
//     the caller's span is the parent of the server's run span;
//   - each tool function runs inside an "execute_tool {tool}" span (INTERNAL)
//     whose parent is the server's span for that call
//     (ToolCallRequest.trace_context), or the caller's context when the
//     server sent none (its tracing is off).

import (
	"context"

	forgev1 "github.com/forge-sidecar/forge/clients/go/gen/forge/v1"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/metadata"
)

// TracerName is the instrumentation scope of the SDK's spans.
const TracerName = "github.com/forge-sidecar/forge/clients/go"

// w3c is the W3C Trace Context propagator whatever the application set as
// the global one: the server reads exactly these keys, from every SDK.
var w3c = propagation.TraceContext{}

// withTraceMetadata is ctx with its current trace context added to the
// outgoing gRPC metadata (unchanged when ctx holds no valid span context).
func withTraceMetadata(ctx context.Context) context.Context {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx
	}
	carrier := propagation.MapCarrier{}
	w3c.Inject(ctx, carrier)
	pairs := make([]string, 0, 2*len(carrier))
	for key, value := range carrier {
		pairs = append(pairs, key, value)
	}
	return metadata.AppendToOutgoingContext(ctx, pairs...)
}

// startToolSpan opens the span of the tool function a request calls; the
// returned context (ctx's values and cancellation, with the span current)
// is the one the function gets, so the tool's own spans nest under it.
func startToolSpan(ctx context.Context, req *forgev1.ToolCallRequest) (context.Context, trace.Span) {
	if carried := req.GetTraceContext(); len(carried) > 0 {
		ctx = w3c.Extract(ctx, propagation.MapCarrier(carried))
	}
	return otel.Tracer(TracerName).Start(ctx, "execute_tool "+req.GetToolName(),
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(
			attribute.String("gen_ai.operation.name", "execute_tool"),
			attribute.String("gen_ai.tool.name", req.GetToolName()),
			attribute.String("gen_ai.tool.call.id", req.GetCallId()),
			attribute.String("gen_ai.tool.type", "function"),
		))
}

// endToolSpan ends a tool span; a failed tool marks it ERROR with the
// error's type (the ToolError.type the server gets; "_OTHER", the GenAI
// conventions' fallback, for the anonymous errors of errors.New).
func endToolSpan(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		errorType := toolError(err).Type
		if errorType == "" {
			errorType = "_OTHER"
		}
		span.RecordError(err)
		span.SetAttributes(attribute.String("error.type", errorType))
		span.SetStatus(otelcodes.Error, errorType)
	}
	span.End()
}
