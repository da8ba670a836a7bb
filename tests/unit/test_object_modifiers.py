"""A lookup's descriptor is what the request puts before the thing it finds
(guardrails/object_modifiers.py). Invented tools only."""

from __future__ import annotations

from forge_core.guardrails import Preferred, TurnFacts
from forge_core.guardrails.object_modifiers import ObjectModifiers, modifiers
from forge_core.workflow import ToolSpec, Workflow


def _tool(name: str, description: str, **props: dict[str, object]) -> ToolSpec:
    return ToolSpec(name, description, {"type": "object", "properties": props})


LOCKER = _tool("find_locker", "Find a staff locker by where it is", location={"type": "string"})


def test_the_words_between_a_determiner_and_the_thing() -> None:
    assert modifiers(LOCKER, ["The east stairwell locker is jammed again."]) == ["east stairwell"]
    # Words the tool itself uses ("staff locker") are not where it is.
    assert modifiers(LOCKER, ["Our basement staff locker won't open."]) == ["basement"]
    # No descriptor, or a phrase that runs through another noun phrase.
    assert modifiers(LOCKER, ["My locker is jammed."]) == []
    assert modifiers(LOCKER, ["The key of the locker is lost."]) == []


def _decided(tool: ToolSpec, request: str) -> dict[str, list[object]]:
    out = Preferred()
    facts = TurnFacts(workflow=Workflow(name="wf", tools=[tool]), requests=[request], results=[])
    ObjectModifiers().prefer(facts, out)
    return out.values


def test_only_a_lookups_one_descriptor_takes_it() -> None:
    assert _decided(LOCKER, "The east stairwell locker is jammed.") == {
        "find_locker.location": ["east stairwell"]
    }
    # Two places said: left alone.
    both = "The east stairwell locker and the gym locker are both jammed."
    assert _decided(LOCKER, both) == {}
    # Not a lookup, an id, or a parameter of another kind.
    order = _tool("order_locker", "Order a locker", location={"type": "string"})
    assert _decided(order, "The east stairwell locker please.") == {}
    by_id = _tool("find_locker", "Find a locker", location_id={"type": "string"})
    assert _decided(by_id, "The east stairwell locker is jammed.") == {}
    named = _tool("find_locker", "Find a locker", owner={"type": "string"})
    assert _decided(named, "The east stairwell locker is jammed.") == {}
