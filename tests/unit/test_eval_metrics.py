"""Run records and their aggregates, measured through the real server with
scripted models that go wrong in known ways."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge_core.backends.base import ChatRequest
from forge_core.backends.scripted import Responder, ScriptedBackend, Turn, call, text
from forge_evals.ablation import GUARDRAILS, PRESETS
from forge_evals.metrics import RunRecord, aggregate, summarize
from forge_evals.results import ResultsWriter
from forge_evals.runner import EvalSettings, PlannedRun, plan, run_eval
from forge_evals.scenarios import BY_NAME
from forge_evals.targets import in_process

WEATHER = BY_NAME["basic_2step"]


def record(**kw: object) -> RunRecord:
    base: dict[str, object] = {
        "config_id": "c",
        "scenario": "s",
        "ablation": "all-on",
        "run_index": 0,
        "completed": True,
        "correct": True,
        "iterations": 2,
        "ideal_iterations": 2,
    }
    base.update(kw)
    return RunRecord(**base)  # type: ignore[arg-type]


def test_aggregate_definitions() -> None:
    runs = [
        record(run_index=0, iterations=2, elapsed_s=1.0),
        record(run_index=1, iterations=4, correct=False, elapsed_s=3.0),
        record(
            run_index=2,
            completed=False,
            correct=False,
            iterations=1,
            failure_reason="TOOL_CALL",
            elapsed_s=2.0,
        ),
        record(
            run_index=3,
            completed=False,
            correct=False,
            iterations=10,
            failure_reason="TOOL_CALL",
            elapsed_s=2.0,
        ),
    ]
    (m,) = aggregate(runs)
    assert (m.runs, m.completed, m.correct) == (4, 2, 1)
    assert m.score == 0.25
    assert m.completeness == 0.5
    assert m.accuracy == 0.5
    # Efficiency and wasted calls only over completed runs: (2/2 + 2/4) / 2.
    assert m.efficiency == pytest.approx(0.75)
    assert m.wasted_calls == pytest.approx(1.0)
    assert m.speed_s == pytest.approx(2.0)
    assert m.failures == {"TOOL_CALL": 2}
    assert m.label == "1/4"


def test_aggregate_with_nothing_completed_has_no_accuracy() -> None:
    (m,) = aggregate([record(completed=False, correct=False, failure_reason="TIMEOUT")])
    assert m.accuracy is None and m.efficiency is None and m.wasted_calls is None
    assert m.score == 0.0


def test_efficiency_is_capped_and_wasted_never_negative() -> None:
    r = record(iterations=1, ideal_iterations=3)
    assert r.efficiency == 1.0 and r.wasted_calls == 0


def test_summary_weighs_every_run_equally_per_ablation() -> None:
    runs = [
        record(scenario="a", correct=True),
        record(scenario="b", run_index=0, correct=False),
        record(scenario="b", run_index=1, correct=False),
        record(scenario="a", ablation="bare", correct=False, completed=False),
    ]
    by = {s.ablation: s for s in summarize(runs)}
    assert by["all-on"].score == pytest.approx(1 / 3)
    assert by["all-on"].scenarios == 2
    assert by["bare"].completeness == 0.0 and by["bare"].accuracy is None


def test_record_round_trips_through_json() -> None:
    r = record(terminal_args={"city": "Oslo"}, tags=["plumbing"], budget_tokens=None)
    import json

    assert RunRecord.from_dict(json.loads(r.to_json())) == r
    # Unknown keys (a newer harness) are ignored.
    assert RunRecord.from_dict({**json.loads(r.to_json()), "new_field": 1}) == r


def test_presets() -> None:
    assert set(PRESETS) == {
        "all-on",
        "no-constrained",
        "no-rescue",
        "no-nudges",
        "no-steps",
        "no-recovery",
        "no-compaction",
        "no-loop-breaking",
        "no-parameter-docs",
        "no-grounding",
        "no-relevance",
        "no-destructive-policy",
        "no-result-binding",
        "no-number-bounds",
        "bare",
    }
    assert all(PRESETS["all-on"].switches().values())
    assert not any(PRESETS["bare"].switches().values())
    assert set(PRESETS["bare"].switches()) == set(GUARDRAILS)
    opts = PRESETS["no-constrained"].run_options(max_iterations=7, context_budget_tokens=900)
    assert not opts.constrained_decoding and opts.rescue and opts.compaction
    assert opts.max_iterations == 7 and opts.context_budget_tokens == 900
    proto = PRESETS["bare"].run_options(max_iterations=3).to_proto()
    assert proto.guardrails.disable_constrained_decoding and proto.guardrails.disable_repeat_guard
    assert proto.guardrails.disable_loop_breaking and proto.guardrails.disable_parameter_docs
    docs_off = PRESETS["no-parameter-docs"].run_options(max_iterations=3).to_proto()
    assert docs_off.guardrails.disable_parameter_docs
    binding_off = PRESETS["no-result-binding"].run_options(max_iterations=3).to_proto()
    assert binding_off.guardrails.disable_result_binding
    assert not binding_off.guardrails.disable_number_bounds
    bounds_off = PRESETS["no-number-bounds"].run_options(max_iterations=3).to_proto()
    assert bounds_off.guardrails.disable_number_bounds
    assert not docs_off.guardrails.disable_loop_breaking


async def measure(responder: Responder, ablation: str = "all-on") -> RunRecord:
    backend = ScriptedBackend(responder=responder)
    async with in_process(backend) as target:
        (rec,) = await run_eval(
            target,
            [PlannedRun(WEATHER, PRESETS[ablation], 0)],
            _NullWriter(),
            settings=EvalSettings(),
            cfg_id="scripted",
        )
    return rec


class _NullWriter:
    def __init__(self) -> None:
        self.records: list[RunRecord] = []

    def append(self, record: RunRecord) -> None:
        self.records.append(record)


def script(*turns: Turn) -> Responder:
    def respond(request: ChatRequest, index: int) -> Turn:
        return turns[min(index, len(turns) - 1)]

    return respond


async def test_premature_terminal_call_is_a_step_nudge_and_a_wasted_call() -> None:
    rec = await measure(
        script(
            call("report_weather", city="Oslo", weather="sunny"),
            call("get_weather", city="Oslo"),
            call("report_weather", city="Oslo", weather="light snow, -3 C"),
        )
    )
    assert rec.completed and rec.correct
    assert rec.iterations == 3 and rec.wasted_calls == 1
    assert rec.step_nudges == 1 and rec.retry_nudges == 0
    # The blocked call never reached the client.
    assert rec.tool_calls == 2
    assert rec.terminal_args == {"city": "Oslo", "weather": "light snow, -3 C"}
    assert rec.model_calls == 3


async def test_completed_with_wrong_arguments_is_not_correct() -> None:
    rec = await measure(
        script(call("get_weather", city="Oslo"), call("report_weather", city="Oslo", weather="hot"))
    )
    assert rec.completed and not rec.correct
    assert rec.terminal_tool == "report_weather" and rec.failure_reason == ""


async def test_text_answers_fail_with_the_reason_and_the_retry_count() -> None:
    rec = await measure(script(text("It is snowing in Oslo.")))
    assert not rec.completed and not rec.correct
    assert rec.failure_reason == "TOOL_CALL"
    # max_retries (3) corrections, then the 4th text answer fails the run
    # (its nudge is in the transcript too, though the model never saw it).
    assert rec.retry_nudges == 4 and rec.iterations == 4
    assert rec.error


async def test_without_nudges_the_first_text_answer_fails() -> None:
    rec = await measure(script(text("It is snowing in Oslo.")), ablation="no-nudges")
    assert rec.failure_reason == "TOOL_CALL" and rec.iterations == 1 and rec.retry_nudges == 1


async def test_a_run_past_its_timeout_is_recorded_as_timeout(tmp_path: Path) -> None:
    slow = ScriptedBackend(responder=script(Turn(call("get_weather", city="x").response, 5.0)))
    writer = ResultsWriter(tmp_path / "r.jsonl")
    async with in_process(slow) as target:
        (rec,) = await run_eval(
            target,
            plan([WEATHER], [PRESETS["all-on"]], 1, "slow", set()),
            writer,
            settings=EvalSettings(run_timeout_s=0.2),
            cfg_id="slow",
        )
    assert rec.failure_reason == "TIMEOUT" and not rec.completed
    assert 0.2 <= rec.elapsed_s < 2.0
