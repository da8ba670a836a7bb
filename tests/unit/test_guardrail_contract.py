"""Every guardrail switch of the contract reaches the engine and the three SDKs.

The switches are the fields of proto `Guardrails` (proto/forge/v1/
workflow.proto): `disable_<switch>` turns the engine's RunOptions.<switch>
off, and `enforcement` picks the step enforcement mode. The server reads
them off the message's descriptor (convert.GUARDRAIL_SWITCHES); these tests
check that the engine has an option for each and that every SDK lets a
caller set each one: the Python SDK by introspection and a real proto
round trip, Go and TypeScript by their sources' idiomatic spellings (the
option declared and copied into the message). A guardrail added to the
proto but not to an SDK fails here, naming the field.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

import forge.v1.workflow_pb2 as wpb
from forge_client import RunOptions as SdkRunOptions
from forge_core.guardrails import engine_set
from forge_core.workflow import RunOptions
from forge_server.convert import GUARDRAIL_SWITCHES, options_from_pb

ROOT = Path(__file__).resolve().parents[2]
FIELDS = [f.name for f in wpb.Guardrails.DESCRIPTOR.fields]
SWITCHES = [name for name in FIELDS if name.startswith("disable_")]


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


def pascal(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def sources(folder: str, suffix: str) -> str:
    """The hand-written sources of an SDK (no generated code, no tests)."""
    files = [
        p
        for p in sorted((ROOT / folder).rglob(f"*{suffix}"))
        if "gen" not in p.relative_to(ROOT / folder).parts
        and "node_modules" not in p.parts
        and not p.name.endswith(("_test.go", ".test.ts", "_pb.ts"))
    ]
    assert files, f"no {suffix} sources under {folder}"
    return "\n".join(p.read_text() for p in files)


def test_the_contract_has_the_switches_this_test_reads() -> None:
    assert "disable_grounding" in SWITCHES and "enforcement" in FIELDS
    assert [name for name, _ in GUARDRAIL_SWITCHES] == SWITCHES


@pytest.mark.parametrize("field", SWITCHES)
def test_the_engine_has_an_option_each_switch_turns_off(field: str) -> None:
    switch = field.removeprefix("disable_")
    defaults = {f.name: f.default for f in dataclasses.fields(RunOptions)}
    assert defaults.get(switch) is True, f"RunOptions.{switch} (for Guardrails.{field})"
    guardrails = wpb.Guardrails()
    setattr(guardrails, field, True)
    opts = options_from_pb(wpb.RunOptions(guardrails=guardrails))
    assert getattr(opts, switch) is False
    others = [s.removeprefix("disable_") for s in SWITCHES if s != field]
    assert all(getattr(opts, other) is True for other in others)


def test_every_engine_guardrail_names_a_real_switch() -> None:
    options = {f.name for f in dataclasses.fields(RunOptions)}
    for guardrail in engine_set.ALL:
        assert guardrail.switch == "" or guardrail.switch in options, guardrail.name


@pytest.mark.parametrize("field", FIELDS)
def test_the_python_sdk_sets_each_field(field: str) -> None:
    option = field.removeprefix("disable_")
    names = {f.name for f in dataclasses.fields(SdkRunOptions)}
    assert option in names, f"forge_client.RunOptions has no {option!r} (Guardrails.{field})"
    value: object = False if field in SWITCHES else "constraint"
    sent = SdkRunOptions(**{option: value}).to_proto().guardrails  # type: ignore[arg-type]
    expected = True if field in SWITCHES else wpb.ENFORCEMENT_MODE_CONSTRAINT
    assert getattr(sent, field) == expected
    default = SdkRunOptions().to_proto().guardrails
    assert not getattr(default, field) or field not in SWITCHES


@pytest.mark.parametrize("field", FIELDS)
def test_the_go_sdk_declares_and_sends_each_field(field: str) -> None:
    go = sources("clients/go", ".go")
    name = pascal(field)
    kind = "bool" if field in SWITCHES else r"\w+"
    assert re.search(rf"^\s*{name}\s+{kind}\s*$", go, re.M), f"Go Guardrails.{name}"
    assert re.search(rf"\b{name}:\s*g\.{name}\b", go), f"Go sends Guardrails.{name}"


@pytest.mark.parametrize("field", FIELDS)
def test_the_typescript_sdk_declares_and_sends_each_field(field: str) -> None:
    ts = sources("clients/typescript/src", ".ts")
    option = camel(field.removeprefix("disable_"))
    assert re.search(rf"^\s*{option}\?:", ts, re.M), f"TypeScript RunOptions.{option}"
    assert re.search(rf"\b{camel(field)}:\s*\n?\s*o\.{option}\b", ts), (
        f"TypeScript sends guardrails.{camel(field)}"
    )
