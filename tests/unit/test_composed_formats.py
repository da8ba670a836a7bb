"""Formats an error spells out part by part (forge_core/guardrails/
composed_formats.py), on invented errors: no model is needed to compose
the value the directive describes from the user's numbers."""

from __future__ import annotations

from forge_core.guardrails import FailedValue, TurnFacts
from forge_core.guardrails.composed_formats import composed, parts_of
from forge_core.guardrails.registry import preferred_values
from forge_core.workflow import ToolSpec, Workflow

YEAR = 2031


def test_year_literal_and_a_padded_number_joined_by_dashes() -> None:
    error = (
        "ref '88' is not valid: write the year, 'LIC' and the licence number padded to 5 digits, "
        "joined by dashes"
    )
    assert composed("88", error, ["Renew licence LIC 88 from 2030 please."], YEAR) == [
        "2030-LIC-00088"
    ]
    # No year written: today's.
    assert composed("88", error, ["Renew licence 88."], YEAR) == ["2031-LIC-00088"]


def test_separators_and_capitals_named_in_words_between_the_users_numbers() -> None:
    error = (
        "size '31 10 15' rejected: give the height, a slash, the width, then R and the rim, "
        "no spaces"
    )
    request = ["Plate TX44 ABC needs new tyres, size 31 10 15."]
    # The failed value has the three numbers.
    assert composed("31 10 15", error, request, YEAR) == ["31/10R15"]
    # A fragment: the run of three numbers the request writes together.
    assert composed("31", error, request, YEAR) == ["31/10R15"]


def test_a_directive_with_no_parts_to_compose_composes_nothing() -> None:
    assert parts_of("code '7' rejected: 8 digits, no dashes") is None
    assert parts_of("iban 'x' is not valid: capital letters, no spaces, country code first") is None
    # Numbers the parts cannot take (two where one is asked for): nothing.
    error = "ref '1' rejected: the year, 'X' and the number, joined by dashes"
    assert composed("1 2", error, ["1 2 and 3"], YEAR) == []


def test_the_composed_value_leads_the_retry() -> None:
    spec = ToolSpec(
        "renew_licence",
        "Renew a licence",
        {"type": "object", "properties": {"ref": {"type": "string"}}, "required": ["ref"]},
    )
    wf = Workflow(
        "wf", [spec], terminal_tools=["renew_licence"], system_prompt="Today is 2031-01-05."
    )
    error = (
        "ref '88' is not valid: write the year, 'LIC' and the number padded to 5 digits, "
        "joined by dashes"
    )
    facts = TurnFacts(
        wf,
        ["Renew licence LIC 88 please."],
        [],
        [FailedValue("renew_licence", {"ref": "88"}, error)],
    )
    assert preferred_values(facts).values["renew_licence.ref"][0] == "2031-LIC-00088"


def test_a_wrapped_error_and_a_correction_carried_to_the_next_tool() -> None:
    error = (
        "renew_licence failed: ref '88' is not valid: write the year, 'LIC' and the number "
        "padded to 5 digits, joined by dashes"
    )
    # The failed value quoted in the wrapper is no literal of the format.
    assert composed("88", error, ["Licence 88 of 2030."], YEAR) == ["2030-LIC-00088"]
    props = {"type": "object", "properties": {"ref": {"type": "string"}}, "required": ["ref"]}
    check = ToolSpec("check_licence", "Check a licence", props)
    renew = ToolSpec("renew_licence", "Renew a licence", props)
    wf = Workflow("wf", [check, renew], terminal_tools=["renew_licence"])
    failed = FailedValue("check_licence", {"ref": "88"}, "ref '88' is not valid: LIC-00088")
    facts = TurnFacts(
        wf,
        ["Renew licence 88."],
        [("check_licence", "valid")],
        [failed],
        [("check_licence", {"ref": "LIC-00088"})],
    )
    # The value the error corrected goes to the same parameter of the next tool.
    assert preferred_values(facts).values["renew_licence.ref"] == ["LIC-00088"]
