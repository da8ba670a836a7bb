"""A workflow's system prefix as token ids: what llama-server saves per request.

llama-server tokenizes a text prompt in full on every request, even when the
slot's cache holds all of it. A call in pieces makes 1-3 requests, each with
the whole conversation as its prompt. Forge now sends the workflow's system
prefix as the token ids it learned once (forge_core/backends/llama/prefix_ids.py),
so only the conversation after it is tokenized.

One managed llama-server (bundled Gemma 3 270M, one slot, `--threads 1`).
For system prompts of several sizes (tool lists of 3, 20 and 60 tools), the
same piece request (one token, the 20 likeliest, as `backends.llama.pieces` asks for a
tool's name) is sent alternately with the prompt as text (the baseline) and
with the prefix as ids, through the backend's own `/completion` client. The
prompt is in the slot's cache both ways; what differs is llama-server's time
outside its own `prompt_ms + predicted_ms`.

    .venv/bin/python -m bench.prompt_ids [--requests 30] [--tools 3 20 60] [--threads 1]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from pathlib import Path
from typing import Any

from bench._common import fmt, table, write_results
from forge_core.backends.llama.server import LlamaServerBackend
from forge_core.llama_host.install import bundled_binary, bundled_model
from forge_core.llama_host.process import LlamaServerConfig, ManagedLlamaServer

PIECE = {
    "n_predict": 1,
    "n_probs": 20,
    "post_sampling_probs": True,
    "top_k": 20,
    "top_p": 1.0,
    "min_p": 0.0,
    "temperature": 1.0,
    "cache_prompt": True,
    "id_slot": 0,
}


def system_prompt(tools: int) -> str:
    lines = [
        f"- lookup_{n}(record_id: string, region: string, limit: integer): Look up "
        f"record kind {n} by its id in a region; returns at most `limit` rows."
        for n in range(tools)
    ]
    return "You call tools. Answer with one JSON call.\nTools:\n" + "\n".join(lines)


async def measure(backend: LlamaServerBackend, tools: int, requests: int) -> dict[str, Any]:
    system = {"role": "system", "content": system_prompt(tools)}
    messages = [system, {"role": "user", "content": "Find record A-1043 in the north region."}]
    text = await backend.prompts.prompt(messages)
    call = '{"tool": "'
    assert isinstance(backend.prefix_ids.prompt(system, text, call), str)
    await backend.prefix_ids.learned()
    mixed = backend.prefix_ids.prompt(system, text, call)
    if not isinstance(mixed, list):
        raise SystemExit("the prefix was not learned: nothing to measure")
    prefix_tokens = len(mixed) - 1
    outside: dict[str, list[float]] = {"text": [], "ids": []}
    top: dict[str, set[str]] = {"text": set(), "ids": set()}
    prompt_tokens = 0
    for n in range(requests + 2):
        for kind, prompt in (("text", text + call), ("ids", mixed)):
            start = time.perf_counter()
            out = await backend._completions.post({"prompt": prompt, **PIECE})
            wall = (time.perf_counter() - start) * 1e3
            timings = out.get("timings", {})
            model = float(timings.get("prompt_ms", 0)) + float(timings.get("predicted_ms", 0))
            prompt_tokens = int(out.get("tokens_evaluated", 0))
            probs = (out.get("completion_probabilities") or [{}])[0].get("top_probs", [])
            if probs:
                top[kind].add(str(probs[0].get("token", "")))
            if n >= 2:  # the first two fill the cache
                outside[kind].append(wall - model)
    text_ms = statistics.median(outside["text"])
    ids_ms = statistics.median(outside["ids"])
    return {
        "tools": tools,
        "prompt_tokens": prompt_tokens,
        "prefix_tokens": prefix_tokens,
        "outside_ms_text": text_ms,
        "outside_ms_ids": ids_ms,
        "saved_ms": text_ms - ids_ms,
        "ids_vs_text": ids_ms / text_ms if text_ms else 0.0,
        "same_likeliest_token": top["text"] == top["ids"],
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--tools", type=int, nargs="+", default=[3, 20, 60])
    parser.add_argument("--llama-binary", type=Path, help="llama-server (default: bundled)")
    parser.add_argument("--model", type=Path, help="GGUF model (default: bundled)")
    parser.add_argument("--threads", type=int, default=1, help="llama-server threads (0: auto)")
    args = parser.parse_args()
    config = LlamaServerConfig(
        model_path=args.model or bundled_model(),
        binary=args.llama_binary or bundled_binary(),
        ctx_size=16384,
        slots=1,
        threads=args.threads,
        warm_up=False,
        prefix_snapshots=False,
    )
    server = ManagedLlamaServer(config)
    await server.start()
    rows: list[dict[str, Any]] = []
    try:
        backend = await LlamaServerBackend.connect(server.url, backend_mode="managed")
        try:
            for tools in args.tools:
                rows.append(await measure(backend, tools, args.requests))
        finally:
            await backend.aclose()
    finally:
        await server.stop()
    print(
        table(
            [
                "tools",
                "prompt tokens",
                "prefix as ids",
                "outside ms, text",
                "outside ms, ids",
                "saved ms / request",
                "ids / text",
                "same likeliest",
            ],
            [
                [
                    r["tools"],
                    r["prompt_tokens"],
                    r["prefix_tokens"],
                    fmt(r["outside_ms_text"]),
                    fmt(r["outside_ms_ids"]),
                    fmt(r["saved_ms"]),
                    fmt(r["ids_vs_text"]),
                    r["same_likeliest_token"],
                ]
                for r in rows
            ],
        )
    )
    path = write_results("prompt_ids", {"requests": args.requests, "rows": rows})
    print(f"results: {path}")


if __name__ == "__main__":
    asyncio.run(main())
