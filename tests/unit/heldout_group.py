"""What every held-out group's tests check alike (test_eval_heldout10a.py
and test_eval_heldout10b.py): two scenarios per kind under the group's tag,
names and tools no earlier group has, workflows of four to seven tools with
a dated system prompt, and a perfect model through the real server."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import date
from pathlib import Path
from typing import Any

from forge_client.tools import Tool
from forge_evals.ablation import PRESETS
from forge_evals.results import ResultsWriter
from forge_evals.runner import EvalSettings, plan, run_eval
from forge_evals.scenario import Scenario
from forge_evals.scenarios import ALL_SCENARIOS
from forge_evals.targets import in_process, oracle_backend


def run_tool(tool: Tool, args: dict[str, Any]) -> Any:
    """A raw-schema tool takes the arguments dict; a function tool, keywords."""
    return tool.fn(dict(args)) if tool.raw_schema is not None else tool.fn(**args)


def assert_two_per_kind(scenarios: Sequence[Scenario], tag: str, kinds: Iterable[str]) -> None:
    kinds = tuple(kinds)
    assert len({s.name for s in scenarios}) == len(scenarios) == 2 * len(kinds)
    for kind in kinds:
        assert sum(kind in s.tags for s in scenarios) == 2, kind
    assert all(s.tags == (tag, s.tags[1]) and s.tags[1] in kinds for s in scenarios)


def assert_fresh(scenarios: Sequence[Scenario], tag: str, shared: frozenset[str]) -> None:
    """No earlier group has these names or tools (`shared`: tools every
    group may have, like the decline tool)."""
    earlier = [s for s in ALL_SCENARIOS if tag not in s.tags]
    assert not {s.name for s in scenarios} & {s.name for s in earlier}
    taken = {n for s in earlier for n in s.build().tools}
    fresh = {n for s in scenarios for n in s.build().tools} - shared
    assert not taken & fresh, sorted(taken & fresh)


def raw_schema_workflows(scenarios: Sequence[Scenario]) -> int:
    """Asserts each workflow has four to seven tools, a system prompt that
    dates today with its right weekday and a reference as long as its ideal
    run; returns how many use a raw JSON-Schema tool."""
    raw = 0
    for scenario in scenarios:
        wf = scenario.build()
        assert wf.name == scenario.name
        assert 4 <= len(wf.tools) <= 7, scenario.name
        m = re.search(r"Today is (\w+day) (2026-\d\d-\d\d)\.", wf.system_prompt)
        assert m and date.fromisoformat(m.group(2)).strftime("%A") == m.group(1), scenario.name
        assert len(scenario.reference) == scenario.ideal_iterations, scenario.name
        raw += any(t.raw_schema is not None for t in wf.tools.values())
    return raw


async def oracle_records(scenarios: Sequence[Scenario], tmp_path: Path) -> list[Any]:
    """Each scenario run once by the oracle through the in-process server;
    asserts every run passes in its ideal number of iterations."""
    writer = ResultsWriter(tmp_path / "r.jsonl")
    async with in_process(oracle_backend(list(scenarios))) as target:
        records = await run_eval(
            target,
            plan(list(scenarios), [PRESETS["all-on"]], 1, "oracle", set()),
            writer,
            settings=EvalSettings(),
            cfg_id="oracle",
        )
    assert [(r.scenario, r.failure_reason, r.error) for r in records if not r.correct] == []
    assert all(r.iterations == r.ideal_iterations for r in records)
    return list(records)


def reference_results(scenario: Scenario) -> list[str]:
    """What each reference call's tool returns (raises on a tool error)."""
    wf = scenario.build()
    return [str(run_tool(wf.tools[ref.tool], dict(ref.args))) for ref in scenario.reference]


def assert_reference_passes(scenario: Scenario) -> None:
    """The reference calls run without a tool error and the last one, a
    terminal tool's, passes the scenario's check."""
    assert all(reference_results(scenario))
    last = scenario.reference[-1]
    assert last.tool in scenario.build().terminal_tools
    assert scenario.check(last.tool, last.args)


def assert_forbidden_tools_sound(scenarios: Sequence[Scenario]) -> None:
    """Each scenario forbids some tool, never a terminal or reference one,
    and none it forbids is annotated (the engine must infer it)."""
    for scenario in scenarios:
        assert scenario.forbidden_tools, scenario.name
        wf = scenario.build()
        for name in scenario.forbidden_tools:
            tool = wf.tools[name]
            assert name not in wf.terminal_tools
            assert not tool.destructive and not tool.read_only
        assert not {r.tool for r in scenario.reference} & set(scenario.forbidden_tools)
        # The right arguments under a forbidden tool's name are no answer.
        args = dict(scenario.reference[-1].args)
        assert not any(scenario.check(name, args) for name in scenario.forbidden_tools)


def assert_unannotated(scenarios: Sequence[Scenario]) -> None:
    """No tool carries a destructive, read-only or idempotent hint: the
    engine must infer them."""
    for scenario in scenarios:
        tools = scenario.build().tools.values()
        assert not any(t.destructive or t.read_only or t.idempotent for t in tools)


def assert_shares_topic(scenario: Scenario, word: str) -> None:
    """A decline request shares a topic word with the workflow's tools (it
    is out of scope, not off the map)."""
    wf = scenario.build()
    assert word in scenario.user_message.lower()
    assert any(word in (t.description or "").lower() + n for n, t in wf.tools.items())


def assert_carried_from_results(scenario: Scenario, carried: Sequence[str]) -> None:
    """The i-th carried id is first written by the i-th reference result,
    never by the request."""
    results = reference_results(scenario)
    for i, value in enumerate(carried):
        assert value not in scenario.user_message
        assert value in results[i] and value not in " ".join(results[:i])
