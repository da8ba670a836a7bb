"""Context management against the real llama-server + Gemma 3 270M.

- token counting: LlamaServerBackend.count_tokens against the prompt size
  llama-server itself reports;
- budget resolution per --budget-mode (start_managed + connect);
- supervision: the llama-server process dies mid-run and the run still ends;
- prompt cache: the KV-cache hit ratio of a 10-iteration run that compacts.

Servers of their own (budget modes, supervision) are small, single-slot and
always stopped; everything else uses the session `llama_server` fixture.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import time
import uuid
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from bench.compaction_cache import (  # the workflow the benchmark measures too
    InspectionTools,
    NextStepOnly,
    inspection_workflow,
)
from forge_client import ForgeClient
from forge_client import RunOptions as ClientRunOptions
from forge_client import Workflow as ClientWorkflow
from forge_core.backends.base import (
    ChatRequest,
    Usage,
)
from forge_core.backends.llama_server import LlamaServerBackend, parse_props, read_props
from forge_core.context import LOW_WATER, CompactionResult
from forge_core.errors import ForgeError
from forge_core.llama_process import (
    LlamaServerConfig,
    ManagedLlamaServer,
    bundled_binary,
    bundled_model,
    start_managed,
)
from forge_core.loop import run_workflow
from forge_core.messages import Message, MessageRole, MessageType, ToolCallInfo
from forge_core.workflow import RunOptions, ToolSpec
from tests.helpers import address, running_server

pytestmark = pytest.mark.e2e


def small_config(**overrides: Any) -> LlamaServerConfig:
    base: dict[str, Any] = {"ctx_size": 1024, "slots": 1}
    base.update(overrides)
    return LlamaServerConfig(model_path=bundled_model(), binary=bundled_binary(), **base)


# --------------------------------------------------------------------------- token counts

ORDER_TOOLS = [
    ToolSpec(
        "search_orders",
        "Search the orders of a customer",
        {
            "type": "object",
            "properties": {"customer": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["customer"],
        },
    ),
    ToolSpec(
        "get_invoice",
        "Fetch one invoice by id",
        {
            "type": "object",
            "properties": {"invoice_id": {"type": "string"}},
            "required": ["invoice_id"],
        },
    ),
    ToolSpec(
        "report",
        "Report the answer. Ends the task.",
        {"type": "object", "properties": {"summary": {"type": "string"}}, "required": ["summary"]},
    ),
]

# Varied results: a list, JSON, an error, non-ASCII text, digits.
ROUNDS: list[tuple[str, dict[str, Any], str]] = [
    (
        "search_orders",
        {"customer": "Alice Martin", "limit": 5},
        "Found 3 orders for Alice Martin:\n"
        "- #A-1001 2024-03-02 lamp (49.90 EUR) delivered\n"
        "- #A-1002 2024-04-11 desk (219.00 EUR) delivered\n"
        "- #A-1003 2024-05-20 chair x2 (2 x 89.50 EUR) in transit",
    ),
    (
        "get_invoice",
        {"invoice_id": "INV-77"},
        json.dumps(
            {
                "invoice_id": "INV-77",
                "lines": [
                    {"sku": "LMP-3", "qty": 1, "price": 49.9},
                    {"sku": "DSK-9", "qty": 1, "price": 219.0},
                ],
                "vat": 0.2,
                "total": 322.68,
                "paid": True,
                "notes": "Paid by card — ending 4242; refund window 30 days.",
            }
        ),
    ),
    (
        "get_invoice",
        {"invoice_id": "INV-78"},
        "ERROR: invoice INV-78 not found (status 404). Known ids: INV-77, INV-79.",
    ),
    (
        "search_orders",
        {"customer": "A-1003"},
        "Übersicht: Bestellung #A-1003 wurde am 21.05. versandt. "
        "Tracking: 1Z999AA10123456784. 日本語のテキストも少し。 Emoji: 📦🚚",
    ),
    (
        "get_invoice",
        {"invoice_id": "INV-79"},
        "squares = [" + ", ".join(str(i * i) for i in range(60)) + "]",
    ),
]


async def test_count_tokens_matches_the_servers_prompt_size(
    llama_server: ManagedLlamaServer,
) -> None:
    backend = await LlamaServerBackend.connect(llama_server.url, backend_mode="managed")
    messages = [
        Message(
            MessageRole.SYSTEM,
            "You are an agent that completes the task 'orders' by calling tools.\n"
            "Answer questions about customer orders.",
            MessageType.SYSTEM_PROMPT,
        ),
        Message(
            MessageRole.USER,
            "What did Alice Martin order, and is everything paid?",
            MessageType.USER_INPUT,
        ),
    ]
    errors: list[float] = []
    try:
        for k in range(len(ROUNDS) + 1):
            request = ChatRequest(
                run_id="count",
                workflow_name="orders",
                messages=list(messages),
                tools=ORDER_TOOLS,
                allowed=[],
                max_tokens=4,
            )
            counted = await backend.count_tokens(request)
            reply = await backend.complete(request, None)
            actual = reply.usage.prompt_tokens
            errors.append((counted - actual) / actual)
            print(f"{len(messages)} messages: counted {counted}, llama-server {actual}")
            assert abs(counted - actual) <= 0.02 * actual, (counted, actual)
            if k == len(ROUNDS):
                break
            name, args, output = ROUNDS[k]
            info = ToolCallInfo(f"call_{k + 1}", name, args)
            messages.append(
                Message(MessageRole.ASSISTANT, "", MessageType.TOOL_CALL, tool_calls=[info])
            )
            messages.append(
                Message(
                    MessageRole.TOOL,
                    output,
                    MessageType.TOOL_RESULT,
                    tool_call_id=info.call_id,
                    tool_name=name,
                )
            )
    finally:
        await backend.aclose()
    print("token count errors: " + ", ".join(f"{e:+.2%}" for e in errors))
    assert len(errors) == len(ROUNDS) + 1


# --------------------------------------------------------------------------- budget modes


async def n_ctx_train(url: str) -> int:
    async with httpx.AsyncClient(base_url=url, timeout=10.0) as http:
        models = (await http.get("/v1/models")).json()
    return int(models["data"][0]["meta"]["n_ctx_train"])


async def test_budget_modes_external_and_manual(llama_server: ManagedLlamaServer) -> None:
    """Modes that only read /props: no server of their own."""
    n_ctx, slots, _ = parse_props(await read_props(llama_server.url))
    assert (n_ctx, slots) == (4096, 1)  # the fixture's --ctx-size 4096 / 1 slot

    cases: list[tuple[dict[str, Any], int, str]] = [
        ({"budget_mode": "backend"}, 4096, "n_ctx 4096 per slot from /props"),
        ({"budget_mode": "manual", "manual_budget_tokens": 1000}, 1000, "manual"),
        (
            {"budget_mode": "manual", "manual_budget_tokens": 10**6},
            4096,
            "manual 1000000, capped to the n_ctx 4096 per slot from /props",
        ),
        (
            {"budget_mode": "forge-fast", "backend_mode": "external"},
            2048,
            "half the n_ctx 4096 per slot from /props (forge-fast, external server)",
        ),
    ]
    for kwargs, budget, source in cases:
        backend = await LlamaServerBackend.connect(llama_server.url, **kwargs)
        try:
            info = backend.info()
            assert (info.context_budget_tokens, info.budget_source) == (budget, source), kwargs
            assert info.budget_mode == kwargs["budget_mode"]
        finally:
            await backend.aclose()


async def test_budget_modes_of_managed_servers() -> None:
    """backend: --ctx-size / slots; forge-full: the trained context; forge-fast: half."""
    # backend: the configured context, split across the slots.
    server = await start_managed(small_config(ctx_size=2048, slots=2), "backend")
    try:
        backend = await LlamaServerBackend.connect(server.url, backend_mode="managed")
        info = backend.info()
        await backend.aclose()
        assert (info.context_budget_tokens, info.slots) == (1024, 2)
        assert info.budget_source == "n_ctx 1024 per slot from /props"
    finally:
        await server.stop()

    # forge-full: --ctx-size 0, the model's trained context.
    server = await start_managed(small_config(), "forge-full")
    try:
        assert server.config.ctx_size == 0
        full, _, _ = parse_props(await read_props(server.url))
        trained = await n_ctx_train(server.url)
        backend = await LlamaServerBackend.connect(
            server.url, budget_mode="forge-full", backend_mode="managed"
        )
        info = backend.info()
        await backend.aclose()
        assert full == trained == 32768  # Gemma 3 270M
        assert full > LlamaServerConfig.ctx_size  # more than the default 8192
        assert info.context_budget_tokens == full
        assert info.budget_source == f"n_ctx {full} per slot from /props (forge-full)"
    finally:
        await server.stop()

    # forge-fast: restarted with half of the maximum.
    server = await start_managed(small_config(), "forge-fast")
    try:
        assert server.config.ctx_size == full // 2
        fast, _, _ = parse_props(await read_props(server.url))
        backend = await LlamaServerBackend.connect(
            server.url, budget_mode="forge-fast", backend_mode="managed"
        )
        info = backend.info()
        await backend.aclose()
        assert fast == full // 2
        assert info.context_budget_tokens == fast
        assert info.budget_source == f"n_ctx {fast} per slot from /props (forge-fast)"
    finally:
        await server.stop()


# --------------------------------------------------------------------------- supervision


def wait_after_kill(managed: ManagedLlamaServer, old_pid: int, until: str) -> None:
    """In the tool's worker thread: wait until the restarted server is `until`
    ("loading": listening but answering /health with 503; "healthy": 200)."""
    wanted = 503 if until == "loading" else 200
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if managed.pid not in (None, old_pid):
            try:
                if httpx.get(f"{managed.url}/health", timeout=1.0).status_code == wanted:
                    return
            except httpx.TransportError:
                pass
        time.sleep(0.01)
    raise TimeoutError(f"the restarted llama-server never answered /health with {wanted}")


async def run_killing_the_server(until: str = "") -> None:
    """A Forge run (real gRPC server + Python SDK) whose first tool SIGKILLs the
    supervised llama-server; the run must still complete on the restarted one.

    until="" returns from the tool at once, the way a real crash happens; the
    other values first wait for a state of the restart (see wait_after_kill).
    """
    managed = ManagedLlamaServer(small_config(ctx_size=2048))
    await managed.start()
    first_pid = managed.pid
    killed: list[int] = []
    try:
        backend = await LlamaServerBackend.connect(managed.url, backend_mode="managed")
        backend.wait_ready = managed.wait_ready
        wf = ClientWorkflow("machine", "Check the machine, then report its status.")

        @wf.tool(required=True)
        def check_machine(name: str) -> str:
            """Check a machine by name."""
            pid = managed.pid
            if not killed and pid is not None:
                killed.append(pid)
                os.kill(pid, signal.SIGKILL)
                if until:  # (the SDK runs this tool in a worker thread)
                    wait_after_kill(managed, pid, until)
            return "machine ok: temperature 41 C, no alarms"

        @wf.tool(terminal=True)
        def report() -> str:
            """Report that the machine was checked. Ends the task."""
            return "reported"

        try:
            async with running_server(backend) as server, ForgeClient(address(server)) as client:
                result = await client.run(
                    wf, "Check machine M7 and report.", options=ClientRunOptions(max_iterations=6)
                )
        finally:
            await backend.aclose()
        assert killed == [first_pid]
        assert result.terminal_tool == "report"
        await managed.wait_ready(30)
        assert managed.restarts == 1
        assert managed.running and managed.pid != first_pid
    finally:
        await managed.stop()


async def test_run_continues_on_the_restarted_llama_server() -> None:
    """Killed in the first tool; the next model call comes once the supervisor
    has restarted the server: same URL, new process, the run completes."""
    await run_killing_the_server(until="healthy")


async def test_run_survives_a_killed_llama_server() -> None:
    await run_killing_the_server()


def wait_until_refused(port: int) -> None:
    """Block (the event loop too, on purpose) until nothing listens on `port`."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with socket.socket() as s:
            s.settimeout(0.5)
            if s.connect_ex(("127.0.0.1", port)) != 0:
                return
        time.sleep(0.005)
    raise TimeoutError(f"port {port} still accepts connections")


async def test_wait_ready_waits_for_a_server_that_just_died() -> None:
    managed = ManagedLlamaServer(small_config(ctx_size=512))
    await managed.start()
    try:
        assert managed.pid is not None
        os.kill(managed.pid, signal.SIGKILL)
        # The process is gone, and the event loop has not run since the kill:
        # exactly the state a model call finds right after a crash.
        wait_until_refused(managed.port)
        await managed.wait_ready(60)
        async with httpx.AsyncClient(base_url=managed.url, timeout=5.0) as http:
            health = await http.get("/health")
        assert health.status_code == 200
    finally:
        with contextlib.suppress(TimeoutError):
            await managed.wait_ready(60)  # let the restart finish before stopping
        await managed.stop()


async def test_run_survives_a_llama_server_that_is_still_loading() -> None:
    await run_killing_the_server(until="loading")


# --------------------------------------------------------------------------- prompt cache

CACHE_BUDGET = 2600


def cache_table(usage: Usage, compacted_at: set[int]) -> str:
    rows = ["iter  prompt  cache_n  prompt_n  ratio  prompt_ms  compacted"]
    for it in usage.iterations:
        rows.append(
            f"{it.iteration:>4}  {it.prompt_tokens:>6}  {it.cached_prompt_tokens:>7}  "
            f"{it.prompt_tokens - it.cached_prompt_tokens:>8}  {it.cache_hit_ratio:>5.3f}  "
            f"{it.prompt_ms:>9.0f}  {'yes' if it.iteration in compacted_at else ''}"
        )
    return "\n".join(rows)


@dataclass
class CacheRun:
    usage: Usage
    iterations: int
    terminal_tool: str
    compactions: list[tuple[CompactionResult, int]]


@pytest.fixture(scope="module")
async def cache_run(llama_server: ManagedLlamaServer) -> CacheRun:
    """One 10-iteration run with a budget that makes tiered compaction fire,
    against the session server: LlamaServerConfig's cache defaults
    (--swa-full, --cache-reuse 64)."""
    assert llama_server.config.swa_full and llama_server.config.cache_reuse == 64
    backend = await LlamaServerBackend.connect(llama_server.url, backend_mode="managed")
    tools = InspectionTools()
    compactions: list[tuple[CompactionResult, int]] = []

    async def on_compact(result: CompactionResult, iteration: int) -> None:
        compactions.append((result, iteration))

    try:
        result = await run_workflow(
            inspection_workflow(uuid.uuid4().hex[:12]),
            "Inspect the machine and report.",
            backend=NextStepOnly(backend, tools),
            executor=tools,
            options=RunOptions(context_budget_tokens=CACHE_BUDGET, max_iterations=14),
            on_compact=on_compact,
        )
        run = CacheRun(result.usage, result.iterations, result.terminal_tool, compactions)
    except ForgeError as exc:
        assert exc.usage is not None
        run = CacheRun(exc.usage, exc.iterations, "", compactions)
    finally:
        await backend.aclose()
    compacted_at = {it for _, it in compactions}
    print(cache_table(run.usage, compacted_at))
    print(
        f"run cache-hit ratio {run.usage.cache_hit_ratio:.3f} over {run.iterations} iterations; "
        f"compactions at {sorted(compacted_at)}: "
        + ", ".join(f"phase {r.phase} {r.tokens_before}->{r.tokens_after}" for r, _ in compactions)
    )
    return run


async def test_ten_iterations_with_tiered_compaction_on_llama_server(cache_run: CacheRun) -> None:
    assert cache_run.compactions, "the budget is meant to make tiered compaction fire"
    for result, iteration in cache_run.compactions:
        assert result.strategy == "tiered"
        assert result.tokens_after <= CACHE_BUDGET * LOW_WATER
        assert 1 <= iteration <= cache_run.iterations
    assert cache_run.iterations >= 10
    assert cache_run.terminal_tool == "finish"
    usage = cache_run.usage
    assert [it.iteration for it in usage.iterations] == list(range(1, cache_run.iterations + 1))
    assert all(it.prompt_tokens <= CACHE_BUDGET for it in usage.iterations)
    # Iterations that only appended reuse everything before the new round.
    compacted_at = {it for _, it in cache_run.compactions}
    for it in usage.iterations[1:]:
        if it.iteration not in compacted_at:
            assert it.prompt_tokens - it.cached_prompt_tokens < 400, it


# Measured with this workflow; its prompts are deterministic, and so are the
# cache hits (0.653 and 0.654 in repeated runs).
MEASURED_RATIO = 0.771


@pytest.mark.xfail(
    strict=True,
    reason=f"measured cache-hit ratio {MEASURED_RATIO:.3f} < 0.90 (was 0.654 before compaction "
    "became deletion-only). The compacting iterations now re-evaluate 357 of 1440 and 398 of "
    "1440 prompt tokens (was 1058 and 1162), but this workflow's ceiling without any "
    "compaction is 0.826: the first iteration is cold (267 tokens) and each iteration adds "
    "~250 new tokens to a ~1500-token prompt. See bench/compaction_cache.py",
)
async def test_prompt_cache_hit_ratio_across_compaction(cache_run: CacheRun) -> None:
    usage = cache_run.usage
    assert usage.cache_hit_ratio >= 0.90, (
        f"cache-hit ratio {usage.cache_hit_ratio:.3f}; per iteration "
        + ", ".join(f"{it.cache_hit_ratio:.2f}" for it in usage.iterations)
    )
