"""The held-out groups (`heldout`, `heldout2`): sixteen scenarios each in
businesses no earlier group covers, selectable on their own (`--tags
heldout`), two per kind of failure; and the heldout group strict about the
wrong values it is there to catch (heldout2's: test_eval_heldout2_scenarios). (That a perfect model
passes each of them through the real server is checked with every scenario in
test_eval_scenarios.)"""

from __future__ import annotations

from typing import Any

import pytest

from forge_client import ToolResolutionError
from forge_evals.scenario import Scenario, select
from forge_evals.scenarios import ALL_SCENARIOS, BY_NAME, heldout, heldout2, outside_domains

HELDOUT = heldout.SCENARIOS
KINDS = {
    "carry_id",
    "user_value",
    "report_agrees",
    "list_match",
    "decline",
    "format_retry",
    "schema",
    "destructive",
}
EARLIER_GROUPS = {"plumbing", "model_quality", "compaction", "choice", "domains"}
# Each held-out group, and the groups written (and tuned on) before it.
GROUPS = [
    pytest.param("heldout", heldout.SCENARIOS, [outside_domains.SCENARIOS], id="heldout"),
    pytest.param(
        "heldout2",
        heldout2.SCENARIOS,
        [outside_domains.SCENARIOS, heldout.SCENARIOS],
        id="heldout2",
    ),
]
Group = tuple[Scenario, ...]


@pytest.mark.parametrize(("tag", "group", "before"), GROUPS)
def test_sixteen_scenarios_run_as_their_own_group(
    tag: str, group: Group, before: list[Group]
) -> None:
    assert len(group) == 16
    assert select(ALL_SCENARIOS, tags=[tag]) == list(group)
    assert all(BY_NAME[s.name] is s for s in group)
    earlier = EARLIER_GROUPS | ({"heldout"} if tag == "heldout2" else set())
    assert not any(earlier.intersection(s.tags) for s in group)


@pytest.mark.parametrize(("tag", "group", "before"), GROUPS)
def test_each_kind_has_two_scenarios_and_each_scenario_one_kind(
    tag: str, group: Group, before: list[Group]
) -> None:
    for kind in KINDS:
        assert sum(kind in s.tags for s in group) == 2, kind
    assert all(len(KINDS.intersection(s.tags)) == 1 for s in group)


@pytest.mark.parametrize(("tag", "group", "before"), GROUPS)
def test_no_workflow_reuses_a_tool_name_of_the_tuned_on_groups(
    tag: str, group: Group, before: list[Group]
) -> None:
    # Fresh businesses: no tool name of a group tuned on before comes back.
    tuned = {n for scenarios in before for s in scenarios for n in s.build().tools}
    fresh = {n for s in group for n in s.build().tools} - {"decline_request"}
    assert not tuned & fresh


@pytest.mark.parametrize(("tag", "group", "before"), GROUPS)
def test_workflows_have_four_to_seven_tools_and_a_system_prompt(
    tag: str, group: Group, before: list[Group]
) -> None:
    for scenario in group:
        wf = scenario.build()
        assert 4 <= len(wf.tools) <= 7, scenario.name
        assert wf.system_prompt, scenario.name
        assert 1 <= scenario.ideal_iterations <= 4


@pytest.mark.parametrize(("tag", "group", "before"), GROUPS)
def test_forbidden_tools_are_unannotated_and_never_terminal(
    tag: str, group: Group, before: list[Group]
) -> None:
    for scenario in (s for s in group if s.forbidden_tools):
        wf = scenario.build()
        for name in scenario.forbidden_tools:
            tool = wf.tools[name]
            assert name not in wf.terminal_tools
            assert not tool.destructive and not tool.read_only
        assert not {r.tool for r in scenario.reference} & set(scenario.forbidden_tools)


@pytest.mark.parametrize(("tag", "group", "before"), GROUPS)
def test_destructive_workflows_carry_no_annotation_at_all(
    tag: str, group: Group, before: list[Group]
) -> None:
    for scenario in (s for s in group if "destructive" in s.tags):
        tools = scenario.build().tools.values()
        assert not any(t.destructive or t.read_only or t.idempotent for t in tools)


@pytest.mark.parametrize(("tag", "group", "before"), GROUPS)
def test_decline_scenarios_forbid_every_action_tool(
    tag: str, group: Group, before: list[Group]
) -> None:
    for scenario in (s for s in group if "decline" in s.tags):
        wf = scenario.build()
        actions = set(wf.tools) - set(wf.terminal_tools)
        assert set(scenario.forbidden_tools) == actions, scenario.name
        assert len(actions) >= 3


@pytest.mark.parametrize(
    ("name", "tool", "args", "expected"),
    [
        (
            "court_filing_format",
            "file_document",
            {"case_number": "CV-4512-2026", "document_id": "D", "document_type": "motion"},
            "zero-padded to 6 digits",
        ),
        (
            "plumbing_dispatch_format",
            "dispatch_plumber",
            {"customer_number": "0041-2277", "job_type": "leak"},
            "8 digits, no dashes",
        ),
    ],
)
def test_the_format_error_names_the_expected_format(
    name: str, tool: str, args: dict[str, Any], expected: str
) -> None:
    fn = BY_NAME[name].build().tools[tool].fn
    with pytest.raises(ToolResolutionError, match=expected):
        fn(args) if tool == "dispatch_plumber" else fn(**args)


def test_the_hold_token_depends_on_the_slot_asked_for() -> None:
    hold = BY_NAME["viewing_reschedule_hold"].build().tools["hold_slot"].fn
    assert "HT-5Q2M9X" in hold(viewing_id="VW-88213", date="2026-03-12", time_24h="10:00")
    assert "HT-5Q2M9X" not in hold(viewing_id="VW-88213", date="2026-03-11", time_24h="10:00")


_PLAN = {
    "account_number": "7730194288",
    "monthly_amount_gbp": 85,
    "first_payment_month": "2026-03",
    "payment_day": 15,
    "paper_statements": False,
}
_CROSSING = {"sailing_id": "SL-4471", "adults": 2, "children": 3, "vehicle": "car", "cabin": False}
_VISIT: dict[str, Any] = {
    "participant_id": "CT-0417-022",
    "visit": {"visit_code": "week_4", "date": "2026-05-12", "start_time": "08:30"},
    "procedures": ["blood_draw", "ecg"],
    "fasting": True,
    "notes": "wheelchair access",
}
_LEO = {"first_name": "Leo", "last_name": "Hart", "date_of_birth": "2020-02-03", "year_group": 1}
_MAYA = {"first_name": "Maya", "last_name": "Hart", "date_of_birth": "2021-09-19", "year_group": 0}
_ENROL = {"guardian_id": "GDN-20714", "term": "autumn_2026", "school_bus": True}
_JOB = {"job_type": "leak", "date": "2026-04-21", "time_window": "morning"}

# (scenario, terminal tool, arguments): a wrong value the scenario must reject.
WRONG: list[tuple[str, str, dict[str, Any]]] = [
    (
        "viewing_reschedule_hold",
        "reschedule_viewing",
        {"viewing_id": "VW-88213", "hold_token": "VW-88213"},
    ),
    (
        "viewing_reschedule_hold",
        "reschedule_viewing",
        {"viewing_id": "VW-88240", "hold_token": "HT-5Q2M9X"},
    ),
    (
        "licence_seat_reassign",
        "reassign_seat",
        {"seat_id": "SEAT-7731", "new_user_id": "mei.tan@northwind.example"},
    ),
    (
        "licence_seat_reassign",
        "reassign_seat",
        {"seat_id": "SEAT-7731", "new_user_id": "USR-38802"},
    ),
    ("utility_payment_plan", "create_payment_plan", {**_PLAN, "monthly_amount_gbp": 412.6}),
    ("utility_payment_plan", "create_payment_plan", {**_PLAN, "first_payment_month": "2026-02"}),
    ("utility_payment_plan", "create_payment_plan", {**_PLAN, "paper_statements": True}),
    ("ferry_family_booking", "book_crossing", {**_CROSSING, "children": 2}),
    ("ferry_family_booking", "book_crossing", {**_CROSSING, "sailing_id": "SL-4475"}),
    ("ferry_family_booking", "book_crossing", {**_CROSSING, "cabin": True}),
    (
        "customs_declaration_status",
        "report_declaration",
        {"declaration_ref": "CD-2026-118804", "status": "cleared", "amount_due_eur": 194.2},
    ),
    (
        "customs_declaration_status",
        "report_declaration",
        {
            "declaration_ref": "CD-2026-118804",
            "status": "held_for_inspection",
            "amount_due_eur": 155.8,
        },
    ),
    (
        "bike_station_status",
        "report_station",
        {"station_id": "ST-118", "status": "open", "ebikes_available": 2},
    ),
    (
        "bike_station_status",
        "report_station",
        {"station_id": "ST-118", "status": "partially_open", "ebikes_available": 9},
    ),
    (
        "warehouse_pick_list",
        "create_pick_list",
        {"order_id": "SO-55821", "skus": ["SKU-10442", "SKU-10518", "SKU-31007", "SKU-10442"]},
    ),
    (
        "warehouse_pick_list",
        "create_pick_list",
        {"order_id": "SO-55821", "skus": ["10442", "10518", "31007"]},
    ),
    (
        "warehouse_pick_list",
        "create_pick_list",
        {"order_id": "SO-55821", "skus": ["SKU-10442", "SKU-10518", "SKU-31007", "SKU-20931"]},
    ),
    (
        "translation_job_files",
        "request_translation",
        {"project_id": "TP-2291", "file_ids": ["F-60312", "F-60318"], "target_language": "de"},
    ),
    (
        "translation_job_files",
        "request_translation",
        {
            "project_id": "TP-2291",
            "file_ids": ["F-60312", "F-60318", "F-60325"],
            "target_language": "fr",
        },
    ),
    ("telecom_plan_decline", "add_data_bundle", {"phone_number": "x", "size_gb": 5}),
    ("dental_lab_decline", "get_case_status", {"case_id": "DL-1"}),
    (
        "court_filing_format",
        "file_document",
        {
            "case_number": "2026-CV-4512",
            "document_id": "DOC-55102",
            "document_type": "witness_statement",
        },
    ),
    (
        "court_filing_format",
        "file_document",
        {"case_number": "2026-CV-004512", "document_id": "DOC-55102", "document_type": "motion"},
    ),
    ("plumbing_dispatch_format", "dispatch_plumber", {"customer_number": "0041-2277", **_JOB}),
    (
        "plumbing_dispatch_format",
        "dispatch_plumber",
        {"customer_number": "00412277", **_JOB, "date": "2026-04-20"},
    ),
    ("trial_visit_schedule", "schedule_visit", {**_VISIT, "fasting": False}),
    (
        "trial_visit_schedule",
        "schedule_visit",
        {**_VISIT, "procedures": ["blood_draw", "ecg", "vitals"]},
    ),
    (
        "trial_visit_schedule",
        "schedule_visit",
        {**_VISIT, "visit": {**_VISIT["visit"], "start_time": "20:30"}},
    ),
    (
        "school_enrolment_siblings",
        "enrol_children",
        {**_ENROL, "children": [_LEO, {**_MAYA, "year_group": 1}]},
    ),
    ("school_enrolment_siblings", "enrol_children", {**_ENROL, "children": [_LEO]}),
    (
        "school_enrolment_siblings",
        "enrol_children",
        {**_ENROL, "children": [_LEO, _MAYA], "guardian_id": "sam.hart@example.co.uk"},
    ),
    ("irrigation_rain_pause", "pause_zone", {"zone_id": "Z-02", "days": 3, "reason": "rain"}),
    ("irrigation_rain_pause", "pause_zone", {"zone_id": "Z-01", "days": 14, "reason": "rain"}),
    (
        "meeting_room_check",
        "report_availability",
        {"room_id": "RM-4C-02", "date": "2026-03-18", "is_free": True},
    ),
    (
        "meeting_room_check",
        "report_availability",
        {"room_id": "RM-4C-02", "date": "2026-03-17", "is_free": False},
    ),
]


@pytest.mark.parametrize(
    ("name", "tool", "args"), WRONG, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(WRONG)]
)
def test_a_wrong_value_fails_validation(name: str, tool: str, args: dict[str, Any]) -> None:
    assert not BY_NAME[name].check(tool, args)


def test_every_heldout_scenario_has_a_wrong_value_listed() -> None:
    assert {name for name, _, _ in WRONG} == {s.name for s in HELDOUT}
