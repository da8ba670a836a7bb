"""The schema enforced as written (issue 34, item 0): `format`, `pattern`,
numeric bounds, `uniqueItems`, `minProperties`/`maxProperties` are written in
the grammar where schema_rules can, and otherwise left to validation and
reported; none of them makes the grammar fall back to llama-server's own
JSON-Schema path. Checked over real tool sets: the MCP server the SDK tests
start, the outside-domain scenarios, and BFCL's function files when the
bfcl-eval wheel is in bench's cache (nothing is downloaded here).
"""

from __future__ import annotations

import json
import logging
import re
import zipfile
from typing import Any

import jsonschema
import pytest

from bench.bfcl import DATA, WHEEL, default_cache_dir, parameters_schema
from forge.v1 import workflow_pb2 as wpb
from forge_core.grammar import build_grammar, log_unenforced, unenforced_keywords
from forge_core.schema_rules import FORMAT_PATTERNS, FORMATS, pattern_rule
from forge_core.workflow import ToolSpec, Workflow, validate_workflow
from forge_evals.scenarios import ALL_SCENARIOS
from forge_server.convert import workflow_from_pb
from tests.mcp_server import TOOLS as MCP_TOOLS
from tests.unit.test_choice_guardrails import accepts


def tool(name: str, **properties: Any) -> ToolSpec:
    schema = {"type": "object", "properties": properties, "required": list(properties)}
    return ToolSpec(name, f"The {name} tool", schema)


def rule_of(schema: dict[str, Any]) -> tuple[str, str]:
    """The grammar of a one-parameter tool and its parameter's rule name."""
    grammar = build_grammar([tool("t", v=schema)])
    assert grammar is not None, schema
    args = next(line for line in grammar.splitlines() if line.startswith("t-args ::= "))
    found = re.search(r'"\\"v\\"" sp ":" sp ([\w-]+)', args)
    assert found, args
    return grammar, found.group(1)


def admitted(schema: dict[str, Any], value: Any) -> bool:
    grammar, rule = rule_of(schema)
    return accepts(grammar, rule, json.dumps(value))


# ── real tool sets ───────────────────────────────────────────────────────


def local_tools() -> list[ToolSpec]:
    tools = [ToolSpec(t.name, t.description or "", t.input_schema) for t in MCP_TOOLS]
    for scenario in ALL_SCENARIOS:
        for t in scenario.build().tools.values():
            tools.append(ToolSpec(t.name, t.description, t.json_schema()))
    return tools


def test_every_tool_of_the_mcp_server_and_the_scenarios_gets_a_grammar() -> None:
    """Before: 11 of the 161 distinct tools fell back (format, pattern,
    uniqueItems, minimum/maximum/exclusiveMinimum)."""
    tools = local_tools()
    assert len(tools) > 100
    fell_back = [t.name for t in tools if build_grammar([t]) is None]
    assert fell_back == []
    # The scenarios do use the keywords this is about.
    used = {k for t in tools for _, k in unenforced_keywords(t)}
    assert {"uniqueItems"} <= used


def bfcl_tools() -> list[ToolSpec]:
    wheel = default_cache_dir() / WHEEL
    if not wheel.exists():
        pytest.skip(
            f"the bfcl-eval wheel is not in {wheel.parent} (`python -m bench.bfcl` gets it)"
        )
    tools = []
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            # Python-typed files only: the Java/JavaScript ones use their own type names.
            if not name.startswith(f"{DATA}/BFCL_v4_") or "java" in name:
                continue
            for line in archive.read(name).decode().splitlines():
                try:
                    functions = json.loads(line).get("function") or []
                except ValueError:
                    break  # a file of another shape
                for f in functions:
                    if isinstance(f, dict) and "name" in f:
                        name_ok = re.sub(r"[^A-Za-z0-9_-]", "_", f["name"])
                        tools.append(ToolSpec(name_ok, "", parameters_schema(f)))
    return tools


def test_bfcl_tools_fall_back_only_for_values_without_a_type() -> None:
    """Before: format, maximum and a missing type; now only the last (BFCL's
    "any": a free-form value the grammar does not write)."""
    reasons = set()
    for t in bfcl_tools():
        if build_grammar([t]) is None:
            reasons |= {k for _, k in unenforced_keywords(t)}
    assert reasons <= {"fallback: type None", "fallback: free-form value"}


# ── format ───────────────────────────────────────────────────────────────

GOOD = {
    "date": ["2026-03-01", "1999-12-31"],
    "date-time": ["2026-03-01T09:30:00Z", "2026-03-01T23:59:59.250+02:00"],
    "time": ["09:30", "23:59:59", "07:05:00Z"],
    "email": ["ana.lopez@example.com", "x+y@mail.example.co.uk"],
    "uuid": ["123e4567-e89b-12d3-a456-426614174000"],
    "uri": ["https://example.com/a?b=c", "mailto:ana@example.com"],
    "ipv4": ["192.168.0.1", "255.255.255.0", "8.8.8.8"],
}
BAD = {
    "date": ["2026-13-01", "2026-02-32", "03/01/2026", "tomorrow", "2026-3-1"],
    "date-time": ["2026-03-01 09:30", "2026-03-01T09:30:00", "2026-03-01T24:00:00Z"],
    "time": ["9:30", "24:00", "09:60", "half past nine"],
    "email": ["ana", "ana@", "@example.com", "ana@example"],
    "uuid": ["123e4567e89b12d3a456426614174000", "123e4567-e89b-12d3-a456-42661417400"],
    "uri": ["example.com/a", "https://exa mple.com", "://x"],
    "ipv4": ["256.1.1.1", "1.2.3", "01.2.3.4x", "a.b.c.d"],
}


@pytest.mark.parametrize("fmt", sorted(FORMATS))
def test_each_format_admits_its_values_and_nothing_else(fmt: str) -> None:
    for value in GOOD[fmt]:
        assert admitted({"type": "string", "format": fmt}, value), value
        assert re.fullmatch(FORMAT_PATTERNS[fmt], value), value
    for value in BAD[fmt]:
        assert not admitted({"type": "string", "format": fmt}, value), value
        assert not re.fullmatch(FORMAT_PATTERNS[fmt], value), value
    assert unenforced_keywords(tool("t", v={"type": "string", "format": fmt})) == []


def test_a_format_without_a_rule_is_a_plain_string_and_reported() -> None:
    schema = {"type": "string", "format": "hostname"}
    assert admitted(schema, "anything at all")
    assert unenforced_keywords(tool("t", v=schema)) == [("v", "format (unchecked)")]
    ipv6 = {"type": "string", "format": "ipv6"}  # jsonschema checks this one
    assert unenforced_keywords(tool("t", v=ipv6)) == [("v", "format")]


def test_candidates_of_a_date_parameter_must_be_dates() -> None:
    """A report value bound from a result is kept only when it has the format."""
    t = tool("t", v={"type": "string", "format": "date"})
    grammar = build_grammar([t], bound={"t.v": ["March 3", "2026-03-03"]})
    assert grammar is not None
    assert accepts(grammar, "t-args-v", '"2026-03-03"')
    assert not accepts(grammar, "t-args-v", '"March 3"')


# ── pattern ──────────────────────────────────────────────────────────────

PATTERNS = [
    (r"^[A-Z]{2}-\d{4}$", ["AB-1234"], ["ab-1234", "AB-123", "AB-12345", "AB1234"]),
    (r"^\d{4}-\d{2}$", ["2026-03"], ["2026-3", "202603", "2026-03-01"]),
    (r"^S-\d{4}-\d{3}$", ["S-2207-014"], ["S-2207-14", "s-2207-014"]),
    (r"^(INV|CRN)-[0-9]{3,5}$", ["INV-123", "CRN-12345"], ["INV-12", "ABC-123"]),
    (r"^[a-z0-9._-]+$", ["a.b-c_d"], ["", "A", "a b"]),
    (r"^\+?[0-9]{7,12}$", ["+4712345678", "1234567"], ["++1234567", "12345"]),
    (r"^[^@\s]{1,4}x$", ["ab!x"], ["abcdex"]),  # \s inside a class: not translated
    (r"^ORD-", ["ORD-1", "ORD-anything"], ["ord-1", "X-ORD-1"]),
]


@pytest.mark.parametrize(("pattern", "good", "bad"), PATTERNS)
def test_a_simple_pattern_is_written_in_the_grammar(
    pattern: str, good: list[str], bad: list[str]
) -> None:
    schema = {"type": "string", "pattern": pattern}
    translated = pattern_rule(pattern) is not None
    for value in good:
        assert admitted(schema, value), value
        jsonschema.validate(value, schema)
    for value in bad:
        if translated:
            assert not admitted(schema, value), value
    keywords = unenforced_keywords(tool("t", v=schema))
    assert keywords == ([] if translated else [("v", "pattern")])


def test_which_patterns_are_translated() -> None:
    assert pattern_rule(r"^[A-Z]{2}-\d{4}$") is not None
    for hard in (
        r"\d{4}",  # unanchored: a search, free text around it
        r"^(?=.*\d).{8,}$",  # lookahead
        r"^(a)\1$",  # backreference
        r"^\s+$",
        r'^["]$',  # a quote needs a JSON escape
        r"^[ -~]{3}$",  # a range holding the quote and the backslash
        r"^a{1,50000}$",
    ):
        assert pattern_rule(hard) is None, hard
        assert admitted({"type": "string", "pattern": hard}, "x1")  # a plain string


# ── numbers ──────────────────────────────────────────────────────────────


def test_a_small_integer_range_is_listed() -> None:
    schema = {"type": "integer", "minimum": 1, "maximum": 3}
    assert [v for v in range(-2, 6) if admitted(schema, v)] == [1, 2, 3]
    step = {"type": "integer", "minimum": 0, "maximum": 60, "multipleOf": 15}
    assert [v for v in range(-5, 70) if admitted(step, v)] == [0, 15, 30, 45, 60]
    exclusive = {"type": "integer", "exclusiveMinimum": 0, "exclusiveMaximum": 4}
    assert [v for v in range(-2, 6) if admitted(exclusive, v)] == [1, 2, 3]
    for s in (schema, step, exclusive):
        assert unenforced_keywords(tool("t", v=s)) == []


def test_a_wide_integer_range_is_enforced_digit_by_digit() -> None:
    schema = {"type": "integer", "minimum": 1000, "maximum": 60000}
    for v in (1000, 2500, 59999, 60000):
        assert admitted(schema, v), v
    for v in (999, 60001, 99999, -2500, 100000):
        assert not admitted(schema, v), v
    assert unenforced_keywords(tool("t", v=schema)) == []
    age = {"type": "integer", "minimum": 12, "maximum": 85}
    assert [v for v in range(0, 100) if admitted(age, v)] == list(range(12, 86))
    positive = {"type": "integer", "minimum": 1}
    assert admitted(positive, 7) and not admitted(positive, 0) and not admitted(positive, -7)
    assert unenforced_keywords(tool("t", v=positive)) == []
    price = {"type": "number", "minimum": 0}
    assert admitted(price, 12.5) and admitted(price, 0) and not admitted(price, -1.5)
    assert unenforced_keywords(tool("t", v=price)) == []
    fractional = {"type": "number", "maximum": 1.5, "multipleOf": 0.5}
    assert admitted(fractional, -3.25)  # all left to validation
    assert sorted(k for _, k in unenforced_keywords(tool("t", v=fractional))) == [
        "maximum",
        "multipleOf",
    ]


def test_a_narrow_number_range_is_bounded_by_its_whole_parts() -> None:
    frost = {"type": "number", "minimum": -5, "maximum": 3}
    for v in (-5, -4.5, 0, 0.25, 2.75, 3):
        assert admitted(frost, v), v
    for v in (10, 3.5, -5.5, -6, 30):
        assert not admitted(frost, v), v
    assert unenforced_keywords(tool("t", v=frost)) == []
    # An exclusive bound that is no whole number: its last unit's decimals go.
    below = {"type": "number", "minimum": 0, "exclusiveMaximum": 2.5}
    assert admitted(below, 1.75) and admitted(below, 2)
    assert not admitted(below, 2.25) and not admitted(below, 3)


# ── objects and arrays ───────────────────────────────────────────────────

CHANGES = {
    "type": "object",
    "properties": {"email": {"type": "string"}, "phone": {"type": "string"}},
    "minProperties": 1,
}


def test_min_properties_one_needs_a_key_even_at_the_top() -> None:
    nested = tool("update", changes=CHANGES)
    grammar = build_grammar([nested])
    assert grammar is not None
    assert not accepts(grammar, "update-args-changes", "{}")
    assert accepts(grammar, "update-args-changes", '{"phone":"555"}')
    top = ToolSpec("update", "", {**CHANGES, "type": "object"})
    grammar = build_grammar([top])
    assert grammar is not None
    assert not accepts(grammar, "update-args", "{}")
    assert accepts(grammar, "update-args", '{"email":"a@b.c", "phone":"5"}')
    assert unenforced_keywords(top) == []


def test_min_properties_one_of_many_keys() -> None:
    props = {f"k{i}": {"type": "integer"} for i in range(15)}
    top = ToolSpec("many", "", {"type": "object", "properties": props, "minProperties": 1})
    grammar = build_grammar([top])
    assert grammar is not None
    assert not accepts(grammar, "many-args", "{}")
    for text in ('{"k14":1}', '{"k3":1,"k9":2}', '{"k0":1,"k1":2,"k14":3}'):
        assert accepts(grammar, "many-args", text), text
    assert not accepts(grammar, "many-args", '{"k9":1,"k3":2}')  # declaration order


def test_max_properties_one_is_exactly_one_key_and_others_are_reported() -> None:
    one = tool("pick", by={**CHANGES, "maxProperties": 1})
    grammar = build_grammar([one])
    assert grammar is not None
    assert accepts(grammar, "pick-args-by", '{"email":"a"}')
    assert not accepts(grammar, "pick-args-by", '{"email":"a","phone":"b"}')
    two = tool("pick", by={**CHANGES, "minProperties": 2, "maxProperties": 2})
    assert build_grammar([two]) is not None
    assert unenforced_keywords(two) == [("by", "minProperties")]


def test_unique_items_are_left_to_validation_and_reported() -> None:
    schema = {
        "type": "array",
        "items": {"type": "string", "pattern": r"^S-\d{4}-\d{3}$"},
        "uniqueItems": True,
    }
    grammar, rule = rule_of(schema)
    assert accepts(grammar, rule, '["S-2207-014","S-2207-019"]')
    assert not accepts(grammar, rule, '["2207-014"]')  # the items' pattern holds
    assert unenforced_keywords(tool("t", v=schema)) == [("v", "uniqueItems")]
    days = {"type": "array", "items": {"enum": ["mon", "tue"]}, "uniqueItems": True}
    grammar, rule = rule_of(days)
    assert accepts(grammar, rule, '["mon","tue"]')
    assert not accepts(grammar, rule, '["mon","tue","mon"]')  # at most the enum's size


def test_nested_paths_and_refs_are_reported_by_their_path() -> None:
    def trip(host: dict[str, Any]) -> ToolSpec:
        stay = {"type": "object", "properties": {"host": host}}
        schema = {
            "type": "object",
            "$defs": {"stay": stay},
            "properties": {
                "stays": {"type": "array", "items": {"$ref": "#/$defs/stay"}},
                "choice": {"anyOf": [{"type": "integer", "multipleOf": 7}, {"type": "null"}]},
            },
        }
        return ToolSpec("trip", "", schema)

    untyped = trip({"format": "hostname"})
    assert build_grammar([untyped]) is None  # `host` has no type: a free-form value
    assert unenforced_keywords(untyped) == [("(arguments)", "fallback: type None")]
    typed = trip({"type": "string", "format": "hostname"})
    assert build_grammar([typed]) is not None
    assert unenforced_keywords(typed) == [
        ("stays[].host", "format (unchecked)"),
        ("choice", "multipleOf"),
    ]


def test_log_unenforced_logs_what_is_left_to_validation(
    caplog: pytest.LogCaptureFixture,
) -> None:
    loose = tool("book", nights={"type": "integer", "maximum": 400})
    tight = tool("lookup", day={"type": "string", "format": "date"})
    wf = Workflow(name="wf", tools=[loose, tight], terminal_tools=["book"])
    validate_workflow(wf)
    with caplog.at_level(logging.INFO, logger="forge_core.grammar"):
        log_unenforced(wf)
    lines = [r.getMessage() for r in caplog.records if "validation" in r.getMessage()]
    assert len(lines) == 1
    assert "book" in lines[0] and "nights: maximum" in lines[0]


def test_the_server_logs_it_when_it_accepts_a_workflow(caplog: pytest.LogCaptureFixture) -> None:
    """What validate_workflow logged before the log moved to the grammar
    (issue 37: workflow.py no longer imports grammar.py)."""
    loose = {"type": "object", "properties": {"nights": {"type": "integer", "maximum": 400}}}
    msg = wpb.Workflow(
        name="wf",
        tools=[wpb.ToolSpec(name="book", parameters_json_schema=json.dumps(loose))],
        terminal_tools=["book"],
    )
    with caplog.at_level(logging.INFO, logger="forge_core.grammar"):
        workflow_from_pb(msg)
    lines = [r.getMessage() for r in caplog.records if "validation" in r.getMessage()]
    assert len(lines) == 1 and "book" in lines[0] and "nights: maximum" in lines[0]


def test_evidence_numbers_outside_the_bounds_are_not_offered() -> None:
    """A report value or a number the request wrote that the schema's
    bounds forbid could only be rejected: the range is offered instead."""
    months = tool("freeze", months={"type": "integer", "minimum": 1, "maximum": 3})
    grammar = build_grammar([months], bound={"freeze.months": [2, 12]})
    assert grammar is not None
    assert accepts(grammar, "freeze-args-months", "2")
    assert not accepts(grammar, "freeze-args-months", "12")
    grammar = build_grammar([months], bound={"freeze.months": [12]})
    assert grammar is not None
    assert [v for v in range(0, 13) if accepts(grammar, "freeze-args-months", str(v))] == [1, 2, 3]


def test_a_grounded_pattern_parameter_takes_the_seen_values_that_match() -> None:
    """Under grounding, an id with a pattern takes the conversation's values
    that match it; when none does, the pattern's rule (never an invented
    value of another shape)."""
    refill = tool("refill", rx_number={"type": "string", "pattern": r"^\d{7}$"})
    seen = ["Rosa Delgado", "6610482", "1961-08-30", "12345678"]
    grammar = build_grammar([refill], grounded=seen)
    assert grammar is not None
    admitted = [v for v in seen if accepts(grammar, "refill-args-rx-number", json.dumps(v))]
    assert admitted == ["6610482"]
    assert not accepts(grammar, "refill-args-rx-number", '"1000000"')
    grammar = build_grammar([refill], grounded=["Rosa Delgado"])
    assert grammar is not None
    assert accepts(grammar, "refill-args-rx-number", '"1000000"')
    assert not accepts(grammar, "refill-args-rx-number", '"Rosa Delgado"')


def test_validation_checks_the_formats_jsonschema_knows() -> None:
    """A format the grammar does not write is still checked where jsonschema
    can (the tool's validator has a format checker)."""
    host = tool("ping", address={"type": "string", "format": "ipv6"})
    assert not host.validator.is_valid({"address": "not an address"})
    assert host.validator.is_valid({"address": "::1"})
    day = tool("book", day={"type": "string", "format": "date"})
    assert not day.validator.is_valid({"day": "tomorrow"})


def test_an_any_of_of_required_keys_holds_with_the_properties_beside_it() -> None:
    """`anyOf: [{required: [a]}, {required: [b]}]` beside `properties` is an
    object that has one of the two: each branch is read with the keywords
    beside it (it used to be a branch with no type, and the tool fell back)."""
    contact = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "email": {"type": "string"},
            "phone": {"type": "integer"},
        },
        "required": ["name"],
        "anyOf": [{"required": ["email"]}, {"required": ["phone"]}],
        "additionalProperties": False,
    }
    grammar = build_grammar([tool("notify", contact=contact)])
    assert grammar is not None
    assert accepts(grammar, "notify-args-contact", '{"name":"Ann","email":"a@b.c"}')
    assert accepts(grammar, "notify-args-contact", '{"name":"Ann","phone":5}')
    assert not accepts(grammar, "notify-args-contact", '{"name":"Ann"}')
