"""What a request says of a listing's entries beyond their words: periods
of the calendar, bounds on the clock and on amounts, what it says no to,
and a listing's ids with a part letter (forge_core/guardrails/
entry_filters.py, entries.py, listings.py).

Pure logic on hand-made listings (a choir, a darts league, a bike shed, a
seed library): no model is needed to say which entries a list takes. Each
test failed before its rule was written.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from forge_core.guardrails import TurnFacts
from forge_core.guardrails.entries import described
from forge_core.guardrails.entry_filters import ListReading, amount_bounds, said_no_to, withholds
from forge_core.guardrails.listings import listing
from forge_core.guardrails.registry import preferred_values
from forge_core.workflow import ToolSpec, Workflow

STR: dict[str, Any] = {"type": "string"}
# A list's items, read with no date for today.
LIST = ListReading(None, refusals=True)
IDS: dict[str, Any] = {"type": "array", "items": {"type": "string"}}

CHOIR = """Robes on loan to the alto section:
- RB-501: Wren Ashby, due Thu 2031-05-15
- RB-502: Tamsin Cole, due Tue 2031-05-20
- RB-503: Ivo Marsh, due Sat 2031-05-17
- RB-504: Della Fenn, OVERDUE since 2031-05-02"""


def _tool(name: str, description: str, **props: dict[str, Any]) -> ToolSpec:
    return ToolSpec(
        name, description, {"type": "object", "properties": props, "required": list(props)}
    )


def _listed(request: str, result: str, tool_name: str, today: str = "Monday 2031-05-12") -> Any:
    lookup = _tool("list_section_items", "List a section's items", section=STR)
    act = _tool(tool_name, "Act on several items", item_ids=IDS)
    wf = Workflow(
        "wf", [lookup, act], terminal_tools=[tool_name], system_prompt=f"Today is {today}."
    )
    got = preferred_values(TurnFacts(wf, [request], [("list_section_items", result)], []))
    key = f"{tool_name}.item_ids"
    return got.values.get(key, [None])[0] if key in got.values else got.items.get(key)


def test_this_week_keeps_the_entries_dated_in_it() -> None:
    request = "Please extend every alto robe that is due back this week."
    # Told apart from the others, the list is exactly those entries (a value, not a menu).
    assert _listed(request, CHOIR, "extend_loans") == ["RB-501", "RB-503"]


def test_next_week_and_a_named_month() -> None:
    values = ["RB-501", "RB-502", "RB-503", "RB-504"]
    today = date(2031, 5, 12)
    reading = ListReading(today, refusals=True)
    got = described(values, [CHOIR], ["Remind those due next week."], set(), (), reading)
    assert got == ["RB-502"]
    # Read as one id, not a list's items: no period narrows it.
    assert "RB-501" in described(values, [CHOIR], ["Remind those due next week."], set())
    fixtures = "DL-1 Fri 2031-09-26 19:30\nDL-2 Fri 2031-10-03 19:30\nDL-3 Fri 2031-10-10 19:30"
    request = ["Mark me absent for the October ones; the September one stays as it is."]
    got = described(["DL-1", "DL-2", "DL-3"], [fixtures], request, set(), (), LIST)
    assert got == ["DL-2", "DL-3"]


def test_a_bound_on_the_clock() -> None:
    fixtures = "DL-1 Sat 2031-10-04 11:00\nDL-2 Sat 2031-10-11 15:00\nDL-3 Sat 2031-10-18 09:45"
    request = ["Mark me absent for the matches that start before noon."]
    assert described(["DL-1", "DL-2", "DL-3"], [fixtures], request, set(), (), LIST) == [
        "DL-1",
        "DL-3",
    ]
    request = ["Only the ones after 2pm."]
    assert described(["DL-1", "DL-2", "DL-3"], [fixtures], request, set(), (), LIST) == ["DL-2"]


def test_a_bound_on_an_amount() -> None:
    # (upper, number, family, leaves its own number out)
    assert amount_bounds(["nothing over thirty quid, mind"]) == [(True, 30.0, "gbp", False)]
    assert amount_bounds(["at least 20 GBP each"]) == [(False, 20.0, "gbp", False)]
    assert amount_bounds(["under twenty pounds a head"]) == [(True, 20.0, "gbp", True)]
    tours = "- VT-1: cellar tour, 18.00 GBP\n- VT-2: cellar tour, 20.00 GBP"
    under = ["every cellar tour that costs under twenty pounds a head"]
    assert described(["VT-1", "VT-2"], [tours], under, set(), (), LIST) == ["VT-1"]
    most = ["every cellar tour that costs at most twenty pounds"]
    assert described(["VT-1", "VT-2"], [tours], most, set(), (), LIST) == ["VT-1", "VT-2"]
    stock = (
        "- SD-11 runner beans, 4.50 GBP\n- SD-12 heritage tomato, 12.00 GBP\n- SD-13 kale, 3.20 GBP"
    )
    request = ["Hold any of these for me, but nothing over a tenner... well, under 10 GBP."]
    got = described(["SD-11", "SD-12", "SD-13"], [stock], request, set(), (), LIST)
    assert got == ["SD-11", "SD-13"]


def test_what_the_request_says_no_to_leaves_the_list() -> None:
    shed = """- BK-07 (north shed): fee UNSETTLED
- BK-09 (north shed): fee SETTLED 2031-04-02
- BK-12 (north shed): fee UNSETTLED
- BK-15 (north shed): fee WAIVED (volunteer)"""
    request = (
        "Send a nudge to everyone in the north shed who still hasn't settled their fee, "
        "and obviously not anyone whose fee was waived."
    )
    assert _listed(request, shed, "send_fee_nudges") == ["BK-07", "BK-12"]


def test_a_name_a_negation_points_back_to_leaves_the_list() -> None:
    register = """- CH-31 Rowan Pike: READY
- CH-32 Esme Lord: READY
- CH-33 Jude Amos: NOT YET"""
    request = (
        "Enter the ready ones for the exam. Rowan's dad already booked his, so don't add him twice."
    )
    assert "rowan" in said_no_to([request])
    assert _listed(request, register, "enter_candidates") == ["CH-32"]


def test_a_word_said_outside_the_negation_is_no_refusal() -> None:
    request = ["Just the Harvest Day poster, not the Open Day one."]
    assert "open" in said_no_to(request) and "day" not in said_no_to(request)
    # "not before the evening" is a bound, not a refusal.
    assert not said_no_to(["Any slot, but not before the evening."])


def test_a_tool_that_takes_away_reads_no_want_as_its_target() -> None:
    assert withholds("unsubscribe_from_lists") and not withholds("send_fee_nudges")
    lists = "- NL-201 Tuesday bulletin\n- NL-202 Friday digest\n- NL-203 Events"
    request = "She doesn't want the Tuesday bulletin any more, please take her off it."
    assert _listed(request, lists, "unsubscribe_from_lists") == ["NL-201"]


def test_a_label_with_another_number_says_nothing_of_the_entry() -> None:
    waiting = """Waiting list for Level 2 (Tuesdays):
- WT-81 Ada Lowe, waiting
- WT-82 Nils Berg, moved to Level 3, no longer waiting
- WT-83 Oona Park, waiting"""
    request = "Two places came free in the Level 2 class; offer them to the waiting list."
    assert _listed(request, waiting, "offer_places") == ["WT-81", "WT-83"]


def test_ids_with_a_part_letter_are_one_listing() -> None:
    text = "PL-04 full plot; PL-07A half plot; PL-07B half plot; PL-11 full plot; shed key K7"
    assert listing(text, set()) == ["PL-04", "PL-07A", "PL-07B", "PL-11"]


def test_nothing_after_a_clock_time_in_words_is_an_upper_bound() -> None:
    classes = "CL-1 Sat 09:30 beginners\nCL-2 Sat 13:10 beginners\nCL-3 Sat 15:20 beginners"
    request = ["Every beginners class on Saturday, but nothing that starts after three o'clock."]
    got = described(["CL-1", "CL-2", "CL-3"], [classes], request, set(), (), LIST)
    assert got == ["CL-1", "CL-2"]


def test_a_range_that_does_not_hold_the_requests_number_leaves_the_list() -> None:
    classes = "- RC-1: juniors, ages 8-11\n- RC-2: juniors, ages 12-15\n- RC-3: juniors, ages 10-13"
    request = ["He's age 11 now; put him in every junior race he can run."]
    got = described(["RC-1", "RC-2", "RC-3"], [classes], request, set(), (), LIST)
    assert got == ["RC-1", "RC-3"]


def test_a_negation_in_the_sentence_that_names_the_period_keeps_the_period() -> None:
    rota = "- SH-1 Sat 2031-02-22 OPEN\n- SH-2 Sat 2031-03-01 OPEN\n- SH-3 Sun 2031-03-09 OPEN"
    request = ["Put me on every shift in March that nobody has taken yet."]
    got = described(["SH-1", "SH-2", "SH-3"], [rota], request, set(), (), LIST)
    assert got == ["SH-2", "SH-3"]
