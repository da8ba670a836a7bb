"""heldout12 (with heldout12_replies and heldout12_listings): its eight
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
from forge_evals.scenarios import heldout12
from forge_evals.scenarios._domain_schema import HELDOUT12_TAG
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

SCENARIOS = heldout12.SCENARIOS
BY_NAME = {s.name: s for s in SCENARIOS}
KINDS = ("carry_id", "user_value", "report_agrees", "list_match")

_results = reference_results

_CLOCK, _ESCAPE = "clock_repair_quote_approval", "escape_room_booking_move"
_TUB, _LLAMA = "hot_tub_bank_holiday_hire", "llama_trek_family_booking"
_DOME, _FORGE = "planetarium_school_visit_reply", "blacksmith_course_student_reply"
_FLYING, _VINES = "model_aircraft_field_sessions", "vineyard_group_tour_holds"


def test_two_scenarios_per_kind_each_tagged_heldout12() -> None:
    assert HELDOUT12_TAG == "heldout12"
    assert_two_per_kind(SCENARIOS, HELDOUT12_TAG, KINDS)


def test_fresh_names_and_tools_against_every_earlier_group() -> None:
    assert_fresh(SCENARIOS, HELDOUT12_TAG, frozenset())


def test_workflows_have_four_to_seven_tools_and_a_dated_system_prompt() -> None:
    assert raw_schema_workflows(SCENARIOS) >= 3
    assert all(len(s.reference) <= 4 for s in SCENARIOS)


@pytest.mark.parametrize("name", list(BY_NAME))
def test_the_reference_calls_run_and_pass_the_check(name: str) -> None:
    assert_reference_passes(BY_NAME[name])


def test_forbidden_tools_are_never_terminal_nor_in_the_reference() -> None:
    assert_forbidden_tools_sound(SCENARIOS)


_CARRIED = {
    _CLOCK: ["CRJ-61873", "QT-8841-B"],
    _ESCAPE: ["ESC-41388", "TS-90418"],
}


@pytest.mark.parametrize("name", list(_CARRIED))
def test_each_carried_id_comes_from_the_result_before_its_use(name: str) -> None:
    assert_carried_from_results(BY_NAME[name], _CARRIED[name])


def test_each_carried_id_has_a_distractor_of_the_same_shape_nearby() -> None:
    clock = _results(BY_NAME[_CLOCK])
    assert "CRJ-60214: brass carriage clock, overhauled; COLLECTED" in clock[0]
    assert "CRJ-61880" in clock[0] and "QT-8841-A: 390.00 GBP" in clock[1]
    assert "SUPERSEDED" in clock[1]
    escape = _results(BY_NAME[_ESCAPE])
    assert "ESC-40927: The Alchemist's Study" in escape[0] and "COMPLETED" in escape[0]
    assert "ESC-41402" in escape[0] and "CANCELLED" in escape[0]
    assert "TS-90438: The Alchemist's Study, 20:00, free" in escape[1]
    assert "TS-90415: The Lighthouse Keeper, 18:30, BOOKED" in escape[1]


def test_the_user_values_are_written_the_way_people_say_them() -> None:
    tub = BY_NAME[_TUB].user_message
    assert not re.search(r"\b(2|38|17|2026)\b|17:30|HT-|INF", tub)
    assert "LD7 1AB" in tub and "thirty-eight" in tub and "half past five" in tub
    llama = BY_NAME[_LLAMA].user_message
    assert not re.search(r"\b(2|3|2026)\b|10:15|meadow|ridge", llama)
    assert "quarter past ten" in llama and "shorter walk" in llama
    clock = BY_NAME[_CLOCK].user_message
    assert not re.search(r"CRJ-|QT-|2026|deliver_and_set_up|longcase", clock)
    escape = BY_NAME[_ESCAPE].user_message
    assert not re.search(r"ESC-|TS-|2026|20:00|Lighthouse Keeper", escape)


def test_the_reported_values_come_from_the_results() -> None:
    dome = _results(BY_NAME[_DOME])[1]
    assert "Status CONFIRMED" in dome and "arrive 10:00" in dome
    assert "starts 10:30" in dome and "(4 free places)" in dome
    assert "balance 177.00 GBP" in dome and "total 237.00 GBP" in dome
    assert "Deposit 60.00 GBP" in dome and "6 adults" in dome
    forge = _results(BY_NAME[_FORGE])[1]
    assert "Status CONFIRMED" in forge and "Arrive by 08:45" in forge
    assert "forges lit 09:00" in forge and "balance 185.00 GBP" in forge
    assert "= 345.00 GBP" in forge and "deposit 160.00 GBP" in forge
    assert "leather boots or steel toe caps (required, not provided)" in forge


def test_the_listed_items_come_from_the_results() -> None:
    flying = _results(BY_NAME[_FLYING])[1]
    for line in (
        "- FS-2615: Sun 2026-04-12 10:00-13:00, electric only, run by Dave Ollerton, 2 left",
        "- FS-2623: Sat 2026-04-18 10:00-13:00, electric only, run by Priya Nair, 6 left",
        "- FS-2630: Sun 2026-04-26 10:00-13:00, electric only, run by Dave Ollerton, 1 left",
        "- FS-2634: Thu 2026-04-30 18:00-20:30, electric only, run by Priya Nair, 3 left",
        "- FS-2627: Wed 2026-04-22 18:00-20:30, electric only, run by Colin Marsh, 5 left",
        "- FS-2619: Wed 2026-04-15 18:00-20:30, electric only, run by Priya Nair, FULL",
    ):
        assert line in flying
    vines = _results(BY_NAME[_VINES])[1]
    for tid, text in (
        ("VT-1003", "Sat 2026-10-03, Cellar tour & tasting, 18.00 GBP per head, 20 places"),
        ("VT-1014", "Wed 2026-10-14, Evening cellar tour & tasting, 19.00 GBP per head, 14"),
        ("VT-1018", "Sun 2026-10-18, Cellar tour & tasting, 19.50 GBP per head, 16 places"),
        ("VT-1031", "Sat 2026-10-31, Cellar tour & tasting by candlelight, 17.50 GBP per h"),
        ("VT-1010", "Sat 2026-10-10, Cellar tour & tasting, 18.00 GBP per head, 8 places"),
        ("VT-1025", "Sun 2026-10-25, Cellar tour & tasting, 20.00 GBP per head, 22 places"),
    ):
        assert f"- {tid}: {text}" in vines


def test_a_wrong_input_gets_a_helpful_api_error() -> None:
    clock = BY_NAME[_CLOCK].build().tools
    approve = clock["approve_clock_repair_quote"].fn
    back = {"method": "deliver_and_set_up"}
    with pytest.raises(ToolResolutionError, match="job_closed"):
        approve({"job_id": "CRJ-60214", "quote_id": "QT-7702-A", "return": back})
    with pytest.raises(ToolResolutionError, match="no_open_quote"):
        approve({"job_id": "CRJ-61880", "quote_id": "QT-8841-B", "return": back})
    with pytest.raises(ToolResolutionError, match="quote_superseded"):
        approve({"job_id": "CRJ-61873", "quote_id": "QT-8841-A", "return": back})
    with pytest.raises(ToolResolutionError, match="quote_not_found"):
        approve({"job_id": "CRJ-61873", "quote_id": "QT-7702-A", "return": back})
    with pytest.raises(ToolResolutionError, match="job_not_found"):
        clock["get_repair_quotes"].fn(job_id="CU-2290")
    move = BY_NAME[_ESCAPE].build().tools["move_escape_booking"].fn
    with pytest.raises(ToolResolutionError, match="booking_completed"):
        move(booking_ref="ESC-40927", slot_id="TS-90418")
    with pytest.raises(ToolResolutionError, match="booking_cancelled"):
        move(booking_ref="ESC-41402", slot_id="TS-90418")
    with pytest.raises(ToolResolutionError, match="room_mismatch"):
        move(booking_ref="ESC-41388", slot_id="TS-90438")
    with pytest.raises(ToolResolutionError, match="slot_taken"):
        move(booking_ref="ESC-41388", slot_id="TS-90415")
    with pytest.raises(ToolResolutionError, match="slot_not_found"):
        move(booking_ref="ESC-41388", slot_id="20:00")
    tub = BY_NAME[_TUB].build().tools["book_hot_tub_hire"].fn
    ok_tub: dict[str, Any] = dict(BY_NAME[_TUB].reference[-1].args)
    with pytest.raises(ToolResolutionError, match="not_enough_heating_time"):
        tub({**ok_tub, "delivery": {**ok_tub["delivery"], "ready_by": "12:00"}})
    with pytest.raises(ToolResolutionError, match="tub_not_found"):
        tub({**ok_tub, "tub_id": "6-seater"})
    with pytest.raises(ToolResolutionError, match="collection_before_delivery"):
        tub({**ok_tub, "collection_date": "2026-08-25"})
    llama = BY_NAME[_LLAMA].build().tools["book_llama_trek"].fn
    ok_llama = dict(BY_NAME[_LLAMA].reference[-1].args)
    with pytest.raises(ToolResolutionError, match="no_such_start"):
        llama(**{**ok_llama, "start_time": "10:00"})
    with pytest.raises(ToolResolutionError, match="route_not_found"):
        llama(**{**ok_llama, "route": "shorter walk"})
    with pytest.raises(ToolResolutionError, match="llamas_out_of_range"):
        llama(**{**ok_llama, "llamas": 0})
    dome = BY_NAME[_DOME].build().tools
    with pytest.raises(ToolResolutionError, match="visit_not_found"):
        dome["get_group_visit"].fn(booking_ref="SCH-0861")
    forge = BY_NAME[_FORGE].build().tools
    with pytest.raises(ToolResolutionError, match="booking_not_found"):
        forge["get_forge_course_booking"].fn(booking_ref="bfc-1420x")
    flying = BY_NAME[_FLYING].build().tools["book_flying_field_sessions"].fn
    ok_flying: dict[str, Any] = dict(BY_NAME[_FLYING].reference[-1].args)
    with pytest.raises(ToolResolutionError, match="session_full"):
        flying({**ok_flying, "session_ids": ["FS-2619"]})
    with pytest.raises(ToolResolutionError, match="power_mismatch"):
        flying({**ok_flying, "session_ids": ["FS-2624"]})
    with pytest.raises(ToolResolutionError, match="session_not_found"):
        flying({**ok_flying, "session_ids": ["2615"]})
    with pytest.raises(ToolResolutionError, match="member_not_found"):
        flying({**ok_flying, "member_id": "Ben Carver"})
    hold = BY_NAME[_VINES].build().tools["hold_group_tour_places"].fn
    with pytest.raises(ToolResolutionError, match="not_enough_places"):
        hold(group_id="GRP-2207", tour_ids=["VT-1010"], party_size=12)
    with pytest.raises(ToolResolutionError, match="group_not_found"):
        hold(group_id="Severn Vale Wine Circle", tour_ids=["VT-1003"], party_size=12)
    with pytest.raises(ToolResolutionError, match="tour_not_found"):
        hold(group_id="GRP-2207", tour_ids=["2026-10-03"], party_size=12)


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


_OK_SESSIONS = ["FS-2615", "FS-2623", "FS-2630", "FS-2634"]
_OK_TOURS = ["VT-1003", "VT-1014", "VT-1018", "VT-1031"]

_WRONG = [
    _with(_CLOCK, "job_id", "CRJ-60214"),
    _with(_CLOCK, "job_id", "CRJ-61880"),
    _with(_CLOCK, "job_id", "CU-2290"),
    _with(_CLOCK, "job_id", "m.okafor@teme-mail.example"),
    _with(_CLOCK, "job_id", "crj-61873"),
    _with(_CLOCK, "quote_id", "QT-8841-A"),
    _with(_CLOCK, "quote_id", "QT-7702-A"),
    _with(_CLOCK, "quote_id", "QT-8841"),
    _with(_CLOCK, "return.method", "collect_from_workshop"),
    _with(_ESCAPE, "booking_ref", "ESC-40927"),
    _with(_ESCAPE, "booking_ref", "ESC-41402"),
    _with(_ESCAPE, "booking_ref", "07700 900286"),
    _with(_ESCAPE, "slot_id", "TS-90438"),
    _with(_ESCAPE, "slot_id", "TS-90415"),
    _with(_ESCAPE, "slot_id", "TS-90422"),
    _with(_ESCAPE, "slot_id", "TS-90458"),
    _with(_ESCAPE, "slot_id", "20:00"),
    _with(_TUB, "tub_id", "HT-HS7"),
    _with(_TUB, "tub_id", "HT-INF4"),
    _with(_TUB, "tub_id", "HT-WF8"),
    _with(_TUB, "delivery.date", "2026-08-29"),
    _with(_TUB, "delivery.date", "2026-08-05"),
    _with(_TUB, "delivery.ready_by", "05:30"),
    _with(_TUB, "delivery.ready_by", "12:00"),
    _with(_TUB, "delivery.ready_by", "18:00"),
    _with(_TUB, "delivery.postcode", "LD1 7AB"),
    _with(_TUB, "collection_date", "2026-08-31"),
    _with(_TUB, "collection_date", "2026-09-02"),
    _with(_TUB, "water_temperature_c", 37),
    _with(_TUB, "water_temperature_c", 40),
    _with(_TUB, "water_temperature_c", "38 C"),
    _with(_TUB, "gazebo", True),
    _with(_TUB, "extra_chemical_packs", 1),
    _with(_TUB, "extra_chemical_packs", 3),
    _with(_TUB, "extra_chemical_packs", 6),
    _with(_LLAMA, "date", "2026-09-13"),
    _with(_LLAMA, "date", "2026-09-27"),
    _with(_LLAMA, "route", "ridge_trail"),
    _with(_LLAMA, "start_time", "09:30"),
    _with(_LLAMA, "start_time", "10:00"),
    _with(_LLAMA, "start_time", "22:15"),
    _with(_LLAMA, "adults", 5),
    _with(_LLAMA, "adults", 2),
    _with(_LLAMA, "children", 3),
    _with(_LLAMA, "children", 0),
    _with(_LLAMA, "llamas", 3),
    _with(_LLAMA, "llamas", 5),
    _with(_LLAMA, "picnic_hamper", True),
    _with(_LLAMA, "lead_name", "Cwm Ffrwd"),
    _with(_DOME, "booking_ref", "PGV-2741"),
    _with(_DOME, "booking_ref", "PGV-3342"),
    _with(_DOME, "booking_ref", "SCH-0861"),
    _with(_DOME, "status", "PROVISIONAL"),
    _with(_DOME, "show.date", "2026-03-12"),
    _with(_DOME, "show.date", "2026-03-04"),
    _with(_DOME, "show.start_time", "10:00"),
    _with(_DOME, "show.start_time", "11:20"),
    _with(_DOME, "free_adult_places", 6),
    _with(_DOME, "free_adult_places", 2),
    _with(_DOME, "free_adult_places", 8),
    _with(_DOME, "balance_due.amount", 237.00),
    _with(_DOME, "balance_due.amount", 224.00),
    _with(_DOME, "balance_due.amount", 60.00),
    _with(_DOME, "balance_due.amount", 164.00),
    _with(_FORGE, "booking_ref", "BFC-1187"),
    _with(_FORGE, "booking_ref", "BFC-1436"),
    _with(_FORGE, "status", "WAITLIST"),
    _with(_FORGE, "first_day", "2026-03-15"),
    _with(_FORGE, "first_day", "2026-03-07"),
    _with(_FORGE, "own_boots_needed", False),
    _with(_FORGE, "message", "Please arrive by 09:00. Your balance is 185.00 GBP."),
    _with(_FORGE, "message", "Please arrive by 08:45. You owe 345.00 GBP."),
    _with(_FORGE, "message", "Arrive by 08:45; 160.00 GBP deposit paid, 320.00 course."),
    _with(_FORGE, "message", "Forges are lit at 9. Balance 185 GBP."),
    _with(_FORGE, "message", "Arrive by 08:45 on Saturday."),
    _with(_FLYING, "member_id", "Ben Carver"),
    _with(_FLYING, "member_id", "274019"),
    _with(_FLYING, "aircraft.power", "ic_glow"),
    _with(_FLYING, "aircraft.weight_kg", 14),
    _with(_FLYING, "aircraft.weight_kg", 7.5),
    _with(_FLYING, "session_ids", [*_OK_SESSIONS, "FS-2611"]),
    _with(_FLYING, "session_ids", [*_OK_SESSIONS, "FS-2627"]),
    _with(_FLYING, "session_ids", [*_OK_SESSIONS, "FS-2619"]),
    _with(_FLYING, "session_ids", [*_OK_SESSIONS, "FS-2612"]),
    _with(_FLYING, "session_ids", [*_OK_SESSIONS, "FS-2624"]),
    _with(_FLYING, "session_ids", [*_OK_SESSIONS, "FS-2631"]),
    _with(_FLYING, "session_ids", [*_OK_SESSIONS, "FS-2638"]),
    _with(_FLYING, "session_ids", [*_OK_SESSIONS, "FS-2642"]),
    _with(_FLYING, "session_ids", ["FS-2615", "FS-2623", "FS-2630"]),
    _with(_FLYING, "session_ids", ["FS-2623", "FS-2630", "FS-2634"]),
    _with(_FLYING, "session_ids", [*_OK_SESSIONS, "FS-2615"]),
    _with(_VINES, "group_id", "Severn Vale Wine Circle"),
    _with(_VINES, "party_size", 16),
    _with(_VINES, "party_size", 13),
    _with(_VINES, "tour_ids", [*_OK_TOURS, "VT-1017"]),
    _with(_VINES, "tour_ids", [*_OK_TOURS, "VT-1010"]),
    _with(_VINES, "tour_ids", [*_OK_TOURS, "VT-1025"]),
    _with(_VINES, "tour_ids", [*_OK_TOURS, "VT-1004"]),
    _with(_VINES, "tour_ids", [*_OK_TOURS, "VT-1011"]),
    _with(_VINES, "tour_ids", [*_OK_TOURS, "VT-1024"]),
    _with(_VINES, "tour_ids", [*_OK_TOURS, "VT-0926"]),
    _with(_VINES, "tour_ids", [*_OK_TOURS, "VT-1107"]),
    _with(_VINES, "tour_ids", ["VT-1003", "VT-1018", "VT-1031"]),
    _with(_VINES, "tour_ids", ["VT-1003", "VT-1014", "VT-1018"]),
    _with(_VINES, "tour_ids", [*_OK_TOURS, "VT-1003"]),
]

_RIGHT = [
    _with(_CLOCK, "job_id", " CRJ-61873 "),
    _with(_CLOCK, "return", {"method": "deliver_and_set_up", "notes": "Set up in the hall."}),
    _with(_ESCAPE, "slot_id", "TS-90418 "),
    _with(_TUB, "delivery.ready_by", "17:30 "),
    _with(_TUB, "delivery.postcode", "ld71ab"),
    _with(_TUB, "water_temperature_c", 38.0),
    _with(_LLAMA, "start_time", "10:15"),
    _with(_LLAMA, "route", "Meadow_Loop"),
    _with(_LLAMA, "lead_name", "Mr Malhotra"),
    _with(_LLAMA, "lead_name", "Dev"),
    _with(_DOME, "status", "confirmed"),
    _with(_DOME, "balance_due.amount", "177"),
    _with(_DOME, "balance_due.currency", "gbp"),
    _with(_DOME, "message", "Show at 10:30; 4 adults free; 177 GBP to pay."),
    _with(_FORGE, "status", "Confirmed"),
    _with(_FORGE, "message", "Be there by 8:45 am; the forges are lit at 9. £185 left to pay."),
    _with(_FORGE, "message", "Please arrive at a quarter to nine. Balance: 185 GBP (of 345)."),
    _with(_FLYING, "session_ids", _OK_SESSIONS[::-1]),
    _with(_FLYING, "aircraft.weight_kg", "1.4"),
    _with(_FLYING, "aircraft.weight_kg", 1.40),
    _with(_VINES, "tour_ids", _OK_TOURS[::-1]),
    _with(_VINES, "group_id", "GRP-2207 "),
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


async def test_the_oracle_passes_each_through_the_server(tmp_path: Path) -> None:
    records = await oracle_records(SCENARIOS, tmp_path)
    assert not any(r.tool_errors for r in records)
