"""How the request is read: whose name is the user's own, and what a
quote is (proper_names.own_names, grounding.extract_candidates)."""

from __future__ import annotations

from forge_core.guardrails.grounding import extract_candidates
from forge_core.guardrails.proper_names import own_names


def test_a_greeting_with_a_full_name_names_the_user() -> None:
    assert own_names(["Hi, Dana Kell on the Blue Heron, mooring B7."]) == {"Dana", "Kell"}
    assert own_names(["Hello, Ravi Menon here. My kiln slot"]) == {"Ravi", "Menon"}
    assert own_names(["Mo Farrant here, about my order."]) == {"Mo", "Farrant"}
    assert own_names(["Hi, Ada Lowe, member 4471."]) == {"Ada", "Lowe"}
    # Greeting someone else, or no name at all.
    assert own_names(["Hi Anna, can you book the Red Lion?"]) == set()
    assert own_names(["Hi, can you book the Red Lion for Friday?"]) == set()
    assert own_names(["New Street Station, please."]) == set()


def test_an_apostrophe_inside_a_word_quotes_nothing() -> None:
    text = "Hi, on the Heron's Rest, berth C14. Our tank's nearly full."
    assert extract_candidates([text]) == ["C14"]
    assert extract_candidates(["Use 'AB-1' or 'x y'."]) == ["AB-1", "x y"]


def test_irregular_plurals_and_contractions_name_no_other_word() -> None:
    from forge_core.guardrails.mentions import named_members
    from forge_core.guardrails.text import stem

    assert stem("knives") == stem("knife") and stem("children") == stem("child")
    members = ["chef_knife", "child_s", "child_m"]
    assert named_members(members, "twelve chef's knives") == ["chef_knife"]
    # "children's" is no child_s; the size said in words is (mentions.sized_member).
    assert named_members(members, "a children's medium") == ["child_m"]
    assert named_members(members, "the children's") == []


def test_articles_inside_a_phrase_still_name_the_member() -> None:
    from forge_core.guardrails.mentions import named_members

    package = ["photos", "photos_and_video", "none"]
    assert named_members(package, "We'd like the photos and the video too.") == ["photos_and_video"]
    assert named_members(["plan_a", "plan_b"], "Plan A please") == ["plan_a"]


def test_a_share_in_words_is_a_percentage() -> None:
    from forge_core.guardrails import Preferred, TurnFacts
    from forge_core.guardrails.quantities import Quantities, _fraction_words
    from forge_core.workflow import ToolSpec, Workflow

    assert _fraction_words("Happy to pay half up front.") == [50]
    assert _fraction_words("Three quarters now, please.") == [75]
    # Times and durations are no shares.
    for text in ("half past two", "half four", "a quarter to six", "half an hour"):
        assert _fraction_words(text) == [], text
    order = ToolSpec(
        "open_order",
        "Open an order",
        {"type": "object", "properties": {"deposit_percent": {"type": "integer"}}},
    )
    out = Preferred()
    said = ["I'll pay half up front."]
    Quantities().prefer(TurnFacts(Workflow(name="wf", tools=[order]), said, []), out)
    assert out.values["open_order.deposit_percent"] == [50]


def test_a_place_is_the_name_written_after_at_or_in() -> None:
    from forge_core.guardrails.proper_names import route_end

    names = ["Harbour Ringers", "St Anne", "Upwey"]
    said = ["The Harbour Ringers' visit to St Anne's at Upwey: is it confirmed?"]
    assert route_end("place", said, names) == ["Upwey"]
    assert route_end("town", ["Book the hall in Upwey."], names) == ["Upwey"]
    # Nothing written so: every name stays.
    assert route_end("place", ["Harbour Ringers and St Anne."], names) == names


def test_a_hyphened_lower_case_part_belongs_to_the_name() -> None:
    from forge_core.guardrails.proper_names import names_in

    assert "Oakfield Co-op" in names_in("Hi. The Oakfield Co-op van is here.")
    assert names_in("We are in Stoke-on-Trent today.") == ["Stoke-on-Trent"]
