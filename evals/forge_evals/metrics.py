"""What one run records, and the per-scenario aggregates a report shows.

Definitions (per scenario and ablation, over N runs):

- score: runs whose terminal tool was called and passed `validate`, / N
- completeness: runs that reached a terminal tool, / N
- accuracy: correct / completed (None when nothing completed)
- efficiency: mean of min(1, ideal_iterations / iterations) over completed runs
- wasted calls: mean of max(0, iterations - ideal_iterations) over completed
  runs; every iteration is one model call, so these are the model calls
  (answered with a tool call, a retry or a correction) beyond the ideal path
- speed: mean wall seconds per run (all runs)
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, fields
from statistics import mean
from typing import Any


@dataclass
class RunRecord:
    """One run of one scenario under one ablation: a JSONL line."""

    config_id: str
    scenario: str
    ablation: str
    run_index: int
    completed: bool
    correct: bool
    iterations: int
    ideal_iterations: int
    terminal_tool: str = ""
    terminal_args: dict[str, Any] = field(default_factory=dict)
    # Tool calls the client executed (blocked calls never reach it).
    tool_calls: int = 0
    tool_errors: int = 0
    # Corrections the run added to the conversation, one per iteration and
    # kind (a failing run's last one included, which the model never saw).
    retry_nudges: int = 0
    step_nudges: int = 0
    prerequisite_nudges: int = 0
    # Compaction events the server reported, and the deepest phase reached.
    compactions: int = 0
    max_compaction_phase: int = 0
    # FailureReason name (TOOL_CALL, STEP_ENFORCEMENT, ...) or TIMEOUT.
    failure_reason: str = ""
    error: str = ""
    elapsed_s: float = 0.0
    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # Model time as the backend measured it (llama-server timings).
    model_ms: float = 0.0
    budget_tokens: int | None = None
    # The calls the client executed, in order, with tool errors ("  ! ...").
    trace: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    config: dict[str, Any] = field(default_factory=dict)
    timestamp: str = ""

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.config_id, self.scenario, self.ablation, self.run_index)

    @property
    def wasted_calls(self) -> int:
        return max(0, self.iterations - self.ideal_iterations)

    @property
    def efficiency(self) -> float:
        return min(1.0, self.ideal_iterations / self.iterations) if self.iterations else 0.0

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RunRecord:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass(frozen=True)
class ScenarioMetrics:
    config_id: str
    scenario: str
    ablation: str
    runs: int
    completed: int
    correct: int
    score: float
    completeness: float
    accuracy: float | None
    efficiency: float | None
    wasted_calls: float | None
    speed_s: float
    model_s: float
    # Runs in which the server compacted the model's context.
    compacted: int
    failures: dict[str, int]

    @property
    def label(self) -> str:
        return f"{self.correct}/{self.runs}"


def aggregate(records: Iterable[RunRecord]) -> list[ScenarioMetrics]:
    """One ScenarioMetrics per (config, scenario, ablation), in first-seen order."""
    groups: dict[tuple[str, str, str], list[RunRecord]] = {}
    for r in records:
        groups.setdefault((r.config_id, r.scenario, r.ablation), []).append(r)
    return [scenario_metrics(key, runs) for key, runs in groups.items()]


def scenario_metrics(key: tuple[str, str, str], runs: list[RunRecord]) -> ScenarioMetrics:
    done = [r for r in runs if r.completed]
    correct = sum(r.correct for r in runs)
    return ScenarioMetrics(
        config_id=key[0],
        scenario=key[1],
        ablation=key[2],
        runs=len(runs),
        completed=len(done),
        correct=correct,
        score=correct / len(runs),
        completeness=len(done) / len(runs),
        accuracy=correct / len(done) if done else None,
        efficiency=mean(r.efficiency for r in done) if done else None,
        wasted_calls=mean(r.wasted_calls for r in done) if done else None,
        speed_s=mean(r.elapsed_s for r in runs),
        model_s=mean(r.model_ms for r in runs) / 1000.0,
        compacted=sum(r.compactions > 0 for r in runs),
        failures=dict(Counter(r.failure_reason for r in runs if r.failure_reason)),
    )


@dataclass(frozen=True)
class AblationSummary:
    """All scenarios of one ablation together (every run weighs the same)."""

    config_id: str
    ablation: str
    scenarios: int
    runs: int
    correct: int
    completed: int
    score: float
    completeness: float
    accuracy: float | None
    efficiency: float | None
    wasted_calls: float | None
    speed_s: float


def summarize(records: Iterable[RunRecord]) -> list[AblationSummary]:
    groups: dict[tuple[str, str], list[RunRecord]] = {}
    for r in records:
        groups.setdefault((r.config_id, r.ablation), []).append(r)
    out = []
    for (config_id, ablation), runs in groups.items():
        done = [r for r in runs if r.completed]
        correct = sum(r.correct for r in runs)
        out.append(
            AblationSummary(
                config_id=config_id,
                ablation=ablation,
                scenarios=len({r.scenario for r in runs}),
                runs=len(runs),
                correct=correct,
                completed=len(done),
                score=correct / len(runs),
                completeness=len(done) / len(runs),
                accuracy=correct / len(done) if done else None,
                efficiency=mean(r.efficiency for r in done) if done else None,
                wasted_calls=mean(r.wasted_calls for r in done) if done else None,
                speed_s=mean(r.elapsed_s for r in runs),
            )
        )
    return out
