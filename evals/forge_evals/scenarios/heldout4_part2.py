"""Held out, fourth group, part 2: a placeholder on this branch. The other
half's eight scenarios (decline, format_retry, schema, destructive) are
written on their own branch and replace this module at merge."""

from __future__ import annotations

from forge_evals.scenario import Scenario

SCENARIOS: tuple[Scenario, ...] = ()
