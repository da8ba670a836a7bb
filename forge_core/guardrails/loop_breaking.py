"""A call that already failed is not made again.

The same call cannot succeed the second time (a tool error for these
arguments, or nothing found): running it again only loops until
max_iterations. Each repeat escalates the correction; under a grammar the
failed calls are excluded from what the model can write. A batch made only
of calls that already succeeded is refused too, and the second time the
next turn offers only what finishes. A terminal call refused as "not done
yet" keeps the terminal tools out until another tool succeeds. The records
are failed_calls.py's `FailedCall`. Switch: `loop_breaking`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from forge_core.guardrails import nudges
from forge_core.guardrails.failed_calls import FailedCall, looks_transient, rejects_arguments
from forge_core.guardrails.grounding import extract_candidates, reshaped
from forge_core.guardrails.protocol import BaseGuardrail, Refusal, each_call, kept_only, narrowed
from forge_core.guardrails.repeat_guard import count_repeated_success
from forge_core.messages import MessageType, ToolCallInfo
from forge_core.tool_execution import ToolErrorKind

if TYPE_CHECKING:
    from forge_core.backends.base import ChatRequest
    from forge_core.run_state import RunState
    from forge_core.tool_execution import ToolOutcome


class LoopBreaking(BaseGuardrail):
    name = "loop_breaking"
    switch = "loop_breaking"

    def shape(self, state: RunState, request: ChatRequest) -> None:
        if state.finish_refused and state.opts.loop_breaking:
            narrowed(state, request, set(state.wf.terminal_set))
        if state.steer_to_finish:
            state.steer_to_finish = False
            kept_only(state, request, state.wf.terminal_set | set(state.steps.pending()))
        if state.opts.loop_breaking:
            # The failed calls themselves: the grammar leaves them out.
            request.excluded_calls = [(f.name, f.args) for f in state.failed.values() if f.blocked]

    def check(self, state: RunState, infos: list[ToolCallInfo]) -> Refusal | None:
        if not state.opts.loop_breaking:
            return None
        repeats = {
            i: failed
            for i, c in enumerate(infos)
            if (failed := state.failed.get(c.signature())) and failed.blocked
        }
        if not repeats:
            return repeated_successes(state, infos)
        texts: dict[int, str] = {}
        for i, call in enumerate(infos):
            failed = repeats.get(i)
            if failed is None:
                texts[i] = nudges.not_executed(call.name)
                continue
            failed.repeats += 1
            texts[i] = nudges.repeated_failure(
                call.name, failed.error, state.failed_values(call.name), tier=failed.repeats
            )
        first = infos[next(iter(repeats))]
        return Refusal(
            texts,
            MessageType.RETRY_NUDGE,
            f"the model repeated a call of {first.name!r} that already failed",
        )

    def on_result(
        self, state: RunState, call: ToolCallInfo, outcome: ToolOutcome, content: str
    ) -> None:
        if outcome.ok:
            if call.name not in state.wf.terminal_set:
                state.finish_refused = False
                # Progress: an error that neither rejected the values nor
                # found nothing ("not done yet") may not hold now.
                state.failed = {
                    sig: f
                    for sig, f in state.failed.items()
                    if f.resolution or (f.rejected and f.names_a_value) or f.reshaped
                }
            return
        remember_failure(state, call, outcome)

    def on_batch(
        self, state: RunState, infos: Sequence[ToolCallInfo], outcomes: Sequence[ToolOutcome]
    ) -> None:
        state.succeeded.update(
            c.signature() for c, o in zip(infos, outcomes, strict=True) if o.ok and not o.deferred
        )


def repeated_successes(state: RunState, infos: list[ToolCallInfo]) -> Refusal | None:
    """Refuse a batch made only of calls that already succeeded earlier in
    the run (the repeat guard covers the batch right before): their
    results are in the conversation."""
    sigs = [c.signature() for c in infos]
    if not infos or not all(s in state.succeeded for s in sigs):
        return None
    pending = state.steps.pending()
    text = nudges.repeated_call([c.name for c in infos], pending, sorted(state.wf.terminal_set))
    state.banned = {c.name for c in infos}
    count_repeated_success(state)
    return Refusal(
        each_call(infos, text),
        MessageType.RETRY_NUDGE,
        f"the model repeated an earlier successful call of {infos[0].name!r}",
    )


def remember_failure(state: RunState, call: ToolCallInfo, outcome: ToolOutcome) -> None:
    """Record a failed call: what its error says about its values, and
    whether a terminal call's error says the task is not done yet."""
    failed = state.failed.setdefault(call.signature(), FailedCall(call.name, call.args, ""))
    failed.error = outcome.error or ""
    failed.failures += 1
    failed.resolution |= outcome.error_kind is ToolErrorKind.RESOLUTION
    failed.rejected = outcome.error_kind is ToolErrorKind.HARD and rejects_arguments(failed.error)
    # Only a rejection of the value itself shows its format:
    # "malformed id '123': ids look like INV-000042". "Not found"
    # may name real data, and "steps 3-5 are not done
    # yet" is about no value of the call.
    failed.reshaped = {
        param: found
        for param, value in call.args.items()
        if failed.rejected and isinstance(value, str) and value in failed.error
        if (found := reshaped(value, failed.error))
    }
    # "Steps 3-5 are not done yet": the task cannot end yet, whatever the
    # arguments. Not an outage, not a rejection of the values.
    if (
        outcome.error_kind is ToolErrorKind.HARD
        and call.name in state.wf.terminal_set
        and not looks_transient(failed.error)
        and not (failed.rejected and failed.names_a_value)
    ):
        state.finish_refused = True
        # What the error says is missing ("S3, S4"): the run
        # ends only once none of it is left to do.
        state.finish_blockers = set(extract_candidates([failed.error]))
