"""Concurrency: many runs at once against one Forge server (instant model).

For each level (10 / 100 / 1000 concurrent streams) the Forge server runs in
its own process (`forge-server --backend scripted`, so /proc shows its CPU
and memory alone) and the Python SDK drives every run from this process. Each
run's first tool call waits at a barrier until all streams are open: the
server's memory is read then (memory per open stream), and from the release
on every run does its remaining tool round trips as fast as it can.

The same protocol runs against the bare grpc.aio echo server (own process,
same message sizes) as the baseline: throughput, p99 latency, server CPU per
round trip and memory per open stream are reported as ratios Forge / echo.
A level fails if a single run fails.

    .venv/bin/python -m bench.concurrency [--levels 10 100 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import math
import os
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from bench._common import (
    RESULTS_DIR,
    ProcStats,
    ServerProcess,
    fmt,
    forge_server_argv,
    free_port,
    peak_rss,
    percentile,
    proc_stats,
    raise_fd_limit,
    ratio,
    server_process,
    table,
    write_results,
)
from bench.echo import chat_stub
from bench.roundtrip import message_sizes
from forge_client import ForgeClient, RunOptions, Workflow

STREAMS_PER_CHANNEL = 100


def iterations_for(streams: int, target_round_trips: int) -> int:
    """Iterations per run so that a level does about `target_round_trips`."""
    return max(11, min(201, math.ceil(target_round_trips / streams) + 1))


def write_script(iteration_counts: list[int]) -> Path:
    scripts: dict[str, list[dict[str, Any]]] = {}
    for k in iteration_counts:
        turns: list[dict[str, Any]] = [
            {"tool_calls": [{"name": "step", "args": {"i": i}}]} for i in range(1, k)
        ]
        scripts[f"conc{k}"] = [*turns, {"tool_calls": [{"name": "finish", "args": {}}]}]
    path = RESULTS_DIR / "concurrency-script.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(scripts))
    return path


@dataclass
class Barrier:
    """Holds every stream at its first round trip until all have arrived."""

    expected: int
    arrived: int = 0
    all_arrived: asyncio.Event = field(default_factory=asyncio.Event)
    release: asyncio.Event = field(default_factory=asyncio.Event)

    async def wait(self) -> None:
        self.arrived += 1
        if self.arrived >= self.expected:
            self.all_arrived.set()
        await self.release.wait()


@dataclass
class Level:
    streams: int
    iterations: int
    round_trips: int = 0
    failures: int = 0
    errors: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    wall_s: float = 0.0
    cpu_s: float = 0.0
    client_cpu_s: float = 0.0
    rss_idle: int = 0
    rss_open: int = 0
    rss_peak: int = 0

    def report(self) -> dict[str, Any]:
        return {
            "streams": self.streams,
            "iterations_per_run": self.iterations,
            "round_trips": self.round_trips,
            "failures": self.failures,
            "errors": self.errors[:5],
            "round_trips_per_s": self.round_trips / self.wall_s if self.wall_s else 0.0,
            "p50_ms": percentile(self.latencies, 50) * 1e3,
            "p99_ms": percentile(self.latencies, 99) * 1e3,
            "server_cpu_ms_per_round_trip": 1e3 * self.cpu_s / max(1, self.round_trips),
            "client_cpu_ms_per_round_trip": 1e3 * self.client_cpu_s / max(1, self.round_trips),
            "server_rss_idle_mb": self.rss_idle / 2**20,
            "server_rss_open_mb": self.rss_open / 2**20,
            "server_rss_peak_mb": self.rss_peak / 2**20,
            "kb_per_open_stream": (self.rss_open - self.rss_idle) / 1024 / self.streams,
            "wall_s": self.wall_s,
        }


StreamBody = Callable[[int, Barrier, list[float]], Awaitable[None]]


async def drive(server: ServerProcess, level: Level, body: StreamBody, timeout_s: float) -> None:
    """Open `level.streams` streams, measure at the barrier, release, measure."""
    level.rss_idle = server.stats().rss_bytes
    barrier = Barrier(level.streams)
    stamps: list[list[float]] = [[] for _ in range(level.streams)]

    async def one(n: int) -> None:
        try:
            await body(n, barrier, stamps[n])
        except Exception as exc:
            level.failures += 1
            level.errors.append(f"{type(exc).__name__}: {exc}"[:300])
            if barrier.arrived < barrier.expected:
                # Never hold the others hostage.
                barrier.expected -= 1
                if barrier.arrived >= barrier.expected:
                    barrier.all_arrived.set()

    tasks = [asyncio.create_task(one(n)) for n in range(level.streams)]
    try:
        await asyncio.wait_for(barrier.all_arrived.wait(), timeout_s)
        await asyncio.sleep(0.5)  # let the server settle before reading memory
        level.rss_open = server.stats().rss_bytes
        before: ProcStats = server.stats()
        client_before = proc_stats(os.getpid())
        start = time.perf_counter()
        barrier.release.set()
        await asyncio.wait_for(asyncio.gather(*tasks), timeout_s)
        level.wall_s = time.perf_counter() - start
        level.cpu_s = server.stats().cpu_s - before.cpu_s
        level.client_cpu_s = proc_stats(os.getpid()).cpu_s - client_before.cpu_s
        level.rss_peak = peak_rss(server.pid)
    finally:
        barrier.release.set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    for s in stamps:
        # stamps[0] is the release; every later stamp ends one round trip.
        level.latencies += [b - a for a, b in itertools.pairwise(s)]
        level.round_trips += max(0, len(s) - 1)


def channels_for(streams: int) -> int:
    return max(1, math.ceil(streams / STREAMS_PER_CHANNEL))


# ── Forge ────────────────────────────────────────────────────────────────


def bench_workflow(iterations: int, barrier: Barrier, stamps: list[float]) -> Workflow:
    wf = Workflow(f"conc{iterations}", "Benchmark: call step until done, then finish.")

    @wf.tool
    async def step(i: int) -> str:
        """One step."""
        stamps.append(time.perf_counter())
        if i == 1:
            await barrier.wait()
            stamps[0] = time.perf_counter()
        return f"ok {i}"

    @wf.tool(terminal=True)
    async def finish() -> str:
        """Finish."""
        stamps.append(time.perf_counter())
        return "done"

    return wf


async def forge_level(
    streams: int, iterations: int, script: Path, timeout_s: float, server_args: list[str]
) -> Level:
    port = free_port()
    argv = forge_server_argv(
        port,
        "--backend",
        "scripted",
        "--script",
        str(script),
        "--max-active-runs",
        str(max(1024, streams)),
        *server_args,
    )
    level = Level(streams, iterations)
    async with server_process(argv, port, f"concurrency-forge-{streams}") as server:
        clients = [ForgeClient(server.address) for _ in range(channels_for(streams))]
        options = RunOptions(max_iterations=iterations)

        async def body(n: int, barrier: Barrier, stamps: list[float]) -> None:
            client = clients[n % len(clients)]
            wf = bench_workflow(iterations, barrier, stamps)
            result = await client.run(wf, "go", options=options)
            if result.iterations != iterations:
                raise RuntimeError(f"run ended after {result.iterations} iterations")

        try:
            await drive(server, level, body, timeout_s)
        finally:
            for client in clients:
                await client.close()
    return level


# ── bare gRPC echo ───────────────────────────────────────────────────────


async def echo_level(
    streams: int, iterations: int, request_bytes: int, reply_bytes: int, timeout_s: float
) -> Level:
    port = free_port()
    argv = [sys.executable, "-m", "bench.echo", "--port", str(port)]
    argv += ["--reply-bytes", str(reply_bytes)]
    level = Level(streams, iterations)
    payload = b"r" * request_bytes
    async with server_process(argv, port, f"concurrency-echo-{streams}") as server:
        channels = [grpc.aio.insecure_channel(server.address) for _ in range(channels_for(streams))]
        stubs = [chat_stub(c) for c in channels]

        async def body(n: int, barrier: Barrier, stamps: list[float]) -> None:
            stream = stubs[n % len(stubs)]()
            for i in range(iterations):
                await stream.write(payload)
                if await stream.read() is grpc.aio.EOF:
                    raise RuntimeError("echo stream ended early")
                stamps.append(time.perf_counter())
                if i == 0:
                    await barrier.wait()
                    stamps[0] = time.perf_counter()
            await stream.done_writing()

        try:
            await drive(server, level, body, timeout_s)
        finally:
            for c in channels:
                await c.close()
    return level


async def run(args: argparse.Namespace) -> dict[str, Any]:
    fd_limit = raise_fd_limit()
    counts = {c: iterations_for(c, args.round_trips) for c in args.levels}
    script = write_script(sorted(set(counts.values())))
    request_bytes, reply_bytes = message_sizes(20)
    rows = []
    for streams in args.levels:
        k = counts[streams]
        echo = await echo_level(streams, k, request_bytes, reply_bytes, args.timeout)
        forge = await forge_level(streams, k, script, args.timeout, args.server_args)
        f, e = forge.report(), echo.report()
        rows.append(
            {
                "streams": streams,
                "forge": f,
                "echo": e,
                "round_trips_per_s_vs_echo": ratio(f["round_trips_per_s"], e["round_trips_per_s"]),
                "p99_vs_echo": ratio(f["p99_ms"], e["p99_ms"]),
                "cpu_per_round_trip_vs_echo": ratio(
                    f["server_cpu_ms_per_round_trip"], e["server_cpu_ms_per_round_trip"]
                ),
                "memory_per_stream_vs_echo": ratio(
                    f["kb_per_open_stream"], e["kb_per_open_stream"]
                ),
            }
        )
        print(
            f"{streams} streams: forge {f['round_trips']} round trips, {f['failures']} failed; "
            f"echo {e['round_trips']}, {e['failures']} failed",
            flush=True,
        )
    return {"fd_limit": fd_limit, "channels_per_100_streams": 1, "levels": rows}


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--levels", type=int, nargs="+", default=[10, 100, 1000])
    p.add_argument(
        "--round-trips", type=int, default=2000, help="about this many per level (11-201 per run)"
    )
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per phase of a level")
    p.add_argument(
        "--server-arg",
        dest="server_args",
        action="append",
        default=[],
        help="one more forge-server argument (repeat), e.g. --server-arg=--journal=none",
    )
    args = p.parse_args(argv)
    data = asyncio.run(run(args))
    print(
        "Concurrency (instant scripted model; ratio = Forge / bare grpc.aio echo, "
        "same message sizes, both servers in their own process)"
    )
    print(
        table(
            [
                "streams",
                "round trips/s",
                "x echo",
                "p99 ms",
                "x echo",
                "server CPU ms/rt",
                "x echo",
                "client CPU ms/rt",
                "server RSS MB (open)",
                "KB/open stream",
                "x echo",
                "failed",
            ],
            [
                [
                    r["streams"],
                    fmt(r["forge"]["round_trips_per_s"], 0),
                    r["round_trips_per_s_vs_echo"],
                    r["forge"]["p99_ms"],
                    r["p99_vs_echo"],
                    fmt(r["forge"]["server_cpu_ms_per_round_trip"], 3),
                    r["cpu_per_round_trip_vs_echo"],
                    fmt(r["forge"]["client_cpu_ms_per_round_trip"], 3),
                    fmt(r["forge"]["server_rss_open_mb"], 1),
                    fmt(r["forge"]["kb_per_open_stream"], 1),
                    r["memory_per_stream_vs_echo"],
                    r["forge"]["failures"] + r["echo"]["failures"],
                ]
                for r in data["levels"]
            ],
        )
    )
    print(f"results: {write_results('concurrency', data)}")
    failed = sum(r["forge"]["failures"] + r["echo"]["failures"] for r in data["levels"])
    if failed:
        print(f"FAILED: {failed} runs failed", file=sys.stderr)
        raise SystemExit(1)


if __name__ == "__main__":
    main()
