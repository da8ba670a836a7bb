"""Distinct items in an array of objects written in pieces
(backends/llama/item_identities.py, pieces.py `array`).

The model is a table of likeliest next tokens (a fake: the logic under test
is Forge's choice among them); the real model's pieces run end to end in
tests/e2e/test_call_pieces_llama.py.
"""

from __future__ import annotations

import json
from typing import Any

from forge_core.backends.llama.item_identities import TakenValues, identity_keys
from forge_core.backends.llama.pieces import Piece, object_array, piece_call
from forge_core.grammar import piece_grammars
from forge_core.workflow import ToolSpec

LINE: dict[str, Any] = {
    "type": "object",
    "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}},
    "required": ["sku", "qty"],
}
ORDER = ToolSpec(
    "order",
    "",
    {
        "type": "object",
        "properties": {
            "lines": {
                "type": "array",
                "items": LINE,
                "uniqueItems": True,
                "minItems": 1,
                "maxItems": 6,
            }
        },
        "required": ["lines"],
    },
)


class Tokens:
    """The model's likeliest next tokens, by what the prompt ends with; the
    first entry that matches answers."""

    def __init__(self, table: list[tuple[str, list[tuple[str, float]]]]) -> None:
        self.table = table
        self.asked: list[str] = []

    async def __call__(self, call: str, k: int) -> list[tuple[str, float]]:
        self.asked.append(call)
        for end, tokens in self.table:
            if call.endswith(end):
                return tokens[:k]
        raise AssertionError(f"unexpected prompt {call!r}")


async def _two_of_each(call: str, grammar: str, stops: list[str], n: int, stream: bool) -> Piece:
    """The model's own quantity, under its grammar: 2 each time."""
    assert call.endswith('"qty":'), call
    return Piece(" 2", "word", "}", 1)


async def _emit_nothing(text: str) -> None:
    return None


def test_an_array_with_unique_items_is_walked_item_by_item() -> None:
    """Under one grammar for the whole array the model ran its items on to
    max_tokens; walked, it decides after each item."""
    assert object_array(ORDER.parameters["properties"]["lines"])
    assert not object_array({"type": "array", "items": LINE, "contains": {"type": "object"}})


def test_an_items_identity_is_a_required_string_named_like_an_id() -> None:
    items = {
        "type": "object",
        "properties": {
            "panel_ref": {"type": "string"},
            "note_ref": {"type": "string"},
            "quarries": {"type": "integer"},
            "date": {"type": "string"},
            "email": {"type": "string", "format": "email"},
        },
        "required": ["panel_ref", "quarries", "date", "email"],
    }
    # Optional, numeric and ordinary keys (a date items may share) are no identity.
    assert identity_keys(items) == ["panel_ref", "email"]


def test_taken_values_are_forgotten_when_a_new_array_starts() -> None:
    taken = TakenValues()
    path = ("lines", "[]")
    taken.start(path, LINE)
    assert taken.tracked((*path, "sku")) and not taken.tracked((*path, "qty"))
    taken.take((*path, "sku"), '"A"')
    assert taken.free((*path, "sku"), ['"A"', '"B"']) == ['"B"']
    taken.start(path, LINE)
    assert taken.free((*path, "sku"), ['"A"', '"B"']) == ['"A"', '"B"']


async def test_a_later_item_takes_an_id_no_earlier_item_took() -> None:
    """The model's likeliest id is PX-101 every time; the second line gets
    PX-202, and with both listed ids taken the array ends unasked."""
    tokens = Tokens(
        [
            # Forge writes the ids' common `PX-` and asks where they part.
            ('"sku": "PX-', [("101", 0.7), ("202", 0.2)]),
            ('"qty": 2', [("},", 0.8), ("}]", 0.1)]),
        ]
    )
    grammars = piece_grammars(grounded=["PX-101", "PX-202"])
    made = await piece_call([ORDER], grammars, _two_of_each, _emit_nothing, 512, tokens)
    assert made is not None and not made.truncated
    lines = json.loads(made.text)["args"]["lines"]
    assert lines == [{"sku": "PX-101", "qty": 2}, {"sku": "PX-202", "qty": 2}]
    # After the first item the model was asked whether another follows
    # (its `},`); after the second, no such question: the ids are used up.
    more = [a for a in tokens.asked if a.endswith('"qty": 2')]
    assert len(more) == 1


async def test_without_listed_ids_the_model_decides_how_many_items() -> None:
    """An open sku (no ids in the conversation) is the model's own: nothing
    is set aside and the list ends where the model closes it."""
    tokens = Tokens(
        [
            ('"qty": 3', [("}]", 0.8)]),
            ('"qty": 2', [("},", 0.8)]),
        ]
    )
    pieces = iter(
        [
            Piece(' "glaze', "word", '",', 2),
            Piece(" 2", "word", "}", 1),
            Piece(' "clay', "word", '",', 2),
            Piece(" 3", "word", "}", 1),
        ]
    )

    async def script(call: str, grammar: str, stops: list[str], n: int, stream: bool) -> Piece:
        return next(pieces)

    made = await piece_call([ORDER], piece_grammars(), script, _emit_nothing, 512, tokens)
    assert made is not None
    lines = json.loads(made.text)["args"]["lines"]
    assert lines == [{"sku": "glaze", "qty": 2}, {"sku": "clay", "qty": 3}]


async def test_an_items_count_comes_from_the_entry_of_the_thing_it_is_about() -> None:
    """A register lists "PX-101: 12 x ..." and "PX-202: 7 x ...": each line
    item's qty is its own entry's number, not the model's 2."""
    tokens = Tokens(
        [
            ('"sku": "PX-', [("101", 0.7), ("202", 0.2)]),
            ('"qty": 12', [("},", 0.8), ("}]", 0.1)]),
            ('"qty": ', [("2", 0.9), ("12", 0.05), ("7", 0.05)]),
            ('"qty":', [(" 2", 0.9), (" 12", 0.05), (" 7", 0.05)]),
        ]
    )
    grammars = piece_grammars(grounded=["PX-101", "PX-202"])
    grammars.entry_numbers = {"PX-101": ["12"], "PX-202": ["7"]}
    made = await piece_call([ORDER], grammars, _two_of_each, _emit_nothing, 512, tokens)
    assert made is not None
    lines = json.loads(made.text)["args"]["lines"]
    assert lines == [{"sku": "PX-101", "qty": 12}, {"sku": "PX-202", "qty": 7}]


def test_entry_numbers_are_read_from_lines_that_start_with_an_id() -> None:
    from forge_core.guardrails.item_entries import entry_numbers

    register = (
        "Flock register FH-3391-Kd:\n"
        "- MOB-07a: 212 x ewes, lambs weaned\n"
        "- MOB-07b: 38 x shearlings (2025-born gimmers)\n"
        "- MOB-07c: 240 x lambs born March-April 2026\n"
        "- MOB-07e: 60 x ewes, treated 2026-06-04, withdrawal until 2026-06-25"
    )
    got = entry_numbers([register], ["Book every sheep we have, please."])
    assert got == {"MOB-07a": ["212"], "MOB-07b": ["38"], "MOB-07c": ["240"], "MOB-07e": ["60"]}
    # The user's own numbers are the counts where the request writes any.
    assert entry_numbers([register], ["Shear 60 of the ewes."]) == {}


SIGHTING: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pest": {"type": "string", "enum": ["ants", "cockroaches", "mice", "rats"]},
        "count": {"type": "integer"},
    },
    "required": ["pest", "count"],
}
CALLOUT = ToolSpec(
    "log_callout",
    "",
    {
        "type": "object",
        "properties": {"sightings": {"type": "array", "items": SIGHTING, "minItems": 1}},
        "required": ["sightings"],
    },
)


async def _one_each(call: str, grammar: str, stops: list[str], n: int, stream: bool) -> Piece:
    assert call.endswith('"count":'), call
    return Piece(" 1", "word", "}", 1)


async def test_each_enum_member_the_request_names_is_one_items() -> None:
    """The request names mice and cockroaches; the model favours
    "cockroaches" every time and closes the list after one item. The list
    goes on to a second item, which takes the member no item took yet."""
    tokens = Tokens(
        [
            ('"pest": "', [("cock", 0.7), ("mice", 0.2)]),
            ('"pest":', [(' "cock', 0.7), (' "mice', 0.2)]),
            ('"count": 1', [("}]", 0.8), ("},", 0.1)]),
        ]
    )
    grammars = piece_grammars(preferred_values={"log_callout.pest": ["mice", "cockroaches"]})
    made = await piece_call([CALLOUT], grammars, _one_each, _emit_nothing, 512, tokens)
    assert made is not None and not made.truncated
    sightings = json.loads(made.text)["args"]["sightings"]
    assert sightings == [{"pest": "cockroaches", "count": 1}, {"pest": "mice", "count": 1}]


async def test_an_enum_the_request_leaves_whole_sets_no_count() -> None:
    """No member named (the grammar lists the whole enum): the model's
    close after one item ends the list."""
    tokens = Tokens(
        [
            ('"pest": "', [("cock", 0.7), ("mice", 0.2)]),
            ('"pest":', [(' "cock', 0.7), (' "mice', 0.2)]),
            ('"count": 1', [("}]", 0.8), ("},", 0.1)]),
        ]
    )
    made = await piece_call([CALLOUT], piece_grammars(), _one_each, _emit_nothing, 512, tokens)
    assert made is not None
    assert json.loads(made.text)["args"]["sightings"] == [{"pest": "cockroaches", "count": 1}]


PEST_ITEM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "area": {"type": "string", "enum": ["cellar", "kitchen", "yard"]},
        "pest": {"type": "string", "enum": ["ants", "cockroaches", "mice", "rats"]},
    },
    "required": ["area", "pest"],
}
PEST_CALLOUT = ToolSpec(
    "log_callout",
    "",
    {
        "type": "object",
        "properties": {"sightings": {"type": "array", "items": PEST_ITEM, "minItems": 1}},
        "required": ["sightings"],
    },
)
PEST_REQUEST = (
    "We've got mice in the cellar, droppings everywhere. "
    "Last night the chef saw a cockroach in the kitchen."
)


def test_an_items_members_are_read_with_those_named_in_the_same_sentence() -> None:
    from forge_core.guardrails.item_context import item_context

    context = item_context([PEST_CALLOUT], [PEST_REQUEST])
    assert context['area="kitchen"'] == {"pest": ['"cockroaches"']}
    assert context['pest="mice"'] == {"area": ['"cellar"']}
    # One sentence naming both pairs tells nothing about which goes with which.
    together = item_context([PEST_CALLOUT], ["Mice in the cellar and cockroaches in the kitchen."])
    assert together == {}


async def test_an_item_takes_the_member_named_beside_its_other_member() -> None:
    """The model favours "kitchen" first and then "mice" every time; the
    first item pairs the kitchen with the cockroach its sentence names, the
    second the cellar with the mice."""
    from forge_core.guardrails.item_context import item_context

    tokens = Tokens(
        [
            ('"area": "', [("kitchen", 0.6), ("cellar", 0.3)]),
            ('"area":', [(' "kitchen', 0.6), (' "cellar', 0.3)]),
            ('"pest": "', [("mice", 0.7), ("cock", 0.2)]),
            ('"pest":', [(' "mice', 0.7), (' "cock', 0.2)]),
            ("mice", [('"}]', 0.8), ('"},', 0.1)]),
            ("roaches", [('"}]', 0.8), ('"},', 0.1)]),
        ]
    )
    grammars = piece_grammars(
        preferred_values={
            "log_callout.area": ["cellar", "kitchen"],
            "log_callout.pest": ["mice", "cockroaches"],
        }
    )
    grammars.item_context = item_context([PEST_CALLOUT], [PEST_REQUEST])
    made = await piece_call([PEST_CALLOUT], grammars, _one_each, _emit_nothing, 512, tokens)
    assert made is not None and not made.truncated
    sightings = json.loads(made.text)["args"]["sightings"]
    assert sightings == [
        {"area": "kitchen", "pest": "cockroaches"},
        {"area": "cellar", "pest": "mice"},
    ]


async def test_a_list_ends_when_every_named_member_is_taken() -> None:
    """The model would go on writing sightings; with mice and cockroaches
    both taken, a third item could only repeat one, and the list ends."""
    tokens = Tokens(
        [
            ('"pest": "', [("cock", 0.7), ("mice", 0.2)]),
            ('"pest":', [(' "cock', 0.7), (' "mice', 0.2)]),
            ('"count": 1', [("},", 0.8), ("}]", 0.1)]),
        ]
    )
    grammars = piece_grammars(preferred_values={"log_callout.pest": ["mice", "cockroaches"]})
    made = await piece_call([CALLOUT], grammars, _one_each, _emit_nothing, 512, tokens)
    assert made is not None
    assert len(json.loads(made.text)["args"]["sightings"]) == 2


async def test_a_member_the_model_wrote_under_the_grammar_is_taken_too() -> None:
    """None of the model's likeliest tokens fits a member (the walk cannot
    choose), so the first item's pest is written under the grammar: it is
    still that item's, and the second item takes the other named member."""
    tokens = Tokens(
        [
            ('"pest": "', [("\n", 0.9)]),
            ('"pest":', [(" \n", 0.9)]),
            ('"count": 1', [("}]", 0.8)]),
        ]
    )

    async def script(call: str, grammar: str, stops: list[str], n: int, stream: bool) -> Piece:
        if call.endswith('"pest":'):
            return Piece(' "cockroaches', "word", '",', 3)
        return await _one_each(call, grammar, stops, n, stream)

    grammars = piece_grammars(preferred_values={"log_callout.pest": ["mice", "cockroaches"]})
    made = await piece_call([CALLOUT], grammars, script, _emit_nothing, 512, tokens)
    assert made is not None
    sightings = json.loads(made.text)["args"]["sightings"]
    assert [s["pest"] for s in sightings] == ["cockroaches", "mice"]


PASSENGER: dict[str, Any] = {
    "type": "object",
    "properties": {
        "full_name": {"type": "string"},
        "age": {"type": "integer", "minimum": 2, "maximum": 99},
        "weight_kg": {"type": "integer", "minimum": 10, "maximum": 200},
    },
    "required": ["full_name", "age", "weight_kg"],
}
FLIGHTS = ToolSpec(
    "book_flights",
    "",
    {
        "type": "object",
        "properties": {"passengers": {"type": "array", "items": PASSENGER, "maxItems": 2}},
        "required": ["passengers"],
    },
)


async def test_an_items_numbers_are_those_written_beside_its_name() -> None:
    """The model favours 18 for every age and 61 for every weight; each
    passenger gets the numbers the part of the request naming them writes,
    and a number the item took for its age is not its weight."""
    from forge_core.guardrails.item_context import request_segments

    tokens = Tokens(
        [
            ('"age":', [(" 18", 0.6), (" 34", 0.2), (" 29", 0.1)]),
            ('"weight_kg":', [(" 61", 0.7), (" 93", 0.1), (" 34", 0.1)]),
            ('"weight_kg": 61', [("},", 0.8)]),
            ('"passengers": [', [("{", 0.9)]),
        ]
    )
    names = iter([' "Priya Nair', ' "Arjun Nair'])

    async def script(call: str, grammar: str, stops: list[str], n: int, stream: bool) -> Piece:
        assert call.endswith('"full_name":'), call
        return Piece(next(names), "word", '",', 3)

    grammars = piece_grammars()
    grammars.item_segments = request_segments(
        [
            "Two of us. I'm Priya Nair, thirty-four, and I weigh sixty-one kilos; "
            "my brother Arjun Nair is twenty-nine and weighs ninety-three."
        ]
    )
    made = await piece_call([FLIGHTS], grammars, script, _emit_nothing, 512, tokens)
    assert made is not None
    passengers = json.loads(made.text)["args"]["passengers"]
    assert [(p["full_name"], p["age"], p["weight_kg"]) for p in passengers] == [
        ("Priya Nair", 34, 61),
        ("Arjun Nair", 29, 93),
    ]


def test_listed_numbers_give_way_only_to_an_items_own_where_they_are_anothers() -> None:
    from forge_core.backends.llama.item_identities import narrowed as _narrowed

    # Listed numbers the item's part also writes: those.
    assert _narrowed(["61", "93"], ["29", "93"], {"34", "61"}) == ["93"]
    # All that is listed is written beside earlier items: the item's own.
    assert _narrowed(["61"], ["29", "93"], {"34", "61"}) == ["29", "93"]
    # A reading said once for every item (beside no item) stays listed.
    assert _narrowed(["18.4"], ["14", "12.5"], {"14"}) == ["18.4"]
    # Nothing listed (an open number): the item's own.
    assert _narrowed(None, ["29"], set()) == ["29"]
