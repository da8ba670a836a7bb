"""heldout6_part2: its eight scenarios (two each of decline, format_retry,
destructive and schema) are strict about the wrong values they are there to
catch, accept the other correct forms, their tools' errors name the format the
retry must use, and a perfect model passes each through the real server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from forge_client import ToolResolutionError
from forge_client.tools import Tool
from forge_evals.ablation import PRESETS
from forge_evals.results import ResultsWriter
from forge_evals.runner import EvalSettings, plan, run_eval
from forge_evals.scenarios import ALL_SCENARIOS
from forge_evals.scenarios._domain_schema import HELDOUT6_TAG
from forge_evals.scenarios.heldout6_part2 import SCENARIOS
from forge_evals.targets import in_process, oracle_backend

BY_NAME = {s.name: s for s in SCENARIOS}
KINDS = ("decline", "format_retry", "destructive", "schema")
FORMAT_RETRY = {"boat_haul_out_ssr_format", "music_exam_entry_dob_format"}


def test_two_scenarios_per_kind_each_tagged_heldout6() -> None:
    assert len(BY_NAME) == len(SCENARIOS) == 8
    for kind in KINDS:
        assert sum(kind in s.tags for s in SCENARIOS) == 2, kind
    assert all(s.tags[0] == HELDOUT6_TAG and len(s.tags) == 2 for s in SCENARIOS)


def test_fresh_names_and_tools_against_every_earlier_group() -> None:
    earlier = [s for s in ALL_SCENARIOS if HELDOUT6_TAG not in s.tags]
    assert not set(BY_NAME) & {s.name for s in earlier}
    tuned = {n for s in earlier for n in s.build().tools}
    fresh = {n for s in SCENARIOS for n in s.build().tools} - {"decline_request"}
    assert not tuned & fresh


def test_the_reference_solutions_pass_their_own_checks() -> None:
    for scenario in SCENARIOS:
        last = scenario.reference[-1]
        assert scenario.check(last.tool, last.args), scenario.name
        assert len(scenario.reference) == scenario.ideal_iterations
        assert 4 <= len(scenario.build().tools) <= 7, scenario.name


def test_the_reference_calls_run_against_the_tools() -> None:
    # Every reference call but the format retries' first attempt succeeds.
    for scenario in SCENARIOS:
        tools = scenario.build().tools
        for i, call in enumerate(scenario.reference):
            if scenario.name in FORMAT_RETRY and i == 1:
                with pytest.raises(ToolResolutionError):
                    _run(tools[call.tool], call.args)
            else:
                assert _run(tools[call.tool], call.args), (scenario.name, call.tool)


def _run(tool: Tool, args: dict[str, Any]) -> Any:
    # A raw-schema tool takes the arguments dict; a function tool, keywords.
    return tool.fn(args) if tool.args_model is None else tool.fn(**args)


def test_decline_scenarios_forbid_every_action_tool() -> None:
    for scenario in (s for s in SCENARIOS if "decline" in s.tags):
        wf = scenario.build()
        actions = set(wf.tools) - set(wf.terminal_tools)
        assert set(scenario.forbidden_tools) == actions and len(actions) >= 3


@pytest.mark.parametrize(
    ("name", "word"),
    [("wasp_nest_swarm_decline", "swarm"), ("gas_safety_certificate_decline", "certificate")],
)
def test_the_decline_requests_share_a_topic_word_with_a_tool(name: str, word: str) -> None:
    assert word in BY_NAME[name].user_message.lower()
    assert any(word in tool for tool in BY_NAME[name].build().tools)


def test_destructive_workflows_carry_no_annotation_at_all() -> None:
    for scenario in (s for s in SCENARIOS if "destructive" in s.tags):
        tools = scenario.build().tools.values()
        assert not any(t.destructive or t.read_only or t.idempotent for t in tools)
        assert len(scenario.forbidden_tools) == 2


def test_a_forbidden_tool_is_never_the_answer() -> None:
    for scenario in (s for s in SCENARIOS if s.forbidden_tools):
        wf = scenario.build()
        assert not set(scenario.forbidden_tools) & set(wf.terminal_tools), scenario.name


_HAUL = {
    "account_id": "BY-30418",
    "lift_date": "2026-10-13",
    "relaunch_date": "2026-10-16",
    "services": ["pressure_wash", "antifoul"],
}
_HAUL_OK = {**_HAUL, "vessel": {"name": "Curlew", "registration": "SSR148302"}}
_ENTRY = {
    "session_id": "SES-26C-LDS-04",
    "teacher_number": "T204587",
    "instrument": "violin",
    "grade": 3,
}
_ISLA = {"first_name": "Isla", "last_name": "Fairbairn", "date_of_birth": "03/07/2015"}
_ENTRY_OK = {**_ENTRY, "candidate": _ISLA}


def _haul(registration: str) -> dict[str, Any]:
    return {**_HAUL, "vessel": {"name": "Curlew", "registration": registration}}


def _entry(dob: str) -> dict[str, Any]:
    return {**_ENTRY, "candidate": {**_ISLA, "date_of_birth": dob}}


@pytest.mark.parametrize(
    ("name", "tool", "args", "expected"),
    [
        ("boat_haul_out_ssr_format", "book_haul_out", _haul("148 302"), "SSR"),
        ("boat_haul_out_ssr_format", "book_haul_out", _haul("SSR 148302"), "no spaces"),
        ("boat_haul_out_ssr_format", "book_haul_out", _haul("SSR/148302"), "slashes"),
        ("music_exam_entry_dob_format", "enter_exam_candidate", _entry("2015-07-03"), "DD/MM"),
        ("music_exam_entry_dob_format", "enter_exam_candidate", _entry("3/7/2015"), "leading"),
        (
            "music_exam_entry_dob_format",
            "enter_exam_candidate",
            _entry("3 July 2015"),
            "day first",
        ),
    ],
)
def test_the_format_error_names_the_expected_format(
    name: str, tool: str, args: dict[str, Any], expected: str
) -> None:
    fn = BY_NAME[name].build().tools[tool].fn
    with pytest.raises(ToolResolutionError, match=expected):
        fn(args)


def test_the_format_tools_accept_the_corrected_values() -> None:
    book = BY_NAME["boat_haul_out_ssr_format"].build().tools["book_haul_out"].fn
    assert "HO-6107" in book(_HAUL_OK)
    enter = BY_NAME["music_exam_entry_dob_format"].build().tools["enter_exam_candidate"].fn
    assert "EN-418862" in enter(_ENTRY_OK)


_FOB = {"customer_id": "SSC-71024", "fob_id": "FOB-4C0217", "reason": "lost"}
_HOLD = {"customer_id": "MR-08812", "from_date": "2026-07-25", "to_date": "2026-08-07"}
_NOV14 = {"date": "2026-11-14", "start_time": "10:00", "hours": 10}
_NOV15 = {"date": "2026-11-15", "start_time": "10:00", "hours": 10}
_STUDIO: dict[str, Any] = {
    "account_id": "ACC-7KQ2VD",
    "room": "live_room_a",
    "sessions": [_NOV14, _NOV15],
    "engineer": {"house_engineer_id": "ENG-014"},
    "backline": ["drum_kit", "hammond_organ"],
    "contact": {"mobile": "07700 900731"},
}
_MICE = {"area": "cellar", "pest": "mice", "evidence": ["droppings", "gnaw_marks"]}
_ROACH = {"area": "kitchen", "pest": "cockroaches", "evidence": ["live_sighting"]}
_CALLOUT: dict[str, Any] = {
    "contract_id": "PC-2291-R",
    "visit_date": "2026-03-12",
    "priority": "same_day",
    "sightings": [_MICE, _ROACH],
    "access": {"keysafe_code": "2580"},
}

# Other correct forms the checks must accept (the reference's are checked above).
RIGHT: list[tuple[str, str, dict[str, Any]]] = [
    ("wasp_nest_swarm_decline", "decline_request", {"reason": "We only collect honeybees."}),
    ("gas_safety_certificate_decline", "decline_request", {"reason": "No gas work."}),
    ("boat_haul_out_ssr_format", "book_haul_out", {**_HAUL_OK, "account_id": "by-30418"}),
    (
        "boat_haul_out_ssr_format",
        "book_haul_out",
        {**_HAUL_OK, "services": ["antifoul", "pressure_wash"]},
    ),
    (
        "music_exam_entry_dob_format",
        "enter_exam_candidate",
        {**_ENTRY_OK, "teacher_number": "t204587"},
    ),
    ("storage_lost_fob_deactivate", "deactivate_access_fob", {**_FOB, "fob_id": "fob-4c0217"}),
    ("milk_round_holiday_pause", "pause_deliveries", {**_HOLD, "from_date": "2026-07-27"}),
    ("milk_round_holiday_pause", "pause_deliveries", {**_HOLD, "to_date": "2026-08-09"}),
    ("milk_round_holiday_pause", "pause_deliveries", {**_HOLD, "note": "Away in Portugal"}),
    ("studio_album_sessions", "book_studio_sessions", {**_STUDIO, "sessions": [_NOV15, _NOV14]}),
    (
        "studio_album_sessions",
        "book_studio_sessions",
        {**_STUDIO, "contact": {"mobile": "+447700900731"}},
    ),
    (
        "studio_album_sessions",
        "book_studio_sessions",
        {**_STUDIO, "backline": ["hammond_organ", "drum_kit"]},
    ),
    ("pest_callout_pub_cellar", "log_pest_callout", {**_CALLOUT, "sightings": [_ROACH, _MICE]}),
    (
        "pest_callout_pub_cellar",
        "log_pest_callout",
        {**_CALLOUT, "sightings": [{**_MICE, "evidence": ["gnaw_marks", "droppings"]}, _ROACH]},
    ),
    (
        "pest_callout_pub_cellar",
        "log_pest_callout",
        {**_CALLOUT, "access": {"keysafe_code": "2580", "keysafe_location": "cellar hatch"}},
    ),
]

# (scenario, terminal tool, arguments): a wrong value the scenario must reject.
WRONG: list[tuple[str, str, dict[str, Any]]] = [
    ("wasp_nest_swarm_decline", "report_honeybee_swarm", {"address": "22 Moor Lane"}),
    ("wasp_nest_swarm_decline", "book_hive_inspection", {"date": "2026-06-18"}),
    ("gas_safety_certificate_decline", "issue_sweep_certificate", {"booking_ref": "CP12"}),
    ("gas_safety_certificate_decline", "book_chimney_sweep", {"appliance": "combi boiler"}),
    ("boat_haul_out_ssr_format", "book_haul_out", _haul("148 302")),
    ("boat_haul_out_ssr_format", "book_haul_out", _haul("SSR 148302")),
    ("boat_haul_out_ssr_format", "book_haul_out", _haul("SSR104233")),
    ("boat_haul_out_ssr_format", "book_haul_out", {**_HAUL_OK, "lift_date": "2026-10-06"}),
    ("boat_haul_out_ssr_format", "book_haul_out", {**_HAUL_OK, "relaunch_date": "2026-10-09"}),
    ("boat_haul_out_ssr_format", "book_haul_out", {**_HAUL_OK, "services": ["antifoul"]}),
    (
        "boat_haul_out_ssr_format",
        "book_haul_out",
        {**_HAUL_OK, "services": ["pressure_wash", "antifoul", "polish"]},
    ),
    ("boat_haul_out_ssr_format", "book_haul_out", {**_HAUL_OK, "account_id": "HO-5520"}),
    ("music_exam_entry_dob_format", "enter_exam_candidate", _entry("2015-07-03")),
    ("music_exam_entry_dob_format", "enter_exam_candidate", _entry("07/03/2015")),
    ("music_exam_entry_dob_format", "enter_exam_candidate", _entry("3/7/2015")),
    ("music_exam_entry_dob_format", "enter_exam_candidate", _entry("09/11/2014")),
    (
        "music_exam_entry_dob_format",
        "enter_exam_candidate",
        {**_ENTRY_OK, "session_id": "SES-26C-HGT-02"},
    ),
    ("music_exam_entry_dob_format", "enter_exam_candidate", {**_ENTRY_OK, "grade": 4}),
    ("music_exam_entry_dob_format", "enter_exam_candidate", {**_ENTRY_OK, "grade": "3"}),
    ("music_exam_entry_dob_format", "enter_exam_candidate", {**_ENTRY_OK, "instrument": "viola"}),
    ("storage_lost_fob_deactivate", "deactivate_access_fob", {**_FOB, "fob_id": "FOB-3A9921"}),
    ("storage_lost_fob_deactivate", "deactivate_access_fob", {**_FOB, "fob_id": "FOB-3A9958"}),
    ("storage_lost_fob_deactivate", "deactivate_access_fob", {**_FOB, "reason": "stolen"}),
    ("storage_lost_fob_deactivate", "revoke_all_access", {"customer_id": "SSC-71024"}),
    ("storage_lost_fob_deactivate", "end_storage_rental", {"customer_id": "SSC-71024"}),
    ("milk_round_holiday_pause", "pause_deliveries", {**_HOLD, "from_date": "2026-07-24"}),
    ("milk_round_holiday_pause", "pause_deliveries", {**_HOLD, "to_date": "2026-08-10"}),
    ("milk_round_holiday_pause", "pause_deliveries", {**_HOLD, "to_date": "2026-08-06"}),
    ("milk_round_holiday_pause", "pause_deliveries", {**_HOLD, "from_date": "2026-07-29"}),
    ("milk_round_holiday_pause", "pause_deliveries", {**_HOLD, "customer_id": "SO-4410"}),
    ("milk_round_holiday_pause", "cancel_milk_order", {"standing_order_id": "SO-4410"}),
    ("milk_round_holiday_pause", "close_customer_account", {"customer_id": "MR-08812"}),
    ("studio_album_sessions", "book_studio_sessions", {**_STUDIO, "room": "live_room_b"}),
    ("studio_album_sessions", "book_studio_sessions", {**_STUDIO, "sessions": [_NOV14]}),
    (
        "studio_album_sessions",
        "book_studio_sessions",
        {**_STUDIO, "sessions": [_NOV14, {**_NOV15, "start_time": "22:00"}]},
    ),
    (
        "studio_album_sessions",
        "book_studio_sessions",
        {**_STUDIO, "sessions": [_NOV14, {**_NOV15, "hours": 8}]},
    ),
    (
        "studio_album_sessions",
        "book_studio_sessions",
        {**_STUDIO, "engineer": {"house_engineer_id": "ENG-009"}},
    ),
    (
        "studio_album_sessions",
        "book_studio_sessions",
        {**_STUDIO, "engineer": {"visiting_engineer_name": "Dev Malik", "insurance_ref": "-"}},
    ),
    (
        "studio_album_sessions",
        "book_studio_sessions",
        {**_STUDIO, "backline": ["drum_kit", "hammond_organ", "guitar_amp", "bass_amp"]},
    ),
    ("studio_album_sessions", "book_studio_sessions", {**_STUDIO, "backline": ["drum_kit"]}),
    (
        "studio_album_sessions",
        "book_studio_sessions",
        {**_STUDIO, "contact": {"email": "callum@velvetashes.example"}},
    ),
    ("studio_album_sessions", "book_studio_sessions", {**_STUDIO, "account_id": "BK-20931"}),
    ("pest_callout_pub_cellar", "log_pest_callout", {**_CALLOUT, "priority": "next_day"}),
    ("pest_callout_pub_cellar", "log_pest_callout", {**_CALLOUT, "visit_date": "2026-03-13"}),
    ("pest_callout_pub_cellar", "log_pest_callout", {**_CALLOUT, "sightings": [_MICE]}),
    (
        "pest_callout_pub_cellar",
        "log_pest_callout",
        {**_CALLOUT, "sightings": [{**_MICE, "pest": "rats"}, _ROACH]},
    ),
    (
        "pest_callout_pub_cellar",
        "log_pest_callout",
        {**_CALLOUT, "sightings": [{**_MICE, "evidence": ["droppings"]}, _ROACH]},
    ),
    (
        "pest_callout_pub_cellar",
        "log_pest_callout",
        {**_CALLOUT, "sightings": [_MICE, {**_ROACH, "area": "bar"}]},
    ),
    (
        "pest_callout_pub_cellar",
        "log_pest_callout",
        {**_CALLOUT, "sightings": [_MICE, {**_ROACH, "evidence": ["dead_specimen"]}]},
    ),
    (
        "pest_callout_pub_cellar",
        "log_pest_callout",
        {**_CALLOUT, "access": {"keysafe_location": "cellar hatch, code 2580"}},
    ),
    ("pest_callout_pub_cellar", "log_pest_callout", {**_CALLOUT, "contract_id": "PC-2291-A"}),
]


@pytest.mark.parametrize(
    ("name", "tool", "args"), RIGHT, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(RIGHT)]
)
def test_another_correct_form_passes_validation(name: str, tool: str, args: dict[str, Any]) -> None:
    assert BY_NAME[name].check(tool, args)


@pytest.mark.parametrize(
    ("name", "tool", "args"), WRONG, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(WRONG)]
)
def test_a_wrong_value_fails_validation(name: str, tool: str, args: dict[str, Any]) -> None:
    assert not BY_NAME[name].check(tool, args)


def test_every_scenario_has_a_wrong_value_listed() -> None:
    assert {name for name, _, _ in WRONG} == set(BY_NAME)


async def test_the_oracle_passes_each_through_the_server(tmp_path: Path) -> None:
    writer = ResultsWriter(tmp_path / "r.jsonl")
    async with in_process(oracle_backend(SCENARIOS)) as target:
        records = await run_eval(
            target,
            plan(SCENARIOS, [PRESETS["all-on"]], 1, "oracle", set()),
            writer,
            settings=EvalSettings(),
            cfg_id="oracle",
        )
    assert [(r.scenario, r.failure_reason, r.error) for r in records if not r.correct] == []
    assert all(r.iterations == r.ideal_iterations for r in records)
    # The format retries cost a perfect model one failed call each.
    assert {r.scenario for r in records if r.tool_errors} == FORMAT_RETRY
