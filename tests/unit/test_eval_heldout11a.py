"""heldout11 (with heldout11_replies and heldout11_listings): its eight
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
from forge_evals.scenarios import heldout11
from forge_evals.scenarios._domain_schema import HELDOUT11_TAG
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

SCENARIOS = heldout11.SCENARIOS
BY_NAME = {s.name: s for s in SCENARIOS}
KINDS = ("carry_id", "user_value", "report_agrees", "list_match")


_results = reference_results


def test_two_scenarios_per_kind_each_tagged_heldout11() -> None:
    assert HELDOUT11_TAG == "heldout11"
    assert_two_per_kind(SCENARIOS, HELDOUT11_TAG, KINDS)


def test_fresh_names_and_tools_against_every_earlier_group() -> None:
    assert_fresh(SCENARIOS, HELDOUT11_TAG, frozenset())


def test_workflows_have_four_to_seven_tools_and_a_dated_system_prompt() -> None:
    assert raw_schema_workflows(SCENARIOS) >= 3
    assert all(len(s.reference) <= 4 for s in SCENARIOS)


@pytest.mark.parametrize("name", list(BY_NAME))
def test_the_reference_calls_run_and_pass_the_check(name: str) -> None:
    assert_reference_passes(BY_NAME[name])


def test_forbidden_tools_are_never_terminal_nor_in_the_reference() -> None:
    assert_forbidden_tools_sound(SCENARIOS)


_CARRIED = {
    "rowing_club_boat_outing_booking": ["RCM-48213", "BT-1x-07"],
    "sailmaker_repair_release": ["SLR-40562", "RLS-7fQ2k9"],
}


@pytest.mark.parametrize("name", list(_CARRIED))
def test_each_carried_id_comes_from_the_result_before_its_use(name: str) -> None:
    assert_carried_from_results(BY_NAME[name], _CARRIED[name])


def test_each_carried_id_has_a_distractor_of_the_same_shape_nearby() -> None:
    rowing = _results(BY_NAME["rowing_club_boat_outing_booking"])
    assert "RCM-31907" in rowing[0] and "CLOSED" in rowing[0]
    assert "BT-1x-12: 'Kestrel II'" in rowing[1]
    sail = _results(BY_NAME["sailmaker_repair_release"])
    assert "SLR-38815" in sail[0] and "SLR-40571" in sail[0]
    assert "RLS-4pX8m1, cancelled" in sail[1] and "berth C14" in sail[0]


def test_the_user_values_are_written_the_way_people_say_them() -> None:
    tennis = BY_NAME["tennis_court_evening_booking"].user_message
    assert not re.search(r"\b(2|3|4|90|15)\b|18:30|6:30|2026|floodlight|ball_hire", tennis)
    cider = BY_NAME["cider_pressing_day_slot"].user_message
    assert not re.search(r"\b(6|10|20|180)\b|2026|pasteuri|litre", cider)
    rowing = BY_NAME["rowing_club_boat_outing_booking"].user_message
    assert not re.search(r"\b(7|16)\b|07:00|2026|RCM-|BT-", rowing)
    sail = BY_NAME["sailmaker_repair_release"].user_message
    assert not re.search(r"C14|SLR-|RLS-|2026|marina_delivery", sail)


def test_the_reported_values_come_from_the_results() -> None:
    reef = _results(BY_NAME["aquarium_maintenance_contract_reply"])[1]
    assert "Plan REEF_PLUS, status ACTIVE" in reef and "Last visit 2026-07-07" in reef
    assert "Next scheduled visit Tue 2026-07-21, morning" in reef
    assert "Monthly fee 189.00 GBP" in reef and "164.00 GBP" in reef
    assert "NOT covered: chiller" in reef
    gin = _results(BY_NAME["gin_distillery_tour_guest_reply"])[1]
    assert "Status CONFIRMED" in gin and "arrive by 14:10" in gin
    assert "Tour starts 14:30" in gin and "balance 108.00 GBP" in gin
    assert "= 168.00 GBP" in gin and "non-alcoholic botanical tasting" in gin


def test_the_listed_items_come_from_the_results() -> None:
    classes = _results(BY_NAME["dog_agility_trial_class_entries"])[1]
    for line in (
        "FSA-S02: Sat 09:30, Jumping, grades 4-5, large",
        "FSA-S05: Sat 11:20, Jumping, grades 3-4, large",
        "FSA-S07: Sat 13:40, Jumping (combined), grades 1-7, large",
    ):
        assert line in classes
    rota = _results(BY_NAME["tram_museum_volunteer_shift_signup"])[1]
    for sid, date in (
        ("RS-5518", "Sun 2026-03-01"),
        ("RS-5530", "Sun 2026-03-08"),
        ("RS-5541", "Sat 2026-03-14"),
        ("RS-5569", "Sun 2026-03-29"),
    ):
        assert f"- {sid}: {date}, conductor, OPEN" in rota


def test_a_wrong_input_gets_a_helpful_api_error() -> None:
    rowing = BY_NAME["rowing_club_boat_outing_booking"].build().tools["book_boat_outing"]
    ok = {"member_id": "RCM-48213", "boat_id": "BT-1x-07", "date": "2026-05-16"}
    with pytest.raises(ToolResolutionError, match="membership_closed"):
        rowing.fn(**{**ok, "member_id": "RCM-31907", "launch_time": "07:00"})
    with pytest.raises(ToolResolutionError, match="boat_out_of_service"):
        rowing.fn(**{**ok, "boat_id": "BT-1x-12", "launch_time": "07:00"})
    with pytest.raises(ToolResolutionError, match="boat_not_found"):
        rowing.fn(**{**ok, "boat_id": "Kestrel", "launch_time": "07:00"})
    sail = BY_NAME["sailmaker_repair_release"].build().tools
    release = sail["arrange_sail_release"].fn
    with pytest.raises(ToolResolutionError, match="release_token_cancelled"):
        release({"order_id": "SLR-40562", "release_token": "RLS-4pX8m1"})
    with pytest.raises(ToolResolutionError, match="order_not_ready"):
        release({"order_id": "SLR-40571", "release_token": "RLS-7fQ2k9"})
    with pytest.raises(ToolResolutionError, match="no_delivery_run"):
        release(
            {
                "order_id": "SLR-40562",
                "release_token": "RLS-7fQ2k9",
                "handover": {"method": "marina_delivery", "date": "2026-03-14"},
            }
        )
    with pytest.raises(ToolResolutionError, match="order_not_found"):
        sail["get_sail_order"].fn(order_id="SC-11872")
    tennis = BY_NAME["tennis_court_evening_booking"].build().tools["book_tennis_court"]
    with pytest.raises(ToolResolutionError, match="no_floodlights"):
        tennis.fn(
            {"court": {"number": 4, "surface": "clay"}, "floodlights": True, "start_time": "14:00"}
        )
    with pytest.raises(ToolResolutionError, match="surface_mismatch"):
        tennis.fn({"court": {"number": 2, "surface": "clay"}, "start_time": "18:30"})
    with pytest.raises(ToolResolutionError, match="slot_taken"):
        tennis.fn(
            {"court": {"number": 3, "surface": "clay"}, "floodlights": True, "start_time": "18:00"}
        )
    cider = BY_NAME["cider_pressing_day_slot"].build().tools["book_pressing_slot"]
    ok_cider = {
        "bag_in_box_litres": 20,
        "bag_in_boxes": 6,
        "contact_name": "G",
        "pasteurise": False,
    }
    with pytest.raises(ToolResolutionError, match="session_full"):
        cider.fn(date="2026-10-03", session="morning", apples_kg=180, **ok_cider)
    with pytest.raises(ToolResolutionError, match="apples_kg_out_of_range"):
        cider.fn(date="2026-10-10", session="morning", apples_kg=18, **ok_cider)
    with pytest.raises(ToolResolutionError, match="no_such_box"):
        cider.fn(
            date="2026-10-10",
            session="morning",
            apples_kg=180,
            **{**ok_cider, "bag_in_box_litres": 25},
        )
    reef = BY_NAME["aquarium_maintenance_contract_reply"].build().tools
    with pytest.raises(ToolResolutionError, match="contract_not_found"):
        reef["get_maintenance_contract"].fn(contract_id="AQC-5530")
    gin = BY_NAME["gin_distillery_tour_guest_reply"].build().tools
    with pytest.raises(ToolResolutionError, match="booking_not_found"):
        gin["get_tour_booking"].fn(booking_ref="gdt-77415")
    agility = BY_NAME["dog_agility_trial_class_entries"].build().tools["submit_agility_entries"]
    with pytest.raises(ToolResolutionError, match="height_mismatch"):
        agility.fn(
            {"trial_id": "TR-2608-FEN", "dog": {"height": "large"}, "class_ids": ["FSA-S03"]}
        )
    with pytest.raises(ToolResolutionError, match="class_not_found"):
        agility.fn({"trial_id": "TR-2608-FEN", "class_ids": ["S02"]})
    tram = BY_NAME["tram_museum_volunteer_shift_signup"].build().tools
    with pytest.raises(ToolResolutionError, match="not_passed"):
        tram["sign_up_volunteer_shifts"].fn(volunteer_id="VOL-0387", shift_ids=["RS-5524"])
    with pytest.raises(ToolResolutionError, match="volunteer_not_found"):
        tram["sign_up_volunteer_shifts"].fn(volunteer_id="Owen", shift_ids=["RS-5518"])


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


_ROWING, _SAIL = "rowing_club_boat_outing_booking", "sailmaker_repair_release"
_TENNIS, _CIDER = "tennis_court_evening_booking", "cider_pressing_day_slot"
_REEF, _GIN = "aquarium_maintenance_contract_reply", "gin_distillery_tour_guest_reply"
_AGILITY, _TRAM = "dog_agility_trial_class_entries", "tram_museum_volunteer_shift_signup"

_OK_CLASSES = ["FSA-S02", "FSA-S05", "FSA-S07"]
_OK_SHIFTS = ["RS-5518", "RS-5530", "RS-5541", "RS-5569"]

_WRONG = [
    _with(_ROWING, "member_id", "RCM-31907"),
    _with(_ROWING, "member_id", "p.sandhu@towpath.example"),
    _with(_ROWING, "member_id", "rcm-48213"),
    _with(_ROWING, "boat_id", "BT-1x-12"),
    _with(_ROWING, "boat_id", "Kestrel"),
    _with(_ROWING, "boat_id", "BT-1x-03"),
    _with(_ROWING, "date", "2026-05-23"),
    _with(_ROWING, "date", "2026-05-14"),
    _with(_ROWING, "launch_time", "19:00"),
    _with(_SAIL, "order_id", "SLR-40571"),
    _with(_SAIL, "order_id", "SLR-38815"),
    _with(_SAIL, "order_id", "SC-11872"),
    _with(_SAIL, "release_token", "RLS-4pX8m1"),
    _with(_SAIL, "release_token", "RLS-2dW5n7"),
    _with(_SAIL, "release_token", "INV-S-60412"),
    _with(_SAIL, "handover.method", "collect_from_loft"),
    _with(_SAIL, "handover.date", "2026-03-20"),
    _with(_SAIL, "handover.date", "2026-03-10"),
    _with(_SAIL, "handover.berth", "C41"),
    _with(_SAIL, "handover", {"method": "marina_delivery", "date": "2026-03-13"}),
    _with(_TENNIS, "membership_id", "LTC-2219"),
    _with(_TENNIS, "date", "2026-10-22"),
    _with(_TENNIS, "date", "2026-10-08"),
    _with(_TENNIS, "court", {"number": 4, "surface": "clay"}),
    _with(_TENNIS, "court", {"number": 2, "surface": "hard"}),
    _with(_TENNIS, "start_time", "06:30"),
    _with(_TENNIS, "start_time", "18:00"),
    _with(_TENNIS, "start_time", "18:14"),
    _with(_TENNIS, "duration_minutes", 60),
    _with(_TENNIS, "duration_minutes", 120),
    _with(_TENNIS, "players", {"members": 4, "guests": 0}),
    _with(_TENNIS, "players", {"members": 1, "guests": 2}),
    _with(_TENNIS, "players", {"members": 2, "guests": 3}),
    _with(_TENNIS, "floodlights", False),
    _with(_TENNIS, "ball_hire", True),
    _with(_CIDER, "date", "2026-10-03"),
    _with(_CIDER, "date", "2026-10-17"),
    _with(_CIDER, "session", "afternoon"),
    _with(_CIDER, "apples_kg", 100),
    _with(_CIDER, "apples_kg", 400),
    _with(_CIDER, "apples_kg", 108),
    _with(_CIDER, "pasteurise", True),
    _with(_CIDER, "bag_in_box_litres", 10),
    _with(_CIDER, "bag_in_box_litres", 5),
    _with(_CIDER, "bag_in_boxes", 1),
    _with(_CIDER, "bag_in_boxes", 12),
    _with(_CIDER, "contact_name", "Dabinett"),
    _with(_REEF, "contract_id", "MC-24-0318"),
    _with(_REEF, "contract_id", "AQC-5530"),
    _with(_REEF, "plan", "ESSENTIAL"),
    _with(_REEF, "status", "TERMINATED"),
    _with(_REEF, "next_visit.date", "2026-07-07"),
    _with(_REEF, "next_visit.date", "2026-07-14"),
    _with(_REEF, "next_visit.window", "afternoon"),
    _with(_REEF, "monthly_fee.amount", 164.00),
    _with(_REEF, "monthly_fee.amount", 85.00),
    _with(_REEF, "monthly_fee.amount", 79.00),
    _with(_REEF, "monthly_fee.currency", "EUR"),
    _with(_REEF, "chiller_covered", True),
    _with(_GIN, "booking_ref", "GDT-77498"),
    _with(_GIN, "booking_ref", "GDT-70932"),
    _with(_GIN, "status", "WAITLIST"),
    _with(_GIN, "non_alcoholic_tasting", False),
    _with(_GIN, "message", "Please arrive by 14:30. You owe 108.00 GBP."),
    _with(_GIN, "message", "Please arrive by 14:10. You owe 168.00 GBP."),
    _with(_GIN, "message", "Arrive by 14:10; 60.00 GBP deposit paid."),
    _with(_GIN, "message", "Arrive by 14:10. A driver's pack is free."),
    _with(_AGILITY, "trial_id", "Fenland Summer Agility Trial"),
    _with(_AGILITY, "dog.kc_registration", "AW04471270"),
    _with(_AGILITY, "dog.grade", 5),
    _with(_AGILITY, "dog.height", "medium"),
    _with(_AGILITY, "payment", "bank_transfer"),
    _with(_AGILITY, "class_ids", [*_OK_CLASSES, "FSA-S08"]),
    _with(_AGILITY, "class_ids", [*_OK_CLASSES, "FSA-S03"]),
    _with(_AGILITY, "class_ids", [*_OK_CLASSES, "FSA-S04"]),
    _with(_AGILITY, "class_ids", [*_OK_CLASSES, "FSA-S06"]),
    _with(_AGILITY, "class_ids", [*_OK_CLASSES, "FSA-U01"]),
    _with(_AGILITY, "class_ids", [*_OK_CLASSES, "FSA-U02"]),
    _with(_AGILITY, "class_ids", ["FSA-S02", "FSA-S05"]),
    _with(_AGILITY, "class_ids", ["FSA-S02", "FSA-S07"]),
    _with(_AGILITY, "class_ids", [*_OK_CLASSES, "FSA-S02"]),
    _with(_TRAM, "volunteer_id", "Owen Pritchard"),
    _with(_TRAM, "shift_ids", [*_OK_SHIFTS, "RS-5512"]),
    _with(_TRAM, "shift_ids", [*_OK_SHIFTS, "RS-5523"]),
    _with(_TRAM, "shift_ids", [*_OK_SHIFTS, "RS-5536"]),
    _with(_TRAM, "shift_ids", [*_OK_SHIFTS, "RS-5547"]),
    _with(_TRAM, "shift_ids", [*_OK_SHIFTS, "RS-5552"]),
    _with(_TRAM, "shift_ids", [*_OK_SHIFTS, "RS-5558"]),
    _with(_TRAM, "shift_ids", [*_OK_SHIFTS, "RS-5563"]),
    _with(_TRAM, "shift_ids", [*_OK_SHIFTS, "RS-5574"]),
    _with(_TRAM, "shift_ids", ["RS-5530", "RS-5541", "RS-5569"]),
    _with(_TRAM, "shift_ids", ["RS-5518", "RS-5530", "RS-5541"]),
    _with(_TRAM, "shift_ids", [*_OK_SHIFTS, "RS-5518"]),
]

_RIGHT = [
    _with(_ROWING, "launch_time", "7:00"),
    _with(_ROWING, "member_id", " RCM-48213 "),
    _with(_SAIL, "handover.berth", "C 14"),
    _with(_TENNIS, "membership_id", "ltc-2291"),
    _with(_CIDER, "session", "Morning"),
    _with(_CIDER, "contact_name", "Gwen"),
    _with(_CIDER, "contact_name", "G. Pryce"),
    _with(_REEF, "plan", "reef_plus"),
    _with(_REEF, "monthly_fee.amount", "189"),
    _with(_REEF, "message", "Next visit 21 July in the morning; 189 GBP a month."),
    _with(_GIN, "status", "confirmed"),
    _with(_GIN, "message", "Be there by 2:10 pm (start 14:30). 168 total, 60 paid, 108 left."),
    _with(_GIN, "message", "Please arrive by ten past two; the balance is £108."),
    _with(_AGILITY, "class_ids", _OK_CLASSES[::-1]),
    _with(_AGILITY, "dog.kc_registration", "aw 0447 1207"),
    _with(_TRAM, "shift_ids", _OK_SHIFTS[::-1]),
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
