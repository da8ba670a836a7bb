"""Listing entries by the availability a request asks for, by the number a
word names ("size 12"), and without a name the request says no to
(forge_core/guardrails/availability.py, entries.py, listings.py).

Pure logic on a hand-made listing of a (made-up) tool library's stock.
"""

from __future__ import annotations

from forge_core.guardrails.availability import AVAILABLE, GONE, wanted_state
from forge_core.guardrails.entries import described, labelled_numbers
from forge_core.guardrails.listings import listing

STOCK = """- TL-0101: cordless drill, size 2, available
- TL-0102: cordless drill, size 2, out on loan until 2027-02-01
- TL-0103: cordless drill, size 3, available
- TL-0104: Makita impact driver, size 2, available
- TL-0105: hammer drill, size 2, OUT OF STOCK, due 05-06"""
IDS = ["TL-0101", "TL-0102", "TL-0103", "TL-0104", "TL-0105"]


def test_the_request_asks_for_one_availability_or_none() -> None:
    assert wanted_state(["Every drill you have that's free this weekend."]) == AVAILABLE
    assert wanted_state(["Back-order each one you've run out of."]) == GONE
    # A negated clause flips what it names.
    assert wanted_state(["The ones you've run out of; nothing that's in stock."]) == GONE
    assert wanted_state(["Don't give me anything that's sold out."]) == AVAILABLE
    # Not one that negates something else, nor one far from the state.
    assert wanted_state(["I don't mind which drill, as long as it's free."]) == AVAILABLE
    assert wanted_state(["I don't mind which one that's free."]) == AVAILABLE
    assert wanted_state(["No rush at all for the ladder we talked about, any that's free."]) == (
        AVAILABLE
    )
    assert wanted_state(["Feel free to call, and a gluten-free cake."]) is None
    assert wanted_state(["Any drill in stock, or one that's sold out if needed."]) is None


def test_a_listing_keeps_the_entries_of_the_size_and_availability_asked_for() -> None:
    said = ["Lend me every cordless drill in size 2 that's free, no Makita please."]
    assert described(IDS, [STOCK], said, set()) == ["TL-0101"]
    gone = ["Put me down for each drill you've run out of."]
    assert described(IDS, [STOCK], gone, set()) == ["TL-0102", "TL-0105"]
    # Nothing said of availability: every entry stays.
    assert described(IDS, [STOCK], ["What could I borrow?"], set()) == IDS


def test_a_number_a_word_names_and_short_numbers_that_are_no_listing() -> None:
    assert labelled_numbers("a size 12 gown, deck no. 3 on 12 June") == {"size 12", "deck 3"}
    assert listing("a size 12 from 7 to Sunday 20 December, due 05-06 or 12-07", set()) == []
    assert listing(STOCK, set()) == IDS
