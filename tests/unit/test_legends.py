"""Codes a description defines take the meaning the request names
(guardrails/legends.py). Invented tools only."""

from __future__ import annotations

from forge_core.guardrails import Preferred, TurnFacts
from forge_core.guardrails.legends import LegendCodes, legend, named_codes
from forge_core.guardrails.registry import preferred_values
from forge_core.workflow import ToolSpec, Workflow

CLASSES = ToolSpec(
    "list_class_sessions",
    "Upcoming sessions of a class (B1 = Beginners One, B2, ADV = Advanced Pottery).",
    {
        "type": "object",
        "properties": {"class_code": {"type": "string"}},
        "required": ["class_code"],
    },
)
SHIP = ToolSpec(
    "quote_shipping",
    "Quote a parcel",
    {
        "type": "object",
        "properties": {
            "tariff": {
                "type": "string",
                "description": "Tariff (ST = standard, XC = express courier)",
            },
            "note": {"type": "string", "description": "Free note (ST = standard, XC = express)"},
            "postcode": {"type": "string"},
        },
    },
)


def test_a_legend_maps_codes_to_meanings_in_either_order() -> None:
    assert legend(CLASSES.description) == {"B1": "Beginners One", "ADV": "Advanced Pottery"}
    assert legend("Level, one of Foundation (FND), Intermediate (INT)") == {
        "FND": "foundation",
        "INT": "intermediate",
    }
    assert legend("Region (NW: North West; SE: South East)") == {
        "NW": "North West",
        "SE": "South East",
    }
    # A format, a single code, or plain options define no codes.
    assert legend("Date as YYYY-MM-DD, e.g. 2026-01-02") == {}
    assert legend("Use ST = standard unless told otherwise") == {}
    assert legend("Size: S, M or L") == {}


def test_the_request_names_a_code_by_its_meaning_or_the_code() -> None:
    codes = legend(CLASSES.description)
    assert named_codes(codes, ["Any space on Beginners One in May?"]) == ["B1"]
    assert named_codes(codes, ["Is ADV running?"]) == ["ADV"]
    # Its words in any order, in one clause.
    assert named_codes(codes, ["The pottery class, advanced level, if it runs."]) == []
    assert named_codes(codes, ["Is the advanced level pottery class running?"]) == ["ADV"]
    assert named_codes(codes, ["What classes do you run?"]) == []


def _preferred(tool: ToolSpec, request: str) -> Preferred:
    out = Preferred()
    facts = TurnFacts(workflow=Workflow(name="wf", tools=[tool]), requests=[request], results=[])
    LegendCodes().prefer(facts, out)
    return out


def test_a_parameter_takes_the_code_the_request_means() -> None:
    got = _preferred(CLASSES, "Two places on beginners one please, my mobile is 07700 900111.")
    assert got.values == {"list_class_sessions.class_code": ["B1"]}
    # The parameter's own description, not a prose one's.
    ship = _preferred(SHIP, "Send it express courier to LS1 4AP.")
    assert ship.values == {"quote_shipping.tariff": ["XC"]}
    # Nothing named, or every code named: left alone.
    assert _preferred(CLASSES, "When do classes start?").values == {}
    both = "Beginners One or Advanced Pottery, whichever is sooner."
    assert _preferred(CLASSES, both).values == {}


def test_the_registry_runs_it() -> None:
    facts = TurnFacts(
        workflow=Workflow(name="wf", tools=[CLASSES]),
        requests=["Book me onto Advanced Pottery."],
        results=[],
    )
    got = preferred_values(facts)
    assert got.values["list_class_sessions.class_code"] == ["ADV"]
    assert got.reasons["list_class_sessions.class_code"] == "legend_codes"
