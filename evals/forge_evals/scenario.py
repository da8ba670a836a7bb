"""The scenario format: one multi-step task with deterministic tools.

A scenario builds a fresh `forge_client.Workflow` per run (its tools are plain
Python functions whose results depend only on their arguments and on what
happened earlier in the same run), names the user's request, and judges the
run by the arguments of the terminal tool call (`validate`). Its `reference`
is the shortest correct sequence of calls: the oracle backend replays it, and
its length is the ideal iteration count.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from forge_client import Workflow


@dataclass(frozen=True)
class RefCall:
    """One call of a scenario's reference solution."""

    tool: str
    args: dict[str, Any] = field(default_factory=dict)


# validate(terminal tool name, its arguments) -> correct?
Validator = Callable[[str, dict[str, Any]], bool]


@dataclass(frozen=True)
class Scenario:
    name: str
    # What the scenario measures, one line (shown in reports).
    description: str
    tags: tuple[str, ...]
    user_message: str
    # A fresh workflow per run: stateful tools (a call counter, an audit in
    # progress) must not leak from one run into the next.
    build: Callable[[], Workflow]
    validate: Validator
    # Model calls a perfect model needs (the reference solution's length).
    ideal_iterations: int
    reference: tuple[RefCall, ...]
    max_iterations: int = 10
    # Context budget (tokens) for this scenario's runs instead of the backend's.
    budget_tokens: int | None = None
    # Tools a correct run never calls (a destructive distractor, or every
    # action of a request to decline): a run that executed one is wrong even
    # when its terminal call is right, since the harm is already done.
    forbidden_tools: tuple[str, ...] = ()

    def shape(self) -> WorkflowShape:
        """Required steps, terminal tools and prerequisites of the workflow."""
        wf = self.build()
        return WorkflowShape(
            tools=list(wf.tools),
            required_steps=list(wf.required_steps),
            terminal_tools=list(wf.terminal_tools),
            prerequisites={
                name: [p.tool for p in t.prerequisites]
                for name, t in wf.tools.items()
                if t.prerequisites
            },
        )

    def check(self, terminal_tool: str, args: dict[str, Any]) -> bool:
        """`validate`, with any exception counted as a wrong answer."""
        try:
            return bool(self.validate(terminal_tool, args))
        except Exception:
            return False


@dataclass(frozen=True)
class WorkflowShape:
    tools: list[str]
    required_steps: list[str]
    terminal_tools: list[str]
    prerequisites: dict[str, list[str]]


# ── helpers for validate functions ────────────────────────────────────────


def text_of(value: Any) -> str:
    return str(value if value is not None else "").strip().lower()


def mentions(value: Any, *needles: str) -> bool:
    """`value` (as text, case-insensitive) contains any of `needles`."""
    text = text_of(value)
    return any(n.lower() in text for n in needles)


def same(value: Any, expected: str) -> bool:
    """Equal as text, ignoring case, surrounding space and quotes."""
    return text_of(value).strip("'\"` .") == expected.lower()


_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def numbers_in(value: Any) -> list[float]:
    """Every number written in `value` ("1,284.50 USD" -> [1284.5])."""
    if isinstance(value, bool):
        return []
    if isinstance(value, int | float):
        return [float(value)]
    return [float(m) for m in _NUMBER.findall(text_of(value).replace(",", ""))]


def has_number(value: Any, target: float, tol: float = 0.01) -> bool:
    return any(abs(n - target) <= tol for n in numbers_in(value))


def select(
    scenarios: Iterable[Scenario], names: Iterable[str] = (), tags: Iterable[str] = ()
) -> list[Scenario]:
    """Scenarios named in `names`, plus those carrying any of `tags`; all when
    both are empty. Unknown names raise KeyError."""
    pool = list(scenarios)
    names, tags = list(names), set(tags)
    if not names and not tags:
        return pool
    by_name = {s.name: s for s in pool}
    unknown = [n for n in names if n not in by_name]
    if unknown:
        raise KeyError(f"unknown scenario(s): {', '.join(unknown)}")
    return [s for s in pool if s.name in names or tags.intersection(s.tags)]
