"""A real OTLP/gRPC trace receiver on a free loopback port, for the trace
tests and bench/tracing_cost.py: what an OpenTelemetry Collector would get.

It implements the collector's TraceService from `opentelemetry-proto` on a
threaded grpc server (the SDK's exporter sends from its own thread) and
keeps every span it was sent, flattened, with hex ids.
"""

from __future__ import annotations

import threading
import time
from concurrent import futures
from dataclasses import dataclass, field
from typing import Any

import grpc
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.proto.common.v1.common_pb2 import AnyValue
from opentelemetry.proto.trace.v1 import trace_pb2


def _value(v: AnyValue) -> Any:
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [_value(x) for x in v.array_value.values]
    return getattr(v, kind) if kind else None


@dataclass
class ReceivedSpan:
    name: str
    trace_id: str
    span_id: str
    parent_span_id: str
    kind: int
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    status_code: int
    resource: dict[str, Any] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        return self.status_code == trace_pb2.Status.STATUS_CODE_ERROR


class _TraceService(trace_service_pb2_grpc.TraceServiceServicer):
    def __init__(self, receiver: OtlpReceiver) -> None:
        self.receiver = receiver

    def Export(
        self, request: trace_service_pb2.ExportTraceServiceRequest, context: Any
    ) -> trace_service_pb2.ExportTraceServiceResponse:
        self.receiver.take(request)
        return trace_service_pb2.ExportTraceServiceResponse()


class OtlpReceiver:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._spans: list[ReceivedSpan] = []
        self.requests = 0
        self._server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
        trace_service_pb2_grpc.add_TraceServiceServicer_to_server(  # type: ignore[no-untyped-call]
            _TraceService(self), self._server
        )
        self.port = self._server.add_insecure_port("127.0.0.1:0")
        self._server.start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self._server.stop(0)

    def take(self, request: trace_service_pb2.ExportTraceServiceRequest) -> None:
        received = []
        for rs in request.resource_spans:
            resource = {a.key: _value(a.value) for a in rs.resource.attributes}
            for ss in rs.scope_spans:
                for s in ss.spans:
                    received.append(
                        ReceivedSpan(
                            s.name, s.trace_id.hex(), s.span_id.hex(), s.parent_span_id.hex(),
                            s.kind, {a.key: _value(a.value) for a in s.attributes},
                            [(e.name, {a.key: _value(a.value) for a in e.attributes})
                             for e in s.events],
                            s.status.code, resource,
                        )
                    )  # fmt: skip
        with self._lock:
            self.requests += 1
            self._spans.extend(received)

    def spans(self) -> list[ReceivedSpan]:
        with self._lock:
            return list(self._spans)

    def clear(self) -> None:
        with self._lock:
            self._spans.clear()

    def wait_for(self, count: int, timeout_s: float = 10.0) -> list[ReceivedSpan]:
        """At least `count` spans (the exporter batches in its own thread)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            spans = self.spans()
            if len(spans) >= count:
                return spans
            time.sleep(0.02)
        return self.spans()
