"""The Python SDK's tools from functions: a workflow built anew for every run
gets the argument models its tools had before, and only equal signatures
share one."""

from __future__ import annotations

import json

from forge_client import Workflow
from forge_client.tools import Tool


def build(unit_default: object = "c") -> Workflow:
    """A workflow whose tools are closures made on each call, as a handler
    that builds its workflow per request makes them."""
    wf = Workflow("weather", "Look up the weather.")

    @wf.tool(required=True)
    def get_weather(city: str, unit: str = unit_default) -> str:  # type: ignore[assignment]
        """Get the weather.

        Args:
            city: The city.
        """
        return f"sunny in {city} ({unit})"

    @wf.tool(terminal=True)
    def report(summary: str) -> str:
        """Report."""
        return summary

    return wf


def tools(wf: Workflow) -> dict[str, Tool]:
    return wf.tools


async def test_a_rebuilt_workflow_reuses_its_tools_argument_models() -> None:
    first, second = tools(build()), tools(build())
    assert first["get_weather"].fn is not second["get_weather"].fn
    for name in first:
        assert first[name].args_model is second[name].args_model
    # The schema text made for the model once serves both.
    assert first["get_weather"]._schema_json() is second["get_weather"]._schema_json()
    schema = json.loads(second["get_weather"]._schema_json())
    assert schema["properties"]["city"]["description"] == "The city."
    assert schema["properties"]["unit"]["default"] == "c"
    assert await second["get_weather"].invoke('{"city": "Oslo"}') == "sunny in Oslo (c)"


async def test_other_defaults_get_other_models() -> None:
    base = tools(build())["get_weather"].args_model
    other = tools(build("f"))["get_weather"].args_model
    assert other is not base
    assert other is not None and other.model_validate({"city": "x"}).unit == "f"  # type: ignore[attr-defined]
    # 1 and True are equal keys of a dict, not equal defaults.
    one = tools(build(1))["get_weather"].args_model
    true = tools(build(True))["get_weather"].args_model
    assert one is not true


async def test_an_unhashable_default_makes_a_model_each_time() -> None:
    first, second = tools(build(["c"])), tools(build(["c"]))
    assert first["get_weather"].args_model is not second["get_weather"].args_model
    assert await second["get_weather"].invoke('{"city": "Rome"}') == "sunny in Rome (['c'])"
    # The tools without such a default still share theirs.
    assert first["report"].args_model is second["report"].args_model
