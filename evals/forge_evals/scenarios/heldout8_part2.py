"""Held out, eighth group, part 2: a placeholder until the second half
(decline, format_retry, destructive and schema) is merged in."""

from __future__ import annotations

from forge_evals.scenario import Scenario

SCENARIOS: tuple[Scenario, ...] = ()
