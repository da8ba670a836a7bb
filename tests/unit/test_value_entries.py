"""Value guardrails that read a listing's entries, codes the user wrote,
errors that direct a value's form, and quantities written as compounds or
ordinals (forge_core/guardrails/: entries, codes, error_values,
quantities).

Pure logic on hand-made workflows (a kennel, a warehouse, a ferry line, a
greenhouse): no model is needed to say which values a parameter may take.
"""

from __future__ import annotations

from typing import Any

from forge_core.guardrails import FailedValue, TurnFacts
from forge_core.guardrails.codes import codes_in
from forge_core.guardrails.entries import described
from forge_core.guardrails.error_values import as_directed, repaired
from forge_core.guardrails.registry import preferred_values
from forge_core.workflow import ToolSpec, Workflow

STR: dict[str, Any] = {"type": "string"}


def tool(tool_name: str, description: str, /, **props: dict[str, Any]) -> ToolSpec:
    return ToolSpec(
        tool_name, description, {"type": "object", "properties": props, "required": list(props)}
    )


def facts(
    tools: list[ToolSpec],
    request: str,
    results: list[tuple[str, str]] | None = None,
    failures: list[FailedValue] | None = None,
) -> TurnFacts:
    wf = Workflow("wf", tools, terminal_tools=[tools[-1].name])
    return TurnFacts(wf, [request], results or [], failures or [])


def test_the_entry_the_request_describes_inside_parentheses() -> None:
    listing = (
        "Two dogs boarded: Pepper (collie, kennel no. K-310) and Bramble (pug, kennel no. K-311)."
    )
    request = "Bramble the pug goes home today."
    assert described(["K-310", "K-311"], [listing], [request], set()) == ["K-311"]
    # Nothing in the request tells them apart: both stay.
    assert described(["K-310", "K-311"], [listing], ["Check out a dog."], set()) == [
        "K-310",
        "K-311",
    ]


def test_a_negated_feature_is_not_shared() -> None:
    listing = "Free: bay B-1 (no crane, covered), bay B-2 (crane, covered), bay B-3 (crane)."
    got = described(["B-1", "B-2", "B-3"], [listing], ["We need a crane."], set())
    assert got == ["B-2", "B-3"]


def test_the_sentence_naming_the_list_kind_speaks_first() -> None:
    listing = "Order 77 holds 4 crates. Monday run: CR-11, CR-12. Tuesday run: CR-20, CR-21."
    request = "Please ship the Tuesday crates to Leeds - Monday stays here."
    got = described(["CR-11", "CR-12", "CR-20", "CR-21"], [listing], [request], set(), ("crate",))
    assert got == ["CR-20", "CR-21"]


def test_an_id_list_takes_only_the_entries_the_request_names() -> None:
    inspect = tool("inspect_pallet", "Inspect a pallet", pallet_id=STR)
    discard = tool(
        "discard_boxes",
        "Discard boxes",
        box_ids={"type": "array", "items": {"type": "string", "pattern": r"^BX-\d{3}$"}},
    )
    f = facts(
        [inspect, discard],
        "Discard any crushed boxes on pallet P-9.",
        [
            (
                "inspect_pallet",
                "Pallet P-9: BX-101 fine; BX-102 crushed; BX-103 wet; BX-104 crushed.",
            )
        ],
    )
    # Told apart from the others, the list is exactly those entries.
    assert preferred_values(f).values["discard_boxes.box_ids"] == [["BX-102", "BX-104"]]


def test_a_patterned_id_parameter_takes_the_described_listing_entry() -> None:
    lookup = tool("list_plants", "List a greenhouse's plants", house=STR)
    water = tool(
        "water_plant",
        "Water one plant",
        plant_number={"type": "string", "pattern": r"^\d{5}$"},
    )
    f = facts(
        [lookup, water],
        "Water the fern in house G2, please.",
        [("list_plants", "House G2: cactus (plant 40112), fern (plant 40187), ivy (plant 40190).")],
    )
    assert preferred_values(f).values["water_plant.plant_number"] == ["40187"]


def test_codes_written_in_groups() -> None:
    assert codes_in("The trailer is TR58 XKV, parked at bay 4.") == ["TR58 XKV"]
    assert codes_in("deliver to ne4 7qp please") == ["ne4 7qp"]
    # Times, ordinals and words beside a code are not codes.
    assert codes_in("on the 3rd at 7pm for 2 people") == []
    assert codes_in("Route 9B is late") == ["9B"]


def test_a_postcode_parameter_takes_the_code_the_user_wrote() -> None:
    find = tool("find_account", "Find a customer account", postcode=STR)
    report = tool("report_account", "Report", account_ref=STR)
    f = facts([find, report], "Hi, I'm at NE4 7QP and my boiler is broken.")
    assert preferred_values(f).values["find_account.postcode"] == ["NE4 7QP"]


def test_an_error_directs_case_and_forbidden_characters() -> None:
    error = "use capital letters and digits only, with no spaces, dashes or dots"
    assert as_directed("tr-58 xkv", error) == "TR58XKV"
    # The user's code, not the model's wrong value, is repaired.
    permit = tool("issue_permit", "Issue a parking permit", plate=STR)
    f = facts(
        [permit],
        "Her van is tr-58 xkv.",
        failures=[FailedValue("issue_permit", {"plate": "7"}, f"plate '7' rejected: {error}")],
    )
    assert preferred_values(f).values["issue_permit.plate"] == ["TR58XKV"]


def test_an_error_example_gives_the_punctuation() -> None:
    error = "shelf mark '12/4/7' is malformed: write it as room.case.shelf, e.g. 3.10.2"
    assert repaired("12/4/7", error) == ["12.4.7"]


def test_compound_and_ordinal_quantities() -> None:
    book = tool(
        "book_ferry",
        "Book a ferry crossing",
        vehicle_length_m={"type": "number"},
        deck={"type": "integer"},
        passengers={"type": "integer"},
        stay_days={"type": "integer", "enum": [7, 14, 28]},
    )
    f = facts([book], "A 6.5-metre camper on the second deck, four people, for a 14-day stay.")
    got = preferred_values(f).values
    assert got["book_ferry.vehicle_length_m"] == [6.5]
    assert got["book_ferry.deck"] == [2]
    assert got["book_ferry.passengers"] == [4]
    assert got["book_ferry.stay_days"] == [14]


def test_an_entry_whose_stated_limit_the_request_exceeds_is_not_meant() -> None:
    listing = "Open: hall H-1 (up to 40 guests, stage), hall H-2 (up to 120 guests, stage)."
    request = "We need a hall with a stage for ninety people."
    assert described(["H-1", "H-2"], [listing], [request], set()) == ["H-2"]
    # A request within every limit keeps them all.
    assert described(["H-1", "H-2"], [listing], ["A hall for 30 people."], set()) == [
        "H-1",
        "H-2",
    ]


def test_a_terminal_tools_persons_name_is_one_the_conversation_writes() -> None:
    check = tool("check_lanes", "Check free bowling lanes", day=STR)
    book = tool("book_lane", "Book a lane", contact_name=STR, lane=STR)
    f = facts([check, book], "A lane for Saturday please, under the name Okonkwo.")
    assert preferred_values(f).values["book_lane.contact_name"] == ["Okonkwo"]


def test_the_ends_of_a_time_range_go_to_start_and_end() -> None:
    hours = tool(
        "set_opening_hours",
        "Set a shop's opening hours",
        opens_at={"type": "string", "description": "HH:MM, 24-hour"},
        closes_at={"type": "string", "description": "HH:MM, 24-hour"},
    )
    f = facts([hours], "Open the bakery from 7am to half past six in the evening.")
    got = preferred_values(f).values
    assert got["set_opening_hours.opens_at"] == ["07:00"]
    assert got["set_opening_hours.closes_at"] == ["18:30"]
