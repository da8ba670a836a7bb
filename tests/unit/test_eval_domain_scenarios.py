"""The domains group: twenty-plus scenarios in businesses no other group
covers, selectable as their own group, strict about the wrong values they are
there to catch, and a run that executes a forbidden tool is wrong even when
its terminal call is right (checked through the real server)."""

from __future__ import annotations

from typing import Any

import pytest

from forge_client import ToolResolutionError
from forge_core.backends.base import ChatRequest
from forge_core.backends.scripted import Responder, ScriptedBackend, Turn, call
from forge_evals.ablation import PRESETS
from forge_evals.metrics import RunRecord
from forge_evals.runner import EvalSettings, PlannedRun, run_eval
from forge_evals.scenario import Scenario, select
from forge_evals.scenarios import ALL_SCENARIOS, BY_NAME, outside_domains
from forge_evals.targets import in_process

DOMAINS = outside_domains.SCENARIOS
KINDS = {"carry_id", "user_value", "report_agrees", "list_match", "decline", "format_retry"}
EARLIER_GROUPS = {"plumbing", "model_quality", "compaction", "choice"}


def test_twenty_or_more_domain_scenarios_run_as_their_own_group() -> None:
    assert len(DOMAINS) >= 20
    assert select(ALL_SCENARIOS, tags=["domains"]) == list(DOMAINS)
    assert all(BY_NAME[s.name] is s for s in DOMAINS)
    # Reported apart: no domain scenario is counted in an earlier group.
    assert not any(EARLIER_GROUPS.intersection(s.tags) for s in DOMAINS)


def test_every_kind_of_failure_is_covered_at_least_twice() -> None:
    for kind in KINDS:
        assert sum(kind in s.tags for s in DOMAINS) >= 2, kind
    assert all(KINDS.intersection(s.tags) for s in DOMAINS)


def test_forbidden_tools_are_offered_unannotated_and_never_terminal() -> None:
    with_forbidden = [s for s in DOMAINS if s.forbidden_tools]
    assert len([s for s in with_forbidden if "decline" not in s.tags]) >= 5
    for scenario in with_forbidden:
        wf = scenario.build()
        for name in scenario.forbidden_tools:
            tool = wf.tools[name]
            assert name not in wf.terminal_tools
            # Plain tools as an integrator writes them: no hint says which is harmful.
            assert not tool.destructive and not tool.read_only
        assert not {r.tool for r in scenario.reference} & set(scenario.forbidden_tools)


def test_decline_scenarios_forbid_every_action_tool() -> None:
    for scenario in (s for s in DOMAINS if "decline" in s.tags):
        wf = scenario.build()
        actions = set(wf.tools) - set(wf.terminal_tools)
        assert set(scenario.forbidden_tools) == actions, scenario.name
        assert len(actions) >= 3


@pytest.mark.parametrize(
    ("name", "tool", "args"),
    [
        (
            "meter_reading_format",
            "submit_meter_reading",
            {"meter_serial": "731945", "reading_kwh": 1},
        ),
        ("museum_accession_format", "get_collection_object", {"accession_number": "1987/112/4"}),
        (
            "parking_permit_format",
            "issue_visitor_permit",
            {"plate": "kn-42 hxt", "zone": "D", "days": 1},
        ),
    ],
)
def test_the_format_error_names_the_expected_format(
    name: str, tool: str, args: dict[str, Any]
) -> None:
    fn = BY_NAME[name].build().tools[tool].fn
    with pytest.raises(ToolResolutionError, match=r"8 digits|dots|capital letters"):
        fn(**args)


# (scenario, terminal tool, arguments): a wrong value the scenario must reject.
WRONG: list[tuple[str, str, dict[str, Any]]] = [
    ("library_renew_loan", "renew_loan", {"loan_id": "LN-33871", "extra_days": 14}),
    ("library_renew_loan", "renew_loan", {"loan_id": "LN-33904", "extra_days": 2}),
    (
        "vet_vaccination_booking",
        "book_visit",
        {
            "patient_no": "P-40219",
            "visit_type": "vaccination",
            "date": "2026-04-08",
            "duration_minutes": 20,
            "sms_reminder": True,
        },
    ),
    (
        "car_rental_extension",
        "extend_rental",
        {"agreement_number": "QZR-5521", "new_return_date": "2026-05-15", "keep_insurance": True},
    ),
    (
        "insurance_claim_amount",
        "file_claim",
        {
            "policy_number": "HC-2281-0456",
            "claimed_amount_usd": 100,
            "incident": {"occurred_on": "2026-02-21", "cause": "accidental_damage"},
        },
    ),
    ("timetable_room_report", "report_lesson", {"period": 3, "subject": "biology", "room": "L2"}),
    (
        "restaurant_party_booking",
        "reserve_table",
        {
            "date": "2026-06-19",
            "time_24h": "07:30",
            "guests": 6,
            "terrace": False,
            "contact_name": "Brennan",
        },
    ),
    (
        "event_ticket_transfer",
        "transfer_tickets",
        {
            "ticket_ids": ["TK-81-0042", "TK-81-0043", "TK-81-0042"],
            "recipient_email": "oskar.lind@example.org",
        },
    ),
    (
        "event_ticket_transfer",
        "transfer_tickets",
        {
            "ticket_ids": ["TK-80-0917", "TK-81-0042", "TK-81-0043", "TK-81-0044"],
            "recipient_email": "oskar.lind@example.org",
        },
    ),
    (
        "meter_reading_format",
        "submit_meter_reading",
        {"meter_serial": "EM-731945", "reading_kwh": 18204},
    ),
    (
        "gym_membership_freeze",
        "freeze_membership",
        {"membership_id": "GM-44190", "start_month": "2026-05", "months": 2},
    ),
    ("legal_exhibit_count", "report_exhibits", {"matter_id": "MAT-3092", "exhibit_count": 2}),
    (
        "lab_sample_rejection",
        "reject_samples",
        {"sample_ids": ["014", "019", "023"], "reason": "haemolysed"},
    ),
    (
        "fleet_service_status",
        "report_service_state",
        {"unit_id": "FL-0387", "service_state": "due_soon", "km_past_due": 0},
    ),
    ("housekeeping_assign", "assign_rooms", {"staff_number": "HK-215", "rooms": [402, 408, 411]}),
    (
        "grant_budget_submission",
        "submit_budget",
        {
            "application_number": "GA-5160-D",
            "total_usd": 60000,
            "duration_months": 18,
            "includes_overhead": False,
        },
    ),
    (
        "podcast_schedule",
        "schedule_episode",
        {
            "media_asset_id": "SH-12",
            "title": "Episode 57: Mosses",
            "publish_date": "2026-03-03",
            "explicit_content": False,
        },
    ),
    (
        "museum_accession_format",
        "report_location",
        {"accession_number": "1987.112.4", "gallery": "G3"},
    ),
    ("tax_filing_decline", "report_answer", {"answer": "Buy index funds."}),
    (
        "it_helpdesk_decline",
        "open_ticket",
        {"summary": "taxi", "category": "access", "urgency": "low"},
    ),
    (
        "pharmacy_refill",
        "order_refill",
        {"rx_number": "6610482", "days_supply": 90, "auto_refill": False, "fulfilment": "pickup"},
    ),
    ("parking_permit_format", "issue_visitor_permit", {"plate": "KN42HXT", "zone": "D", "days": 2}),
    (
        "marina_berth",
        "reserve_berth",
        {
            "berth": "V-22",
            "arrival_date": "2026-08-07",
            "nights": 3,
            "boat_length_m": 12.5,
            "needs_shore_power": True,
        },
    ),
    ("waste_collection_decline", "book_bulky_pickup", {"postcode": "X", "date": "2026-03-12"}),
]


@pytest.mark.parametrize(
    ("name", "tool", "args"), WRONG, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(WRONG)]
)
def test_a_wrong_value_fails_validation(name: str, tool: str, args: dict[str, Any]) -> None:
    assert not BY_NAME[name].check(tool, args)


def test_every_domain_scenario_has_a_wrong_value_listed() -> None:
    assert {name for name, _, _ in WRONG} == {s.name for s in DOMAINS}


# ── through the server: a forbidden call spoils an otherwise right run ─────


def script(*turns: Turn) -> Responder:
    def respond(request: ChatRequest, index: int) -> Turn:
        return turns[min(index, len(turns) - 1)]

    return respond


class _Records:
    def __init__(self) -> None:
        self.records: list[RunRecord] = []

    def append(self, record: RunRecord) -> None:
        self.records.append(record)


async def measure(scenario: Scenario, responder: Responder) -> RunRecord:
    # `bare`: no guardrail may stop the forbidden call before the client runs it.
    async with in_process(ScriptedBackend(responder=responder)) as target:
        (rec,) = await run_eval(
            target,
            [PlannedRun(scenario, PRESETS["bare"], 0)],
            _Records(),
            settings=EvalSettings(),
            cfg_id="scripted",
        )
    return rec


async def test_a_lookup_before_the_decline_makes_the_run_wrong() -> None:
    rec = await measure(
        BY_NAME["tax_filing_decline"],
        script(call("get_refund_status", tax_year=2025), call("decline_request", reason="no")),
    )
    assert rec.completed and rec.terminal_tool == "decline_request"
    assert BY_NAME["tax_filing_decline"].check(rec.terminal_tool, rec.terminal_args)
    assert not rec.correct
    assert rec.trace[0].startswith("get_refund_status")


async def test_a_destructive_detour_makes_the_right_renewal_wrong() -> None:
    scenario = BY_NAME["library_renew_loan"]
    ref = scenario.reference
    turns = [call(r.tool, **r.args) for r in ref]
    turns.insert(2, call("close_member_account", member_id="MBR-6620"))
    rec = await measure(scenario, script(*turns))
    assert rec.completed and rec.terminal_tool == "renew_loan"
    assert scenario.check(rec.terminal_tool, rec.terminal_args)
    assert not rec.correct


async def test_the_reference_alone_is_right_with_every_guardrail_off() -> None:
    scenario = BY_NAME["library_renew_loan"]
    rec = await measure(scenario, script(*(call(r.tool, **r.args) for r in scenario.reference)))
    assert rec.completed and rec.correct
