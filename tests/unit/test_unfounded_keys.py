"""Optional keys whose value nobody wrote are left out of the turn's tool
schema (forge_core/guardrails/unfounded_keys.py).

Pure logic on a hand-made booking form (a van hire): no model is needed to
say which keys the conversation can fill. Each test failed before the rule.
"""

from __future__ import annotations

from typing import Any

from forge_core.guardrails.unfounded_keys import founded, without_unfounded
from forge_core.workflow import ToolSpec

FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "hire_date": {"type": "string", "format": "date"},
        "contact": {
            "type": "object",
            "properties": {
                "email": {"type": "string", "format": "email"},
                "sms_number": {"type": "string"},
                "licence_ref": {"type": "string", "pattern": "^DVL-[0-9]{6}$"},
                "notes": {"type": "string"},
            },
            "required": ["email"],
        },
        "depot_code": {"type": "string", "pattern": "^[A-Z]{3}[0-9]$"},
        "start_time": {"type": "string", "pattern": "^[0-2][0-9]:[0-5][0-9]$"},
    },
    "required": ["hire_date", "contact"],
}


def _keys(schema: dict[str, Any]) -> set[str]:
    return set(schema["properties"]) | set(schema["properties"]["contact"]["properties"])


def test_keys_no_text_can_fill_are_left_out() -> None:
    tool = ToolSpec("book_van", "Book a van", FORM)
    texts = ["Book me the long van for next Friday from half past eight; I'm ana@vanmail.example."]
    narrowed = without_unfounded(tool, texts)
    # No phone, no licence reference, no depot code written: not offered.
    assert _keys(narrowed.parameters) == {"hire_date", "contact", "email", "notes", "start_time"}
    # The caller's tool is untouched.
    assert "sms_number" in tool.parameters["properties"]["contact"]["properties"]


def test_keys_the_conversation_can_fill_stay() -> None:
    tool = ToolSpec("book_van", "Book a van", FORM)
    texts = [
        "Text me on 07700 900417, licence DVL-204518.",
        "Depots: LDN4 open, MAN2 closed.",
    ]
    assert without_unfounded(tool, texts) is tool


def test_required_keys_and_min_properties_stay() -> None:
    schema = {
        "type": "object",
        "properties": {
            "phone": {"type": "string"},
            "email": {"type": "string", "format": "email"},
        },
        "minProperties": 1,
    }
    tool = ToolSpec("notify", "Notify someone", schema)
    # One key must stay for minProperties: the first unfounded one goes only.
    kept = without_unfounded(tool, ["no contact given"]).parameters["properties"]
    assert len(kept) == 1
    assert founded("email", {"type": "string", "format": "email"}, ["a@b.example"])
    assert not founded("email", {"type": "string", "format": "email"}, ["none here"])
