"""What OpenTelemetry tracing costs per tool round trip, off and on (issue 35).

The round-trip workload of bench/roundtrip.py (a K-iteration workflow: K-1
calls of `step`, then `finish`, against the instant scripted model; the
Python SDK runs the tools), three ways, interleaved in the same run:

- base: server and SDK at the commit before tracing existed (`--base`,
  extracted with `git archive`), no OpenTelemetry at all;
- off: this tree, no OTEL_* variables and no tracer provider in the caller
  (what every deployment gets unless it asks);
- on: this tree, the server exporting OTLP/gRPC (OTEL_EXPORTER_OTLP_ENDPOINT)
  and the caller with an SDK tracer provider exporting OTLP/gRPC, a span
  around each run: every run, model call and tool call is a span on both
  sides (the batch processors' defaults), received by a real OTLP receiver
  on loopback (tests/otlp_receiver.py).

Each way has its own `forge-server --backend scripted` process; each client
is a process of its own too (so `base` imports its own SDK). A round is one
client process per way, in rotating order; the figure is the time between
two consecutive tool invocations, as the tool function sees them.

    .venv/bin/python -m bench.tracing_cost [--rounds 6] [--runs 20] [--iterations 50]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

from bench._common import (
    RESULTS_DIR,
    ROOT,
    free_port,
    percentile,
    table,
    wait_serving,
    write_results,
)

WAYS = ("base", "off", "on")


# ── the client (a child process per way and round) ───────────────────────


async def client_main(address: str, runs: int, iterations: int, traced: bool) -> None:
    """Print the per-iteration latencies (seconds) of `runs` runs as JSON."""
    from bench.roundtrip import deltas, sdk_workflow
    from forge_client import ForgeClient, RunOptions

    provider: Any = None
    if traced:
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        provider = TracerProvider()
        provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
        trace.set_tracer_provider(provider)
    samples: list[float] = []
    options = RunOptions(max_iterations=iterations)
    async with ForgeClient(address) as client:
        for n in range(runs + 2):  # two warm-up runs
            stamps: list[float] = []
            if provider is not None:
                with provider.get_tracer("bench").start_as_current_span("caller"):
                    await client.run(sdk_workflow(stamps), "go", options=options)
            else:
                await client.run(sdk_workflow(stamps), "go", options=options)
            if n >= 2:
                samples += deltas(stamps)
    if provider is not None:
        provider.shutdown()
    print(json.dumps(samples))


# ── the driver ───────────────────────────────────────────────────────────


def extract_base(commit: str) -> Path:
    """The tree at `commit`, with this script in it (its bench/ has the rest)."""
    target = RESULTS_DIR / f"tracing-base-{commit[:12]}"
    if not (target / "forge_core").is_dir():
        target.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", commit], check=True, capture_output=True
        ).stdout
        tar = target / "tree.tar"
        tar.write_bytes(archive)
        with tarfile.open(tar) as tf:
            tf.extractall(target, filter="data")
        tar.unlink()
    shutil.copy(Path(__file__), target / "bench" / "tracing_cost.py")
    return target


def tree_env(tree: Path, endpoint: str | None) -> dict[str, str]:
    """The environment of a process that imports Forge from `tree` (its
    packages ahead of the editable install), tracing on when `endpoint`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["PYTHONPATH"] = os.pathsep.join(
        str(tree / p) for p in (".", "server", "clients/python", "evals")
    )
    if endpoint is not None:
        env["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoint
        env["OTEL_SERVICE_NAME"] = "bench"
    return env


def start_server(
    tree: Path, port: int, env: dict[str, str], script: Path
) -> subprocess.Popen[bytes]:
    log = (RESULTS_DIR / f"tracing-cost-server-{port}.log").open("wb")
    return subprocess.Popen(
        [
            sys.executable, "-m", "forge_server", "--host", "127.0.0.1", "--port", str(port),
            "--log-level", "WARNING", "--backend", "scripted", "--script", str(script),
            "--journal", "none",
        ],
        cwd=tree, env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def run_client(
    tree: Path, env: dict[str, str], port: int, args: argparse.Namespace, traced: bool
) -> list[float]:
    argv = [
        sys.executable, "-m", "bench.tracing_cost", "--client", f"127.0.0.1:{port}",
        "--runs", str(args.runs), "--iterations", str(args.iterations),
    ]  # fmt: skip
    if traced:
        argv.append("--traced")
    out = subprocess.run(argv, cwd=tree, env=env, check=True, capture_output=True, text=True)
    samples: list[float] = json.loads(out.stdout.strip().splitlines()[-1])
    return samples


def git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True
    ).stdout.strip()


async def drive(args: argparse.Namespace) -> None:
    sys.path.insert(0, str(ROOT))
    from bench.roundtrip import write_script
    from tests.otlp_receiver import OtlpReceiver

    receiver = OtlpReceiver()
    base = extract_base(git("rev-parse", args.base))
    script = write_script(args.iterations)
    trees = {"base": base, "off": ROOT, "on": ROOT}
    envs = {
        "base": tree_env(base, None),
        "off": tree_env(ROOT, None),
        "on": tree_env(ROOT, receiver.endpoint),
    }
    ports = {way: free_port() for way in WAYS}
    servers = {way: start_server(trees[way], ports[way], envs[way], script) for way in WAYS}
    samples: dict[str, list[float]] = {way: [] for way in WAYS}
    per_round: dict[str, list[float]] = {way: [] for way in WAYS}
    try:
        for way in WAYS:
            await wait_serving(f"127.0.0.1:{ports[way]}", 120, servers[way])
        for r in range(args.rounds):
            order = WAYS[r % 3 :] + WAYS[: r % 3]
            for way in order:
                got = run_client(trees[way], envs[way], ports[way], args, way == "on")
                samples[way] += got
                per_round[way].append(statistics.median(got))
                print(
                    f"round {r + 1} {way}: median {statistics.median(got) * 1e6:.0f} µs", flush=True
                )
    finally:
        for proc in servers.values():
            proc.terminate()
        for proc in servers.values():
            proc.wait(30)
    spans = receiver.spans()
    receiver.stop()
    report(
        args,
        samples,
        per_round,
        base_commit=git("rev-parse", "--short", args.base),
        spans=len(spans),
    )


def report(
    args: argparse.Namespace,
    samples: dict[str, list[float]],
    per_round: dict[str, list[float]],
    base_commit: str,
    spans: int,
) -> None:
    p50 = {way: percentile(samples[way], 50) for way in WAYS}
    rows = []
    for way in WAYS:
        s = samples[way]
        rows.append([
            way, len(s), f"{p50[way] * 1e6:.0f}", f"{percentile(s, 99) * 1e6:.0f}",
            f"{statistics.mean(s) * 1e6:.0f}", f"{1 / statistics.mean(s):.0f}",
            f"{p50[way] / p50['base']:.3f}",
            " ".join(f"{m * 1e6:.0f}" for m in per_round[way]),
        ])  # fmt: skip
    headers = ["way", "round trips", "p50 µs", "p99 µs", "mean µs", "round trips/s",
               "p50 / base", "per-round medians µs"]  # fmt: skip
    print(table(headers, rows))
    print(f"spans received by the OTLP receiver: {spans}")
    path = write_results(
        "tracing_cost",
        {
            "commit": git("rev-parse", "--short", "HEAD"),
            "base_commit": base_commit,
            "rounds": args.rounds,
            "runs": args.runs,
            "iterations": args.iterations,
            "spans_received": spans,
            "results": {
                way: {
                    "round_trips": len(samples[way]),
                    "p50_s": p50[way],
                    "p99_s": percentile(samples[way], 99),
                    "mean_s": statistics.mean(samples[way]),
                    "round_medians_s": per_round[way],
                }
                for way in WAYS
            },
        },
    )
    print(f"results: {path}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--runs", type=int, default=20, help="runs per client process")
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument(
        "--base",
        default="0a5140b",
        help="the 'base' way's commit: a tree without tracing, otherwise the same as this "
        "one (default: where the tracing branch left main; after merging main in, that "
        "merge's second parent)",
    )
    parser.add_argument("--client", default="", help=argparse.SUPPRESS)
    parser.add_argument("--traced", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        asyncio.run(client_main(args.client, args.runs, args.iterations, args.traced))
    else:
        asyncio.run(drive(args))


if __name__ == "__main__":
    main()
