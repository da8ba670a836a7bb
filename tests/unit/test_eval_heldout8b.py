"""heldout8_part2 (and heldout8_part2_forms): its eight scenarios (two each of
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
from forge_evals.scenarios.heldout8_part2 import HELDOUT8_TAG, SCENARIOS
from forge_evals.targets import in_process, oracle_backend

BY_NAME = {s.name: s for s in SCENARIOS}
KINDS = ("decline", "format_retry", "destructive", "schema")
FORMAT_RETRY = {"seed_deposit_coordinates_format", "livery_ueln_format"}


def _run(tool: Tool, args: dict[str, Any]) -> Any:
    # A raw-schema tool takes the arguments dict; a function tool, keywords.
    return tool.fn(dict(args)) if tool.raw_schema is not None else tool.fn(**args)


def test_two_scenarios_per_kind_each_tagged_heldout8() -> None:
    assert HELDOUT8_TAG == "heldout8"
    assert len(BY_NAME) == len(SCENARIOS) == 8
    for kind in KINDS:
        assert sum(kind in s.tags for s in SCENARIOS) == 2, kind
    assert all(s.tags == (HELDOUT8_TAG, s.tags[1]) and s.tags[1] in KINDS for s in SCENARIOS)


def test_fresh_names_and_tools_against_every_earlier_group() -> None:
    earlier = [s for s in ALL_SCENARIOS if HELDOUT8_TAG not in s.tags]
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
    [("falconry_pigeon_control_decline", "hawk"), ("observatory_star_naming_decline", "telescope")],
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
    assert BY_NAME["car_club_cancel_van"].forbidden_tools == ("end_membership",)
    assert BY_NAME["vinyl_pressing_drop_variant"].forbidden_tools == ("cancel_pressing_order",)


def test_carried_ids_come_from_a_tool_result_not_the_user() -> None:
    carried = {
        "seed_deposit_coordinates_format": ["col_5bN7yQ2k", "LP-2026-014"],
        "livery_ueln_format": ["STB-S11"],
        "car_club_cancel_van": ["res_9Vd2KqLm"],
        "vinyl_pressing_drop_variant": ["ln_3Fq8TzWa", "ln_3Fq8TzWb"],
        "stained_glass_window_work_order": ["W3-A1", "W3-B1", "W3-C1"],
        "roof_storm_damage_inspection": ["2026-02-12T13:00:00+00:00"],
    }
    for name, ids in carried.items():
        scenario = BY_NAME[name]
        tools = scenario.build().tools
        first = str(_run(tools[scenario.reference[0].tool], scenario.reference[0].args))
        for value in ids:
            assert value not in scenario.user_message and value in first, (name, value)


_DEPOSIT = dict(BY_NAME["seed_deposit_coordinates_format"].reference[-1].args)
_LIVERY = dict(BY_NAME["livery_ueln_format"].reference[-1].args)


def _deposit(coordinates: str) -> dict[str, Any]:
    return {**_DEPOSIT, "site": {**_DEPOSIT["site"], "coordinates": coordinates}}


def _livery(ueln: str) -> dict[str, Any]:
    return {**_LIVERY, "horse": {**_LIVERY["horse"], "passport_ueln": ueln}}


_SEED = ("seed_deposit_coordinates_format", "register_seed_deposit")
_HORSE = ("livery_ueln_format", "register_livery_horse")


@pytest.mark.parametrize(
    ("name", "tool", "args", "expected"),
    [
        (*_SEED, _deposit("N 50.9712, W 0.8853"), "LAT,LON"),
        (*_SEED, _deposit("50°58'16\"N 0°53'07\"W"), "degree signs"),
        (*_SEED, _deposit("SU 799 183"), "decimal degrees"),
        (*_HORSE, _livery("826 002 100417239"), "no spaces"),
        (*_HORSE, _livery("826-002-100417239"), "dashes"),
        (*_HORSE, _livery("82600210041723"), "15 characters"),
    ],
)
def test_the_format_error_names_the_expected_format(
    name: str, tool: str, args: dict[str, Any], expected: str
) -> None:
    fn = BY_NAME[name].build().tools[tool].fn
    with pytest.raises(ToolResolutionError, match=expected):
        fn(args)


def test_the_tools_refuse_other_wrong_inputs_with_an_api_error() -> None:
    livery = BY_NAME["livery_ueln_format"].build().tools["register_livery_horse"].fn
    with pytest.raises(ToolResolutionError, match="stable_unavailable"):
        livery({**_LIVERY, "stable_id": "STB-S07"})
    car = BY_NAME["car_club_cancel_van"].build().tools["cancel_vehicle_reservation"].fn
    with pytest.raises(ToolResolutionError, match="reservation_not_found"):
        car({"reservation_id": "res_9VD2KQLM", "reason": "plans_changed"})
    amend = BY_NAME["vinyl_pressing_drop_variant"].build().tools["amend_pressing_order"].fn
    with pytest.raises(ToolResolutionError, match="multiple of 100"):
        amend({"order_ref": "PO-26-0731", "changes": [_set_black(750)]})
    glass = BY_NAME["stained_glass_window_work_order"].build().tools
    with pytest.raises(ToolResolutionError, match="quarries_to_replace"):
        glass["create_conservation_work_order"].fn(
            _glass(panels=[{"panel_ref": "W3-A1", "treatments": ["replace_quarries"]}])
        )
    with pytest.raises(ToolResolutionError, match="panel_not_in_survey"):
        glass["create_conservation_work_order"].fn(
            _glass(panels=[{"panel_ref": "W4-A1", "treatments": ["relead"]}])
        )
    roof = BY_NAME["roof_storm_damage_inspection"].build().tools["book_roof_inspection"].fn
    with pytest.raises(ToolResolutionError, match="slot_unavailable"):
        roof(_roof(slot_start="2026-02-12T14:00:00+00:00"))
    with pytest.raises(ToolResolutionError, match="method_mismatch"):
        roof(_roof(slot_start="2026-02-12T08:30:00+00:00"))
    for name, tool, args in [
        ("seed_deposit_coordinates_format", "find_collector", {"collector_code": "C-0383"}),
        ("car_club_cancel_van", "list_member_reservations", {"member_number": "CC-20471"}),
        ("vinyl_pressing_drop_variant", "get_pressing_order", {"order_ref": "PO-26-0713"}),
        ("stained_glass_window_work_order", "get_condition_survey", {"survey_ref": "CS-26-0481"}),
        (
            "roof_storm_damage_inspection",
            "find_inspection_slots",
            {"postcode": "GL1 2AB", "inspection_type": "storm_damage"},
        ),
    ]:
        with pytest.raises(ToolResolutionError):
            _run(BY_NAME[name].build().tools[tool], args)


def _ref(name: str) -> dict[str, Any]:
    return copy.deepcopy(dict(BY_NAME[name].reference[-1].args))


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


def _set_black(quantity: Any) -> dict[str, Any]:
    return {"action": "set_quantity", "line_id": "ln_3Fq8TzWa", "quantity": quantity}


_DROP_BLUE = {"action": "remove_line", "line_id": "ln_3Fq8TzWb"}


def _glass(**changes: Any) -> dict[str, Any]:
    return {**_ref("stained_glass_window_work_order"), **changes}


def _roof(**changes: Any) -> dict[str, Any]:
    return {**_ref("roof_storm_damage_inspection"), **changes}


_A1 = {"panel_ref": "W3-A1", "treatments": ["replace_quarries"], "quarries_to_replace": 4}
_B1 = {"panel_ref": "W3-B1", "treatments": ["relead"]}
_C1 = {"panel_ref": "W3-C1", "treatments": ["relead", "replace_quarries"], "quarries_to_replace": 2}
_SLATE = {"name": "main roof", "covering": "natural_slate"}
_FELT = {"name": "kitchen extension", "covering": "flat_felt"}
_PROP = "roof_storm_damage_inspection"
_GLASS = "stained_glass_window_work_order"

# (scenario, tool, arguments): a wrong value the scenario must reject.
WRONG: list[tuple[str, str, dict[str, Any]]] = [
    ("falconry_pigeon_control_decline", "book_flying_display", {"event_name": "Pigeons"}),
    ("falconry_pigeon_control_decline", "book_hawk_walk", {"date": "2026-03-16", "people": 1}),
    ("observatory_star_naming_decline", "buy_observatory_voucher", {"product": "star"}),
    ("observatory_star_naming_decline", "book_telescope_session", {"hours": 1}),
    _with("seed_deposit_coordinates_format", "site.coordinates", "N 50.9712, W 0.8853"),
    _with("seed_deposit_coordinates_format", "site.coordinates", "50.9712,0.8853"),
    _with("seed_deposit_coordinates_format", "site.coordinates", "-0.8853,50.9712"),
    _with("seed_deposit_coordinates_format", "site.coordinates", "50.97,-0.89"),
    _with("seed_deposit_coordinates_format", "permit_ref", "LP-2026-022"),
    _with("seed_deposit_coordinates_format", "collector_id", "C-0388"),
    _with("seed_deposit_coordinates_format", "collector_id", "col_5BN7YQ2K"),
    _with("seed_deposit_coordinates_format", "collection_date", "2026-07-02"),
    _with("seed_deposit_coordinates_format", "seed_count", 2000),
    _with("seed_deposit_coordinates_format", "seed_count", "2400"),
    _with("seed_deposit_coordinates_format", "site.habitat", "hay_meadow"),
    ("seed_deposit_coordinates_format", "retire_accession", _DEPOSIT),
    _with("livery_ueln_format", "horse.passport_ueln", "826 002 100417239"),
    _with("livery_ueln_format", "horse.passport_ueln", "826002ABC123456"),
    _with("livery_ueln_format", "stable_id", "STB-S07"),
    _with("livery_ueln_format", "stable_id", "STB-N04"),
    _with("livery_ueln_format", "start_date", "2026-03-20"),
    _with("livery_ueln_format", "livery_type", "full"),
    _with("livery_ueln_format", "horse.height_hands", "16.4"),
    _with("livery_ueln_format", "horse.sex", "gelding"),
    _with("livery_ueln_format", "owner.email", "hannah.cole@greenmail.com"),
    ("livery_ueln_format", "give_livery_notice", {"stable_id": "STB-S11"}),
    _with("car_club_cancel_van", "reservation_id", "res_9Vd2KqPx"),
    _with("car_club_cancel_van", "reservation_id", "res_4Tn8WcJe"),
    _with("car_club_cancel_van", "reservation_id", "RES_9VD2KQLM"),
    _with("car_club_cancel_van", "reservation_id", "CC-20417"),
    _with("car_club_cancel_van", "reason", "vehicle_unsuitable"),
    ("car_club_cancel_van", "end_membership", {"account_id": "acct_Lm3vR8pZ"}),
    _with("vinyl_pressing_drop_variant", "changes", [_DROP_BLUE]),
    _with("vinyl_pressing_drop_variant", "changes", [_DROP_BLUE, _set_black(1000)]),
    _with("vinyl_pressing_drop_variant", "changes", [_DROP_BLUE, _set_black(200)]),
    _with("vinyl_pressing_drop_variant", "changes", [_DROP_BLUE, _set_black("700")]),
    _with(
        "vinyl_pressing_drop_variant",
        "changes",
        [{"action": "remove_line", "line_id": "ln_3Fq8TzWa"}, _set_black(700)],
    ),
    _with(
        "vinyl_pressing_drop_variant",
        "changes",
        [{"action": "set_quantity", "line_id": "ln_3Fq8TzWb", "quantity": 0}, _set_black(700)],
    ),
    _with("vinyl_pressing_drop_variant", "changes", [_DROP_BLUE, _set_black(700), _DROP_BLUE]),
    _with("vinyl_pressing_drop_variant", "order_ref", "FNL-031"),
    ("vinyl_pressing_drop_variant", "cancel_pressing_order", {"order_ref": "PO-26-0731"}),
    _with("stained_glass_window_work_order", "panels", [_A1, _B1]),
    _with(
        "stained_glass_window_work_order",
        "panels",
        [_A1, _B1, _C1, {"panel_ref": "W3-B2", "treatments": ["clean"]}],
    ),
    _with(
        "stained_glass_window_work_order", "panels", [{**_A1, "quarries_to_replace": 2}, _B1, _C1]
    ),
    _with(
        "stained_glass_window_work_order", "panels", [_A1, _B1, {**_C1, "treatments": ["relead"]}]
    ),
    _with("stained_glass_window_work_order", "panels", [{**_A1, "panel_ref": "W3-A2"}, _B1, _C1]),
    _with("stained_glass_window_work_order", "protective_glazing", True),
    _with("stained_glass_window_work_order", "consent", {"kind": "not_required"}),
    _with(
        "stained_glass_window_work_order",
        "consent",
        {"kind": "listed_building_consent", "reference": "FAC-2026-0117"},
    ),
    _with("stained_glass_window_work_order", "consent.reference", "FAC-2026-117"),
    _with("stained_glass_window_work_order", "removal_date", "2026-07-14"),
    _with("stained_glass_window_work_order", "survey_ref", "CS-26-0417"),
    _with(_PROP, "slot_start", "2026-02-12T08:30:00+00:00"),
    _with(_PROP, "slot_start", "2026-02-13T10:00:00+00:00"),
    _with(_PROP, "slot_start", "2026-02-12T13:00:00"),
    _with(_PROP, "slot_start", "2026-02-12T13:00:00+01:00"),
    _with(_PROP, "method", "ladder"),
    _with(_PROP, "inspection_type", "leak_investigation"),
    _with(_PROP, "property.storeys", 2),
    _with(_PROP, "property.postcode", "BS6 6RH"),
    _with(_PROP, "property.roof_sections", [_SLATE]),
    _with(_PROP, "property.roof_sections", [_SLATE, {**_FELT, "covering": "flat_epdm"}]),
    _with(_PROP, "insurance.claim_id", "3f9c2a17-8b4e-4d2a-9f61-0c7e5b2d8a34"),
    _with(_PROP, "insurance.insurer", "other"),
    _with(_PROP, "water_coming_in", False),
    _with(_PROP, "notify", {"email": "lucy.brennan@inboxmail.example", "sms": "+447700900123"}),
    (_PROP, "order_emergency_tarp", {"address": "27 Cotham Vale"}),
]

# Other correct forms the checks must accept.
RIGHT: list[tuple[str, str, dict[str, Any]]] = [
    ("falconry_pigeon_control_decline", "decline_request", {"reason": "No pest control."}),
    ("observatory_star_naming_decline", "decline_request", {"reason": "No star names."}),
    _with("seed_deposit_coordinates_format", "site.coordinates", "50.9712, -0.8853"),
    _with("seed_deposit_coordinates_format", "site.coordinates", "50.97120,-0.88530"),
    _with("seed_deposit_coordinates_format", "permit_ref", "lp-2026-014"),
    _with("seed_deposit_coordinates_format", "taxon", {"genus": "primula", "species": "Veris"}),
    _with("livery_ueln_format", "owner.name", "Hannah  Cole"),
    _with("livery_ueln_format", "horse.name", "willow"),
    _with("car_club_cancel_van", "reason", "other"),
    _with("vinyl_pressing_drop_variant", "changes", [_set_black(700), _DROP_BLUE]),
    _with("vinyl_pressing_drop_variant", "note", "Blue variant dropped by the label."),
    _with("vinyl_pressing_drop_variant", "order_ref", "po-26-0731"),
    _with(_GLASS, "panels", [_C1, {**_B1, "quarries_to_replace": 0}, _A1]),
    _with(
        "stained_glass_window_work_order",
        "panels",
        [_A1, _B1, {**_C1, "treatments": ["replace_quarries", "relead"]}],
    ),
    _with(_PROP, "slot_start", "2026-02-12T13:00:00Z"),
    _with(_PROP, "slot_start", "2026-02-12T14:00:00+01:00"),
    _with(_PROP, "property.postcode", "BS66HR"),
    _with(_PROP, "property.roof_sections", [_FELT, {**_SLATE, "name": "main"}]),
    _with(_PROP, "property.address_line1", "27 Cotham Vale, Bristol"),
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


def test_a_missing_claim_id_fails_validation() -> None:
    name, tool, args = _without(_PROP, "insurance.claim_id")
    assert not BY_NAME[name].check(tool, args)


def test_every_scenario_has_a_wrong_value_listed() -> None:
    assert {name for name, _, _ in WRONG} == set(BY_NAME)


def test_the_format_tools_accept_the_corrected_values() -> None:
    register = BY_NAME["seed_deposit_coordinates_format"].build().tools["register_seed_deposit"]
    assert "WNSB-26-0417" in register.fn(_deposit("50.9712, -0.8853"))
    livery = BY_NAME["livery_ueln_format"].build().tools["register_livery_horse"]
    assert "LV-26-0093" in livery.fn(_livery("826002100417239"))


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
