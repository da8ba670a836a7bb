"""Context management against the real llama-server + Gemma 3 270M.

- token counting: LlamaServerBackend.count_tokens against the prompt size
  llama-server itself reports;
- budget resolution per --budget-mode (start_managed + connect);
- supervision: the llama-server process dies mid-run and the run still ends;
- prompt cache: the KV-cache hit ratio of 10-iteration runs that compact, and
  the saved workflow prefix a second run starts from.

Servers of their own (budget modes, supervision) are small, single-slot and
always stopped; everything else uses the session `llama_server` fixture.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import tempfile
import time
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx
import pytest

from bench.workloads import TRIAGE, NextStepOnly, ScriptedTools  # the benchmark's workflow
from forge_client import ForgeClient
from forge_client import RunOptions as ClientRunOptions
from forge_client import Workflow as ClientWorkflow
from forge_core.backends.base import (
    ChatRequest,
    Usage,
)
from forge_core.backends.llama import server as llama_server_module
from forge_core.backends.llama.props import parse_props, read_props
from forge_core.backends.llama.server import LlamaServerBackend
from forge_core.context import LOW_WATER, CompactionResult
from forge_core.errors import ForgeError
from forge_core.hooks import RunHooks
from forge_core.llama_host.failures import LlamaStartupError
from forge_core.llama_host.install import bundled_binary, bundled_model
from forge_core.llama_host.process import LlamaServerConfig, ManagedLlamaServer, start_managed
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


@pytest.mark.parametrize("exact", [True, False], ids=["exact", "estimated"])
async def test_count_tokens_matches_the_servers_prompt_size(
    llama_server: ManagedLlamaServer, exact: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Near the budget (exact) every message is tokenized by llama-server:
    within 2% of its prompt size. Far from it (estimated) no message is:
    no /tokenize request after the first count, and within 25% once the
    server's count of the first prompt has scaled the estimates."""
    if exact:
        monkeypatch.setattr(llama_server_module, "EXACT_COUNT_FROM", 0.0)
    backend = await LlamaServerBackend.connect(llama_server.url, backend_mode="managed")
    tokenized: list[str] = []

    async def seen(request: httpx.Request) -> None:
        if request.url.path == "/tokenize":
            tokenized.append(request.url.path)

    backend._http.event_hooks["request"].append(seen)
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
            before = len(tokenized)
            counted = await backend.count_tokens(request)
            reply = await backend.complete(request, None)
            actual = reply.usage.prompt_tokens
            errors.append((counted - actual) / actual)
            print(f"{len(messages)} messages: counted {counted}, llama-server {actual}")
            if exact:
                assert abs(counted - actual) <= 0.02 * actual, (counted, actual)
            elif k > 0:
                assert len(tokenized) == before, "a /tokenize request on the hot path"
                assert abs(counted - actual) <= 0.25 * actual, (counted, actual)
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
        managed.attach(backend)
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
    budget: int


async def run_triage(backend: LlamaServerBackend, session: str, case: int) -> CacheRun:
    tools = ScriptedTools(TRIAGE, case)
    compactions: list[tuple[CompactionResult, int]] = []

    async def on_compact(result: CompactionResult, iteration: int) -> None:
        compactions.append((result, iteration))

    try:
        result = await run_workflow(
            TRIAGE.build(session),
            TRIAGE.user_message(case),
            backend=NextStepOnly(backend, tools),
            executor=tools,
            options=RunOptions(context_budget_tokens=TRIAGE.budget, max_iterations=14),
            hooks=RunHooks(on_compact=on_compact),
        )
        run = CacheRun(
            result.usage, result.iterations, result.terminal_tool, compactions, TRIAGE.budget
        )
    except ForgeError as exc:
        assert exc.usage is not None
        run = CacheRun(exc.usage, exc.iterations, "", compactions, TRIAGE.budget)
    compacted_at = {it for _, it in compactions}
    print(cache_table(run.usage, compacted_at))
    print(
        f"case {case}: cache-hit ratio {run.usage.cache_hit_ratio:.3f} over {run.iterations} "
        f"iterations; compactions at {sorted(compacted_at)}: "
        + ", ".join(f"phase {r.phase} {r.tokens_before}->{r.tokens_after}" for r, _ in compactions)
    )
    return run


@pytest.fixture(scope="session")
async def cache_runs(llama_server: ManagedLlamaServer) -> tuple[CacheRun, CacheRun]:
    """Two 10-iteration runs of the triage workflow (bench/workloads.py) about
    different customers, with a budget that makes tiered compaction fire,
    against the session server: LlamaServerConfig's cache defaults (--swa-full,
    --cache-reuse 64, a --slot-save-path) and prefix snapshots on. The second
    run is what a sidecar serving a workflow does all day."""
    config = llama_server.config
    assert config.swa_full and config.cache_reuse == 64 and llama_server.slot_dir is not None
    backend = await LlamaServerBackend.connect(llama_server.url, backend_mode="managed")
    llama_server.attach(backend)
    session = uuid.uuid4().hex[:12]
    try:
        first = await run_triage(backend, session, case=0)
        second = await run_triage(backend, session, case=1)
        assert backend.snapshots is not None
        assert (backend.snapshots.saves, backend.snapshots.restores) == (1, 1)
    finally:
        await backend.aclose()
    return first, second


async def test_ten_iterations_with_tiered_compaction_on_llama_server(
    cache_runs: tuple[CacheRun, CacheRun],
) -> None:
    for run in cache_runs:
        assert run.compactions, "the budget is meant to make tiered compaction fire"
        for result, iteration in run.compactions:
            assert result.strategy == "tiered"
            assert result.tokens_after <= run.budget * LOW_WATER
            assert 1 <= iteration <= run.iterations
        assert run.iterations >= 10
        assert run.terminal_tool == "resolve"
        usage = run.usage
        assert [it.iteration for it in usage.iterations] == list(range(1, run.iterations + 1))
        assert all(it.prompt_tokens <= run.budget for it in usage.iterations)
        # Iterations that only appended reuse everything before the new round.
        compacted_at = {it for _, it in run.compactions}
        for it in usage.iterations[1:]:
            if it.iteration not in compacted_at:
                assert it.prompt_tokens - it.cached_prompt_tokens < 150, it


async def test_second_run_of_a_workflow_starts_from_its_saved_prefix(
    cache_runs: tuple[CacheRun, CacheRun],
) -> None:
    first, second = (run.usage.iterations[0] for run in cache_runs)
    # Cold: nothing of this workflow was on the server yet.
    assert first.cached_prompt_tokens < 0.1 * first.prompt_tokens, first
    # The previous run left a compacted conversation on the slot; the restored
    # snapshot serves everything up to the user message, which differs.
    assert second.cached_prompt_tokens >= 0.9 * second.prompt_tokens, second


async def test_prompt_cache_hit_ratio_across_compaction(
    cache_runs: tuple[CacheRun, CacheRun],
) -> None:
    """The issue's goal: >= 90% of prompt tokens served from cache over a
    10-iteration run that compacts, on the 270M model. Measured for the
    second run of the workflow; the first run of a workflow evaluates its
    ~880-token prefix once (0.87 measured), see bench/RESULTS.md."""
    usage = cache_runs[1].usage
    assert usage.cache_hit_ratio >= 0.90, (
        f"cache-hit ratio {usage.cache_hit_ratio:.3f}; per iteration "
        + ", ".join(f"{it.cache_hit_ratio:.2f}" for it in usage.iterations)
    )


# --------------------------------------------------------------------------- prefix snapshots


def order_request(
    run_id: str,
    question: str,
    system: str = "You are an agent that answers questions about customer orders.",
) -> ChatRequest:
    return ChatRequest(
        run_id=run_id,
        workflow_name="orders",
        messages=[
            Message(MessageRole.SYSTEM, system, MessageType.SYSTEM_PROMPT),
            Message(MessageRole.USER, question, MessageType.USER_INPUT),
        ],
        tools=ORDER_TOOLS,
        allowed=[],
        max_tokens=4,
    )


async def test_snapshot_is_not_restored_over_a_live_run() -> None:
    """One slot: a new run of the workflow never restores the saved prefix
    over a live run's conversation; while the slot's cache starts with the
    workflow's prefix it needs no restore at all, and once another workflow
    has used the slot it restores the snapshot."""
    managed = ManagedLlamaServer(small_config(ctx_size=2048))
    await managed.start()
    backend = await LlamaServerBackend.connect(managed.url, backend_mode="managed")
    managed.attach(backend)
    snapshots = backend.snapshots
    assert snapshots is not None and managed.slot_dir is not None
    assert backend.reuses_prefixes  # --swa-full
    try:
        await backend.complete(order_request("a", "What did Alice order?"), None)
        assert snapshots.saves == 1 and len(snapshot_files(managed)) == 1
        # Run "a" is still going (not forgotten): "b" must not wipe its slot.
        await backend.complete(order_request("b", "What did Bob order?"), None)
        assert snapshots.restores == 0 and snapshots.saves == 1
        backend.forget_run("a")
        backend.forget_run("b")
        # The slot still starts with the workflow's prefix ("b" only
        # appended): llama-server serves it from there, no restore.
        reply = await backend.complete(order_request("c", "Did Carol pay?"), None)
        assert (snapshots.restores, snapshots.reused) == (0, 2)
        usage = reply.usage
        assert usage.cached_prompt_tokens >= 0.7 * usage.prompt_tokens, usage
        backend.forget_run("c")
        # Another workflow's run takes the slot; the next orders run restores.
        await backend.complete(
            order_request("x", "Any refunds?", system="You audit refunds."), None
        )
        backend.forget_run("x")
        reply = await backend.complete(order_request("e", "Did Erin pay?"), None)
        assert (snapshots.restores, snapshots.reused) == (1, 2)
        usage = reply.usage
        assert usage.cached_prompt_tokens >= 0.7 * usage.prompt_tokens, usage
        backend.forget_run("e")
        # Past the byte budget the older workflows' files go.
        files = sorted(snapshot_files(managed))
        assert snapshots.saves == 2 and len(files) == 2
        assert snapshots.stored_bytes == sum(f.stat().st_size for f in files)
        snapshots.limit_bytes = max(f.stat().st_size for f in files) + 1
        other = order_request("d", "Any returns?", system="You handle returns.")
        await backend.complete(other, None)
        assert snapshots.saves == 3
        left = snapshot_files(managed)
        assert len(left) == 1 and left[0] not in files
    finally:
        await backend.aclose()
        await managed.stop()
    assert not managed.slot_dir or not managed.slot_dir.exists()


def snapshot_files(managed: ManagedLlamaServer) -> list[Path]:
    """The prefix snapshots in the slot directory (it also holds the owner
    record of llama_host/orphans.py)."""
    assert managed.slot_dir is not None
    return list(managed.slot_dir.glob("forge-prefix-*.bin"))


async def test_snapshots_switch_off_on_a_server_without_slot_save_path() -> None:
    """An external server started without --slot-save-path: the first save is
    refused, snapshots turn off, and the model calls are unaffected."""
    managed = ManagedLlamaServer(small_config(prefix_snapshots=False))
    await managed.start()
    backend = await LlamaServerBackend.connect(managed.url, backend_mode="external")
    backend.enable_prefix_snapshots()
    snapshots = backend.snapshots
    assert snapshots is not None
    try:
        assert "--slot-save-path" not in managed.config.argv(managed.port)
        for run_id in ("a", "b"):
            reply = await backend.complete(order_request(run_id, "What did Alice order?"), None)
            assert reply.usage.prompt_tokens > 0
            backend.forget_run(run_id)
        assert not snapshots.enabled
        assert (snapshots.saves, snapshots.restores) == (0, 0)
    finally:
        await backend.aclose()
        await managed.stop()


async def test_a_server_that_cannot_start_leaves_no_slot_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    created: list[Path] = []
    mkdtemp = tempfile.mkdtemp

    def recording_mkdtemp(prefix: str | None = None) -> str:
        path = mkdtemp(prefix=prefix, dir=tmp_path)
        created.append(Path(path))
        return path

    monkeypatch.setattr(tempfile, "mkdtemp", recording_mkdtemp)
    broken = tmp_path / "not-a-model.gguf"
    broken.write_bytes(b"this is not a GGUF file")
    config = replace(small_config(startup_timeout_s=60.0), model_path=broken)
    managed = ManagedLlamaServer(config)
    with pytest.raises(LlamaStartupError, match="could not load the model"):
        await managed.start()
    assert len(created) == 1 and managed.slot_dir is None
    assert not created[0].exists()
