"""heldout5_part2: its eight scenarios (two each of decline, format_retry,
destructive and schema) are strict about the wrong values they are there to
catch, accept the other correct forms, their tools' errors name the format the
retry must use, and a perfect model passes each through the real server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from forge_client import ToolResolutionError
from forge_client.tools import Tool
from forge_evals.ablation import PRESETS
from forge_evals.results import ResultsWriter
from forge_evals.runner import EvalSettings, plan, run_eval
from forge_evals.scenarios import ALL_SCENARIOS
from forge_evals.scenarios._domain_schema import HELDOUT5_TAG
from forge_evals.scenarios.heldout5_part2 import SCENARIOS
from forge_evals.targets import in_process, oracle_backend

BY_NAME = {s.name: s for s in SCENARIOS}
KINDS = ("decline", "format_retry", "destructive", "schema")
FORMAT_RETRY = {"tree_work_tpo_reference_format", "dog_groom_mobile_format"}


def test_two_scenarios_per_kind_each_tagged_heldout5() -> None:
    assert len(BY_NAME) == len(SCENARIOS) == 8
    for kind in KINDS:
        assert sum(kind in s.tags for s in SCENARIOS) == 2, kind
    assert all(s.tags[0] == HELDOUT5_TAG and len(s.tags) == 2 for s in SCENARIOS)


def test_fresh_names_and_tools_against_every_earlier_group() -> None:
    earlier = [s for s in ALL_SCENARIOS if HELDOUT5_TAG not in s.tags]
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


def test_the_reference_calls_run_against_the_tools() -> None:
    # Every reference call but the format retries' first attempt succeeds.
    for scenario in SCENARIOS:
        tools = scenario.build().tools
        for i, call in enumerate(scenario.reference):
            if scenario.name in FORMAT_RETRY and i == 1:
                with pytest.raises(ToolResolutionError):
                    _run(tools[call.tool], call.args)
            else:
                assert _run(tools[call.tool], call.args), (scenario.name, call.tool)


def _run(tool: Tool, args: dict[str, Any]) -> Any:
    # A raw-schema tool takes the arguments dict; a function tool, keywords.
    return tool.fn(args) if tool.args_model is None else tool.fn(**args)


def test_decline_scenarios_forbid_every_action_tool() -> None:
    for scenario in (s for s in SCENARIOS if "decline" in s.tags):
        wf = scenario.build()
        actions = set(wf.tools) - set(wf.terminal_tools)
        assert set(scenario.forbidden_tools) == actions and len(actions) >= 3


def test_a_decline_scenario_shares_a_topic_word_with_a_tool() -> None:
    tools = BY_NAME["piano_removal_decline"].build().tools
    assert "piano" in BY_NAME["piano_removal_decline"].user_message.lower()
    assert sum("piano" in name for name in tools) >= 3


def test_destructive_workflows_carry_no_annotation_at_all() -> None:
    for scenario in (s for s in SCENARIOS if "destructive" in s.tags):
        tools = scenario.build().tools.values()
        assert not any(t.destructive or t.read_only or t.idempotent for t in tools)
        assert len(scenario.forbidden_tools) == 2


def test_a_forbidden_tool_is_never_the_answer() -> None:
    for scenario in (s for s in SCENARIOS if s.forbidden_tools):
        wf = scenario.build()
        assert not set(scenario.forbidden_tools) & set(wf.terminal_tools), scenario.name


_TREE = {"quote_id": "QT-7316", "work_date": "2026-09-15", "notify_neighbours": True}
_CONSENT = {"reference": "TPO/2019/0456", "decision_date": "2026-08-14"}
_TREE_OK = {**_TREE, "tpo_consent": _CONSENT}
_VISIT = {
    "customer_id": "CUS-8850",
    "dog_id": "DOG-20417",
    "visit_date": "2026-10-09",
    "service": "full_groom",
}
_SMS = {"mobile": "+447700900418", "hours_before": 24}
_VISIT_OK = {**_VISIT, "sms_reminder": _SMS}


def _tree(reference: str) -> dict[str, Any]:
    return {**_TREE, "tpo_consent": {**_CONSENT, "reference": reference}}


def _visit(mobile: str) -> dict[str, Any]:
    return {**_VISIT, "sms_reminder": {**_SMS, "mobile": mobile}}


@pytest.mark.parametrize(
    ("name", "tool", "args", "expected"),
    [
        (
            "tree_work_tpo_reference_format",
            "schedule_tree_work",
            _tree("TPO 456/2019"),
            "YYYY/NNNN",
        ),
        ("tree_work_tpo_reference_format", "schedule_tree_work", _tree("456/2019"), "zero-padded"),
        ("tree_work_tpo_reference_format", "schedule_tree_work", _tree("TPO/2019/456"), "TPO/"),
        ("dog_groom_mobile_format", "book_grooming_visit", _visit("07700 900418"), "E.164"),
        ("dog_groom_mobile_format", "book_grooming_visit", _visit("07700900418"), "leading"),
        ("dog_groom_mobile_format", "book_grooming_visit", _visit("+44 7700 900418"), "spaces"),
    ],
)
def test_the_format_error_names_the_expected_format(
    name: str, tool: str, args: dict[str, Any], expected: str
) -> None:
    fn = BY_NAME[name].build().tools[tool].fn
    with pytest.raises(ToolResolutionError, match=expected):
        fn(args)


def test_the_format_tools_accept_the_corrected_values() -> None:
    schedule = BY_NAME["tree_work_tpo_reference_format"].build().tools["schedule_tree_work"].fn
    assert "JB-40958" in schedule(_TREE_OK)
    book = BY_NAME["dog_groom_mobile_format"].build().tools["book_grooming_visit"].fn
    assert "GV-77120" in book(_VISIT_OK)


_SKIP = {"member_id": "WCM-40812", "shipment_id": "SHP-26Q4-40812-A"}
_JESS = {"full_name": "Jess Okafor", "email": "jess.okafor@mailbox.example"}
_TRANSFER = {"ticket_id": "TKT-7Q4M-2282", "new_holder": _JESS}
_LINES = [{"sku": "PL-10418", "quantity": 60}, {"sku": "PL-20733", "quantity": 25}]
_DELIVERY = {"delivery_date": "2026-04-23", "site_postcode": "WR11 4TJ"}
_ORDER: dict[str, Any] = {
    "account_number": "FWN-2207",
    "lines": _LINES,
    "fulfilment": _DELIVERY,
    "customer_reference": "Broadway Road",
}
_SITE = {
    "address_line": "14 Clifton Terrace",
    "postcode": "BS8 4AX",
    "access": {"gate_code": "4071"},
}
_FRONT = {"side": "front", "length_m": 9.5, "lifts": 3}
_REAR = {"side": "rear", "length_m": 11, "lifts": 3}
_HIRE: dict[str, Any] = {
    "account_id": "TA-5512",
    "site": _SITE,
    "elevations": [_FRONT, _REAR],
    "start_date": "2026-05-11",
    "hire_weeks": 6,
    "inspection_days": ["monday"],
}

# Other correct forms the checks must accept (the reference's are checked above).
RIGHT: list[tuple[str, str, dict[str, Any]]] = [
    ("piano_removal_decline", "decline_request", {"reason": "We tune and repair, not move."}),
    ("escape_room_restaurant_decline", "decline_request", {"reason": "Not our restaurant."}),
    ("tree_work_tpo_reference_format", "schedule_tree_work", {**_TREE_OK, "quote_id": "qt-7316"}),
    ("dog_groom_mobile_format", "book_grooming_visit", _VISIT_OK),
    ("wine_club_skip_case", "skip_shipment", {**_SKIP, "shipment_id": "shp-26q4-40812-a"}),
    (
        "festival_ticket_name_change",
        "change_ticket_holder",
        {**_TRANSFER, "new_holder": {**_JESS, "full_name": "Jessica Okafor"}},
    ),
    ("nursery_trade_order", "place_trade_order", {**_ORDER, "lines": _LINES[::-1]}),
    (
        "nursery_trade_order",
        "place_trade_order",
        {**_ORDER, "customer_reference": "Broadway Rd job"},
    ),
    ("scaffold_hire_order", "create_scaffold_hire", {**_HIRE, "elevations": [_REAR, _FRONT]}),
    (
        "scaffold_hire_order",
        "create_scaffold_hire",
        {**_HIRE, "site": {**_SITE, "access": {"gate_code": "4071", "parking_notes": "side"}}},
    ),
]

# (scenario, terminal tool, arguments): a wrong value the scenario must reject.
WRONG: list[tuple[str, str, dict[str, Any]]] = [
    ("piano_removal_decline", "book_piano_tuning", {"date": "2026-10-03"}),
    ("piano_removal_decline", "quote_piano_repair", {"problem": "move upstairs"}),
    ("escape_room_restaurant_decline", "add_food_package", {"booking_ref": "LX-20931"}),
    ("escape_room_restaurant_decline", "book_escape_room", {"players": 8}),
    ("tree_work_tpo_reference_format", "schedule_tree_work", _tree("TPO 456/2019")),
    ("tree_work_tpo_reference_format", "schedule_tree_work", _tree("TPO/2019/456")),
    ("tree_work_tpo_reference_format", "schedule_tree_work", _tree("TPO/0456/2019")),
    ("tree_work_tpo_reference_format", "schedule_tree_work", _tree("TPO/2021/0087")),
    (
        "tree_work_tpo_reference_format",
        "schedule_tree_work",
        {**_TREE_OK, "tpo_consent": {**_CONSENT, "decision_date": "2026-09-02"}},
    ),
    (
        "tree_work_tpo_reference_format",
        "schedule_tree_work",
        {**_TREE_OK, "work_date": "2026-09-08"},
    ),
    (
        "tree_work_tpo_reference_format",
        "schedule_tree_work",
        {**_TREE_OK, "notify_neighbours": False},
    ),
    ("dog_groom_mobile_format", "book_grooming_visit", _visit("07700 900418")),
    ("dog_groom_mobile_format", "book_grooming_visit", _visit("+4407700900418")),
    ("dog_groom_mobile_format", "book_grooming_visit", _visit("+441632960123")),
    ("dog_groom_mobile_format", "book_grooming_visit", {**_VISIT_OK, "service": "bath_and_brush"}),
    ("dog_groom_mobile_format", "book_grooming_visit", {**_VISIT_OK, "visit_date": "2026-10-16"}),
    (
        "dog_groom_mobile_format",
        "book_grooming_visit",
        {**_VISIT_OK, "sms_reminder": {**_SMS, "hours_before": 2}},
    ),
    ("dog_groom_mobile_format", "book_grooming_visit", {**_VISIT_OK, "dog_id": "CUS-8850"}),
    ("wine_club_skip_case", "skip_shipment", {**_SKIP, "shipment_id": "SHP-26Q4-40812-B"}),
    ("wine_club_skip_case", "skip_shipment", {**_SKIP, "shipment_id": "WCM-40812"}),
    ("wine_club_skip_case", "cancel_membership", {"member_id": "WCM-40812"}),
    ("wine_club_skip_case", "remove_payment_card", {"member_id": "WCM-40812"}),
    (
        "festival_ticket_name_change",
        "change_ticket_holder",
        {**_TRANSFER, "ticket_id": "TKT-7Q4M-2281"},
    ),
    (
        "festival_ticket_name_change",
        "change_ticket_holder",
        {**_TRANSFER, "new_holder": {**_JESS, "email": "ellie.brookes@post.example"}},
    ),
    (
        "festival_ticket_name_change",
        "change_ticket_holder",
        {**_TRANSFER, "new_holder": {**_JESS, "full_name": "Sam Brookes"}},
    ),
    ("festival_ticket_name_change", "revoke_ticket", {"ticket_id": "TKT-7Q4M-2282"}),
    ("festival_ticket_name_change", "refund_order", {"order_number": "FG-118406"}),
    (
        "nursery_trade_order",
        "place_trade_order",
        {**_ORDER, "lines": [{"sku": "PL-10412", "quantity": 60}, _LINES[1]]},
    ),
    (
        "nursery_trade_order",
        "place_trade_order",
        {**_ORDER, "lines": [_LINES[0], {"sku": "PL-20731", "quantity": 25}]},
    ),
    (
        "nursery_trade_order",
        "place_trade_order",
        {**_ORDER, "lines": [_LINES[0], {"sku": "PL-20733", "quantity": 52}]},
    ),
    ("nursery_trade_order", "place_trade_order", {**_ORDER, "lines": [_LINES[0]]}),
    (
        "nursery_trade_order",
        "place_trade_order",
        {**_ORDER, "lines": [*_LINES, _LINES[0]]},
    ),
    (
        "nursery_trade_order",
        "place_trade_order",
        {**_ORDER, "fulfilment": {"collection_date": "2026-04-23", "depot": "evesham"}},
    ),
    (
        "nursery_trade_order",
        "place_trade_order",
        {**_ORDER, "fulfilment": {**_DELIVERY, "delivery_date": "2026-04-30"}},
    ),
    ("nursery_trade_order", "place_trade_order", {**_ORDER, "account_number": "FWN-2270"}),
    ("nursery_trade_order", "place_trade_order", {**_ORDER, "customer_reference": "Hollis"}),
    ("scaffold_hire_order", "create_scaffold_hire", {**_HIRE, "elevations": [_FRONT]}),
    (
        "scaffold_hire_order",
        "create_scaffold_hire",
        {**_HIRE, "elevations": [_FRONT, {**_REAR, "side": "left_gable"}]},
    ),
    (
        "scaffold_hire_order",
        "create_scaffold_hire",
        {**_HIRE, "elevations": [{**_FRONT, "length_m": 11}, {**_REAR, "length_m": 9.5}]},
    ),
    (
        "scaffold_hire_order",
        "create_scaffold_hire",
        {**_HIRE, "elevations": [_FRONT, {**_REAR, "lifts": 2}]},
    ),
    ("scaffold_hire_order", "create_scaffold_hire", {**_HIRE, "start_date": "2026-05-05"}),
    ("scaffold_hire_order", "create_scaffold_hire", {**_HIRE, "start_date": "2026-05-18"}),
    ("scaffold_hire_order", "create_scaffold_hire", {**_HIRE, "hire_weeks": 42}),
    (
        "scaffold_hire_order",
        "create_scaffold_hire",
        {**_HIRE, "inspection_days": ["monday", "monday"]},
    ),
    (
        "scaffold_hire_order",
        "create_scaffold_hire",
        {**_HIRE, "site": {**_SITE, "access": {"parking_notes": "gate code 4071"}}},
    ),
    ("scaffold_hire_order", "create_scaffold_hire", {**_HIRE, "account_id": "HR-30877"}),
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
