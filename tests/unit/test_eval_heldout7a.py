"""heldout7 (and heldout7_listings): its eight scenarios (two each of
carry_id, user_value, report_agrees and list_match) run their reference calls
against their own tools, pass their own checks, and are strict about the
wrong values they are there to catch."""

from __future__ import annotations

import re
from typing import Any

import pytest

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario
from forge_evals.scenarios import ALL_SCENARIOS, heldout7

SCENARIOS = heldout7.SCENARIOS
BY_NAME = {s.name: s for s in SCENARIOS}
KINDS = ("carry_id", "user_value", "report_agrees", "list_match")


def _run(wf: Workflow, ref: RefCall) -> str:
    tool = wf.tools[ref.tool]
    args = dict(ref.args)
    return str(tool.fn(args) if tool.raw_schema is not None else tool.fn(**args))


def _results(scenario: Scenario) -> list[str]:
    wf = scenario.build()
    return [_run(wf, ref) for ref in scenario.reference]


def test_two_scenarios_per_kind_each_tagged_heldout7() -> None:
    assert len(BY_NAME) == len(SCENARIOS) == 8
    for kind in KINDS:
        assert sum(kind in s.tags for s in SCENARIOS) == 2, kind
    assert all(len(s.tags) == 2 and s.tags[0] == "heldout7" for s in SCENARIOS)


def test_fresh_names_and_tools_against_every_earlier_group() -> None:
    others = [s for s in ALL_SCENARIOS if s.name not in BY_NAME]
    assert not set(BY_NAME) & {s.name for s in others}
    taken = {n for s in others for n in s.build().tools}
    fresh = {n for s in SCENARIOS for n in s.build().tools}
    assert not taken & fresh, sorted(taken & fresh)


def test_workflows_have_four_to_seven_tools_and_a_dated_system_prompt() -> None:
    raw = 0
    for scenario in SCENARIOS:
        wf = scenario.build()
        assert 4 <= len(wf.tools) <= 7, scenario.name
        assert re.search(r"Today is \w+day 2026-\d\d-\d\d", wf.system_prompt), scenario.name
        assert len(scenario.reference) == scenario.ideal_iterations <= 4
        raw += any(t.raw_schema is not None for t in wf.tools.values())
    assert raw >= 3


@pytest.mark.parametrize("name", list(BY_NAME))
def test_the_reference_calls_run_and_pass_the_check(name: str) -> None:
    scenario = BY_NAME[name]
    results = _results(scenario)  # no ToolResolutionError on the way
    assert all(results)
    last = scenario.reference[-1]
    assert last.tool in scenario.build().terminal_tools
    assert scenario.check(last.tool, last.args)


def test_forbidden_tools_are_never_terminal_nor_in_the_reference() -> None:
    for scenario in SCENARIOS:
        assert scenario.forbidden_tools, scenario.name
        wf = scenario.build()
        for name in scenario.forbidden_tools:
            assert name in wf.tools and name not in wf.terminal_tools
        assert not {r.tool for r in scenario.reference} & set(scenario.forbidden_tools)


_CARRIED = {
    "mastering_job_v3_mix": ["prj_Hb7c2QxW", "mx_4fK9tR7e"],
    "vintage_car_hire_quote": ["VH-JAG-65E", "qte_Jx82mPwA4c"],
}


@pytest.mark.parametrize("name", list(_CARRIED))
def test_each_carried_id_comes_from_the_result_before_its_use(name: str) -> None:
    scenario = BY_NAME[name]
    results = _results(scenario)
    for i, carried in enumerate(_CARRIED[name]):
        assert carried not in scenario.user_message
        assert carried in results[i] and carried not in " ".join(results[:i])


def test_the_user_values_are_written_the_way_people_say_them() -> None:
    lock = BY_NAME["locksmith_lockout_callout"].user_message
    assert "15:45" not in lock and "two" not in lock.lower()
    interp = BY_NAME["bsl_interpreter_booking"].user_message
    assert not re.search(r"14:30|90|2026|\b10\b", interp)
    rink = BY_NAME["ice_rink_family_session"].user_message
    assert "40.50" not in rink and "2026" not in rink


def test_the_reported_values_come_from_the_results() -> None:
    rink = _results(BY_NAME["ice_rink_family_session"])
    assert "Total 40.50 GBP" in rink[1]
    glass = _results(BY_NAME["glass_collection_missed_query"])
    assert "REJECTED_CONTAMINATION" in glass[1] and "2026-12-09" in glass[1]


def test_a_wrong_input_gets_a_helpful_api_error() -> None:
    car = BY_NAME["vintage_car_hire_quote"].build().tools
    with pytest.raises(ToolResolutionError, match="not_available"):
        car["quote_hire"].fn(vehicle_id="VH-MG-68B", hire_date="2026-12-05", chauffeur=True)
    rink = BY_NAME["ice_rink_family_session"].build().tools
    with pytest.raises(ToolResolutionError, match="sold_out"):
        rink["quote_basket"].fn(session_id="SES-20261205-1630", adults=2, children=2, skate_hire=3)
    lock = BY_NAME["locksmith_lockout_callout"].build().tools
    with pytest.raises(ToolResolutionError, match="outside"):
        lock["check_coverage"].fn(postcode="GL1 2AB")
    mix = BY_NAME["mastering_job_v3_mix"].build().tools
    with pytest.raises(ToolResolutionError, match="mix_not_found"):
        mix["create_mastering_job"].fn({"mix_id": "prj_Hb7c2QxW"})


def _ref(name: str) -> dict[str, Any]:
    return dict(BY_NAME[name].reference[-1].args)


def _with(name: str, path: str, value: Any) -> tuple[str, str, dict[str, Any]]:
    """The reference terminal call with one (possibly nested) argument changed."""
    args = _ref(name)
    keys = path.split(".")
    if len(keys) == 2:
        args[keys[0]] = {**args[keys[0]], keys[1]: value}
    else:
        args[keys[0]] = value
    return name, BY_NAME[name].reference[-1].tool, args


_WRONG = [
    _with("mastering_job_v3_mix", "mix_id", "mx_4fK9qL2b"),
    _with("mastering_job_v3_mix", "mix_id", "prj_Hb7c2QxW"),
    _with("mastering_job_v3_mix", "loudness.integrated_lufs", -9),
    _with("mastering_job_v3_mix", "deliverables", ["wav_24_96"]),
    _with("vintage_car_hire_quote", "quote_id", "qte_Rr19kLzD7v"),
    _with("vintage_car_hire_quote", "quote_id", "qte_Jx82nQe5Tb"),
    _with("vintage_car_hire_quote", "quote_id", "VH-JAG-65E"),
    _with("locksmith_lockout_callout", "arrival_after", "15:15"),
    _with("locksmith_lockout_callout", "arrival_after", "03:45"),
    _with("locksmith_lockout_callout", "contact.call_ahead", True),
    _with("locksmith_lockout_callout", "doors", 1),
    _with("locksmith_lockout_callout", "job_type", "lock_change"),
    _with("bsl_interpreter_booking", "session.date", "2026-12-03"),
    _with("bsl_interpreter_booking", "session.start_time", "02:30"),
    _with("bsl_interpreter_booking", "session.duration_minutes", 60),
    _with("bsl_interpreter_booking", "interpreters", 1),
    _with("ice_rink_family_session", "total_gbp", 33.00),
    _with("ice_rink_family_session", "total_gbp", 43.00),
    _with("ice_rink_family_session", "session_id", "SES-20261205-1630"),
    _with("glass_collection_missed_query", "last_status", "MISSED"),
    _with("glass_collection_missed_query", "next_collection_date", "2026-12-16"),
    _with("allotment_rent_reminders", "plot_ids", ["HB-07", "HB-11B", "HB-19", "MR-02"]),
    _with("allotment_rent_reminders", "plot_ids", ["HB-07", "HB-11B", "HB-19", "HB-12"]),
    _with("allotment_rent_reminders", "plot_ids", ["HB-07", "HB-19"]),
    _with("allotment_rent_reminders", "plot_ids", ["HB-07", "HB-11B", "HB-19", "HB-19"]),
    _with("costume_hire_victorian_size12", "skus", ["CST-V-1142", "CST-V-1187"]),
    _with(
        "costume_hire_victorian_size12",
        "skus",
        ["CST-V-1142", "CST-V-1187", "CST-V-1215", "CST-V-1203"],
    ),
    _with(
        "costume_hire_victorian_size12",
        "skus",
        ["CST-V-1142", "CST-V-1187", "CST-V-1215", "CST-E-0831"],
    ),
    _with("costume_hire_victorian_size12", "hire_from", "2026-11-30"),
]

_RIGHT = [
    _with("locksmith_lockout_callout", "address.postcode", "bs64tx"),
    _with("ice_rink_family_session", "total_gbp", "40.50"),
    _with("glass_collection_missed_query", "last_status", "rejected_contamination"),
    _with("allotment_rent_reminders", "plot_ids", ["HB-19", "HB-07", "HB-11B"]),
    _with("mastering_job_v3_mix", "loudness", {"integrated_lufs": -14.0}),
]


@pytest.mark.parametrize(("name", "tool", "args"), _WRONG)
def test_a_wrong_value_fails_validation(name: str, tool: str, args: dict[str, Any]) -> None:
    assert not BY_NAME[name].check(tool, args)


@pytest.mark.parametrize(("name", "tool", "args"), _RIGHT)
def test_another_correct_form_passes_validation(name: str, tool: str, args: dict[str, Any]) -> None:
    assert BY_NAME[name].check(tool, args)


def test_every_scenario_has_a_wrong_value_listed() -> None:
    assert {w[0] for w in _WRONG} == set(BY_NAME)


def test_a_forbidden_tool_is_never_a_passing_answer() -> None:
    for scenario in SCENARIOS:
        args = dict(scenario.reference[-1].args)
        for name in scenario.forbidden_tools:
            assert not scenario.check(name, args)
