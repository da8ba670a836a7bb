"""Workflows per second end to end: Forge (in process, gRPC) and the Python
SDK on a managed llama-server (bundled Gemma 3 270M), at 1, 4, 8 and 16
concurrent runs of a mixed workload, for each slot count tried.

The mix, cycled over the runs of a level:

- `2-step`, `3-step`: bench/real_model.py's weather and orders workflows
  (a lookup then a report; an id, a fetch by it, then a report);
- `parallel`: read three kilns in one batch (parallel tool calls), then report;
- `compaction`: four required lookups with long results under a context
  budget small enough that tiered compaction fires.

At each level the runs start together and the level's wall time is from the
first start to the last end: workflows/s = runs / wall. Beside Forge, the
same workflows unconstrained: every model call a run made is replayed on
the same llama-server with the same prompt (as Forge rendered it), no
grammar and exactly as many completion tokens (`ignore_eos`), each run's
calls in order and the runs of a level at once. The ratio is Forge's
workflows/s over that replay's.

    .venv/bin/python -m bench.workflows_per_s [--slots 1,2,4] [--levels 1,4,8,16]

`--slots 0` runs forge-server's default configuration (the slot count it
chooses for this host, its default --ctx-size); a number N runs N slots
with 4096 context tokens each.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Callable
from typing import Any

import httpx

from bench._common import fmt, ratio, table, write_results
from bench.real_model import orders, weather
from forge_client import ForgeClient, Prerequisite, RunFailedError, RunOptions, Workflow
from forge_core.backends.base import BackendReply, ChatRequest
from forge_core.backends.llama.server import LlamaServerBackend

LONG_RESULT = "Crate ledger page: " + " ".join(
    f"crate C-{k:03d} weighs {k % 17 + 3} kg, shelf {k % 9}, checked." for k in range(40)
)


def parallel() -> Workflow:
    wf = Workflow("kiln_round", "Read every kiln the user names, then report.")

    @wf.tool(required=True)
    def read_kiln(kiln_id: str) -> str:
        """Read one kiln's temperature."""
        return f"kiln {kiln_id}: 1180 C"

    @wf.tool(terminal=True)
    def report(summary: str) -> str:
        """Report the temperatures to the user. Ends the task."""
        return summary

    return wf


def compaction() -> Workflow:
    wf = Workflow("crate_audit", "Read each ledger page in order, then report the heaviest crate.")
    names = ["page_one", "page_two", "page_three", "page_four"]
    for i, name in enumerate(names):

        def page(shelf: int) -> str:
            return LONG_RESULT

        page.__doc__ = f"Read ledger page {i + 1} for a shelf number."
        before: list[str | Prerequisite] = [*names[:i][-1:]]
        wf.tool(name=name, required=True, prerequisites=before)(page)

    @wf.tool(terminal=True)
    def report(summary: str) -> str:
        """Report the heaviest crate. Ends the task."""
        return summary

    return wf


MIX: list[tuple[str, Callable[[], Workflow], str, RunOptions]] = [
    ("2-step", weather, "What's the weather in Paris?", RunOptions(max_iterations=8)),
    ("3-step", orders, "What did Alice order?", RunOptions(max_iterations=8)),
    (
        "parallel",
        parallel,
        "Read kilns K-1, K-2 and K-3.",
        RunOptions(max_iterations=8, parallel_tool_calls=True),
    ),
    (
        "compaction",
        compaction,
        "Audit shelf 4.",
        RunOptions(max_iterations=10, context_budget_tokens=1400),
    ),
]


class Recorder:
    """Every model call's prompt body and completion tokens, per run id."""

    def __init__(self, backend: LlamaServerBackend) -> None:
        self.calls: dict[str, list[tuple[dict[str, Any], int]]] = {}
        complete = backend.complete

        async def recording(request: ChatRequest, on_chunk: Any) -> BackendReply:
            reply = await complete(request, on_chunk)
            body = backend.request_body(request, constrain=False)
            tokens = max(1, reply.usage.completion_tokens)
            self.calls.setdefault(request.run_id, []).append((body, tokens))
            return reply

        backend.complete = recording  # type: ignore[method-assign]


async def forge_level(client: ForgeClient, runs: int) -> tuple[float, int, dict[str, int]]:
    failed: dict[str, int] = {}

    async def one(k: int) -> None:
        name, build, message, options = MIX[k % len(MIX)]
        try:
            await client.run(build(), message, options=options)
        except RunFailedError as exc:
            failed[name] = failed.get(name, 0) + 1
            print(f"{name} failed: {exc.reason}", flush=True)

    start = time.perf_counter()
    await asyncio.gather(*(one(k) for k in range(runs)))
    return time.perf_counter() - start, runs - sum(failed.values()), failed


async def replay_level(
    http: httpx.AsyncClient, calls: list[list[tuple[dict[str, Any], int]]]
) -> float:
    async def one(run: list[tuple[dict[str, Any], int]]) -> None:
        for body, tokens in run:
            plain = {**body, "stream": False, "max_tokens": tokens, "ignore_eos": True}
            (await http.post("/v1/chat/completions", json=plain)).raise_for_status()

    start = time.perf_counter()
    await asyncio.gather(*(one(run) for run in calls))
    return time.perf_counter() - start


async def one_slot_count(slots: int, levels: list[int], threads: int) -> list[dict[str, Any]]:
    from forge_evals.targets import in_process
    from forge_server.backend import BackendConfig, open_backend

    rows = []
    # 0: forge-server's own default (slots chosen by the host, its --ctx-size).
    config = (
        BackendConfig(backend="llama-server", threads=threads)
        if slots == 0
        else BackendConfig(
            backend="llama-server", ctx_size=4096 * slots, slots=slots, threads=threads
        )
    )
    async with open_backend(config) as backend:
        assert isinstance(backend, LlamaServerBackend)
        label = f"default ({backend.info().slots})" if slots == 0 else str(slots)
        recorder = Recorder(backend)
        async with (
            in_process(backend) as target,
            ForgeClient(await target.address()) as client,
            httpx.AsyncClient(
                base_url=backend.info().url, timeout=600.0, limits=httpx.Limits(max_connections=64)
            ) as http,
        ):
            # Untimed: each workflow's first run evaluates its system prompt.
            await forge_level(client, len(MIX))
            for level in levels:
                recorder.calls.clear()
                wall, done, failed = await forge_level(client, level)
                replay = await replay_level(http, list(recorder.calls.values()))
                rows.append(
                    {
                        "slots": label,
                        "runs": level,
                        "completed": done,
                        "failed": failed,
                        "wall_s": wall,
                        "workflows_per_s": done / wall,
                        "model_calls": sum(len(c) for c in recorder.calls.values()),
                        "unconstrained_wall_s": replay,
                        "unconstrained_workflows_per_s": level / replay,
                        "vs_unconstrained": ratio(done / wall, level / replay),
                    }
                )
                print(rows[-1], flush=True)
    return rows


def report(data: dict[str, Any]) -> str:
    rows = [
        [
            r["slots"],
            r["runs"],
            r["completed"],
            r["model_calls"],
            fmt(r["wall_s"], 1),
            fmt(r["workflows_per_s"], 3),
            fmt(r["unconstrained_workflows_per_s"], 3),
            fmt(r["vs_unconstrained"]),
        ]
        for r in data["rows"]
    ]
    headers = [
        "slots",
        "concurrent runs",
        "completed",
        "model calls",
        "wall s",
        "Forge wf/s",
        "unconstrained wf/s",
        "Forge/unc",
    ]
    return table(headers, rows)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument(
        "--slots",
        default="1,2,4",
        help="slot counts, in the order run (0: forge-server's default, chosen by the host)",
    )
    p.add_argument("--levels", default="1,4,8,16", help="concurrent runs")
    p.add_argument("--threads", type=int, default=0, help="llama-server threads (0: its default)")
    args = p.parse_args(argv)
    levels = [int(n) for n in args.levels.split(",")]
    rows: list[dict[str, Any]] = []
    for slots in (int(n) for n in args.slots.split(",")):
        rows += asyncio.run(one_slot_count(slots, levels, args.threads))
    data = {"levels": levels, "threads": args.threads, "rows": rows}
    print(report(data))
    print(f"results: {write_results('workflows_per_s', data)}")


if __name__ == "__main__":
    main()
