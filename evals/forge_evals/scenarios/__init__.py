"""Every built-in scenario, by group: plumbing, model quality, compaction, choice."""

from __future__ import annotations

from forge_evals.scenario import Scenario
from forge_evals.scenarios import choice, compaction, model_quality, plumbing

ALL_SCENARIOS: tuple[Scenario, ...] = (
    *plumbing.SCENARIOS,
    *model_quality.SCENARIOS,
    *compaction.SCENARIOS,
    *choice.SCENARIOS,
)

BY_NAME: dict[str, Scenario] = {s.name: s for s in ALL_SCENARIOS}

__all__ = ["ALL_SCENARIOS", "BY_NAME"]
