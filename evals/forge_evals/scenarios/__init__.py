"""Every built-in scenario, by group: plumbing, model quality, compaction, choice,
domains (businesses no other group covers; outside_domains), heldout
(sixteen more businesses, written after domains was tuned on; heldout),
heldout2 (sixteen more, written after heldout was tuned on; heldout2),
heldout3 (sixteen more, written after heldout2 was tuned on; heldout3),
heldout4 (sixteen more, written after heldout3 was tuned on; heldout4),
heldout5 (sixteen more, written after heldout4 was tuned on; heldout5) and
heldout6 (sixteen more, written after heldout5 was tuned on; heldout6 and
heldout6_part2), heldout7 (written after heldout6's failures were looked
at; heldout7 and heldout7_part2), heldout8 (written after heldout7 had
been looked at; heldout8 and heldout8_part2) and heldout9 (written after
heldout8 had been looked at; heldout9 and heldout9_part2), heldout10
(written after heldout9 had been looked at; heldout10 and heldout10_part2)
heldout11 (written after heldout10 had been looked at; heldout11 and
heldout11_part2), heldout12 (written after heldout11 had been looked
at; heldout12 and heldout12_part2) and heldout13 (written after heldout12
had been looked at; heldout13 and heldout13_part2)."""

from __future__ import annotations

from forge_evals.scenario import Scenario
from forge_evals.scenarios import (
    choice,
    compaction,
    heldout,
    heldout2,
    heldout3,
    heldout4,
    heldout5,
    heldout6,
    heldout6_part2,
    heldout7,
    heldout7_part2,
    heldout8,
    heldout8_part2,
    heldout9,
    heldout9_part2,
    heldout10,
    heldout10_part2,
    heldout11,
    heldout11_part2,
    heldout12,
    heldout12_part2,
    heldout13,
    heldout13_part2,
    model_quality,
    outside_domains,
    plumbing,
)

ALL_SCENARIOS: tuple[Scenario, ...] = (
    *plumbing.SCENARIOS,
    *model_quality.SCENARIOS,
    *compaction.SCENARIOS,
    *choice.SCENARIOS,
    *outside_domains.SCENARIOS,
    *heldout.SCENARIOS,
    *heldout2.SCENARIOS,
    *heldout3.SCENARIOS,
    *heldout4.SCENARIOS,
    *heldout5.SCENARIOS,
    *heldout6.SCENARIOS,
    *heldout6_part2.SCENARIOS,
    *heldout7.SCENARIOS,
    *heldout7_part2.SCENARIOS,
    *heldout8.SCENARIOS,
    *heldout8_part2.SCENARIOS,
    *heldout9.SCENARIOS,
    *heldout9_part2.SCENARIOS,
    *heldout10.SCENARIOS,
    *heldout10_part2.SCENARIOS,
    *heldout11.SCENARIOS,
    *heldout11_part2.SCENARIOS,
    *heldout12.SCENARIOS,
    *heldout12_part2.SCENARIOS,
    *heldout13.SCENARIOS,
    *heldout13_part2.SCENARIOS,
)

BY_NAME: dict[str, Scenario] = {s.name: s for s in ALL_SCENARIOS}

__all__ = ["ALL_SCENARIOS", "BY_NAME"]
