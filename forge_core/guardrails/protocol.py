"""The interface every engine guardrail implements: the loop's phases.

One model call is one turn. `GuardedRun` (loop.py) runs these phases, each
over the guardrails `engine_set.py` lists for it, in that order:

1. `shape`: before the model is asked, narrow what it may write this turn
   (the `ChatRequest`'s allowed tools, value sets, excluded calls);
2. `filter_calls`: drop calls of the reply that are noise (duplicates);
3. `check`: refuse the batch, with one correction per call (`Refusal`);
   the first guardrail that refuses decides, nothing runs;
4. `on_result` / `on_batch`: remember what a call's result or error says
   (steps done, failed calls, values used);
5. `compaction_note`: what the summary of removed turns must keep.

A guardrail keeps no state of its own: it reads and writes the run's
`RunState` (run_state.py), so one instance serves every run. Its switch
is a field of the contract's `Guardrails` message (`switch`, the
`RunOptions` field it reads); the server derives `RunOptions` from that
message's fields (server/forge_server/convert.py), and a test checks that
every SDK accepts each of them (tests/unit/test_guardrail_contract.py).
"""

from __future__ import annotations

from collections.abc import Sequence, Set
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from forge_core.errors import ForgeError
from forge_core.messages import MessageType, ToolCallInfo

if TYPE_CHECKING:
    from forge_core.backends.base import ChatRequest, ToolCall
    from forge_core.run_state import RunState
    from forge_core.tool_execution import ToolOutcome


@dataclass
class Refusal:
    """A refused batch: the correction for each call (by index), the kind
    of message it is, and why in words (RunState.last_rejection)."""

    texts: dict[int, str]
    nudge_type: MessageType
    why: str
    # Counts against the retry budget (RunState.record_retry); a guardrail
    # with its own budget raises `then` instead.
    counts_as_retry: bool = True
    then: ForgeError | None = field(default=None)


class Guardrail(Protocol):
    """One engine guardrail; `BaseGuardrail` gives every phase a no-op."""

    name: str
    # The RunOptions field that switches it off ("" where none does).
    switch: str

    def shape(self, state: RunState, request: ChatRequest) -> None: ...

    def filter_calls(self, state: RunState, calls: list[ToolCall]) -> list[ToolCall]: ...

    def check(self, state: RunState, infos: list[ToolCallInfo]) -> Refusal | None: ...

    def on_result(
        self, state: RunState, call: ToolCallInfo, outcome: ToolOutcome, content: str
    ) -> None: ...

    def on_batch(
        self, state: RunState, infos: Sequence[ToolCallInfo], outcomes: Sequence[ToolOutcome]
    ) -> None: ...

    def compaction_note(self, state: RunState) -> str: ...


class BaseGuardrail:
    """Every phase does nothing: a guardrail overrides the ones it uses."""

    name = ""
    switch = ""

    def shape(self, state: RunState, request: ChatRequest) -> None:
        return None

    def filter_calls(self, state: RunState, calls: list[ToolCall]) -> list[ToolCall]:
        return calls

    def check(self, state: RunState, infos: list[ToolCallInfo]) -> Refusal | None:
        return None

    def on_result(
        self, state: RunState, call: ToolCallInfo, outcome: ToolOutcome, content: str
    ) -> None:
        return None

    def on_batch(
        self, state: RunState, infos: Sequence[ToolCallInfo], outcomes: Sequence[ToolOutcome]
    ) -> None:
        return None

    def compaction_note(self, state: RunState) -> str:
        return ""


def narrowed(state: RunState, request: ChatRequest, leave_out: Set[str]) -> None:
    """Leave `leave_out` out of the turn's allowed tools, unless that would
    leave none (then the turn keeps what it had)."""
    base = request.allowed or state.all_tools()
    request.allowed = [n for n in base if n not in leave_out] or request.allowed


def kept_only(state: RunState, request: ChatRequest, keep: Set[str]) -> None:
    """Only `keep` of the turn's allowed tools, unless none of them is."""
    base = request.allowed or state.all_tools()
    request.allowed = [n for n in base if n in keep] or request.allowed


def each_call(infos: list[ToolCallInfo], text: str) -> dict[int, str]:
    """The same correction for every call of a batch."""
    return dict.fromkeys(range(len(infos)), text)
