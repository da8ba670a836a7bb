"""heldout13 (with heldout13_replies and heldout13_listings): its eight
scenarios (two each of carry_id, user_value, report_agrees and list_match)
run their reference calls against their own tools, pass their own checks, are
strict about the wrong values they are there to catch, accept the other
correct forms, and a perfect model passes each through the real server."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from forge_client import ToolResolutionError
from forge_evals.scenarios import heldout13
from forge_evals.scenarios._domain_schema import HELDOUT13_TAG
from tests.unit.heldout_group import (
    assert_carried_from_results,
    assert_forbidden_tools_sound,
    assert_fresh,
    assert_reference_passes,
    assert_two_per_kind,
    oracle_records,
    raw_schema_workflows,
    reference_results,
)

SCENARIOS = heldout13.SCENARIOS
BY_NAME = {s.name: s for s in SCENARIOS}
KINDS = ("carry_id", "user_value", "report_agrees", "list_match")

_results = reference_results

_FARRIER, _PRESS = "farrier_yard_round_booking", "letterpress_invitation_print_approval"
_CLAY, _BOARD = "clay_ground_have_a_go_booking", "surfboard_custom_shape_order"
_HAT, _HAWK = "millinery_commission_progress_reply", "falconry_hawk_walk_guest_reply"
_LATHE, _PUPPET = "wood_turning_bowl_class_bookings", "puppet_theatre_half_term_workshops"


def test_two_scenarios_per_kind_each_tagged_heldout13() -> None:
    assert HELDOUT13_TAG == "heldout13"
    assert_two_per_kind(SCENARIOS, HELDOUT13_TAG, KINDS)


def test_fresh_names_and_tools_against_every_earlier_group() -> None:
    assert_fresh(SCENARIOS, HELDOUT13_TAG, frozenset())


def test_workflows_have_four_to_seven_tools_and_a_dated_system_prompt() -> None:
    assert raw_schema_workflows(SCENARIOS) >= 3
    assert all(len(s.reference) <= 4 for s in SCENARIOS)


@pytest.mark.parametrize("name", list(BY_NAME))
def test_the_reference_calls_run_and_pass_the_check(name: str) -> None:
    assert_reference_passes(BY_NAME[name])


def test_forbidden_tools_are_never_terminal_nor_in_the_reference() -> None:
    assert_forbidden_tools_sound(SCENARIOS)


_CARRIED = {
    _FARRIER: ["HSE-4172", "FRV-50814"],
    _PRESS: ["LPO-20931", "apv-7c31e9d2"],
}


@pytest.mark.parametrize("name", list(_CARRIED))
def test_each_carried_id_comes_from_the_result_before_its_use(name: str) -> None:
    assert_carried_from_results(BY_NAME[name], _CARRIED[name])


def test_each_carried_id_has_a_distractor_of_the_same_shape_nearby() -> None:
    farrier = _results(BY_NAME[_FARRIER])
    assert "HSE-3391: Tansy, grey Welsh pony; SOLD 2025-09-30" in farrier[0]
    assert "HSE-4180: Moss, cob gelding; barefoot" in farrier[0]
    assert "FRV-50807: Thu 2026-05-07, COMPLETED" in farrier[1]
    assert "FRV-50828: Thu 2026-05-28, OPEN" in farrier[1]
    press = _results(BY_NAME[_PRESS])
    assert "LPO-19876: save-the-date cards, 80, DELIVERED" in press[0]
    assert "LPO-20958" in press[0] and "QUOTED" in press[0]
    assert "token apv-5b08aa47, VOID" in press[1] and "token apv-7c31e9d2, CURRENT" in press[1]


def test_the_user_values_are_written_the_way_people_say_them() -> None:
    clay = BY_NAME[_CLAY].user_message
    assert not re.search(r"\b(1|2|3|50|2026)\b|14:30|high_tower", clay)
    assert "half past two" in clay and "fifty clays" in clay and "fifteen-year-old" in clay
    board = BY_NAME[_BOARD].user_message
    assert not re.search(r"\d|five_fin|heavy_6_6|hopper", board)
    assert "six foot two" in board and "two and five-eighths" in board
    farrier = BY_NAME[_FARRIER].user_message
    assert not re.search(r"HSE-|FRV-|YD-|2026|reset_all_four", farrier)
    press = BY_NAME[_PRESS].user_message
    assert not re.search(r"LPO-|apv-|2026|proof 2", press)


def test_the_reported_values_come_from_the_results() -> None:
    hat = _results(BY_NAME[_HAT])[1]
    assert "Status IN_MAKING" in hat and "First fitting done Tue 2026-05-19" in hat
    assert "Final fitting Wed 2026-06-10 at 14:15 (45 min)" in hat
    assert "Ready to collect from Fri 2026-06-12" in hat and "= 645.00 GBP" in hat
    assert "Deposit 280.00 GBP" in hat and "balance 365.00 GBP" in hat
    hawk = _results(BY_NAME[_HAWK])[1]
    assert "Status CONFIRMED" in hawk and "Meet 09:40" in hawk and "sets off 10:00" in hawk
    assert "Children from 8 may fly" in hawk and "under-12s may not hold" in hawk
    assert "= 225.00 GBP" in hawk and "deposit 75.00 GBP" in hawk
    assert "balance 150.00 GBP" in hawk


def test_the_listed_items_come_from_the_results() -> None:
    lathe = _results(BY_NAME[_LATHE])[1]
    for line in (
        "- WT-3105: Tue 2026-03-03 18:30-21:30, Bowl turning: first bowls, with Gareth Lloyd, "
        "38.00 GBP, 2 left",
        "- WT-3117: Tue 2026-03-17 18:30-21:30, Bowl turning: natural-edge bowls, with Gareth "
        "Lloyd, 44.00 GBP, 1 left",
        "- WT-3121: Tue 2026-03-24 18:30-21:30, Bowl turning: first bowls, with Gareth Lloyd, "
        "38.00 GBP, 4 left",
        "- WT-3130: Wed 2026-03-25 18:30-21:00, Bowl turning: finishing and colouring, with "
        "Nia Probert, 36.00 GBP, 3 left",
        "- WT-3112: Tue 2026-03-10 18:30-21:30, Bowl turning: first bowls, with Gareth Lloyd, "
        "38.00 GBP, FULL",
        "- WT-3126: Tue 2026-03-31 18:30-21:30, Bowl turning: platters and shallow bowls, "
        "with Gareth Lloyd, 45.00 GBP, 2 left",
    ):
        assert line in lathe
    puppet = _results(BY_NAME[_PUPPET])[1]
    assert "half term, Powys schools: Mon 2026-02-16 to Fri 2026-02-20" in puppet
    for line in (
        "- PW-2216: Mon 2026-02-16, Sock puppets and voices, ages 4-8, 10 children's places left",
        "- PW-2218: Tue 2026-02-17, Shadow puppet theatre, ages 5-11, 9 children's places left",
        "- PW-2222: Thu 2026-02-19, Table-top puppets, ages 6-11, 12 children's places left",
        "- PW-2226: Fri 2026-02-20, Paper puppets and pop-ups, ages 5-8, 11 children's places left",
        "- PW-2217: Mon 2026-02-16, Marionette making, ages 6-12, 12 children's places left",
        "- PW-2221: Wed 2026-02-18, Glove puppet show in a day, ages 5-10, 6 children's "
        "places left",
    ):
        assert line in puppet


def test_a_wrong_input_gets_a_helpful_api_error() -> None:
    farrier = BY_NAME[_FARRIER].build().tools
    book = farrier["book_horse_onto_farrier_round"].fn
    reset = {"job": "reset_all_four"}
    with pytest.raises(ToolResolutionError, match="horse_sold"):
        book({"horse_id": "HSE-3391", "round_id": "FRV-50814", "work": reset})
    with pytest.raises(ToolResolutionError, match="barefoot_horse"):
        book({"horse_id": "HSE-4180", "round_id": "FRV-50814", "work": reset})
    with pytest.raises(ToolResolutionError, match="round_completed"):
        book({"horse_id": "HSE-4172", "round_id": "FRV-50807", "work": reset})
    with pytest.raises(ToolResolutionError, match="round_not_found"):
        book({"horse_id": "HSE-4172", "round_id": "2026-05-14", "work": reset})
    with pytest.raises(ToolResolutionError, match="yard_not_found"):
        farrier["list_yard_farrier_rounds"].fn(yard_id="Oakridge Livery")
    approve = BY_NAME[_PRESS].build().tools["approve_letterpress_print_run"].fn
    with pytest.raises(ToolResolutionError, match="token_void"):
        approve(order_id="LPO-20931", approval_token="apv-5b08aa47")
    with pytest.raises(ToolResolutionError, match="token_used"):
        approve(order_id="LPO-20931", approval_token="apv-1d44c0e8")
    with pytest.raises(ToolResolutionError, match="order_delivered"):
        approve(order_id="LPO-19876", approval_token="apv-7c31e9d2")
    with pytest.raises(ToolResolutionError, match="no_proof"):
        approve(order_id="LPO-20958", approval_token="apv-7c31e9d2")
    clay = BY_NAME[_CLAY].build().tools["book_clay_have_a_go"].fn
    ok_clay = dict(BY_NAME[_CLAY].reference[-1].args)
    with pytest.raises(ToolResolutionError, match="no_such_start"):
        clay(**{**ok_clay, "start_time": "02:30"})
    with pytest.raises(ToolResolutionError, match="layout_not_at_time"):
        clay(**{**ok_clay, "start_time": "14:00", "layout": "high_tower"})
    with pytest.raises(ToolResolutionError, match="no_such_pack"):
        clay(**{**ok_clay, "clays_per_shooter": 60})
    with pytest.raises(ToolResolutionError, match="juniors_need_adults"):
        clay(**{**ok_clay, "adults": 1, "juniors": 2})
    board = BY_NAME[_BOARD].build().tools["place_custom_surfboard_order"].fn
    ok_board: dict[str, Any] = dict(BY_NAME[_BOARD].reference[-1].args)
    with pytest.raises(ToolResolutionError, match="model_not_found"):
        board({**ok_board, "model": "Hopper 6'2"})
    with pytest.raises(ToolResolutionError, match="length_required"):
        board({**ok_board, "dimensions": {"width_in": 20.5, "thickness_in": 2.625}})
    hat = BY_NAME[_HAT].build().tools
    with pytest.raises(ToolResolutionError, match="commission_not_found"):
        hat["get_hat_commission"].fn(commission_ref="Ascot hat")
    hawk = BY_NAME[_HAWK].build().tools
    with pytest.raises(ToolResolutionError, match="booking_not_found"):
        hawk["get_falconry_booking"].fn(booking_ref="FX5012")
    lathe = BY_NAME[_LATHE].build().tools["book_wood_turning_classes"].fn
    ok_lathe: dict[str, Any] = dict(BY_NAME[_LATHE].reference[-1].args)
    with pytest.raises(ToolResolutionError, match="class_full"):
        lathe({**ok_lathe, "class_ids": ["WT-3112"]})
    with pytest.raises(ToolResolutionError, match="class_not_found"):
        lathe({**ok_lathe, "class_ids": ["2026-03-03"]})
    with pytest.raises(ToolResolutionError, match="student_not_found"):
        lathe({**ok_lathe, "student_id": "Owen Pryce"})
    reserve = BY_NAME[_PUPPET].build().tools["reserve_puppet_workshop_places"].fn
    with pytest.raises(ToolResolutionError, match="not_enough_places"):
        reserve(group_id="PTG-0419", workshop_ids=["PW-2221"], children=9, adults=3)
    with pytest.raises(ToolResolutionError, match="group_not_found"):
        reserve(group_id="Wyeside", workshop_ids=["PW-2216"], children=9, adults=3)
    with pytest.raises(ToolResolutionError, match="workshop_not_found"):
        reserve(group_id="PTG-0419", workshop_ids=["2026-02-16"], children=9, adults=3)


def _ref(name: str) -> dict[str, Any]:
    return dict(BY_NAME[name].reference[-1].args)


def _with(name: str, path: str, value: Any) -> dict[str, Any]:
    """The reference terminal call's arguments with one (possibly nested) argument changed."""
    args = _ref(name)
    keys = path.split(".")
    if len(keys) == 3:
        inner = dict(args[keys[0]])
        inner[keys[1]] = {**inner[keys[1]], keys[2]: value}
        args[keys[0]] = inner
    elif len(keys) == 2:
        args[keys[0]] = {**args[keys[0]], keys[1]: value}
    else:
        args[keys[0]] = value
    return args


def _rejects(name: str, wrong: list[dict[str, Any]]) -> None:
    scenario = BY_NAME[name]
    tool = scenario.reference[-1].tool
    accepted = [args for args in wrong if scenario.check(tool, args)]
    assert accepted == []


def test_farrier_rejects_the_wrong_horse_round_and_job() -> None:
    _rejects(
        _FARRIER,
        [
            _with(_FARRIER, "horse_id", "HSE-3391"),
            _with(_FARRIER, "horse_id", "HSE-4180"),
            _with(_FARRIER, "horse_id", "OW-2207"),
            _with(_FARRIER, "horse_id", "Juniper"),
            _with(_FARRIER, "horse_id", "hse-4172"),
            _with(_FARRIER, "round_id", "FRV-50807"),
            _with(_FARRIER, "round_id", "FRV-50828"),
            _with(_FARRIER, "round_id", "YD-114"),
            _with(_FARRIER, "round_id", "2026-05-14"),
            _with(_FARRIER, "work.job", "new_set_all_four"),
            _with(_FARRIER, "work.job", "reset_fronts"),
            _with(_FARRIER, "work", "reset_all_four"),
        ],
    )


def test_letterpress_rejects_the_wrong_order_and_token() -> None:
    _rejects(
        _PRESS,
        [
            _with(_PRESS, "order_id", "LPO-19876"),
            _with(_PRESS, "order_id", "LPO-20958"),
            _with(_PRESS, "order_id", "07700 900514"),
            _with(_PRESS, "approval_token", "apv-5b08aa47"),
            _with(_PRESS, "approval_token", "apv-1d44c0e8"),
            _with(_PRESS, "approval_token", "APV-7C31E9D2"),
            _with(_PRESS, "approval_token", "7c31e9d2"),
            _with(_PRESS, "approval_token", "Proof 2"),
        ],
    )


def test_clay_ground_rejects_the_wrong_day_time_party_and_clays() -> None:
    _rejects(
        _CLAY,
        [
            _with(_CLAY, "date", "2026-07-11"),
            _with(_CLAY, "date", "2026-07-08"),
            _with(_CLAY, "start_time", "14:00"),
            _with(_CLAY, "start_time", "02:30"),
            _with(_CLAY, "start_time", "16:00"),
            _with(_CLAY, "layout", "woodland_sporting"),
            _with(_CLAY, "layout", "skeet"),
            _with(_CLAY, "adults", 3),
            _with(_CLAY, "adults", 1),
            _with(_CLAY, "juniors", 0),
            _with(_CLAY, "juniors", 2),
            _with(_CLAY, "clays_per_shooter", 75),
            _with(_CLAY, "clays_per_shooter", 25),
            _with(_CLAY, "clays_per_shooter", 150),
            _with(_CLAY, "clays_per_shooter", "50 clays"),
            _with(_CLAY, "gun_hire", True),
            _with(_CLAY, "gun_hire", None),
            _with(_CLAY, "lead_name", "Long Mynd"),
        ],
    )


def test_surfboard_rejects_stock_dimensions_and_the_wrong_options() -> None:
    _rejects(
        _BOARD,
        [
            _with(_BOARD, "model", "driftwood_fish"),
            _with(_BOARD, "dimensions.length.inches", 0),
            _with(_BOARD, "dimensions.length.feet", 5),
            _with(_BOARD, "dimensions.length", {"feet": 6, "inches": 8}),
            _with(_BOARD, "dimensions.length", {"feet": 5, "inches": 8}),
            _with(_BOARD, "dimensions.width_in", 20.25),
            _with(_BOARD, "dimensions.width_in", 20),
            _with(_BOARD, "dimensions.width_in", 21),
            _with(_BOARD, "dimensions.thickness_in", 2.5),
            _with(_BOARD, "dimensions.thickness_in", 2.58),
            _with(_BOARD, "dimensions.thickness_in", 2.375),
            _with(_BOARD, "fins", "thruster"),
            _with(_BOARD, "fins", "quad"),
            _with(_BOARD, "tail", "squash"),
            _with(_BOARD, "glassing", "medium_6_4"),
            _with(_BOARD, "glassing", "light_4_4"),
            _with(_BOARD, "resin_tint", "sand"),
            _with(_BOARD, "resin_tint", None),
            _with(_BOARD, "customer_email", "kit@porthcurnick.example"),
        ],
    )


def test_milliner_rejects_the_wrong_commission_status_fitting_and_balance() -> None:
    _rejects(
        _HAT,
        [
            _with(_HAT, "commission_ref", "MIL-2290"),
            _with(_HAT, "commission_ref", "MIL-2631"),
            _with(_HAT, "status", "READY_TO_COLLECT"),
            _with(_HAT, "status", "DELIVERED"),
            _with(_HAT, "final_fitting.date", "2026-05-19"),
            _with(_HAT, "final_fitting.date", "2026-06-12"),
            _with(_HAT, "final_fitting.date", "2026-06-18"),
            _with(_HAT, "final_fitting.time", "15:00"),
            _with(_HAT, "final_fitting.time", "14:45"),
            _with(_HAT, "final_fitting.time", "02:15"),
            _with(_HAT, "balance_due.amount", 645.00),
            _with(_HAT, "balance_due.amount", 280.00),
            _with(_HAT, "balance_due.amount", 560.00),
            _with(_HAT, "balance_due.amount", 390.00),
            _with(_HAT, "balance_due.amount", 85.00),
            _with(_HAT, "balance_due.currency", "EUR"),
        ],
    )


def test_falconry_rejects_the_wrong_booking_flag_and_message() -> None:
    _rejects(
        _HAWK,
        [
            _with(_HAWK, "booking_ref", "FX-4477"),
            _with(_HAWK, "booking_ref", "FX-5038"),
            _with(_HAWK, "status", "CANCELLED"),
            _with(_HAWK, "experience_date", "2026-04-22"),
            _with(_HAWK, "experience_date", "2026-06-13"),
            _with(_HAWK, "child_may_fly", False),
            _with(_HAWK, "child_may_fly", "yes"),
            _with(_HAWK, "message", "Please arrive by 10:00. The balance is 150.00 GBP."),
            _with(_HAWK, "message", "Meet at 09:40. You owe 225.00 GBP."),
            _with(_HAWK, "message", "Meet at 09:40; 75.00 GBP deposit paid, 85.00 per adult."),
            _with(_HAWK, "message", "Meet at the mews at 09:40 for the safety talk."),
            _with(_HAWK, "message", "The balance is 150.00 GBP, payable on the day."),
        ],
    )


_OK_CLASSES = ["WT-3105", "WT-3117", "WT-3121", "WT-3130"]


def test_wood_turning_rejects_a_class_too_many_or_too_few() -> None:
    wrong_ids = [
        [*_OK_CLASSES, extra]
        for extra in (
            "WT-3101",
            "WT-3107",
            "WT-3110",
            "WT-3112",
            "WT-3114",
            "WT-3119",
            "WT-3124",
            "WT-3126",
            "WT-3128",
        )
    ]
    wrong_ids += [_OK_CLASSES[:3], _OK_CLASSES[1:], [*_OK_CLASSES, "WT-3105"]]
    _rejects(
        _LATHE,
        [_with(_LATHE, "class_ids", ids) for ids in wrong_ids]
        + [
            _with(_LATHE, "student_id", "Owen Pryce"),
            _with(_LATHE, "equipment.gouges", "hire_set"),
        ],
    )


_OK_WORKSHOPS = ["PW-2216", "PW-2218", "PW-2222", "PW-2226"]


def test_puppet_theatre_rejects_a_workshop_too_many_or_too_few() -> None:
    wrong_ids = [
        [*_OK_WORKSHOPS, extra]
        for extra in (
            "PW-2211",
            "PW-2217",
            "PW-2219",
            "PW-2221",
            "PW-2224",
            "PW-2225",
            "PW-2230",
        )
    ]
    wrong_ids += [_OK_WORKSHOPS[:3], _OK_WORKSHOPS[1:], [*_OK_WORKSHOPS, "PW-2216"]]
    _rejects(
        _PUPPET,
        [_with(_PUPPET, "workshop_ids", ids) for ids in wrong_ids]
        + [
            _with(_PUPPET, "group_id", "Wyeside Home Educators"),
            _with(_PUPPET, "children", 12),
            _with(_PUPPET, "children", 8),
            _with(_PUPPET, "adults", 0),
            _with(_PUPPET, "adults", 12),
        ],
    )


_RIGHT = [
    (_FARRIER, _with(_FARRIER, "horse_id", " HSE-4172 ")),
    (_FARRIER, _with(_FARRIER, "work", {"job": "reset_all_four", "notes": "Same shoes."})),
    (_PRESS, _with(_PRESS, "approval_token", " apv-7c31e9d2")),
    (_CLAY, _with(_CLAY, "start_time", "14:30 ")),
    (_CLAY, _with(_CLAY, "layout", "High_Tower")),
    (_CLAY, _with(_CLAY, "lead_name", "Mr Rees")),
    (_BOARD, _with(_BOARD, "dimensions.thickness_in", 2.63)),
    (_BOARD, _with(_BOARD, "dimensions.width_in", 20.50)),
    (_BOARD, _with(_BOARD, "customer_email", "Kit.Trevanion@kernowpost.example")),
    (_HAT, _with(_HAT, "status", "in_making")),
    (_HAT, _with(_HAT, "balance_due.amount", "365")),
    (_HAT, _with(_HAT, "balance_due.currency", "gbp")),
    (_HAWK, _with(_HAWK, "status", "Confirmed")),
    (_HAWK, _with(_HAWK, "message", "Be at the mews by 9:40 (walk 10:00); 150 GBP to pay.")),
    (_HAWK, _with(_HAWK, "message", "Arrive at twenty to ten. Balance: £150 (of 225).")),
    (_LATHE, _with(_LATHE, "class_ids", _OK_CLASSES[::-1])),
    (_LATHE, _with(_LATHE, "student_id", "WTS-0388 ")),
    (_PUPPET, _with(_PUPPET, "workshop_ids", _OK_WORKSHOPS[::-1])),
]


@pytest.mark.parametrize(("name", "args"), _RIGHT)
def test_another_correct_form_passes_validation(name: str, args: dict[str, Any]) -> None:
    scenario = BY_NAME[name]
    assert scenario.check(scenario.reference[-1].tool, args)


def test_a_forbidden_tool_is_never_a_passing_answer() -> None:
    for scenario in SCENARIOS:
        args = dict(scenario.reference[-1].args)
        for name in scenario.forbidden_tools:
            assert not scenario.check(name, args)


async def test_the_oracle_passes_each_through_the_server(tmp_path: Path) -> None:
    records = await oracle_records(SCENARIOS, tmp_path)
    assert not any(r.tool_errors for r in records)
