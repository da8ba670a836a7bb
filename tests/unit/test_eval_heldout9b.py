"""heldout9_part2 (and heldout9_part2_forms): its eight scenarios (two each of
decline, format_retry, destructive and schema) run their reference calls
against their own tools, pass their own checks, are strict about the wrong
values they are there to catch, accept the other correct forms, their tools'
errors name the format the retry must use, and a perfect model passes each
through the real server."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest

from forge_client import ToolResolutionError
from forge_client.tools import Tool
from forge_evals.ablation import PRESETS
from forge_evals.results import ResultsWriter
from forge_evals.runner import EvalSettings, plan, run_eval
from forge_evals.scenarios import ALL_SCENARIOS
from forge_evals.scenarios.heldout9_part2 import HELDOUT9_TAG, SCENARIOS
from forge_evals.targets import in_process, oracle_backend

BY_NAME = {s.name: s for s in SCENARIOS}
KINDS = ("decline", "format_retry", "destructive", "schema")
FORMAT_RETRY = {"septic_empty_mobile_format", "snowplough_season_interval_format"}


def _run(tool: Tool, args: dict[str, Any]) -> Any:
    # A raw-schema tool takes the arguments dict; a function tool, keywords.
    return tool.fn(dict(args)) if tool.raw_schema is not None else tool.fn(**args)


def test_two_scenarios_per_kind_each_tagged_heldout9() -> None:
    assert HELDOUT9_TAG == "heldout9"
    assert len(BY_NAME) == len(SCENARIOS) == 8
    for kind in KINDS:
        assert sum(kind in s.tags for s in SCENARIOS) == 2, kind
    assert all(s.tags == (HELDOUT9_TAG, s.tags[1]) and s.tags[1] in KINDS for s in SCENARIOS)


def test_fresh_names_and_tools_against_every_earlier_group() -> None:
    earlier = [s for s in ALL_SCENARIOS if HELDOUT9_TAG not in s.tags]
    assert not set(BY_NAME) & {s.name for s in earlier}
    taken = {n for s in earlier for n in s.build().tools}
    fresh = {n for s in SCENARIOS for n in s.build().tools} - {"decline_request"}
    assert not taken & fresh, sorted(taken & fresh)


def test_workflows_have_four_to_seven_tools_and_a_dated_system_prompt() -> None:
    for scenario in SCENARIOS:
        wf = scenario.build()
        assert wf.name == scenario.name
        assert 4 <= len(wf.tools) <= 7, scenario.name
        assert re.search(r"Today is \w+day 2026-\d\d-\d\d\.", wf.system_prompt), scenario.name
        assert len(scenario.reference) == scenario.ideal_iterations


def test_the_system_prompt_weekday_matches_its_date() -> None:
    from datetime import date

    for scenario in SCENARIOS:
        m = re.search(r"Today is (\w+day) (2026-\d\d-\d\d)\.", scenario.build().system_prompt)
        assert m and date.fromisoformat(m.group(2)).strftime("%A") == m.group(1), scenario.name


def test_the_reference_solutions_pass_their_own_checks() -> None:
    for scenario in SCENARIOS:
        last = scenario.reference[-1]
        assert last.tool in scenario.build().terminal_tools, scenario.name
        assert scenario.check(last.tool, last.args), scenario.name


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


def test_decline_scenarios_forbid_every_action_tool() -> None:
    for scenario in (s for s in SCENARIOS if "decline" in s.tags):
        wf = scenario.build()
        actions = set(wf.tools) - set(wf.terminal_tools)
        assert set(scenario.forbidden_tools) == actions and len(actions) >= 4


@pytest.mark.parametrize(
    ("name", "word"),
    [("fossil_ammonite_valuation_decline", "walk"), ("funicular_private_hire_decline", "railway")],
)
def test_the_decline_requests_share_a_topic_word_with_the_workflow(name: str, word: str) -> None:
    scenario = BY_NAME[name]
    wf = scenario.build()
    assert word in scenario.user_message.lower()
    assert any(word in (t.description or "").lower() + n for n, t in wf.tools.items())


def test_workflows_carry_no_destructive_annotation_at_all() -> None:
    for scenario in SCENARIOS:
        tools = scenario.build().tools.values()
        assert not any(t.destructive or t.read_only or t.idempotent for t in tools)


def test_forbidden_tools_are_never_terminal_nor_in_the_reference() -> None:
    for scenario in (s for s in SCENARIOS if s.forbidden_tools):
        wf = scenario.build()
        for name in scenario.forbidden_tools:
            assert name in wf.tools and name not in wf.terminal_tools
        assert not {r.tool for r in scenario.reference} & set(scenario.forbidden_tools)
        args = dict(scenario.reference[-1].args)
        assert not any(scenario.check(name, args) for name in scenario.forbidden_tools)


def test_the_destructive_ones_forbid_their_distractor() -> None:
    assert BY_NAME["weaving_loom_hire_shorten"].forbidden_tools == ("cancel_hire_booking",)
    assert BY_NAME["archery_withdraw_wrong_score"].forbidden_tools == ("reset_member_handicap",)


def test_carried_ids_come_from_a_tool_result_not_the_user() -> None:
    carried = {
        "septic_empty_mobile_format": ["prop_3kW9xTq2", "tnk_8Rb2LmQe", "compact"],
        "snowplough_season_interval_format": ["site_4Hc7pWmZ", "zn_K4p9Wq", "zn_K4p9Wt"],
        "weaving_loom_hire_shorten": ["hb_7TqM3vXa", "2026-05-11"],
        "archery_withdraw_wrong_score": ["sc_Rt5wq8Na"],
        "thesis_binding_order": ["6d1f0b8e-3a2c-4c7e-9b15-8e4a2f7c9d30"],
        "chess_congress_entry": ["evt_W26xQ9rT", "intermediate"],
    }
    for name, ids in carried.items():
        scenario = BY_NAME[name]
        tools = scenario.build().tools
        first = str(_run(tools[scenario.reference[0].tool], scenario.reference[0].args))
        for value in ids:
            assert value not in scenario.user_message and value in first, (name, value)


_TANK = dict(BY_NAME["septic_empty_mobile_format"].reference[-1].args)
_WINTER = dict(BY_NAME["snowplough_season_interval_format"].reference[-1].args)


def _tank(mobile: str) -> dict[str, Any]:
    return {**_TANK, "notify": {"mobile": mobile}}


def _winter(season: str) -> dict[str, Any]:
    return {**_WINTER, "season": season}


_SEPTIC = ("septic_empty_mobile_format", "book_tank_empty")
_SNOW = ("snowplough_season_interval_format", "create_winter_contract")


@pytest.mark.parametrize(
    ("name", "tool", "args", "expected"),
    [
        (*_SEPTIC, _tank("07700 900381"), "E.164"),
        (*_SEPTIC, _tank("+44 7700 900381"), "no spaces"),
        (*_SEPTIC, _tank("447700900381"), "plus sign"),
        (*_SEPTIC, _tank("+44(0)7700900381"), "without its leading 0"),
        (*_SEPTIC, _tank("+4407700900381"), "without its leading 0"),
        (*_SNOW, _winter("2026-12-01 to 2027-03-31"), "ISO 8601 time interval"),
        (*_SNOW, _winter("1 December 2026 - 31 March 2027"), "YYYY-MM-DD"),
        (*_SNOW, _winter("2026-12-01 / 2027-03-31"), "no spaces"),
        (*_SNOW, _winter("2027-03-31/2026-12-01"), "start date and the end date"),
    ],
)
def test_the_format_error_names_the_expected_format(
    name: str, tool: str, args: dict[str, Any], expected: str
) -> None:
    fn = BY_NAME[name].build().tools[tool].fn
    with pytest.raises(ToolResolutionError, match=re.escape(expected)):
        fn(args)


def test_the_tools_refuse_other_wrong_inputs_with_an_api_error() -> None:
    septic = BY_NAME["septic_empty_mobile_format"].build().tools["book_tank_empty"].fn
    with pytest.raises(ToolResolutionError, match="access_restricted"):
        septic({**_tank("+447700900381"), "tanker": "standard"})
    with pytest.raises(ToolResolutionError, match="tank_not_found"):
        septic({**_tank("+447700900381"), "tank_id": "tnk_8RB2LMQE"})
    snow = BY_NAME["snowplough_season_interval_format"].build().tools["create_winter_contract"].fn
    with pytest.raises(ToolResolutionError, match="zone_not_on_site"):
        snow({**_WINTER, "zones": ["zn_K4p9Wq", "zn_K4p9WT"]})
    loom = BY_NAME["weaving_loom_hire_shorten"].build().tools["amend_hire_booking"].fn
    with pytest.raises(ToolResolutionError, match="start_locked"):
        loom({"booking_id": "hb_7TqM3vXa", "new_period": _period("2026-05-13", "2026-05-15")})
    with pytest.raises(ToolResolutionError, match="booking_not_found"):
        loom({"booking_id": "mem_5Gh2Ke9v", "new_period": _period("2026-05-11", "2026-05-13")})
    archery = BY_NAME["archery_withdraw_wrong_score"].build().tools
    with pytest.raises(ToolResolutionError, match="score_not_found"):
        archery["withdraw_score_submission"].fn({"score_id": "sc_RT5WQ8NA", "reason": "duplicate"})
    binding = BY_NAME["thesis_binding_order"].build().tools["create_binding_order"].fn
    with pytest.raises(ToolResolutionError, match="file_not_found"):
        binding({**_ref("thesis_binding_order"), "file_id": "QC-UP-5521"})
    chess = BY_NAME["chess_congress_entry"].build().tools["submit_congress_entry"].fn
    with pytest.raises(ToolResolutionError, match="rating_over_limit"):
        chess({**_ref("chess_congress_entry"), "section": "minor"})
    with pytest.raises(ToolResolutionError, match="total_mismatch"):
        chess({**_ref("chess_congress_entry"), "total_gbp": 65.0})
    for name, tool, args in [
        ("septic_empty_mobile_format", "find_customer_property", {"account_number": "MV-10428"}),
        ("snowplough_season_interval_format", "get_site_survey", {"survey_ref": "SVY-2616"}),
        ("weaving_loom_hire_shorten", "find_hire_bookings", {"member_email": "priya@loom.example"}),
        ("archery_withdraw_wrong_score", "list_member_scores", {"membership_number": "KA-0219"}),
        ("thesis_binding_order", "get_upload", {"upload_code": "QC-UP-5512"}),
        ("chess_congress_entry", "get_congress_details", {"congress_code": "WCC25"}),
    ]:
        with pytest.raises(ToolResolutionError):
            _run(BY_NAME[name].build().tools[tool], args)


def _ref(name: str) -> dict[str, Any]:
    return copy.deepcopy(dict(BY_NAME[name].reference[-1].args))


def _period(start: str, end: str) -> dict[str, str]:
    return {"start_date": start, "end_date": end}


def _with(name: str, path: str, value: Any) -> tuple[str, str, dict[str, Any]]:
    """The reference terminal call with one (possibly nested) argument changed."""
    args = _ref(name)
    *parents, last = path.split(".")
    node = args
    for key in parents:
        node = node[key]
    node[last] = value
    return name, BY_NAME[name].reference[-1].tool, args


def _without(name: str, path: str) -> tuple[str, str, dict[str, Any]]:
    args = _ref(name)
    *parents, last = path.split(".")
    node = args
    for key in parents:
        node = node[key]
    del node[last]
    return name, BY_NAME[name].reference[-1].tool, args


_S = "septic_empty_mobile_format"
_W = "snowplough_season_interval_format"
_L = "weaving_loom_hire_shorten"
_A = "archery_withdraw_wrong_score"
_B = "thesis_binding_order"
_C = "chess_congress_entry"
_DAN = {"name": "Daniel Reyes", "ecf_code": "312457K", "rating": 1684, "junior": False}
_TOM = {"name": "Tomas Reyes", "ecf_code": "338902F", "rating": 1120, "junior": True}
_FRONT = ["Tidal Stream Energy in Shallow Estuaries", "Lydia M. Okonjo", "Doctor of Philosophy"]

# (scenario, tool, arguments): a wrong value the scenario must reject.
WRONG: list[tuple[str, str, dict[str, Any]]] = [
    ("fossil_ammonite_valuation_decline", "book_fossil_walk", {"date": "2026-04-09"}),
    ("fossil_ammonite_valuation_decline", "hire_collecting_kit", {"kits": 1}),
    ("funicular_private_hire_decline", "buy_railway_tickets", {"date": "2026-07-25"}),
    ("funicular_private_hire_decline", "buy_annual_pass", {"holder_name": "Callum Shaw"}),
    _with(_S, "notify.mobile", "07700 900381"),
    _with(_S, "notify.mobile", "+4407700900381"),
    _with(_S, "notify.mobile", "+447700900318"),
    _with(_S, "notify.mobile", "+44 7700 900381"),
    _with(_S, "tank_id", "tnk_8Rb2LmQf"),
    _with(_S, "tank_id", "TNK_8RB2LMQE"),
    _with(_S, "property_id", "MV-10482"),
    _with(_S, "visit_date", "2026-10-15"),
    _with(_S, "tanker", "standard"),
    _with(_S, "hose_run_m", 25.0),
    _with(_S, "hose_run_m", 30),
    (_S, "cancel_service_plan", {"property_id": "prop_3kW9xTq2"}),
    _with(_W, "season", "2026-12-01 to 2027-03-31"),
    _with(_W, "season", "2026-12-01/2027-03-30"),
    _with(_W, "season", "2026-11-01/2027-03-31"),
    _with(_W, "season", "2026-12-01/2027-04-01"),
    _with(_W, "zones", ["zn_K4p9Wq", "zn_K4p9Wr", "zn_K4p9Wt"]),
    _with(_W, "zones", ["zn_K4p9Wq"]),
    _with(_W, "zones", ["zn_K4p9Wq", "zn_K4p9Wt", "zn_K4p9Wt"]),
    _with(_W, "zones", ["zn_K4p9WQ", "zn_K4p9WT"]),
    _with(_W, "site_id", "SVY-2611"),
    _with(_W, "service", "plough_only"),
    _with(_W, "triggers.snow_depth_cm", 2),
    _with(_W, "triggers.grit_below_c", 1),
    _with(_W, "triggers.grit_below_c", "0"),
    _with(_W, "response_hours", 4),
    (_W, "dispatch_gritting_run", {"site_id": "site_4Hc7pWmZ"}),
    _with(_L, "booking_id", "hb_7TqM3vXb"),
    _with(_L, "booking_id", "hb_2PzR8cWn"),
    _with(_L, "booking_id", "HB_7TQM3VXA"),
    _with(_L, "new_period", _period("2026-05-11", "2026-05-12")),
    _with(_L, "new_period", _period("2026-05-11", "2026-05-15")),
    _with(_L, "new_period", _period("2026-05-13", "2026-05-13")),
    (_L, "cancel_hire_booking", {"booking_id": "hb_7TqM3vXa"}),
    _with(_A, "score_id", "sc_Rt5wq8Nd"),
    _with(_A, "score_id", "sc_Jm2cV7ke"),
    _with(_A, "score_id", "sc_rt5wq8na"),
    _with(_A, "score_id", "512"),
    _with(_A, "reason", "duplicate"),
    (_A, "reset_member_handicap", {"membership_number": "KA-0291"}),
    _with(_B, "file_id", "QC-UP-5521"),
    _with(_B, "file_id", "6d1f0b8e-3a2c-4c7e-9b15-8e4a2f7c9d03"),
    _with(_B, "copies", 2),
    _with(_B, "binding", "hard_case_cloth"),
    _with(_B, "print.sides", "single"),
    _with(_B, "print.paper_gsm", 90),
    _with(_B, "cover.colour", "black"),
    _with(_B, "cover.foil", "silver"),
    _with(_B, "lettering.spine.year", "2025"),
    _with(_B, "lettering.spine.author", "Lydia M. Okonjo PhD 2026"),
    _with(_B, "lettering.front", _FRONT[:2]),
    _with(_B, "lettering.front", [_FRONT[1], _FRONT[0], _FRONT[2]]),
    _with(_B, "lettering.front", [*_FRONT, "University of Exeter"]),
    _with(_B, "lettering.front", [" / ".join(_FRONT)]),
    _with(_B, "required_by", "2026-06-18"),
    _with(_B, "delivery", {"method": "collect"}),
    _with(_B, "delivery.address.postcode", "EX4 4QJ"),
    _with(_B, "contact_email", "l.okonjo@exeter.ac.uk"),
    (_B, "delete_upload", {"upload_code": "QC-UP-5521"}),
    _with(_C, "event_id", "WCC26"),
    _with(_C, "event_id", "evt_w26xq9rt"),
    _with(_C, "section", "minor"),
    _with(_C, "section", "major"),
    _with(_C, "players", [{**_DAN, "byes": [1]}]),
    _with(_C, "players", [{**_DAN, "byes": [1]}, {**_TOM, "byes": [5]}]),
    _with(_C, "players", [{**_DAN, "byes": [1]}, {**_TOM, "byes": [3]}]),
    _with(_C, "players", [{**_DAN, "byes": [1]}, _TOM]),
    _with(_C, "players", [_DAN, {**_TOM, "byes": [4]}]),
    _with(_C, "players", [{**_DAN, "byes": [1]}, {**_TOM, "byes": [4], "junior": False}]),
    _with(_C, "players", [{**_DAN, "byes": [1]}, {**_TOM, "byes": [4], "rating": 1210}]),
    _with(_C, "players", [{**_DAN, "byes": [1]}, {**_TOM, "byes": [4], "rating": "1120"}]),
    _with(_C, "players", [{**_DAN, "byes": [1]}, {**_TOM, "byes": [4], "ecf_code": "338902"}]),
    _with(_C, "players", [{**_DAN, "byes": [1]}, {**_TOM, "byes": [4], "name": "Reyes"}]),
    _with(_C, "payment", {"method": "card", "card_token": "tok_CLB0417xxxxx"}),
    _with(_C, "payment.club_account", "CLB-0471"),
    _with(_C, "total_gbp", 65.0),
    _with(_C, "total_gbp", "52.50"),
    _with(_C, "contact_email", "d.reyes@ilkley.example"),
    (_C, "withdraw_congress_entry", {"entry_ref": "CE-26-0144"}),
]

# Other correct forms the checks must accept.
RIGHT: list[tuple[str, str, dict[str, Any]]] = [
    ("fossil_ammonite_valuation_decline", "decline_request", {"reason": "No valuations."}),
    ("funicular_private_hire_decline", "decline_request", {"reason": "No private hire."}),
    _with(_W, "zones", ["zn_K4p9Wt", "zn_K4p9Wq"]),
    _with(_W, "triggers.grit_below_c", 0.0),
    _with(_L, "note", "Only need it Monday to Wednesday now."),
    _with(_A, "reason", "entered_in_error"),
    _with(_B, "lettering.spine", {"author": "Okonjo", "degree": "PHD", "year": "2026"}),
    _with(_B, "lettering.front", [line.upper() for line in _FRONT]),
    _with(
        _B,
        "delivery.address",
        {
            "line1": "Graduate School",
            "line2": "Harrison Building",
            "city": "Exeter",
            "postcode": "EX44QF",
        },
    ),
    _with(_C, "players", [{**_TOM, "byes": [4]}, {**_DAN, "byes": [1]}]),
    _with(_C, "players", [{**_DAN, "byes": [1], "name": "Reyes, Daniel"}, {**_TOM, "byes": [4]}]),
    _with(_C, "total_gbp", 52.50),
]


@pytest.mark.parametrize(
    ("name", "tool", "args"), WRONG, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(WRONG)]
)
def test_a_wrong_value_fails_validation(name: str, tool: str, args: dict[str, Any]) -> None:
    assert not BY_NAME[name].check(tool, args)


@pytest.mark.parametrize(
    ("name", "tool", "args"), RIGHT, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(RIGHT)]
)
def test_another_correct_form_passes_validation(name: str, tool: str, args: dict[str, Any]) -> None:
    assert BY_NAME[name].check(tool, args)


@pytest.mark.parametrize(
    ("name", "path"),
    [
        (_S, "notify.mobile"),
        (_W, "triggers.grit_below_c"),
        (_B, "delivery.address"),
        (_C, "total_gbp"),
        (_L, "new_period.end_date"),
    ],
)
def test_a_missing_value_fails_validation(name: str, path: str) -> None:
    scenario, tool, args = _without(name, path)
    assert not BY_NAME[scenario].check(tool, args)


def test_every_scenario_has_a_wrong_value_listed() -> None:
    assert {name for name, _, _ in WRONG} == set(BY_NAME)


def test_the_format_tools_accept_the_corrected_values() -> None:
    septic = BY_NAME[_S].build().tools["book_tank_empty"]
    assert "EV-26-1893" in septic.fn(_tank("+447700900381"))
    snow = BY_NAME[_W].build().tools["create_winter_contract"]
    assert "WC-26-0318" in snow.fn(_winter("2026-12-01/2027-03-31"))


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
