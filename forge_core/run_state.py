"""What one run knows: the state every guardrail phase reads and writes.

`GuardedRun` (loop.py) schedules the guardrail phases over one `RunState`;
the guardrails (guardrails/engine_set.py) keep no state of their own, so a
caller that drives a run itself (replay.py) reads the counters, the
transcript and the last refusal here, not in the scheduler.
"""

from __future__ import annotations

import json
from typing import Any

from forge_core.backends.base import ToolCall, Usage
from forge_core.errors import ForgeError, ToolCallError
from forge_core.guardrails import FailedValue, TurnFacts, reports_nothing
from forge_core.guardrails.destructive import destructive_tools
from forge_core.guardrails.failed_calls import FailedCall
from forge_core.guardrails.grounding import grounded_parameters
from forge_core.guardrails.steps import StepTracker
from forge_core.guardrails.value_pools import NumberChoice, ValuePools, number_values
from forge_core.messages import Message, MessageType
from forge_core.workflow import RunOptions, Workflow


class RunState:
    """One run's transcript, counters and guardrail memory."""

    # Slots: a run's ~50 fields overflow a shared-key instance dict (30 keys
    # at most), which then costs ~1.6 KB; a server holds one per open run.
    # Every attribute a run ever gets must be listed here.
    __slots__ = (
        "asked_destructive",
        "asked_terminals",
        "banned",
        "call_seq",
        "context",
        "declining",
        "denied",
        "destructive",
        "failed",
        "finish_blockers",
        "finish_refused",
        "grounded_parameters",
        "grounding_texts_seen",
        "iteration",
        "last_rejection",
        "last_success",
        "last_unresolved",
        "last_unresolved_errors",
        "opts",
        "outcomes",
        "pools",
        "premature",
        "prereq_violations",
        "repeatable",
        "repeated_successes",
        "replaying",
        "result_texts",
        "results",
        "retries",
        "run_id",
        "scanned",
        "steer_to_finish",
        "steps",
        "succeeded",
        "tool_errors",
        "tool_names",
        "transcript",
        "unasked_write_tools",
        "usage",
        "user_texts_seen",
        "wf",
    )

    def __init__(self, workflow: Workflow, options: RunOptions, run_id: str) -> None:
        self.wf = workflow
        self.opts = options
        self.run_id = run_id
        self.transcript: list[Message] = []
        # What the model sees: the transcript, minus what compaction removed.
        self.context: list[Message] = []
        self.usage = Usage()
        self.iteration = 0
        self.steps = StepTracker(workflow)
        self.tool_names = [t.name for t in workflow.tools]
        self.call_seq = 0
        self._init_counters()
        # The transcript's user and tool-result texts, kept up to date as it
        # grows (it is only ever appended to): asked for several times a turn.
        self.scanned = 0
        self.user_texts_seen: list[str] = []
        self.result_texts: list[str] = []
        self.grounding_texts_seen: list[str] = []
        self._init_guardrail_memory(workflow)

    def _init_counters(self) -> None:
        self.retries = 0
        # Why the last attempt was refused, in words (replay.py reports it).
        self.last_rejection = ""
        # The reply being handled is a recorded turn (BackendReply.replayed).
        self.replaying = False
        self.tool_errors = 0
        self.premature = 0
        self.prereq_violations = 0

    def _init_guardrail_memory(self, workflow: Workflow) -> None:
        # (name, args) of the last batch that ran successfully (repeats.py).
        self.last_success: list[tuple[str, dict[str, Any]]] = []
        # The last batch whose every call found nothing (resolution errors),
        # with the messages: the same lookup again cannot find anything else.
        self.last_unresolved: list[tuple[str, dict[str, Any]]] = []
        self.last_unresolved_errors: list[str] = []
        # Tools left out of the next turn only (a repeat was just refused).
        self.banned: set[str] = set()
        # Every call that failed in this run (tool error or nothing found):
        # signature -> (name, args, the error, how often it was tried again).
        self.failed: dict[str, FailedCall] = {}
        # Signatures of every call that succeeded, and how often the model
        # asked for one of them again (loop breaking).
        self.succeeded: set[str] = set()
        self.repeated_successes = 0
        # After repeated re-asks, the next turn offers only what finishes.
        self.steer_to_finish = False
        # No tool serves the request: the run ends through a terminal tool,
        # declining (guardrails/decline.py); decided before the first result.
        self.declining = False
        # Marked destructive, or named or described so (guardrails/destructive.py).
        self.destructive = destructive_tools(
            workflow.tools, set(workflow.terminal_set) | set(workflow.required_steps)
        )
        # Destructive tools the caller refused a call of in this run.
        self.denied: set[str] = set()
        # Tools a call of which may be made again when its result never came back.
        self.repeatable = {t.name for t in workflow.tools if t.read_only or t.idempotent}
        self.grounded_parameters = workflow.memo(
            "grounded_parameters",
            lambda: sorted(
                {name for t in workflow.tools for name in grounded_parameters(t.parameters)}
            ),
        )
        # Read off the user's words once (guardrails/destructive_policy.py, relevance.py).
        self.asked_destructive: set[str] | None = None
        self.unasked_write_tools: set[str] | None = None
        self.asked_terminals: set[str] | None = None
        # A terminal call failed in a way that says the task is not done yet:
        # terminal tools wait until another tool has succeeded.
        self.finish_refused = False
        # The free-string values the conversation offers (value_pools.py).
        self.pools = ValuePools(workflow, self.placeholder_names())
        # Values a refused terminal call's error named as missing.
        self.finish_blockers: set[str] = set()
        # (tool, output) of every successful call, in order: what a report
        # parameter may be bound to (binding.py).
        self.results: list[tuple[str, str]] = []
        # (tool, args, output) of the same calls: the value guardrails read
        # which arguments a result that found nothing was given.
        self.outcomes: list[tuple[str, dict[str, Any], str]] = []

    def stamp(self, exc: ForgeError) -> None:
        """Give an error that ends the run the run's transcript, iteration
        count and usage."""
        exc.transcript = list(self.transcript)
        exc.iterations = self.iteration
        exc.usage = self.usage

    def next_call_id(self) -> str:
        # Numbered across the whole transcript (prior turns included) so a
        # continued conversation never reuses an id.
        self.call_seq += 1
        return f"call_{self.call_seq}"

    def call_id(self, call: ToolCall) -> str:
        """The id a call was given, else the next number; numbered either way
        so a new call never takes a recorded one's "call_N"."""
        numbered = self.next_call_id()
        return call.id or numbered

    def all_tools(self) -> list[str]:
        return [t.name for t in self.wf.tools]

    def record_retry(self, why: str) -> None:
        self.last_rejection = why
        self.retries += 1
        if self.retries > self.opts.retry_budget:
            raise ToolCallError(
                f"{why}; gave up after {self.retries} consecutive invalid responses",
                retries=self.retries,
            )

    def scan(self) -> tuple[list[str], list[str], list[str]]:
        """The transcript's user texts, tool-result texts, and both in order
        leaving out empty ones (grounding), read once per message."""
        for m in self.transcript[self.scanned :]:
            if m.type is MessageType.USER_INPUT:
                self.user_texts_seen.append(m.content)
            elif m.type is MessageType.TOOL_RESULT:
                self.result_texts.append(m.content)
            else:
                continue
            if m.content:
                self.grounding_texts_seen.append(m.content)
        self.scanned = len(self.transcript)
        return self.user_texts_seen, self.result_texts, self.grounding_texts_seen

    def user_texts(self) -> list[str]:
        return list(self.scan()[0])

    def grounding_texts(self) -> list[str]:
        return list(self.scan()[2])

    def relevance_query(self) -> str:
        """What the user asked. Not what tools returned: a result's words
        ("123.45 USD") pull in tools the user never asked about (an exchange
        rate after a stock price)."""
        return "\n".join(self.user_texts())

    def request_numbers(self) -> dict[str, NumberChoice]:
        """The numbers the request gives each numeric parameter, until the
        first tool result: the first calls take their numbers from the
        request (where an invented one is the common failure); later ones
        may count on their own ("read" page 3 after page 2)."""
        if self.scan()[1]:
            return {}
        return number_values(self.wf, self.user_texts())

    def turn_facts(self) -> TurnFacts:
        """What the value guardrails (guardrails/) read this turn: a result
        that reports nothing found or a refusal counts as a failure of its
        arguments there ("Claim refused: check the cabin id")."""
        failures = [FailedValue(f.name, f.args, f.error) for f in self.failed.values()]
        results = []
        sent = []
        for name, args, output in self.outcomes:
            if reports_nothing(output):
                failures.append(FailedValue(name, args, output))
            else:
                results.append((name, output))
                sent.append((name, args))
        return TurnFacts(self.wf, self.user_texts(), results, failures, sent)

    def failed_strings(self) -> set[str]:
        """String values that failed: of a call that may not run again, the
        value of its only argument or one its error names ("no open audit
        'X-1'"). "Steps 3-5 are not done yet" rejects no value of
        close_case(case_id="C-7", ...): C-7 stays a good answer."""
        return {
            v
            for f in self.failed.values()
            if f.blocked
            for v in f.args.values()
            if isinstance(v, str) and (len(f.args) == 1 or v in f.error)
        }

    def failed_values(self, tool: str) -> list[str]:
        return [
            json.dumps(f.args, ensure_ascii=False)
            for f in self.failed.values()
            if f.name == tool and f.blocked
        ]

    def placeholder_names(self) -> set[str]:
        names = set(self.tool_names)
        for tool in self.wf.tools:
            names.update(tool.parameters.get("properties", {}) or {})
        return names
