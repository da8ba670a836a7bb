"""heldout10 (with heldout10_replies and heldout10_listings): its eight
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
from forge_evals.scenarios import heldout10
from forge_evals.scenarios._domain_schema import HELDOUT10_TAG
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

SCENARIOS = heldout10.SCENARIOS
BY_NAME = {s.name: s for s in SCENARIOS}
KINDS = ("carry_id", "user_value", "report_agrees", "list_match")


_results = reference_results


def test_two_scenarios_per_kind_each_tagged_heldout10() -> None:
    assert HELDOUT10_TAG == "heldout10"
    assert_two_per_kind(SCENARIOS, HELDOUT10_TAG, KINDS)


def test_fresh_names_and_tools_against_every_earlier_group() -> None:
    assert_fresh(SCENARIOS, HELDOUT10_TAG, frozenset())


def test_workflows_have_four_to_seven_tools_and_a_dated_system_prompt() -> None:
    assert raw_schema_workflows(SCENARIOS) >= 3
    assert all(len(s.reference) <= 4 for s in SCENARIOS)


@pytest.mark.parametrize("name", list(BY_NAME))
def test_the_reference_calls_run_and_pass_the_check(name: str) -> None:
    assert_reference_passes(BY_NAME[name])


def test_forbidden_tools_are_never_terminal_nor_in_the_reference() -> None:
    assert_forbidden_tools_sound(SCENARIOS)


_CARRIED = {
    "antique_clock_repair_quote_approval": ["RJ-26-0417-bq", "QT-7Hk2m9"],
    "oyster_farm_tide_tour_booking": ["dep_9QmT7c", "HLD-x83KpQ2"],
}


@pytest.mark.parametrize("name", list(_CARRIED))
def test_each_carried_id_comes_from_the_result_before_its_use(name: str) -> None:
    assert_carried_from_results(BY_NAME[name], _CARRIED[name])


def test_the_user_values_are_written_the_way_people_say_them() -> None:
    carriage = BY_NAME["carriage_hire_wedding_booking"].user_message
    assert not re.search(r"\b(4|60|250|13)\b|13:15|2026|open_landau|grey\b", carriage)
    piping = BY_NAME["bagpipe_lesson_block_signup"].user_message
    assert not re.search(r"\b(8|11)\b|18:30|2026|practice_chanter|chanter|photo_consent", piping)
    clock = BY_NAME["antique_clock_repair_quote_approval"].user_message
    assert not re.search(r"QO-|QT-|RJ-|collect\b", clock)


def test_the_reported_values_come_from_the_results() -> None:
    books = _results(BY_NAME["rare_book_appraisal_status_reply"])[1]
    assert "Status: COMPLETE" in books and "value: 6,500.00 GBP" in books
    assert "3,800.00-4,500.00 GBP" in books and "95.00 GBP, OUTSTANDING" in books
    sauna = _results(BY_NAME["mobile_sauna_hire_booking_reply"])[1]
    assert "window 08:30-10:00" in sauna and "Balance due 345.00 GBP" in sauna
    assert "total 495.00 GBP" in sauna and "Included: two 15 kg nets" in sauna


def test_the_listed_items_come_from_the_results() -> None:
    sheep = _results(BY_NAME["sheep_shearing_round_booking"])[1]
    for mob, n in (("MOB-07a", 212), ("MOB-07b", 38), ("MOB-07d", 4), ("MOB-07f", 45)):
        assert f"{mob}: {n} x" in sheep
    assert "Thursday 2026-06-18" in sheep
    layouts = _results(BY_NAME["model_railway_exhibition_entries"])[1]
    assert all(f"{lid}:" in layouts for lid in ("LAY-14c", "LAY-19f", "LAY-31m"))


def test_a_wrong_input_gets_a_helpful_api_error() -> None:
    clock = BY_NAME["antique_clock_repair_quote_approval"].build().tools
    approve = clock["approve_restoration_quote"].fn
    ok = {"job_id": "RJ-26-0417-bq", "quote_id": "QT-7Hk2m9", "return_method": "collect"}
    with pytest.raises(ToolResolutionError, match="quote_withdrawn"):
        approve(**{**ok, "quote_id": "QT-6Rw1c4", "option_code": "QO-2"})
    with pytest.raises(ToolResolutionError, match="unknown option_code"):
        approve(**{**ok, "option_code": "2"})
    with pytest.raises(ToolResolutionError, match="job_closed"):
        clock["get_repair_quote"].fn(job_id="RJ-26-0388-bp")
    oyster = BY_NAME["oyster_farm_tide_tour_booking"].build().tools
    with pytest.raises(ToolResolutionError, match="not_enough_places"):
        oyster["hold_tour_places"].fn(departure_id="dep_9QmT7c", guests=8)
    with pytest.raises(ToolResolutionError, match="hold_not_found"):
        oyster["confirm_tide_tour_booking"].fn({"hold_id": "dep_9QmT7c"})
    carriage = BY_NAME["carriage_hire_wedding_booking"].build().tools["book_wedding_carriage"]
    with pytest.raises(ToolResolutionError, match="pair only"):
        carriage.fn({"carriage": "glass_coach", "horses": {"count": 4}})
    with pytest.raises(ToolResolutionError, match="deposit_out_of_range"):
        carriage.fn({"carriage": "open_landau", "deposit": {"amount": 25}})
    piping = BY_NAME["bagpipe_lesson_block_signup"].build().tools["enrol_lesson_block"]
    with pytest.raises(ToolResolutionError, match="slot_unavailable"):
        piping.fn({"block": {"start_time": "06:30"}})
    books = BY_NAME["rare_book_appraisal_status_reply"].build().tools
    with pytest.raises(ToolResolutionError, match="item_not_found"):
        books["get_appraisal_record"].fn(item_id="CL-6620")
    sauna = BY_NAME["mobile_sauna_hire_booking_reply"].build().tools
    with pytest.raises(ToolResolutionError, match="booking_not_found"):
        sauna["get_sauna_hire"].fn(booking_id="kms-bk-40218")
    sheep = BY_NAME["sheep_shearing_round_booking"].build().tools["book_shearing_visit"]
    with pytest.raises(ToolResolutionError, match="head_count_over_register"):
        sheep.fn({"mobs": [{"mob_id": "MOB-07d", "head_count": 40}]})
    with pytest.raises(ToolResolutionError, match="no_round"):
        sheep.fn({"visit_date": "2026-06-11", "mobs": []})
    rail = BY_NAME["model_railway_exhibition_entries"].build().tools
    with pytest.raises(ToolResolutionError, match="exceeds_stand_limit"):
        rail["enter_layouts_for_exhibition"].fn(
            exhibition_id="EXH-2611-hq", layout_ids=["LAY-22a"], contact_email="x@y.example"
        )


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


_CLOCK, _OYSTER = "antique_clock_repair_quote_approval", "oyster_farm_tide_tour_booking"
_CARRIAGE, _PIPING = "carriage_hire_wedding_booking", "bagpipe_lesson_block_signup"
_BOOKS, _SAUNA = "rare_book_appraisal_status_reply", "mobile_sauna_hire_booking_reply"
_SHEEP, _RAIL = "sheep_shearing_round_booking", "model_railway_exhibition_entries"

_CHURCH = {"place": "St Mary's Church, Ashwell", "wait_minutes": 60}
_PARTY = {"place": "Ashwell Bury", "wait_minutes": 0}
_OK_MOBS = [("MOB-07a", 212), ("MOB-07b", 38), ("MOB-07d", 4), ("MOB-07f", 45)]
_OK_LAYOUTS = ["LAY-14c", "LAY-19f", "LAY-31m"]


def _mobs(pairs: list[tuple[str, int]]) -> list[dict[str, Any]]:
    return [{"mob_id": mid, "head_count": n} for mid, n in pairs]


_WRONG = [
    _with(_CLOCK, "job_id", "RJ-26-0388-bp"),
    _with(_CLOCK, "job_id", "CUS-20931"),
    _with(_CLOCK, "quote_id", "QT-6Rw1c4"),
    _with(_CLOCK, "quote_id", "qt-7hk2m9"),
    _with(_CLOCK, "option_code", "QO-1"),
    _with(_CLOCK, "option_code", "460.00"),
    _with(_CLOCK, "return_method", "courier"),
    _with(_OYSTER, "hold_id", "HLD-x83KpQ"),
    _with(_OYSTER, "hold_id", "OYT-26-5830"),
    _with(_OYSTER, "departure_id", "dep_9QmT4a"),
    _with(_OYSTER, "departure_id", "18:45"),
    _with(_OYSTER, "lead_guest.email", "tunde.okafor@mailbay.com"),
    _with(_OYSTER, "wader_hire", False),
    _with(_CARRIAGE, "event_date", "2026-06-06"),
    _with(_CARRIAGE, "event_date", "2026-06-20"),
    _with(_CARRIAGE, "carriage", "glass_coach"),
    _with(_CARRIAGE, "horses.count", 2),
    _with(_CARRIAGE, "horses.colour", "bay"),
    _with(_CARRIAGE, "pickup.time", "01:15"),
    _with(_CARRIAGE, "pickup.time", "12:45"),
    _with(_CARRIAGE, "stops", [_CHURCH]),
    _with(_CARRIAGE, "stops", [{**_CHURCH, "wait_minutes": 1}, _PARTY]),
    _with(_CARRIAGE, "stops", [_PARTY, _CHURCH]),
    _with(_CARRIAGE, "deposit.amount", 200),
    _with(_CARRIAGE, "deposit.currency", "EUR"),
    _with(_CARRIAGE, "contact.phone", "07700 900626"),
    _with(_PIPING, "student.age", 16),
    _with(_PIPING, "instrument", "highland_pipes"),
    _with(_PIPING, "block.lessons", 12),
    _with(_PIPING, "block.first_lesson", "2026-10-20"),
    _with(_PIPING, "block.first_lesson", "2026-11-03"),
    _with(_PIPING, "block.start_time", "06:30"),
    _with(_PIPING, "block.start_time", "16:30"),
    _with(_PIPING, "block.weekday", "thursday"),
    _with(_PIPING, "photo_consent", True),
    _with(_PIPING, "payer_email", "callum.baird@glenmail.example"),
    _with(_BOOKS, "item_id", "APR-26-0871-Lt"),
    _with(_BOOKS, "status", "IN_PROGRESS"),
    _with(_BOOKS, "insurance_value_gbp", 4500.00),
    _with(_BOOKS, "insurance_value_gbp", 3800.00),
    _with(_BOOKS, "fee_outstanding_gbp", 0),
    _with(_BOOKS, "message", "It's done; insure it for 4,500.00 GBP. Fee 95.00 GBP due."),
    _with(_BOOKS, "message", "Insure it for 6,500.00 GBP; nothing is owed."),
    _with(_SAUNA, "booking_id", "KMS-bk-37790"),
    _with(_SAUNA, "delivery_window_start", "10:00"),
    _with(_SAUNA, "balance_due_gbp", 495.00),
    _with(_SAUNA, "balance_due_gbp", 150.00),
    _with(_SAUNA, "balance_due_gbp", 545.00),
    _with(_SAUNA, "firewood_included", False),
    _with(_SAUNA, "message", "It arrives from 08:30; you owe 495.00 GBP."),
    _with(_SHEEP, "holding_id", "08/123/0045"),
    _with(_SHEEP, "visit_date", "2026-06-11"),
    _with(_SHEEP, "method", "blade"),
    _with(_SHEEP, "mobs", _mobs([*_OK_MOBS, ("MOB-07c", 240)])),
    _with(_SHEEP, "mobs", _mobs([*_OK_MOBS, ("MOB-07e", 60)])),
    _with(_SHEEP, "mobs", _mobs([*_OK_MOBS, ("MOB-07g", 12)])),
    _with(_SHEEP, "mobs", _mobs([p for p in _OK_MOBS if p[0] != "MOB-07f"])),
    _with(_SHEEP, "mobs", _mobs([(mid, 1) for mid, _ in _OK_MOBS])),
    _with(_SHEEP, "mobs", _mobs([*_OK_MOBS, ("MOB-07a", 212)])),
    _with(_RAIL, "exhibition_id", "Harrogate"),
    _with(_RAIL, "layout_ids", [*_OK_LAYOUTS, "LAY-22a"]),
    _with(_RAIL, "layout_ids", [*_OK_LAYOUTS, "LAY-23d"]),
    _with(_RAIL, "layout_ids", [*_OK_LAYOUTS, "LAY-27k"]),
    _with(_RAIL, "layout_ids", ["LAY-14c", "LAY-19f"]),
    _with(_RAIL, "layout_ids", [*_OK_LAYOUTS, "LAY-14c"]),
    _with(_RAIL, "layout_ids", ["Aire Valley Junction", "Ilkley Goods", "Wharfe Viaduct"]),
    _with(_RAIL, "contact_email", "secretary@wharfedale.example"),
]

_BOOKS_ALSO_ESTIMATE = (
    "Complete. Insurance value 6500 GBP (auction estimate 3,800-4,500 GBP). 95 GBP fee outstanding."
)

_RIGHT = [
    _with(_CLOCK, "quote_id", " QT-7Hk2m9 "),
    _with(_OYSTER, "lead_guest.email", "Tunde.Okafor@mailbay.example"),
    _with(_CARRIAGE, "deposit.amount", 250.0),
    _with(_CARRIAGE, "contact.phone", "+44 7700 900662"),
    _with(_CARRIAGE, "stops", [{**_CHURCH, "place": "St Mary's"}, _PARTY]),
    _with(_PIPING, "student.full_name", "Callum"),
    _with(_BOOKS, "status", "complete"),
    _with(_BOOKS, "message", _BOOKS_ALSO_ESTIMATE),
    _with(_SAUNA, "balance_due_gbp", "345"),
    _with(_SAUNA, "message", "Between half past eight and ten; 345.00 GBP left to pay."),
    _with(_SHEEP, "mobs", _mobs(_OK_MOBS[::-1])),
    _with(_RAIL, "layout_ids", ["LAY-31m", "LAY-14c", "LAY-19f"]),
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
