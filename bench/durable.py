"""Durable runs (issue 15): what the journal costs, and what it saves.

1. Journal cost. bench.roundtrip's K-iteration workflow through forge-server
   (scripted model, Python SDK running the tools), per-iteration latency and
   server CPU per tool round trip with `--journal none` (the baseline),
   the SQLite journal, and a PostgreSQL journal (a real PostgreSQL 15 started
   for the run, as the tests do), in one run.
2. Fault runs, counted: runs that complete with every tool result used and
   no tool run twice, under
   - clients that each drop their connection at a random point (a TCP proxy
     per client cuts it),
   - a SIGKILL of the server during in-flight runs (restarted on the same
     port, journal and replica id),
   - one of three replicas killed (PostgreSQL journal).

    .venv/bin/python -m bench.durable [--iterations 20] [--runs 10] [--clients 100]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from bench._common import (
    forge_server_argv,
    free_port,
    percentile,
    ratio,
    server_process,
    table,
    write_results,
)
from bench.roundtrip import WORKFLOW, write_script
from forge_client import ForgeClient, RunOptions, Workflow
from tests.postgres import start_postgres

# ── 1. journal cost ──────────────────────────────────────────────────────


async def roundtrips(address: str, iterations: int, runs: int) -> list[float]:
    from bench.roundtrip import measure_sdk

    samples, _ = await measure_sdk(address, iterations, runs, warmup=2)
    return samples


async def journal_cost(iterations: int, runs: int, pg_url: str) -> dict[str, Any]:
    script = write_script(iterations)
    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        modes = {
            "none": "none",
            "sqlite": f"sqlite:///{tmp}/journal.db",
            "postgresql": pg_url,
        }
        for name, url in modes.items():
            port = free_port()
            argv = forge_server_argv(
                port, "--backend", "scripted", "--script", str(script), "--journal", url
            )
            async with server_process(argv, port, f"durable-{name}") as server:
                before = server.stats()
                started = time.perf_counter()
                samples = await roundtrips(f"127.0.0.1:{port}", iterations, runs)
                wall = time.perf_counter() - started
                after = server.stats()
            cpu = (after.cpu_s - before.cpu_s) / ((runs + 2) * iterations)
            out[name] = {
                "p50_us": percentile(samples, 50) * 1e6,
                "p99_us": percentile(samples, 99) * 1e6,
                "server_cpu_ms_per_round_trip": cpu * 1000,
                "wall_s": wall,
            }
    return out


# ── 2. fault runs ────────────────────────────────────────────────────────


def fault_workflow(ran: Counter[str], steps: int) -> Workflow:
    """`steps` calls of step, then finish; each call id counted when it runs."""
    wf = Workflow(WORKFLOW, "Benchmark: call step until done, then finish.")

    @wf.tool
    async def step(i: int) -> str:
        """One step."""
        ran[f"step {i}"] += 1
        await asyncio.sleep(random.uniform(0.0, 0.05))
        return f"ok {i}"

    @wf.tool(terminal=True)
    async def finish() -> str:
        """Finish."""
        ran["finish"] += 1
        return "done"

    return wf


class CuttingProxy:
    """A TCP proxy for one client that cuts its connections once, at a
    random moment within `within_s`."""

    def __init__(self, target_port: int, within_s: float) -> None:
        self.target_port = target_port
        self.within_s = within_s
        self.port = 0
        self.writers: list[asyncio.StreamWriter] = []
        self.cuts = 0
        self._server: asyncio.Server | None = None

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._pipe, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        asyncio.get_running_loop().call_later(random.uniform(0.05, self.within_s), self.cut)

    def cut(self) -> None:
        if self.writers:
            self.cuts += 1
        for writer in self.writers:
            writer.transport.abort()
        self.writers = []

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target_port)
        self.writers += [writer, up_writer]

        async def copy(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                dst.transport.abort()

        await asyncio.gather(copy(reader, up_writer), copy(up_reader, writer))

    async def aclose(self) -> None:
        self.cut()
        if self._server is not None:
            self._server.close()


async def one_run(address: str, steps: int, **client: Any) -> dict[str, Any]:
    ran: Counter[str] = Counter()
    try:
        async with ForgeClient(address, **client) as sdk:
            result = await sdk.run(
                fault_workflow(ran, steps), "go", options=RunOptions(max_iterations=steps + 2)
            )
        ok = result.terminal_tool == "finish"
        used = all(f"ok {i}" in [m.content for m in result.transcript] for i in range(1, steps))
    except Exception as exc:
        return {"completed": False, "error": f"{type(exc).__name__}: {exc}"[:200], "twice": 0}
    twice = sum(1 for n in ran.values() if n > 1)
    return {"completed": ok and used, "twice": twice, "lost": 0 if used else 1}


def counts(results: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "runs": len(results),
        "completed": sum(r["completed"] for r in results),
        "tools_run_twice": sum(r["twice"] for r in results),
        "errors": Counter(r.get("error", "")[:80] for r in results if not r["completed"]),
    }


async def dropped_clients(clients: int, steps: int) -> dict[str, Any]:
    port = free_port()
    script = write_script(steps)
    with tempfile.TemporaryDirectory() as tmp:
        argv = forge_server_argv(
            port, "--backend", "scripted", "--script", str(script),
            "--journal", f"sqlite:///{tmp}/journal.db", "--reattach-grace", "60",
        )  # fmt: skip
        async with server_process(argv, port, "durable-drops"):
            proxies = [CuttingProxy(port, within_s=0.6) for _ in range(clients)]
            for proxy in proxies:
                await proxy.start()
            results = await asyncio.gather(
                *(one_run(f"127.0.0.1:{p.port}", steps) for p in proxies)
            )
            cut = sum(p.cuts for p in proxies)
            for proxy in proxies:
                await proxy.aclose()
    return {**counts(list(results)), "connections_cut": cut}


@asynccontextmanager
async def killable_server(
    port: int, script: Path, journal: str, replica: str, name: str
) -> AsyncIterator[Any]:
    argv = forge_server_argv(
        port, "--backend", "scripted", "--script", str(script), "--journal", journal,
        "--reattach-grace", "60", "--replica-id", replica,
    )  # fmt: skip
    async with server_process(argv, port, name) as server:
        yield server


async def killed_server(runs: int, steps: int) -> dict[str, Any]:
    """SIGKILL the server while `runs` runs are in flight; restart it."""
    port = free_port()
    script = write_script(steps)
    with tempfile.TemporaryDirectory() as tmp:
        journal = f"sqlite:///{tmp}/journal.db"
        async with killable_server(port, script, journal, "r1", "durable-kill") as first:
            tasks = [
                asyncio.ensure_future(one_run(f"127.0.0.1:{port}", steps)) for _ in range(runs)
            ]
            await asyncio.sleep(0.4)
            os.kill(first.pid, signal.SIGKILL)
            assert first.proc is not None
            first.proc.wait()
            async with killable_server(port, script, journal, "r1", "durable-kill-2"):
                results = await asyncio.gather(*tasks)
    return counts(list(results))


async def killed_replica(runs: int, steps: int, pg_url: str) -> dict[str, Any]:
    """Three replicas on one PostgreSQL journal; one is SIGKILLed mid-run.
    Clients dial all three (dns-style round robin over a static list)."""
    ports = [free_port() for _ in range(3)]
    script = write_script(steps)
    async with (
        killable_server(ports[0], script, pg_url, "r0", "durable-r0") as r0,
        killable_server(ports[1], script, pg_url, "r1", "durable-r1"),
        killable_server(ports[2], script, pg_url, "r2", "durable-r2"),
    ):
        target = "ipv4:" + ",".join(f"127.0.0.1:{p}" for p in ports)
        options = [("grpc.lb_policy_name", "round_robin")]
        tasks = [
            asyncio.ensure_future(one_run(target, steps, channel_options=options))
            for _ in range(runs)
        ]
        await asyncio.sleep(0.4)
        os.kill(r0.pid, signal.SIGKILL)
        results = await asyncio.gather(*tasks)
    return counts(list(results))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--inflight", type=int, default=50)
    parser.add_argument("--steps", type=int, default=8)
    args = parser.parse_args()
    with start_postgres() as pg:
        cost = await journal_cost(args.iterations, args.runs, pg.create_database())
        drops = await dropped_clients(args.clients, args.steps)
        kill = await killed_server(args.inflight, args.steps)
        replica = await killed_replica(args.inflight, args.steps, pg.create_database())

    print(f"\n## Journal cost ({args.runs} runs x {args.iterations} iterations, Python SDK)\n")
    base = cost["none"]
    cpu = "server_cpu_ms_per_round_trip"
    rows = [
        [
            name,
            f"{c['p50_us']:.0f}",
            f"{c['p99_us']:.0f}",
            f"{ratio(c['p50_us'], base['p50_us']):.2f}x",
            f"{c[cpu]:.3f}",
            f"{ratio(c[cpu], base[cpu]):.2f}x",
        ]
        for name, c in cost.items()
    ]
    print(
        table(
            ["journal", "p50 us", "p99 us", "p50 vs none", "server CPU ms/rt", "CPU vs none"],
            rows,
        )
    )
    print("\n## Fault runs\n")
    faults = {
        f"{args.clients} clients, each connection cut once at random": drops,
        f"SIGKILL of the server during {args.inflight} in-flight runs": kill,
        f"1 of 3 replicas SIGKILLed during {args.inflight} runs": replica,
    }
    rows = [
        [what, f"{r['completed']}/{r['runs']}", r["tools_run_twice"], str(dict(r["errors"]) or "-")]
        for what, r in faults.items()
    ]
    print(table(["fault", "completed, nothing lost", "tools run twice", "failures"], rows))
    written = write_results(
        "durable",
        {
            "journal_cost": cost,
            "faults": {k: {**v, "errors": dict(v["errors"])} for k, v in faults.items()},
        },
    )
    print(f"\nwrote {written}")


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
