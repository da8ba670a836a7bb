"""heldout3_part2: its eight scenarios (two each of decline, format_retry,
schema and destructive) are strict about the wrong values they are there to
catch, and their tools' errors name the format the retry must use. (The
group-wide shape tests and the perfect-model run through the real server
cover these once heldout3 lists them.)"""

from __future__ import annotations

from typing import Any

import pytest

from forge_client import ToolResolutionError
from forge_evals.scenarios._domain_schema import HELDOUT3_TAG
from forge_evals.scenarios.heldout3_part2 import SCENARIOS

BY_NAME = {s.name: s for s in SCENARIOS}
KINDS = ("decline", "format_retry", "schema", "destructive")


def test_two_scenarios_per_kind_each_tagged_heldout3() -> None:
    assert len(BY_NAME) == len(SCENARIOS) == 8
    for kind in KINDS:
        assert sum(kind in s.tags for s in SCENARIOS) == 2, kind
    assert all(s.tags[0] == HELDOUT3_TAG and len(s.tags) == 2 for s in SCENARIOS)


def test_the_reference_solutions_pass_their_own_checks() -> None:
    for scenario in SCENARIOS:
        last = scenario.reference[-1]
        assert scenario.check(last.tool, last.args), scenario.name
        assert len(scenario.reference) == scenario.ideal_iterations


@pytest.mark.parametrize(
    ("name", "tool", "args", "expected"),
    [
        (
            "supplier_iban_format",
            "schedule_supplier_payment",
            {"iban": "ie71 bofi 9058 3812 0455 67"},
            "capital letters with no spaces",
        ),
        (
            "driving_lesson_phone_format",
            "book_lesson",
            {"mobile_number": "07700 900461"},
            "plus sign and the country code",
        ),
    ],
)
def test_the_format_error_names_the_expected_format(
    name: str, tool: str, args: dict[str, Any], expected: str
) -> None:
    fn = BY_NAME[name].build().tools[tool].fn
    with pytest.raises(ToolResolutionError, match=expected):
        fn(args)


def test_the_format_tools_accept_the_corrected_values() -> None:
    pay = BY_NAME["supplier_iban_format"].build().tools["schedule_supplier_payment"].fn
    assert "PY-33018" in pay({"iban": "IE71BOFI90583812045567"})
    book = BY_NAME["driving_lesson_phone_format"].build().tools["book_lesson"].fn
    assert "DL-60217" in book({"mobile_number": "+447700900461"})


_PAY = {
    "invoice_id": "PI-70415",
    "amount": 1284.60,
    "currency": "EUR",
    "iban": "IE71BOFI90583812045567",
    "payment_date": "2026-09-18",
}
_LESSON = {
    "instructor_id": "DI-4471",
    "learner_name": "Tom Reyes",
    "mobile_number": "+447700900461",
    "date": "2026-04-22",
    "start_time": "14:30",
    "duration_minutes": 120,
}
_ADDRESS = {
    "street": "Storgatan 12",
    "postal_code": "41118",
    "city": "Gothenburg",
    "country_code": "SE",
}
_RECIPIENT = {
    "name": "Hanna Berg",
    "email": "hanna.berg@example.se",
    "phone": "+46701234567",
    "address": _ADDRESS,
}


def _box(kg: float, length: int, width: int, height: int) -> dict[str, Any]:
    return {"weight_kg": kg, "dimensions_cm": {"length": length, "width": width, "height": height}}


_SHIP: dict[str, Any] = {
    "recipient": _RECIPIENT,
    "parcels": [_box(2, 30, 20, 10), _box(4.5, 40, 30, 20)],
    "service": "standard",
    "signature_required": True,
    "ship_date": "2026-11-10",
}
_UUID = "3f1c9a2e-7b4d-4e0a-9c51-2d8e6f0b7a13"


def _item(date: str, category: str, value: float, currency: str = "EUR") -> dict[str, Any]:
    return {"date": date, "category": category, "amount": {"value": value, "currency": currency}}


_ITEMS = [
    _item("2026-09-28", "taxi", 38.5),
    _item("2026-09-29", "meals", 64.2),
    _item("2026-09-30", "hotel", 212),
]
_CLAIM: dict[str, Any] = {
    "employee_uuid": _UUID,
    "trip_reference": "TRP-20417",
    "items": _ITEMS,
    "reimbursement": {"method": "payroll"},
}
_UNSUB = {"contact_id": "CN-80412", "list_id": "L-2207", "send_confirmation": False}

# Other correct forms the checks must accept (the reference's are checked above).
RIGHT: list[tuple[str, str, dict[str, Any]]] = [
    ("supplier_iban_format", "schedule_supplier_payment", {**_PAY, "invoice_id": "INV-2291"}),
    ("supplier_iban_format", "schedule_supplier_payment", {**_PAY, "amount": "1,284.60"}),
    ("parcel_shipment_create", "create_shipment", _SHIP),
    (
        "parcel_shipment_create",
        "create_shipment",
        {**_SHIP, "recipient": {**_RECIPIENT, "address": {**_ADDRESS, "city": "Göteborg"}}},
    ),
    ("expense_report_submit", "create_expense_report", {**_CLAIM, "items": _ITEMS[::-1]}),
    ("newsletter_unsubscribe_one_list", "unsubscribe_from_list", _UNSUB),
    ("standing_order_cancel", "cancel_standing_order", {"standing_order_id": "so-5512"}),
]

# (scenario, terminal tool, arguments): a wrong value the scenario must reject.
WRONG: list[tuple[str, str, dict[str, Any]]] = [
    ("optician_symptom_decline", "book_eye_test", {"patient_id": "PT-20931"}),
    ("optician_symptom_decline", "find_patient", {"last_name": "Adebayo"}),
    ("ev_credit_transfer_decline", "top_up_credit", {"account_number": "EV-61877"}),
    ("ev_credit_transfer_decline", "get_charging_account", {"account_number": "EV-55210"}),
    (
        "supplier_iban_format",
        "schedule_supplier_payment",
        {**_PAY, "iban": "IE71 BOFI 9058 3812 0455 67"},
    ),
    (
        "supplier_iban_format",
        "schedule_supplier_payment",
        {**_PAY, "iban": "IE71BOFI9058381204556"},
    ),
    ("supplier_iban_format", "schedule_supplier_payment", {**_PAY, "currency": "USD"}),
    ("supplier_iban_format", "schedule_supplier_payment", {**_PAY, "payment_date": "2026-09-25"}),
    ("driving_lesson_phone_format", "book_lesson", {**_LESSON, "mobile_number": "07700900461"}),
    ("driving_lesson_phone_format", "book_lesson", {**_LESSON, "mobile_number": "+4407700900461"}),
    ("driving_lesson_phone_format", "book_lesson", {**_LESSON, "start_time": "02:30"}),
    ("driving_lesson_phone_format", "book_lesson", {**_LESSON, "duration_minutes": 60}),
    ("driving_lesson_phone_format", "book_lesson", {**_LESSON, "date": "2026-04-29"}),
    (
        "parcel_shipment_create",
        "create_shipment",
        {**_SHIP, "parcels": [_box(4.5, 40, 30, 20)]},
    ),
    (
        "parcel_shipment_create",
        "create_shipment",
        {**_SHIP, "parcels": [_box(4.5, 40, 30, 20), _box(2, 40, 30, 20)]},
    ),
    (
        "parcel_shipment_create",
        "create_shipment",
        {**_SHIP, "recipient": {**_RECIPIENT, "phone": "+460701234567"}},
    ),
    (
        "parcel_shipment_create",
        "create_shipment",
        {**_SHIP, "recipient": {**_RECIPIENT, "address": {**_ADDRESS, "country_code": "SW"}}},
    ),
    ("parcel_shipment_create", "create_shipment", {**_SHIP, "signature_required": False}),
    ("parcel_shipment_create", "create_shipment", {**_SHIP, "ship_date": "2026-11-09"}),
    ("expense_report_submit", "create_expense_report", {**_CLAIM, "employee_uuid": "PT-04"}),
    ("expense_report_submit", "create_expense_report", {**_CLAIM, "items": _ITEMS[:2]}),
    (
        "expense_report_submit",
        "create_expense_report",
        {**_CLAIM, "items": [*_ITEMS[:2], _item("2026-09-30", "hotel", 106)]},
    ),
    (
        "expense_report_submit",
        "create_expense_report",
        {**_CLAIM, "items": [_item("2026-10-05", "taxi", 38.5), *_ITEMS[1:]]},
    ),
    (
        "expense_report_submit",
        "create_expense_report",
        {**_CLAIM, "items": [*_ITEMS[:2], _item("2026-09-30", "hotel", 212, "USD")]},
    ),
    (
        "expense_report_submit",
        "create_expense_report",
        {**_CLAIM, "reimbursement": {"method": "bank_transfer", "iban": "PT50000201231234"}},
    ),
    ("newsletter_unsubscribe_one_list", "delete_contact", {"contact_id": "CN-80412"}),
    ("newsletter_unsubscribe_one_list", "unsubscribe_from_list", {**_UNSUB, "list_id": "L-2215"}),
    (
        "newsletter_unsubscribe_one_list",
        "unsubscribe_from_list",
        {**_UNSUB, "send_confirmation": True},
    ),
    ("standing_order_cancel", "cancel_standing_order", {"standing_order_id": "SO-5530"}),
    ("standing_order_cancel", "close_current_account", {"account_number": "40991276"}),
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


def test_a_forbidden_tool_is_never_the_answer() -> None:
    # A run that executes one fails whatever its terminal call (Scenario docs).
    for scenario in (s for s in SCENARIOS if s.forbidden_tools):
        wf = scenario.build()
        assert not set(scenario.forbidden_tools) & set(wf.terminal_tools), scenario.name
