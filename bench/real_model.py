"""Real model: where a run's wall time goes with llama-server + Gemma 3 270M.

The Forge server runs in its own process with a managed llama-server (the
bundled model, `--slots 1 --ctx-size 4096`); the Python SDK runs the
2-step (weather) and the 3-step (orders, with a prerequisite) workflows.
Each run's wall time is split into model time, llama-server's own
prompt + generation timings summed over the run's model calls (the baseline),
and everything else: Forge's loop, the gRPC round trips to the SDK, the
tools, and the HTTP/SSE exchange with llama-server.

    .venv/bin/python -m bench.real_model [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Callable
from statistics import mean, median
from typing import Any

from bench._common import (
    fmt,
    forge_server_argv,
    free_port,
    ratio,
    server_process,
    table,
    write_results,
)
from forge_client import ForgeClient, RunFailedError, RunOptions, Usage, Workflow


def weather() -> Workflow:
    wf = Workflow("weather", "Look up the current weather, then report it.")

    @wf.tool(required=True)
    def get_weather(city: str) -> str:
        """Get current weather for a city."""
        return f"72F and sunny in {city}"

    @wf.tool(terminal=True)
    def report_weather(city: str, weather: str) -> str:
        """Report the weather to the user. Ends the task."""
        return f"Weather report for {city}: {weather}"

    return wf


def orders() -> Workflow:
    wf = Workflow("orders", "Find the user, fetch their orders, then report a summary.")

    @wf.tool
    def lookup_user(name: str) -> str:
        """Find a user's id by name."""
        return "user_id=u42"

    @wf.tool(required=True, prerequisites=["lookup_user"])
    def get_orders(user_id: str) -> str:
        """List the orders of a user id."""
        return "2 orders: a lamp, a desk"

    @wf.tool(terminal=True)
    def report(summary: str) -> str:
        """Report the summary to the user. Ends the task."""
        return summary

    return wf


WORKFLOWS: list[tuple[str, Callable[[], Workflow], str]] = [
    ("2-step weather", weather, "What's the weather in Paris?"),
    ("3-step orders", orders, "What did Alice order?"),
]


async def measure(
    client: ForgeClient, build: Callable[[], Workflow], message: str, runs: int, warmup: int
) -> dict[str, Any]:
    walls: list[float] = []
    models: list[float] = []
    calls: list[int] = []
    iterations: list[int] = []
    failures: list[str] = []
    for n in range(warmup + runs):
        usage: Usage
        start = time.perf_counter()
        try:
            result = await client.run(build(), message, options=RunOptions(max_iterations=8))
            usage, its = result.usage, result.iterations
        except RunFailedError as exc:
            usage, its = exc.usage, exc.iterations
            if n >= warmup:
                failures.append(exc.reason)
        wall = time.perf_counter() - start
        if n < warmup:
            continue
        walls.append(wall)
        models.append((usage.prompt_ms + usage.generation_ms) / 1000.0)
        calls.append(usage.model_calls)
        iterations.append(its)
    overheads = [w - m for w, m in zip(walls, models, strict=True)]
    return {
        "runs": runs,
        "failures": failures,
        "wall_s_median": median(walls),
        "model_s_median": median(models),
        "overhead_s_median": median(overheads),
        "model_calls_mean": mean(calls),
        "iterations_mean": mean(iterations),
        "model_share": ratio(sum(models), sum(walls)),
        "overhead_share": ratio(sum(overheads), sum(walls)),
        "overhead_ms_per_model_call": 1e3 * sum(overheads) / max(1, sum(calls)),
        "walls_s": walls,
        "models_s": models,
    }


async def run(args: argparse.Namespace) -> dict[str, Any]:
    port = free_port()
    argv = forge_server_argv(
        port, "--slots", "1", "--ctx-size", str(args.ctx_size), *args.server_args
    )
    rows = []
    async with (
        server_process(argv, port, "real-model-forge", timeout_s=args.start_timeout) as server,
        ForgeClient(server.address) as client,
    ):
        info = await client.server_info()
        for name, build, message in WORKFLOWS:
            row = await measure(client, build, message, args.runs, args.warmup)
            rows.append({"workflow": name, **row})
    return {
        "backend": info.backend,
        "model": info.model,
        "tool_call_mode": info.tool_call_mode,
        "ctx_size": args.ctx_size,
        "rows": rows,
    }


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--ctx-size", type=int, default=4096)
    p.add_argument("--start-timeout", type=float, default=300.0)
    p.add_argument(
        "--server-arg",
        dest="server_args",
        action="append",
        default=[],
        help="one more forge-server argument (repeat), e.g. --server-arg=--call-pieces=off",
    )
    args = p.parse_args(argv)
    data = asyncio.run(run(args))
    print(
        f"Real model: {data['model']} via {data['backend']} ({data['tool_call_mode']}), "
        f"{args.runs} runs per workflow after {args.warmup} warm-up"
    )
    print(
        table(
            [
                "workflow",
                "model calls",
                "wall s (p50)",
                "model s (p50)",
                "overhead s (p50)",
                "model / wall",
                "overhead / wall",
                "overhead ms / model call",
                "failed",
            ],
            [
                [
                    r["workflow"],
                    fmt(r["model_calls_mean"], 1),
                    fmt(r["wall_s_median"], 2),
                    fmt(r["model_s_median"], 2),
                    fmt(r["overhead_s_median"], 3),
                    r["model_share"],
                    fmt(r["overhead_share"], 3),
                    fmt(r["overhead_ms_per_model_call"], 1),
                    len(r["failures"]),
                ]
                for r in data["rows"]
            ],
        )
    )
    print(f"results: {write_results('real_model', data)}")


if __name__ == "__main__":
    main()
