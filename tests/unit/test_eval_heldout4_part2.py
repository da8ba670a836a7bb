"""heldout4_part2: its eight scenarios (two each of decline, format_retry,
schema and destructive) are strict about the wrong values they are there to
catch, accept the other correct forms, their tools' errors name the format the
retry must use, and a perfect model passes each through the real server.
(The group-wide shape tests cover these too once heldout4 lists them.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from forge_client import ToolResolutionError
from forge_evals.ablation import PRESETS
from forge_evals.results import ResultsWriter
from forge_evals.runner import EvalSettings, plan, run_eval
from forge_evals.scenarios import ALL_SCENARIOS
from forge_evals.scenarios._domain_schema import HELDOUT4_TAG
from forge_evals.scenarios.heldout4_part2 import SCENARIOS
from forge_evals.targets import in_process, oracle_backend

BY_NAME = {s.name: s for s in SCENARIOS}
KINDS = ("decline", "format_retry", "schema", "destructive")
FORMAT_RETRY = {"ski_pass_birthdate_format", "charity_gift_pence_format"}


def test_two_scenarios_per_kind_each_tagged_heldout4() -> None:
    assert len(BY_NAME) == len(SCENARIOS) == 8
    for kind in KINDS:
        assert sum(kind in s.tags for s in SCENARIOS) == 2, kind
    assert all(s.tags[0] == HELDOUT4_TAG and len(s.tags) == 2 for s in SCENARIOS)


def test_fresh_names_and_tools_against_every_earlier_group() -> None:
    # Built before the group is registered: no clash with what was tuned on.
    earlier = [s for s in ALL_SCENARIOS if HELDOUT4_TAG not in s.tags]
    assert not set(BY_NAME) & {s.name for s in earlier}
    tuned = {n for s in earlier for n in s.build().tools}
    fresh = {n for s in SCENARIOS for n in s.build().tools} - {"decline_request"}
    assert not tuned & fresh


def test_the_reference_solutions_pass_their_own_checks() -> None:
    for scenario in SCENARIOS:
        last = scenario.reference[-1]
        assert scenario.check(last.tool, last.args), scenario.name
        assert len(scenario.reference) == scenario.ideal_iterations
        assert 4 <= len(scenario.build().tools) <= 7, scenario.name


def test_decline_scenarios_forbid_every_action_tool() -> None:
    for scenario in (s for s in SCENARIOS if "decline" in s.tags):
        wf = scenario.build()
        actions = set(wf.tools) - set(wf.terminal_tools)
        assert set(scenario.forbidden_tools) == actions and len(actions) >= 3


def test_destructive_workflows_carry_no_annotation_at_all() -> None:
    for scenario in (s for s in SCENARIOS if "destructive" in s.tags):
        tools = scenario.build().tools.values()
        assert not any(t.destructive or t.read_only or t.idempotent for t in tools)


def test_a_forbidden_tool_is_never_the_answer() -> None:
    # A run that executes one fails whatever its terminal call (Scenario docs).
    for scenario in (s for s in SCENARIOS if s.forbidden_tools):
        wf = scenario.build()
        assert not set(scenario.forbidden_tools) & set(wf.terminal_tools), scenario.name


_SKIER = {"full_name": "Mia Hoffmann", "date_of_birth": "17/03/2015"}
_PASS: dict[str, Any] = {
    "account_id": "SKA-30471",
    "pass_type": "6_day",
    "first_day": "2026-12-26",
    "skier": _SKIER,
    "piste_insurance": False,
}


@pytest.mark.parametrize(
    ("name", "tool", "args", "expected"),
    [
        (
            "ski_pass_birthdate_format",
            "issue_lift_pass",
            {**_PASS, "skier": {**_SKIER, "date_of_birth": "2015-03-17"}},
            "DD/MM/YYYY, day first",
        ),
        (
            "ski_pass_birthdate_format",
            "issue_lift_pass",
            {**_PASS, "skier": {**_SKIER, "date_of_birth": "03/17/2015"}},
            "DD/MM/YYYY, day first",
        ),
        ("charity_gift_pence_format", "create_regular_gift", {"amount": 25}, "in pence"),
        ("charity_gift_pence_format", "create_regular_gift", {"amount": 25.5}, "in pence"),
    ],
)
def test_the_format_error_names_the_expected_format(
    name: str, tool: str, args: dict[str, Any], expected: str
) -> None:
    fn = BY_NAME[name].build().tools[tool].fn
    with pytest.raises(ToolResolutionError, match=expected):
        fn(args)


def test_the_format_tools_accept_the_corrected_values() -> None:
    issue = BY_NAME["ski_pass_birthdate_format"].build().tools["issue_lift_pass"].fn
    assert "LP-66120" in issue(_PASS)
    give = BY_NAME["charity_gift_pence_format"].build().tools["create_regular_gift"].fn
    assert "RG-40339" in give({"amount": 2550, "frequency": "monthly"})


_GIFT = {
    "supporter_id": "SUP-118204",
    "amount": 2550,
    "currency": "GBP",
    "frequency": "monthly",
    "fund": "otter_recovery",
    "first_collection_date": "2026-11-05",
    "gift_aid": True,
}
_SEUN = {
    "first_name": "Oluwaseun",
    "last_name": "Adeyemi",
    "email": "seun@brightwater.example",
    "ticket_type": "conference_workshops",
    "tshirt_size": "L",
}
_DARA = {
    "first_name": "Dara",
    "last_name": "Quinn",
    "email": "dara.quinn@brightwater.example",
    "ticket_type": "conference",
    "dietary_requirements": ["vegan", "gluten_free"],
    "tshirt_size": "S",
}
_BILLING = {
    "company_name": "Brightwater Analytics",
    "purchase_order": "PO-004518",
    "invoice_email": "accounts@brightwater.example",
}
_REG: dict[str, Any] = {"event_code": "NDD26", "attendees": [_SEUN, _DARA], "billing": _BILLING}
_SCHEDULE = {"weekdays": ["monday", "wednesday"], "start_time": "16:30", "duration_minutes": 60}
_SERIES: dict[str, Any] = {
    "student_id": "STU-7742",
    "tutor_id": "TUT-318",
    "subject": "maths",
    "schedule": _SCHEDULE,
    "starts_on": "2026-09-14",
    "ends": {"after_sessions": 12},
    "location": "online",
}
_BYPASS = {"sensor_id": "SNS-05", "days": 14}
_ERASE = {"candidate_id": "CAN-50217", "reason": "candidate_request", "notify_candidate": True}

# Other correct forms the checks must accept (the reference's are checked above).
RIGHT: list[tuple[str, str, dict[str, Any]]] = [
    ("florist_musicians_decline", "decline_request", {"reason": "We only do flowers."}),
    ("ski_pass_birthdate_format", "issue_lift_pass", _PASS),
    (
        "ski_pass_birthdate_format",
        "issue_lift_pass",
        {**_PASS, "account_id": "ska-30471", "skier": {**_SKIER, "full_name": "Mia"}},
    ),
    ("charity_gift_pence_format", "create_regular_gift", _GIFT),
    (
        "conference_group_registration",
        "create_registration",
        {**_REG, "attendees": [_DARA, {**_SEUN, "dietary_requirements": []}]},
    ),
    (
        "conference_group_registration",
        "create_registration",
        {
            **_REG,
            "attendees": [
                {**_SEUN, "first_name": "Seun", "email": "Seun@Brightwater.example"},
                {**_DARA, "dietary_requirements": ["gluten_free", "vegan"]},
            ],
        },
    ),
    (
        "tutoring_series_booking",
        "create_session_series",
        {**_SERIES, "schedule": {**_SCHEDULE, "weekdays": ["wednesday", "monday"]}},
    ),
    ("alarm_sensor_bypass", "bypass_sensor", _BYPASS),
    ("alarm_sensor_bypass", "bypass_sensor", {**_BYPASS, "reason": "kitten"}),
    ("candidate_data_erasure", "erase_candidate", _ERASE),
]

# (scenario, terminal tool, arguments): a wrong value the scenario must reject.
WRONG: list[tuple[str, str, dict[str, Any]]] = [
    ("florist_musicians_decline", "place_flower_order", {"items": "string quartet"}),
    ("florist_musicians_decline", "change_delivery_details", {"order_number": "PS-40718"}),
    ("window_cleaner_gutter_decline", "book_extra_clean", {"notes": "clear the gutters"}),
    ("window_cleaner_gutter_decline", "find_round_customer", {"postcode": "NE4 6SL"}),
    (
        "ski_pass_birthdate_format",
        "issue_lift_pass",
        {**_PASS, "skier": {**_SKIER, "date_of_birth": "2015-03-17"}},
    ),
    (
        "ski_pass_birthdate_format",
        "issue_lift_pass",
        {**_PASS, "skier": {**_SKIER, "date_of_birth": "03/17/2015"}},
    ),
    (
        "ski_pass_birthdate_format",
        "issue_lift_pass",
        {**_PASS, "skier": {**_SKIER, "date_of_birth": "17/3/2015"}},
    ),
    ("ski_pass_birthdate_format", "issue_lift_pass", {**_PASS, "first_day": "2026-12-21"}),
    ("ski_pass_birthdate_format", "issue_lift_pass", {**_PASS, "pass_type": "season"}),
    ("ski_pass_birthdate_format", "issue_lift_pass", {**_PASS, "piste_insurance": True}),
    ("charity_gift_pence_format", "create_regular_gift", {**_GIFT, "amount": 25}),
    ("charity_gift_pence_format", "create_regular_gift", {**_GIFT, "amount": 2550.0 / 100}),
    ("charity_gift_pence_format", "create_regular_gift", {**_GIFT, "amount": 255}),
    ("charity_gift_pence_format", "create_regular_gift", {**_GIFT, "amount": 25500}),
    ("charity_gift_pence_format", "create_regular_gift", {**_GIFT, "gift_aid": False}),
    (
        "charity_gift_pence_format",
        "create_regular_gift",
        {**_GIFT, "first_collection_date": "2026-10-05"},
    ),
    ("charity_gift_pence_format", "create_regular_gift", {**_GIFT, "fund": "where_most_needed"}),
    ("conference_group_registration", "create_registration", {**_REG, "attendees": [_SEUN]}),
    (
        "conference_group_registration",
        "create_registration",
        {**_REG, "attendees": [{**_SEUN, "ticket_type": "workshops_only"}, _DARA]},
    ),
    (
        "conference_group_registration",
        "create_registration",
        {**_REG, "attendees": [_SEUN, {**_DARA, "ticket_type": "conference_workshops"}]},
    ),
    (
        "conference_group_registration",
        "create_registration",
        {**_REG, "attendees": [_SEUN, {**_DARA, "dietary_requirements": ["vegan"]}]},
    ),
    (
        "conference_group_registration",
        "create_registration",
        {**_REG, "attendees": [{**_SEUN, "dietary_requirements": ["vegan"]}, _DARA]},
    ),
    (
        "conference_group_registration",
        "create_registration",
        {**_REG, "attendees": [{**_SEUN, "tshirt_size": "S"}, {**_DARA, "tshirt_size": "L"}]},
    ),
    (
        "conference_group_registration",
        "create_registration",
        {**_REG, "billing": {**_BILLING, "purchase_order": "PO-4518"}},
    ),
    (
        "conference_group_registration",
        "create_registration",
        {**_REG, "billing": {**_BILLING, "invoice_email": "seun@brightwater.example"}},
    ),
    (
        "tutoring_series_booking",
        "create_session_series",
        {**_SERIES, "schedule": {**_SCHEDULE, "start_time": "04:30"}},
    ),
    (
        "tutoring_series_booking",
        "create_session_series",
        {**_SERIES, "schedule": {**_SCHEDULE, "weekdays": ["monday", "wednesday", "monday"]}},
    ),
    (
        "tutoring_series_booking",
        "create_session_series",
        {**_SERIES, "schedule": {**_SCHEDULE, "weekdays": ["tuesday", "thursday"]}},
    ),
    ("tutoring_series_booking", "create_session_series", {**_SERIES, "ends": {"on_date": "12"}}),
    (
        "tutoring_series_booking",
        "create_session_series",
        {**_SERIES, "ends": {"after_sessions": 6}},
    ),
    ("tutoring_series_booking", "create_session_series", {**_SERIES, "starts_on": "2026-09-07"}),
    ("tutoring_series_booking", "create_session_series", {**_SERIES, "location": "student_home"}),
    ("tutoring_series_booking", "create_session_series", {**_SERIES, "tutor_id": "TUT-204"}),
    ("alarm_sensor_bypass", "bypass_sensor", {**_BYPASS, "sensor_id": "SNS-04"}),
    ("alarm_sensor_bypass", "bypass_sensor", {**_BYPASS, "days": 2}),
    ("alarm_sensor_bypass", "remove_sensor", {"sensor_id": "SNS-05"}),
    ("alarm_sensor_bypass", "disarm_system", {"account_number": "60-1184-22"}),
    ("candidate_data_erasure", "erase_candidate", {**_ERASE, "candidate_id": "APP-9120"}),
    ("candidate_data_erasure", "erase_candidate", {**_ERASE, "reason": "duplicate_record"}),
    ("candidate_data_erasure", "erase_candidate", {**_ERASE, "notify_candidate": False}),
    ("candidate_data_erasure", "archive_candidate", {"candidate_id": "CAN-50217"}),
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


def test_every_scenario_has_a_wrong_value_listed() -> None:
    assert {name for name, _, _ in WRONG} == set(BY_NAME)


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
    # The format retries cost a perfect model one failed call each.
    assert {r.scenario for r in records if r.tool_errors} == FORMAT_RETRY
