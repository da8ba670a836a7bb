"""llama-server threads on a shared host: the default rule against all cores.

A managed llama-server with the bundled Gemma 3 270M answers the same request
(a ~230-token prompt, evaluated afresh each time, then 32 generated tokens)
with `--threads` = the default rule (CPUs available - 1) and `--threads` = all
CPUs, first on an otherwise idle host and then while `--load` busy-loop
processes (default: one per CPU, like a parallel build or test run) compete
for the cores. Interleaved: each round runs every variant once. The baseline
is all-CPU threads on the idle host, measured in the same run.

    .venv/bin/python -m bench.threads [--rounds 5] [--load N]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import time
from statistics import median
from typing import Any

import httpx

from bench._common import percentile, ratio, table, write_results
from forge_core.llama_host.install import bundled_binary, bundled_model
from forge_core.llama_host.process import (
    LlamaServerConfig,
    ManagedLlamaServer,
    available_cpus,
    default_threads,
)

PROMPT = (
    "You are an operations assistant. A customer reports that invoices for order "
    "A-1931 were sent twice, that the refund for order A-1877 has not arrived after "
    "ten days, and that the shipping address on their account still shows the old "
    "office in Leeds. List the three problems, say which system owns each one, and "
    "propose the next action for each problem in one sentence. "
) * 3


def spin(deadline: float) -> None:
    x = 0
    while time.monotonic() < deadline:
        x = (x * 31 + 7) % 1_000_003


class Load:
    """`n` processes that keep a core busy each until stopped (or at most
    `limit_s`: the load never outlives a crashed benchmark for long)."""

    def __init__(self, n: int, limit_s: float) -> None:
        self.n, self.limit_s = n, limit_s
        self.procs: list[multiprocessing.Process] = []

    def __enter__(self) -> Load:
        deadline = time.monotonic() + self.limit_s
        self.procs = [multiprocessing.Process(target=spin, args=(deadline,)) for _ in range(self.n)]
        for p in self.procs:
            p.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            p.join()


async def complete(url: str, timeout_s: float) -> tuple[float, dict[str, Any]]:
    body = {
        "prompt": PROMPT,
        "n_predict": 32,
        "temperature": 0,
        "cache_prompt": False,
        "ignore_eos": True,
    }
    async with httpx.AsyncClient(base_url=url, timeout=timeout_s) as http:
        start = time.perf_counter()
        resp = await http.post("/completion", json=body)
        wall = time.perf_counter() - start
        resp.raise_for_status()
        timings: dict[str, Any] = resp.json()["timings"]
        return wall, timings


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    cpus = available_cpus()
    variants = {
        f"default rule ({default_threads()})": default_threads(),
        f"all CPUs ({cpus})": cpus,
    }
    servers: dict[str, ManagedLlamaServer] = {}
    for name, threads in variants.items():
        servers[name] = ManagedLlamaServer(
            LlamaServerConfig(
                model_path=bundled_model(),
                binary=bundled_binary(),
                ctx_size=1024,
                slots=1,
                threads=threads,
                prefix_snapshots=False,
            )
        )
        await servers[name].start()
    walls: dict[tuple[str, str], list[float]] = {}
    try:
        for server in servers.values():  # warm-up: page in the model
            await complete(server.url, args.timeout)
        for condition, n_load in (("idle", 0), (f"{args.load} busy processes", args.load)):
            for _ in range(args.rounds):
                for name, server in servers.items():
                    with Load(n_load, args.timeout):
                        wall, _ = await complete(server.url, args.timeout)
                    walls.setdefault((condition, name), []).append(wall)
                    print(f"{condition:>20} | {name:>18} | {wall:7.2f} s", flush=True)
    finally:
        for server in servers.values():
            await server.stop()
    base = median(walls[("idle", f"all CPUs ({cpus})")])
    rows = [
        [
            condition,
            name,
            len(w),
            f"{median(w):.2f}",
            f"{min(w):.2f}-{max(w):.2f}",
            f"{ratio(median(w), base):.2f}",
            f"{ratio(percentile(w, 90), base):.2f}",
        ]
        for (condition, name), w in walls.items()
    ]
    print()
    print(
        table(
            [
                "host",
                "--threads",
                "n",
                "wall s (p50)",
                "range s",
                "p50 / baseline",
                "p90 / baseline",
            ],
            rows,
        )
    )
    return {
        "cpus": cpus,
        "load_processes": args.load,
        "walls_s": {f"{c} | {n}": w for (c, n), w in walls.items()},
        "baseline_s": base,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--load", type=int, default=available_cpus(), help="busy processes")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds per completion")
    args = p.parse_args()
    data = asyncio.run(bench(args))
    print(f"results: {write_results('threads', data)}")


if __name__ == "__main__":
    main()
