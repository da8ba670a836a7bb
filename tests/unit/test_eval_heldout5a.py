"""heldout5 (and heldout5_listings): its eight scenarios (two each of
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
from forge_evals.scenarios import ALL_SCENARIOS, heldout5, heldout5_part2
from forge_evals.targets import in_process, oracle_backend

# heldout5 exports the whole group; this file tests its own eight.
SCENARIOS = tuple(s for s in heldout5.SCENARIOS if s not in heldout5_part2.SCENARIOS)
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


def test_two_scenarios_per_kind_each_tagged_heldout5() -> None:
    assert len(BY_NAME) == len(SCENARIOS) == 8
    for kind in KINDS:
        assert sum(kind in s.tags for s in SCENARIOS) == 2, kind
    assert all(s.tags == (s.tags[0], s.tags[1]) and s.tags[0] == "heldout5" for s in SCENARIOS)


def test_fresh_names_and_tools_against_every_earlier_group() -> None:
    # Built before the group is registered: no clash with what was tuned on.
    earlier = [s for s in ALL_SCENARIOS if "heldout5" not in s.tags]
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
    "escape_room_hold_booking": ["ses_Ae41nR2d", "hld_9vQ2mX7rT4"],
    "poster_print_quote_order": ["ast_7Rw2Kd9QxB", "qte_4hN8sV1mYc"],
}


@pytest.mark.parametrize("name", list(_CARRIED))
def test_each_carried_id_comes_from_the_result_before_its_use(name: str) -> None:
    # The ids the checks want are nowhere in the request: only a tool gives them.
    scenario = BY_NAME[name]
    results = _results(scenario)
    for i, carried in enumerate(_CARRIED[name]):
        assert carried not in scenario.user_message
        assert carried in results[i] and carried not in " ".join(results[:i])


def _hold(session_id: str, players: int) -> str:
    hold = BY_NAME["escape_room_hold_booking"].build().tools["create_session_hold"].fn
    found = re.search(r"hld_[A-Za-z0-9]{10}", hold(session_id=session_id, players=players))
    assert found is not None
    return found.group(0)


def _quote(**line: Any) -> str:
    quote = BY_NAME["poster_print_quote_order"].build().tools["quote_print_job"].fn
    lines = [{"product": "poster", "size": "A2", "paper": "fine_art_310gsm", "quantity": 25}]
    found = re.search(
        r"qte_[A-Za-z0-9]{10}",
        quote({"asset_id": "ast_7Rw2Kd9QxB", "lines": [{**lines[0], **line}]}),
    )
    assert found is not None
    return found.group(0)


def test_the_hold_and_quote_ids_belong_to_what_was_asked_for() -> None:
    assert _hold("ses_Ae41nR2d", 5) == "hld_9vQ2mX7rT4"
    assert _hold("ses_Ae41nR2d", 4) != "hld_9vQ2mX7rT4"
    assert _hold("ses_Ae41mQ8c", 5) != "hld_9vQ2mX7rT4"
    assert _quote() == "qte_4hN8sV1mYc"
    assert _quote(size="A1") != "qte_4hN8sV1mYc"
    assert _quote(paper="matte_200gsm") != "qte_4hN8sV1mYc"
    assert _quote(quantity=1) != "qte_4hN8sV1mYc"


@pytest.mark.parametrize(
    ("name", "tool", "args", "message"),
    [
        (
            "escape_room_hold_booking",
            "create_session_hold",
            {"session_id": "ses_Ae41pT6f", "players": 5},
            "session_full",
        ),
        (
            "escape_room_hold_booking",
            "create_session_hold",
            {"session_id": "ALCH", "players": 5},
            "session_not_found",
        ),
        (
            "escape_room_hold_booking",
            "create_session_hold",
            {"session_id": "ses_Ae41nR2d", "players": 8},
            "2 to 6",
        ),
        (
            "poster_print_quote_order",
            "quote_print_job",
            {"asset_id": "PF-55120", "lines": []},
            "import the artwork",
        ),
        (
            "piano_tuning_visit",
            "find_piano_client",
            {"postcode": "HG2 8PL", "house_number": "41"},
            "no client",
        ),
        ("firewood_log_delivery", "check_delivery_zone", {"postcode": "LS1 4AP"}, "outside"),
        ("mot_result_summary", "get_mot_history", {"vehicle_id": "LK68 WDX"}, "unknown vehicle_id"),
        ("soil_analysis_report", "get_sample_analysis", {"sample_id": "Long Acre"}, "SMP-88201"),
        (
            "pottery_glaze_firing",
            "list_shelf_pieces",
            {"member_email": "joel@example.com"},
            "no member",
        ),
        (
            "coffee_subscription_queue",
            "find_coffee_subscription",
            {"email": "anika@example.com"},
            "no subscription",
        ),
    ],
)
def test_a_wrong_input_gets_a_helpful_api_error(
    name: str, tool: str, args: dict[str, Any], message: str
) -> None:
    with pytest.raises(ToolResolutionError, match=message):
        _call(BY_NAME[name], RefCall(tool, args))


_BOOKER = {"full_name": "Priya Natarajan", "email": "priya.natarajan@mailbox.example"}
_ESCAPE: dict[str, Any] = {
    "hold_id": "hld_9vQ2mX7rT4",
    "lead_booker": _BOOKER,
    "add_ons": ["birthday_setup"],
}
_SHIP = {
    "name": "Seasalt Events",
    "line1": "3 Quay Street",
    "city": "Whitstable",
    "postcode": "CT5 1AB",
    "country_code": "GB",
}
_PRINT: dict[str, Any] = {"quote_id": "qte_4hN8sV1mYc", "shipping": _SHIP, "service": "standard"}
_VISIT = {"date": "2026-02-12", "window": "afternoon"}
_TUNE: dict[str, Any] = {
    "client_id": "CL-20931",
    "piano_id": "PN-40218",
    "visit": _VISIT,
    "pitch_hz": 442,
    "pitch_raise": True,
}
_WOOD = {"species": "ash", "seasoning": "kiln_dried", "volume_m3": 1.5}
_DROP = {"date": "2026-10-17", "drop": "tip_on_drive", "gate_width_cm": 240}
_LOGS: dict[str, Any] = {
    "zone_id": "DZ-07",
    "product": _WOOD,
    "delivery": _DROP,
    "kindling_bags": 3,
}
_TEST = {
    "test_number": "MT-26-1184502",
    "date": "2026-06-18",
    "result": "fail",
    "odometer_miles": 84312,
}
_MOT: dict[str, Any] = {
    "registration": "LK68 WDX",
    "latest_test": _TEST,
    "defects": {"dangerous": 1, "major": 2, "minor": 1},
    "free_retest_by": "2026-07-02",
}
_INDICES = {"phosphorus": 1, "potassium": "2-", "magnesium": 2}
_SOIL: dict[str, Any] = {
    "sample_id": "SMP-88202",
    "field_name": "Long Acre",
    "ph": 5.8,
    "indices": _INDICES,
    "lime_t_per_ha": 5.0,
}
_PIECES = ["PC-4471", "PC-4472", "PC-4475"]
_FIRING: dict[str, Any] = {"firing_id": "KF-0612", "member_id": "MBR-2214", "piece_ids": _PIECES}
_BEANS = ["RB-ETH-2611", "RB-RWA-2622", "RB-PAN-2630"]
_QUEUE: dict[str, Any] = {
    "subscription_id": "sub_8KqL2vXw",
    "coffee_ids": _BEANS,
    "grind": "whole_bean",
}

# Other correct forms the checks must accept (the reference's are checked above).
RIGHT: list[tuple[str, str, dict[str, Any]]] = [
    (
        "escape_room_hold_booking",
        "confirm_held_booking",
        {
            **_ESCAPE,
            "lead_booker": {
                **_BOOKER,
                "email": "Priya.Natarajan@mailbox.example",
                "phone": "07700 900418",
            },
            "marketing_opt_in": False,
        },
    ),
    (
        "poster_print_quote_order",
        "place_print_order",
        {**_PRINT, "shipping": {**_SHIP, "postcode": "ct51ab"}},
    ),
    (
        "piano_tuning_visit",
        "book_tuning_visit",
        {**_TUNE, "pitch_hz": 442.0, "notes": "quartet pitch"},
    ),
    (
        "firewood_log_delivery",
        "place_log_order",
        {**_LOGS, "product": {**_WOOD, "volume_m3": "1.5"}},
    ),
    ("mot_result_summary", "report_mot_result", {**_MOT, "registration": "LK68WDX"}),
    ("soil_analysis_report", "report_soil_analysis", {**_SOIL, "lime_t_per_ha": 5, "ph": "5.8"}),
    ("pottery_glaze_firing", "load_pieces_into_firing", {**_FIRING, "piece_ids": _PIECES[::-1]}),
    ("coffee_subscription_queue", "set_delivery_queue", {**_QUEUE, "coffee_ids": _BEANS[::-1]}),
]

# (scenario, terminal tool, arguments): a wrong value the scenario must reject.
WRONG: list[tuple[str, str, dict[str, Any]]] = [
    ("escape_room_hold_booking", "confirm_held_booking", {**_ESCAPE, "hold_id": "ses_Ae41nR2d"}),
    ("escape_room_hold_booking", "confirm_held_booking", {**_ESCAPE, "hold_id": "bsk_Q7fz1LmA"}),
    ("escape_room_hold_booking", "confirm_held_booking", {**_ESCAPE, "hold_id": "hld_9vq2mx7rt4"}),
    (
        "escape_room_hold_booking",
        "confirm_held_booking",
        {**_ESCAPE, "hold_id": _hold("ses_Ae41qW9h", 5)},
    ),
    (
        "escape_room_hold_booking",
        "confirm_held_booking",
        {**_ESCAPE, "hold_id": _hold("ses_Ae41nR2d", 6)},
    ),
    (
        "escape_room_hold_booking",
        "confirm_held_booking",
        {**_ESCAPE, "add_ons": ["birthday_setup", "photo_pack"]},
    ),
    ("escape_room_hold_booking", "confirm_held_booking", {**_ESCAPE, "add_ons": []}),
    (
        "escape_room_hold_booking",
        "confirm_held_booking",
        {**_ESCAPE, "lead_booker": {**_BOOKER, "email": "priya@mailbox.example"}},
    ),
    ("poster_print_quote_order", "place_print_order", {**_PRINT, "quote_id": "ast_7Rw2Kd9QxB"}),
    ("poster_print_quote_order", "place_print_order", {**_PRINT, "quote_id": "PRF-20931"}),
    ("poster_print_quote_order", "place_print_order", {**_PRINT, "quote_id": "PF-55120"}),
    (
        "poster_print_quote_order",
        "place_print_order",
        {**_PRINT, "quote_id": _quote(paper="matte_200gsm")},
    ),
    ("poster_print_quote_order", "place_print_order", {**_PRINT, "quote_id": _quote(size="A1")}),
    ("poster_print_quote_order", "place_print_order", {**_PRINT, "service": "express"}),
    (
        "poster_print_quote_order",
        "place_print_order",
        {**_PRINT, "shipping": {**_SHIP, "postcode": "CT5 1BA"}},
    ),
    ("piano_tuning_visit", "book_tuning_visit", {**_TUNE, "piano_id": "PN-40217"}),
    ("piano_tuning_visit", "book_tuning_visit", {**_TUNE, "pitch_hz": 440}),
    ("piano_tuning_visit", "book_tuning_visit", {**_TUNE, "pitch_hz": 424}),
    ("piano_tuning_visit", "book_tuning_visit", {**_TUNE, "pitch_raise": False}),
    (
        "piano_tuning_visit",
        "book_tuning_visit",
        {**_TUNE, "visit": {**_VISIT, "date": "2026-02-05"}},
    ),
    (
        "piano_tuning_visit",
        "book_tuning_visit",
        {**_TUNE, "visit": {**_VISIT, "date": "2026-03-12"}},
    ),
    (
        "piano_tuning_visit",
        "book_tuning_visit",
        {**_TUNE, "visit": {**_VISIT, "window": "morning"}},
    ),
    ("piano_tuning_visit", "book_tuning_visit", {**_TUNE, "client_id": "CL-20391"}),
    ("firewood_log_delivery", "place_log_order", {**_LOGS, "product": {**_WOOD, "volume_m3": 1}}),
    ("firewood_log_delivery", "place_log_order", {**_LOGS, "product": {**_WOOD, "volume_m3": 2.5}}),
    (
        "firewood_log_delivery",
        "place_log_order",
        {**_LOGS, "product": {**_WOOD, "seasoning": "seasoned"}},
    ),
    (
        "firewood_log_delivery",
        "place_log_order",
        {**_LOGS, "product": {**_WOOD, "species": "mixed_hardwood"}},
    ),
    (
        "firewood_log_delivery",
        "place_log_order",
        {**_LOGS, "delivery": {**_DROP, "date": "2026-10-10"}},
    ),
    (
        "firewood_log_delivery",
        "place_log_order",
        {**_LOGS, "delivery": {**_DROP, "date": "2026-10-24"}},
    ),
    (
        "firewood_log_delivery",
        "place_log_order",
        {**_LOGS, "delivery": {**_DROP, "drop": "barrow_to_store"}},
    ),
    (
        "firewood_log_delivery",
        "place_log_order",
        {**_LOGS, "delivery": {**_DROP, "gate_width_cm": 2}},
    ),
    (
        "firewood_log_delivery",
        "place_log_order",
        {**_LOGS, "delivery": {**_DROP, "gate_width_cm": 204}},
    ),
    ("firewood_log_delivery", "place_log_order", {**_LOGS, "kindling_bags": 0}),
    (
        "mot_result_summary",
        "report_mot_result",
        {**_MOT, "latest_test": {**_TEST, "result": "pass_with_advisories"}},
    ),
    (
        "mot_result_summary",
        "report_mot_result",
        {**_MOT, "latest_test": {**_TEST, "odometer_miles": 77950}},
    ),
    (
        "mot_result_summary",
        "report_mot_result",
        {**_MOT, "latest_test": {**_TEST, "test_number": "MT-25-0972210"}},
    ),
    (
        "mot_result_summary",
        "report_mot_result",
        {**_MOT, "defects": {"dangerous": 1, "major": 2, "minor": 3}},
    ),
    (
        "mot_result_summary",
        "report_mot_result",
        {**_MOT, "defects": {"dangerous": 0, "major": 3, "minor": 1}},
    ),
    ("mot_result_summary", "report_mot_result", {**_MOT, "free_retest_by": "2026-06-30"}),
    ("soil_analysis_report", "report_soil_analysis", {**_SOIL, "ph": 6.5}),
    ("soil_analysis_report", "report_soil_analysis", {**_SOIL, "ph": 5.9}),
    ("soil_analysis_report", "report_soil_analysis", {**_SOIL, "sample_id": "SMP-88203"}),
    (
        "soil_analysis_report",
        "report_soil_analysis",
        {**_SOIL, "indices": {**_INDICES, "potassium": "2+"}},
    ),
    (
        "soil_analysis_report",
        "report_soil_analysis",
        {**_SOIL, "indices": {**_INDICES, "potassium": "2"}},
    ),
    (
        "soil_analysis_report",
        "report_soil_analysis",
        {**_SOIL, "indices": {**_INDICES, "phosphorus": 2}},
    ),
    (
        "soil_analysis_report",
        "report_soil_analysis",
        {**_SOIL, "indices": {**_INDICES, "magnesium": 1}},
    ),
    ("soil_analysis_report", "report_soil_analysis", {**_SOIL, "lime_t_per_ha": 4.0}),
    (
        "pottery_glaze_firing",
        "load_pieces_into_firing",
        {**_FIRING, "piece_ids": [*_PIECES, "PC-4478"]},
    ),
    (
        "pottery_glaze_firing",
        "load_pieces_into_firing",
        {**_FIRING, "piece_ids": [*_PIECES, "PC-4480"]},
    ),
    ("pottery_glaze_firing", "load_pieces_into_firing", {**_FIRING, "piece_ids": _PIECES[:2]}),
    (
        "pottery_glaze_firing",
        "load_pieces_into_firing",
        {**_FIRING, "piece_ids": [*_PIECES, "PC-4471"]},
    ),
    ("pottery_glaze_firing", "load_pieces_into_firing", {**_FIRING, "firing_id": "KF-0614"}),
    ("pottery_glaze_firing", "load_pieces_into_firing", {**_FIRING, "member_id": "MBR-2241"}),
    (
        "coffee_subscription_queue",
        "set_delivery_queue",
        {**_QUEUE, "coffee_ids": [*_BEANS, "RB-KEN-2604"]},
    ),
    (
        "coffee_subscription_queue",
        "set_delivery_queue",
        {**_QUEUE, "coffee_ids": [*_BEANS, "RB-ETH-2615"]},
    ),
    ("coffee_subscription_queue", "set_delivery_queue", {**_QUEUE, "coffee_ids": _BEANS[:2]}),
    ("coffee_subscription_queue", "set_delivery_queue", {**_QUEUE, "subscription_id": "cus_55120"}),
    ("coffee_subscription_queue", "set_delivery_queue", {**_QUEUE, "grind": "filter"}),
    (
        "coffee_subscription_queue",
        "cancel_coffee_subscription",
        {"subscription_id": "sub_8KqL2vXw"},
    ),
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
