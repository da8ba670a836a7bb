"""The held-out groups (`heldout` to `heldout13`): sixteen
scenarios each in businesses no earlier group covers, selectable on their
own (`--tags heldout`), two per kind of failure; and the heldout, heldout3
and heldout4 groups strict about the wrong values they are there to catch (heldout2's:
test_eval_heldout2_scenarios; heldout3_part2's: test_eval_heldout3_part2;
heldout4_part2's: test_eval_heldout4_part2).
(That a perfect model passes each of them through the real server is checked
with every scenario in test_eval_scenarios.)"""

from __future__ import annotations

from typing import Any

import pytest

from forge_client import ToolResolutionError
from forge_evals.scenario import Scenario, select
from forge_evals.scenarios import (
    ALL_SCENARIOS,
    BY_NAME,
    heldout,
    heldout2,
    heldout3,
    heldout3_part2,
    heldout4,
    heldout5,
    heldout6,
    heldout6_part2,
    heldout7,
    heldout7_part2,
    heldout8,
    heldout8_part2,
    heldout9,
    heldout9_part2,
    heldout10,
    heldout10_part2,
    heldout11,
    heldout11_part2,
    heldout12,
    heldout12_part2,
    heldout13,
    heldout13_part2,
    outside_domains,
)

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
    pytest.param(
        "heldout3",
        heldout3.SCENARIOS,
        [outside_domains.SCENARIOS, heldout.SCENARIOS, heldout2.SCENARIOS],
        id="heldout3",
    ),
    pytest.param(
        "heldout4",
        heldout4.SCENARIOS,
        [outside_domains.SCENARIOS, heldout.SCENARIOS, heldout2.SCENARIOS, heldout3.SCENARIOS],
        id="heldout4",
    ),
    pytest.param(
        "heldout5",
        heldout5.SCENARIOS,
        [
            outside_domains.SCENARIOS,
            heldout.SCENARIOS,
            heldout2.SCENARIOS,
            heldout3.SCENARIOS,
            heldout4.SCENARIOS,
        ],
        id="heldout5",
    ),
    pytest.param(
        "heldout6",
        (*heldout6.SCENARIOS, *heldout6_part2.SCENARIOS),
        [
            outside_domains.SCENARIOS,
            heldout.SCENARIOS,
            heldout2.SCENARIOS,
            heldout3.SCENARIOS,
            heldout4.SCENARIOS,
            heldout5.SCENARIOS,
        ],
        id="heldout6",
    ),
    pytest.param(
        "heldout7",
        (*heldout7.SCENARIOS, *heldout7_part2.SCENARIOS),
        [
            outside_domains.SCENARIOS,
            heldout.SCENARIOS,
            heldout2.SCENARIOS,
            heldout3.SCENARIOS,
            heldout4.SCENARIOS,
            heldout5.SCENARIOS,
            (*heldout6.SCENARIOS, *heldout6_part2.SCENARIOS),
        ],
        id="heldout7",
    ),
    pytest.param(
        "heldout8",
        (*heldout8.SCENARIOS, *heldout8_part2.SCENARIOS),
        [
            outside_domains.SCENARIOS,
            heldout.SCENARIOS,
            heldout2.SCENARIOS,
            heldout3.SCENARIOS,
            heldout4.SCENARIOS,
            heldout5.SCENARIOS,
            (*heldout6.SCENARIOS, *heldout6_part2.SCENARIOS),
            (*heldout7.SCENARIOS, *heldout7_part2.SCENARIOS),
        ],
        id="heldout8",
    ),
    pytest.param(
        "heldout9",
        (*heldout9.SCENARIOS, *heldout9_part2.SCENARIOS),
        [
            outside_domains.SCENARIOS,
            heldout.SCENARIOS,
            heldout2.SCENARIOS,
            heldout3.SCENARIOS,
            heldout4.SCENARIOS,
            heldout5.SCENARIOS,
            (*heldout6.SCENARIOS, *heldout6_part2.SCENARIOS),
            (*heldout7.SCENARIOS, *heldout7_part2.SCENARIOS),
            (*heldout8.SCENARIOS, *heldout8_part2.SCENARIOS),
        ],
        id="heldout9",
    ),
    pytest.param(
        "heldout10",
        (*heldout10.SCENARIOS, *heldout10_part2.SCENARIOS),
        [
            outside_domains.SCENARIOS,
            heldout.SCENARIOS,
            heldout2.SCENARIOS,
            heldout3.SCENARIOS,
            heldout4.SCENARIOS,
            heldout5.SCENARIOS,
            (*heldout6.SCENARIOS, *heldout6_part2.SCENARIOS),
            (*heldout7.SCENARIOS, *heldout7_part2.SCENARIOS),
            (*heldout8.SCENARIOS, *heldout8_part2.SCENARIOS),
            (*heldout9.SCENARIOS, *heldout9_part2.SCENARIOS),
        ],
        id="heldout10",
    ),
    pytest.param(
        "heldout11",
        (*heldout11.SCENARIOS, *heldout11_part2.SCENARIOS),
        [
            outside_domains.SCENARIOS,
            heldout.SCENARIOS,
            heldout2.SCENARIOS,
            heldout3.SCENARIOS,
            heldout4.SCENARIOS,
            heldout5.SCENARIOS,
            (*heldout6.SCENARIOS, *heldout6_part2.SCENARIOS),
            (*heldout7.SCENARIOS, *heldout7_part2.SCENARIOS),
            (*heldout8.SCENARIOS, *heldout8_part2.SCENARIOS),
            (*heldout9.SCENARIOS, *heldout9_part2.SCENARIOS),
            (*heldout10.SCENARIOS, *heldout10_part2.SCENARIOS),
        ],
        id="heldout11",
    ),
    pytest.param(
        "heldout12",
        (*heldout12.SCENARIOS, *heldout12_part2.SCENARIOS),
        [
            outside_domains.SCENARIOS,
            heldout.SCENARIOS,
            heldout2.SCENARIOS,
            heldout3.SCENARIOS,
            heldout4.SCENARIOS,
            heldout5.SCENARIOS,
            (*heldout6.SCENARIOS, *heldout6_part2.SCENARIOS),
            (*heldout7.SCENARIOS, *heldout7_part2.SCENARIOS),
            (*heldout8.SCENARIOS, *heldout8_part2.SCENARIOS),
            (*heldout9.SCENARIOS, *heldout9_part2.SCENARIOS),
            (*heldout10.SCENARIOS, *heldout10_part2.SCENARIOS),
            (*heldout11.SCENARIOS, *heldout11_part2.SCENARIOS),
        ],
        id="heldout12",
    ),
    pytest.param(
        "heldout13",
        (*heldout13.SCENARIOS, *heldout13_part2.SCENARIOS),
        [
            outside_domains.SCENARIOS,
            heldout.SCENARIOS,
            heldout2.SCENARIOS,
            heldout3.SCENARIOS,
            heldout4.SCENARIOS,
            heldout5.SCENARIOS,
            (*heldout6.SCENARIOS, *heldout6_part2.SCENARIOS),
            (*heldout7.SCENARIOS, *heldout7_part2.SCENARIOS),
            (*heldout8.SCENARIOS, *heldout8_part2.SCENARIOS),
            (*heldout9.SCENARIOS, *heldout9_part2.SCENARIOS),
            (*heldout10.SCENARIOS, *heldout10_part2.SCENARIOS),
            (*heldout11.SCENARIOS, *heldout11_part2.SCENARIOS),
            (*heldout12.SCENARIOS, *heldout12_part2.SCENARIOS),
        ],
        id="heldout13",
    ),
]
# Kinds by group where a group has not all of them (none now).
GROUP_KINDS: dict[str, set[str]] = {}
# The held-out tags in the order the groups were written: a group carries
# none of the tags of the groups before it, nor of those after it.
HELDOUT_TAGS = [
    "heldout",
    "heldout2",
    "heldout3",
    "heldout4",
    "heldout5",
    "heldout6",
    "heldout7",
    "heldout8",
    "heldout9",
    "heldout10",
    "heldout11",
    "heldout12",
    "heldout13",
]
Group = tuple[Scenario, ...]


@pytest.mark.parametrize(("tag", "group", "before"), GROUPS)
def test_sixteen_scenarios_run_as_their_own_group(
    tag: str, group: Group, before: list[Group]
) -> None:
    assert select(ALL_SCENARIOS, tags=[tag]) == list(group)
    assert all(BY_NAME[s.name] is s for s in group)
    other_groups = EARLIER_GROUPS | (set(HELDOUT_TAGS) - {tag})
    assert not any(other_groups.intersection(s.tags) for s in group)
    assert len(group) == 2 * len(GROUP_KINDS.get(tag, KINDS))


@pytest.mark.parametrize(("tag", "group", "before"), GROUPS)
def test_each_kind_has_two_scenarios_and_each_scenario_one_kind(
    tag: str, group: Group, before: list[Group]
) -> None:
    assert all(len(KINDS.intersection(s.tags)) == 1 for s in group)
    for kind in GROUP_KINDS.get(tag, KINDS):
        assert sum(kind in s.tags for s in group) == 2, kind


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


# ── heldout3 (this half; heldout3_part2's table: test_eval_heldout3_part2) ──

_HOLD = "6f1d2c84-3b7a-4e59-a0c2-91d5e7b38f40"
_DOMAIN = {"account_id": "QN-48213-K", "hold_token": _HOLD, "years": 2}
_CLEANS = {
    "home_id": "HM-60291",
    "frequency": "fortnightly",
    "first_date": "2026-08-13",
    "arrival_time": "08:45",
    "hours": 3,
    "bring_supplies": False,
}
_HOURS = {"description": "Brand refresh", "quantity": 12.5, "unit_price": 68}
_INVOICE: dict[str, Any] = {
    "client_id": "CL-0392",
    "bill_to_email": "accounts@hartwellstudio.example",
    "currency": "EUR",
    "line_items": [_HOURS],
    "vat_rate_percent": 21,
    "due_date": "2026-10-15",
    "send_now": False,
}
_STAGE = {
    "reference": "VAC-LDN-2026-044817",
    "stage": "documents_requested",
    "outstanding_documents": 2,
    "upload_deadline": "2026-05-12",
}
_BOX = {"container_number": "MSKU4812361", "status": "customs_hold", "free_storage_days_left": 3}
_ARREARS = ["TEN-3302", "TEN-3309", "TEN-3318"]
_REMIND = {"channel": "email", "attach_statement": True}
_WEEK = {"subscription_id": "SUB-20931-PB", "week_start": "2026-03-23"}
_CURRY, _RISOTTO = (
    {"recipe_code": "R-2312", "servings": 2},
    {"recipe_code": "R-2313", "servings": 2},
)
_TACOS = {"recipe_code": "R-2315", "servings": 4}

# (scenario, terminal tool, arguments): a wrong value the scenario must reject.
WRONG_HELDOUT3: list[tuple[str, str, dict[str, Any]]] = [
    (
        "domain_registration_token",
        "register_domain",
        {**_DOMAIN, "hold_token": "larkspurbakery.co.uk"},
    ),
    (
        "domain_registration_token",
        "register_domain",
        {**_DOMAIN, "hold_token": "a4e09b7c-51f2-4d3e-8c6a-0f7b2e9d1c53"},
    ),
    ("domain_registration_token", "register_domain", {**_DOMAIN, "account_id": "CH-77102"}),
    (
        "domain_registration_token",
        "register_domain",
        {**_DOMAIN, "account_id": "fern.okafor@mailbox.example"},
    ),
    ("domain_registration_token", "register_domain", {**_DOMAIN, "years": 1}),
    (
        "web_return_label",
        "create_return_label",
        {"rma_number": "TF-2026-30917", "method": "parcel_shop_drop_off"},
    ),
    (
        "web_return_label",
        "create_return_label",
        {"rma_number": "IT-5530", "method": "parcel_shop_drop_off"},
    ),
    (
        "web_return_label",
        "create_return_label",
        {"rma_number": "RMA-88C4166", "method": "parcel_shop_drop_off"},
    ),
    (
        "web_return_label",
        "create_return_label",
        {"rma_number": "RMA-88C4172", "method": "home_collection"},
    ),
    ("home_cleaning_booking", "schedule_cleans", {**_CLEANS, "frequency": "weekly"}),
    ("home_cleaning_booking", "schedule_cleans", {**_CLEANS, "first_date": "2026-08-20"}),
    ("home_cleaning_booking", "schedule_cleans", {**_CLEANS, "arrival_time": "08:15"}),
    ("home_cleaning_booking", "schedule_cleans", {**_CLEANS, "arrival_time": "09:45"}),
    ("home_cleaning_booking", "schedule_cleans", {**_CLEANS, "arrival_time": "20:45"}),
    ("home_cleaning_booking", "schedule_cleans", {**_CLEANS, "hours": 2}),
    ("home_cleaning_booking", "schedule_cleans", {**_CLEANS, "bring_supplies": True}),
    ("home_cleaning_booking", "schedule_cleans", {**_CLEANS, "home_id": "HM-60219"}),
    (
        "freelance_invoice",
        "create_invoice",
        {**_INVOICE, "line_items": [{**_HOURS, "quantity": 12}]},
    ),
    (
        "freelance_invoice",
        "create_invoice",
        {**_INVOICE, "line_items": [{**_HOURS, "unit_price": 82.28}]},
    ),
    ("freelance_invoice", "create_invoice", {**_INVOICE, "vat_rate_percent": 0.21}),
    ("freelance_invoice", "create_invoice", {**_INVOICE, "due_date": "2026-09-29"}),
    ("freelance_invoice", "create_invoice", {**_INVOICE, "due_date": "2026-10-14"}),
    ("freelance_invoice", "create_invoice", {**_INVOICE, "send_now": True}),
    ("freelance_invoice", "create_invoice", {**_INVOICE, "currency": "GBP"}),
    ("visa_application_stage", "reply_application_stage", {**_STAGE, "stage": "under_review"}),
    ("visa_application_stage", "reply_application_stage", {**_STAGE, "stage": "submitted"}),
    ("visa_application_stage", "reply_application_stage", {**_STAGE, "outstanding_documents": 0}),
    (
        "visa_application_stage",
        "reply_application_stage",
        {**_STAGE, "upload_deadline": "2026-04-28"},
    ),
    ("container_customs_hold", "report_container_status", {**_BOX, "status": "at_port"}),
    ("container_customs_hold", "report_container_status", {**_BOX, "status": "released"}),
    ("container_customs_hold", "report_container_status", {**_BOX, "free_storage_days_left": 95}),
    (
        "container_customs_hold",
        "report_container_status",
        {**_BOX, "container_number": "MSKU 481220-7"},
    ),
    (
        "rent_arrears_reminders",
        "send_arrears_reminders",
        {**_REMIND, "tenancy_ids": [*_ARREARS, "TEN-3304"]},
    ),
    (
        "rent_arrears_reminders",
        "send_arrears_reminders",
        {**_REMIND, "tenancy_ids": [f"TEN-33{n:02}" for n in (1, 2, 4, 7, 9, 12, 18, 20)]},
    ),
    ("rent_arrears_reminders", "send_arrears_reminders", {**_REMIND, "tenancy_ids": _ARREARS[:2]}),
    (
        "rent_arrears_reminders",
        "send_arrears_reminders",
        {**_REMIND, "tenancy_ids": ["3302", "3309", "3318"]},
    ),
    (
        "rent_arrears_reminders",
        "send_arrears_reminders",
        {**_REMIND, "tenancy_ids": [*_ARREARS, "TEN-3302"]},
    ),
    (
        "rent_arrears_reminders",
        "send_arrears_reminders",
        {**_REMIND, "tenancy_ids": _ARREARS, "channel": "letter"},
    ),
    (
        "rent_arrears_reminders",
        "send_arrears_reminders",
        {"tenancy_ids": _ARREARS, "channel": "email", "attach_statement": False},
    ),
    (
        "recipe_box_choices",
        "choose_recipes",
        {**_WEEK, "recipes": [_CURRY, _RISOTTO, _TACOS, {"recipe_code": "R-2318", "servings": 2}]},
    ),
    (
        "recipe_box_choices",
        "choose_recipes",
        {**_WEEK, "recipes": [_CURRY, _RISOTTO, {**_TACOS, "servings": 2}]},
    ),
    (
        "recipe_box_choices",
        "choose_recipes",
        {**_WEEK, "recipes": [_CURRY, _RISOTTO, _CURRY, _TACOS]},
    ),
    ("recipe_box_choices", "choose_recipes", {**_WEEK, "recipes": [_CURRY, _TACOS]}),
    (
        "recipe_box_choices",
        "choose_recipes",
        {
            **_WEEK,
            "recipes": [
                {**r, "recipe_code": n}
                for r, n in (
                    (_CURRY, "Thai green chicken curry"),
                    (_RISOTTO, "risotto"),
                    (_TACOS, "tacos"),
                )
            ],
        },
    ),
    (
        "recipe_box_choices",
        "choose_recipes",
        {**_WEEK, "week_start": "2026-03-16", "recipes": [_CURRY, _RISOTTO, _TACOS]},
    ),
]

# (scenario, terminal tool, arguments): another correct form the check must accept.
RIGHT_HELDOUT3: list[tuple[str, str, dict[str, Any]]] = [
    ("domain_registration_token", "register_domain", {**_DOMAIN, "hold_token": _HOLD.upper()}),
    (
        "web_return_label",
        "create_return_label",
        {"rma_number": "rma-88c4172", "method": "parcel_shop_drop_off"},
    ),
    (
        "freelance_invoice",
        "create_invoice",
        {
            **_INVOICE,
            "line_items": [
                {"description": "Brand refresh, 12.5 h", "quantity": 1, "unit_price": 850}
            ],
        },
    ),
    ("freelance_invoice", "create_invoice", {**_INVOICE, "vat_rate_percent": 21.0}),
    (
        "container_customs_hold",
        "report_container_status",
        {**_BOX, "container_number": "MSKU 481236-1"},
    ),
    (
        "rent_arrears_reminders",
        "send_arrears_reminders",
        {**_REMIND, "tenancy_ids": _ARREARS[::-1]},
    ),
    ("recipe_box_choices", "choose_recipes", {**_WEEK, "recipes": [_TACOS, _CURRY, _RISOTTO]}),
]


@pytest.mark.parametrize(
    ("name", "tool", "args"),
    WRONG_HELDOUT3,
    ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(WRONG_HELDOUT3)],
)
def test_a_wrong_heldout3_value_fails_validation(
    name: str, tool: str, args: dict[str, Any]
) -> None:
    assert not BY_NAME[name].check(tool, args)


@pytest.mark.parametrize(
    ("name", "tool", "args"),
    RIGHT_HELDOUT3,
    ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(RIGHT_HELDOUT3)],
)
def test_another_correct_heldout3_form_passes_validation(
    name: str, tool: str, args: dict[str, Any]
) -> None:
    assert BY_NAME[name].check(tool, args)


def test_every_heldout3_scenario_of_this_half_has_a_wrong_value_listed() -> None:
    own = {s.name for s in heldout3.SCENARIOS} - {s.name for s in heldout3_part2.SCENARIOS}
    assert {name for name, _, _ in WRONG_HELDOUT3} == own


def test_the_hold_token_is_the_domain_asked_for() -> None:
    check = BY_NAME["domain_registration_token"].build().tools["check_domain_availability"].fn
    assert _HOLD in check(domain="larkspurbakery.co.uk")
    assert _HOLD not in check(domain="larkspurbakery.uk")
    assert "not available" in check(domain="larkspurbakery.com")


def test_the_rma_number_is_the_item_returned() -> None:
    open_return = BY_NAME["web_return_label"].build().tools["open_return"].fn
    assert "RMA-88C4172" in open_return(order_number="TF-2026-30917", item_id="IT-5530", reason="x")
    assert "RMA-88C4172" not in open_return(
        order_number="TF-2026-30917", item_id="IT-5512", reason="x"
    )
    with pytest.raises(ToolResolutionError, match="no item"):
        open_return(order_number="TF-2026-30917", item_id="TF-2026-30917", reason="x")
