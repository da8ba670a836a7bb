"""The heldout4 group's first half (heldout4, heldout4_listings) is strict
about the wrong values it is there to catch and accepts the other correct
forms; its tools answer as the scenarios need (the group-level checks for
heldout4 are in test_eval_heldout_scenarios; heldout4_part2's table in
test_eval_heldout4_part2)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from forge_client import ToolResolutionError
from forge_evals.scenarios import BY_NAME, heldout4, heldout4_part2

_PARK: dict[str, Any] = {
    "customer_id": "cus_R4t8Wm2Q",
    "offer_id": "ofr_5Wd7RbJ62s",
    "vehicle": {"registration": "KX19 TPV"},
}
_PHOTO = {"image_id": "img_51Vz2Hk8", "licence": "editorial_web"}
_OFFICE = {"start": "07:30", "end": "17:15", "target_celsius": 20.5}
_WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday"]
_HEAT: dict[str, Any] = {
    "zone_id": "ZN-04",
    "days": _WEEKDAYS,
    "periods": [_OFFICE],
    "preheat": False,
}
_MONEY = {
    "store_id": "HTM-0415",
    "currency": "EUR",
    "foreign_amount": 750,
    "collection_date": "2026-05-22",
    "buyback_guarantee": True,
    "sms_when_ready": False,
    "mobile": "07923 448106",
}
_LINE = {
    "line_id": "LN-88D4-20913",
    "verdict": "speed_below_minimum_guarantee",
    "download_mbps": 38.4,
    "packet_loss_percent": 2.5,
}
_TIER = {
    "membership_number": "AC-0048-2217",
    "current_tier": "silver",
    "tier_points_to_next_tier": 760,
    "award_miles_balance": 48215,
    "miles_expiring": 6300,
    "miles_expiry_date": "2026-03-31",
}
_MORNINGS = ["FX-20425", "FX-20437", "FX-20442"]
_AWAY_DAYS = {"player_id": "PL-3318", "reason": "family"}
_WAITING = ["WL-60418", "WL-60433", "WL-60452"]
_OFFERS = {"course_id": "SW-S3-1700", "reply_by": "2026-01-16"}


def _offer_ids(result: str) -> list[str]:
    return re.findall(r"ofr_[A-Za-z0-9]{10}", result)


def _long_stay_offer_of_another_week() -> str:
    search = BY_NAME["airport_parking_offer"].build().tools["search_parking_offers"].fn
    return _offer_ids(search(airport="BRS", drop_off="2026-07-11T05:00", pick_up="2026-07-17"))[2]


# (scenario, terminal tool, arguments): a wrong value the scenario must reject.
WRONG_HELDOUT4: list[tuple[str, str, dict[str, Any]]] = [
    ("airport_parking_offer", "create_parking_booking", {**_PARK, "offer_id": "ofr_2Lq9XzV71c"}),
    ("airport_parking_offer", "create_parking_booking", {**_PARK, "offer_id": "ofr_8Hn3KpT04m"}),
    ("airport_parking_offer", "create_parking_booking", {**_PARK, "offer_id": "srch_0c4E1aY9"}),
    (
        "airport_parking_offer",
        "create_parking_booking",
        {**_PARK, "offer_id": _long_stay_offer_of_another_week()},
    ),
    ("airport_parking_offer", "create_parking_booking", {**_PARK, "customer_id": "SPR-771203"}),
    ("airport_parking_offer", "create_parking_booking", {**_PARK, "customer_id": "cus_r4t8wm2q"}),
    (
        "airport_parking_offer",
        "create_parking_booking",
        {**_PARK, "vehicle": {"registration": "Skoda Octavia"}},
    ),
    ("stock_photo_next_page", "license_image", {**_PHOTO, "image_id": "img_40Tq7Lm2"}),
    ("stock_photo_next_page", "license_image", {**_PHOTO, "image_id": "img_51Vz3Jp4"}),
    (
        "stock_photo_next_page",
        "license_image",
        {**_PHOTO, "image_id": "Cg5saWdodGhvdXNlIGR1c2sQAxgD"},
    ),
    ("stock_photo_next_page", "license_image", {**_PHOTO, "image_id": "51Vz2Hk8"}),
    ("stock_photo_next_page", "license_image", {**_PHOTO, "licence": "editorial_all"}),
    ("thermostat_weekday_schedule", "set_heating_schedule", {**_HEAT, "zone_id": "ZN-01"}),
    (
        "thermostat_weekday_schedule",
        "set_heating_schedule",
        {**_HEAT, "periods": [{**_OFFICE, "end": "05:15"}]},
    ),
    (
        "thermostat_weekday_schedule",
        "set_heating_schedule",
        {**_HEAT, "periods": [{**_OFFICE, "start": "19:30"}]},
    ),
    (
        "thermostat_weekday_schedule",
        "set_heating_schedule",
        {**_HEAT, "periods": [{**_OFFICE, "target_celsius": 20}]},
    ),
    (
        "thermostat_weekday_schedule",
        "set_heating_schedule",
        {**_HEAT, "periods": [{**_OFFICE, "target_celsius": 21}]},
    ),
    (
        "thermostat_weekday_schedule",
        "set_heating_schedule",
        {**_HEAT, "days": [*_WEEKDAYS, "saturday", "sunday"]},
    ),
    ("thermostat_weekday_schedule", "set_heating_schedule", {**_HEAT, "days": _WEEKDAYS[:4]}),
    (
        "thermostat_weekday_schedule",
        "set_heating_schedule",
        {**_HEAT, "days": ["monday", *_WEEKDAYS[:4]]},
    ),
    ("thermostat_weekday_schedule", "set_heating_schedule", {**_HEAT, "preheat": True}),
    (
        "thermostat_weekday_schedule",
        "set_heating_schedule",
        {
            **_HEAT,
            "periods": [{**_OFFICE, "end": "12:00"}, {**_OFFICE, "start": "13:00"}],
        },
    ),
    ("travel_money_order", "place_currency_order", {**_MONEY, "foreign_amount": 655}),
    ("travel_money_order", "place_currency_order", {**_MONEY, "currency": "GBP"}),
    ("travel_money_order", "place_currency_order", {**_MONEY, "collection_date": "2026-05-23"}),
    ("travel_money_order", "place_currency_order", {**_MONEY, "store_id": "HTM-0412"}),
    ("travel_money_order", "place_currency_order", {**_MONEY, "buyback_guarantee": False}),
    ("travel_money_order", "place_currency_order", {**_MONEY, "sms_when_ready": True}),
    ("travel_money_order", "place_currency_order", {**_MONEY, "mobile": "07923 448160"}),
    ("broadband_line_test", "report_line_test", {**_LINE, "verdict": "line_fault"}),
    ("broadband_line_test", "report_line_test", {**_LINE, "verdict": "healthy"}),
    ("broadband_line_test", "report_line_test", {**_LINE, "download_mbps": 80}),
    ("broadband_line_test", "report_line_test", {**_LINE, "download_mbps": 55}),
    ("broadband_line_test", "report_line_test", {**_LINE, "download_mbps": 9.6}),
    ("broadband_line_test", "report_line_test", {**_LINE, "packet_loss_percent": 0.025}),
    ("airline_tier_progress", "report_tier_status", {**_TIER, "current_tier": "gold"}),
    ("airline_tier_progress", "report_tier_status", {**_TIER, "tier_points_to_next_tier": 1740}),
    ("airline_tier_progress", "report_tier_status", {**_TIER, "tier_points_to_next_tier": 2500}),
    ("airline_tier_progress", "report_tier_status", {**_TIER, "award_miles_balance": 41915}),
    (
        "airline_tier_progress",
        "report_tier_status",
        {**_TIER, "award_miles_balance": 6300, "miles_expiring": 48215},
    ),
    ("airline_tier_progress", "report_tier_status", {**_TIER, "miles_expiry_date": "2027-03-31"}),
    (
        "sunday_league_availability",
        "set_unavailability",
        {**_AWAY_DAYS, "fixture_ids": [*_MORNINGS, "FX-20431"]},
    ),
    (
        "sunday_league_availability",
        "set_unavailability",
        {**_AWAY_DAYS, "fixture_ids": [*_MORNINGS, "FX-20450"]},
    ),
    (
        "sunday_league_availability",
        "set_unavailability",
        {**_AWAY_DAYS, "fixture_ids": ["FX-20425", "FX-20442"]},
    ),
    (
        "sunday_league_availability",
        "set_unavailability",
        {**_AWAY_DAYS, "fixture_ids": [*_MORNINGS, "FX-20425"]},
    ),
    (
        "sunday_league_availability",
        "set_unavailability",
        {**_AWAY_DAYS, "fixture_ids": ["20425", "20437", "20442"]},
    ),
    (
        "sunday_league_availability",
        "set_unavailability",
        {**_AWAY_DAYS, "fixture_ids": _MORNINGS, "reason": "other"},
    ),
    (
        "sunday_league_availability",
        "set_unavailability",
        {**_AWAY_DAYS, "fixture_ids": _MORNINGS, "player_id": "PL-3381"},
    ),
    (
        "swim_waitlist_offers",
        "send_place_offers",
        {**_OFFERS, "waitlist_entry_ids": [*_WAITING, "WL-60425"]},
    ),
    (
        "swim_waitlist_offers",
        "send_place_offers",
        {**_OFFERS, "waitlist_entry_ids": [*_WAITING, "WL-60441"]},
    ),
    (
        "swim_waitlist_offers",
        "send_place_offers",
        {**_OFFERS, "waitlist_entry_ids": ["WL-60418", "WL-60425", "WL-60433", "WL-60441"]},
    ),
    (
        "swim_waitlist_offers",
        "send_place_offers",
        {**_OFFERS, "waitlist_entry_ids": _WAITING[:2]},
    ),
    (
        "swim_waitlist_offers",
        "send_place_offers",
        {**_OFFERS, "waitlist_entry_ids": _WAITING, "reply_by": "2026-01-23"},
    ),
    (
        "swim_waitlist_offers",
        "send_place_offers",
        {**_OFFERS, "waitlist_entry_ids": _WAITING, "course_id": "SW-S4-1730"},
    ),
]

# (scenario, terminal tool, arguments): another correct form the check must accept.
RIGHT_HELDOUT4: list[tuple[str, str, dict[str, Any]]] = [
    (
        "airport_parking_offer",
        "create_parking_booking",
        {**_PARK, "vehicle": {"registration": "KX19TPV", "description": "grey Skoda Octavia"}},
    ),
    (
        "thermostat_weekday_schedule",
        "set_heating_schedule",
        {**_HEAT, "days": _WEEKDAYS[::-1], "periods": [{**_OFFICE, "target_celsius": 20.50}]},
    ),
    (
        "thermostat_weekday_schedule",
        "set_heating_schedule",
        {
            **_HEAT,
            "periods": [{**_OFFICE, "start": "12:00"}, {**_OFFICE, "end": "12:00"}],
        },
    ),
    ("travel_money_order", "place_currency_order", {**_MONEY, "mobile": "+44 7923 448106"}),
    ("travel_money_order", "place_currency_order", {**_MONEY, "foreign_amount": 750.0}),
    ("airline_tier_progress", "report_tier_status", {**_TIER, "membership_number": "ac-0048-2217"}),
    (
        "sunday_league_availability",
        "set_unavailability",
        {**_AWAY_DAYS, "fixture_ids": _MORNINGS[::-1], "note": "daughter's swimming"},
    ),
    (
        "swim_waitlist_offers",
        "send_place_offers",
        {**_OFFERS, "waitlist_entry_ids": _WAITING[::-1]},
    ),
]


@pytest.mark.parametrize(
    ("name", "tool", "args"),
    WRONG_HELDOUT4,
    ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(WRONG_HELDOUT4)],
)
def test_a_wrong_heldout4_value_fails_validation(
    name: str, tool: str, args: dict[str, Any]
) -> None:
    assert not BY_NAME[name].check(tool, args)


@pytest.mark.parametrize(
    ("name", "tool", "args"),
    RIGHT_HELDOUT4,
    ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(RIGHT_HELDOUT4)],
)
def test_another_correct_heldout4_form_passes_validation(
    name: str, tool: str, args: dict[str, Any]
) -> None:
    assert BY_NAME[name].check(tool, args)


def test_every_heldout4_scenario_of_this_half_has_a_wrong_value_listed() -> None:
    own = {s.name for s in heldout4.SCENARIOS} - {s.name for s in heldout4_part2.SCENARIOS}
    assert len(own) == 8
    assert {name for name, _, _ in WRONG_HELDOUT4} == own


def test_the_parking_offers_belong_to_the_stay_searched() -> None:
    search = BY_NAME["airport_parking_offer"].build().tools["search_parking_offers"].fn
    asked = _offer_ids(search(airport="BRS", drop_off="2026-07-04T05:00", pick_up="2026-07-10"))
    assert asked[2] == _PARK["offer_id"]
    assert _long_stay_offer_of_another_week() not in asked
    with pytest.raises(ToolResolutionError, match="ISO 8601"):
        search(airport="Bristol", drop_off="Saturday 5am", pick_up="2026-07-10")


def test_the_dusk_photo_is_only_on_the_page_the_token_fetches() -> None:
    search = BY_NAME["stock_photo_next_page"].build().tools["search_images"].fn
    first = search(query="Ines Calder lighthouse at dusk")
    assert _PHOTO["image_id"] not in first
    token = re.search(r"next_page_token: (\S+)", first)
    assert token is not None
    assert _PHOTO["image_id"] in search(query="lighthouse", page_token=token.group(1))
    with pytest.raises(ToolResolutionError, match="page_token"):
        search(query="lighthouse", page_token="img_51Vz2Hk8")
