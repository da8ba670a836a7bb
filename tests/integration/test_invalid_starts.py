"""Start messages the server must refuse, one row per shape (issue 22).

Each row is a start message a careless or hostile client can send through
the raw generated stubs. Every one must end the stream with a typed
INVALID_ARGUMENT naming the field, and the server must go on serving. Before
issue 22 fifteen of these shapes were accepted and four reached UNKNOWN.
The model is a ScriptedBackend; everything else is the production server.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import grpc
import pytest

from forge.v1 import forge_service_pb2 as pb
from forge.v1 import messages_pb2 as mpb
from tests.helpers import address, running_server
from tests.integration.test_bad_input import (
    _with_bad_utf8,
    raw_run,
    rejection,
    start_request,
    still_serves,
    weather_backend,
)


@dataclass(frozen=True)
class Case:
    mutate: Callable[[pb.RunRequest], None]
    reason: str
    field: str
    says: str
    # Serialise with this placeholder's bytes replaced by invalid UTF-8.
    bad_utf8: str = ""


def _name(value: str) -> Callable[[pb.RunRequest], None]:
    def mutate(r: pb.RunRequest) -> None:
        r.start.workflow.name = value

    return mutate


def _schema(text: str, tool: int = 0) -> Callable[[pb.RunRequest], None]:
    def mutate(r: pb.RunRequest) -> None:
        r.start.workflow.tools[tool].parameters_json_schema = text

    return mutate


def _city(extra: str) -> str:
    return '{"type": "object", "properties": {"city": {"type": "string"' + extra + "}}}"


def _match_arg(arg: str) -> Callable[[pb.RunRequest], None]:
    def mutate(r: pb.RunRequest) -> None:
        r.start.workflow.tools[1].prerequisites.add(tool="get_weather", match_arg=arg)

    return mutate


def _timeout(ms: int) -> Callable[[pb.RunRequest], None]:
    def mutate(r: pb.RunRequest) -> None:
        r.start.options.tool_timeout_ms = ms

    return mutate


def _orphan_result(r: pb.RunRequest) -> None:
    r.start.prior_messages.add(role=mpb.ROLE_USER, content="Weather in Rome?")
    r.start.prior_messages.add(
        role=mpb.ROLE_TOOL, content="72F", tool_call_id="never-issued", tool_name="get_weather"
    )


def _result_before_its_call(r: pb.RunRequest) -> None:
    r.start.prior_messages.add(
        role=mpb.ROLE_TOOL, content="72F", tool_call_id="c1", tool_name="get_weather"
    )
    r.start.prior_messages.add(
        role=mpb.ROLE_ASSISTANT,
        tool_calls=[mpb.ToolCall(id="c1", name="get_weather", arguments_json="{}")],
    )


def _tool_name(value: str) -> Callable[[pb.RunRequest], None]:
    def mutate(r: pb.RunRequest) -> None:
        r.start.workflow.tools[0].name = value

    return mutate


SCHEMA = "workflow.tools[0].parameters_json_schema"
PREREQ = "workflow.tools[1].prerequisites[0].match_arg"

CASES = {
    "empty workflow name": Case(_name(""), "INVALID_WORKFLOW", "workflow.name", "empty"),
    "whitespace workflow name": Case(_name(" \t "), "INVALID_WORKFLOW", "workflow.name", "empty"),
    "100,000-character workflow name": Case(
        _name("w" * 100_000), "INVALID_WORKFLOW", "workflow.name", "at most"
    ),
    "control character in workflow name": Case(
        _name("weather\x00report"), "INVALID_WORKFLOW", "workflow.name", "control character"
    ),
    "newline in workflow name": Case(
        _name("weather\nINFO forged log line"), "INVALID_WORKFLOW", "workflow.name", "control"
    ),
    "file $ref": Case(
        _schema('{"type": "object", "properties": {"c": {"$ref": "file:///etc/passwd"}}}'),
        "INVALID_WORKFLOW",
        SCHEMA,
        "not a reference inside this schema",
    ),
    "http $ref": Case(
        _schema('{"type": "object", "properties": {"c": {"$ref": "http://10.0.0.1/x.json"}}}'),
        "INVALID_WORKFLOW",
        SCHEMA,
        "not a reference inside this schema",
    ),
    "local $ref to nowhere": Case(
        _schema('{"type": "object", "properties": {"c": {"$ref": "#/$defs/missing"}}}'),
        "INVALID_WORKFLOW",
        SCHEMA,
        "does not resolve",
    ),
    "NaN in a schema": Case(
        _schema('{"type": "object", "properties": {"n": {"type": "number", "maximum": NaN}}}'),
        "INVALID_WORKFLOW",
        SCHEMA,
        "NaN",
    ),
    "Infinity in a schema": Case(
        _schema(
            '{"type": "object", "properties": {"n": {"type": "number", "minimum": -Infinity}}}'
        ),
        "INVALID_WORKFLOW",
        SCHEMA,
        "Infinity",
    ),
    "NaN in a default": Case(_schema(_city(', "default": NaN')), "INVALID_WORKFLOW", SCHEMA, "NaN"),
    "pattern with an overflowing repeat": Case(
        _schema(_city(', "pattern": "a{99999999999}"')), "INVALID_WORKFLOW", SCHEMA, "repetition"
    ),
    "pattern with a huge repeat": Case(
        _schema(_city(', "pattern": "^(x{1,50000})$"')), "INVALID_WORKFLOW", SCHEMA, "repetition"
    ),
    "patternProperties key with an overflowing repeat": Case(
        _schema('{"type": "object", "patternProperties": {"a{4294967296}": {}}}'),
        "INVALID_WORKFLOW",
        SCHEMA,
        "repetition",
    ),
    "pattern that is no regex": Case(
        _schema(_city(', "pattern": "(unclosed"')), "INVALID_WORKFLOW", SCHEMA, "regex"
    ),
    "prerequisite match_arg missing from the tool": Case(
        _match_arg("no_such_arg"), "INVALID_WORKFLOW", PREREQ, "no_such_arg"
    ),
    "prerequisite match_arg missing from the prerequisite": Case(
        _match_arg("weather"), "INVALID_WORKFLOW", PREREQ, "get_weather"
    ),
    "tool timeout of 2^32-1 ms (a negative int32 from the client)": Case(
        _timeout(2**32 - 1), "INVALID_WORKFLOW", "options.tool_timeout_ms", "at most"
    ),
    "enum value the contract does not define": Case(
        lambda r: setattr(r.start.options, "compaction", 99),
        "INVALID_WORKFLOW",
        "options.compaction",
        "unknown enum value",
    ),
    "prior tool result no prior call issued": Case(
        _orphan_result,
        "INVALID_WORKFLOW",
        "start.prior_messages[1].tool_call_id",
        "never-issued",
    ),
    "prior tool result before its call": Case(
        _result_before_its_call,
        "INVALID_WORKFLOW",
        "start.prior_messages[0].tool_call_id",
        "c1",
    ),
    "invalid UTF-8 in a tool name": Case(
        _tool_name("PLACEHOLDER"), "INVALID_REQUEST", "", "UTF-8", bad_utf8="PLACEHOLDER"
    ),
    "invalid UTF-8 in the workflow name": Case(
        _name("PLACEHOLDER"), "INVALID_REQUEST", "", "UTF-8", bad_utf8="PLACEHOLDER"
    ),
    "JSON nested too deep in a schema": Case(
        _schema('{"type": "object", "default": ' + "[" * 100 + "]" * 100 + "}"),
        "INVALID_WORKFLOW",
        SCHEMA,
        "deeper than 64",
    ),
}


@pytest.mark.parametrize("case", CASES.values(), ids=list(CASES))
async def test_invalid_start_is_refused_with_the_field_named(case: Case) -> None:
    request = start_request()
    case.mutate(request)
    data = request.SerializeToString()
    if case.bad_utf8:
        data = _with_bad_utf8(request, case.bad_utf8)
    async with running_server(weather_backend()) as server:
        async with grpc.aio.insecure_channel(address(server)) as channel:
            run = raw_run(channel)
            await run.write(data)
            status, err = await rejection(run)
        await still_serves(server)
    assert status.code() == grpc.StatusCode.INVALID_ARGUMENT, status.details()
    assert (err.reason, err.field) == (case.reason, case.field), err.message
    assert case.says in err.message
    assert len(err.message.encode()) <= 512
