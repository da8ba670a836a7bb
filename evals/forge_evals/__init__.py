"""Forge's eval harness: does the guardrail stack make a weak model reliable?

Scenarios (deterministic tools, a validate check on the terminal call) run N
times per ablation preset through a real Forge gRPC server, with the Python
SDK executing the tools; results go to JSONL (resumable) and reports.
"""

from forge_evals.ablation import GUARDRAILS, PRESETS, Ablation
from forge_evals.metrics import RunRecord, ScenarioMetrics, aggregate
from forge_evals.scenario import RefCall, Scenario, select
from forge_evals.scenarios import ALL_SCENARIOS

__all__ = [
    "ALL_SCENARIOS",
    "GUARDRAILS",
    "PRESETS",
    "Ablation",
    "RefCall",
    "RunRecord",
    "Scenario",
    "ScenarioMetrics",
    "aggregate",
    "select",
]
