"""Prometheus metrics of the real server, scraped over HTTP (issue 13).

Runs go through the production server and the Python SDK (scripted model);
the test reads /metrics as Prometheus would and parses it with
prometheus_client's own parser.
"""

from __future__ import annotations

import grpc
import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from forge.v1 import forge_service_pb2 as pb
from forge.v1 import forge_service_pb2_grpc as pb_grpc
from forge_client import ForgeClient, RunFailedError, Workflow
from forge_core.backends.scripted import ScriptedBackend, call, text
from forge_server.app import ForgeServer, ServerOptions
from tests.helpers import address, running_server, settled
from tests.integration.test_bad_input import next_tool_call, rejection, start_request
from tests.integration.test_run_stream import weather_workflow


def exploding_workflow() -> Workflow:
    wf = Workflow("broken", "Fails.")

    @wf.tool(terminal=True)
    def explode() -> str:
        """Explode."""
        raise RuntimeError("boom")

    return wf


async def scrape(server: ForgeServer) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """{(sample name, sorted labels): value} from the server's /metrics."""
    async with httpx.AsyncClient() as http:
        response = await http.get(f"http://127.0.0.1:{server.metrics_port}/metrics")
    response.raise_for_status()
    samples = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


async def test_runs_guardrails_tools_and_rejections_are_counted() -> None:
    backend = ScriptedBackend(
        scripts={
            "weather": [
                text("I think it is sunny."),  # no tool call: a retry nudge
                call("get_weather", city="Paris"),
                call("report_weather", city="Paris", weather="72F and sunny in Paris"),
            ],
            "broken": [call("explode")],
        }
    )
    options = ServerOptions(host="127.0.0.1", port=0, metrics_port=0)
    async with running_server(backend, options) as server:
        assert server.metrics_port
        async with ForgeClient(address(server)) as client:
            await client.run(weather_workflow([]), "Weather in Paris?")
            with pytest.raises(RunFailedError) as failed:
                await client.run(exploding_workflow(), "Explode")
        async with grpc.aio.insecure_channel(address(server)) as channel:
            run = pb_grpc.ForgeServiceStub(channel).Run()
            await run.write(pb.RunRequest(cancel=pb.CancelRun()))
            await rejection(run)
        await settled(lambda: server.service.active_runs == 0)
        m = await scrape(server)
    assert m[("forge_runs_started_total", ())] == 2
    assert m[("forge_runs_finished_total", (("outcome", "completed"), ("reason", "")))] == 1
    reason = failed.value.reason  # the script runs out after the failures: BACKEND
    assert m[("forge_runs_finished_total", (("outcome", "failed"), ("reason", reason)))] == 1
    assert m[("forge_requests_rejected_total", (("reason", "INVALID_REQUEST"),))] == 1
    # The weather run's text answer came back as a transient message + nudge.
    assert m[("forge_guardrail_interventions_total", (("kind", "retry_nudge"),))] >= 1
    # get_weather, report_weather and the exploding tool's attempts.
    assert m[("forge_tool_round_trip_seconds_count", ())] >= 3
    assert m[("forge_model_call_seconds_count", ())] >= 4
    assert m[("forge_open_streams", ())] == 0
    assert m[("forge_active_runs", ())] == 0


async def test_a_run_in_progress_shows_in_the_gauges() -> None:
    backend = ScriptedBackend(scripts={"weather": [call("get_weather", city="Paris")]})
    options = ServerOptions(host="127.0.0.1", port=0, metrics_port=0)
    async with running_server(backend, options) as server:
        async with grpc.aio.insecure_channel(address(server)) as channel:
            run = pb_grpc.ForgeServiceStub(channel).Run()
            await run.write(start_request())
            await next_tool_call(run)
            during = await scrape(server)
            run.cancel()
    assert during[("forge_open_streams", ())] == 1
    assert during[("forge_active_runs", ())] == 1
