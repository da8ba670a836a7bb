"""The built-in scenarios are well-formed, and a perfect model aces them
through the real server and SDK (the oracle backend replays each reference)."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge_evals.ablation import PRESETS
from forge_evals.results import ResultsWriter
from forge_evals.runner import EvalSettings, plan, run_eval
from forge_evals.scenario import has_number, mentions, numbers_in, same, select
from forge_evals.scenarios import ALL_SCENARIOS, BY_NAME
from forge_evals.targets import in_process, oracle_backend


def test_at_least_twelve_scenarios_across_the_three_groups() -> None:
    assert len(ALL_SCENARIOS) >= 12
    assert len(BY_NAME) == len(ALL_SCENARIOS), "scenario names must be unique"
    tags = {t for s in ALL_SCENARIOS for t in s.tags}
    assert {
        "plumbing",
        "model_quality",
        "compaction",
        "choice",
        "error_recovery",
        "relevance",
        "domains",
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
    } <= tags
    assert any(s.budget_tokens for s in ALL_SCENARIOS if "compaction" in s.tags)


@pytest.mark.parametrize("scenario", ALL_SCENARIOS, ids=lambda s: s.name)
def test_reference_solution_is_ideal_and_valid(scenario: object) -> None:
    from forge_evals.scenario import Scenario

    assert isinstance(scenario, Scenario)
    shape = scenario.shape()
    assert scenario.build().name == scenario.name, "workflow name must be the scenario name"
    assert len(scenario.reference) == scenario.ideal_iterations
    assert scenario.ideal_iterations <= scenario.max_iterations
    last = scenario.reference[-1]
    assert last.tool in shape.terminal_tools
    assert scenario.check(last.tool, last.args)
    assert all(r.tool in shape.tools for r in scenario.reference)
    # A terminal tool with the wrong name or empty arguments is not correct.
    assert not scenario.check("no_such_tool", last.args)


def test_check_counts_a_crashing_validator_as_wrong() -> None:
    scenario = BY_NAME["argument_fidelity"]
    assert not scenario.check("report_balance", {"customer_id": None, "balance": object()})


def test_validation_helpers() -> None:
    assert numbers_in("balance 1,284.50 USD") == [1284.5]
    assert has_number("1 USD = 0.92 EUR", 0.92)
    assert not has_number("0.95", 0.92)
    assert has_number(418.2, 418.20)
    assert not has_number(True, 1.0)
    assert mentions("Light SNOW in Oslo", "snow")
    assert same(" 'C-9X4K2' ", "C-9X4K2")
    assert not same("C-9X4K", "C-9X4K2")


def test_select_by_name_and_tag() -> None:
    assert select(ALL_SCENARIOS) == list(ALL_SCENARIOS)
    picked = select(ALL_SCENARIOS, names=["basic_2step"], tags=["compaction"])
    assert [s.name for s in picked] == ["basic_2step", "long_chain", "long_chain_tight"]
    with pytest.raises(KeyError, match="nope"):
        select(ALL_SCENARIOS, names=["nope"])


async def test_the_oracle_scores_every_scenario_perfectly_through_the_server(
    tmp_path: Path,
) -> None:
    writer = ResultsWriter(tmp_path / "r.jsonl")
    async with in_process(oracle_backend(ALL_SCENARIOS)) as target:
        records = await run_eval(
            target,
            plan(ALL_SCENARIOS, [PRESETS["all-on"]], 1, "oracle", set()),
            writer,
            settings=EvalSettings(),
            cfg_id="oracle",
        )
    assert [r.scenario for r in records] == [s.name for s in ALL_SCENARIOS]
    wrong = [(r.scenario, r.failure_reason, r.error) for r in records if not r.correct]
    assert wrong == []
    assert all(r.iterations == r.ideal_iterations and r.efficiency == 1.0 for r in records)
    # Error recovery costs a failed tool call even for a perfect model.
    assert {r.scenario for r in records if r.tool_errors} == {
        "error_recovery",
        "error_recovery_format",
        "format_error_recovery",
        "not_found_retry",
        "meter_reading_format",
        "museum_accession_format",
        "parking_permit_format",
        "court_filing_format",
        "plumbing_dispatch_format",
        "catering_cost_centre_format",
        "tyre_fitting_size_format",
        "supplier_iban_format",
        "driving_lesson_phone_format",
        "ski_pass_birthdate_format",
        "charity_gift_pence_format",
        "tree_work_tpo_reference_format",
        "dog_groom_mobile_format",
        "boat_haul_out_ssr_format",
        "music_exam_entry_dob_format",
        "borehole_survey_grid_ref_format",
        "canal_licence_bss_format",
        "seed_deposit_coordinates_format",
        "livery_ueln_format",
        "septic_empty_mobile_format",
        "snowplough_season_interval_format",
        "scuba_nitrox_fill_mix_format",
        "radio_sponsor_spot_rrule_format",
        "cheese_cave_make_batch_format",
        "coach_charter_pickup_window_format",
        "drystone_practice_gap_grid_ref_format",
        "kitesurf_taster_emergency_phone_format",
        "mobile_bike_repair_evening_window_format",
        "sheepdog_nursery_trial_stud_number_format",
    }
    # The tight budget travels in the run options and makes the server compact.
    tight = next(r for r in records if r.scenario == "long_chain_tight")
    assert tight.budget_tokens == BY_NAME["long_chain_tight"].budget_tokens
    assert tight.compactions >= 1
    assert next(r for r in records if r.scenario == "long_chain").compactions == 0
