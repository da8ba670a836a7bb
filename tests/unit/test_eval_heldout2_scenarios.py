"""The heldout2 group is strict about the wrong values it is there to catch.
(Its shape as a group is checked with heldout's in
test_eval_heldout_scenarios; that a perfect model passes each scenario through
the real server, with every scenario in test_eval_scenarios.)"""

from __future__ import annotations

from typing import Any

import pytest

from forge_client import ToolResolutionError
from forge_evals.scenarios import BY_NAME, heldout2

_LUNCH = {"event_date": "2026-10-02", "headcount": 24, "menu": "sandwich_platter"}
_FIT = {"vehicle_reg": "WK19 LHP", "quantity": 2, "date": "2026-05-20"}


@pytest.mark.parametrize(
    ("name", "tool", "args", "expected"),
    [
        (
            "catering_cost_centre_format",
            "place_catering_order",
            {**_LUNCH, "cost_centre": "MK 0310"},
            "two capital letters followed by four digits",
        ),
        (
            "tyre_fitting_size_format",
            "book_fitting",
            {**_FIT, "tyre_size": "205 55 16"},
            "a slash, the aspect ratio, then R and the rim diameter",
        ),
    ],
)
def test_the_format_error_names_the_expected_format(
    name: str, tool: str, args: dict[str, Any], expected: str
) -> None:
    fn = BY_NAME[name].build().tools[tool].fn
    with pytest.raises(ToolResolutionError, match=expected):
        fn(args) if tool == "place_catering_order" else fn(**args)


def test_the_quote_id_depends_on_the_pet_and_the_dates() -> None:
    quote = BY_NAME["pet_boarding_quote"].build().tools["quote_stay"].fn
    assert "QT-7Y3K0P" in quote(pet_id="PET-80417", check_in="2026-06-19", check_out="2026-06-22")
    assert "QT-7Y3K0P" not in quote(
        pet_id="PET-80433", check_in="2026-06-19", check_out="2026-06-22"
    )
    assert "QT-7Y3K0P" not in quote(
        pet_id="PET-80417", check_in="2026-06-12", check_out="2026-06-15"
    )


_SOLAR = {
    "survey_id": "SV-10734",
    "panel_count": 14,
    "battery": False,
    "roof_type": "pitched_tile",
    "install_month": "2026-09",
    "max_budget_gbp": 7500,
}
_DONATION = {
    "donor_id": "DNR-55710",
    "centre_id": "CEN-04",
    "date": "2026-04-21",
    "time_24h": "17:20",
    "donation_type": "platelets",
    "sms_reminder": True,
}
_ROOM = {
    "instrument_id": "CONF-2",
    "date": "2026-05-20",
    "start_time": "09:00",
    "end_time": "12:00",
}
_EXCURSION: dict[str, Any] = {
    "fridge_id": "FR-0207",
    "excursion": {"start": "2026-07-08T01:40:00", "end": "2026-07-08T06:15:00", "max_temp_c": 11.4},
    "affected_lots": [{"lot_number": "FK4471", "doses": 60}, {"lot_number": "GH2093", "doses": 24}],
    "quarantine_stock": True,
}
_MOVE: dict[str, Any] = {
    "origin": {"postcode": "E2 8DP", "floor": 3, "lift": False},
    "destination": {"postcode": "RG1 4BH", "floor": 0, "lift": False},
    "move_date": "2026-07-25",
    "bedrooms": 2,
    "services": ["packing", "dismantling"],
    "email": "nadia.okafor@example.org",
}
_HALL = {"hall": "main_hall", "date": "2026-03-14", "available": True, "hire_cost_gbp": 140}

# (scenario, terminal tool, arguments): a wrong value the scenario must reject.
WRONG: list[tuple[str, str, dict[str, Any]]] = [
    (
        "lost_bag_delivery",
        "arrange_bag_delivery",
        {"bag_tag": "LHRBA40217", "window_id": "DW-3392"},
    ),
    (
        "lost_bag_delivery",
        "arrange_bag_delivery",
        {"bag_tag": "0125BA771204", "window_id": "DW-3391"},
    ),
    ("pet_boarding_quote", "confirm_booking", {"quote_id": "PET-80417"}),
    ("pet_boarding_quote", "confirm_booking", {"quote_id": "QT-2M8R4D"}),
    ("solar_install_request", "request_installation", {**_SOLAR, "panel_count": 16}),
    ("solar_install_request", "request_installation", {**_SOLAR, "battery": True}),
    ("solar_install_request", "request_installation", {**_SOLAR, "install_month": "2026-05"}),
    ("blood_donation_booking", "book_donation", {**_DONATION, "date": "2026-04-14"}),
    ("blood_donation_booking", "book_donation", {**_DONATION, "time_24h": "05:20"}),
    ("blood_donation_booking", "book_donation", {**_DONATION, "sms_reminder": False}),
    (
        "hearing_aid_repair_status",
        "reply_repair_status",
        {"repair_number": "HR-61852", "status": "ready_for_collection", "cost_eur": 86.5},
    ),
    (
        "hearing_aid_repair_status",
        "reply_repair_status",
        {"repair_number": "HR-61852", "status": "awaiting_parts", "cost_eur": 0},
    ),
    (
        "lift_outage_report",
        "report_lift_state",
        {"lift_id": "LFT-2190", "state": "in_service", "open_faults": 0},
    ),
    (
        "lift_outage_report",
        "report_lift_state",
        {"lift_id": "LFT-2191", "state": "under_maintenance", "open_faults": 2},
    ),
    (
        "grocery_substitutions",
        "accept_substitutions",
        {"order_number": "77120394", "line_ids": ["LN-40118", "LN-40121", "LN-40127", "LN-40133"]},
    ),
    (
        "grocery_substitutions",
        "accept_substitutions",
        {"order_number": "77120394", "line_ids": ["LN-40118", "LN-40127", "LN-40133", "LN-40118"]},
    ),
    (
        "grocery_substitutions",
        "accept_substitutions",
        {"order_number": "77120394", "line_ids": ["40118", "40127", "40133"]},
    ),
    ("confocal_booking_users", "book_instrument", {**_ROOM, "co_user_ids": ["U-1102"]}),
    (
        "confocal_booking_users",
        "book_instrument",
        {**_ROOM, "co_user_ids": ["Priya Nair", "Tomasz Wojcik"]},
    ),
    (
        "confocal_booking_users",
        "book_instrument",
        {**_ROOM, "date": "2026-05-19", "co_user_ids": ["U-1102", "U-1140"]},
    ),
    ("coworking_desk_decline", "reserve_desk", {"member_id": "M", "date": "d", "zone": "quiet"}),
    ("boat_charter_decline", "get_tide_times", {"date": "2026-05-01"}),
    ("catering_cost_centre_format", "place_catering_order", {**_LUNCH, "cost_centre": "MK-0310"}),
    (
        "catering_cost_centre_format",
        "place_catering_order",
        {**_LUNCH, "cost_centre": "MK0310", "event_date": "2026-10-09"},
    ),
    ("tyre_fitting_size_format", "book_fitting", {**_FIT, "tyre_size": "205/55 R16"}),
    ("tyre_fitting_size_format", "book_fitting", {**_FIT, "tyre_size": "205/55R16", "quantity": 4}),
    (
        "vaccine_excursion_log",
        "log_excursion",
        {**_EXCURSION, "affected_lots": [{"lot_number": "FK4471", "doses": 60}]},
    ),
    ("vaccine_excursion_log", "log_excursion", {**_EXCURSION, "quarantine_stock": False}),
    (
        "vaccine_excursion_log",
        "log_excursion",
        {**_EXCURSION, "excursion": {**_EXCURSION["excursion"], "start": "2026-07-08T13:40:00"}},
    ),
    ("removals_quote_request", "request_removal_quote", {**_MOVE, "services": ["packing"]}),
    (
        "removals_quote_request",
        "request_removal_quote",
        {**_MOVE, "origin": {"postcode": "E2 8DP", "floor": 3, "lift": True}},
    ),
    ("removals_quote_request", "request_removal_quote", {**_MOVE, "bedrooms": 3}),
    ("taxi_job_handover", "reassign_job", {"job_id": "JB-70958", "driver_id": "DRV-305"}),
    ("taxi_job_handover", "reassign_job", {"job_id": "JB-70931", "driver_id": "214"}),
    ("hall_hire_enquiry", "answer_enquiry", {**_HALL, "hire_cost_gbp": 112}),
    ("hall_hire_enquiry", "answer_enquiry", {**_HALL, "available": False}),
]


@pytest.mark.parametrize(
    ("name", "tool", "args"), WRONG, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(WRONG)]
)
def test_a_wrong_value_fails_validation(name: str, tool: str, args: dict[str, Any]) -> None:
    assert not BY_NAME[name].check(tool, args)


def test_every_heldout2_scenario_has_a_wrong_value_listed() -> None:
    assert {name for name, _, _ in WRONG} == {s.name for s in heldout2.SCENARIOS}
