"""Schema and check helpers shared by the domains scenario modules."""

from __future__ import annotations

from typing import Any

from forge_client import Workflow

TAG = "domains"


def obj(required: list[str] | None = None, **props: dict[str, Any]) -> dict[str, Any]:
    """A JSON Schema object; every property is required unless `required` says."""
    return {
        "type": "object",
        "properties": props,
        "required": list(props) if required is None else required,
        "additionalProperties": False,
    }


def text_param(description: str, **extra: Any) -> dict[str, Any]:
    return {"type": "string", "description": description, **extra}


def exact_ids(value: Any, expected: list[str]) -> bool:
    """`value` is a list of exactly the `expected` ids, in any order, none twice."""
    return (
        isinstance(value, list)
        and len(value) == len(expected)
        and sorted(str(v).strip() for v in value) == sorted(expected)
    )


def decline_tool(wf: Workflow) -> None:
    @wf.tool(terminal=True)
    def decline_request(reason: str) -> str:
        """Tell the user this request is outside what this assistant can do. Ends the task."""
        return f"Declined: {reason}"
