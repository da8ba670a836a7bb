"""Running scenarios through a Forge server with the Python SDK."""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from forge_client import (
    Compacted,
    ConnectionLostError,
    Event,
    ForgeClient,
    Message,
    MessageType,
    RequestRejectedError,
    RunFailedError,
    ToolCallFinished,
    ToolCallStarted,
    Usage,
)
from forge_evals.ablation import Ablation
from forge_evals.metrics import RunRecord
from forge_evals.scenario import Scenario
from forge_evals.targets import Target

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class EvalSettings:
    """What, besides scenario and ablation, decides a run's outcome."""

    temperature: float | None = None
    max_tokens: int | None = None
    # A run still going after this long is stopped and recorded as TIMEOUT.
    run_timeout_s: float = 600.0
    # Stop the eval after this many infrastructure failures in a row (server
    # gone, backend down): they say nothing about the model, and a resume
    # can pick up where the eval stopped.
    max_infra_failures: int = 3


@dataclass(frozen=True)
class PlannedRun:
    scenario: Scenario
    ablation: Ablation
    run_index: int


def config_id(target: dict[str, Any], settings: EvalSettings) -> str:
    """Identifies the model set-up a record belongs to, for resume and reports."""
    parts = [
        str(target.get("backend", "")),
        str(target.get("model", "")),
        str(target.get("tool_call_mode", "")),
    ]
    if settings.temperature is not None:
        parts.append(f"t={settings.temperature:g}")
    if settings.max_tokens is not None:
        parts.append(f"max_tokens={settings.max_tokens}")
    return "/".join(p for p in parts if p)


def plan(
    scenarios: Sequence[Scenario],
    ablations: Sequence[Ablation],
    runs: int,
    cfg_id: str,
    done: set[tuple[str, str, str, int]],
) -> list[PlannedRun]:
    """The runs still missing: ablation by ablation, scenario by scenario."""
    return [
        PlannedRun(s, a, i)
        for a in ablations
        for s in scenarios
        for i in range(runs)
        if (cfg_id, s.name, a.name, i) not in done
    ]


# Per record: the executed calls (and tool errors), bounded.
TRACE_CHARS = 160
TRACE_ENTRIES = 40

# Failure reasons that say the server or backend broke, not the model.
INFRA_REASONS = frozenset({"BACKEND", "INTERNAL"})


class InfrastructureError(RuntimeError):
    """The server or backend failed repeatedly; the eval stopped (resume later)."""


@dataclass
class _Observed:
    tool_calls: list[ToolCallStarted] = field(default_factory=list)
    tool_errors: int = 0
    compactions: list[Compacted] = field(default_factory=list)
    trace: list[str] = field(default_factory=list)


async def run_one(
    client: ForgeClient,
    planned: PlannedRun,
    *,
    cfg_id: str,
    config: dict[str, Any],
    settings: EvalSettings,
) -> RunRecord:
    """One run through the server; every outcome, failures included, is a record."""
    scenario, ablation = planned.scenario, planned.ablation
    options = ablation.run_options(
        max_iterations=scenario.max_iterations,
        temperature=settings.temperature,
        max_tokens=settings.max_tokens,
        context_budget_tokens=scenario.budget_tokens,
    )
    seen = _Observed()

    def on_event(event: Event) -> None:
        if isinstance(event, ToolCallStarted):
            seen.tool_calls.append(event)
            args = json.dumps(event.arguments, ensure_ascii=False, separators=(",", ":"))
            seen.trace.append(f"{event.tool_name}({args})"[:TRACE_CHARS])
        elif isinstance(event, ToolCallFinished) and event.error is not None:
            seen.tool_errors += 1
            seen.trace.append(f"  ! {event.error}"[:TRACE_CHARS])
        elif isinstance(event, Compacted):
            seen.compactions.append(event)

    record = RunRecord(
        config_id=cfg_id,
        scenario=scenario.name,
        ablation=ablation.name,
        run_index=planned.run_index,
        completed=False,
        correct=False,
        iterations=0,
        ideal_iterations=scenario.ideal_iterations,
        budget_tokens=scenario.budget_tokens or config.get("context_budget_tokens"),
        tags=list(scenario.tags),
        config=config,
        timestamp=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    )
    transcript: list[Message] = []
    usage: Usage | None = None
    start = time.perf_counter()
    try:
        result = await asyncio.wait_for(
            client.run(scenario.build(), scenario.user_message, options=options, on_event=on_event),
            settings.run_timeout_s,
        )
    except TimeoutError:
        record.failure_reason = "TIMEOUT"
        record.error = f"no result within {settings.run_timeout_s:.0f}s"
    except RunFailedError as exc:
        record.failure_reason = exc.reason
        record.error = exc.message[:500]
        record.iterations = exc.iterations
        transcript, usage = exc.transcript, exc.usage
    else:
        record.completed = True
        record.iterations = result.iterations
        record.terminal_tool = result.terminal_tool
        record.terminal_args = _terminal_args(seen.tool_calls, result.terminal_tool)
        record.correct = scenario.check(record.terminal_tool, record.terminal_args) and not any(
            call.tool_name in scenario.forbidden_tools for call in seen.tool_calls
        )
        transcript, usage = result.transcript, result.usage
    record.elapsed_s = round(time.perf_counter() - start, 4)
    record.tool_calls = len(seen.tool_calls)
    record.tool_errors = seen.tool_errors
    record.trace = seen.trace[:TRACE_ENTRIES]
    record.compactions = len(seen.compactions)
    record.max_compaction_phase = max((c.phase for c in seen.compactions), default=0)
    counts = _message_counts(transcript)
    record.retry_nudges = counts.get(MessageType.RETRY_NUDGE, 0)
    record.step_nudges = counts.get(MessageType.STEP_NUDGE, 0)
    record.prerequisite_nudges = counts.get(MessageType.PREREQUISITE_NUDGE, 0)
    if usage is not None:
        record.model_calls = usage.model_calls
        record.prompt_tokens = usage.prompt_tokens
        record.completion_tokens = usage.completion_tokens
        record.model_ms = round(usage.prompt_ms + usage.generation_ms, 2)
    return record


def _terminal_args(started: list[ToolCallStarted], terminal_tool: str) -> dict[str, Any]:
    for event in reversed(started):
        if event.tool_name == terminal_tool:
            return dict(event.arguments)
    return {}


def _message_counts(transcript: list[Message]) -> dict[int, int]:
    """Corrections per message type. A blocked batch gets one nudge message per
    call it held; those count once (one correction per iteration and type)."""
    seen: set[tuple[int, int]] = set()
    for position, message in enumerate(transcript):
        iteration = message.step_index if message.step_index is not None else -1 - position
        seen.add((message.type, iteration))
    counts: dict[int, int] = {}
    for kind, _ in seen:
        counts[kind] = counts.get(kind, 0) + 1
    return counts


class RecordSink(Protocol):
    def append(self, record: RunRecord) -> None: ...


ProgressHook = Callable[[PlannedRun, RunRecord | None], None]


async def run_eval(
    target: Target,
    planned: Sequence[PlannedRun],
    writer: RecordSink,
    *,
    settings: EvalSettings,
    cfg_id: str,
    on_progress: ProgressHook | None = None,
) -> list[RunRecord]:
    """Run `planned` one after another, appending each record as it finishes."""
    config = {**target.describe(), **_settings_dict(settings)}
    clients: dict[str, ForgeClient] = {}
    records: list[RunRecord] = []
    infra_failures = 0
    try:
        for item in planned:
            if on_progress is not None:
                on_progress(item, None)
            address = await target.address()
            client = clients.get(address)
            if client is None:
                client = clients[address] = ForgeClient(address)
            try:
                record = await run_one(
                    client,
                    item,
                    cfg_id=cfg_id,
                    config=config,
                    settings=settings,
                )
            except (ConnectionLostError, RequestRejectedError) as exc:
                infra_failures += 1
                log.error("%s/%s: %s", item.scenario.name, item.ablation.name, exc)
                if infra_failures >= settings.max_infra_failures:
                    raise InfrastructureError(
                        f"{infra_failures} runs in a row could not reach the server: {exc}"
                    ) from exc
                continue
            if record.failure_reason in INFRA_REASONS:
                infra_failures += 1
                if infra_failures >= settings.max_infra_failures:
                    writer.append(record)
                    raise InfrastructureError(
                        f"{infra_failures} runs in a row failed in the backend/server: "
                        f"{record.error}"
                    )
            else:
                infra_failures = 0
            writer.append(record)
            records.append(record)
            if on_progress is not None:
                on_progress(item, record)
    finally:
        for client in clients.values():
            await client.close()
    return records


def _settings_dict(settings: EvalSettings) -> dict[str, Any]:
    return {
        "temperature": settings.temperature,
        "max_tokens": settings.max_tokens,
        "run_timeout_s": settings.run_timeout_s,
    }


def scenario_fingerprint(scenarios: Sequence[Scenario]) -> str:
    """Short hash of the selected scenarios' definitions, for the report header."""
    blob = json.dumps(
        [(s.name, s.user_message, s.ideal_iterations, s.budget_tokens) for s in scenarios]
    )
    return hashlib.sha256(blob.encode()).hexdigest()[:10]
