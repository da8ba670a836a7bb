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
