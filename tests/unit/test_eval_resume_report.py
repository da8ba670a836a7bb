"""JSONL append + resume, and the reports (terminal, Markdown, PNG), through
the forge-eval CLI with the oracle backend and on hand-made records."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console

from forge_evals import cli, results
from forge_evals.ablation import PRESETS
from forge_evals.metrics import RunRecord
from forge_evals.report import Report, chart, markdown, print_report, write_reports
from forge_evals.runner import plan
from forge_evals.scenarios import BY_NAME


def record(scenario: str, ablation: str, i: int, correct: bool) -> RunRecord:
    return RunRecord(
        config_id="cfg",
        scenario=scenario,
        ablation=ablation,
        run_index=i,
        completed=correct,
        correct=correct,
        iterations=3,
        ideal_iterations=2,
        failure_reason="" if correct else "TOOL_CALL",
        elapsed_s=0.5,
    )


def eval_cli(*argv: str) -> None:
    with pytest.raises(SystemExit) as done:
        cli.main(list(argv))
    assert done.value.code == 0


def lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_load_skips_a_torn_line_and_the_writer_heals_it(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    writer = results.ResultsWriter(path)
    writer.append(record("basic_2step", "all-on", 0, True))
    with path.open("a") as fh:
        fh.write('{"config_id": "cfg", "scenario": "basic_2st')  # killed mid-write
    assert [r.run_index for r in results.load(path)] == [0]
    results.ResultsWriter(path).append(record("basic_2step", "all-on", 1, True))
    assert [r.run_index for r in results.load(path)] == [0, 1]
    assert results.load(tmp_path / "missing.jsonl") == []


def test_plan_skips_what_is_done() -> None:
    scenarios = [BY_NAME["basic_2step"], BY_NAME["pick_cheapest"]]
    ablations = [PRESETS["all-on"], PRESETS["bare"]]
    done = {("cfg", "basic_2step", "all-on", 0), ("other", "pick_cheapest", "bare", 0)}
    todo = plan(scenarios, ablations, 2, "cfg", done)
    keys = [(p.scenario.name, p.ablation.name, p.run_index) for p in todo]
    assert len(keys) == 7
    assert ("basic_2step", "all-on", 0) not in keys
    # Another config's result does not count for this one.
    assert ("pick_cheapest", "bare", 0) in keys
    # Ablation-major order: every all-on run before the first bare run.
    assert keys.index(("basic_2step", "bare", 0)) > keys.index(("pick_cheapest", "all-on", 1))


def test_cli_run_appends_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "results.jsonl"
    common = ["run", "--backend", "oracle", "--out", str(out)]
    common += ["--scenarios", "basic_2step", "error_recovery", "--ablation", "all-on", "bare"]
    eval_cli(*common, "--runs", "1")
    first = lines(out)
    assert len(first) == 4
    # More runs per scenario: only the missing run indexes are added.
    eval_cli(*common, "--runs", "2")
    second = lines(out)
    assert second[:4] == first
    assert len(second) == 8
    assert sorted((r["scenario"], r["ablation"], r["run_index"]) for r in second[4:]) == sorted(
        (s, a, 1) for s in ("basic_2step", "error_recovery") for a in ("all-on", "bare")
    )
    # Nothing missing: nothing runs.
    eval_cli(*common, "--runs", "2")
    assert len(lines(out)) == 8
    # The report was written next to the results.
    md = (tmp_path / "results.md").read_text()
    assert "| error_recovery | 1.00 (2/2) | 0.00 (0/2) |" in md
    assert (tmp_path / "results.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # --fresh starts over.
    eval_cli(*common, "--runs", "1", "--fresh")
    assert len(lines(out)) == 4


def test_cli_report_filters_and_list(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "220")
    path = tmp_path / "r.jsonl"
    writer = results.ResultsWriter(path)
    for i in range(3):
        writer.append(record("basic_2step", "all-on", i, True))
        writer.append(record("basic_2step", "bare", i, i == 0))
    eval_cli("report", str(path), "--ablation", "bare", "--out-dir", str(tmp_path / "rep"))
    md = (tmp_path / "rep" / "r.md").read_text()
    assert "| basic_2step | 0.33 (1/3) |" in md
    assert "all-on" not in md.split("## Scenarios")[0]
    eval_cli("list")
    shown = capsys.readouterr().out
    assert "long_chain_tight" in shown and "no-constrained" in shown


def test_report_renders_matrix_summary_and_details(tmp_path: Path) -> None:
    recs = [record("basic_2step", "all-on", i, True) for i in range(2)]
    recs += [record("basic_2step", "bare", 0, False), record("pick_cheapest", "bare", 0, True)]
    recs.append(record("custom_scenario", "all-on", 0, True))
    report = Report.build(recs)
    assert report.config_ids == ["cfg"]
    # Presets in their canonical order, built-in scenarios first.
    assert report.ablations("cfg") == ["all-on", "bare"]
    assert report.scenarios("cfg") == ["basic_2step", "pick_cheapest", "custom_scenario"]

    console = Console(record=True, width=200)
    print_report(report, console, details=True)
    text = console.export_text()
    assert "1.00 (2/2)" in text and "0.00 (0/1)" in text and "TOOL_CALL x1" in text

    md = markdown(report, chart="c.png")
    assert "| scenario | all-on | bare |" in md
    assert "| basic_2step | 1.00 (2/2) | 0.00 (0/1) |" in md
    # An ablation without a run of a scenario leaves the cell empty.
    assert "| pick_cheapest |  | 1.00 (1/1) |" in md
    assert "![score per scenario per ablation](c.png)" in md
    assert "Not built in: custom_scenario" in md

    png = chart(report, tmp_path / "c.png")
    assert png.read_bytes()[:4] == b"\x89PNG"
    md_path, png_path = write_reports(report, tmp_path / "out", stem="x")
    assert md_path.name == "x.md" and png_path.exists()
    # An empty report still renders.
    empty = Report.build([])
    assert chart(empty, tmp_path / "empty.png").exists()
