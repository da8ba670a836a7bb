/**
 * OpenTelemetry in the TypeScript SDK: the caller's trace context goes to the
 * server with each run, and each tool function runs inside a span.
 *
 * The SDK depends on the OpenTelemetry API only and configures nothing: the
 * application's tracer provider (and context manager), when it registered
 * them, record the spans; without them the API's no-op tracer makes none.
 * Conventions shared with the Python and Go SDKs (docs/tracing.md):
 *
 * - opening a run's stream (and the streams that reattach it), the caller's
 *   active context goes to the server as gRPC metadata
 *   `traceparent`/`tracestate` (W3C); the SDK opens no span around the run,
 *   so the caller's span is the parent of the server's run span;
 * - each tool function runs inside an `execute_tool {tool}` span (INTERNAL)
 *   whose parent is the server's span for that call
 *   (`ToolCallRequest.trace_context`), or the active context when the server
 *   sent none (its tracing is off).
 */

import { type Context, SpanKind, SpanStatusCode, context, defaultTextMapSetter, trace } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";

/** The instrumentation scope of the SDK's spans (the same in the Python SDK). */
export const TRACER_NAME = "forge_client";

/** W3C Trace Context whatever propagator the application registered: the
 * server reads exactly these keys, from every SDK. */
const W3C = new W3CTraceContextPropagator();

/**
 * `headers` plus the active context's `traceparent`/`tracestate`; `headers`
 * itself when there is no valid active span.
 */
export function withTraceHeaders(headers: Record<string, string>): Record<string, string> {
  const active = context.active();
  if (trace.getSpanContext(active) === undefined) {
    return headers;
  }
  const carrier: Record<string, string> = { ...headers };
  W3C.inject(active, carrier, defaultTextMapSetter);
  return carrier;
}

/** What a tool-call request says about its call. */
export interface TracedCall {
  toolName: string;
  callId: string;
  traceContext: { [key: string]: string };
}

/**
 * `tool.invoke(args, toolContext)` inside the call's `execute_tool` span,
 * which is active while it runs (the tool's own spans nest under it). A throw
 * marks the span ERROR with the error's type (the ToolError.type the server
 * gets) and is rethrown.
 */
export async function invokeInToolSpan<C>(
  call: TracedCall,
  tool: { invoke(args: unknown, toolContext: C): Promise<unknown> },
  args: unknown,
  toolContext: C,
): Promise<unknown> {
  let parent: Context = context.active();
  if (Object.keys(call.traceContext).length > 0) {
    parent = W3C.extract(parent, call.traceContext, {
      get: (carrier, key) => carrier[key],
      keys: (carrier) => Object.keys(carrier),
    });
  }
  const span = trace.getTracer(TRACER_NAME).startSpan(
    `execute_tool ${call.toolName}`,
    {
      kind: SpanKind.INTERNAL,
      attributes: {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": call.toolName,
        "gen_ai.tool.call.id": call.callId,
        "gen_ai.tool.type": "function",
      },
    },
    parent,
  );
  try {
    return await context.with(trace.setSpan(parent, span), () => tool.invoke(args, toolContext));
  } catch (err) {
    if (span.isRecording()) {
      const errorType = errorTypeName(err);
      span.recordException(err instanceof Error ? err : String(err));
      span.setAttribute("error.type", errorType);
      span.setStatus({ code: SpanStatusCode.ERROR, message: errorType });
    }
    throw err;
  } finally {
    span.end();
  }
}

/** The type the server's ToolError gets for a thrown value (as run_stream's toolFailure names it). */
function errorTypeName(err: unknown): string {
  if (err instanceof Error) {
    return err.name || err.constructor.name;
  }
  return typeof err;
}
