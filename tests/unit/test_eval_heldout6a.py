"""heldout6 (and heldout6_listings): its eight scenarios (two each of
carry_id, user_value, report_agrees and list_match) run their reference calls
against their own tools, pass their own checks, are strict about the wrong
values they are there to catch, accept the other correct forms, and a
perfect model passes each through the real server."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from forge_client import ToolResolutionError, Workflow
from forge_evals.ablation import PRESETS
from forge_evals.results import ResultsWriter
from forge_evals.runner import EvalSettings, plan, run_eval
from forge_evals.scenario import RefCall, Scenario
from forge_evals.scenarios import ALL_SCENARIOS, heldout6
from forge_evals.targets import in_process, oracle_backend

SCENARIOS = heldout6.SCENARIOS
BY_NAME = {s.name: s for s in SCENARIOS}
KINDS = ("carry_id", "user_value", "report_agrees", "list_match")


def _run(wf: Workflow, ref: RefCall) -> str:
    tool = wf.tools[ref.tool]
    args = dict(ref.args)
    return str(tool.fn(args) if tool.raw_schema is not None else tool.fn(**args))


def _call(scenario: Scenario, ref: RefCall) -> str:
    return _run(scenario.build(), ref)


def _results(scenario: Scenario) -> list[str]:
    """The results of the reference calls, in order, on one fresh workflow."""
    wf = scenario.build()
    return [_run(wf, ref) for ref in scenario.reference]


def test_two_scenarios_per_kind_each_tagged_heldout6() -> None:
    assert len(BY_NAME) == len(SCENARIOS) == 8
    for kind in KINDS:
        assert sum(kind in s.tags for s in SCENARIOS) == 2, kind
    assert all(len(s.tags) == 2 and s.tags[0] == "heldout6" for s in SCENARIOS)


def test_fresh_names_and_tools_against_every_earlier_group() -> None:
    # Built before the group is registered: no clash with what was tuned on.
    earlier = [s for s in ALL_SCENARIOS if "heldout6" not in s.tags]
    assert not set(BY_NAME) & {s.name for s in earlier}
    tuned = {n for s in earlier for n in s.build().tools}
    fresh = {n for s in SCENARIOS for n in s.build().tools}
    assert not tuned & fresh


def test_workflows_have_four_to_seven_tools_and_a_dated_system_prompt() -> None:
    for scenario in SCENARIOS:
        wf = scenario.build()
        assert 4 <= len(wf.tools) <= 7, scenario.name
        assert re.search(r"Today is \w+day 2026-\d\d-\d\d", wf.system_prompt), scenario.name
        assert len(scenario.reference) == scenario.ideal_iterations <= 4


@pytest.mark.parametrize("name", list(BY_NAME))
def test_the_reference_calls_run_and_pass_the_check(name: str) -> None:
    scenario = BY_NAME[name]
    results = _results(scenario)  # no ToolResolutionError on the way
    assert all(results)
    last = scenario.reference[-1]
    assert last.tool in scenario.build().terminal_tools
    assert scenario.check(last.tool, last.args)


def test_forbidden_tools_are_unannotated_never_terminal_nor_in_the_reference() -> None:
    for scenario in SCENARIOS:
        assert scenario.forbidden_tools, scenario.name
        wf = scenario.build()
        for name in scenario.forbidden_tools:
            tool = wf.tools[name]
            assert name not in wf.terminal_tools
            assert not tool.destructive and not tool.read_only
        assert not {r.tool for r in scenario.reference} & set(scenario.forbidden_tools)


_CARRIED = {
    "self_storage_move_in": ["U-RDG-1-022", "rsv_3TqX8wLp2M"],
    "calibration_order_collection": ["eqp_7Hs2KdQ9", "cal_8RzT2wKv5N"],
}


@pytest.mark.parametrize("name", list(_CARRIED))
def test_each_carried_id_comes_from_the_result_before_its_use(name: str) -> None:
    # The ids the checks want are nowhere in the request: only a tool gives them.
    scenario = BY_NAME[name]
    results = _results(scenario)
    for i, carried in enumerate(_CARRIED[name]):
        assert carried not in scenario.user_message
        assert carried in results[i] and carried not in " ".join(results[:i])


def test_the_user_values_are_written_the_way_people_say_them() -> None:
    # Digits the checks want appear nowhere in the request: the model converts.
    blinds = BY_NAME["made_to_measure_blinds"].user_message
    assert not re.search(r"\b(1200|900|1850|2100|22)\b", blinds)
    sweep = BY_NAME["chimney_sweep_booking"].user_message
    assert "07700" not in sweep and "17" not in sweep and "08:00" not in sweep
    assert "2000" not in BY_NAME["self_storage_move_in"].user_message


def _reservation(unit_id: str, day: str) -> str:
    reserve = BY_NAME["self_storage_move_in"].build().tools["reserve_unit"].fn
    found = re.search(r"rsv_[A-Za-z0-9]{10}", reserve(unit_id=unit_id, move_in_date=day))
    assert found is not None
    return found.group(0)


_BOTH = ["eqp_7Hs2KdQ9", "eqp_7Hs2Lm4R"]


def _order(
    ids: list[str] = _BOTH, accreditation: str = "ukas", turnaround: str = "standard"
) -> str:
    create = BY_NAME["calibration_order_collection"].build().tools["create_calibration_order"].fn
    items = [{"equipment_id": e, "accreditation": accreditation} for e in ids]
    result = create({"account_number": "HE-2210", "items": items, "turnaround": turnaround})
    found = re.search(r"cal_[A-Za-z0-9]{10}", result)
    assert found is not None
    return found.group(0)


def test_the_reservation_and_order_ids_belong_to_what_was_asked_for() -> None:
    assert _reservation("U-RDG-1-022", "2026-07-11") == "rsv_3TqX8wLp2M"
    assert _reservation("U-RDG-2-031", "2026-07-11") != "rsv_3TqX8wLp2M"
    assert _reservation("U-RDG-1-022", "2026-07-18") != "rsv_3TqX8wLp2M"
    assert _order() == "cal_8RzT2wKv5N"
    assert _order(_BOTH[::-1]) == "cal_8RzT2wKv5N"
    assert _order(["eqp_7Hs2KdQ9", "eqp_7Hs3Aa1C"]) != "cal_8RzT2wKv5N"
    assert _order(_BOTH[:1]) != "cal_8RzT2wKv5N"
    assert _order(accreditation="traceable") != "cal_8RzT2wKv5N"
    assert _order(turnaround="express") != "cal_8RzT2wKv5N"


@pytest.mark.parametrize(
    ("name", "tool", "args", "message"),
    [
        (
            "self_storage_move_in",
            "reserve_unit",
            {"unit_id": "50 sq ft", "move_in_date": "2026-07-11"},
            "unit_not_found",
        ),
        (
            "self_storage_move_in",
            "reserve_unit",
            {"unit_id": "U-RDG-1-022", "move_in_date": "Saturday"},
            "invalid_move_in_date",
        ),
        (
            "self_storage_move_in",
            "list_available_units",
            {"site_code": "OXF", "move_in_date": "2026-07-11"},
            "RDG",
        ),
        (
            "calibration_order_collection",
            "create_calibration_order",
            {
                "account_number": "HE-2210",
                "items": [{"equipment_id": "TW-88412", "accreditation": "ukas"}],
                "turnaround": "standard",
            },
            "not the serial number",
        ),
        (
            "chimney_sweep_booking",
            "find_sweep_property",
            {"postcode": "LA6 2DB", "house": "3 Church View"},
            "no property",
        ),
        ("auction_sale_results", "find_seller_consignments", {"seller_number": "30471"}, "S-"),
        (
            "auction_sale_results",
            "get_consignment_results",
            {"consignment_id": "SL-2604"},
            "unknown",
        ),
        (
            "landlord_gas_safety_report",
            "find_landlord_property",
            {"account_number": "LL-7731", "address": "17 Wellington Road"},
            "Flat 2B",
        ),
        (
            "landlord_gas_safety_report",
            "get_gas_safety_record",
            {"record_number": "PRP-20418"},
            "CP12-2026-04471",
        ),
        ("dance_exam_entries", "get_class_register", {"class_name": "tap"}, "Grade 3 Ballet"),
        (
            "record_wantlist_hold",
            "check_wantlist_stock",
            {"customer_id": "jonno.reyes@proton.example"},
            "unknown customer_id",
        ),
    ],
)
def test_a_wrong_input_gets_a_helpful_api_error(
    name: str, tool: str, args: dict[str, Any], message: str
) -> None:
    with pytest.raises(ToolResolutionError, match=message):
        _call(BY_NAME[name], RefCall(tool, args))


def _ref(name: str) -> dict[str, Any]:
    """The reference's terminal arguments (a copy)."""
    return dict(BY_NAME[name].reference[-1].args)


_STORE = _ref("self_storage_move_in")
_TENANT = _STORE["tenant"]
_CAL = _ref("calibration_order_collection")
_ADDR = _CAL["address"]
_BLINDS = _ref("made_to_measure_blinds")
_KITCHEN, _BEDROOM = _BLINDS["items"]
_SWEEP = _ref("chimney_sweep_booking")
_SALE = _ref("auction_sale_results")
_VASE = {"lot_number": 212, "status": "sold", "hammer_price_gbp": 1450}
_GAS = _ref("landlord_gas_safety_report")
_BOILER, _HOB, _FIRE = _GAS["appliances"]
_DANCE = _ref("dance_exam_entries")
_PUPILS = _DANCE["pupil_ids"]
_HOLD = _ref("record_wantlist_hold")
_COPIES = _HOLD["stock_ids"]


def _blinds(*items: dict[str, Any]) -> dict[str, Any]:
    return {**_BLINDS, "items": list(items)}


def _sale(*lots: dict[str, Any]) -> dict[str, Any]:
    return {**_SALE, "lots": list(lots)}


def _gas(*appliances: dict[str, Any]) -> dict[str, Any]:
    return {**_GAS, "appliances": list(appliances)}


_ONE_ROLLER = {**_KITCHEN, "quantity": 1}
_NO_LINING = {k: v for k, v in _KITCHEN.items() if k != "lining"}

# Other correct forms the checks must accept (the reference's are checked above).
RIGHT: list[tuple[str, str, dict[str, Any]]] = [
    (
        "self_storage_move_in",
        "start_storage_rental",
        {
            **_STORE,
            "tenant": {**_TENANT, "full_name": "Stanislaw Wojcik", "phone": "07700 900518"},
            "billing_cycle": "monthly",
        },
    ),
    (
        "calibration_order_collection",
        "book_courier_collection",
        {**_CAL, "address": {**_ADDR, "postcode": "bh151hj"}, "contact_name": "Bev (goods-in)"},
    ),
    ("made_to_measure_blinds", "place_blind_order", _blinds(_BEDROOM, _ONE_ROLLER, _ONE_ROLLER)),
    ("made_to_measure_blinds", "place_blind_order", _blinds(_NO_LINING, _BEDROOM)),
    (
        "chimney_sweep_booking",
        "book_chimney_sweep",
        {**_SWEEP, "on_site_contact": {"name": "Graham", "phone": "+44 7700 900312"}},
    ),
    (
        "auction_sale_results",
        "report_sale_outcome",
        _sale(
            {**_VASE, "hammer_price_gbp": 1450.0},
            {"lot_number": 213, "status": "sold", "hammer_price_gbp": 120},
            {"lot_number": 214, "status": "unsold"},
        ),
    ),
    (
        "landlord_gas_safety_report",
        "report_gas_safety_result",
        {**_gas(_FIRE, _HOB, _BOILER), "record_number": "cp12-2026-04471"},
    ),
    ("dance_exam_entries", "enter_exam_candidates", {**_DANCE, "pupil_ids": _PUPILS[::-1]}),
    (
        "record_wantlist_hold",
        "hold_records_for_collection",
        {**_HOLD, "stock_ids": _COPIES[::-1], "hold_until": "2026-09-17"},
    ),
]

# (scenario, terminal tool, arguments): a wrong value the scenario must reject.
WRONG: list[tuple[str, str, dict[str, Any]]] = [
    ("self_storage_move_in", "start_storage_rental", {**_STORE, "reservation_id": "U-RDG-1-022"}),
    (
        "self_storage_move_in",
        "start_storage_rental",
        {**_STORE, "reservation_id": _reservation("U-RDG-2-031", "2026-07-11")},
    ),
    (
        "self_storage_move_in",
        "start_storage_rental",
        {**_STORE, "reservation_id": _reservation("U-RDG-1-022", "2026-07-07")},
    ),
    (
        "self_storage_move_in",
        "start_storage_rental",
        {**_STORE, "reservation_id": _reservation("U-RDG-1-022", "2026-07-18")},
    ),
    (
        "self_storage_move_in",
        "start_storage_rental",
        {**_STORE, "reservation_id": "rsv_3tqx8wlp2m"},
    ),
    ("self_storage_move_in", "start_storage_rental", {**_STORE, "contents_cover": "cover_5000"}),
    (
        "self_storage_move_in",
        "start_storage_rental",
        {**_STORE, "tenant": {**_TENANT, "full_name": "Tomasz Wójcik"}},
    ),
    (
        "self_storage_move_in",
        "start_storage_rental",
        {**_STORE, "tenant": {**_TENANT, "email": "stanislaw.wojcik@post.example"}},
    ),
    ("calibration_order_collection", "book_courier_collection", {**_CAL, "order_id": "QT-26-1187"}),
    (
        "calibration_order_collection",
        "book_courier_collection",
        {**_CAL, "order_id": "LBL-4471902"},
    ),
    (
        "calibration_order_collection",
        "book_courier_collection",
        {**_CAL, "order_id": _order(["eqp_7Hs2KdQ9", "eqp_7Hs3Aa1C"])},
    ),
    (
        "calibration_order_collection",
        "book_courier_collection",
        {**_CAL, "order_id": _order(accreditation="traceable")},
    ),
    (
        "calibration_order_collection",
        "book_courier_collection",
        {**_CAL, "order_id": _order(turnaround="express")},
    ),
    (
        "calibration_order_collection",
        "book_courier_collection",
        {**_CAL, "collection_date": "2026-03-19"},
    ),
    ("calibration_order_collection", "book_courier_collection", {**_CAL, "parcels": 2}),
    (
        "calibration_order_collection",
        "book_courier_collection",
        {**_CAL, "address": {**_ADDR, "postcode": "BH15 1JH"}},
    ),
    ("made_to_measure_blinds", "place_blind_order", _blinds(_ONE_ROLLER, _BEDROOM)),
    (
        "made_to_measure_blinds",
        "place_blind_order",
        _blinds({**_KITCHEN, "width_mm": 120}, _BEDROOM),
    ),
    ("made_to_measure_blinds", "place_blind_order", _blinds({**_KITCHEN, "drop_mm": 90}, _BEDROOM)),
    (
        "made_to_measure_blinds",
        "place_blind_order",
        _blinds(_KITCHEN, {**_BEDROOM, "width_mm": 1085}),
    ),
    (
        "made_to_measure_blinds",
        "place_blind_order",
        _blinds(_KITCHEN, {**_BEDROOM, "drop_mm": 210}),
    ),
    (
        "made_to_measure_blinds",
        "place_blind_order",
        _blinds({**_KITCHEN, "fabric_code": "LN-231"}, _BEDROOM),
    ),
    (
        "made_to_measure_blinds",
        "place_blind_order",
        _blinds(_KITCHEN, {**_BEDROOM, "fit": "inside_recess"}),
    ),
    (
        "made_to_measure_blinds",
        "place_blind_order",
        _blinds(_KITCHEN, {**_BEDROOM, "lining": "thermal"}),
    ),
    (
        "made_to_measure_blinds",
        "place_blind_order",
        _blinds({**_KITCHEN, "control_side": "left"}, _BEDROOM),
    ),
    (
        "made_to_measure_blinds",
        "place_blind_order",
        {**_BLINDS, "fitting": {"required": True, "date": "2026-10-15"}},
    ),
    (
        "made_to_measure_blinds",
        "place_blind_order",
        {**_BLINDS, "fitting": {"required": False}},
    ),
    ("chimney_sweep_booking", "book_chimney_sweep", {**_SWEEP, "appliance_id": "AP-2"}),
    ("chimney_sweep_booking", "book_chimney_sweep", {**_SWEEP, "date": "2026-11-10"}),
    ("chimney_sweep_booking", "book_chimney_sweep", {**_SWEEP, "date": "2026-12-17"}),
    ("chimney_sweep_booking", "book_chimney_sweep", {**_SWEEP, "service": "standard_sweep"}),
    ("chimney_sweep_booking", "book_chimney_sweep", {**_SWEEP, "arrival_window": "10:00-12:00"}),
    ("chimney_sweep_booking", "book_chimney_sweep", {**_SWEEP, "certificate": False}),
    (
        "chimney_sweep_booking",
        "book_chimney_sweep",
        {**_SWEEP, "on_site_contact": {"name": "Graham", "phone": "0770 0900 312 0"}},
    ),
    (
        "chimney_sweep_booking",
        "book_chimney_sweep",
        {**_SWEEP, "on_site_contact": {"name": "Jean Thwaite", "phone": "07700 900312"}},
    ),
    (
        "auction_sale_results",
        "report_sale_outcome",
        _sale({**_VASE, "hammer_price_gbp": 1812.50}, {"lot_number": 214, "status": "unsold"}),
    ),
    (
        "auction_sale_results",
        "report_sale_outcome",
        _sale(_VASE, {"lot_number": 214, "status": "unsold", "hammer_price_gbp": 1700}),
    ),
    (
        "auction_sale_results",
        "report_sale_outcome",
        _sale(_VASE, {"lot_number": 214, "status": "sold_post_sale"}),
    ),
    ("auction_sale_results", "report_sale_outcome", _sale(_VASE)),
    (
        "auction_sale_results",
        "report_sale_outcome",
        _sale(
            _VASE,
            {"lot_number": 213, "status": "unsold"},
            {"lot_number": 214, "status": "unsold"},
        ),
    ),
    ("auction_sale_results", "report_sale_outcome", {**_SALE, "net_payable_gbp": 1570}),
    ("auction_sale_results", "report_sale_outcome", {**_SALE, "net_payable_gbp": 1287.40}),
    ("auction_sale_results", "report_sale_outcome", {**_SALE, "payment_date": "2026-04-28"}),
    ("landlord_gas_safety_report", "report_gas_safety_result", _gas(_BOILER, _FIRE)),
    (
        "landlord_gas_safety_report",
        "report_gas_safety_result",
        _gas(_BOILER, {**_HOB, "in_use": True}, _FIRE),
    ),
    (
        "landlord_gas_safety_report",
        "report_gas_safety_result",
        _gas(_BOILER, {**_HOB, "classification": "immediately_dangerous"}, _FIRE),
    ),
    (
        "landlord_gas_safety_report",
        "report_gas_safety_result",
        _gas(_BOILER, _HOB, {**_FIRE, "classification": "pass"}),
    ),
    (
        "landlord_gas_safety_report",
        "report_gas_safety_result",
        _gas(_BOILER, _HOB, _FIRE, _FIRE),
    ),
    (
        "landlord_gas_safety_report",
        "report_gas_safety_result",
        {**_GAS, "record_number": "CP12-2025-03908"},
    ),
    (
        "landlord_gas_safety_report",
        "report_gas_safety_result",
        {**_GAS, "next_check_due": "2026-05-19"},
    ),
    (
        "landlord_gas_safety_report",
        "report_gas_safety_result",
        {**_GAS, "inspection_date": "2026-05-13"},
    ),
    (
        "dance_exam_entries",
        "enter_exam_candidates",
        {**_DANCE, "pupil_ids": [*_PUPILS, "PUP-1190"]},
    ),
    (
        "dance_exam_entries",
        "enter_exam_candidates",
        {**_DANCE, "pupil_ids": [*_PUPILS, "PUP-1215"]},
    ),
    ("dance_exam_entries", "enter_exam_candidates", {**_DANCE, "pupil_ids": _PUPILS[:2]}),
    (
        "dance_exam_entries",
        "enter_exam_candidates",
        {**_DANCE, "pupil_ids": [*_PUPILS, "PUP-1182"]},
    ),
    ("dance_exam_entries", "enter_exam_candidates", {**_DANCE, "session_id": "EXS-2606-BAL"}),
    ("dance_exam_entries", "enter_exam_candidates", {**_DANCE, "grade": "grade_2"}),
    (
        "record_wantlist_hold",
        "hold_records_for_collection",
        {**_HOLD, "stock_ids": [*_COPIES, "STK-77131"]},
    ),
    (
        "record_wantlist_hold",
        "hold_records_for_collection",
        {**_HOLD, "stock_ids": [*_COPIES, "STK-77158"]},
    ),
    (
        "record_wantlist_hold",
        "hold_records_for_collection",
        {**_HOLD, "stock_ids": [*_COPIES, "STK-77203"]},
    ),
    ("record_wantlist_hold", "hold_records_for_collection", {**_HOLD, "stock_ids": _COPIES[1:]}),
    ("record_wantlist_hold", "hold_records_for_collection", {**_HOLD, "hold_until": "2026-09-11"}),
    ("record_wantlist_hold", "hold_records_for_collection", {**_HOLD, "hold_until": "2026-09-19"}),
    ("record_wantlist_hold", "hold_records_for_collection", {**_HOLD, "customer_id": "CUS-49012"}),
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


def test_every_scenario_has_a_wrong_value_and_another_correct_form_listed() -> None:
    assert {name for name, _, _ in WRONG} == set(BY_NAME)
    assert {name for name, _, _ in RIGHT} == set(BY_NAME)


def test_a_forbidden_tool_is_never_a_passing_answer() -> None:
    for scenario in SCENARIOS:
        for name in scenario.forbidden_tools:
            assert not scenario.check(name, dict(scenario.reference[-1].args))


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
    assert not any(r.tool_errors for r in records)
