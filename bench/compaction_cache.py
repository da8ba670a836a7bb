"""Compaction vs. llama-server's prompt cache: what each compaction costs.

One managed llama-server (bundled Gemma 3 270M, one slot, --ctx-size 4096,
--swa-full, --cache-reuse 64 and a --slot-save-path for prefix snapshots:
LlamaServerConfig's defaults) runs each workload of bench/workloads.py (nine
required steps with deterministic tool results, then a terminal tool) once
per variant. Each turn's grammar admits only the next tool, so every variant
makes the same calls and only the compaction differs. Each workload's context
budget makes compaction fire during its 10 iterations.

Variants:
  tiered              Forge's Compactor (forge_core.context), as the engine runs it.
  rewrite-everything  the reference library's way (a Compactor subclass here):
                      every compaction rewrites every old tool result in place
                      (shorter each time, with a marker naming the compaction),
                      then drops the oldest rounds behind a summary.
  none                no compaction and a budget it never reaches: every
                      iteration only appends (the best case for the cache).
  ..., 2nd run        a second run of the same workflow about another case
                      (other user message, other tool results): its first
                      call finds the workflow prefix in the snapshot the
                      first run saved (forge_core/backends/llama/prefix_snapshots.py).

Every other run's system prompt starts with its own session id, so it finds
nothing of another run in llama-server's cache: its first iteration is cold.
Printed per variant: the cache-hit ratio (cache_n / prompt tokens over the
run), the tokens llama-server had to evaluate, the total prompt-eval time (sum
of usage prompt_ms) and the ratios rewrite-everything / tiered.
JSON: bench/results/compaction_cache.json.

    .venv/bin/python -m bench.compaction_cache [--workloads inspection triage] [--repeats 1]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import time
import uuid
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from bench.workloads import WORKLOADS, NextStepOnly, ScriptedTools, Workload
from forge_core.backends.base import Usage
from forge_core.backends.llama.server import LlamaServerBackend
from forge_core.context import (
    KEEP_RECENT,
    CompactionResult,
    Compactor,
    Counter,
)
from forge_core.errors import ForgeError
from forge_core.hooks import RunHooks
from forge_core.llama_host.install import bundled_binary, bundled_model
from forge_core.llama_host.process import LlamaServerConfig, ManagedLlamaServer
from forge_core.loop import run_workflow
from forge_core.messages import Message, MessageRole, MessageType
from forge_core.workflow import RunOptions

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "compaction_cache.json"


# --------------------------------------------------------------------------- compactors

REWRITE_CHARS = 400
REWRITE_MIN_CHARS = 50


def summary_message(text: str) -> Message:
    return Message(MessageRole.USER, text, MessageType.SUMMARY)


class RewriteEverything(Compactor):
    """The reference library's behaviour: each compaction rewrites the old history.

    Every tool result outside the protected recent rounds is cut to a length
    that halves with each compaction (400, 200, 100, 50 characters of its
    original) behind a marker naming the compaction, so the tokens of every
    old result change every time; corrections go; if that is not enough, the
    oldest rounds go behind one summary after the user input (as Forge's
    phase 2 does).
    """

    def __init__(
        self, strategy: str, budget_tokens: int, count: Counter, keep_recent: int = KEEP_RECENT
    ) -> None:
        super().__init__(strategy, budget_tokens, count, keep_recent)
        self.compactions = 0
        self.originals: dict[str, str] = {}

    async def _tiered(
        self, messages: list[Message], target: int, summary: str
    ) -> tuple[list[Message], int, int]:
        self.compactions += 1
        keep = max(REWRITE_CHARS >> (self.compactions - 1), REWRITE_MIN_CHARS)
        head, middle, tail = self._split(messages)

        def rewrite(m: Message) -> Message:
            if m.type is not MessageType.TOOL_RESULT:
                return m
            original = self.originals.setdefault(m.tool_call_id, m.content)
            return replace(m, content=f"[compacted {self.compactions}] {original[:keep]}")

        kept = [
            replace(u, messages=[rewrite(m) for m in u.messages])
            for u in middle
            if u.kind not in ("blocked", "failed", "summary")
        ]
        fixed = [m for u in head for m in u.messages]
        rest = [m for u in tail for m in u.messages]

        def assemble(with_summary: bool) -> list[Message]:
            out = list(fixed)
            for u in kept:
                out += u.messages
                if with_summary and u.kind == "user" and u is users[-1]:
                    out.append(summary_message(summary))
            return out + rest

        users = [u for u in kept if u.kind == "user"]
        had_summary = any(u.kind == "summary" for u in middle)
        out = assemble(had_summary and bool(users))
        tokens = await self.count(out)
        phase = 1
        for unit in [u for u in kept if u.kind == "round"]:
            if tokens <= target:
                break
            kept.remove(unit)
            phase = 2
            out = assemble(bool(users))
            tokens = await self.count(out)
        return out, tokens, phase


# --------------------------------------------------------------------------- runs


@dataclass
class VariantResult:
    name: str
    iterations: int
    completed: bool
    compactions: list[dict[str, int]]
    prompt_tokens: int
    cached_tokens: int
    prompt_ms: float
    wall_s: float
    per_iteration: list[dict[str, Any]] = field(default_factory=list)

    @property
    def evaluated(self) -> int:
        return self.prompt_tokens - self.cached_tokens

    @property
    def cache_hit_ratio(self) -> float:
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else 0.0


VARIANTS: dict[str, type[Compactor] | None] = {
    "tiered": Compactor,
    "rewrite-everything": RewriteEverything,
    "none": None,
}


async def run_variant(
    name: str,
    backend: LlamaServerBackend,
    workload: Workload,
    max_iterations: int,
    *,
    budget: int = 0,
    session: str = "",
    case: int = 0,
    label: str = "",
) -> VariantResult:
    """One run of `workload` about `case`. `session` fixes the system prompt:
    runs with the same session share the workflow prefix (a later run restores
    it from the prefix snapshot the first one saved)."""
    compactor = VARIANTS[name]
    tools = ScriptedTools(workload, case)
    compactions: list[dict[str, int]] = []

    async def on_compact(result: CompactionResult, iteration: int) -> None:
        compactions.append(
            {
                "iteration": iteration,
                "phase": result.phase,
                "tokens_before": result.tokens_before,
                "tokens_after": result.tokens_after,
                "messages_before": result.messages_before,
                "messages_after": len(result.messages),
            }
        )

    options = (
        RunOptions(context_budget_tokens=budget or workload.budget, max_iterations=max_iterations)
        if compactor is not None
        else RunOptions(compaction=False, max_iterations=max_iterations)
    )
    started = time.monotonic()
    completed = False
    try:
        result = await run_workflow(
            workload.build(session or uuid.uuid4().hex[:12]),
            workload.user_message(case),
            backend=NextStepOnly(backend, tools),
            executor=tools,
            options=options,
            hooks=RunHooks(on_compact=on_compact),
            compactor=compactor or Compactor,
        )
        usage, iterations, completed = result.usage, result.iterations, True
    except ForgeError as exc:
        usage, iterations = exc.usage or Usage(), exc.iterations
    wall = time.monotonic() - started
    compacted_at = {c["iteration"] for c in compactions}
    return VariantResult(
        name=label or name,
        iterations=iterations,
        completed=completed,
        compactions=compactions,
        prompt_tokens=usage.prompt_tokens,
        cached_tokens=usage.cached_prompt_tokens,
        prompt_ms=usage.prompt_ms,
        wall_s=wall,
        per_iteration=[
            {
                "iteration": it.iteration,
                "prompt_tokens": it.prompt_tokens,
                "cache_n": it.cached_prompt_tokens,
                "prompt_n": it.prompt_tokens - it.cached_prompt_tokens,
                "cache_hit_ratio": round(it.cache_hit_ratio, 4),
                "prompt_ms": round(it.prompt_ms, 1),
                "compacted": it.iteration in compacted_at,
            }
            for it in usage.iterations
        ],
    )


async def warm_run(
    name: str, backend: LlamaServerBackend, workload: Workload, max_iterations: int, budget: int
) -> VariantResult:
    """The second run of a workflow (another case): its prefix comes back from
    the snapshot the first run saved, whatever that run left on the slot."""
    session = uuid.uuid4().hex[:12]
    await run_variant(name, backend, workload, max_iterations, budget=budget, session=session)
    return await run_variant(
        name,
        backend,
        workload,
        max_iterations,
        budget=budget,
        session=session,
        case=1,
        label=f"{name}, 2nd run of the workflow",
    )


def merged(runs: list[VariantResult]) -> VariantResult:
    """Totals over the repeats (token counts repeat exactly; times vary)."""
    first = runs[0]
    return replace(
        first,
        prompt_tokens=sum(r.prompt_tokens for r in runs),
        cached_tokens=sum(r.cached_tokens for r in runs),
        prompt_ms=sum(r.prompt_ms for r in runs),
        wall_s=sum(r.wall_s for r in runs),
    )


def table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(items: list[str]) -> str:
        return "  ".join(
            item.ljust(w) if i == 0 else item.rjust(w)
            for i, (item, w) in enumerate(zip(items, widths, strict=True))
        )

    return "\n".join([line(headers), line(["-" * w for w in widths]), *map(line, rows)])


def per_iteration_table(result: VariantResult) -> str:
    rows = [
        [
            str(it["iteration"]),
            str(it["prompt_tokens"]),
            str(it["cache_n"]),
            str(it["prompt_n"]),
            f"{it['cache_hit_ratio']:.3f}",
            f"{it['prompt_ms']:.0f}",
            "yes" if it["compacted"] else "",
        ]
        for it in result.per_iteration
    ]
    headers = ["iter", "prompt", "cache_n", "prompt_n", "ratio", "prompt_ms", "compacted"]
    return table(headers, rows)


def summary_table(results: dict[str, VariantResult]) -> str:
    headers = [
        "variant",
        "iters",
        "compactions",
        "prompt tok",
        "cached tok",
        "evaluated tok",
        "cache-hit",
        "prompt-eval ms",
        "wall s",
    ]
    rows = [
        [
            r.name,
            str(r.iterations),
            ",".join(f"{c['iteration']}:p{c['phase']}" for c in r.compactions) or "-",
            str(r.prompt_tokens),
            str(r.cached_tokens),
            str(r.evaluated),
            f"{r.cache_hit_ratio:.3f}",
            f"{r.prompt_ms:.0f}",
            f"{r.wall_s:.1f}",
        ]
        for r in results.values()
    ]
    return table(headers, rows)


async def bench_workload(
    backend: LlamaServerBackend, workload: Workload, args: argparse.Namespace
) -> dict[str, Any]:
    budget = args.budget or workload.budget
    runs: dict[str, list[VariantResult]] = {name: [] for name in args.variants}
    for _ in range(args.repeats):
        for name in args.variants:
            runs[name].append(
                await run_variant(name, backend, workload, args.max_iterations, budget=budget)
            )
    for name in [v for v in ("tiered", "rewrite-everything") if v in args.variants]:
        warm = await warm_run(name, backend, workload, args.max_iterations, budget)
        runs[warm.name] = [warm]
    results = {name: merged(rs) for name, rs in runs.items()}
    summary = summary_table(results)
    ratios: dict[str, float] = {}
    tiered, baseline = results.get("tiered"), results.get("rewrite-everything")
    if tiered is not None and baseline is not None:
        ratios = {
            "prompt_ms_baseline_over_tiered": baseline.prompt_ms / tiered.prompt_ms,
            "evaluated_tokens_baseline_over_tiered": baseline.evaluated / tiered.evaluated,
            "cache_hit_ratio_tiered": tiered.cache_hit_ratio,
            "cache_hit_ratio_baseline": baseline.cache_hit_ratio,
        }
    print(f"\n=== workload {workload.name}: context budget {budget} tokens, "
          f"{args.repeats} run(s) per variant\n")  # fmt: skip
    print(summary)
    if ratios:
        print(
            f"\nrewrite-everything / tiered: prompt-eval ms x"
            f"{ratios['prompt_ms_baseline_over_tiered']:.2f}, evaluated tokens x"
            f"{ratios['evaluated_tokens_baseline_over_tiered']:.2f}"
        )
    for r in results.values():
        print(f"\n{r.name} (first run), per iteration:\n{per_iteration_table(runs[r.name][0])}")
    return {
        "workload": workload.name,
        "budget_tokens": budget,
        "variants": [
            {
                **{k: v for k, v in asdict(r).items() if k != "per_iteration"},
                "evaluated_tokens": r.evaluated,
                "cache_hit_ratio": round(r.cache_hit_ratio, 4),
                "runs": [asdict(x) for x in runs[r.name]],
            }
            for r in results.values()
        ],
        "ratios": ratios,
        "table": summary,
    }


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    config = LlamaServerConfig(
        model_path=bundled_model(), binary=bundled_binary(), ctx_size=args.ctx_size, slots=1
    )
    managed = ManagedLlamaServer(config)
    await managed.start()
    try:
        backend = await LlamaServerBackend.connect(managed.url, backend_mode="managed")
        managed.attach(backend)
        print(
            f"compaction vs prompt cache: llama-server --ctx-size {args.ctx_size} --parallel 1 "
            f"--swa-full --cache-reuse {config.cache_reuse}, prefix snapshots on"
        )
        try:
            # Warm-up: one-time costs (first graph, page cache) are nobody's.
            await run_variant("none", backend, WORKLOADS["inspection"], 2)
            workloads = [
                await bench_workload(backend, WORKLOADS[name], args) for name in args.workloads
            ]
        finally:
            await backend.aclose()
    finally:
        await managed.stop()
    return {
        "benchmark": "compaction_cache",
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": {"platform": platform.platform(), "python": platform.python_version()},
        "config": {
            "max_iterations": args.max_iterations,
            "repeats": args.repeats,
            "ctx_size": args.ctx_size,
            "slots": 1,
            "swa_full": config.swa_full,
            "cache_reuse": config.cache_reuse,
            "prefix_snapshots": True,
            "model": config.model_path.name,
        },
        "workloads": workloads,
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    p.add_argument(
        "--budget", type=int, default=0, help="context budget per run (default: the workload's)"
    )
    p.add_argument("--workloads", nargs="+", default=list(WORKLOADS), choices=list(WORKLOADS))
    p.add_argument("--max-iterations", type=int, default=14)
    p.add_argument("--ctx-size", type=int, default=4096)
    p.add_argument("--repeats", type=int, default=1, help="runs per variant (totals are summed)")
    p.add_argument(
        "--variants",
        nargs="+",
        default=list(VARIANTS),
        choices=list(VARIANTS),
        help="which variants to run, in this order",
    )
    p.add_argument("--out", type=Path, default=RESULTS)
    args = p.parse_args()
    data = asyncio.run(bench(args))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=2) + "\n")
    print(f"\nwrote {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")


if __name__ == "__main__":
    main()
