"""heldout8 (with heldout8_replies and heldout8_listings): its eight
scenarios (two each of carry_id, user_value, report_agrees and list_match)
run their reference calls against their own tools, pass their own checks, and
are strict about the wrong values they are there to catch."""

from __future__ import annotations

import re
from typing import Any

import pytest

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario
from forge_evals.scenarios import ALL_SCENARIOS, heldout8
from forge_evals.scenarios._domain_schema import HELDOUT8_TAG

SCENARIOS = heldout8.SCENARIOS
BY_NAME = {s.name: s for s in SCENARIOS}
KINDS = ("carry_id", "user_value", "report_agrees", "list_match")


def _run(wf: Workflow, ref: RefCall) -> str:
    tool = wf.tools[ref.tool]
    args = dict(ref.args)
    return str(tool.fn(args) if tool.raw_schema is not None else tool.fn(**args))


def _results(scenario: Scenario) -> list[str]:
    wf = scenario.build()
    return [_run(wf, ref) for ref in scenario.reference]


def test_two_scenarios_per_kind_each_tagged_heldout8() -> None:
    assert HELDOUT8_TAG == "heldout8"
    assert len(BY_NAME) == len(SCENARIOS) == 8
    for kind in KINDS:
        assert sum(kind in s.tags for s in SCENARIOS) == 2, kind
    assert all(len(s.tags) == 2 and s.tags[0] == HELDOUT8_TAG for s in SCENARIOS)


def test_fresh_names_and_tools_against_every_earlier_group() -> None:
    others = [s for s in ALL_SCENARIOS if HELDOUT8_TAG not in s.tags]
    assert not set(BY_NAME) & {s.name for s in others}
    taken = {n for s in others for n in s.build().tools}
    fresh = {n for s in SCENARIOS for n in s.build().tools}
    assert not taken & fresh, sorted(taken & fresh)


def test_workflows_have_four_to_seven_tools_and_a_dated_system_prompt() -> None:
    raw = 0
    for scenario in SCENARIOS:
        wf = scenario.build()
        assert wf.name == scenario.name
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
            tool = wf.tools[name]
            assert name not in wf.terminal_tools
            assert not tool.destructive and not tool.read_only
        assert not {r.tool for r in scenario.reference} & set(scenario.forbidden_tools)


_CARRIED = {
    "drone_roof_survey_airspace": ["site_3Fq8Lm2a", "FRZ-STN-26-7Q2K91"],
    "pet_cremation_casket_order": ["ADM-2611-0387", "CSK-OAK-M2"],
}


@pytest.mark.parametrize("name", list(_CARRIED))
def test_each_carried_id_comes_from_the_result_before_its_use(name: str) -> None:
    scenario = BY_NAME[name]
    results = _results(scenario)
    for i, carried in enumerate(_CARRIED[name]):
        assert carried not in scenario.user_message
        assert carried in results[i] and carried not in " ".join(results[:i])


def test_the_user_values_are_written_the_way_people_say_them() -> None:
    sailing = BY_NAME["dinghy_course_family_booking"].user_message
    assert not re.search(r"\b(44|11)\b|2026|RUN-", sailing)
    kayak = BY_NAME["kayak_hire_sunday_party"].user_message
    assert not re.search(r"10:15|\b[35]\b|2026|tandem", kayak)
    drone = BY_NAME["drone_roof_survey_airspace"].user_message
    assert "2026" not in drone and "12-08" not in drone
    organ = BY_NAME["organ_tuning_estimate_reply"].user_message
    assert not re.search(r"\d", organ)


def test_the_reported_values_come_from_the_results() -> None:
    organ = _results(BY_NAME["organ_tuning_estimate_reply"])
    assert "total 438.00 GBP" in organ[1] and "VAT at 20%" in organ[1]
    assert "2026-03-17" in organ[1]
    cake = _results(BY_NAME["wedding_cake_balance_query"])
    assert "balance 360.00 GBP due Saturday 2026-08-08" in cake[1]
    assert "AWAITING_SIGN_OFF" in cake[1]


def test_the_listed_items_come_from_the_results() -> None:
    bees = _results(BY_NAME["bee_supplies_national_backorder"])[1]
    for sku in ("HHB-FRM-N-DN4", "HHB-FND-N-BRD", "HHB-FND-N-SUP"):
        assert re.search(rf"{sku}: National .*OUT OF STOCK", bees)
    passes = _results(BY_NAME["cowork_pass_extensions"])[1]
    assert all(p in passes for p in ("DP-3310-A41", "DP-3310-A58", "DP-3310-C12"))


def test_a_wrong_input_gets_a_helpful_api_error() -> None:
    drone = BY_NAME["drone_roof_survey_airspace"].build().tools
    with pytest.raises(ToolResolutionError, match="atc_permission_required"):
        drone["book_survey_flight"].fn(
            {"site_id": "site_3Fq8Lm2a", "flight": {"date": "2026-12-08", "window": "morning"}}
        )
    with pytest.raises(ToolResolutionError, match="site_not_found"):
        drone["check_airspace"].fn(site_id="CL-HRW-0082", flight_date="2026-12-08")
    pet = BY_NAME["pet_cremation_casket_order"].build().tools
    with pytest.raises(ToolResolutionError, match="casket_size_mismatch"):
        pet["confirm_cremation"].fn(
            admission_id="ADM-2611-0387",
            cremation_type="individual",
            casket_sku="CSK-OAK-S1",
            return_method="collect",
        )
    with pytest.raises(ToolResolutionError, match="already_completed"):
        pet["confirm_cremation"].fn(
            admission_id="ADM-2610-0912",
            cremation_type="individual",
            casket_sku="CSK-OAK-M2",
            return_method="collect",
        )
    sailing = BY_NAME["dinghy_course_family_booking"].build().tools
    with pytest.raises(ToolResolutionError, match="run_full"):
        sailing["book_course_places"].fn({"run_id": "RUN-DL1-0620", "students": []})
    kayak = BY_NAME["kayak_hire_sunday_party"].build().tools
    with pytest.raises(ToolResolutionError, match="not_enough_seats"):
        kayak["book_kayak_hire"].fn({"boats": [{"type": "single", "count": 3}], "paddlers": 5})
    bees = BY_NAME["bee_supplies_national_backorder"].build().tools
    with pytest.raises(ToolResolutionError, match="in_stock"):
        bees["place_back_order"].fn({"lines": [{"sku": "HHB-FRM-N-SN4", "packs": 2}]})
    desks = BY_NAME["cowork_pass_extensions"].build().tools
    with pytest.raises(ToolResolutionError, match="pass_expired"):
        desks["extend_desk_passes"].fn(pass_ids=["DP-3310-A33"], months=1)


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


_TOM = {"full_name": "Tom Ridley", "age": 44, "wetsuit_size": "adult_l", "swimmer": True}
_ELLA = {"full_name": "Ella Ridley", "age": 11, "wetsuit_size": "child_m", "swimmer": True}
_T2, _S1 = {"type": "tandem", "count": 2}, {"type": "single", "count": 1}
_N_OUT = ["HHB-FRM-N-DN4", "HHB-FND-N-BRD", "HHB-FND-N-SUP"]


def _lines(skus: list[str], packs: int = 2) -> list[dict[str, Any]]:
    return [{"sku": s, "packs": packs} for s in skus]


_WRONG = [
    _with("drone_roof_survey_airspace", "site_id", "site_3Fq8Np7c"),
    _with("drone_roof_survey_airspace", "site_id", "CL-HRW-0082"),
    _with("drone_roof_survey_airspace", "atc_permission_ref", "FRZ-STN-26-7Q2L04"),
    _with("drone_roof_survey_airspace", "atc_permission_ref", "FRZ-XXX-00-XXXXXX"),
    _with("drone_roof_survey_airspace", "flight.date", "2026-12-01"),
    _with("drone_roof_survey_airspace", "flight.window", "all_day"),
    _with("drone_roof_survey_airspace", "flight.max_height_m", 120),
    _with("drone_roof_survey_airspace", "deliverables", ["inspection_report", "orthomosaic"]),
    _with("pet_cremation_casket_order", "admission_id", "ADM-2610-0912"),
    _with("pet_cremation_casket_order", "admission_id", "Bramble"),
    _with("pet_cremation_casket_order", "casket_sku", "CSK-OAK-S1"),
    _with("pet_cremation_casket_order", "casket_sku", "CSK-WIL-M2"),
    _with("pet_cremation_casket_order", "cremation_type", "communal"),
    _with("pet_cremation_casket_order", "return_method", "via_vet"),
    _with("dinghy_course_family_booking", "run_id", "RUN-DL1-0613"),
    _with("dinghy_course_family_booking", "students", [_TOM]),
    _with("dinghy_course_family_booking", "students", [_TOM, {**_ELLA, "age": 12}]),
    _with("dinghy_course_family_booking", "students", [_TOM, {**_ELLA, "wetsuit_size": "adult_s"}]),
    _with("dinghy_course_family_booking", "students", [{**_TOM, "wetsuit_size": "adult_m"}, _ELLA]),
    _with("dinghy_course_family_booking", "students", [_TOM, {**_ELLA, "swimmer": False}]),
    _with("dinghy_course_family_booking", "contact.mobile", "07700 900247"),
    _with("kayak_hire_sunday_party", "date", "2026-07-26"),
    _with("kayak_hire_sunday_party", "date", "2026-07-18"),
    _with("kayak_hire_sunday_party", "start_time", "10:45"),
    _with("kayak_hire_sunday_party", "start_time", "09:45"),
    _with("kayak_hire_sunday_party", "hours", 2),
    _with("kayak_hire_sunday_party", "boats", [{"type": "tandem", "count": 3}]),
    _with("kayak_hire_sunday_party", "boats", [{"type": "single", "count": 2}, _S1]),
    _with("kayak_hire_sunday_party", "paddlers", 3),
    _with("kayak_hire_sunday_party", "lead_contact.call_ahead", True),
    _with("organ_tuning_estimate_reply", "total_inc_vat_gbp", 365.00),
    _with("organ_tuning_estimate_reply", "vat_rate_percent", 0.2),
    _with("organ_tuning_estimate_reply", "earliest_visit_date", "2026-03-24"),
    _with("organ_tuning_estimate_reply", "estimate_id", "OTC-0219-SM"),
    _with("organ_tuning_estimate_reply", "message", "It comes to 365.00 GBP plus VAT."),
    _with("wedding_cake_balance_query", "balance_gbp", 640.00),
    _with("wedding_cake_balance_query", "balance_gbp", 480.00),
    _with("wedding_cake_balance_query", "balance_due_date", "2026-08-22"),
    _with("wedding_cake_balance_query", "design_status", "FINALISED"),
    _with("wedding_cake_balance_query", "message", "All paid up and finalised, see you soon."),
    _with("bee_supplies_national_backorder", "lines", _lines([*_N_OUT, "HHB-FRM-L-DP"])),
    _with("bee_supplies_national_backorder", "lines", _lines([*_N_OUT, "HHB-FRM-N-SN4"])),
    _with("bee_supplies_national_backorder", "lines", _lines(_N_OUT[:2])),
    _with("bee_supplies_national_backorder", "lines", _lines([*_N_OUT, "HHB-FRM-N-DN4"])),
    _with("bee_supplies_national_backorder", "lines", _lines(_N_OUT, packs=20)),
    _with("bee_supplies_national_backorder", "substitutions_allowed", True),
    _with("bee_supplies_national_backorder", "customer_id", "rhys.morgan@cymru-mail.example"),
    _with("cowork_pass_extensions", "pass_ids", ["DP-3310-A41", "DP-3310-A58", "DP-3310-B07"]),
    _with(
        "cowork_pass_extensions",
        "pass_ids",
        ["DP-3310-A41", "DP-3310-A58", "DP-3310-C12", "DP-3310-B07"],
    ),
    _with(
        "cowork_pass_extensions",
        "pass_ids",
        ["DP-3310-A41", "DP-3310-A58", "DP-3310-C12", "DP-3310-B19"],
    ),
    _with("cowork_pass_extensions", "pass_ids", ["DP-3310-A41", "DP-3310-C12"]),
    _with("cowork_pass_extensions", "pass_ids", ["A41", "A58", "C12"]),
    _with("cowork_pass_extensions", "months", 12),
]

_RIGHT = [
    _with("drone_roof_survey_airspace", "flight", {"date": "2026-12-08", "window": "morning"}),
    _with("drone_roof_survey_airspace", "deliverables", ["raw_images", "inspection_report"]),
    _with("pet_cremation_casket_order", "casket_sku", "csk-oak-m2"),
    _with("dinghy_course_family_booking", "students", [_ELLA, _TOM]),
    _with("dinghy_course_family_booking", "contact.mobile", "+44 7700 900274"),
    _with("kayak_hire_sunday_party", "boats", [_S1, _T2]),
    _with("kayak_hire_sunday_party", "boats", [_S1, {**_T2, "count": 1}, {**_T2, "count": 1}]),
    _with("organ_tuning_estimate_reply", "total_inc_vat_gbp", "438"),
    _with("wedding_cake_balance_query", "design_status", "awaiting sign-off"),
    _with("bee_supplies_national_backorder", "lines", _lines(_N_OUT[::-1])),
    _with("cowork_pass_extensions", "pass_ids", ["DP-3310-C12", "DP-3310-A41", "DP-3310-A58"]),
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
