"""Prometheus metrics (`--metrics-port`): what an operator graphs and alerts on.

Each server owns its registry, so several servers in one process (the tests)
do not share counters. Gauges read the service's own counts when scraped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from forge_core.backends.base import Usage
from forge_core.llama_host.devices import DeviceReport
from forge_core.messages import Message

if TYPE_CHECKING:
    from wsgiref.simple_server import WSGIServer

# Model calls take from tens of milliseconds (a GPU) to minutes (shared CPUs).
_MODEL_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)
# A tool round trip is the client's tool plus two stream hops.
_TOOL_BUCKETS = (0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 30, 120, 600)


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.runs_started = Counter("forge_runs_started", "Runs accepted", registry=r)
        self.runs_finished = Counter(
            "forge_runs_finished",
            "Runs ended, by outcome and failure reason",
            ["outcome", "reason"],
            registry=r,
        )
        self.runs_abandoned = Counter(
            "forge_runs_abandoned",
            "Journaled runs ended as abandoned: their server died and no client reattached "
            "within the reattach grace after their lease ran out",
            registry=r,
        )
        self.rejected = Counter(
            "forge_requests_rejected",
            "Streams or calls refused with a gRPC status, by reason",
            ["reason"],
            registry=r,
        )
        self.interventions = Counter(
            "forge_guardrail_interventions",
            "Corrections the guardrails made: nudges, retried answers, coerced arguments",
            ["kind"],
            registry=r,
        )
        self.model_calls = Histogram(
            "forge_model_call_seconds",
            "Model time per call (prompt processing + generation)",
            buckets=_MODEL_BUCKETS,
            registry=r,
        )
        self.tokens = Counter("forge_model_tokens", "Tokens, by kind", ["kind"], registry=r)
        self.tool_round_trips = Histogram(
            "forge_tool_round_trip_seconds",
            "From sending a tool call to its result arriving",
            buckets=_TOOL_BUCKETS,
            registry=r,
        )
        self.compactions = Counter(
            "forge_compactions", "Context compactions, by strategy", ["strategy"], registry=r
        )
        self.openai_requests = Counter(
            "forge_openai_requests",
            "Requests to the OpenAI-compatible endpoint, by route and HTTP status",
            ["route", "status"],
            registry=r,
        )
        self.open_streams = Gauge("forge_open_streams", "Open Run streams", registry=r)
        self.active_runs = Gauge("forge_active_runs", "Runs in progress", registry=r)
        self.queued_runs = Gauge("forge_queued_runs", "Runs waiting for a slot", registry=r)
        self._server: WSGIServer | None = None

    def watch(
        self,
        open_streams: Callable[[], float],
        active_runs: Callable[[], float],
        queued_runs: Callable[[], float],
    ) -> None:
        self.open_streams.set_function(open_streams)
        self.active_runs.set_function(active_runs)
        self.queued_runs.set_function(queued_runs)

    def watch_device(self, read: Callable[[], DeviceReport | None]) -> None:
        """forge_llama_device_info{device="CPU"} 1, read at each scrape
        (absent for backends that are not llama-server)."""
        self.registry.register(_DeviceInfo(read))

    def message(self, message: Message) -> None:
        """Count what a guardrail added to the conversation."""
        if message.transient:
            self.interventions.labels(message.type.value).inc()
        for call in message.tool_calls:
            if call.coercions:
                self.interventions.labels("coercion").inc(len(call.coercions))

    def usage(self, usage: Usage | None) -> None:
        if usage is None:
            return
        for it in usage.iterations:
            self.model_calls.observe((it.prompt_ms + it.generation_ms) / 1000.0)
        self.tokens.labels("prompt").inc(usage.prompt_tokens)
        self.tokens.labels("cached_prompt").inc(usage.cached_prompt_tokens)
        self.tokens.labels("completion").inc(usage.completion_tokens)

    def serve(self, port: int, host: str) -> int:
        """Expose /metrics over HTTP; the port it listens on."""
        server, _thread = start_http_server(port, addr=host, registry=self.registry)
        self._server = server
        return int(server.server_port)

    def close(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None


class _DeviceInfo(Collector):
    # A collector, not a Gauge: the label itself is the value, and it can
    # change when a restarted llama-server finds another device.
    def __init__(self, read: Callable[[], DeviceReport | None]) -> None:
        self._read = read

    def describe(self) -> Iterable[Metric]:
        # Nothing to check for clashes at registration; keeps it from
        # reading the device before the service is built.
        return []

    def collect(self) -> Iterable[Metric]:
        report = self._read()
        if report is None:
            return
        family = GaugeMetricFamily(
            "forge_llama_device_info",
            "The device llama-server runs the model on (CPU, Vulkan0, unknown)",
            labels=["device"],
        )
        family.add_metric([report.device], 1)
        yield family
