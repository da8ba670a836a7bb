"""Held out, tenth group (second half): a placeholder on this branch; the
second engineer's heldout10_part2 (decline, format_retry, destructive and
schema) replaces it at merge."""

from __future__ import annotations

from forge_evals.scenario import Scenario

SCENARIOS: tuple[Scenario, ...] = ()
