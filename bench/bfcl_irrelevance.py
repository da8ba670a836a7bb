"""Outside benchmark: Forge's decline path on BFCL v4's irrelevance data (issue 34).

BFCL's `irrelevance` (and `live_irrelevance`) cases give the model functions
none of which fits the request; the right answer is no call at all. Each case
of a seeded sample (default 40 per file) runs through the real Forge server
(in process) and the Python SDK on the managed llama-server (bundled model,
one thread, temperature 0), as bench.bfcl's forge arm does, with one change:
the workflow also has the built-in respond tool (`respond_tool=True`), a
decline path. A case is *declined* when the run ends through `respond`
without any function call.

A decline path is only useful if it does not eat the requests the functions
do fit: the same shape (functions terminal + respond) also runs bench.bfcl's
own sample of relevant cases (simple_python and multiple, seed 12, default 20
each), scored with bench.bfcl's checker, beside the same cases without the
respond tool (bench.bfcl's forge arm, same server, same run).

    .venv/bin/python -m bench.bfcl_irrelevance [--per-file 40] [--per-category 20]
        [--seed 12] [--cache-dir /tmp/bfcl] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import sys
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench._common import RESULTS_DIR, fmt, table, write_results
from bench.bfcl import (
    BFCL_VERSION,
    DATA,
    Case,
    Outcome,
    fetch_wheel,
    load_category,
    record,
    run_forge,
    sample,
)
from bench.bfcl import _json_lines as json_lines
from forge_client import ForgeClient

IRRELEVANCE_FILES = ("irrelevance", "live_irrelevance")
RELEVANT_CATEGORIES = ("simple_python", "multiple")
RESPOND = "respond"


def load_irrelevance(archive: zipfile.ZipFile, name: str) -> list[Case]:
    """A BFCL irrelevance file's cases (no possible answers: no call is right).

    An empty list when the wheel has no such file (`live_irrelevance` is
    optional)."""
    path = f"{DATA}/BFCL_v4_{name}.json"
    if path not in archive.namelist():
        return []
    cases = []
    for q in json_lines(archive, path):
        # The first turn's user messages (live cases may have a system one).
        turn = q["question"][0]
        text = "\n".join(m["content"] for m in turn if m.get("role") == "user")
        cases.append(Case(q["id"], name, text, q["function"], []))
    return cases


def declined(out: Outcome) -> bool:
    """The run ended through `respond` and made no function call."""
    return out.terminal_tool == RESPOND and not [c for c in out.calls if c.name != RESPOND]


def irrelevance_record(case: Case, out: Outcome) -> dict[str, Any]:
    rec = record(case, "forge+respond", out)
    # No possible answer: the checker's verdict means nothing here.
    rec["correct"] = rec["declined"] = declined(out)
    rec["error"] = "" if rec["declined"] else (out.failure or "no decline")
    rec["terminal_tool"] = out.terminal_tool
    rec["kind"] = "irrelevance"
    return rec


def relevant_record(case: Case, arm: str, out: Outcome) -> dict[str, Any]:
    rec = record(case, arm, out)
    rec["declined"] = declined(out)
    rec["terminal_tool"] = out.terminal_tool
    rec["kind"] = "relevant"
    return rec


async def run(
    args: argparse.Namespace, irrelevant: Sequence[Case], relevant: Sequence[Case]
) -> list[dict[str, Any]]:
    from forge_evals.targets import in_process
    from forge_server.backend import BackendConfig, open_backend

    config = BackendConfig(
        backend="llama-server",
        llama_url=args.llama_url,
        ctx_size=args.ctx_size,
        slots=1,
        threads=args.threads,
    )
    jobs: list[tuple[Case, str, bool]] = [(c, "forge+respond", True) for c in irrelevant]
    for c in relevant:
        jobs += [(c, "forge", False), (c, "forge+respond", True)]
    records: list[dict[str, Any]] = []
    args.out.parent.mkdir(parents=True, exist_ok=True)
    async with (
        open_backend(config) as backend,
        in_process(backend) as target,
        ForgeClient(await target.address()) as client,
    ):
        with args.out.open("w") as sink:
            for n, (case, arm, respond) in enumerate(jobs, 1):
                out = await run_forge(
                    client, case, args.max_tokens, args.max_iterations, respond=respond
                )
                rec = (
                    relevant_record(case, arm, out)
                    if case.answers
                    else irrelevance_record(case, out)
                )
                records.append(rec)
                sink.write(json.dumps(rec, ensure_ascii=False) + "\n")
                sink.flush()
                mark = "ok " if rec["correct"] else "BAD"
                print(
                    f"[{n}/{len(jobs)}] {arm:13} {mark} {case.id}: {rec['error']}"[:200],
                    file=sys.stderr,
                )
    return records


def summarize(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Decline rate per irrelevance file; relevant accuracy with/without respond."""
    files = {}
    for name in dict.fromkeys(r["category"] for r in records if r["kind"] == "irrelevance"):
        mine = [r for r in records if r["category"] == name and r["kind"] == "irrelevance"]
        files[name] = {
            "cases": len(mine),
            "declined": sum(r["declined"] for r in mine),
            "failed": sum(bool(r["failure"]) for r in mine),
        }
    relevant: dict[str, dict[str, Any]] = {}
    for r in records:
        if r["kind"] != "relevant":
            continue
        for key in (r["category"], "overall"):
            row = relevant.setdefault(key, {})
            arm = row.setdefault(r["arm"], {"cases": 0, "correct": 0, "declined": 0})
            arm["cases"] += 1
            arm["correct"] += r["correct"]
            arm["declined"] += r["declined"]
    if "overall" in relevant:
        # The total row last.
        relevant["overall"] = relevant.pop("overall")
    return {"irrelevance": files, "relevant": relevant}


def _rate(part: int, whole: int) -> str:
    return f"{fmt(part / max(1, whole), 2)} ({part}/{whole})"


def print_tables(summary: dict[str, Any]) -> None:
    rows = [
        [name, f["cases"], _rate(f["declined"], f["cases"]), f["failed"]]
        for name, f in summary["irrelevance"].items()
    ]
    print(table(["irrelevance file", "cases", "declined", "run failures"], rows))
    print()
    rows = []
    for category, arms in summary["relevant"].items():
        plain = arms.get("forge", {"cases": 0, "correct": 0})
        resp = arms.get("forge+respond", {"cases": 0, "correct": 0, "declined": 0})
        rows.append(
            [
                category,
                plain["cases"],
                _rate(plain["correct"], plain["cases"]),
                _rate(resp["correct"], resp["cases"]),
                resp["declined"],
            ]
        )
    headers = ["relevant", "cases", "acc (functions)", "acc (+ respond)", "declined (+ respond)"]
    print(table(headers, rows))


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--per-file", type=int, default=40, help="cases per irrelevance file")
    p.add_argument("--per-category", type=int, default=20, help="relevant cases per category")
    p.add_argument("--seed", type=int, default=12, help="both samples' seed (bench.bfcl's)")
    p.add_argument("--cache-dir", type=Path, default=Path("/tmp/bfcl"), help="the wheel's dir")
    p.add_argument("--out", type=Path, default=None, help="per-case JSON lines")
    p.add_argument("--threads", type=int, default=1, help="managed llama-server threads")
    p.add_argument("--ctx-size", type=int, default=4096)
    p.add_argument("--llama-url", default="", help="use a running llama-server instead")
    p.add_argument("--max-tokens", type=int, default=512, help="per model call")
    p.add_argument("--max-iterations", type=int, default=4, help="per run")
    args = p.parse_args(argv)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    args.out = args.out or RESULTS_DIR / f"bfcl-irrelevance-{stamp}.jsonl"
    with zipfile.ZipFile(fetch_wheel(args.cache_dir)) as archive:
        irrelevant = [
            case
            for name in IRRELEVANCE_FILES
            for case in sample(load_irrelevance(archive, name), args.per_file, args.seed)
        ]
        relevant = [
            case
            for category in RELEVANT_CATEGORIES
            for case in sample(load_category(archive, category), args.per_category, args.seed)
        ]
    records = asyncio.run(run(args, irrelevant, relevant))
    summary = summarize(records)
    print(
        f"BFCL v4 irrelevance (bfcl-eval {BFCL_VERSION}): {args.per_file} per file, relevant "
        f"{args.per_category} per category, seed {args.seed}, temperature 0"
    )
    print_tables(summary)
    print(f"per-case records: {args.out}")
    summary.update(bfcl_eval=BFCL_VERSION, seed=args.seed, out=str(args.out))
    print(f"results: {write_results('bfcl-irrelevance', summary)}")


if __name__ == "__main__":
    main()
