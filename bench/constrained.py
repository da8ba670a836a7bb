"""Constrained calls against the model's own speed, and what slots add.

Forge's real constrained calls: the forge-eval scenarios run once through an
in-process Forge server on a managed llama-server (bundled Gemma 3 270M,
one slot), and every constrained model call the engine makes is recorded.
Each recorded call is then made again, on the same server and the same
prompt (already in the slot's cache), three ways, interleaved:

- `pieces`: Forge's call in pieces (forge_core/backends/llama/pieces.py),
  the default: Forge writes the keys and punctuation, the model each choice
  (a listed value chosen from its likeliest next tokens, then written);
- `whole grammar`: one grammar for the whole call (the old way);
- `unconstrained`: the same prompt, no grammar, exactly as many tokens as
  the pieces call had (`ignore_eos`).

Each is timed from Forge's side (HTTP included). Tokens per second are the
call's tokens (llama-server's tokenizer on the call's text) over that time;
`constraint_ms_per_token` is pieces' ms per token minus unconstrained's.
Every accepted call is checked against its tool's JSON Schema.

With `--slots 1,4,8`, the 2-step weather workflow of bench/real_model.py
runs through the Python SDK at each slot count on a llama-server with that
many slots, as many runs at once as there are slots: workflows per second
for pieces and for the whole-call grammar.

    .venv/bin/python -m bench.constrained [--slots 1,4,8] [--scenarios ...]
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import dataclasses
import json
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import httpx
import jsonschema

from bench._common import fmt, ratio, table, write_results
from forge_core.backends.base import BackendReply, ChatRequest
from forge_core.backends.llama.server import LlamaServerBackend, allowed_tools
from forge_core.calls import ToolCall
from forge_core.guardrails.value_pools import NumberChoice
from forge_core.messages import Message, MessageRole, MessageType, ToolCallInfo
from forge_core.workflow import Prerequisite, ToolSpec


@dataclass
class Timed:
    seconds: float = 0.0
    tokens: int = 0
    calls: int = 0
    valid: int = 0
    accepted: int = 0

    def add(self, seconds: float, tokens: int) -> None:
        self.seconds += seconds
        self.tokens += tokens
        self.calls += 1

    def per_s(self) -> float:
        return self.tokens / self.seconds if self.seconds else 0.0

    def ms_per_token(self) -> float:
        return 1000 * self.seconds / self.tokens if self.tokens else 0.0


@dataclass
class Recorder:
    requests: list[ChatRequest] = field(default_factory=list)


def _record(backend: LlamaServerBackend, recorder: Recorder) -> None:
    """Keep a copy of every constrained single-call request the engine makes."""
    complete = backend.complete

    async def recording(request: ChatRequest, on_chunk: Any) -> BackendReply:
        if backend.constrains(request) and not request.parallel:
            recorder.requests.append(copy.deepcopy(request))
        return await complete(request, on_chunk)

    backend.complete = recording  # type: ignore[method-assign]


async def collect(backend: LlamaServerBackend, names: list[str]) -> list[ChatRequest]:
    """Run the scenarios once (all guardrails on) and return their calls."""
    from forge_client import ForgeClient
    from forge_evals.ablation import preset
    from forge_evals.runner import EvalSettings, PlannedRun, run_one
    from forge_evals.scenarios import ALL_SCENARIOS, BY_NAME
    from forge_evals.targets import in_process

    scenarios = [BY_NAME[n] for n in names] if names else list(ALL_SCENARIOS)
    recorder = Recorder()
    _record(backend, recorder)
    async with in_process(backend) as target:
        async with ForgeClient(await target.address()) as client:
            for scenario in scenarios:
                await run_one(
                    client,
                    PlannedRun(scenario, preset("all-on"), 0),
                    cfg_id="bench",
                    config={},
                    settings=EvalSettings(),
                )
    return recorder.requests


def dump_requests(requests: list[ChatRequest]) -> str:
    """The recorded calls as JSON, to replay on another host."""
    out = []
    for request in requests:
        item = dataclasses.asdict(replace(request, on_queue=None))
        item.pop("on_queue")
        for tool in item["tools"]:
            tool.pop("validator")
        for message in item["messages"]:
            # What the engine fixed in earlier calls does not reach the prompt.
            for call in message["tool_calls"]:
                call.pop("coercions", None)
        out.append(item)
    return json.dumps(out)


def load_requests(text: str) -> list[ChatRequest]:
    requests = []
    for item in json.loads(text):
        item["messages"] = [
            Message(
                **{
                    **m,
                    "role": MessageRole(m["role"]),
                    "type": MessageType(m["type"]),
                    "tool_calls": [ToolCallInfo(**c) for c in m["tool_calls"]],
                }
            )
            for m in item["messages"]
        ]
        item["tools"] = [
            ToolSpec(**{**t, "prerequisites": [Prerequisite(**p) for p in t["prerequisites"]]})
            for t in item["tools"]
        ]
        item["number_values"] = {k: NumberChoice(**v) for k, v in item["number_values"].items()}
        item["excluded_calls"] = [tuple(c) for c in item["excluded_calls"]]
        requests.append(ChatRequest(**item))
    return requests


async def _tokens(http: httpx.AsyncClient, text: str) -> int:
    resp = await http.post("/tokenize", json={"content": text, "add_special": False})
    return len(resp.json().get("tokens", []))


def _valid(request: ChatRequest, calls: list[ToolCall]) -> bool:
    tools = {t.name: t for t in allowed_tools(request)}
    for call in calls:
        tool = tools.get(call.name)
        if tool is None:
            return False
        try:
            jsonschema.validate(call.args, tool.parameters)
        except jsonschema.ValidationError:
            return False
    return True


async def _timed_call(
    backend: LlamaServerBackend, request: ChatRequest, pieces: bool
) -> tuple[float, BackendReply]:
    backend.call_pieces = pieces
    start = time.perf_counter()
    reply = await backend.complete(request, None)
    return time.perf_counter() - start, reply


async def _unconstrained(
    http: httpx.AsyncClient, backend: LlamaServerBackend, request: ChatRequest, tokens: int
) -> float:
    body = backend.request_body(request)
    body.pop("grammar", None)
    body.pop("response_format", None)
    body.update(stream=False, max_tokens=tokens, ignore_eos=True, id_slot=0)
    start = time.perf_counter()
    resp = await http.post("/v1/chat/completions", json=body)
    resp.raise_for_status()
    return time.perf_counter() - start


async def per_call(
    backend: LlamaServerBackend, requests: list[ChatRequest], rounds: int
) -> dict[str, Timed]:
    out = {"pieces": Timed(), "whole grammar": Timed(), "unconstrained": Timed()}
    async with httpx.AsyncClient(base_url=backend.info().url, timeout=600.0) as http:
        for _ in range(rounds):
            for request in requests:
                # The prompt goes into the slot's cache first, for all three.
                await _unconstrained(http, backend, request, 1)
                seconds, reply = await _timed_call(backend, request, pieces=True)
                if reply.truncated or not isinstance(reply.response, list):
                    continue
                tokens = await _tokens(http, reply.raw_text)
                out["pieces"].add(seconds, tokens)
                out["pieces"].accepted += 1
                out["pieces"].valid += _valid(request, reply.response)
                seconds, whole = await _timed_call(backend, request, pieces=False)
                if isinstance(whole.response, list):
                    out["whole grammar"].add(seconds, await _tokens(http, whole.raw_text))
                    out["whole grammar"].accepted += 1
                    out["whole grammar"].valid += _valid(request, whole.response)
                out["unconstrained"].add(
                    await _unconstrained(http, backend, request, tokens), tokens
                )
    backend.call_pieces = True
    return out


async def slot_throughput(
    slot_counts: list[int], runs_per_slot: int, threads: int
) -> list[dict[str, Any]]:
    from bench.real_model import weather
    from forge_client import ForgeClient, RunOptions
    from forge_evals.targets import in_process
    from forge_server.backend import BackendConfig, open_backend

    rows = []
    for slots in slot_counts:
        config = BackendConfig(
            backend="llama-server", ctx_size=4096 * slots, slots=slots, threads=threads
        )
        async with open_backend(config) as backend:
            assert isinstance(backend, LlamaServerBackend)
            async with in_process(backend) as target:
                async with ForgeClient(await target.address()) as client:
                    row: dict[str, Any] = {"slots": slots}
                    for mode in ("pieces", "whole grammar"):
                        backend.call_pieces = mode == "pieces"
                        runs = slots * runs_per_slot
                        done = 0

                        async def one() -> None:
                            nonlocal done
                            wf = weather()
                            await client.run(
                                wf,
                                "What's the weather in Oslo?",
                                options=RunOptions(max_iterations=8),
                            )
                            done += 1

                        start = time.perf_counter()
                        results = await asyncio.gather(
                            *(one() for _ in range(runs)), return_exceptions=True
                        )
                        elapsed = time.perf_counter() - start
                        row[f"{mode}_workflows_per_s"] = done / elapsed
                        row[f"{mode}_failed"] = sum(isinstance(r, BaseException) for r in results)
                    rows.append(row)
    return rows


async def streams(
    backend: LlamaServerBackend, requests: list[ChatRequest], counts: list[int]
) -> list[dict[str, Any]]:
    """Aggregate tokens/s with `n` calls in flight at once (one per slot),
    each stream making every recorded call: pieces, the whole-call grammar,
    and unconstrained generation of as many tokens as pieces made."""
    rows = []
    async with httpx.AsyncClient(
        base_url=backend.info().url, timeout=600.0, limits=httpx.Limits(max_connections=64)
    ) as http:
        sizes: dict[int, int] = {}
        for n in counts:
            row: dict[str, Any] = {"streams": n}
            for mode in ("pieces", "whole grammar", "unconstrained"):
                backend.call_pieces = mode == "pieces"
                tokens = 0

                async def stream(k: int, n: int, mode: str) -> None:
                    nonlocal tokens
                    for i, original in enumerate(requests):
                        request = copy.copy(original)
                        # Its own run id per stream: the scheduler gives it a slot.
                        request.run_id = f"stream-{n}-{k}"
                        if mode == "unconstrained":
                            body = backend.request_body(request)
                            body.pop("grammar", None)
                            body.pop("response_format", None)
                            body.update(
                                stream=False, max_tokens=sizes[i], ignore_eos=True, id_slot=k
                            )
                            resp = await http.post("/v1/chat/completions", json=body)
                            tokens += int(resp.json()["usage"]["completion_tokens"])
                            continue
                        reply = await backend.complete(request, None)
                        made = await _tokens(http, reply.raw_text)
                        tokens += made
                        if mode == "pieces":
                            sizes[i] = max(1, made)

                start = time.perf_counter()
                await asyncio.gather(*(stream(k, n, mode) for k in range(n)))
                elapsed = time.perf_counter() - start
                row[f"{mode}_tokens_per_s"] = tokens / elapsed
            row["pieces_vs_unconstrained"] = ratio(
                row["pieces_tokens_per_s"], row["unconstrained_tokens_per_s"]
            )
            rows.append(row)
    backend.call_pieces = True
    return rows


async def measure(
    backend: LlamaServerBackend, args: argparse.Namespace
) -> tuple[list[ChatRequest], dict[str, Timed], list[dict[str, Any]]]:
    if args.load_requests:
        requests = load_requests(args.load_requests.read_text())
    else:
        requests = await collect(backend, args.scenarios)
        if args.save_requests:
            args.save_requests.write_text(dump_requests(requests))
    if args.max_calls:
        requests = requests[: args.max_calls]
    if args.warmup:
        # Untimed: a GPU backend builds pipelines for batch shapes the first
        # time it meets them (seconds each), whichever mode meets them first.
        await per_call(backend, requests[: args.warmup], 1)
        if args.streams:
            await streams(backend, requests[: args.warmup], [max(args.streams)])
    timed = await per_call(backend, requests, args.rounds)
    rows = await streams(backend, requests, args.streams) if args.streams else []
    return requests, timed, rows


async def run(args: argparse.Namespace) -> dict[str, Any]:
    slots = max([1, *args.streams])
    if args.llama_url:
        backend = await LlamaServerBackend.connect(args.llama_url)
        try:
            requests, timed, stream_rows = await measure(backend, args)
        finally:
            await backend.aclose()
    else:
        from forge_server.backend import BackendConfig, open_backend

        config = BackendConfig(
            backend="llama-server", ctx_size=4096 * slots, slots=slots, threads=args.threads
        )
        async with open_backend(config) as opened:
            assert isinstance(opened, LlamaServerBackend)
            requests, timed, stream_rows = await measure(opened, args)
    pieces, whole, plain = timed["pieces"], timed["whole grammar"], timed["unconstrained"]
    data: dict[str, Any] = {
        "recorded_calls": len(requests),
        "rounds": args.rounds,
        "constrained_tokens_per_s": pieces.per_s(),
        "unconstrained_tokens_per_s": plain.per_s(),
        "whole_grammar_tokens_per_s": whole.per_s(),
        "constraint_ms_per_token": pieces.ms_per_token() - plain.ms_per_token(),
        "whole_grammar_constraint_ms_per_token": whole.ms_per_token() - plain.ms_per_token(),
        "accepted_calls": pieces.accepted,
        "valid_fraction": pieces.valid / pieces.accepted if pieces.accepted else 0.0,
        "whole_grammar_valid_fraction": whole.valid / whole.accepted if whole.accepted else 0.0,
        "modes": {
            name: {
                "calls": t.calls,
                "tokens": t.tokens,
                "seconds": t.seconds,
                "tokens_per_s": t.per_s(),
                "ms_per_token": t.ms_per_token(),
            }
            for name, t in timed.items()
        },
    }
    if stream_rows:
        data["streams"] = stream_rows
    if args.slots:
        data["slots"] = await slot_throughput(args.slots, args.runs_per_slot, args.threads)
    return data


def report(data: dict[str, Any]) -> str:
    modes = data["modes"]
    plain = modes["unconstrained"]["tokens_per_s"]
    rows = [
        [
            name,
            m["calls"],
            m["tokens"],
            fmt(m["tokens_per_s"], 1),
            fmt(m["ms_per_token"], 1),
            fmt(ratio(m["tokens_per_s"], plain)),
        ]
        for name, m in modes.items()
    ]
    out = [
        table(["mode", "calls", "tokens", "tokens/s", "ms/token", "vs unconstrained"], rows),
        f"constraint_ms_per_token: {fmt(data['constraint_ms_per_token'])} (pieces), "
        f"{fmt(data['whole_grammar_constraint_ms_per_token'])} (whole grammar)",
        f"valid: {fmt(100 * data['valid_fraction'], 1)}% of "
        f"{data['accepted_calls']} accepted calls",
    ]
    if "streams" in data:
        out.append(
            table(
                ["streams", "pieces tok/s", "whole grammar tok/s", "unconstrained tok/s", "ratio"],
                [
                    [
                        r["streams"],
                        fmt(r["pieces_tokens_per_s"], 1),
                        fmt(r["whole grammar_tokens_per_s"], 1),
                        fmt(r["unconstrained_tokens_per_s"], 1),
                        fmt(r["pieces_vs_unconstrained"]),
                    ]
                    for r in data["streams"]
                ],
            )
        )
    if "slots" in data:
        base = data["slots"][0]
        out.append(
            table(
                ["slots", "pieces wf/s", "vs 1 slot", "whole grammar wf/s", "vs 1 slot", "failed"],
                [
                    [
                        r["slots"],
                        fmt(r["pieces_workflows_per_s"]),
                        fmt(ratio(r["pieces_workflows_per_s"], base["pieces_workflows_per_s"])),
                        fmt(r["whole grammar_workflows_per_s"]),
                        fmt(
                            ratio(
                                r["whole grammar_workflows_per_s"],
                                base["whole grammar_workflows_per_s"],
                            )
                        ),
                        r["pieces_failed"] + r["whole grammar_failed"],
                    ]
                    for r in data["slots"]
                ],
            )
        )
    return "\n\n".join(out)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--scenarios", nargs="*", default=[], help="forge-eval scenarios (default: all)")
    p.add_argument("--rounds", type=int, default=1, help="times each recorded call is replayed")
    p.add_argument(
        "--max-calls", type=int, default=40, help="replay at most this many calls (0: all)"
    )
    p.add_argument(
        "--slots",
        type=lambda s: [int(x) for x in s.split(",") if x],
        default=[],
        help="slot counts for the throughput part, e.g. 1,4,8 (default: skip)",
    )
    p.add_argument("--runs-per-slot", type=int, default=3)
    p.add_argument(
        "--warmup", type=int, default=3, help="calls replayed untimed first, in every mode"
    )
    p.add_argument(
        "--streams",
        type=lambda s: [int(x) for x in s.split(",") if x],
        default=[],
        help="calls in flight at once on one server, e.g. 1,8: aggregate tokens/s",
    )
    p.add_argument("--llama-url", default="", help="an external llama-server (default: managed)")
    p.add_argument("--save-requests", type=Path, help="write the recorded calls here (JSON)")
    p.add_argument(
        "--load-requests", type=Path, help="replay these recorded calls (no forge-eval run)"
    )
    p.add_argument("--threads", type=int, default=0, help="llama-server threads (0: default)")
    args = p.parse_args(argv)
    data = asyncio.run(run(args))
    print(report(data))
    path = write_results("constrained", data)
    print(f"\nresults: {path}")


if __name__ == "__main__":
    main()
