"""Held out, ninth group (second half): a placeholder until the second
half's scenarios are merged in (its engineer writes them on another branch).
"""

from __future__ import annotations

from forge_evals.scenario import Scenario

SCENARIOS: tuple[Scenario, ...] = ()
