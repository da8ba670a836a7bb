"""Unit tests for forge_core.guardrails.coercion: safe fixes of near-miss arguments."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from forge_core.guardrails.coercion import Coercion, coerce_arguments


def coerce(
    properties: dict[str, Any], args: dict[str, Any]
) -> tuple[dict[str, Any], list[Coercion]]:
    schema = {"type": "object", "properties": properties}
    return coerce_arguments(Draft202012Validator(schema), args)


def test_quoted_integer() -> None:
    fixed, applied = coerce({"count": {"type": "integer"}}, {"count": "42"})
    assert fixed == {"count": 42}
    assert type(fixed["count"]) is int
    assert applied == [Coercion("/count", "42", 42)]


def test_quoted_integer_with_whitespace() -> None:
    fixed, _ = coerce({"count": {"type": "integer"}}, {"count": " 7 "})
    assert fixed == {"count": 7}


def test_quoted_number() -> None:
    fixed, applied = coerce({"price": {"type": "number"}}, {"price": "2.5"})
    assert fixed == {"price": 2.5}
    assert applied == [Coercion("/price", "2.5", 2.5)]


@pytest.mark.parametrize(("raw", "expected"), [("true", True), ("false", False), ("True", True)])
def test_string_boolean(raw: str, expected: bool) -> None:
    fixed, applied = coerce({"flag": {"type": "boolean"}}, {"flag": raw})
    assert fixed["flag"] is expected
    assert applied == [Coercion("/flag", raw, expected)]


def test_number_to_string() -> None:
    fixed, applied = coerce({"id": {"type": "string"}}, {"id": 7})
    assert fixed == {"id": "7"}
    assert applied == [Coercion("/id", 7, "7")]


def test_bare_value_becomes_a_one_element_list() -> None:
    fixed, applied = coerce({"tags": {"type": "array"}}, {"tags": "urgent"})
    assert fixed == {"tags": ["urgent"]}
    assert applied == [Coercion("/tags", "urgent", ["urgent"])]


def test_bare_number_becomes_a_list() -> None:
    props = {"ids": {"type": "array", "items": {"type": "integer"}}}
    fixed, applied = coerce(props, {"ids": 5})
    assert fixed == {"ids": [5]}
    assert applied == [Coercion("/ids", 5, [5])]


def test_bare_value_is_wrapped_then_its_item_coerced() -> None:
    props = {"ids": {"type": "array", "items": {"type": "integer"}}}
    fixed, applied = coerce(props, {"ids": "5"})
    assert fixed == {"ids": [5]}
    assert applied == [Coercion("/ids", "5", [5]), Coercion("/ids/0", "5", 5)]


def test_array_items_are_coerced_individually() -> None:
    props = {"ids": {"type": "array", "items": {"type": "integer"}}}
    fixed, applied = coerce(props, {"ids": ["1", 2, "3"]})
    assert fixed == {"ids": [1, 2, 3]}
    assert applied == [Coercion("/ids/0", "1", 1), Coercion("/ids/2", "3", 3)]


def test_json_encoded_array_string_is_decoded() -> None:
    props = {"ids": {"type": "array", "items": {"type": "integer"}}}
    fixed, applied = coerce(props, {"ids": "[1, 2]"})
    assert fixed == {"ids": [1, 2]}
    assert applied == [Coercion("/ids", "[1, 2]", [1, 2])]


def test_nested_object_fields_use_pointer_paths() -> None:
    props = {
        "filters": {
            "type": "object",
            "properties": {"limit": {"type": "integer"}, "exact": {"type": "boolean"}},
        }
    }
    fixed, applied = coerce(props, {"filters": {"limit": "10", "exact": "false"}})
    assert fixed == {"filters": {"limit": 10, "exact": False}}
    assert sorted(applied, key=lambda c: c.path) == [
        Coercion("/filters/exact", "false", False),
        Coercion("/filters/limit", "10", 10),
    ]


def test_several_fields_in_one_call() -> None:
    props = {"a": {"type": "integer"}, "b": {"type": "number"}, "c": {"type": "string"}}
    fixed, applied = coerce(props, {"a": "1", "b": "0.5", "c": 3})
    assert fixed == {"a": 1, "b": 0.5, "c": "3"}
    assert {c.path for c in applied} == {"/a", "/b", "/c"}


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        ({"type": "integer"}, "abc"),
        ({"type": "integer"}, "2.5"),
        ({"type": "number"}, "lots"),
        ({"type": "boolean"}, "yes"),
        ({"type": "object"}, "not an object"),
        ({"type": "string"}, {"a": 1}),
        ({"type": "integer"}, None),
    ],
)
def test_non_coercible_values_are_left_unchanged(schema: dict[str, Any], value: Any) -> None:
    fixed, applied = coerce({"x": schema}, {"x": value})
    assert fixed == {"x": value}
    assert applied == []


def test_non_coercible_field_does_not_stop_other_fixes() -> None:
    props = {"a": {"type": "integer"}, "b": {"type": "integer"}}
    fixed, applied = coerce(props, {"a": "abc", "b": "4"})
    assert fixed == {"a": "abc", "b": 4}
    assert applied == [Coercion("/b", "4", 4)]


@pytest.mark.parametrize("target", ["integer", "number", "string"])
@pytest.mark.parametrize("value", [True, False])
def test_booleans_are_never_coerced(target: str, value: bool) -> None:
    fixed, applied = coerce({"x": {"type": target}}, {"x": value})
    assert fixed["x"] is value
    assert applied == []


def test_original_dict_is_not_mutated() -> None:
    props = {
        "n": {"type": "integer"},
        "inner": {"type": "object", "properties": {"m": {"type": "integer"}}},
    }
    args: dict[str, Any] = {"n": "1", "inner": {"m": "2"}}
    before = copy.deepcopy(args)
    fixed, applied = coerce(props, args)
    assert args == before
    assert fixed == {"n": 1, "inner": {"m": 2}}
    assert fixed is not args
    assert fixed["inner"] is not args["inner"]
    assert len(applied) == 2


def test_valid_args_are_returned_as_is() -> None:
    args = {"n": 1}
    fixed, applied = coerce({"n": {"type": "integer"}}, args)
    assert fixed is args
    assert applied == []


@pytest.mark.parametrize(("value", "expected"), [("42", 42), ("null", None), (None, None), (5, 5)])
def test_union_integer_or_null(value: Any, expected: Any) -> None:
    fixed, applied = coerce({"x": {"type": ["integer", "null"]}}, {"x": value})
    assert fixed == {"x": expected}
    if value == expected:
        assert applied == []
    else:
        assert applied == [Coercion("/x", value, expected)]


def test_union_integer_or_null_leaves_garbage_alone() -> None:
    fixed, applied = coerce({"x": {"type": ["integer", "null"]}}, {"x": "abc"})
    assert fixed == {"x": "abc"}
    assert applied == []


def test_describe() -> None:
    assert Coercion("/count", "42", 42).describe() == '/count: "42" -> 42'


def test_pointer_escapes_slash_and_tilde() -> None:
    props = {"a/b": {"type": "integer"}, "c~d": {"type": "integer"}}
    _, applied = coerce(props, {"a/b": "1", "c~d": "2"})
    assert {c.path for c in applied} == {"/a~1b", "/c~0d"}


def test_repeated_items_of_a_list_are_dropped_where_the_schema_allows() -> None:
    from forge_core.guardrails.coercion import drop_repeated_items

    schema = {
        "type": "object",
        "properties": {
            "boxes": {
                "type": "array",
                "items": {"type": "object", "properties": {"kg": {"type": "number"}}},
            },
            "tags": {"type": "array", "items": {"type": "string"}, "minItems": 2},
        },
    }
    checker = Draft202012Validator(schema)
    args = {"boxes": [{"kg": 4.5}, {"kg": 2}, {"kg": 2}, {"kg": 2}], "tags": ["a", "b", "a"]}
    fixed, applied = drop_repeated_items(checker, args)
    assert fixed == {"boxes": [{"kg": 4.5}, {"kg": 2}], "tags": ["a", "b"]}
    assert [c.path for c in applied] == ["/boxes", "/tags"]
    # Not where the shorter list would break a valid call (minItems 2).
    same = {"tags": ["x", "x"]}
    assert drop_repeated_items(checker, same) == (same, [])


def test_an_item_that_restates_an_earlier_one_with_new_numbers_is_dropped() -> None:
    from forge_core.guardrails.coercion import drop_restated_items

    person: dict[str, Any] = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "age": {"type": "integer"},
            "size": {"type": "string", "enum": ["s", "m", "l"]},
        },
    }
    ticket = {
        "type": "object",
        "properties": {
            "kind": {"type": "string", "enum": ["adult", "child"]},
            "age": {"type": "integer"},
        },
    }
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "people": {"type": "array", "items": person},
            "tickets": {"type": "array", "items": ticket},
        },
    }
    checker = Draft202012Validator(schema)
    args = {
        "people": [
            {"name": "Ann Lee", "age": 10, "size": "s"},
            {"name": "Ann Lee", "age": 11, "size": "s"},
            {"name": "Bo Lee", "age": 12, "size": "s"},
            {"name": "Ann Lee", "age": 13, "size": "m"},
        ],
        # No open string says who: two adults of different ages stay.
        "tickets": [{"kind": "adult", "age": 34}, {"kind": "adult", "age": 36}],
    }
    fixed, applied = drop_restated_items(checker, schema, args)
    assert fixed["people"] == [
        {"name": "Ann Lee", "age": 10, "size": "s"},
        {"name": "Bo Lee", "age": 12, "size": "s"},
        {"name": "Ann Lee", "age": 13, "size": "m"},
    ]
    assert fixed["tickets"] == args["tickets"]
    assert [c.path for c in applied] == ["/people"]
    # Not where the shorter list would break a valid call.
    strict = {**schema, "properties": {"people": {"type": "array", "items": person, "minItems": 2}}}
    two = {"people": args["people"][:2]}
    assert drop_restated_items(Draft202012Validator(strict), strict, two) == (two, [])


def test_a_second_line_that_echoes_the_first_is_dropped() -> None:
    from forge_core.guardrails.coercion import drop_echoed_lines

    address = {
        "type": "object",
        "properties": {"line1": {"type": "string"}, "line2": {"type": "string"}},
        "required": ["line1"],
    }
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {"address": address, "email": {"type": "string"}},
    }
    checker = Draft202012Validator(schema)
    args = {"address": {"line1": "4 Elm Row", "line2": "4 Elm Row"}, "email": "4 Elm Row"}
    fixed, applied = drop_echoed_lines(checker, schema, args)
    # Only the numbered sibling goes; another key with the same text stays.
    assert fixed == {"address": {"line1": "4 Elm Row"}, "email": "4 Elm Row"}
    assert [c.path for c in applied] == ["/address/line2"]
    differs = {"address": {"line1": "Flat 2", "line2": "4 Elm Row"}}
    assert drop_echoed_lines(checker, schema, differs) == (differs, [])
