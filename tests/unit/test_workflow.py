"""Unit tests for workflow validation and run options (forge_core.workflow)."""

from __future__ import annotations

from typing import Any

import pytest

from forge_core.workflow import (
    MAX_TOOLS,
    Prerequisite,
    RunOptions,
    ToolSpec,
    Workflow,
    WorkflowError,
    check_parameters_schema,
    validate_workflow,
)

ID_PARAMS = {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}


def tools(*names: str) -> list[ToolSpec]:
    return [ToolSpec(n, f"{n} tool", ID_PARAMS) for n in names]


def workflow(
    tool_list: list[ToolSpec] | None = None,
    required: list[str] | None = None,
    terminal: list[str] | None = None,
) -> Workflow:
    return Workflow(
        name="wf",
        tools=tools("fetch", "check", "submit") if tool_list is None else tool_list,
        required_steps=["fetch"] if required is None else required,
        terminal_tools=["submit"] if terminal is None else terminal,
    )


def field_of(wf: Workflow) -> str:
    with pytest.raises(WorkflowError) as info:
        validate_workflow(wf)
    return info.value.field


def test_valid_workflow_passes() -> None:
    validate_workflow(workflow())


def test_workflow_error_message_names_the_field() -> None:
    with pytest.raises(WorkflowError) as info:
        validate_workflow(workflow(terminal=["nope"]))
    err = info.value
    assert isinstance(err, ValueError)
    assert err.field == "workflow.terminal_tools[0]"
    assert "'nope' is not among workflow.tools" in err.description
    assert str(err) == f"{err.field}: {err.description}"


# --------------------------------------------------------------------------- tools


def test_no_tools() -> None:
    assert field_of(workflow(tool_list=[], required=[], terminal=[])) == "workflow.tools"


def test_too_many_tools() -> None:
    many = tools(*(f"t{i}" for i in range(MAX_TOOLS + 1)))
    assert field_of(workflow(many, required=[], terminal=["t0"])) == "workflow.tools"
    validate_workflow(workflow(many[:MAX_TOOLS], required=[], terminal=["t0"]))


@pytest.mark.parametrize("bad", ["", "1fetch", "has space", "fetch!", "a" * 65, "-x", "ünï"])
def test_bad_tool_name(bad: str) -> None:
    wf = workflow([*tools("fetch", "submit"), ToolSpec(bad)], required=[])
    with pytest.raises(WorkflowError) as info:
        validate_workflow(wf)
    assert info.value.field == "workflow.tools[2].name"
    assert repr(bad) in info.value.description


@pytest.mark.parametrize("good", ["_x", "a" * 64, "db.lookup-v2", "Fetch_2"])
def test_good_tool_names(good: str) -> None:
    validate_workflow(workflow([*tools("fetch", "submit"), ToolSpec(good)], required=[]))


def test_duplicate_tool_name() -> None:
    wf = workflow(tools("submit", "submit", "fetch"), required=[])
    with pytest.raises(WorkflowError) as info:
        validate_workflow(wf)
    assert info.value.field == "workflow.tools[1].name"
    assert "duplicate tool name 'submit'" in info.value.description


@pytest.mark.parametrize("index", [0, 1])
def test_non_object_parameters_schema(index: int) -> None:
    tool_list = tools("fetch", "submit")
    tool_list[index] = ToolSpec(tool_list[index].name, parameters={"type": "string"})
    with pytest.raises(WorkflowError) as info:
        validate_workflow(workflow(tool_list, required=[]))
    assert info.value.field == f"workflow.tools[{index}].parameters_json_schema"
    assert "must describe an object" in info.value.description


@pytest.mark.parametrize(
    ("schema", "where"),
    [
        ({"type": 12}, "at 'type'"),
        ({"type": "object", "properties": {"id": {"type": "strin"}}}, "at 'properties/id/type'"),
        ({"type": "object", "required": "id"}, "at 'required'"),
    ],
)
def test_invalid_json_schema(schema: dict[str, Any], where: str) -> None:
    tool_list = [ToolSpec("fetch", parameters=schema), *tools("submit")]
    with pytest.raises(WorkflowError) as info:
        validate_workflow(workflow(tool_list, required=[]))
    assert info.value.field == "workflow.tools[0].parameters_json_schema"
    assert "is not a valid JSON Schema" in info.value.description
    assert where in info.value.description


def test_parameters_must_be_a_json_object() -> None:
    with pytest.raises(WorkflowError) as info:
        check_parameters_schema(["not", "a", "schema"], "workflow.tools[3].parameters_json_schema")
    assert info.value.field == "workflow.tools[3].parameters_json_schema"
    assert "must be a JSON object" in info.value.description


def test_schema_without_type_counts_as_object() -> None:
    check_parameters_schema({"properties": {"x": {"type": "integer"}}}, "p")
    check_parameters_schema({}, "p")


# --------------------------------------------------------------------------- prerequisites


def test_unknown_prerequisite() -> None:
    tool_list = tools("fetch", "submit")
    tool_list[1].prerequisites = [Prerequisite("fetch"), Prerequisite("ghost")]
    with pytest.raises(WorkflowError) as info:
        validate_workflow(workflow(tool_list, required=[]))
    assert info.value.field == "workflow.tools[1].prerequisites[1].tool"
    assert "'ghost'" in info.value.description


def test_self_prerequisite() -> None:
    tool_list = tools("fetch", "submit")
    tool_list[0].prerequisites = [Prerequisite("fetch", "id")]
    with pytest.raises(WorkflowError) as info:
        validate_workflow(workflow(tool_list, required=[]))
    assert info.value.field == "workflow.tools[0].prerequisites[0].tool"
    assert "own prerequisite" in info.value.description


def test_prerequisite_on_a_later_tool_is_fine() -> None:
    tool_list = tools("fetch", "submit")
    tool_list[0].prerequisites = [Prerequisite("submit")]
    validate_workflow(workflow(tool_list, required=[]))


def test_prerequisite_cycle_is_rejected() -> None:
    tool_list = tools("a", "b", "submit")
    tool_list[0].prerequisites = [Prerequisite("b")]
    tool_list[1].prerequisites = [Prerequisite("a")]
    with pytest.raises(WorkflowError) as info:
        validate_workflow(workflow(tool_list, required=["a"]))
    assert info.value.field.startswith("workflow.tools[")
    assert ".prerequisites[" in info.value.field


# --------------------------------------------------------------------------- steps / terminals


def test_unknown_required_step() -> None:
    assert field_of(workflow(required=["ghost"])) == "workflow.required_steps[0]"


def test_duplicate_required_step() -> None:
    with pytest.raises(WorkflowError) as info:
        validate_workflow(workflow(required=["fetch", "check", "fetch"]))
    assert info.value.field == "workflow.required_steps[2]"
    assert "duplicate step 'fetch'" in info.value.description


def test_no_terminal_tool() -> None:
    assert field_of(workflow(terminal=[])) == "workflow.terminal_tools"


def test_unknown_terminal_tool() -> None:
    assert field_of(workflow(terminal=["submit", "ghost"])) == "workflow.terminal_tools[1]"


def test_terminal_tool_cannot_be_required() -> None:
    with pytest.raises(WorkflowError) as info:
        validate_workflow(workflow(required=["fetch", "submit"], terminal=["submit"]))
    assert info.value.field == "workflow.terminal_tools[0]"
    assert "cannot also be a required step" in info.value.description


def test_first_problem_is_reported() -> None:
    # A bad name comes before the (also wrong) terminal and step lists.
    wf = workflow([ToolSpec("bad name")], required=["ghost"], terminal=["ghost"])
    assert field_of(wf) == "workflow.tools[0].name"


# --------------------------------------------------------------------------- model helpers


def test_workflow_helpers() -> None:
    wf = Workflow(
        name="audit",
        tools=tools("fetch", "submit", "cancel"),
        terminal_tools=["submit", "cancel"],
        description="Audit one record.",
    )
    assert wf.terminal_set == frozenset({"submit", "cancel"})
    assert wf.tool("fetch") is wf.tools[0]
    assert wf.tool("ghost") is None
    prompt = wf.default_system_prompt()
    assert "'audit'" in prompt
    assert "Audit one record." in prompt


def test_tool_spec_validator_uses_its_parameters() -> None:
    spec = ToolSpec("fetch", parameters=ID_PARAMS)
    assert spec.validator.is_valid({"id": "1"})
    assert not spec.validator.is_valid({})
    assert not spec.validator.is_valid({"id": 1})
    default = ToolSpec("noargs")
    assert default.parameters == {"type": "object", "properties": {}}
    assert default.validator.is_valid({})


# --------------------------------------------------------------------------- run options


def test_default_options_are_valid() -> None:
    RunOptions().validate()


@pytest.mark.parametrize(
    ("name", "low", "high"),
    [
        ("max_iterations", 1, 1000),
        ("max_retries", 0, 100),
        ("max_tool_errors", 0, 100),
        ("max_tokens", 1, 65536),
    ],
)
def test_integer_option_bounds(name: str, low: int, high: int) -> None:
    def options(value: int) -> RunOptions:
        changes: dict[str, Any] = {name: value}
        return RunOptions(**changes)

    options(low).validate()
    options(high).validate()
    for value in (low - 1, high + 1):
        with pytest.raises(WorkflowError) as info:
            options(value).validate()
        assert info.value.field == f"options.{name}"
        assert str(value) in info.value.description


@pytest.mark.parametrize("ok", [0.0, 1.0, 2.0])
def test_temperature_in_range(ok: float) -> None:
    RunOptions(temperature=ok).validate()


@pytest.mark.parametrize("bad", [-0.01, 2.01, float("nan"), float("inf")])
def test_temperature_out_of_range(bad: float) -> None:
    with pytest.raises(WorkflowError) as info:
        RunOptions(temperature=bad).validate()
    assert info.value.field == "options.temperature"


@pytest.mark.parametrize("bad", [0.0, -1.0])
def test_tool_timeout_must_be_positive(bad: float) -> None:
    with pytest.raises(WorkflowError) as info:
        RunOptions(tool_timeout_s=bad).validate()
    # Named as the wire field, which is in milliseconds.
    assert info.value.field == "options.tool_timeout_ms"
    RunOptions(tool_timeout_s=0.001).validate()


# --------------------------------------------------------------------------- $ref


def object_with(prop: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"a": prop}, **extra}


@pytest.mark.parametrize(
    ("schema", "says"),
    [
        (object_with({"$ref": "file:///etc/passwd"}), "'file:///etc/passwd' at '/properties/a'"),
        (object_with({"$ref": "http://127.0.0.1:9/x.json"}), "not a reference inside"),
        (object_with({"$ref": "other.json#/x"}), "not a reference inside"),
        (
            object_with({"$id": "http://example.com/s/", "properties": {"b": {"$ref": "o.json"}}}),
            "embedded schema resources",
        ),
        (object_with({"$dynamicRef": "http://example.com/m#meta"}), "$dynamicRef"),
        (object_with({"$ref": "#/$defs/missing"}), "does not resolve"),
    ],
    ids=["file", "http", "relative", "relative-after-$id", "dynamicRef", "dangling"],
)
def test_only_references_inside_the_schema_are_allowed(schema: dict[str, Any], says: str) -> None:
    wf = workflow([ToolSpec("t", "", schema), *tools("submit")], required=[])
    with pytest.raises(WorkflowError) as err:
        validate_workflow(wf)
    assert err.value.field == "workflow.tools[0].parameters_json_schema"
    assert says in err.value.description


def test_local_references_and_ref_like_data_pass() -> None:
    schema = object_with(
        {"$ref": "#/$defs/Item"},
        **{"$id": "https://example.com/tool.json", "$defs": {"Item": {"type": "string"}}},
    )
    schema["properties"]["b"] = {"default": {"$ref": "http://example.com/x"}}  # data
    validate_workflow(workflow([ToolSpec("t", "", schema), *tools("submit")], required=[]))
    errors = [e.message for e in ToolSpec("t", "", schema).validator.iter_errors({"a": 5})]
    assert errors == ["5 is not of type 'string'"]


def test_the_validator_never_reads_a_referenced_file(tmp_path: Any) -> None:
    """Even a ToolSpec built around validation refuses to retrieve: the file's
    schema would accept the value; unresolvable is the only answer."""
    import json

    from referencing.exceptions import Unresolvable

    target = tmp_path / "accepts-anything.json"
    target.write_text(json.dumps({"type": "integer"}))
    spec = ToolSpec("t", "", object_with({"$ref": target.as_uri()}))
    with pytest.raises(Unresolvable):
        list(spec.validator.iter_errors({"a": 5}))
