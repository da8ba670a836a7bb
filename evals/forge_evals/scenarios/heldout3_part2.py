"""Placeholder for the second half of the third held-out group (decline,
format_retry, schema, destructive), written on its own branch (heldout3b);
the lead takes that branch's version of this file at merge."""

from __future__ import annotations

from forge_evals.scenario import Scenario

SCENARIOS: tuple[Scenario, ...] = ()
