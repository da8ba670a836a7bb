"""The BFCL benchmark's AST-style checker and schema mapping (no model, no data)."""

from __future__ import annotations

from typing import Any

from bench.bfcl import Answer, Call, check, normalize, to_json_schema

AREA: Answer = {
    "calculate_triangle_area": {"base": [10], "height": [5], "unit": ["units", ""]},
}


def test_accepts_the_expected_call() -> None:
    call = Call("calculate_triangle_area", {"base": 10, "height": 5, "unit": "Units "})
    assert check([call], [AREA]) == ""


def test_ints_and_floats_compare_numerically() -> None:
    assert check([Call("calculate_triangle_area", {"base": 10.0, "height": 5})], [AREA]) == ""
    # A bool is not a number here, although Python says True == 1.
    answer: Answer = {"f": {"n": [1]}}
    assert check([Call("f", {"n": True})], [answer]) != ""


def test_rejects_a_wrong_value() -> None:
    error = check([Call("calculate_triangle_area", {"base": 10, "height": 6})], [AREA])
    assert "height" in error


def test_rejects_a_wrong_function() -> None:
    error = check([Call("calculate_circle_area", {"base": 10, "height": 5})], [AREA])
    assert "function" in error


def test_an_optional_parameter_may_be_left_out() -> None:
    assert check([Call("calculate_triangle_area", {"base": 10, "height": 5})], [AREA]) == ""


def test_a_required_parameter_may_not_be_left_out() -> None:
    error = check([Call("calculate_triangle_area", {"base": 10})], [AREA])
    assert "missing" in error and "height" in error


def test_rejects_an_unknown_parameter() -> None:
    call = Call("calculate_triangle_area", {"base": 10, "height": 5, "color": "red"})
    assert "unexpected" in check([call], [AREA])


def test_strings_compare_the_bfcl_way() -> None:
    assert normalize("April 1, 2024") == normalize("april 1 2024")
    answer: Answer = {"weather": {"city": ["San Francisco", "SF"]}}
    assert check([Call("weather", {"city": "san francisco"})], [answer]) == ""
    assert check([Call("weather", {"city": "Oakland"})], [answer]) != ""


def test_lists_compare_element_wise() -> None:
    answer: Answer = {"distance": {"coord": [[33.4484, -112.074]]}}
    assert check([Call("distance", {"coord": [33.4484, -112.074]})], [answer]) == ""
    assert check([Call("distance", {"coord": [-112.074, 33.4484]})], [answer]) != ""
    assert check([Call("distance", {"coord": [33.4484]})], [answer]) != ""


def test_dict_values_compare_key_by_key() -> None:
    answer: Answer = {
        "fetch": {"conditions": [{"department": ["Science"], "school": ["Bluebird HS", ""]}]}
    }
    assert check([Call("fetch", {"conditions": {"department": "science"}})], [answer]) == ""
    bad = {"conditions": {"department": "Science", "year": 3}}
    assert check([Call("fetch", bad)], [answer]) != ""


def test_parallel_calls_match_in_any_order() -> None:
    answers: list[Answer] = [
        {"spotify.play": {"artist": ["Taylor Swift"], "duration": [20]}},
        {"spotify.play": {"artist": ["Maroon 5"], "duration": [15]}},
    ]
    calls = [
        Call("spotify.play", {"artist": "Maroon 5", "duration": 15}),
        Call("spotify.play", {"artist": "Taylor Swift", "duration": 20}),
    ]
    assert check(calls, answers) == ""
    # One call short: the count is wrong, whatever the first call.
    assert check(calls[:1], answers) == "1 calls, expected 2"
    # The same call twice does not cover both answers.
    assert check([calls[0], calls[0]], answers) != ""


def test_parallel_matching_is_one_to_one_not_greedy() -> None:
    # The first call fits both answers, the second only the first: a greedy
    # pass that gives the first call to the first answer would fail.
    answers: list[Answer] = [
        {"f": {"x": [1, 2]}},
        {"f": {"x": [1]}},
    ]
    assert check([Call("f", {"x": 1}), Call("f", {"x": 2})], answers) == ""


def test_bfcl_types_map_to_json_schema() -> None:
    bfcl: dict[str, Any] = {
        "type": "dict",
        "properties": {
            "coord": {"type": "tuple", "items": {"type": "float"}},
            "data": {"type": "any", "description": "anything"},
            "area": {"type": "dict", "properties": {"width": {"type": "integer"}}},
        },
        "required": ["coord"],
        "optional": [],
    }
    assert to_json_schema(bfcl) == {
        "type": "object",
        "properties": {
            "coord": {"type": "array", "items": {"type": "number"}},
            "data": {"description": "anything"},
            "area": {"type": "object", "properties": {"width": {"type": "integer"}}},
        },
        "required": ["coord"],
    }
