"""Listing entries told apart by a bare number the request writes ("the
740") and by what a sentence says stays as it is (entries.py). A made-up
kiln studio's listings; pure logic."""

from __future__ import annotations

from forge_core.guardrails.entries import _kept_aside, bare_numbers, described

FIRINGS = (
    "Firings this month: fx_Qa71 stoneware, 2031-03-04, 740 kg, awaiting unload; "
    "fx_Qa72 raku, 2031-03-04, 120 kg, unloaded; fx_Qa73 stoneware, 2031-02-25, 655 kg, "
    "unloaded."
)
IDS = ["fx_Qa71", "fx_Qa72", "fx_Qa73"]
HIRES = (
    "Bookings: hk_1 large gas kiln, 2031-05-11 to 2031-05-15; hk_2 glaze booth, "
    "2031-05-11; hk_3 small electric kiln, 2031-06-13."
)


def test_a_bare_number_picks_the_entry_that_writes_it() -> None:
    assert bare_numbers(FIRINGS) >= {"#740", "#120", "#655"}
    # Not a date's, an id's or a price's digits.
    assert bare_numbers("fx_Qa71 on 2031-03-04 for 12.50 GBP at 10:30") == set()
    said = ["The stoneware firing from last week went in as mine - the 740. Cancel it."]
    assert described(IDS, [FIRINGS], said, set()) == ["fx_Qa71"]
    # Without the number both stoneware firings are as good.
    unsaid = ["The stoneware firing went in as mine. Cancel it."]
    assert described(IDS, [FIRINGS], unsaid, set()) == ["fx_Qa71", "fx_Qa73"]


def test_what_a_sentence_keeps_is_not_the_entry_meant() -> None:
    request = (
        "I only need the large kiln Monday to Wednesday now, please shorten it. "
        "The glaze booth on Monday and the small kiln in June stay as they are."
    )
    # "kiln" is said of both kilns, so only the kept ones' own words count.
    assert _kept_aside([request]) == {"glaze", "booth", "small", "june"}
    assert described(["hk_1", "hk_2", "hk_3"], [HIRES], [request], set()) == ["hk_1"]
    keep = ["Cancel the raku firing. The stoneware one is mine, so leave that one."]
    assert "stonewar" in _kept_aside(keep) and "raku" not in _kept_aside(keep)
    assert described(IDS, [FIRINGS], keep, set()) == ["fx_Qa72"]
    # Nothing kept: nothing set aside.
    assert _kept_aside(["Shorten the large kiln to Wednesday."]) == set()


def test_a_thing_said_no_to_at_a_sentence_start_is_left_out() -> None:
    from forge_core.guardrails.entries import _excluded_words

    said = "Renew what's due this week? Not the sander though, it goes back tomorrow."
    assert "sander" in _excluded_words([said])
    # Inside a clause, "not the whole week" is about the booking, not a thing.
    assert _excluded_words(["I need it Monday to Wednesday, not the whole week."]) == set()


def test_a_stay_that_is_the_service_keeps_nothing_aside() -> None:
    # "stay" as what is booked, or in an offer's name, keeps nothing as it is.
    assert _kept_aside(["Could Rufus stay with you from Friday? Pip is staying home."]) == set()
    assert _kept_aside(["Long Stay is fine, it's the cheapest."]) == set()
    assert _kept_aside(["Ship Tuesday's crates - Monday's stay as they are."]) == {"monday"}
