"""Round-trip overhead: what one loop iteration costs through Forge.

A K-iteration workflow (K-1 calls of `step`, then the terminal `finish`)
against an instant scripted model, three ways, in the same run:

- forge+python-sdk: the real server in its own process (`forge-server
  --backend scripted`), driven by the Python SDK, which runs the tools;
- engine in-process: `forge_core.run_workflow` with the same scripted model
  and a local tool executor, no network (what the loop itself costs);
- grpc echo: a bare grpc.aio bidirectional stream (own process) answering
  each message with one reply, message sizes equal to Forge's tool result
  and tool call (the floor for any Python gRPC round trip);
- forge+go-sdk and forge+typescript-sdk: the same server and workflow driven
  by bench/go/roundtrip (Go SDK) and bench/ts/roundtrip.mjs (TypeScript SDK,
  the built clients/typescript/dist), when Go / Node and the build are there;
  each also against its own language's bare echo client (bench/go/roundtrip
  -echo, bench/ts/echo.mjs) on the same echo server: that language's floor;
- forge (asyncio loop) + python sdk: the same server started with
  --event-loop asyncio, so uvloop's share shows in the same run.

The server->client messages per iteration are counted on the wire (raw stub,
events bundled as the SDKs ask), next to the events they carry.

Per-iteration latency is the time between two consecutive tool invocations
as the tool function sees them. Reported as p50/p99 and as ratios against
the two baselines.

    .venv/bin/python -m bench.roundtrip [--iterations 50] [--runs 20]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import grpc

from bench._common import (
    RESULTS_DIR,
    ROOT,
    fmt,
    forge_server_argv,
    free_port,
    percentile,
    ratio,
    server_process,
    table,
    write_results,
)
from bench.echo import chat_stub
from forge.v1 import forge_service_pb2 as pb
from forge.v1.forge_service_pb2_grpc import ForgeServiceStub
from forge_client import ForgeClient, RunOptions, Workflow
from forge_core.backends.scripted import ScriptedBackend, call
from forge_core.loop import ToolOutcome, run_workflow
from forge_core.messages import ToolCallInfo
from forge_core.workflow import ToolSpec
from forge_core.workflow import Workflow as CoreWorkflow

WORKFLOW = "roundtrip"
STEP_SCHEMA = {
    "type": "object",
    "properties": {"i": {"type": "integer"}},
    "required": ["i"],
}


def script_turns(iterations: int) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "step", "args": {"i": i}}]} for i in range(1, iterations)
    ]
    return [*turns, {"tool_calls": [{"name": "finish", "args": {}}]}]


def write_script(iterations: int) -> Path:
    path = RESULTS_DIR / f"roundtrip-script-{iterations}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({WORKFLOW: script_turns(iterations)}))
    return path


def message_sizes(iterations: int) -> tuple[int, int]:
    """(client->server tool result, server->client tool call) in bytes, as Forge
    sends them in the middle of this workflow."""
    i = iterations // 2
    result = pb.RunRequest(tool_result=pb.ToolResult(call_id=f"call_{i}", output=f"ok {i}"))
    request = pb.RunResponse(
        tool_call=pb.ToolCallRequest(
            call_id=f"call_{i + 1}",
            tool_name="step",
            arguments_json=json.dumps({"i": i + 1}, separators=(",", ":")),
            iteration=i + 1,
        )
    )
    return result.ByteSize(), request.ByteSize()


def deltas(stamps: list[float]) -> list[float]:
    return [b - a for a, b in itertools.pairwise(stamps)]


# ── Forge through the Python SDK ─────────────────────────────────────────


def sdk_workflow(stamps: list[float]) -> Workflow:
    wf = Workflow(WORKFLOW, "Benchmark: call step until done, then finish.")

    @wf.tool
    async def step(i: int) -> str:
        """One step."""
        stamps.append(time.perf_counter())
        return f"ok {i}"

    @wf.tool(terminal=True)
    async def finish() -> str:
        """Finish."""
        stamps.append(time.perf_counter())
        return "done"

    return wf


async def measure_sdk(
    address: str, iterations: int, runs: int, warmup: int
) -> tuple[list[float], float]:
    """Per-iteration latencies, and server->client messages per iteration."""
    samples: list[float] = []
    messages = 0
    options = RunOptions(max_iterations=iterations)
    async with ForgeClient(address) as client:
        for n in range(warmup + runs):
            stamps: list[float] = []
            events: list[object] = []
            result = await client.run(
                sdk_workflow(stamps), "go", options=options, on_event=events.append
            )
            assert result.iterations == iterations, result
            if n >= warmup:
                samples += deltas(stamps)
                messages += len(events)
    return samples, messages / (runs * iterations)


# ── the engine in-process ────────────────────────────────────────────────


class LocalExecutor:
    def __init__(self, stamps: list[float]) -> None:
        self.stamps = stamps

    async def execute(self, calls: list[ToolCallInfo], iteration: int) -> list[ToolOutcome]:
        self.stamps.append(time.perf_counter())
        return [ToolOutcome(output=f"ok {c.args.get('i', '')}") for c in calls]


async def measure_in_process(iterations: int, runs: int, warmup: int) -> list[float]:
    turns = [call("step", i=i) for i in range(1, iterations)] + [call("finish")]
    backend = ScriptedBackend(scripts={WORKFLOW: turns})
    workflow = CoreWorkflow(
        name=WORKFLOW,
        tools=[ToolSpec("step", "One step.", STEP_SCHEMA), ToolSpec("finish", "Finish.")],
        terminal_tools=["finish"],
        description="Benchmark: call step until done, then finish.",
    )
    from forge_core.workflow import RunOptions as CoreOptions

    samples: list[float] = []
    for n in range(warmup + runs):
        stamps: list[float] = []
        result = await run_workflow(
            workflow,
            "go",
            backend=backend,
            executor=LocalExecutor(stamps),
            options=CoreOptions(max_iterations=iterations),
        )
        assert result.iterations == iterations
        if n >= warmup:
            samples += deltas(stamps)
    return samples


# ── the Go and TypeScript SDKs ───────────────────────────────────────────


def go_binary() -> Path | None:
    """Build bench/go/roundtrip once; None when there is no Go toolchain."""
    go = shutil.which("go") or (
        "/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None
    )
    if go is None:
        return None
    out = RESULTS_DIR / "roundtrip-go"
    out.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [go, "build", "-o", str(out), "./roundtrip"], cwd=ROOT / "bench" / "go", check=True
    )
    return out


def ts_command() -> list[str] | None:
    node = shutil.which("node")
    if node is None or not (ROOT / "clients" / "typescript" / "dist" / "index.js").exists():
        return None
    return [node, str(ROOT / "bench" / "ts" / "roundtrip.mjs")]


async def measure_external(
    command: list[str], address: str, iterations: int, runs: int, warmup: int
) -> list[float]:
    """`command` (an SDK's bench client, or an echo client when it names its
    own address) against `address`."""
    target = (
        []
        if "--echo" in command or "--address" in command
        else [f"--{'addr' if command[0].endswith('roundtrip-go') else 'address'}", address]
    )
    proc = await asyncio.create_subprocess_exec(
        *command,
        *target,
        "--iterations",
        str(iterations),
        "--runs",
        str(runs),
        "--warmup",
        str(warmup),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    out, err = await asyncio.wait_for(proc.communicate(), 600)
    if proc.returncode != 0:
        raise RuntimeError(f"{command[-1]} failed: {err.decode()[-2000:]}")
    samples: list[float] = json.loads(out)["samples_us"]
    return [us / 1e6 for us in samples]


# ── bare gRPC echo ───────────────────────────────────────────────────────


async def measure_echo(
    address: str, iterations: int, runs: int, warmup: int, request_bytes: int
) -> list[float]:
    samples: list[float] = []
    payload = b"r" * request_bytes
    async with grpc.aio.insecure_channel(address) as channel:
        chat = chat_stub(channel)
        for n in range(warmup + runs):
            stream = chat()
            stamps = [time.perf_counter()]
            for _ in range(iterations):
                await stream.write(payload)
                reply = await stream.read()
                assert reply is not grpc.aio.EOF
                stamps.append(time.perf_counter())
            await stream.done_writing()
            if n >= warmup:
                samples += deltas(stamps)
    return samples


async def record_wire(address: str, iterations: int, batch: bool) -> list[pb.RunResponse]:
    """Every server->client message of one run as it came on the wire (raw
    stub), answering each tool call; `batch`: events bundled, as the SDKs
    ask for them."""
    start = pb.StartRun(
        workflow=sdk_workflow([]).to_proto(),
        user_message="go",
        options=RunOptions(max_iterations=iterations).to_proto(),
        events=pb.EventOptions(batch=batch),
    )
    out: list[pb.RunResponse] = []
    async with grpc.aio.insecure_channel(address) as channel:
        stream = ForgeServiceStub(channel).Run()
        await stream.write(pb.RunRequest(start=start))
        while True:
            response = await stream.read()
            if response is grpc.aio.EOF:
                return out
            assert isinstance(response, pb.RunResponse)
            out.append(response)
            for event in unbatched(response):
                if event.WhichOneof("kind") == "tool_call":
                    result = pb.ToolResult(call_id=event.tool_call.call_id, output="ok")
                    await stream.write(pb.RunRequest(tool_result=result))


def unbatched(response: pb.RunResponse) -> list[pb.RunResponse]:
    if response.WhichOneof("kind") == "batch":
        return list(response.batch.events)
    return [response]


async def wire_messages(address: str, iterations: int) -> dict[str, float]:
    """Per iteration of one run: the server->client messages on the wire and
    the events they carry, with batches asked for (as the SDKs do)."""
    messages = await record_wire(address, iterations, batch=True)
    events = sum(len(unbatched(m)) for m in messages)
    return {"messages": len(messages) / iterations, "events": events / iterations}


def summary(name: str, samples: list[float]) -> dict[str, Any]:
    return {
        "path": name,
        "samples": len(samples),
        "p50_us": percentile(samples, 50) * 1e6,
        "p99_us": percentile(samples, 99) * 1e6,
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    request_bytes, reply_bytes = message_sizes(args.iterations)
    script = write_script(args.iterations)
    forge_port, echo_port = free_port(), free_port()
    forge_argv = forge_server_argv(forge_port, "--backend", "scripted", "--script", str(script))
    echo_argv = [
        sys.executable,
        "-m",
        "bench.echo",
        "--port",
        str(echo_port),
        "--reply-bytes",
        str(reply_bytes),
    ]
    asyncio_port = free_port()
    asyncio_argv = [*forge_server_argv(asyncio_port, "--event-loop", "asyncio"), *forge_argv[-4:]]
    async with (
        server_process(forge_argv, forge_port, "roundtrip-forge") as forge,
        server_process(asyncio_argv, asyncio_port, "roundtrip-forge-asyncio") as forge_asyncio,
        server_process(echo_argv, echo_port, "roundtrip-echo") as echo,
    ):
        # Interleave the three so that load from other processes on the
        # machine hits them alike.
        sdk: list[float] = []
        sdk_asyncio: list[float] = []
        local: list[float] = []
        floor: list[float] = []
        others: dict[str, list[str]] = {}
        # Each language's bare echo client against the same echo server.
        floors: dict[str, list[str]] = {}
        if not args.python_only:
            go = go_binary()
            ts = ts_command()
            size = ["--request-bytes", str(request_bytes)]
            if go is not None:
                others["forge + go sdk"] = [str(go)]
                floors["grpc echo, go client"] = [str(go), "--echo", echo.address, *size]
            if ts is not None:
                others["forge + typescript sdk"] = ts
                echo_mjs = str(ROOT / "bench" / "ts" / "echo.mjs")
                floors["grpc echo, node client"] = [
                    ts[0],
                    echo_mjs,
                    "--address",
                    echo.address,
                    *size,
                ]
        other_samples: dict[str, list[float]] = {name: [] for name in [*others, *floors]}
        per_round = max(1, args.runs // args.rounds)
        events = 0.0
        for _ in range(args.rounds):
            s, events = await measure_sdk(forge.address, args.iterations, per_round, args.warmup)
            sdk += s
            s, _ = await measure_sdk(forge_asyncio.address, args.iterations, per_round, args.warmup)
            sdk_asyncio += s
            local += await measure_in_process(args.iterations, per_round, args.warmup)
            floor += await measure_echo(
                echo.address, args.iterations, per_round, args.warmup, request_bytes
            )
            for name, command in [*others.items(), *floors.items()]:
                other_samples[name] += await measure_external(
                    command, forge.address, args.iterations, per_round, args.warmup
                )
        wire = await wire_messages(forge.address, args.iterations)
    rows = [
        summary("grpc echo (floor)", floor),
        summary("engine in-process", local),
        summary("forge + python sdk", sdk),
        summary("forge (asyncio loop) + python sdk", sdk_asyncio),
        *(summary(name, samples) for name, samples in other_samples.items()),
    ]
    echo_row, local_row = rows[0], rows[1]
    own_floor = {
        "forge + go sdk": "grpc echo, go client",
        "forge + typescript sdk": "grpc echo, node client",
    }
    by_path = {row["path"]: row for row in rows}
    for row in rows:
        row["p50_vs_echo"] = ratio(row["p50_us"], echo_row["p50_us"])
        row["p99_vs_echo"] = ratio(row["p99_us"], echo_row["p99_us"])
        row["p50_vs_in_process"] = ratio(row["p50_us"], local_row["p50_us"])
        row["p99_vs_in_process"] = ratio(row["p99_us"], local_row["p99_us"])
        own = by_path.get(own_floor.get(row["path"], ""), echo_row)
        row["p50_vs_own_echo"] = ratio(row["p50_us"], own["p50_us"])
        row["p99_vs_own_echo"] = ratio(row["p99_us"], own["p99_us"])
    return {
        "iterations_per_run": args.iterations,
        "runs": per_round * args.rounds,
        "message_bytes": {"tool_result": request_bytes, "tool_call": reply_bytes},
        "sdk_events_per_iteration": events,
        "server_to_client_messages_per_iteration": wire["messages"],
        "events_per_iteration_on_the_wire": wire["events"],
        "rows": rows,
    }


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--iterations", type=int, default=50, help="K: iterations per run")
    p.add_argument("--runs", type=int, default=20, help="measured runs per path")
    p.add_argument("--rounds", type=int, default=4, help="interleaved rounds")
    p.add_argument("--warmup", type=int, default=1, help="unmeasured runs per round")
    p.add_argument("--python-only", action="store_true", help="skip the Go and TypeScript SDKs")
    args = p.parse_args(argv)
    data = asyncio.run(run(args))
    headers = ["path", "p50 us", "p99 us", "p50 / echo", "p99 / echo", "p50 / in-proc"]
    headers += ["p99 / in-proc", "p50 / own echo", "p99 / own echo"]
    print(
        f"Round-trip overhead: {data['runs']} runs x {args.iterations} iterations per path; "
        f"tool result {data['message_bytes']['tool_result']} B in, tool call "
        f"{data['message_bytes']['tool_call']} B out; Forge sends "
        f"{fmt(data['server_to_client_messages_per_iteration'], 2)} messages per iteration "
        f"on the wire, carrying {fmt(data['events_per_iteration_on_the_wire'], 2)} events"
    )
    print(
        table(
            headers,
            [
                [
                    r["path"],
                    fmt(r["p50_us"], 0),
                    fmt(r["p99_us"], 0),
                    r["p50_vs_echo"],
                    r["p99_vs_echo"],
                    r["p50_vs_in_process"],
                    r["p99_vs_in_process"],
                    r["p50_vs_own_echo"],
                    r["p99_vs_own_echo"],
                ]
                for r in data["rows"]
            ],
        )
    )
    print(f"results: {write_results('roundtrip', data)}")


if __name__ == "__main__":
    main()
