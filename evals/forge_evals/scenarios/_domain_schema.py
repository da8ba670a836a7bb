"""Schema and check helpers shared by the domains scenario modules."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from forge_client import Workflow
from forge_evals.scenario import RefCall, Scenario

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


def declined_scenario(
    tag: str,
    name: str,
    description: str,
    user_message: str,
    build: Callable[[], Workflow],
    reason: str,
) -> Scenario:
    """A request no tool of `build`'s workflow serves: the run declines
    through `decline_request` and calls no other tool."""
    others = tuple(n for n in build().tools if n != "decline_request")
    return Scenario(
        name=name,
        description=description,
        tags=(tag, "decline"),
        user_message=user_message,
        build=build,
        validate=lambda tool, args: tool == "decline_request",
        ideal_iterations=1,
        reference=(RefCall("decline_request", {"reason": reason}),),
        forbidden_tools=others,
    )


# The held-out group (heldout, heldout_part2): written after `domains` was
# tuned on, in other businesses, and run once before any tuning for it.
HELDOUT_TAG = "heldout"


def enum_param(*values: str, **extra: Any) -> dict[str, Any]:
    return {"type": "string", "enum": list(values), **extra}


def id_list(**items: Any) -> dict[str, Any]:
    """A non-empty array of distinct strings (`items` adds to the item schema)."""
    return {
        "type": "array",
        "items": {"type": "string", **items},
        "minItems": 1,
        "uniqueItems": True,
    }


# The second held-out group (heldout2, heldout2_part2): sixteen more
# businesses, written after `heldout` had been tuned on, run once before any
# tuning for it.
HELDOUT2_TAG = "heldout2"


# The third held-out group (heldout3, heldout3_part2): sixteen more
# businesses, written after `heldout2` had been tuned on, run once before any
# tuning for it.
HELDOUT3_TAG = "heldout3"


# The fourth held-out group (heldout4, heldout4_part2): sixteen more
# businesses, written after `heldout3` had been tuned on, run once before any
# tuning for it.
HELDOUT4_TAG = "heldout4"


# The fifth held-out group (heldout5, heldout5_part2): sixteen more
# businesses, written after `heldout4` had been tuned on, run once before any
# tuning for it.
HELDOUT5_TAG = "heldout5"


# The sixth held-out group (heldout6, heldout6_part2): sixteen more
# businesses, written after `heldout5` had been tuned on, run once before any
# tuning for it.
HELDOUT6_TAG = "heldout6"
# The seventh held-out group (heldout7, heldout7_part2, heldout7_part2_forms):
# written after heldout6's failures were looked at, run once before any
# tuning for it.
HELDOUT7_TAG = "heldout7"
# The eighth held-out group (heldout8, heldout8_listings, heldout8_part2):
# written from the user's side only after heldout7 had been looked at, run
# once before any tuning for it.
HELDOUT8_TAG = "heldout8"
# The ninth held-out group (heldout9, heldout9_replies, heldout9_listings,
# heldout9_part2): written from the user's side only after heldout8 had been
# looked at, run once before any tuning for it.
HELDOUT9_TAG = "heldout9"
# The tenth held-out group (heldout10, heldout10_replies, heldout10_listings,
# heldout10_part2): written from the user's side only after heldout9 had been
# looked at, run once before any tuning for it.
HELDOUT10_TAG = "heldout10"
# The eleventh held-out group (heldout11 and heldout11_part2, with their
# companion modules): written from the user's side only after heldout10 had
# been looked at, run once before any tuning for it.
HELDOUT11_TAG = "heldout11"
# The twelfth held-out group (heldout12 and heldout12_part2, with their
# companion modules): written from the user's side only after heldout11 had
# been looked at, run once before any tuning for it.
HELDOUT12_TAG = "heldout12"
# The thirteenth held-out group (heldout13 and heldout13_part2, with their
# companion modules): written from the user's side only after heldout12 had
# been looked at, run once before any tuning for it.
HELDOUT13_TAG = "heldout13"


# Value checks the held-out groups share.
def compact(value: Any) -> str:
    """The value as text without spaces, dashes or dots, upper-cased."""
    return re.sub(r"[\s\-.]", "", str(value if value is not None else "")).upper()


def exact(value: Any, expected: str) -> bool:
    """Equal as text after trimming space; case counts (API ids are case-sensitive)."""
    return isinstance(value, str) and value.strip() == expected


def alnum(value: Any) -> str:
    """`value` with only its letters and digits, upper case ("BH15 1HJ" -> "BH151HJ")."""
    return "".join(ch for ch in str(value) if ch.isalnum()).upper()
