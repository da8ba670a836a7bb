"""Reports from a results JSONL: a terminal table, Markdown and a PNG chart."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from forge_evals.ablation import PRESETS
from forge_evals.metrics import (
    AblationSummary,
    RunRecord,
    ScenarioMetrics,
    aggregate,
    summarize,
)
from forge_evals.scenarios import ALL_SCENARIOS, BY_NAME


@dataclass(frozen=True)
class Report:
    """The aggregates of one results file, ready to render."""

    metrics: list[ScenarioMetrics]
    summaries: list[AblationSummary]

    @classmethod
    def build(
        cls,
        records: Iterable[RunRecord],
        *,
        ablations: Sequence[str] = (),
        scenarios: Sequence[str] = (),
        tags: Sequence[str] = (),
    ) -> Report:
        picked = [
            r
            for r in records
            if (not ablations or r.ablation in ablations)
            and (not scenarios or r.scenario in scenarios)
            and (not tags or set(tags).intersection(r.tags))
        ]
        return cls(metrics=aggregate(picked), summaries=summarize(picked))

    @property
    def config_ids(self) -> list[str]:
        return list(dict.fromkeys(m.config_id for m in self.metrics))

    def ablations(self, config_id: str) -> list[str]:
        present = {m.ablation for m in self.metrics if m.config_id == config_id}
        known = [a for a in PRESETS if a in present]
        return known + sorted(present - set(known))

    def scenarios(self, config_id: str) -> list[str]:
        present = {m.scenario for m in self.metrics if m.config_id == config_id}
        known = [s.name for s in ALL_SCENARIOS if s.name in present]
        return known + sorted(present - set(known))

    def cell(self, config_id: str, scenario: str, ablation: str) -> ScenarioMetrics | None:
        for m in self.metrics:
            if (m.config_id, m.scenario, m.ablation) == (config_id, scenario, ablation):
                return m
        return None

    def summary(self, config_id: str, ablation: str) -> AblationSummary | None:
        for s in self.summaries:
            if (s.config_id, s.ablation) == (config_id, ablation):
                return s
        return None


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.0f}%"


def _num(value: float | None, digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _score_cell(m: ScenarioMetrics | None) -> str:
    return "" if m is None else f"{m.score:.2f} ({m.correct}/{m.runs})"


SUMMARY_COLUMNS = (
    "ablation",
    "score",
    "completeness",
    "accuracy",
    "efficiency",
    "wasted calls",
    "s/run",
    "runs",
)


def _summary_row(s: AblationSummary) -> list[str]:
    return [
        s.ablation,
        f"{s.score:.2f} ({s.correct}/{s.runs})",
        _pct(s.completeness),
        _pct(s.accuracy),
        _num(s.efficiency),
        _num(s.wasted_calls),
        _num(s.speed_s, 1),
        str(s.runs),
    ]


def _failures(m: ScenarioMetrics) -> str:
    return ", ".join(f"{k} x{v}" for k, v in sorted(m.failures.items())) or "-"


DETAIL_COLUMNS = (
    "scenario",
    "score",
    "completeness",
    "accuracy",
    "efficiency",
    "wasted calls",
    "s/run",
    "model s/run",
    "compacted",
    "failures",
)


def _detail_row(m: ScenarioMetrics) -> list[str]:
    return [
        m.scenario,
        f"{m.score:.2f} ({m.label})",
        _pct(m.completeness),
        _pct(m.accuracy),
        _num(m.efficiency),
        _num(m.wasted_calls),
        _num(m.speed_s, 1),
        _num(m.model_s, 1),
        f"{m.compacted}/{m.runs}",
        _failures(m),
    ]


# ── terminal ─────────────────────────────────────────────────────────────


def print_report(report: Report, console: Console | None = None, *, details: bool = False) -> None:
    console = console or Console()
    for cfg in report.config_ids:
        ablations = report.ablations(cfg)
        matrix = Table(title=f"Score per scenario — {cfg}", title_justify="left")
        matrix.add_column("scenario")
        for a in ablations:
            matrix.add_column(a, justify="right")
        for name in report.scenarios(cfg):
            matrix.add_row(name, *(_score_cell(report.cell(cfg, name, a)) for a in ablations))
        console.print(matrix)
        summary = Table(title=f"Per ablation — {cfg}", title_justify="left")
        for col in SUMMARY_COLUMNS:
            summary.add_column(col, justify="left" if col == "ablation" else "right")
        for a in ablations:
            s = report.summary(cfg, a)
            if s is not None:
                summary.add_row(*_summary_row(s))
        console.print(summary)
        if details:
            for a in ablations:
                table = Table(title=f"{a} — {cfg}", title_justify="left")
                for col in DETAIL_COLUMNS:
                    table.add_column(col)
                for name in report.scenarios(cfg):
                    m = report.cell(cfg, name, a)
                    if m is not None:
                        table.add_row(*_detail_row(m))
                console.print(table)


# ── Markdown ─────────────────────────────────────────────────────────────


def _md_table(header: Sequence[str], rows: Iterable[Sequence[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
    return lines


def markdown(report: Report, *, chart: str | None = None) -> str:
    out = ["# Forge eval report", ""]
    out += [
        "Score = runs whose terminal tool was called with arguments that pass the "
        "scenario's check, over all runs. Completeness = runs that reached a terminal "
        "tool; accuracy = correct among those; efficiency = ideal / actual iterations "
        "(completed runs); wasted calls = model calls beyond the ideal (completed runs).",
        "",
    ]
    for cfg in report.config_ids:
        ablations = report.ablations(cfg)
        out += [f"## {cfg}", "", "### Per ablation", ""]
        summaries = [s for a in ablations if (s := report.summary(cfg, a)) is not None]
        out += _md_table(SUMMARY_COLUMNS, (_summary_row(s) for s in summaries))
        out += ["", "### Score per scenario", ""]
        out += _md_table(
            ["scenario", *ablations],
            (
                [name, *(_score_cell(report.cell(cfg, name, a)) for a in ablations)]
                for name in report.scenarios(cfg)
            ),
        )
        if chart:
            out += ["", f"![score per scenario per ablation]({chart})"]
        for a in ablations:
            out += ["", f"### {a}", ""]
            rows = [m for n in report.scenarios(cfg) if (m := report.cell(cfg, n, a)) is not None]
            out += _md_table(DETAIL_COLUMNS, (_detail_row(m) for m in rows))
        out.append("")
    out += ["## Scenarios", ""]
    names = {m.scenario for m in report.metrics}
    out += _md_table(
        ["scenario", "tags", "ideal", "what it measures"],
        (
            [s.name, ", ".join(s.tags), str(s.ideal_iterations), s.description]
            for s in ALL_SCENARIOS
            if s.name in names
        ),
    )
    unknown = sorted(names - set(BY_NAME))
    if unknown:
        out += ["", "Not built in: " + ", ".join(unknown)]
    return "\n".join(out) + "\n"


# ── chart ────────────────────────────────────────────────────────────────


def chart(report: Report, path: Path) -> Path:
    """Grouped bars: score per scenario, one bar per ablation (completeness as a
    dashed outline); one panel per config."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    configs = report.config_ids or ["(no results)"]
    fig, axes = plt.subplots(
        len(configs), 1, figsize=(12, 4.5 * len(configs)), squeeze=False, layout="constrained"
    )
    for ax, cfg in zip(axes[:, 0], configs, strict=True):
        scenarios = report.scenarios(cfg)
        ablations = report.ablations(cfg)
        width = 0.8 / max(1, len(ablations))
        for j, a in enumerate(ablations):
            xs = [i + (j - (len(ablations) - 1) / 2) * width for i in range(len(scenarios))]
            cells = [report.cell(cfg, name, a) for name in scenarios]
            bars = ax.bar(xs, [m.score if m else 0.0 for m in cells], width, label=a)
            # Completeness as an outline over the score: how many runs ended
            # with a terminal call at all, right or wrong.
            ax.bar(
                xs,
                [m.completeness if m else 0.0 for m in cells],
                width,
                fill=False,
                edgecolor=bars.patches[0].get_facecolor() if bars.patches else "black",
                linestyle="--",
                linewidth=0.8,
            )
        ax.set_xticks(range(len(scenarios)), scenarios, rotation=35, ha="right")
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("score (filled); completeness (dashed)")
        ax.set_title(cfg, fontsize=10)
        ax.grid(axis="y", alpha=0.3)
        if ablations:
            ax.legend(fontsize=8, ncols=min(4, len(ablations)))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def write_reports(report: Report, out_dir: Path, stem: str = "report") -> tuple[Path, Path]:
    """`<stem>.md` and `<stem>.png` in `out_dir`; returns both paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    png = chart(report, out_dir / f"{stem}.png")
    md = out_dir / f"{stem}.md"
    md.write_text(markdown(report, chart=png.name), encoding="utf-8")
    return md, png
