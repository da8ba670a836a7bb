"""OpenTelemetry traces of runs: a span per run, model call and tool call.

Off unless the standard OTEL_* variables ask for OTLP (`from_env`); then the
server holds its own SDK TracerProvider with a batching OTLP exporter. Off,
nothing here is built: runs carry no `RunTrace`, and the engine's model-call
hook (forge_core/observe.py) is one ContextVar lookup.

A `RunTrace` is fed what the run already produces: every event it emits
(`observe`: tool calls, nudges, compactions, holds, the outcome), every
answer the client sends (`answered`), and each model call the engine makes
(`model_call`). Names and attributes follow OpenTelemetry's GenAI semantic
conventions (docs/tracing.md). No span carries argument values, tool
outputs or model text: they can hold credentials.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer, TracerProvider
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from forge.v1 import forge_service_pb2 as pb
from forge.v1 import messages_pb2 as mpb
from forge.v1 import workflow_pb2 as wpb
from forge_core.backends.base import Backend, BackendReply, ChatRequest, Usage
from forge_core.modes import ToolCallMode
from forge_core.observe import MODEL_CALLS
from forge_server import __version__

if TYPE_CHECKING:
    from opentelemetry.sdk.trace.export import SpanExporter

    from forge_server.runs import LiveRun
    from forge_server.starts import RunStart

log = logging.getLogger(__name__)

T = TypeVar("T")

# W3C Trace Context both ways, whatever OTEL_PROPAGATORS says: the SDKs of
# every language read and write exactly these two keys.
W3C = TraceContextTextMapPropagator()
TRACE_KEYS = ("traceparent", "tracestate")

# gRPC invocation metadata or HTTP headers: (key, value) pairs.
Carrier = Iterable[tuple[str, Any]]

# Forge's backend names -> gen_ai.provider.name.
_PROVIDERS = {"llama-server": "llama.cpp", "openai": "openai", "anthropic": "anthropic"}

_NUDGES = {
    mpb.MESSAGE_TYPE_RETRY_NUDGE: "retry",
    mpb.MESSAGE_TYPE_STEP_NUDGE: "step",
    mpb.MESSAGE_TYPE_PREREQUISITE_NUDGE: "prerequisite",
}
_ERROR_KINDS = {
    pb.TOOL_ERROR_KIND_HARD: "hard",
    pb.TOOL_ERROR_KIND_RESOLUTION: "resolution",
    pb.TOOL_ERROR_KIND_UNREACHABLE: "unreachable",
}
_SCREENING = {
    wpb.TOOL_OUTPUT_POLICY_ALLOW: "allow",
    wpb.TOOL_OUTPUT_POLICY_REDACT: "redact",
    wpb.TOOL_OUTPUT_POLICY_BLOCK: "block",
}


def enabled_by(environ: Mapping[str, str]) -> bool:
    """Whether the OTEL_* variables ask for OTLP traces."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporters = {e.strip().lower() for e in environ.get("OTEL_TRACES_EXPORTER", "").split(",")}
    if "none" in exporters:
        return False
    return "otlp" in exporters or any(
        environ.get(name)
        for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    )


def otlp_exporter(environ: Mapping[str, str]) -> SpanExporter:
    """The OTLP exporter the protocol variables name (grpc by default); it
    reads its endpoint, headers, certificates and timeout from OTEL_*."""
    variable = next(
        (
            name
            for name in ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL")
            if environ.get(name)
        ),
        "",
    )
    protocol = environ[variable].strip() if variable else "grpc"
    if protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

        return OTLPSpanExporter()
    if protocol == "http/protobuf":
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
            OTLPSpanExporter as HttpExporter,
        )

        return HttpExporter()
    raise SystemExit(f"{variable}={protocol!r}: Forge exports traces by grpc or http/protobuf")


class ServerTracing:
    """The server's tracer; `start_run` opens a run's span."""

    def __init__(self, provider: TracerProvider) -> None:
        self.provider = provider
        self.tracer: Tracer = provider.get_tracer("forge_server", __version__)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ServerTracing | None:
        """None (tracing off) unless the OTEL_* variables ask for OTLP."""
        env = os.environ if environ is None else environ
        if not enabled_by(env):
            return None
        # Resource.create reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES;
        # the sampler comes from OTEL_TRACES_SAMPLER.
        # The SDK is imported only here: off, the server never loads it.
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        attributes = {} if env.get("OTEL_SERVICE_NAME") else {"service.name": "forge-server"}
        provider = SdkTracerProvider(resource=Resource.create(attributes))
        provider.add_span_processor(BatchSpanProcessor(otlp_exporter(env)))
        log.info("OpenTelemetry traces on (OTLP)")
        return cls(provider)

    def shutdown(self) -> None:
        """Export what is still batched (an SDK provider; others are the
        application's to shut down)."""
        shutdown = getattr(self.provider, "shutdown", None)
        if shutdown is not None:
            shutdown()

    def start_run(
        self,
        backend: Backend,
        run_id: str,
        workflow: str,
        carrier: Carrier,
        *,
        session_id: str = "",
        api: str = "grpc",
        reattached: bool = False,
    ) -> RunTrace:
        """The run's span, child of the context the caller sent (gRPC
        metadata or HTTP headers: `carrier`'s traceparent/tracestate)."""
        found = {k.lower(): v for k, v in carrier if k.lower() in TRACE_KEYS}
        parent = W3C.extract(found) if found else None
        info = backend.info()
        facts = _Facts(
            model=info.model,
            provider=_PROVIDERS.get(info.name, info.name),
            constrained=info.tool_call_mode == ToolCallMode.CONSTRAINED,
            pieces=bool(getattr(backend, "call_pieces", False)),
        )
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": workflow,
            "gen_ai.provider.name": facts.provider,
            "gen_ai.request.model": facts.model,
            "forge.run_id": run_id,
            "forge.api": api,
        }
        if session_id:
            attributes["gen_ai.conversation.id"] = session_id
        if reattached:
            attributes["forge.reattached"] = True
        span = self.tracer.start_span(
            f"invoke_agent {workflow}", parent, SpanKind.SERVER, attributes
        )
        return RunTrace(self.tracer, span, facts)


def trace_run(
    tracing: ServerTracing | None,
    backend: Backend,
    run: LiveRun,
    start: RunStart,
    carrier: Carrier,
    *,
    reattached: bool,
) -> None:
    """Give a gRPC run its span when tracing is on."""
    if tracing is not None:
        run.traced(
            tracing.start_run(
                backend, run.run_id, start.workflow.name, carrier,
                session_id=start.session_id, reattached=reattached,
            )
        )  # fmt: skip


@dataclass(frozen=True)
class _Facts:
    """What every model call of a run shares."""

    model: str
    provider: str
    constrained: bool
    pieces: bool


class RunTrace:
    """One run's spans: the run's, its open tool calls', its model calls'."""

    __slots__ = ("_context", "_facts", "_tools", "_tracer", "span")

    def __init__(self, tracer: Tracer, span: Span, facts: _Facts) -> None:
        self._tracer = tracer
        self.span = span
        self._facts = facts
        self._context: Context = trace.set_span_in_context(span)
        # call id -> its execute_tool span, until the result comes.
        self._tools: dict[str, Span] = {}

    # forge_core.observe.ModelCallObserver
    def model_call(self, iteration: int, request: ChatRequest) -> _ModelCall:
        return _ModelCall(self, iteration, request, time.time_ns())

    def observe(self, response: pb.RunResponse) -> None:
        """An event the run emits (before it is journaled or sent: a tool
        call gets its span's context in `trace_context` here)."""
        kind = response.WhichOneof("kind")
        if kind == "tool_call":
            self._tool_call(response.tool_call)
        elif kind == "message_appended":
            self._message(response.message_appended.message)
        elif kind in ("run_completed", "run_failed"):
            self._ended(response)
        elif kind is not None and self.span.is_recording():
            self._event(kind, getattr(response, kind))

    def answered(self, answer: pb.ToolResult | pb.ApprovalDecision) -> None:
        """The client's first answer to a call or an approval request."""
        if isinstance(answer, pb.ApprovalDecision):
            self.span.add_event(
                "forge.approval",
                {"gen_ai.tool.call.id": answer.call_id, "forge.approved": answer.approved},
            )
            return
        span = self._tools.pop(answer.call_id, None)
        if span is None:
            return
        if answer.WhichOneof("outcome") == "error":
            error_type = answer.error.type or _ERROR_KINDS.get(answer.error.kind, "hard")
            span.set_attribute("error.type", error_type)
            span.set_status(Status(StatusCode.ERROR, error_type))
        span.end()

    def close(self) -> None:
        """The run is over here (ended, or handed to another server): every
        span still open ends."""
        for span in self._tools.values():
            span.set_attribute("error.type", "cancelled")
            span.set_status(Status(StatusCode.ERROR, "the run ended first"))
            span.end()
        self._tools.clear()
        if self.span.is_recording():
            self.span.end()

    def _tool_call(self, call: pb.ToolCallRequest) -> None:
        span = self._tracer.start_span(
            f"execute_tool {call.tool_name}",
            self._context,
            SpanKind.INTERNAL,
            {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": call.tool_name,
                "gen_ai.tool.call.id": call.call_id,
                "gen_ai.tool.type": "function",
                "forge.iteration": call.iteration,
            },
        )
        self._tools[call.call_id] = span
        W3C.inject(call.trace_context, trace.set_span_in_context(span))
        for c in call.coercions:
            self.span.add_event(
                "forge.coercion",
                {
                    "gen_ai.tool.name": call.tool_name,
                    "gen_ai.tool.call.id": call.call_id,
                    "forge.argument.path": c.path,
                    "forge.iteration": call.iteration,
                },
            )

    def _message(self, m: mpb.Message) -> None:
        nudge = _NUDGES.get(m.type)
        if nudge is None and m.type != mpb.MESSAGE_TYPE_TEXT_RESPONSE:
            return
        attributes: dict[str, Any] = {}
        if m.HasField("step_index"):
            attributes["forge.iteration"] = m.step_index
        if nudge is None:
            self.span.add_event("forge.reply_rejected", attributes)
        else:
            attributes["forge.nudge.kind"] = nudge
            self.span.add_event("forge.nudge", attributes)

    def _event(self, kind: str, e: Any) -> None:
        if kind == "compacted":
            self.span.add_event(
                "forge.compaction",
                {
                    "forge.compaction.strategy": e.strategy,
                    "forge.compaction.phase": e.phase,
                    "forge.compaction.tokens_before": e.tokens_before,
                    "forge.compaction.tokens_after": e.tokens_after,
                    "forge.compaction.messages_before": e.messages_before,
                    "forge.compaction.messages_after": e.messages_after,
                    "forge.iteration": e.iteration,
                },
            )
        elif kind == "approval_request":
            self.span.add_event(
                "forge.destructive_hold",
                {
                    "gen_ai.tool.name": e.tool_name,
                    "gen_ai.tool.call.id": e.call_id,
                    "forge.iteration": e.iteration,
                },
            )
        elif kind == "tool_output_screened":
            self.span.add_event(
                "forge.tool_output_screened",
                {
                    "gen_ai.tool.name": e.tool_name,
                    "gen_ai.tool.call.id": e.call_id,
                    "forge.screening.action": _SCREENING.get(e.action, "?"),
                    "forge.screening.secret_types": list(e.secret_types),
                    "forge.screening.secrets": e.secrets,
                    "forge.iteration": e.iteration,
                },
            )
        elif kind == "tool_call_cancelled":
            self.span.add_event("forge.tool_call_cancelled", {"gen_ai.tool.call.id": e.call_id})
            span = self._tools.pop(e.call_id, None)
            if span is not None:
                error_type = "timeout" if e.reason.startswith("no result within") else "cancelled"
                span.set_attribute("error.type", error_type)
                span.set_status(Status(StatusCode.ERROR, e.reason))
                span.end()
        elif kind == "queued":
            self.span.add_event(
                "forge.queued",
                {
                    "forge.queue.position": e.position,
                    "forge.queue.preempted": e.preempted,
                    "forge.iteration": e.iteration,
                },
            )

    def _ended(self, response: pb.RunResponse) -> None:
        span = self.span
        if response.HasField("run_completed"):
            done = response.run_completed
            usage, iterations = done.usage, done.iterations
            span.set_attribute("forge.terminal_tool", done.terminal_tool)
        else:
            failed = response.run_failed
            usage, iterations = failed.usage, failed.iterations
            reason = pb.FailureReason.Name(failed.reason).removeprefix("FAILURE_REASON_")
            span.set_attribute("error.type", reason)
            span.set_status(Status(StatusCode.ERROR, reason))
        self.finish(usage.prompt_tokens, usage.completion_tokens, iterations)

    def finish(self, input_tokens: int, output_tokens: int, iterations: int) -> None:
        """The run's totals, and every span ends."""
        self.span.set_attributes(
            {
                "gen_ai.usage.input_tokens": input_tokens,
                "gen_ai.usage.output_tokens": output_tokens,
                "forge.iterations": iterations,
            }
        )
        self.close()

    def fail(self, error: BaseException) -> None:
        """The run (an OpenAI endpoint's turn) raised `error`."""
        error_type = str(getattr(error, "reason", "")) or type(error).__name__
        self.span.set_attribute("error.type", error_type)
        self.span.set_status(Status(StatusCode.ERROR, error_type))
        self.close()


async def traced_turn(trace: RunTrace | None, work: Awaitable[T], usage: Callable[[T], Usage]) -> T:
    """`work` (a turn of the OpenAI endpoint: the engine in this task) with
    its model calls under `trace`'s run span, which ends with it."""
    if trace is None:
        return await work
    token = MODEL_CALLS.set(trace)
    try:
        result = await work
    except BaseException as exc:
        trace.fail(exc)
        raise
    finally:
        MODEL_CALLS.reset(token)
    used = usage(result)
    trace.finish(used.prompt_tokens, used.completion_tokens, used.model_calls)
    return result


class _ModelCall:
    """One model call; its span is made when it ends, with the time it
    started (a replayed turn, which cost no call, then gets none)."""

    __slots__ = ("_iteration", "_request", "_run", "_started")

    def __init__(self, run: RunTrace, iteration: int, request: ChatRequest, started: int) -> None:
        self._run = run
        self._iteration = iteration
        self._request = request
        self._started = started

    def done(self, reply: BackendReply) -> None:
        if reply.replayed:
            return
        span = self._span()
        if span.is_recording():
            usage = reply.usage
            span.set_attributes(
                {
                    "gen_ai.usage.input_tokens": usage.prompt_tokens,
                    "gen_ai.usage.output_tokens": usage.completion_tokens,
                    "gen_ai.usage.cache_read.input_tokens": usage.cached_prompt_tokens,
                }
            )
            if usage.backend:
                span.set_attribute("forge.backend", usage.backend)
            if reply.truncated:
                span.set_attribute("gen_ai.response.finish_reasons", ["length"])
        span.end()

    def failed(self, error: BaseException) -> None:
        span = self._span()
        error_type = type(error).__name__
        span.set_attribute("error.type", error_type)
        span.set_status(Status(StatusCode.ERROR, error_type))
        span.end()

    def _span(self) -> Span:
        run, request = self._run, self._request
        facts = run._facts
        span = run._tracer.start_span(
            f"chat {facts.model}",
            run._context,
            SpanKind.CLIENT,
            start_time=self._started,
        )
        if not span.is_recording():
            return span
        if facts.constrained and request.constrained:
            constraint = "pieces" if facts.pieces and not request.parallel else "grammar"
        else:
            constraint = "none"
        span.set_attributes(
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": facts.model,
                "gen_ai.provider.name": facts.provider,
                "gen_ai.request.temperature": request.temperature,
                "gen_ai.request.max_tokens": request.max_tokens,
                "forge.constraint": constraint,
                "forge.iteration": self._iteration,
            }
        )
        if request.allowed:
            span.set_attribute("forge.tools.allowed", list(request.allowed))
        for parameter, guardrail in request.preferred_reasons.items():
            values = request.preferred_values.get(parameter) or request.preferred_items.get(
                parameter, []
            )
            span.add_event(
                "forge.value_guardrail",
                {
                    "forge.parameter": parameter,
                    "forge.guardrail": guardrail,
                    "forge.values": len(values),
                },
            )
        return span
