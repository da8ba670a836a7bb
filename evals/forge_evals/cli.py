"""`forge-eval`: run scenarios through Forge and report the results.

    forge-eval list
    forge-eval run [--backend llama-server|oracle|openai|ollama|anthropic] [--model GGUF]
                   [--scenarios NAME ...] [--tags TAG ...] [--runs N]
                   [--ablation all-on bare ...] [--out results.jsonl] [--report-dir DIR]
    forge-eval report results.jsonl [--out-dir DIR] [--ablation ...] [--details]

`run` appends one JSON line per run to --out and skips runs already there
(same model set-up, scenario, ablation and run index), so an interrupted eval
resumes where it stopped; it ends with the report.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import shlex
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from forge_evals import results
from forge_evals.ablation import PRESETS, preset
from forge_evals.metrics import RunRecord
from forge_evals.report import Report, print_report, write_reports
from forge_evals.runner import (
    EvalSettings,
    InfrastructureError,
    PlannedRun,
    config_id,
    plan,
    run_eval,
)
from forge_evals.scenario import select
from forge_evals.scenarios import ALL_SCENARIOS
from forge_evals.targets import AddressTarget, Target, in_process, oracle_backend

DEFAULT_OUT = Path("eval-results/results.jsonl")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="forge-eval",
        description="Does Forge's guardrail stack make a weak model reliable? Runs "
        "deterministic multi-step scenarios through a Forge server with the Python SDK.",
    )
    p.add_argument("--log-level", default="WARNING")
    sub = p.add_subparsers(dest="command", required=True)

    sub.add_parser("list", help="list the scenarios and ablation presets")

    run = sub.add_parser(
        "run",
        help="run scenarios, append results (resumable), write the report",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    be = run.add_argument_group("model")
    be.add_argument(
        "--backend",
        choices=["llama-server", "oracle", "openai", "ollama", "anthropic"],
        default="llama-server",
        help="llama-server: managed (bundled Gemma 3 270M unless --model) or --llama-url; "
        "oracle: a scripted perfect model that replays each scenario's reference solution",
    )
    be.add_argument("--model", type=Path, help="llama-server: GGUF file (default: bundled)")
    be.add_argument("--llama-url", default="", help="llama-server: use an external one")
    be.add_argument("--ctx-size", type=int, default=4096, help="managed llama-server context")
    be.add_argument("--slots", type=int, default=1, help="managed llama-server slots")
    be.add_argument("--model-name", default="", help="openai/ollama/anthropic: model id")
    be.add_argument("--base-url", default="", help="openai/ollama/anthropic: server URL")
    be.add_argument(
        "--server-args",
        default="",
        help="more forge-server flags for the in-process server's backend, e.g. "
        "'--tool-call-mode prompt'",
    )
    be.add_argument(
        "--address",
        default="",
        help="use a running Forge server instead of starting one",
    )
    sel = run.add_argument_group("what to run")
    sel.add_argument("--scenarios", nargs="*", default=[], metavar="NAME")
    sel.add_argument("--tags", nargs="*", default=[], metavar="TAG")
    sel.add_argument("--runs", type=int, default=5, help="runs per scenario and ablation")
    sel.add_argument(
        "--ablation",
        nargs="*",
        default=["all-on"],
        choices=list(PRESETS),
        metavar="PRESET",
        help=f"ablation presets: {', '.join(PRESETS)}",
    )
    sel.add_argument("--temperature", type=float, default=None, help="default: the server's")
    sel.add_argument("--max-tokens", type=int, default=None, help="default: the server's")
    sel.add_argument("--run-timeout", type=float, default=600.0, help="seconds per run")
    out = run.add_argument_group("output")
    out.add_argument("--out", type=Path, default=DEFAULT_OUT, help="results JSONL (appended)")
    out.add_argument(
        "--report-dir", type=Path, default=None, help="default: the directory of --out"
    )
    out.add_argument("--fresh", action="store_true", help="start --out over instead of resuming")

    rep = sub.add_parser("report", help="report on a results JSONL")
    rep.add_argument("results", type=Path)
    rep.add_argument("--out-dir", type=Path, default=None, help="default: next to the results")
    rep.add_argument("--ablation", nargs="*", default=[], metavar="PRESET")
    rep.add_argument("--scenarios", nargs="*", default=[], metavar="NAME")
    rep.add_argument("--tags", nargs="*", default=[], metavar="TAG")
    rep.add_argument("--details", action="store_true", help="per-ablation detail tables")
    return p


def server_argv(args: argparse.Namespace) -> list[str]:
    """forge-server flags for the backend of the in-process server."""
    argv = ["--backend", args.backend]
    if args.backend == "llama-server":
        if args.llama_url:
            argv += ["--llama-url", args.llama_url]
        else:
            argv += ["--ctx-size", str(args.ctx_size), "--slots", str(args.slots)]
            if args.model:
                argv += ["--model", str(args.model)]
    if args.model_name:
        argv += ["--model-name", args.model_name]
    if args.base_url:
        argv += ["--base-url", args.base_url]
    return argv + shlex.split(args.server_args)


@contextlib.asynccontextmanager
async def open_target(args: argparse.Namespace) -> AsyncIterator[Target]:
    if args.address:
        from forge_client import ForgeClient

        async with ForgeClient(args.address) as client:
            info = await client.server_info()
        yield AddressTarget(
            args.address,
            {
                "backend": info.backend,
                "model": info.model,
                "tool_call_mode": info.tool_call_mode,
                "context_budget_tokens": info.context_budget_tokens,
            },
        )
        return
    if args.backend == "oracle":
        async with in_process(oracle_backend(ALL_SCENARIOS)) as target:
            yield target
        return
    from forge_server.backend import open_backend
    from forge_server.cli import backend_config

    config = backend_config(server_argv(args))
    async with open_backend(config) as backend, in_process(backend) as target:
        yield target


async def run_command(args: argparse.Namespace, console: Console) -> int:
    scenarios = select(ALL_SCENARIOS, args.scenarios, args.tags)
    if not scenarios:
        console.print("[red]no scenario matches --scenarios/--tags[/red]")
        return 2
    ablations = [preset(a) for a in args.ablation]
    settings = EvalSettings(
        temperature=args.temperature,
        max_tokens=args.max_tokens,
        run_timeout_s=args.run_timeout,
    )
    if args.fresh and args.out.exists():
        args.out.unlink()
    writer = results.ResultsWriter(args.out)
    existing = results.load(args.out)
    report_dir = args.report_dir or args.out.parent
    started = time.monotonic()
    with console.status("starting the server and backend..."):
        target_cm = open_target(args)
        target = await target_cm.__aenter__()
    try:
        cfg_id = config_id(target.describe(), settings)
        todo = plan(scenarios, ablations, args.runs, cfg_id, results.done_keys(existing))
        total = len(scenarios) * len(ablations) * args.runs
        console.print(
            f"[bold]{cfg_id}[/bold]: {len(scenarios)} scenarios x {len(ablations)} "
            f"ablations x {args.runs} runs = {total}; {total - len(todo)} already in "
            f"{args.out}, {len(todo)} to run"
        )
        await _run_with_progress(target, todo, writer, settings, cfg_id, console)
    except InfrastructureError as exc:
        console.print(f"[red]stopped: {exc}[/red]\nrun the same command again to resume")
        return 1
    finally:
        await target_cm.__aexit__(None, None, None)
    elapsed = time.monotonic() - started
    names = {s.name for s in scenarios}
    wanted = [
        r
        for r in results.load(args.out)
        if r.config_id == cfg_id and r.scenario in names and r.ablation in args.ablation
    ]
    report = Report.build(wanted)
    print_report(report, console)
    md, png = write_reports(report, report_dir, stem=args.out.stem)
    console.print(f"took {elapsed:.0f}s; results {args.out}, report {md}, chart {png}")
    return 0


async def _run_with_progress(
    target: Target,
    todo: list[PlannedRun],
    writer: results.ResultsWriter,
    settings: EvalSettings,
    cfg_id: str,
    console: Console,
) -> list[RunRecord]:
    correct = [0, 0]
    with Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("correct {task.fields[score]}"),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=False,
    ) as progress:
        task = progress.add_task("eval", total=len(todo), score="-")

        def on_progress(item: PlannedRun, record: RunRecord | None) -> None:
            label = f"{item.ablation.name} {item.scenario.name} #{item.run_index}"
            if record is None:
                progress.update(task, description=label)
                return
            correct[0] += record.correct
            correct[1] += 1
            progress.update(task, advance=1, score=f"{correct[0]}/{correct[1]}")

        return await run_eval(
            target, todo, writer, settings=settings, cfg_id=cfg_id, on_progress=on_progress
        )


def report_command(args: argparse.Namespace, console: Console) -> int:
    records = results.load(args.results)
    if not records:
        console.print(f"[red]no results in {args.results}[/red]")
        return 1
    report = Report.build(
        records, ablations=args.ablation, scenarios=args.scenarios, tags=args.tags
    )
    print_report(report, console, details=args.details)
    md, png = write_reports(report, args.out_dir or args.results.parent, stem=args.results.stem)
    console.print(f"report {md}, chart {png}")
    return 0


def list_command(console: Console) -> int:
    table = Table(title="Scenarios", title_justify="left")
    for col in ("scenario", "tags", "ideal", "max iter", "budget", "what it measures"):
        table.add_column(col)
    for s in ALL_SCENARIOS:
        table.add_row(
            s.name,
            ", ".join(s.tags),
            str(s.ideal_iterations),
            str(s.max_iterations),
            str(s.budget_tokens or "-"),
            s.description,
        )
    console.print(table)
    presets = Table(title="Ablation presets", title_justify="left")
    presets.add_column("preset")
    presets.add_column("guardrails off")
    presets.add_column("what it measures")
    for a in PRESETS.values():
        presets.add_row(a.name, ", ".join(sorted(a.disabled)) or "-", a.description)
    console.print(presets)
    return 0


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=args.log_level.upper(),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    logging.getLogger("httpx").setLevel(logging.WARNING)
    console = Console()
    if args.command == "list":
        code = list_command(console)
    elif args.command == "report":
        code = report_command(args, console)
    else:
        code = asyncio.run(run_command(args, console))
    raise SystemExit(code)


if __name__ == "__main__":
    main()
