"""heldout9 (with heldout9_replies and heldout9_listings): its eight
scenarios (two each of carry_id, user_value, report_agrees and list_match)
run their reference calls against their own tools, pass their own checks, and
are strict about the wrong values they are there to catch."""

from __future__ import annotations

import re
from typing import Any

import pytest

from forge_client import ToolResolutionError, Workflow
from forge_evals.scenario import RefCall, Scenario
from forge_evals.scenarios import ALL_SCENARIOS, heldout9
from forge_evals.scenarios._domain_schema import HELDOUT9_TAG

SCENARIOS = heldout9.SCENARIOS
BY_NAME = {s.name: s for s in SCENARIOS}
KINDS = ("carry_id", "user_value", "report_agrees", "list_match")


def _run(wf: Workflow, ref: RefCall) -> str:
    tool = wf.tools[ref.tool]
    args = dict(ref.args)
    return str(tool.fn(args) if tool.raw_schema is not None else tool.fn(**args))


def _results(scenario: Scenario) -> list[str]:
    wf = scenario.build()
    return [_run(wf, ref) for ref in scenario.reference]


def test_two_scenarios_per_kind_each_tagged_heldout9() -> None:
    assert HELDOUT9_TAG == "heldout9"
    assert len(BY_NAME) == len(SCENARIOS) == 8
    for kind in KINDS:
        assert sum(kind in s.tags for s in SCENARIOS) == 2, kind
    assert all(len(s.tags) == 2 and s.tags[0] == HELDOUT9_TAG for s in SCENARIOS)


def test_fresh_names_and_tools_against_every_earlier_group() -> None:
    others = [s for s in ALL_SCENARIOS if HELDOUT9_TAG not in s.tags]
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
    "taxidermy_barn_owl_commission": ["SPC-2610-4Kq7", "A10-GB-26-0093317"],
    "canal_boat_pump_out_slot": ["bt_7Hq2Xc9", "PS-4M8xR7"],
}


@pytest.mark.parametrize("name", list(_CARRIED))
def test_each_carried_id_comes_from_the_result_before_its_use(name: str) -> None:
    scenario = BY_NAME[name]
    results = _results(scenario)
    for i, carried in enumerate(_CARRIED[name]):
        assert carried not in scenario.user_message
        assert carried in results[i] and carried not in " ".join(results[:i])


def test_the_user_values_are_written_the_way_people_say_them() -> None:
    tandem = BY_NAME["paragliding_tandem_saturday"].user_message
    assert not re.search(r"\b(34|61|29|93)\b|15:45|2026", tandem)
    knives = BY_NAME["knife_sharpening_kitchen_visit"].user_message
    assert not re.search(r"\b(12|4|2)\b|07:50|2026|PO-|serrated", knives)
    pump = BY_NAME["canal_boat_pump_out_slot"].user_message
    assert not re.search(r"11:30|2026|pump_out_card", pump)
    owl = BY_NAME["taxidermy_barn_owl_commission"].user_message
    assert not re.search(r"\d|wings_spread|50", owl)


def test_the_reported_values_come_from_the_results() -> None:
    bells = _results(BY_NAME["bell_tower_visiting_band_reply"])[1]
    assert "Status PROVISIONAL" in bells and "stop by 11:15" in bells
    assert "30.00 GBP per band" in bells and "60.00 GBP" in bells
    theatre = _results(BY_NAME["captioned_performance_access_reply"])[1]
    assert "total paid 48.00 GBP" in theatre and "64.00 GBP" in theatre
    assert "Captioning: PENDING" in theatre and "C11 and C12" in theatre


def test_the_listed_items_come_from_the_results() -> None:
    fridge = _results(BY_NAME["community_fridge_donation_log"])[1]
    for line, qty in (("ML-81a2", 6), ("ML-81a5", 12), ("ML-81a6", 8), ("ML-81a8", 5)):
        assert f"{line}: {qty} x" in fridge
    loans = _results(BY_NAME["tool_library_loan_renewals"])[1]
    assert all(f"{lid}:" in loans for lid in ("LN-88310-a", "LN-88342-c", "LN-88355-g"))


def test_a_wrong_input_gets_a_helpful_api_error() -> None:
    owl = BY_NAME["taxidermy_barn_owl_commission"].build().tools
    with pytest.raises(ToolResolutionError, match="article10_required"):
        owl["open_mount_commission"].fn({"specimen_id": "SPC-2610-4Kq7"})
    with pytest.raises(ToolResolutionError, match="already_completed"):
        owl["open_mount_commission"].fn({"specimen_id": "SPC-2609-2Wn3"})
    pump = BY_NAME["canal_boat_pump_out_slot"].build().tools
    with pytest.raises(ToolResolutionError, match="slot_taken"):
        pump["book_pump_out"].fn(
            boat_id="bt_7Hq2Xc9", slot_id="PS-4M8xT3", self_service=False, payment="card"
        )
    with pytest.raises(ToolResolutionError, match="boat_not_found"):
        pump["book_pump_out"].fn(
            boat_id="52817", slot_id="PS-4M8xR7", self_service=False, payment="card"
        )
    tandem = BY_NAME["paragliding_tandem_saturday"].build().tools
    with pytest.raises(ToolResolutionError, match="weight_out_of_range"):
        tandem["book_tandem_flights"].fn({"passengers": [{"full_name": "A", "weight_kg": 130}]})
    knives = BY_NAME["knife_sharpening_kitchen_visit"].build().tools
    with pytest.raises(ToolResolutionError, match="van_not_in_zone"):
        knives["book_sharpening_visit"].fn({"visit": {"date": "2026-03-18"}})
    theatre = BY_NAME["captioned_performance_access_reply"].build().tools
    with pytest.raises(ToolResolutionError, match="invalid captioning_status"):
        theatre["reply_access_enquiry"].fn(
            booking_id="AB-7731-kX",
            total_paid_gbp=48,
            seats=["C11", "C12"],
            captioning_status="PAID",
            message="m",
        )
    fridge = BY_NAME["community_fridge_donation_log"].build().tools
    with pytest.raises(ToolResolutionError, match="more than delivered"):
        fridge["log_fridge_donation"].fn({"items": [{"line_id": "ML-81a2", "quantity": 60}]})
    tools = BY_NAME["tool_library_loan_renewals"].build().tools
    with pytest.raises(ToolResolutionError, match="reserved"):
        tools["renew_tool_loans"].fn(member_id="MBR-5530-tz", loan_ids=["LN-88310-b"])
    with pytest.raises(ToolResolutionError, match="overdue"):
        tools["renew_tool_loans"].fn(member_id="MBR-5530-tz", loan_ids=["LN-88201-e"])


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


_PRIYA = {"full_name": "Priya Nair", "age": 34, "weight_kg": 61}
_ARJUN = {"full_name": "Arjun Nair", "age": 29, "weight_kg": 93}
_CHEF, _BREAD = (
    {"blade_type": "chef_knife", "quantity": 12},
    {"blade_type": "serrated_knife", "quantity": 4},
)
_SCISSORS = {"blade_type": "scissors", "quantity": 2}
_OK_LINES = [("ML-81a2", 6), ("ML-81a5", 12), ("ML-81a6", 8), ("ML-81a8", 5)]


def _lines(pairs: list[tuple[str, int]]) -> list[dict[str, Any]]:
    return [{"line_id": lid, "quantity": qty} for lid, qty in pairs]


_OWL, _TANDEM, _KNIVES = (
    "taxidermy_barn_owl_commission",
    "paragliding_tandem_saturday",
    "knife_sharpening_kitchen_visit",
)
_PUMP, _BELLS, _THEATRE = (
    "canal_boat_pump_out_slot",
    "bell_tower_visiting_band_reply",
    "captioned_performance_access_reply",
)
_FRIDGE, _TOOLS = "community_fridge_donation_log", "tool_library_loan_renewals"

_WRONG = [
    _with(_OWL, "specimen_id", "SPC-2609-2Wn3"),
    _with(_OWL, "specimen_id", "CU-11872"),
    _with(_OWL, "specimen_id", "spc-2610-4kq7"),
    _with(_OWL, "article10_ref", "A10-GB-26-0000000"),
    _with(_OWL, "mount.pose", "perched"),
    _with(_OWL, "mount.base", "branch"),
    _with(_OWL, "mount.display_case", False),
    _with(_OWL, "deposit_percent", 25),
    _with(_PUMP, "boat_id", "bt_7Hq2Zp4"),
    _with(_PUMP, "boat_id", "52817"),
    _with(_PUMP, "slot_id", "PS-4M8xQ1"),
    _with(_PUMP, "slot_id", "PS-4M8xS2"),
    _with(_PUMP, "slot_id", "11:30"),
    _with(_PUMP, "self_service", True),
    _with(_PUMP, "payment", "card"),
    _with(_TANDEM, "date", "2026-05-23"),
    _with(_TANDEM, "date", "2026-05-17"),
    _with(_TANDEM, "slot_time", "16:45"),
    _with(_TANDEM, "slot_time", "15:15"),
    _with(_TANDEM, "passengers", [_PRIYA]),
    _with(_TANDEM, "passengers", [{**_PRIYA, "weight_kg": 16}, _ARJUN]),
    _with(_TANDEM, "passengers", [_PRIYA, {**_ARJUN, "weight_kg": 39}]),
    _with(_TANDEM, "passengers", [{**_PRIYA, "age": 43}, _ARJUN]),
    _with(_TANDEM, "media_package", "photos"),
    _with(_TANDEM, "contact.mobile", "07700 900481"),
    _with(_KNIVES, "customer_id", "TC-0388-WQ"),
    _with(_KNIVES, "visit.date", "2026-03-18"),
    _with(_KNIVES, "visit.date", "2026-03-25"),
    _with(_KNIVES, "visit.arrival_time", "08:10"),
    _with(_KNIVES, "visit.arrival_time", "19:50"),
    _with(_KNIVES, "visit.call_on_arrival", True),
    _with(_KNIVES, "items", [_CHEF, {**_BREAD, "blade_type": "chef_knife"}, _SCISSORS]),
    _with(_KNIVES, "items", [{**_CHEF, "quantity": 2}, _BREAD, _SCISSORS]),
    _with(_KNIVES, "items", [_CHEF, _BREAD, {**_SCISSORS, "quantity": 4}]),
    _with(_KNIVES, "items", [_CHEF, _BREAD]),
    _with(_KNIVES, "po_number", "PO-40271"),
    _with(_BELLS, "request_id", "VR-26-0822-Kd"),
    _with(_BELLS, "status", "CONFIRMED"),
    _with(_BELLS, "donation_gbp", 60.00),
    _with(_BELLS, "ring_until", "12:00"),
    _with(_BELLS, "ring_until", "11:40"),
    _with(_BELLS, "message", "You're confirmed; ring until noon, 60.00 GBP please."),
    _with(_THEATRE, "booking_id", "AB-7102-mP"),
    _with(_THEATRE, "total_paid_gbp", 64.00),
    _with(_THEATRE, "total_paid_gbp", 32.00),
    _with(_THEATRE, "seats", ["C11"]),
    _with(_THEATRE, "seats", ["C11", "C13"]),
    _with(_THEATRE, "captioning_status", "confirmed"),
    _with(_THEATRE, "message", "You paid 64.00 GBP and the captioning is confirmed."),
    _with(_FRIDGE, "donor_id", "DNR-0420-MK"),
    _with(_FRIDGE, "received_on", "2026-06-12"),
    _with(_FRIDGE, "items", _lines([*_OK_LINES, ("ML-81a3", 10)])),
    _with(_FRIDGE, "items", _lines([*_OK_LINES, ("ML-81a4", 4)])),
    _with(_FRIDGE, "items", _lines([*_OK_LINES, ("ML-81a7", 3)])),
    _with(_FRIDGE, "items", _lines([*_OK_LINES, ("ML-81a9", 6)])),
    _with(_FRIDGE, "items", _lines([p for p in _OK_LINES if p[0] != "ML-81a5"])),
    _with(_FRIDGE, "items", _lines([(lid, 1) for lid, _ in _OK_LINES])),
    _with(_FRIDGE, "items", _lines([*_OK_LINES, ("ML-81a2", 6)])),
    _with(_TOOLS, "member_id", "Jo Whitlock"),
    _with(_TOOLS, "loan_ids", ["LN-88310-a", "LN-88342-c", "LN-88355-g", "LN-88361-f"]),
    _with(_TOOLS, "loan_ids", ["LN-88310-a", "LN-88342-c", "LN-88355-g", "LN-88310-b"]),
    _with(_TOOLS, "loan_ids", ["LN-88310-a", "LN-88342-c", "LN-88355-g", "LN-88342-d"]),
    _with(_TOOLS, "loan_ids", ["LN-88310-a", "LN-88342-c", "LN-88355-g", "LN-88201-e"]),
    _with(_TOOLS, "loan_ids", ["LN-88310-a", "LN-88342-c"]),
    _with(_TOOLS, "loan_ids", ["LN-88310-a", "LN-88342-c", "LN-88355-g", "LN-88310-a"]),
]

_RIGHT = [
    _with(_PUMP, "boat_id", " bt_7Hq2Xc9 "),
    _with(_TANDEM, "passengers", [_ARJUN, _PRIYA]),
    _with(_TANDEM, "contact.mobile", "+44 7700 900418"),
    _with(_TANDEM, "contact.email", "Priya.Nair@fastpost.example"),
    _with(_KNIVES, "items", [_SCISSORS, _BREAD, _CHEF]),
    _with(_KNIVES, "po_number", "PO 40217"),
    _with(_BELLS, "status", "provisional"),
    _with(_BELLS, "donation_gbp", "30"),
    _with(_THEATRE, "seats", ["Stalls C12", "Stalls C11"]),
    _with(_THEATRE, "captioning_status", "Pending"),
    _with(_THEATRE, "message", "64.00 GBP less the 25% concession: you paid 48.00 GBP."),
    _with(_FRIDGE, "items", _lines(_OK_LINES[::-1])),
    _with(_FRIDGE, "volunteer_name", "Alex (Saturday morning shift)"),
    _with(_TOOLS, "loan_ids", ["LN-88355-g", "LN-88310-a", "LN-88342-c"]),
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
