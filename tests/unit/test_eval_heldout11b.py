"""heldout11_part2 (and heldout11_part2_forms): its eight scenarios (two each
of decline, format_retry, destructive and schema) run their reference calls
against their own tools, pass their own checks, are strict about the wrong
values they are there to catch (one test per scenario), accept the other
correct forms, their tools' errors name the format the retry must use, and a
perfect model passes each through the real server."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest

from forge_client import ToolResolutionError
from forge_evals.scenarios.heldout11_part2 import HELDOUT11_TAG, SCENARIOS
from tests.unit.heldout_group import (
    assert_forbidden_tools_sound,
    assert_fresh,
    assert_shares_topic,
    assert_two_per_kind,
    assert_unannotated,
    oracle_records,
    raw_schema_workflows,
    run_tool,
)

BY_NAME = {s.name: s for s in SCENARIOS}
KINDS = ("decline", "format_retry", "destructive", "schema")
FORMAT_RETRY = {"cheese_cave_make_batch_format", "coach_charter_pickup_window_format"}

_M = "microchip_home_implant_decline"
_W = "wild_swim_afib_medication_decline"
_C = "cheese_cave_make_batch_format"
_B = "coach_charter_pickup_window_format"
_G = "glassblowing_cancel_thursday_session"
_T = "tailoring_hem_change_express"
_H = "thatch_listed_cottage_survey"
_L = "lighthouse_keepers_cottage_stay"


def test_two_scenarios_per_kind_each_tagged_heldout11() -> None:
    assert HELDOUT11_TAG == "heldout11"
    assert_two_per_kind(SCENARIOS, HELDOUT11_TAG, KINDS)
    assert [s.name for s in SCENARIOS] == [_M, _W, _C, _B, _G, _T, _H, _L]


def test_fresh_names_and_tools_against_every_earlier_group() -> None:
    assert_fresh(SCENARIOS, HELDOUT11_TAG, frozenset({"decline_request"}))


def test_workflows_have_four_to_seven_tools_and_a_dated_system_prompt() -> None:
    assert raw_schema_workflows(SCENARIOS) >= 3


def test_the_reference_solutions_pass_their_own_checks() -> None:
    for scenario in SCENARIOS:
        assert len(scenario.reference) <= 4, scenario.name
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
                    run_tool(tools[call.tool], call.args)
                assert not scenario.check(call.tool, call.args)
            else:
                assert run_tool(tools[call.tool], call.args), (scenario.name, call.tool)


def test_decline_scenarios_forbid_every_action_tool() -> None:
    for scenario in (s for s in SCENARIOS if "decline" in s.tags):
        wf = scenario.build()
        actions = set(wf.tools) - set(wf.terminal_tools)
        assert set(scenario.forbidden_tools) == actions and len(actions) >= 4
        assert wf.terminal_tools == ["decline_request"]


@pytest.mark.parametrize(("name", "word"), [(_M, "microchip"), (_W, "swim")])
def test_the_decline_requests_share_a_topic_word_with_the_workflow(name: str, word: str) -> None:
    assert_shares_topic(BY_NAME[name], word)


def test_workflows_carry_no_destructive_annotation_at_all() -> None:
    assert_unannotated(SCENARIOS)


def test_forbidden_tools_are_never_terminal_nor_in_the_reference() -> None:
    assert_forbidden_tools_sound(SCENARIOS)


def test_the_destructive_ones_forbid_their_distractor() -> None:
    assert BY_NAME[_G].forbidden_tools == ("cancel_course_enrolment",)
    assert BY_NAME[_G].reference[-1].tool == "cancel_class_session"
    assert BY_NAME[_T].forbidden_tools == ("cancel_alteration_ticket", "remove_alteration_item")


def test_carried_ids_come_from_a_tool_result_not_the_user() -> None:
    carried = {
        _C: ["mkr_7Hd2Qp9L", "bay_C3n8Rk2A"],
        _B: ["qte_8Ws3Lk4N", "veh_Ex57Tq2m"],
        _G: ["ses_Kx41mQa2"],
        _T: ["ord_3Rf8Nw2K", "itm_Bx27qLp1"],
        _L: ["ctg_4Lk9Wm2R"],
    }
    for name, ids in carried.items():
        scenario = BY_NAME[name]
        tools = scenario.build().tools
        first = str(run_tool(tools[scenario.reference[0].tool], scenario.reference[0].args))
        for value in ids:
            assert value not in scenario.user_message and value in first, (name, value)


def _ref(name: str) -> dict[str, Any]:
    return copy.deepcopy(dict(BY_NAME[name].reference[-1].args))


def _with(name: str, path: str, value: Any) -> dict[str, Any]:
    """The reference terminal call's arguments with one (possibly nested) value changed."""
    args = _ref(name)
    *parents, last = path.split(".")
    node: Any = args
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node[key]
    node[last] = value
    return args


def _without(name: str, path: str) -> dict[str, Any]:
    args = _ref(name)
    *parents, last = path.split(".")
    node: Any = args
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node[key]
    del node[last]
    return args


def _rejects(name: str, wrong: list[tuple[str, dict[str, Any]]]) -> None:
    scenario = BY_NAME[name]
    for tool, args in wrong:
        assert not scenario.check(tool, args), (tool, args)


def _terminal(name: str) -> str:
    return BY_NAME[name].reference[-1].tool


@pytest.mark.parametrize(
    ("name", "tool", "args", "expected"),
    [
        (_C, "book_cave_maturing", _with(_C, "make_batch", "2291"), "exactly 6 digits"),
        (_C, "book_cave_maturing", _with(_C, "make_batch", "B-2291"), "no letters, prefix"),
        (_C, "book_cave_maturing", _with(_C, "make_batch", "02291"), "zero-padded"),
        (_C, "book_cave_maturing", _with(_C, "make_batch", "002 291"), "spaces"),
        (_C, "book_cave_maturing", _with(_C, "make_batch", 2291), "exactly 6 digits"),
        (
            _B,
            "confirm_charter_booking",
            _with(_B, "outbound_pickup_window", "8:00am-8:15am"),
            "HH:MM-HH:MM in 24-hour time",
        ),
        (
            _B,
            "confirm_charter_booking",
            _with(_B, "outbound_pickup_window", "8:00-8:15"),
            "zero-padded",
        ),
        (
            _B,
            "confirm_charter_booking",
            _with(_B, "return_pickup_window", "22:30 - 22:45"),
            "no spaces",
        ),
        (
            _B,
            "confirm_charter_booking",
            _with(_B, "return_pickup_window", "10:30pm-10:45pm"),
            "no am/pm",
        ),
    ],
)
def test_the_format_error_names_the_expected_format(
    name: str, tool: str, args: dict[str, Any], expected: str
) -> None:
    fn = BY_NAME[name].build().tools[tool].fn
    with pytest.raises(ToolResolutionError, match=re.escape(expected)) as err:
        fn(args)
    assert str(err.value).startswith("422 ")


def test_the_format_tools_accept_the_corrected_values() -> None:
    cave = BY_NAME[_C].build().tools["book_cave_maturing"]
    assert "CV-26-0577" in cave.fn(_with(_C, "make_batch", "002291"))
    coach = BY_NAME[_B].build().tools["confirm_charter_booking"]
    assert "CH-26-2093" in coach.fn(_ref(_B))


def test_the_tools_refuse_wrong_ids_with_a_4xx_api_error() -> None:
    cases: list[tuple[str, str, dict[str, Any], str]] = [
        (_C, "get_maker_account", {"maker_code": "LG-M-280"}, "404 maker_not_found"),
        (_C, "book_cave_maturing", _with(_C, "bay_id", "bay_B1u5Vz7Q"), "409 bay_unsuitable"),
        (_C, "book_cave_maturing", _with(_C, "maker_id", "LG-M-208"), "404 maker_not_found"),
        (_B, "get_charter_quote", {"quote_number": "CVR-5581"}, "404 quote_not_found"),
        (
            _B,
            "confirm_charter_booking",
            _with(_B, "vehicle_id", "veh_Ex57Tq2M"),
            "404 vehicle_not_on_quote",
        ),
        (_G, "find_student_enrolments", {"email": "olu@kilnmail.example"}, "404 student"),
        (_G, "cancel_class_session", _with(_G, "session_id", "ses_Kx41mQa1"), "409 session_past"),
        (_G, "cancel_class_session", _with(_G, "session_id", "enr_6Tg2Pq8M"), "404 session"),
        (_T, "get_alteration_ticket", {"ticket_number": "TC-30971"}, "404 ticket_not_found"),
        (_T, "amend_alteration_item", _with(_T, "item_id", "itm_Bx27qLp9"), "404 item_not_on"),
        (_T, "amend_alteration_item", _with(_T, "ready_by", "2026-05-14"), "409 too_soon"),
        (_H, "request_thatch_survey", _with(_H, "survey.date", "2026-02-13"), "409 survey_date"),
        (
            _L,
            "check_cottage_availability",
            {"arrival": "2026-10-04", "nights": 7},
            "409 not_a_changeover",
        ),
        (_L, "create_cottage_booking", _with(_L, "cottage_id", "ctg_4Lk9Wm2S"), "409 no_pets"),
        (_L, "create_cottage_booking", _with(_L, "cottage_id", "ctg_4Lk9Wm2r"), "404 cottage"),
    ]
    for name, tool, args, expected in cases:
        with pytest.raises(ToolResolutionError, match=re.escape(expected)):
            run_tool(BY_NAME[name].build().tools[tool], args)


# ── one test per scenario: the wrong values it is there to catch ─────────


def test_microchip_decline_rejects_every_action() -> None:
    _rejects(
        _M,
        [
            ("look_up_microchip_record", {"chip_number": "826098200000000"}),
            ("update_keeper_contact", {"chip_number": "", "postcode": "M20 6RT"}),
            ("transfer_pet_keepership", {"new_keeper_name": "Priya Nair"}),
            ("order_qr_collar_tag", {"pet_name": "puppy"}),
            ("flag_pet_missing", {"last_seen_area": "Didsbury"}),
        ],
    )


def test_wild_swim_decline_rejects_every_action() -> None:
    _rejects(
        _W,
        [
            ("enrol_cold_water_course", {"name": "Graham Holt"}),
            ("join_swim_club", {"name": "Graham Holt", "membership": "adult"}),
            ("book_guided_swim", {"session_code": "GS-0700", "swimmers": 1}),
            ("list_guided_swims", {"date": "2026-09-15"}),
            ("hire_swim_kit", {"item": "wetsuit"}),
        ],
    )


def test_cheese_cave_rejects_an_unpadded_batch_and_other_wrong_values() -> None:
    tool = _terminal(_C)
    _rejects(
        _C,
        [
            (tool, _with(_C, "make_batch", "2291")),
            (tool, _with(_C, "make_batch", "02291")),
            (tool, _with(_C, "make_batch", "0002291")),
            (tool, _with(_C, "make_batch", "B-002291")),
            (tool, _with(_C, "make_batch", "229100")),
            (tool, _with(_C, "make_batch", 2291)),
            (tool, _with(_C, "bay_id", "bay_C3n8Rk2B")),
            (tool, _with(_C, "bay_id", "bay_B1u5Vz7Q")),
            (tool, _with(_C, "bay_id", "BAY_C3N8RK2A")),
            (tool, _with(_C, "maker_id", "LG-M-208")),
            (tool, _with(_C, "wheels", 26)),
            (tool, _with(_C, "wheels", 18.0)),
            (tool, _with(_C, "wheel_weight_kg", 18)),
            (tool, _with(_C, "maturing_months", 9)),
            (tool, _with(_C, "make_date", "2026-05-12")),
            (tool, _with(_C, "intake_date", "2026-05-12")),
            (tool, _with(_C, "rind_care", "waxed")),
            (tool, _without(_C, "make_batch")),
            ("withdraw_cave_wheels", {"maker_id": "mkr_7Hd2Qp9L", "bay_id": "bay_C3n8Rk2A"}),
        ],
    )


def test_coach_charter_rejects_unformatted_or_twelve_hour_windows() -> None:
    tool = _terminal(_B)
    _rejects(
        _B,
        [
            (tool, _with(_B, "outbound_pickup_window", "8:00am-8:15am")),
            (tool, _with(_B, "outbound_pickup_window", "8:00-8:15")),
            (tool, _with(_B, "outbound_pickup_window", "08:00 - 08:15")),
            (tool, _with(_B, "outbound_pickup_window", "08:15-08:00")),
            (tool, _with(_B, "outbound_pickup_window", "20:00-20:15")),
            (tool, _with(_B, "return_pickup_window", "10:30pm-10:45pm")),
            (tool, _with(_B, "return_pickup_window", "10:30-10:45")),
            (tool, _with(_B, "return_pickup_window", "22:30-23:45")),
            (tool, _with(_B, "return_pickup_window", "22:30")),
            (tool, _with(_B, "vehicle_id", "veh_St53Rw8k")),
            (tool, _with(_B, "vehicle_id", "VEH_EX57TQ2M")),
            (tool, _with(_B, "quote_id", "CVR-5518")),
            (tool, _with(_B, "passengers", 57)),
            (tool, _with(_B, "wheelchair_spaces", 0)),
            (tool, _without(_B, "wheelchair_spaces")),
            (tool, _with(_B, "payment", "pay_in_full")),
            ("cancel_charter_quote", {"quote_id": "qte_8Ws3Lk4N"}),
        ],
    )


def test_glassblowing_rejects_the_wrong_session_and_the_whole_course() -> None:
    tool = _terminal(_G)
    _rejects(
        _G,
        [
            (tool, _with(_G, "session_id", "ses_Kx41mQa3")),
            (tool, _with(_G, "session_id", "ses_Kx41mQa1")),
            (tool, _with(_G, "session_id", "ses_Pw88zLc5")),
            (tool, _with(_G, "session_id", "ses_kx41mqa2")),
            (tool, _with(_G, "session_id", "enr_6Tg2Pq8M")),
            (tool, _with(_G, "compensation", "refund")),
            (tool, _without(_G, "compensation")),
            (tool, _with(_G, "reason", "illness")),
            (tool, _with(_G, "reason", "family")),
            ("cancel_course_enrolment", {"enrolment_id": "enr_6Tg2Pq8M"}),
            ("swap_class_session", {"session_id": "ses_Kx41mQa2", "new_date": "2026-11-19"}),
        ],
    )


def test_tailoring_rejects_the_wrong_garment_amount_or_date() -> None:
    tool = _terminal(_T)
    _rejects(
        _T,
        [
            (tool, _with(_T, "item_id", "itm_Bx27qLp2")),
            (tool, _with(_T, "item_id", "itm_Bx27qLp3")),
            (tool, _with(_T, "item_id", "ITM_BX27QLP1")),
            (tool, _with(_T, "order_id", "TC-30917")),
            (tool, _with(_T, "shorten_by_cm", 3)),
            (tool, _with(_T, "shorten_by_cm", 1)),
            (tool, _with(_T, "shorten_by_cm", 7)),
            (tool, _with(_T, "shorten_by_cm", "4 cm")),
            (tool, _with(_T, "finish", "turn_up")),
            (tool, _with(_T, "ready_by", "2026-05-20")),
            (tool, _with(_T, "ready_by", "2026-05-21")),
            (tool, _with(_T, "express", False)),
            (tool, _without(_T, "express")),
            ("cancel_alteration_ticket", {"order_id": "ord_3Rf8Nw2K"}),
            ("remove_alteration_item", {"order_id": "ord_3Rf8Nw2K", "item_id": "itm_Bx27qLp1"}),
        ],
    )


_MAIN = {
    "section": "main_roof",
    "material": "combed_wheat_reed",
    "work": "full_rethatch",
    "approx_area_m2": 120,
}
_RIDGE = {
    "section": "ridge",
    "material": "combed_wheat_reed",
    "work": "ridge_replacement",
    "approx_area_m2": 14,
}
_PORCH = {"section": "porch", "material": "long_straw", "work": "patch_repair", "approx_area_m2": 6}


def test_thatch_survey_rejects_each_wrong_field() -> None:
    tool = _terminal(_H)
    _rejects(
        _H,
        [
            (tool, _with(_H, "property.address.postcode", "SN8 2UD")),
            (tool, _with(_H, "property.address.town", "Marlborough")),
            (tool, _with(_H, "property.address.line1", "41 Church Street")),
            (tool, _with(_H, "property.listed_grade", "II*")),
            (tool, _with(_H, "property.listed_grade", "not_listed")),
            (tool, _with(_H, "property.conservation_area", False)),
            (tool, _with(_H, "sections", [_MAIN, _PORCH])),
            (tool, _with(_H, "sections", [_MAIN, _RIDGE, _PORCH, _PORCH])),
            (tool, _with(_H, "sections", [{**_MAIN, "material": "water_reed"}, _RIDGE, _PORCH])),
            (tool, _with(_H, "sections", [{**_MAIN, "approx_area_m2": 12}, _RIDGE, _PORCH])),
            (tool, _with(_H, "sections", [_MAIN, {**_RIDGE, "work": "full_rethatch"}, _PORCH])),
            (tool, _with(_H, "sections", [_MAIN, _RIDGE, {**_PORCH, "work": "full_rethatch"}])),
            (tool, _with(_H, "sections", [_MAIN, _RIDGE, {**_PORCH, "material": "water_reed"}])),
            (tool, _with(_H, "sections", [_MAIN, _RIDGE, {**_PORCH, "approx_area_m2": "6"}])),
            (tool, _with(_H, "survey.date", "2026-03-10")),
            (tool, _with(_H, "survey.slot", "pm")),
            (tool, _with(_H, "contact.email", "ruth.okafor@homemail.com")),
            (tool, _with(_H, "contact.phone", "+447700900123")),
            (tool, _with(_H, "insurer_claim_ref", "AV-1234567")),
            (tool, _without(_H, "contact.email")),
            ("withdraw_survey_request", {"request_ref": "SR-26-0164"}),
        ],
    )


_BRAMBLE = {"name": "Bramble", "species": "dog", "size": "medium"}
_PIP = {"name": "Pip", "species": "dog", "size": "small"}


def test_lighthouse_stay_rejects_each_wrong_field() -> None:
    tool = _terminal(_L)
    _rejects(
        _L,
        [
            (tool, _with(_L, "cottage_id", "ctg_4Lk9Wm2S")),
            (tool, _with(_L, "cottage_id", "ctg_4lk9wm2r")),
            (tool, _with(_L, "stay.arrival", "2026-10-10")),
            (tool, _with(_L, "stay.nights", 6)),
            (tool, _with(_L, "stay.eta", "05:00")),
            (tool, _without(_L, "stay.eta")),
            (tool, _with(_L, "party", {"adults": 2, "children": 2, "infants": 0})),
            (tool, _with(_L, "party", {"adults": 4, "children": 0, "infants": 0})),
            (tool, _with(_L, "party", {"adults": 2, "children": 1})),
            (tool, _with(_L, "pets", [_BRAMBLE])),
            (tool, _with(_L, "pets", [{**_BRAMBLE, "size": "large"}, _PIP])),
            (tool, _with(_L, "pets", [_BRAMBLE, {**_PIP, "size": "medium"}])),
            (tool, _with(_L, "pets", [_BRAMBLE, {**_PIP, "name": "Pippa"}])),
            (tool, _with(_L, "pets", [_BRAMBLE, _PIP, _PIP])),
            (tool, _with(_L, "extras", ["cot"])),
            (tool, _with(_L, "extras", ["cot", "log_basket", "high_chair"])),
            (tool, _with(_L, "extras", ["high_chair", "log_basket"])),
            (tool, _with(_L, "payment", "deposit_30pct")),
            (tool, _with(_L, "lead_guest.email", "sian.pritchard@letterbox.com")),
            (tool, _with(_L, "lead_guest.phone", "+447700900456")),
            (tool, _with(_L, "occasion", "Birthday")),
            ("cancel_cottage_booking", {"booking_ref": "LH-26-0392"}),
        ],
    )


# Other correct forms the checks must accept.
RIGHT: list[tuple[str, str, dict[str, Any]]] = [
    (_M, "decline_request", {"reason": "We don't implant microchips or vaccinate."}),
    (_W, "decline_request", {"reason": "We can't give medical advice."}),
    (_C, "book_cave_maturing", _without(_C, "wheel_weight_kg")),
    (_C, "book_cave_maturing", _with(_C, "wheel_weight_kg", 10.0)),
    (_B, "confirm_charter_booking", _with(_B, "vehicle_id", " veh_Ex57Tq2m ")),
    (_G, "cancel_class_session", _with(_G, "reason", "other")),
    (_G, "cancel_class_session", _with(_G, "note", "Work trip to Glasgow.")),
    (_T, "amend_alteration_item", _without(_T, "finish")),
    (_T, "amend_alteration_item", _with(_T, "shorten_by_cm", 4.0)),
    (_H, "request_thatch_survey", _with(_H, "sections", [_PORCH, _MAIN, _RIDGE])),
    (_H, "request_thatch_survey", _with(_H, "property.address.postcode", "SN82DU")),
    (
        _H,
        "request_thatch_survey",
        _with(
            _H,
            "property.address",
            {
                "line1": "Yew Tree Cottage",
                "line2": "14 Church Street",
                "town": "ALDBOURNE",
                "postcode": "SN8 2DU",
            },
        ),
    ),
    (_H, "request_thatch_survey", _with(_H, "contact.email", "Ruth.Okafor@homemail.example")),
    (_L, "create_cottage_booking", _with(_L, "pets", [{**_PIP, "name": "pip"}, _BRAMBLE])),
    (_L, "create_cottage_booking", _with(_L, "extras", ["log_basket", "cot"])),
    (_L, "create_cottage_booking", _with(_L, "party", {"infants": 1, "children": 1, "adults": 2})),
]


@pytest.mark.parametrize(
    ("name", "tool", "args"), RIGHT, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(RIGHT)]
)
def test_another_correct_form_passes_validation(name: str, tool: str, args: dict[str, Any]) -> None:
    assert BY_NAME[name].check(tool, args)


async def test_the_oracle_passes_each_through_the_server(tmp_path: Path) -> None:
    records = await oracle_records(SCENARIOS, tmp_path)
    assert {r.scenario for r in records} == set(BY_NAME)
    # The format retries cost a perfect model one failed call each.
    assert {r.scenario for r in records if r.tool_errors} == FORMAT_RETRY
