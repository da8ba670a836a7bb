"""A decline's reason is what the decline tool's description says it
declines (forge_core/guardrails/decline_reasons.py). A made-up parcel desk;
pure logic."""

from __future__ import annotations

from forge_core.guardrails import TurnFacts
from forge_core.guardrails.decline_reasons import described_reason
from forge_core.guardrails.registry import preferred_values
from forge_core.workflow import ToolSpec, Workflow


def test_the_reason_is_the_descriptions_object_without_the_verb_and_tail() -> None:
    said = described_reason("Decline a request that is not about parcels, with a reason")
    assert said == "a request that is not about parcels"
    said = described_reason("Politely refuse anything outside kennel bookings. Ends the task.")
    assert said == "anything outside kennel bookings"
    # A description that says nothing beyond the verb gives no reason.
    assert described_reason("Decline the request.") is None
    assert described_reason("Track a parcel by its number") is None


def test_a_decline_tools_reason_is_preferred_and_an_action_tools_not() -> None:
    track = ToolSpec(
        "track_parcel",
        "Track a parcel by its tracking number",
        {"type": "object", "properties": {"tracking": {"type": "string"}}},
    )
    decline = ToolSpec(
        "decline",
        "Decline a request that is not about parcels, with a reason",
        {"type": "object", "properties": {"reason": {"type": "string"}}},
    )
    wf = Workflow("wf", [track, decline], terminal_tools=["decline"])
    preferred = preferred_values(TurnFacts(wf, ["What is 17 times 3?"], [], [], [])).values
    assert preferred["decline.reason"] == ["a request that is not about parcels"]
    assert "track_parcel.tracking" not in preferred
