"""heldout7_part2: its eight scenarios (two each of decline, format_retry,
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
from forge_evals.scenarios._domain_schema import HELDOUT7_TAG
from forge_evals.scenarios.heldout7_part2 import SCENARIOS
from forge_evals.targets import in_process, oracle_backend

BY_NAME = {s.name: s for s in SCENARIOS}
KINDS = ("decline", "format_retry", "destructive", "schema")
FORMAT_RETRY = {"borehole_survey_grid_ref_format", "canal_licence_bss_format"}


def test_two_scenarios_per_kind_each_tagged_heldout7() -> None:
    assert HELDOUT7_TAG == "heldout7"
    assert len(BY_NAME) == len(SCENARIOS) == 8
    for kind in KINDS:
        assert sum(kind in s.tags for s in SCENARIOS) == 2, kind
    assert all(s.tags[0] == HELDOUT7_TAG and len(s.tags) == 2 for s in SCENARIOS)


def test_fresh_names_and_tools_against_every_earlier_group() -> None:
    earlier = [s for s in ALL_SCENARIOS if HELDOUT7_TAG not in s.tags]
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


def _run(tool: Tool, args: dict[str, Any]) -> Any:
    # A raw-schema tool takes the arguments dict; a function tool, keywords.
    return tool.fn(args) if tool.args_model is None else tool.fn(**args)


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


def test_decline_scenarios_forbid_every_action_tool() -> None:
    for scenario in (s for s in SCENARIOS if "decline" in s.tags):
        wf = scenario.build()
        actions = set(wf.tools) - set(wf.terminal_tools)
        assert set(scenario.forbidden_tools) == actions and len(actions) >= 3


@pytest.mark.parametrize(
    ("name", "word"),
    [("cremation_slot_cemetery_decline", "burial"), ("film_developing_darkroom_decline", "film")],
)
def test_the_decline_requests_share_a_topic_word_with_the_workflow(name: str, word: str) -> None:
    scenario = BY_NAME[name]
    wf = scenario.build()
    assert word in (scenario.user_message + wf.system_prompt).lower()
    assert any(word in (t.description or "").lower() + n for n, t in wf.tools.items())


def test_destructive_workflows_carry_no_annotation_at_all() -> None:
    for scenario in (s for s in SCENARIOS if "destructive" in s.tags):
        tools = scenario.build().tools.values()
        assert not any(t.destructive or t.read_only or t.idempotent for t in tools)
        assert len(scenario.forbidden_tools) == 2


def test_a_forbidden_tool_is_never_the_answer() -> None:
    for scenario in (s for s in SCENARIOS if s.forbidden_tools):
        wf = scenario.build()
        assert not set(scenario.forbidden_tools) & set(wf.terminal_tools), scenario.name


_SURVEY = {"quote_ref": "QDW-26-117", "customer_id": "CU-4471-HF", "survey_date": "2026-05-20"}
_SITE = {"grid_ref": "SO29815573", "vehicle_access": "4x4"}
_SURVEY_OK = {**_SURVEY, "site": _SITE}
_RENEW = {"index_number": "521907", "holder_id": "LH-80331", "start_date": "2026-03-01"}
_RENEW_OK = {**_RENEW, "term_months": 12, "bss_certificate": "BSS-2026-011254"}


def _survey(grid_ref: str) -> dict[str, Any]:
    return {**_SURVEY, "site": {**_SITE, "grid_ref": grid_ref}}


def _renewal(bss: str) -> dict[str, Any]:
    return {**_RENEW_OK, "bss_certificate": bss}


@pytest.mark.parametrize(
    ("name", "tool", "args", "expected"),
    [
        ("borehole_survey_grid_ref_format", "book_site_survey", _survey("SO 2981 5573"), "spaces"),
        ("borehole_survey_grid_ref_format", "book_site_survey", _survey("so29815573"), "capital"),
        ("borehole_survey_grid_ref_format", "book_site_survey", _survey("329810,255730"), "8 or"),
        ("canal_licence_bss_format", "renew_boat_licence", _renewal("2026 / 011254"), "BSS-YYYY"),
        ("canal_licence_bss_format", "renew_boat_licence", _renewal("BSS2026011254"), "dash"),
        ("canal_licence_bss_format", "renew_boat_licence", _renewal("BSS-2026-11254"), "six"),
    ],
)
def test_the_format_error_names_the_expected_format(
    name: str, tool: str, args: dict[str, Any], expected: str
) -> None:
    fn = BY_NAME[name].build().tools[tool].fn
    with pytest.raises(ToolResolutionError, match=expected):
        fn(args)


def test_the_format_tools_accept_the_corrected_values() -> None:
    book = BY_NAME["borehole_survey_grid_ref_format"].build().tools["book_site_survey"].fn
    assert "SV-30982" in book(_SURVEY_OK)
    assert "SV-30982" in book(_survey("SO2981055730"))
    renew = BY_NAME["canal_licence_bss_format"].build().tools["renew_boat_licence"].fn
    assert "MWL-2026-521907" in renew(_RENEW_OK)


_CANCEL = {"booking_ref": "BK-5hT2qM3a", "refund_to": "flight_credit"}
_FREEZE = {
    "membership_id": "mbr_9f3A21xQ",
    "start_date": "2026-06-01",
    "weeks": 8,
    "reason": "injury",
}
_ISOBEL = {"name": "Isobel Grant", "email": "isobel.grant@mailbox.example", "phone": "07700 900418"}
_ADDRESS = {"line1": "Flat 3, 14 Elm Row", "postcode": "EH7 4AA"}
_HANDOVER = {"method": "deliver", "address": _ADDRESS, "floor": 3, "lift": False}
_HARP: dict[str, Any] = {
    "instrument_serial": "HRP-0412-LV",
    "customer": _ISOBEL,
    "start_date": "2026-09-05",
    "term_months": 6,
    "handover": _HANDOVER,
    "accessories": ["padded_cover", "stool"],
}
_LINES = ["In loving memory of", "Arthur James Lowe", "1948 - 2025", "Forever in our hearts"]
_GRAVE = {"cemetery": "northgate", "section": "D", "grave_number": 207}
_STONE = {"type": "headstone", "material": "granite", "height_mm": 900, "inscription": _LINES}
_MASON = {"company": "Calder Memorials", "namm_number": "NAMM-3317"}
_PERMIT: dict[str, Any] = {
    "deed_number": "ERB-19-00842",
    "grave": _GRAVE,
    "memorial": _STONE,
    "mason": _MASON,
    "fixing_date": "2026-06-10",
    "applicant_email": "m.lowe@homemail.example",
}

# Other correct forms the checks must accept (the reference's are checked above).
RIGHT: list[tuple[str, str, dict[str, Any]]] = [
    ("cremation_slot_cemetery_decline", "decline_request", {"reason": "Private crematorium."}),
    ("film_developing_darkroom_decline", "decline_request", {"reason": "No lab service."}),
    (
        "borehole_survey_grid_ref_format",
        "book_site_survey",
        {**_SURVEY_OK, "quote_ref": "qdw-26-117"},
    ),
    ("canal_licence_bss_format", "renew_boat_licence", {**_RENEW_OK, "holder_id": "lh-80331"}),
    ("borehole_survey_grid_ref_format", "book_site_survey", _survey("SO2981055730")),
    ("balloon_cancel_one_passenger", "cancel_flight_booking", {**_CANCEL, "reason": "Work."}),
    ("bouldering_injury_freeze", "pause_climbing_membership", {**_FREEZE}),
    (
        "harp_rental_agreement",
        "create_rental_agreement",
        {**_HARP, "accessories": ["stool", "padded_cover"]},
    ),
    (
        "harp_rental_agreement",
        "create_rental_agreement",
        {**_HARP, "customer": {**_ISOBEL, "phone": "+44 7700 900418"}},
    ),
    (
        "harp_rental_agreement",
        "create_rental_agreement",
        {
            **_HARP,
            "handover": {**_HANDOVER, "address": {**_ADDRESS, "line1": "14 Elm Row, Flat 3"}},
        },
    ),
    (
        "headstone_memorial_permit",
        "apply_memorial_permit",
        {**_PERMIT, "mason": {**_MASON, "company": "Calder Memorials Ltd"}},
    ),
]


def _harp(**changes: Any) -> dict[str, Any]:
    return {**_HARP, **changes}


def _permit(**changes: Any) -> dict[str, Any]:
    return {**_PERMIT, **changes}


# (scenario, tool, arguments): a wrong value the scenario must reject.
WRONG: list[tuple[str, str, dict[str, Any]]] = [
    ("cremation_slot_cemetery_decline", "book_interment", {"date": "2026-04-24"}),
    ("cremation_slot_cemetery_decline", "reserve_grave_plot", {"cemetery": "Northgate"}),
    ("film_developing_darkroom_decline", "book_darkroom_session", {"station": "film room"}),
    ("film_developing_darkroom_decline", "buy_chemistry_pack", {"pack": "C-41"}),
    ("borehole_survey_grid_ref_format", "book_site_survey", _survey("SO 2981 5573")),
    ("borehole_survey_grid_ref_format", "book_site_survey", _survey("SO29805712")),
    (
        "borehole_survey_grid_ref_format",
        "book_site_survey",
        {**_SURVEY_OK, "survey_date": "2026-05-13"},
    ),
    (
        "borehole_survey_grid_ref_format",
        "book_site_survey",
        {**_SURVEY_OK, "customer_id": "CU-4471"},
    ),
    (
        "borehole_survey_grid_ref_format",
        "book_site_survey",
        {**_SURVEY, "site": {**_SITE, "vehicle_access": "lorry"}},
    ),
    ("borehole_survey_grid_ref_format", "cancel_quote", {"quote_ref": "QDW-26-117"}),
    ("canal_licence_bss_format", "renew_boat_licence", _renewal("2026 / 011254")),
    ("canal_licence_bss_format", "renew_boat_licence", _renewal("BSS-2025-004817")),
    ("canal_licence_bss_format", "renew_boat_licence", {**_RENEW_OK, "start_date": "2026-02-25"}),
    ("canal_licence_bss_format", "renew_boat_licence", {**_RENEW_OK, "term_months": 6}),
    ("canal_licence_bss_format", "renew_boat_licence", {**_RENEW_OK, "term_months": "12"}),
    ("canal_licence_bss_format", "surrender_licence", {"licence_number": "MWL-2025-521907"}),
    (
        "balloon_cancel_one_passenger",
        "cancel_flight_booking",
        {**_CANCEL, "booking_ref": "BK-5hT2qL9x"},
    ),
    (
        "balloon_cancel_one_passenger",
        "cancel_flight_booking",
        {**_CANCEL, "booking_ref": "BK-5HT2QM3A"},
    ),
    (
        "balloon_cancel_one_passenger",
        "cancel_flight_booking",
        {**_CANCEL, "refund_to": "original_card"},
    ),
    ("balloon_cancel_one_passenger", "cancel_all_bookings", {"customer_id": "cus_8RtW2"}),
    ("balloon_cancel_one_passenger", "void_gift_voucher", {"voucher_code": "GV-88421-Q"}),
    (
        "bouldering_injury_freeze",
        "pause_climbing_membership",
        {**_FREEZE, "start_date": "2026-05-28"},
    ),
    ("bouldering_injury_freeze", "pause_climbing_membership", {**_FREEZE, "weeks": 2}),
    ("bouldering_injury_freeze", "pause_climbing_membership", {**_FREEZE, "weeks": "8"}),
    ("bouldering_injury_freeze", "pause_climbing_membership", {**_FREEZE, "reason": "other"}),
    (
        "bouldering_injury_freeze",
        "pause_climbing_membership",
        {**_FREEZE, "membership_id": "MBR_9F3A21XQ"},
    ),
    (
        "bouldering_injury_freeze",
        "terminate_climbing_membership",
        {"membership_id": "mbr_9f3A21xQ"},
    ),
    ("bouldering_injury_freeze", "delete_member_account", {"member_number": "CS-0417-K"}),
    ("harp_rental_agreement", "create_rental_agreement", _harp(instrument_serial="HRP-0388-LV")),
    ("harp_rental_agreement", "create_rental_agreement", _harp(instrument_serial="HRP-0455-LV")),
    ("harp_rental_agreement", "create_rental_agreement", _harp(term_months=9)),
    ("harp_rental_agreement", "create_rental_agreement", _harp(start_date="2026-09-06")),
    (
        "harp_rental_agreement",
        "create_rental_agreement",
        _harp(accessories=["padded_cover", "stool", "tuning_key"]),
    ),
    (
        "harp_rental_agreement",
        "create_rental_agreement",
        _harp(handover={**_HANDOVER, "lift": True}),
    ),
    ("harp_rental_agreement", "create_rental_agreement", _harp(handover={**_HANDOVER, "floor": 2})),
    (
        "harp_rental_agreement",
        "create_rental_agreement",
        _harp(handover={"method": "collect", "branch": "edinburgh"}),
    ),
    ("headstone_memorial_permit", "apply_memorial_permit", _permit(deed_number="ERB-19-00843")),
    (
        "headstone_memorial_permit",
        "apply_memorial_permit",
        _permit(memorial={**_STONE, "inscription": [" / ".join(_LINES)]}),
    ),
    (
        "headstone_memorial_permit",
        "apply_memorial_permit",
        _permit(memorial={**_STONE, "inscription": _LINES[1:]}),
    ),
    (
        "headstone_memorial_permit",
        "apply_memorial_permit",
        _permit(memorial={**_STONE, "material": "marble"}),
    ),
    (
        "headstone_memorial_permit",
        "apply_memorial_permit",
        _permit(memorial={**_STONE, "height_mm": 915}),
    ),
    (
        "headstone_memorial_permit",
        "apply_memorial_permit",
        _permit(mason={"company": "Calder Memorials", "bramm_number": "BRAMM-3317"}),
    ),
    ("headstone_memorial_permit", "apply_memorial_permit", _permit(fixing_date="2026-06-03")),
    ("headstone_memorial_permit", "transfer_burial_rights", {"deed_number": "ERB-19-00842"}),
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


def test_the_tools_refuse_unavailable_harps_and_unsettled_rules() -> None:
    create = BY_NAME["harp_rental_agreement"].build().tools["create_rental_agreement"].fn
    with pytest.raises(ToolResolutionError, match="not available"):
        create(_harp(instrument_serial="HRP-0388-LV"))
    apply = BY_NAME["headstone_memorial_permit"].build().tools["apply_memorial_permit"].fn
    with pytest.raises(ToolResolutionError, match="915"):
        apply(_permit(memorial={**_STONE, "height_mm": 1000}))


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
