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
    # "children's" is no child_s.
    assert named_members(members, "a children's medium") == []
