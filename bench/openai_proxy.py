"""The OpenAI-compatible endpoint: what it costs, and what its guardrails give.

One forge-server process with a managed llama-server (the bundled 270M
model, `--slots 1 --ctx-size 4096`) and `--openai-port`. Both parts use the
official `openai` client.

1. Overhead. The same short request goes straight to that llama-server's own
   /v1/chat/completions (the baseline) and through Forge's endpoint,
   alternating, streamed. Per request: time to the first SSE byte, time to
   the first token of the answer, and the wall time minus llama-server's own
   prompt + generation timings (what is not the model).
2. Guardrails through the proxy. The forge-eval plumbing scenarios, each run
   through `Run` (the Python SDK) and through the endpoint with a plain
   OpenAI-client loop (registered workflow, tools executed by the loop),
   scored by the scenarios' own checks.

    .venv/bin/python -m bench.openai_proxy [--requests 10] [--runs 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from statistics import median
from typing import Any

import httpx
import openai
from google.protobuf import json_format

from bench._common import (
    forge_server_argv,
    free_port,
    ratio,
    server_process,
    table,
    write_results,
)
from forge_client import ForgeClient, RunFailedError, RunOptions, ToolResolutionError
from forge_evals.scenario import Scenario
from forge_evals.scenarios import plumbing

PROMPT = [{"role": "user", "content": "Say hello to the team in one short sentence."}]
MAX_TOKENS = 32


async def _stream(client: openai.AsyncOpenAI, **kwargs: Any) -> dict[str, float]:
    """One streamed request: first byte, first token, wall, model ms."""
    started = time.perf_counter()
    first_byte = first_token = 0.0
    model_ms = 0.0
    text = ""
    async with await client.chat.completions.create(stream=True, **kwargs) as stream:
        async for chunk in stream:
            now = time.perf_counter() - started
            first_byte = first_byte or now
            for choice in chunk.choices:
                if choice.delta.content:
                    first_token = first_token or now
                    text += choice.delta.content
            extra = chunk.model_extra or {}
            if "timings" in extra:  # llama-server's own final chunk
                timings = extra["timings"]
                model_ms = timings.get("prompt_ms", 0.0) + timings.get("predicted_ms", 0.0)
            if "forge" in extra and "prompt_ms" in extra["forge"]:
                forge = extra["forge"]
                model_ms = forge["prompt_ms"] + forge["generation_ms"]
    wall = time.perf_counter() - started
    return {
        "first_byte_ms": first_byte * 1000,
        "first_token_ms": first_token * 1000,
        "wall_ms": wall * 1000,
        "model_ms": model_ms,
        "not_model_ms": wall * 1000 - model_ms,
        "chars": len(text),
    }


async def overhead(forge: openai.AsyncOpenAI, direct: openai.AsyncOpenAI, n: int) -> dict[str, Any]:
    rows: dict[str, list[dict[str, float]]] = {"direct": [], "forge": []}
    request = {"model": "forge", "messages": PROMPT, "max_tokens": MAX_TOKENS, "temperature": 0}
    # One warm-up each: the first request after start-up fills caches.
    await _stream(direct, **request)
    await _stream(forge, **request)
    for _ in range(n):
        rows["direct"].append(await _stream(direct, **request))
        rows["forge"].append(await _stream(forge, **request))
    summary = {
        side: {key: median(r[key] for r in runs) for key in runs[0]} for side, runs in rows.items()
    }
    return {"requests": n, "median": summary, "runs": rows}


async def proxy_loop(
    client: openai.AsyncOpenAI, scenario: Scenario, max_requests: int
) -> dict[str, Any]:
    """A caller's ordinary OpenAI loop over the scenario's tools."""
    wf = scenario.build()
    messages: list[Any] = [{"role": "user", "content": scenario.user_message}]
    calls: list[tuple[str, dict[str, Any]]] = []
    model_calls = 0
    for _ in range(max_requests):
        try:
            reply = await client.chat.completions.create(
                model="forge", messages=messages, extra_headers={"X-Forge-Workflow": wf.name}
            )
        except openai.APIStatusError as exc:
            return {"completed": False, "correct": False, "calls": calls, "error": str(exc)[:200]}
        model_calls += (reply.model_extra or {}).get("forge", {}).get("model_calls", 0)
        message = reply.choices[0].message
        if reply.choices[0].finish_reason == "stop":
            terminal = [c for c in calls if c[0] in wf.terminal_tools]
            correct = bool(terminal) and scenario.check(*terminal[-1])
            return {
                "completed": True,
                "correct": correct,
                "calls": calls,
                "model_calls": model_calls,
            }
        messages.append(message.model_dump(exclude_none=True))
        for tool_call in message.tool_calls or []:
            assert tool_call.type == "function"
            name, arguments = tool_call.function.name, tool_call.function.arguments
            calls.append((name, json.loads(arguments)))
            try:
                output = await wf.tools[name].invoke(arguments)
                content = output if isinstance(output, str) else json.dumps(output)
            except ToolResolutionError as exc:
                content = f"[ToolError] {exc}"
            except Exception as exc:  # the tool's own error, as the model should see it
                content = f"[ToolError] {type(exc).__name__}: {exc}"
            messages.append({"role": "tool", "tool_call_id": tool_call.id, "content": content})
    return {"completed": False, "correct": False, "calls": calls, "model_calls": model_calls}


async def run_path(address: str, scenario: Scenario) -> dict[str, Any]:
    wf = scenario.build()
    async with ForgeClient(address) as client:
        try:
            result = await client.run(
                wf,
                scenario.user_message,
                options=RunOptions(max_iterations=scenario.max_iterations),
            )
        except RunFailedError as exc:
            return {"completed": False, "correct": False, "error": str(exc)[:200]}
    terminal = [
        (c.name, json.loads(c.arguments_json))
        for m in result.transcript
        for c in m.tool_calls
        if c.name == result.terminal_tool and not m.transient
    ]
    correct = bool(terminal) and scenario.check(*terminal[-1])
    return {"completed": True, "correct": correct, "model_calls": result.usage.model_calls}


async def guardrails(
    address: str, base: str, client: openai.AsyncOpenAI, runs: int
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    async with httpx.AsyncClient() as http:
        for scenario in plumbing.SCENARIOS:
            wf = scenario.build()
            body = {
                "workflow": json_format.MessageToDict(wf.to_proto()),
                "options": {"maxIterations": scenario.max_iterations},
            }
            resp = await http.put(f"{base}/forge/workflows/{wf.name}", json=body)
            resp.raise_for_status()
            via_run = [await run_path(address, scenario) for _ in range(runs)]
            via_proxy = [
                await proxy_loop(client, scenario, scenario.max_iterations) for _ in range(runs)
            ]
            out[scenario.name] = {"run": via_run, "proxy": via_proxy}
    return out


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--requests", type=int, default=10)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument(
        "--overhead-only",
        action="store_true",
        help="only part 1: first-token time of a plain chat answer, Forge vs direct",
    )
    args = parser.parse_args()
    port, oport = free_port(), free_port()
    argv = forge_server_argv(
        port, "--slots", "1", "--ctx-size", "4096", "--openai-port", str(oport)
    )
    async with server_process(argv, port, "openai_proxy"):
        async with ForgeClient(f"127.0.0.1:{port}") as sdk:
            info = await sdk.server_info()
        base = f"http://127.0.0.1:{oport}/v1"
        forge = openai.AsyncOpenAI(base_url=base, api_key="x", timeout=600, max_retries=0)
        direct = openai.AsyncOpenAI(
            base_url=f"{info.backend_url}/v1", api_key="x", timeout=600, max_retries=0
        )
        cost = await overhead(forge, direct, args.requests)
        guards = (
            {}
            if args.overhead_only
            else await guardrails(f"127.0.0.1:{port}", base, forge, args.runs)
        )
        await forge.close()
        await direct.close()

    med = cost["median"]
    print(f"\n## Overhead ({args.requests} streamed requests each, medians, ms)\n")
    keys = ["first_byte_ms", "first_token_ms", "wall_ms", "model_ms", "not_model_ms"]
    rows = [[side, *(med[side][k] for k in keys)] for side in ("direct", "forge")]
    print(table(["path", *keys], rows))
    added = med["forge"]["not_model_ms"] - med["direct"]["not_model_ms"]
    print(f"\nForge adds {added:.1f} ms per request outside the model")
    first = ratio(med["forge"]["first_token_ms"], med["direct"]["first_token_ms"])
    print(f"first token through Forge / direct: {first:.2f}x")
    if args.overhead_only:
        written = write_results("openai_first_token", {"overhead": cost, "model": info.model})
        print(f"\nwrote {written}")
        return
    print(f"\n## Plumbing scenarios, {args.runs} runs each (correct / completed)\n")
    rows = []
    for name, paths in guards.items():
        row: list[Any] = [name]
        for path in ("run", "proxy"):
            runs = paths[path]
            row.append(
                f"{sum(r['correct'] for r in runs)}/{len(runs)} "
                f"({sum(r['completed'] for r in runs)} completed)"
            )
        rows.append(row)
    print(table(["scenario", "Run (Python SDK)", "OpenAI endpoint, plain loop"], rows))
    written = write_results(
        "openai_proxy",
        {"overhead": cost, "guardrails": guards, "added_ms": added, "model": info.model},
    )
    print(f"\nwrote {written}")


if __name__ == "__main__":
    asyncio.run(main())
