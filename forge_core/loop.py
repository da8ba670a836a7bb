"""The guarded agentic loop.

One iteration is one model call. Whatever the model answers is checked before
anything runs: it must be a tool call, of a known tool, with arguments that
satisfy the tool's schema, that does not skip required steps or
prerequisites. Every failed check appends the failed attempt plus a
correction to the conversation (marked transient) and costs a retry. Calls
that pass go to the executor as one batch; their results go back to the
model. A successful terminal call ends the run.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from jsonschema.exceptions import best_match

from forge_core import nudges
from forge_core.backends.base import (
    Backend,
    ChatRequest,
    ChunkSink,
    RunTracking,
    StreamChunk,
    TextResponse,
    TokenCounting,
    ToolCall,
    Usage,
)
from forge_core.cancel import CancelSignal
from forge_core.coercion import coerce_arguments
from forge_core.context import CompactionResult, Compactor, estimate_tokens
from forge_core.errors import (
    ContextBudgetExceededError,
    ForgeError,
    MaxIterationsError,
    PrerequisiteError,
    StepEnforcementError,
    ToolCallError,
    ToolExecutionError,
    WorkflowCancelledError,
)
from forge_core.failed_calls import FailedCall, call_signature, looks_transient, rejects_arguments
from forge_core.grounding import extract_candidates, grounded_parameters, labelled, reshaped
from forge_core.guardrails import FailedValue, TurnFacts, preferred_values, reports_nothing
from forge_core.guardrails.decline import decline_paths, declining_members, out_of_scope
from forge_core.guardrails.destructive import asked_for, destructive_tools, unasked_writes
from forge_core.messages import Message, MessageRole, MessageType, ToolCallInfo
from forge_core.observe import MODEL_CALLS, observed
from forge_core.parsing import parse_response
from forge_core.relevance import MAX_RELEVANT_TOOLS, asked_among, relevant
from forge_core.screening import Screening, screen
from forge_core.steps import StepTracker
from forge_core.tool_execution import Approval as Approval
from forge_core.tool_execution import Approver as Approver
from forge_core.tool_execution import ToolErrorKind as ToolErrorKind
from forge_core.tool_execution import ToolExecutor as ToolExecutor
from forge_core.tool_execution import ToolOutcome as ToolOutcome
from forge_core.value_pools import (
    NumberChoice,
    ValuePools,
    bound_parameters,
    invented_optionals,
    min_parallel_calls,
    number_digits,
    number_values,
    recombined_calls,
    unseen_examples,
)
from forge_core.workflow import RESPOND_TOOL, RunOptions, Workflow

T = TypeVar("T")

MessageSink = Callable[[Message, int], Awaitable[None]]
IterationChunkSink = Callable[[StreamChunk, int], Awaitable[None]]
CompactionSink = Callable[[CompactionResult, int], Awaitable[None]]
# (queue position, preempted, iteration) while the run waits for a model slot.
QueueSink = Callable[[int, bool, int], Awaitable[None]]
# (call, what replaced its output, iteration): a tool output held secrets.
ScreenSink = Callable[[ToolCallInfo, Screening, int], Awaitable[None]]


@dataclass
class RunResult:
    terminal_tool: str
    result: str
    iterations: int
    terminal_call_id: str
    usage: Usage
    transcript: list[Message] = field(default_factory=list)


async def run_workflow(
    workflow: Workflow,
    user_message: str,
    *,
    backend: Backend,
    executor: ToolExecutor,
    options: RunOptions | None = None,
    prior_messages: list[Message] | None = None,
    on_message: MessageSink | None = None,
    on_chunk: IterationChunkSink | None = None,
    on_compact: CompactionSink | None = None,
    on_queue: QueueSink | None = None,
    cancel: asyncio.Event | None = None,
    run_id: str | None = None,
    approver: Approver | None = None,
    on_screen: ScreenSink | None = None,
    compactor: type[Compactor] = Compactor,
) -> RunResult:
    """Run `workflow` to its terminal tool; raise a ForgeError subclass otherwise.

    Every error raised carries the transcript, the iteration count and usage.
    Setting `cancel` ends the run with WorkflowCancelledError at the next
    await point (model call or tool batch included). `compactor` is the class
    that keeps the conversation inside the budget: a subclass lets a caller
    compare another policy (bench/compaction_cache.py).
    """
    run = _Run(
        workflow=workflow,
        backend=backend,
        executor=executor,
        options=options or RunOptions(),
        on_message=on_message,
        on_chunk=on_chunk,
        on_compact=on_compact,
        on_queue=on_queue,
        cancel=cancel or CancelSignal(),
        run_id=run_id or uuid.uuid4().hex,
        approver=approver,
        on_screen=on_screen,
        compactor=compactor,
    )
    try:
        return await run.execute(user_message, prior_messages or [])
    except ForgeError as exc:
        exc.transcript = list(run.transcript)
        exc.iterations = run.iteration
        exc.usage = run.usage
        raise
    finally:
        if isinstance(backend, RunTracking):
            backend.forget_run(run.run_id)


class _Run:
    # Slots: a run's ~50 fields overflow a shared-key instance dict (30 keys
    # at most), which then costs ~1.6 KB; a server holds one per open run.
    # Every attribute a run ever gets must be listed here.
    __slots__ = (
        "_asked_for",
        "_asked_terminals",
        "_estimated",
        "_grounding_texts",
        "_result_texts",
        "_scanned",
        "_unasked_writes",
        "_user_texts",
        "approver",
        "backend",
        "banned",
        "call_seq",
        "cancel",
        "compactor",
        "context",
        "declining",
        "denied",
        "destructive",
        "executor",
        "failed",
        "finish_blockers",
        "finish_refused",
        "grounded_parameters",
        "iteration",
        "last_rejection",
        "last_success",
        "last_unresolved",
        "last_unresolved_errors",
        "on_chunk",
        "on_compact",
        "on_message",
        "on_queue",
        "on_screen",
        "opts",
        "outcomes",
        "pools",
        "premature",
        "prereq_violations",
        "repeatable",
        "repeated_successes",
        "replaying",
        "results",
        "retries",
        "run_id",
        "steer_to_finish",
        "steps",
        "succeeded",
        "token_counting",
        "tool_errors",
        "tool_names",
        "transcript",
        "usage",
        "wf",
    )

    def __init__(
        self,
        *,
        workflow: Workflow,
        backend: Backend,
        executor: ToolExecutor,
        options: RunOptions,
        on_message: MessageSink | None,
        on_chunk: IterationChunkSink | None,
        on_compact: CompactionSink | None,
        on_queue: QueueSink | None,
        cancel: asyncio.Event,
        run_id: str,
        approver: Approver | None = None,
        on_screen: ScreenSink | None = None,
        compactor: type[Compactor] = Compactor,
    ) -> None:
        self.wf = workflow
        self.on_screen = on_screen
        self.backend = backend
        self.executor = executor
        self.opts = options
        self.on_message = on_message
        self.on_chunk = on_chunk
        self.on_compact = on_compact
        self.on_queue = on_queue
        self.approver = approver
        # What the model sees: the transcript, minus what compaction removed.
        self.context: list[Message] = []
        self.compactor = compactor(
            options.compaction_strategy if options.compaction else "none",
            self.budget_tokens(),
            self.count_tokens,
        )
        self.cancel = cancel
        self.run_id = run_id
        self.transcript: list[Message] = []
        # Asked once: a runtime-checkable Protocol's isinstance is slow.
        self.token_counting = isinstance(backend, TokenCounting)
        # The transcript's user and tool-result texts, kept up to date as it
        # grows (it is only ever appended to): asked for several times a turn.
        self._scanned = 0
        self._user_texts: list[str] = []
        self._result_texts: list[str] = []
        self._grounding_texts: list[str] = []
        # (list, length, tokens, last message) of the last estimate.
        self._estimated: tuple[list[Message], int, int, Message | None] | None = None
        self.usage = Usage()
        self.iteration = 0
        self.steps = StepTracker(workflow)
        self.tool_names = [t.name for t in workflow.tools]
        self.retries = 0
        # Why the last attempt was refused, in words (replay.py reports it).
        self.last_rejection = ""
        # The reply being handled is a recorded turn (BackendReply.replayed).
        self.replaying = False
        self.tool_errors = 0
        self.premature = 0
        self.prereq_violations = 0
        self.call_seq = 0
        # (name, args) of the last batch that ran successfully, for check_repeats.
        self.last_success: list[tuple[str, dict[str, Any]]] = []
        # The last batch whose every call found nothing (resolution errors),
        # with the messages: the same lookup again cannot find anything else.
        self.last_unresolved: list[tuple[str, dict[str, Any]]] = []
        self.last_unresolved_errors: list[str] = []
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
        # Marked destructive, or named or described so (guardrails/destructive.py).
        # No tool serves the request: the run ends through a terminal tool,
        # declining (guardrails/decline.py); decided before the first result.
        self.declining = False
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
        self._asked_for: set[str] | None = None
        self._unasked_writes: set[str] | None = None
        self._asked_terminals: set[str] | None = None
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

    def budget_tokens(self) -> int:
        budget = self.backend.info().context_budget_tokens
        wanted = self.opts.context_budget_tokens
        return min(wanted, budget) if wanted and budget else (wanted or budget)

    def request(self, messages: list[Message]) -> ChatRequest:
        opts = self.opts
        return ChatRequest(
            run_id=self.run_id,
            workflow_name=self.wf.name,
            messages=messages,
            tools=self.wf.tools,
            allowed=[],
            constrained=opts.constrained_decoding,
            temperature=opts.temperature,
            max_tokens=opts.max_tokens,
            parallel=opts.parallel_tool_calls,
            reasoning_replay=opts.reasoning_replay,
            priority=opts.priority,
            cancel_on_preempt=opts.cancel_on_preempt,
            parameter_docs=opts.parameter_docs,
        )

    def constrain(self, request: ChatRequest) -> None:
        """What the next call's grammar admits. Only the model call needs it,
        not the token counts compaction asks for."""
        request.allowed = self.allowed_tools()
        if self.opts.loop_breaking:
            request.excluded_calls = [(f.name, f.args) for f in self.failed.values() if f.blocked]
        if self.opts.grounding:
            texts = self.grounding_texts()
            # The user's words first, then the newest results: when there are
            # more candidates than the grammar takes, the oldest results'
            # go (a closing code in the last of six listings stays).
            users = set(self.user_texts())
            recent = [t for t in texts if t in users] + [
                t for t in reversed(texts) if t not in users
            ]
            seen = extract_candidates(recent, self.placeholder_names())
            request.grounded_values = self.grounded_values(seen)
            request.grounded_formats = self.grounded_formats()
            request.grounded_labels = self.grounded_labels(texts, seen)
            request.unseen_examples = unseen_examples(self.wf, texts)
            offer = self.pools.offer(
                [t for t in texts if t in users],
                [t for t in texts if t not in users],
                self.failed_strings(),
            )
            request.named_values, request.shaped_values = offer.named, offer.shaped
            preferred = preferred_values(self.turn_facts())
            if self.declining:
                terminals = [t for t in self.wf.tools if t.name in self.wf.terminal_set]
                for key, members in declining_members(terminals).items():
                    preferred.values.setdefault(key, members)
            request.preferred_values, request.preferred_items = preferred.values, preferred.items
            request.preferred_reasons = preferred.reasons
            if preferred.blocked:
                # A tool whose required id has no value of its kind yet.
                base = request.allowed or [t.name for t in self.wf.tools]
                request.allowed = [n for n in base if n not in preferred.blocked] or request.allowed
            if offer.exhausted:
                # Every value the conversation offers this tool is used up.
                base = request.allowed or [t.name for t in self.wf.tools]
                keep = offer.exhausted - set(self.steps.pending())
                request.allowed = [n for n in base if n not in keep] or request.allowed
            if self.opts.loop_breaking and self.finish_blockers & offer.values():
                # A terminal call was refused for what is still to do, and
                # some of it is still offered: finish after it.
                base = request.allowed or [t.name for t in self.wf.tools]
                request.allowed = [
                    n for n in base if n not in self.wf.terminal_set
                ] or request.allowed
        if self.opts.result_binding:
            request.bound_values = bound_parameters(
                self.wf,
                self.results,
                labels_only=set(request.named_values) | set(request.shaped_values),
                skip_grounded=self.opts.grounding,
            )
        if self.opts.number_bounds:
            request.number_digits = number_digits(self.grounding_texts())
            request.number_values = self.request_numbers()
            if request.parallel and request.number_values:
                # Enough calls for every number the request writes.
                allowed = set(request.allowed or [t.name for t in self.wf.tools])
                request.min_calls = min_parallel_calls(
                    [t for t in self.wf.tools if t.name in allowed], self.user_texts()
                )

    async def count_tokens(self, messages: list[Message]) -> int:
        if self.token_counting:
            assert isinstance(self.backend, TokenCounting)
            return await self.backend.count_tokens(self.request(messages))
        # The model's view grows by appends between compactions (which make
        # a new list): only what was appended since the last count is new.
        last = self._estimated
        if last is not None and last[0] is messages and last[1] <= len(messages):
            n, total = last[1], last[2]
            if n == 0 or messages[n - 1] is last[3]:
                total += estimate_tokens(messages[n:])
                self._estimated = (
                    messages,
                    len(messages),
                    total,
                    messages[-1] if messages else None,
                )
                return total
        total = estimate_tokens(messages)
        self._estimated = (messages, len(messages), total, messages[-1] if messages else None)
        return total

    async def fit_context(self) -> None:
        """Compact the model's view when it nears the budget; fail if it cannot fit."""
        summary = nudges.compaction_summary(
            self.steps.completed_names(), self.steps.pending(), self.iteration
        )
        self.context, result, tokens = await self.compactor.maybe_compact(self.context, summary)
        if result is not None and self.on_compact is not None:
            await self.on_compact(result, self.iteration)
        budget = self.compactor.budget
        if budget and tokens > budget:
            raise ContextBudgetExceededError(
                f"the conversation needs {tokens} tokens after compaction; the budget is {budget}",
                estimated_tokens=tokens,
                budget_tokens=budget,
            )

    async def append(self, message: Message) -> None:
        self.context.append(message)
        self.transcript.append(message)
        if self.on_message is not None:
            await self.on_message(message, len(self.transcript) - 1)

    async def execute(self, user_message: str, prior: list[Message]) -> RunResult:
        if prior and prior[0].role is MessageRole.SYSTEM:
            self.transcript.extend(prior)
            self.context.extend(prior)
        else:
            prompt = self.wf.system_prompt or self.wf.default_system_prompt()
            await self.append(Message(MessageRole.SYSTEM, prompt, MessageType.SYSTEM_PROMPT))
            self.transcript.extend(prior)
            self.context.extend(prior)
        self.call_seq = sum(len(m.tool_calls) for m in prior)
        await self.append(Message(MessageRole.USER, user_message, MessageType.USER_INPUT))

        while self.iteration < self.opts.max_iterations:
            self.iteration += 1
            result = await self.iterate()
            if result is not None:
                return result
        raise MaxIterationsError(
            f"no terminal tool after {self.iteration} iterations",
            iterations=self.iteration,
            completed_steps=self.steps.completed_names(),
            pending_steps=self.steps.pending(),
        )

    async def iterate(self) -> RunResult | None:
        calls = await self.next_calls()
        if calls is None:
            return None
        if self.replaying:
            # Its tools already ran: record it as it was, like a batch that
            # passed (it ends a streak of refused ones).
            infos = [ToolCallInfo(self.call_id(c), c.name, c.args) for c in calls]
            self.retries = self.premature = self.prereq_violations = 0
            return await self.run_tools(infos)
        if self.opts.repeat_guard:
            calls = _distinct(calls)
        if self.opts.grounding and len(calls) > 1:
            # Extra calls that only recombine the request's numbers: a
            # parallel array the model did not know how to end.
            echoes = set(recombined_calls([(c.name, c.args) for c in calls], self.user_texts()))
            calls = [c for i, c in enumerate(calls) if i not in echoes]
        infos = [ToolCallInfo(self.call_id(c), c.name, c.args) for c in calls]
        if not await self.check_calls(infos):
            return None
        if self.destructive and self.opts.destructive_policy:
            if not await self.check_destructive(infos):
                return None
        if self.opts.repeat_guard and not await self.check_repeats(infos):
            return None
        if self.opts.loop_breaking and not await self.check_failed_repeats(infos):
            return None
        if self.opts.nudge_steps:
            if not await self.check_steps(infos):
                return None
            if not await self.check_prerequisites(infos):
                return None
        # Only a batch that passed every check ends a streak of invalid ones.
        self.retries = 0
        self.premature = 0
        self.prereq_violations = 0
        return await self.run_tools(infos)

    async def next_calls(self) -> list[ToolCall] | None:
        """Ask the model; a text answer without a tool call costs a retry."""
        opts = self.opts
        await self.fit_context()
        request = self.request(list(self.context))
        self.constrain(request)
        if self.on_queue is not None:
            sink, iteration = self.on_queue, self.iteration

            async def queued(position: int, preempted: bool) -> None:
                await sink(position, preempted, iteration)

            request.on_queue = queued
        work = self.until_cancelled(self.backend.complete(request, self.chunk_sink()))
        observer = MODEL_CALLS.get()
        reply = await (
            work if observer is None else observed(observer, self.iteration, request, work)
        )
        self.replaying = reply.replayed
        if not reply.replayed:
            self.usage.record(self.iteration, reply.usage)
        response = reply.response
        reasoning = reply.reasoning
        calls: list[ToolCall] | None
        if isinstance(response, TextResponse):
            parsed = parse_response(response.content, rescue=opts.rescue)
            reasoning = "\n".join(r for r in (reasoning, parsed.reasoning) if r)
            calls, text = parsed.calls, parsed.text
        else:
            calls, text = response, ""
        if reasoning:
            await self.append(Message(MessageRole.ASSISTANT, reasoning, MessageType.REASONING))
        if calls:
            return calls
        if text:
            await self.append(Message(MessageRole.ASSISTANT, text, MessageType.TEXT_RESPONSE))
        if reply.truncated and request.constrained:
            # Under a grammar a non-call can only be a call cut off at
            # max_tokens: say so, rather than "answer with a tool call".
            nudge = nudges.truncated_call(opts.max_tokens)
            why = f"the model's tool call was cut off at max_tokens ({opts.max_tokens})"
        else:
            nudge = nudges.retry_nudge(self.tool_names)
            why = (
                "the model answered with text instead of a tool call"
                if text
                else "the model returned an empty response"
            )
        await self.append(Message(MessageRole.USER, nudge, MessageType.RETRY_NUDGE))
        self.record_retry(why)
        return None

    def allowed_tools(self) -> list[str]:
        allowed = self.steps.allowed_tools() if self.opts.constrain_steps else []
        if self.banned:
            # Only for the turn right after a repeat was rejected: the grammar
            # then cannot produce the same call a third time.
            base = allowed or [t.name for t in self.wf.tools]
            allowed = [name for name in base if name not in self.banned] or allowed
            self.banned = set()
        if self.opts.tool_relevance:
            allowed = self.narrow_to_relevant(allowed)
            if not self.results:
                allowed = self.narrow_terminals(allowed)
                allowed = self.decline_if_out_of_scope(allowed)
        if self.finish_refused and self.opts.loop_breaking:
            base = allowed or [t.name for t in self.wf.tools]
            allowed = [name for name in base if name not in self.wf.terminal_set] or allowed
        if self.steer_to_finish:
            self.steer_to_finish = False
            finish = self.wf.terminal_set | set(self.steps.pending())
            base = allowed or [t.name for t in self.wf.tools]
            allowed = [name for name in base if name in finish] or allowed
        if self.opts.destructive_policy:
            unasked = self.unasked_destructive() | self.unasked_writes()
            if unasked:
                base = allowed or [t.name for t in self.wf.tools]
                allowed = [name for name in base if name not in unasked] or allowed
        return allowed

    def unasked_writes(self) -> set[str]:
        """Tools that change something, when the request only asks a question
        (guardrails/destructive.py), minus pending required steps."""
        if self._unasked_writes is None:
            self._unasked_writes = unasked_writes(
                self.wf.tools, set(self.wf.terminal_set), "\n".join(self.user_texts())
            )
        return self._unasked_writes - set(self.steps.pending())

    def unasked_destructive(self) -> set[str]:
        """Destructive tools the user's words do not ask for, minus pending
        required steps (the workflow itself asks for those)."""
        if self._asked_for is None:
            asked = self.user_texts()
            self._asked_for = asked_for(self.wf.tools, self.destructive, "\n".join(asked))
        return self.destructive - self._asked_for - set(self.steps.pending())

    async def check_destructive(self, infos: list[ToolCallInfo]) -> bool:
        """A destructive call the user did not ask for never runs (the
        grammar leaves it out; this catches unconstrained backends)."""
        unasked = self.unasked_destructive()
        refused = {i for i, c in enumerate(infos) if c.name in unasked}
        if not refused:
            return True
        others = [t.name for t in self.wf.tools if t.name not in unasked]
        await self.reject_batch(
            infos,
            {
                i: nudges.destructive_not_asked(c.name, others)
                if i in refused
                else nudges.not_executed(c.name)
                for i, c in enumerate(infos)
            },
            MessageType.RETRY_NUDGE,
        )
        self.record_retry(
            f"the model called the destructive tool {infos[min(refused)].name!r}, "
            "which the user did not ask for"
        )
        return False

    def narrow_to_relevant(self, allowed: list[str]) -> list[str]:
        """Of many tools, only those relevant to the request (relevance.py);
        terminal tools and pending required steps always stay."""
        base = allowed or [t.name for t in self.wf.tools]
        always = self.wf.terminal_set | set(self.steps.pending()) | {RESPOND_TOOL}
        # Ranked over the workflow's tools, not what this turn allows: when
        # the relevant tool is left out for a turn (it just repeated), the
        # distractors do not come back with it.
        candidates = [t for t in self.wf.tools if t.name not in always]
        if len(candidates) <= MAX_RELEVANT_TOOLS:
            return allowed
        keep = relevant(candidates, self.relevance_query())
        if keep is None:
            return allowed
        # A result may point at the next tool by name ("call confirm_order").
        results = self.scan()[1]
        named = {t.name for t in candidates if results and t.name in results[-1]}
        narrowed = [name for name in base if name in keep or name in always or name in named]
        return narrowed or allowed

    def decline_if_out_of_scope(self, allowed: list[str]) -> list[str]:
        """Only the workflow's decline paths when no other tool the run may
        call serves the request (guardrails/decline.py); nothing changes
        while a required step is pending or where there is no decline path."""
        self.declining = False
        if self.steps.pending():
            return allowed
        terminals = [t for t in self.wf.tools if t.name in self.wf.terminal_set]
        paths = set(decline_paths(terminals, RESPOND_TOOL))
        if not paths:
            return allowed
        withheld = self.unasked_destructive() if self.opts.destructive_policy else set()
        others = [
            t
            for t in self.wf.tools
            if t.name not in paths and t.name != RESPOND_TOOL and t.name not in withheld
        ]
        if not out_of_scope(others, self.relevance_query()):
            return allowed
        base = allowed or [t.name for t in self.wf.tools]
        finish = [n for n in base if n in paths]
        self.declining = bool(finish)
        return finish or allowed

    def narrow_terminals(self, allowed: list[str]) -> list[str]:
        """Before any tool has returned, only the terminal tools the request
        asks for (relevance.asked_among), when it asks for any; pending
        required steps always stay."""
        if self._asked_terminals is None:
            terminals = [
                t
                for t in self.wf.tools
                if t.name in self.wf.terminal_set and t.name != RESPOND_TOOL
            ]
            asked = self.user_texts()
            self._asked_terminals = asked_among(terminals, "\n".join(asked))
        if not self._asked_terminals:
            return allowed
        unasked = (
            set(self.wf.terminal_set) - self._asked_terminals - set(self.steps.pending())
        ) - {RESPOND_TOOL}
        base = allowed or [t.name for t in self.wf.tools]
        return [name for name in base if name not in unasked] or allowed

    def relevance_query(self) -> str:
        """What the user asked. Not what tools returned: a result's words
        ("123.45 USD") pull in tools the user never asked about (an exchange
        rate after a stock price)."""
        asked = self.user_texts()
        return "\n".join(asked)

    async def check_repeats(self, infos: list[ToolCallInfo]) -> bool:
        """Reject a batch that only repeats the previous successful batch.

        Small models often call a finished step again instead of moving on; the
        repeat would waste a tool call and usually loops until max_iterations.
        """
        repeated = [(c.name, c.args) for c in infos]
        if self.last_unresolved and repeated == self.last_unresolved:
            hint = nudges.repeated_unresolved([c.name for c in infos], self.last_unresolved_errors)
            await self.reject_batch(
                infos, dict.fromkeys(range(len(infos)), hint), MessageType.RETRY_NUDGE
            )
            self.record_retry(
                f"the model repeated a lookup of {infos[0].name!r} that found nothing"
            )
            return False
        if not self.last_success or repeated != self.last_success:
            return True
        hint = nudges.repeated_call(
            [c.name for c in infos], self.steps.pending(), sorted(self.wf.terminal_set)
        )
        await self.reject_batch(
            infos, dict.fromkeys(range(len(infos)), hint), MessageType.RETRY_NUDGE
        )
        self.banned = {c.name for c in infos}
        self.count_repeated_success()
        self.record_retry(f"the model repeated {infos[0].name!r} with the same arguments")
        return False

    async def check_failed_repeats(self, infos: list[ToolCallInfo]) -> bool:
        """Reject a batch that repeats any call that already failed in this run.

        The same call cannot succeed the second time (a tool error for these
        arguments, or nothing found): running it again only loops until
        max_iterations. Each repeat escalates the nudge; under a grammar the
        failed values are also left out of the next turns (grammar.py).
        """
        repeats = {
            i: failed
            for i, c in enumerate(infos)
            if (failed := self.failed.get(c.signature())) and failed.blocked
        }
        if not repeats:
            return await self.check_repeated_successes(infos)
        texts: dict[int, str] = {}
        for i, call in enumerate(infos):
            failed = repeats.get(i)
            if failed is None:
                texts[i] = nudges.not_executed(call.name)
                continue
            failed.repeats += 1
            texts[i] = nudges.repeated_failure(
                call.name, failed.error, self.failed_values(call.name), tier=failed.repeats
            )
        await self.reject_batch(infos, texts, MessageType.RETRY_NUDGE)
        first = infos[next(iter(repeats))]
        self.record_retry(f"the model repeated a call of {first.name!r} that already failed")
        return False

    async def check_repeated_successes(self, infos: list[ToolCallInfo]) -> bool:
        """Refuse a batch made only of calls that already succeeded earlier in
        the run (the repeat guard covers the batch right before): their
        results are in the conversation. The second time, the next turn only
        offers the terminal tools and pending steps: the model keeps asking
        for what it has instead of finishing."""
        sigs = [c.signature() for c in infos]
        if not infos or not all(s in self.succeeded for s in sigs):
            return True
        pending = self.steps.pending()
        text = nudges.repeated_call([c.name for c in infos], pending, sorted(self.wf.terminal_set))
        await self.reject_batch(
            infos, dict.fromkeys(range(len(infos)), text), MessageType.RETRY_NUDGE
        )
        self.banned = {c.name for c in infos}
        self.count_repeated_success()
        self.record_retry(f"the model repeated an earlier successful call of {infos[0].name!r}")
        return False

    def count_repeated_success(self) -> None:
        self.repeated_successes += 1
        if self.opts.loop_breaking and self.repeated_successes >= 2:
            self.steer_to_finish = True

    def request_numbers(self) -> dict[str, NumberChoice]:
        """The numbers the request gives each numeric parameter, until the
        first tool result: the first calls take their numbers from the
        request (where an invented one is the common failure); later ones
        may count on their own ("read" page 3 after page 2)."""
        if self.scan()[1]:
            return {}
        return number_values(self.wf, self.user_texts())

    def scan(self) -> tuple[list[str], list[str], list[str]]:
        """The transcript's user texts, tool-result texts, and both in order
        leaving out empty ones (grounding), read once per message."""
        for m in self.transcript[self._scanned :]:
            if m.type is MessageType.USER_INPUT:
                self._user_texts.append(m.content)
            elif m.type is MessageType.TOOL_RESULT:
                self._result_texts.append(m.content)
            else:
                continue
            if m.content:
                self._grounding_texts.append(m.content)
        self._scanned = len(self.transcript)
        return self._user_texts, self._result_texts, self._grounding_texts

    def turn_facts(self) -> TurnFacts:
        """What the value guardrails (guardrails/) read this turn: a result
        that reports nothing found or a refusal counts as a failure of its
        arguments there ("Claim refused: check the cabin id")."""
        failures = [FailedValue(f.name, f.args, f.error) for f in self.failed.values()]
        results = []
        for name, args, output in self.outcomes:
            if reports_nothing(output):
                failures.append(FailedValue(name, args, output))
            else:
                results.append((name, output))
        return TurnFacts(self.wf, self.user_texts(), results, failures)

    def user_texts(self) -> list[str]:
        return list(self.scan()[0])

    def grounding_texts(self) -> list[str]:
        return list(self.scan()[2])

    def grounded_values(self, seen: list[str]) -> list[str]:
        """Candidates from what the user said and what tools returned (`seen`);
        never from the model's own calls or from nudges. First what the
        errors' examples suggest (a failed value in the expected format)."""
        repaired = [c for f in self.failed.values() for cs in f.reshaped.values() for c in cs]
        return list(dict.fromkeys(repaired + seen))

    def grounded_labels(self, texts: list[str], seen: list[str]) -> dict[str, list[str]]:
        """Per grounded parameter, the candidates the conversation labels as
        its kind ("Order Q-58" for order_id; grounding.labelled)."""
        # A value that already failed is no label's answer, for any tool.
        failed = self.failed_strings()
        candidates = [c for c in seen if c not in failed]
        out: dict[str, list[str]] = {}
        for name in self.grounded_parameters:
            found = labelled(candidates, texts, name)
            if found:
                out[name] = found
        return out

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

    def grounded_formats(self) -> dict[str, list[str]]:
        """Where a tool rejected a value's format: that parameter takes only
        its failed values rewritten in the format the error showed."""
        out: dict[str, list[str]] = {}
        for f in self.failed.values():
            for param, candidates in f.reshaped.items():
                key = f"{f.name}.{param}"
                out[key] = list(dict.fromkeys(out.get(key, []) + candidates))
        return out

    def placeholder_names(self) -> set[str]:
        names = set(self.tool_names)
        for tool in self.wf.tools:
            names.update(tool.parameters.get("properties", {}) or {})
        return names

    def failed_values(self, tool: str) -> list[str]:
        return [
            json.dumps(f.args, ensure_ascii=False)
            for f in self.failed.values()
            if f.name == tool and f.blocked
        ]

    def chunk_sink(self) -> ChunkSink | None:
        if not self.opts.stream_chunks or self.on_chunk is None:
            return None
        sink = self.on_chunk
        iteration = self.iteration

        async def forward(chunk: StreamChunk) -> None:
            await sink(chunk, iteration)

        return forward

    def record_retry(self, why: str) -> None:
        self.last_rejection = why
        self.retries += 1
        if self.retries > self.opts.retry_budget:
            raise ToolCallError(
                f"{why}; gave up after {self.retries} consecutive invalid responses",
                retries=self.retries,
            )

    async def check_calls(self, infos: list[ToolCallInfo]) -> bool:
        """Unknown tools and schema-invalid arguments never reach the client."""
        problems: dict[int, str] = {}
        texts = self.grounding_texts()
        numbers = self.request_numbers() if self.opts.grounding else {}
        for i, call in enumerate(infos):
            spec = self.wf.tool(call.name)
            if spec is None:
                problems[i] = nudges.unknown_tool(call.name, self.tool_names)
                continue
            # Most calls are valid as they come: one validation pass then.
            valid = spec.validator.is_valid(call.args)
            if self.opts.coercion and not valid:
                args, coercions = coerce_arguments(spec.validator, call.args)
                if coercions:
                    call = infos[i] = replace(call, args=args, coercions=tuple(coercions))
            invented: list[str] = []
            if self.opts.grounding:
                # Optional values the conversation never gave: the tool's
                # default instead of an invention.
                invented = invented_optionals(spec, call.args, texts, numbers)
                if invented:
                    args = {k: v for k, v in call.args.items() if k not in invented}
                    call = infos[i] = replace(call, args=args)
            if valid and not invented:
                continue
            error = best_match(spec.validator.iter_errors(call.args))
            if error is not None:
                where = "/".join(str(p) for p in error.absolute_path) or "(root)"
                problems[i] = nudges.invalid_arguments(call.name, f"at '{where}': {error.message}")
        if not problems:
            return True
        await self.reject_batch(
            infos,
            {i: problems.get(i, nudges.not_executed(c.name)) for i, c in enumerate(infos)},
            MessageType.RETRY_NUDGE,
        )
        self.record_retry(next(iter(problems.values())))
        return False

    async def check_steps(self, infos: list[ToolCallInfo]) -> bool:
        terminal = [c.name for c in infos if c.name in self.wf.terminal_set]
        pending = self.steps.pending()
        if not terminal or not pending:
            return True
        self.premature += 1
        self.last_rejection = f"{terminal[0]!r} was called before the required steps {pending}"
        text = nudges.step_nudge(terminal[0], pending, tier=min(self.premature, 3))
        await self.reject_batch(
            infos, dict.fromkeys(range(len(infos)), text), MessageType.STEP_NUDGE
        )
        if self.premature >= self.opts.max_premature_attempts:
            raise StepEnforcementError(
                f"the model called {terminal[0]!r} {self.premature} times before the "
                f"required steps {pending}",
                terminal_tool=terminal[0],
                attempts=self.premature,
                pending_steps=pending,
            )
        return False

    async def check_prerequisites(self, infos: list[ToolCallInfo]) -> bool:
        missing = {i: self.steps.missing_prerequisites(c) for i, c in enumerate(infos)}
        blocked = {i: m for i, m in missing.items() if m}
        if not blocked:
            return True
        self.prereq_violations += 1
        first = next(iter(blocked))
        self.last_rejection = (
            f"{infos[first].name!r} was called before its prerequisites {blocked[first]}"
        )
        texts = {
            i: nudges.prerequisite_nudge(infos[i].name, blocked[i])
            if i in blocked
            else nudges.not_executed(infos[i].name)
            for i in range(len(infos))
        }
        await self.reject_batch(infos, texts, MessageType.PREREQUISITE_NUDGE)
        if self.prereq_violations >= self.opts.max_prereq_violations:
            first = next(iter(blocked))
            raise PrerequisiteError(
                f"the model kept calling {infos[first].name!r} without {blocked[first]}",
                tool_name=infos[first].name,
                violations=self.prereq_violations,
                missing_prerequisites=blocked[first],
            )
        return False

    async def reject_batch(
        self, infos: list[ToolCallInfo], texts: dict[int, str], nudge_type: MessageType
    ) -> None:
        """Record a blocked batch with one tool message per call.

        Every call keeps its answering tool message, so the history stays valid
        for APIs that reject unpaired tool calls.
        """
        await self.append(self.tool_call_message(infos, transient=True))
        for i, call in enumerate(infos):
            await self.append(
                Message(
                    MessageRole.TOOL,
                    texts[i],
                    nudge_type,
                    step_index=self.iteration,
                    tool_call_id=call.call_id,
                    tool_name=call.name,
                )
            )

    async def screened(self, call: ToolCallInfo, outcome: ToolOutcome) -> ToolOutcome:
        """`outcome` as the model may see it under the workflow's secrets
        policy (screening.py); reported through on_screen when changed."""
        policy = self.wf.tool_output_secrets
        text = outcome.output if outcome.ok else (outcome.error or "")
        if policy == "allow" or not text:
            return outcome
        # Off the event loop: a long output takes a while to scan.
        screening = await asyncio.to_thread(screen, text, policy)
        if screening is None:
            return outcome
        if self.on_screen is not None:
            await self.on_screen(call, screening, self.iteration)
        if outcome.ok:
            return replace(outcome, output=screening.content)
        return replace(outcome, error=screening.content)

    def tool_call_message(self, infos: list[ToolCallInfo], transient: bool = False) -> Message:
        return Message(
            MessageRole.ASSISTANT,
            "",
            MessageType.TOOL_CALL,
            step_index=self.iteration,
            tool_calls=list(infos),
            transient=transient,
        )

    async def run_tools(self, infos: list[ToolCallInfo]) -> RunResult | None:
        await self.append(self.tool_call_message(infos))
        try:
            outcomes = await self.until_cancelled(self.execute_batch(infos))
        except WorkflowCancelledError:
            # Answer every call so the transcript stays valid if it is reused.
            for call in infos:
                await self.append(
                    Message(
                        MessageRole.TOOL,
                        "[Cancelled] the run was cancelled before this tool returned.",
                        MessageType.TOOL_RESULT,
                        step_index=self.iteration,
                        tool_call_id=call.call_id,
                        tool_name=call.name,
                    )
                )
            raise
        terminal_result: tuple[ToolCallInfo, str] | None = None
        hard_errors: list[str] = []
        for call, outcome in zip(infos, outcomes, strict=True):
            # The terminal result goes back to its own client unscreened.
            raw_output = outcome.output
            if not outcome.deferred:
                outcome = await self.screened(call, outcome)
            content = outcome.output if outcome.ok else nudges.tool_error(outcome.error or "")
            if outcome.deferred:
                await self.append(
                    Message(
                        MessageRole.TOOL,
                        outcome.output,
                        MessageType.TOOL_RESULT,
                        step_index=self.iteration,
                        tool_call_id=call.call_id,
                        tool_name=call.name,
                    )
                )
                continue
            await self.append(
                Message(
                    MessageRole.TOOL,
                    content,
                    MessageType.TOOL_RESULT,
                    step_index=self.iteration,
                    tool_call_id=call.call_id,
                    tool_name=call.name,
                )
            )
            if outcome.ok:
                self.steps.record(call)
                self.results.append((call.name, content))
                self.outcomes.append((call.name, call.args, content))
                self.pools.record(call.name, call.args)
                if call.name not in self.wf.terminal_set:
                    self.finish_refused = False
                    # Progress: an error that neither rejected the values nor
                    # found nothing ("not done yet") may not hold now.
                    self.failed = {
                        sig: f
                        for sig, f in self.failed.items()
                        if f.resolution or (f.rejected and f.names_a_value) or f.reshaped
                    }
                if call.name in self.wf.terminal_set and terminal_result is None:
                    terminal_result = (call, raw_output)
            else:
                sig = call.signature()
                failed = self.failed.setdefault(sig, FailedCall(call.name, call.args, ""))
                failed.error = outcome.error or ""
                failed.failures += 1
                failed.resolution |= outcome.error_kind is ToolErrorKind.RESOLUTION
                failed.rejected = outcome.error_kind is ToolErrorKind.HARD and rejects_arguments(
                    failed.error
                )
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
                if outcome.error_kind is ToolErrorKind.HARD:
                    hard_errors.append(f"{call.name}: {outcome.error}")
                    # "Steps 3-5 are not done yet": the task cannot
                    # end yet, whatever the arguments. Not an outage, not a
                    # rejection of the values.
                    if (
                        call.name in self.wf.terminal_set
                        and not looks_transient(failed.error)
                        and not (failed.rejected and failed.names_a_value)
                    ):
                        self.finish_refused = True
                        # What the error says is missing ("S3, S4"): the run
                        # ends only once none of it is left to do.
                        self.finish_blockers = set(extract_candidates([failed.error]))
        if terminal_result is not None:
            return RunResult(
                terminal_tool=terminal_result[0].name,
                result=terminal_result[1],
                iterations=self.iteration,
                terminal_call_id=terminal_result[0].call_id,
                usage=self.usage,
                transcript=list(self.transcript),
            )
        ran = all(o.ok and not o.deferred for o in outcomes)
        self.last_success = [(c.name, c.args) for c in infos] if ran else []
        self.succeeded.update(
            c.signature() for c, o in zip(infos, outcomes, strict=True) if o.ok and not o.deferred
        )
        unresolved = all(not o.ok and o.error_kind is ToolErrorKind.RESOLUTION for o in outcomes)
        self.last_unresolved = [(c.name, c.args) for c in infos] if unresolved else []
        self.last_unresolved_errors = [o.error or "" for o in outcomes] if unresolved else []
        if hard_errors:
            self.tool_errors += 1
            if self.tool_errors > self.opts.tool_error_budget:
                raise ToolExecutionError(
                    f"tool errors did not stop after {self.tool_errors} consecutive "
                    f"attempts; last: {hard_errors[-1]}",
                    tool_name=hard_errors[-1].split(":", 1)[0],
                    consecutive_errors=self.tool_errors,
                )
        elif any(o.ok and not o.deferred for o in outcomes):
            self.tool_errors = 0
        return None

    async def execute_batch(self, infos: list[ToolCallInfo]) -> list[ToolOutcome]:
        """Built-in tools run here; the rest go to the executor as one batch.
        Destructive calls may be deferred (run alone) or denied first."""
        results = await self.hold_destructive(infos)
        remote = [
            c
            for c in infos
            if c.call_id not in results and (c.name != RESPOND_TOOL or not self.wf.respond_tool)
        ]
        outcomes = await self.execute_remote(remote)
        if any(o.error_kind is ToolErrorKind.UNREACHABLE and not o.ok for o in outcomes):
            outcomes = await self.retry_unreachable(remote, outcomes)
        results.update({c.call_id: o for c, o in zip(remote, outcomes, strict=True)})
        return [
            results[c.call_id]
            if c.call_id in results
            else ToolOutcome(output=str(c.args.get("message", "")))
            for c in infos
        ]

    async def execute_remote(self, calls: list[ToolCallInfo]) -> list[ToolOutcome]:
        outcomes = await self.executor.execute(calls, self.iteration) if calls else []
        if len(outcomes) != len(calls):
            raise ForgeError(f"executor returned {len(outcomes)} outcomes for {len(calls)} calls")
        return outcomes

    async def retry_unreachable(
        self, calls: list[ToolCallInfo], outcomes: list[ToolOutcome]
    ) -> list[ToolOutcome]:
        """A call whose result never came back (UNREACHABLE) is made once
        more when its tool only reads or is idempotent (ToolSpec.read_only,
        .idempotent), under its own call id so the client does not take it for
        the first. Any other, and one that fails so again, reaches the model
        as a hard error saying that its effect is unknown."""
        lost = [
            i
            for i, o in enumerate(outcomes)
            if not o.ok and o.error_kind is ToolErrorKind.UNREACHABLE
        ]
        again = [i for i in lost if calls[i].name in self.repeatable]
        tries = dict.fromkeys(lost, 1)
        if again:
            retried = await self.execute_remote(
                [replace(calls[i], call_id=f"{calls[i].call_id}.retry") for i in again]
            )
            outcomes = list(outcomes)
            for i, outcome in zip(again, retried, strict=True):
                outcomes[i] = outcome
                tries[i] = 2
        return [
            ToolOutcome(
                error=f"{o.error} {nudges.unreachable(calls[i].name, tries[i])}",
                error_kind=ToolErrorKind.HARD,
            )
            if i in tries and not o.ok and o.error_kind is ToolErrorKind.UNREACHABLE
            else o
            for i, o in enumerate(outcomes)
        ]

    async def hold_destructive(self, infos: list[ToolCallInfo]) -> dict[str, ToolOutcome]:
        """Outcomes of the destructive calls that do not run now: those sent
        back to run alone, and those the caller did not approve."""
        held: dict[str, ToolOutcome] = {}
        destructive = [c for c in infos if c.name in self.destructive]
        if not destructive:
            return held
        if self.opts.destructive_policy and len(infos) > 1:
            # Alone: with other calls in the batch none runs; a batch of only
            # destructive calls runs its first.
            keep = destructive[0] if len(destructive) == len(infos) else None
            for call in destructive:
                if call is not keep:
                    held[call.call_id] = ToolOutcome(
                        output=nudges.destructive_alone(call.name), deferred=True
                    )
        if self.opts.approve_destructive_calls:
            for call in destructive:
                if call.call_id in held:
                    continue
                if self.approver is None:
                    decision = Approval(False, "no approver is connected to this run")
                else:
                    decision = await self.approver(call, self.iteration)
                if not decision.approved:
                    if call.name in self.denied:
                        # Told once that it was not approved, the model asked
                        # again: a denial is not counted as a tool error, so
                        # it would ask until max_iterations.
                        raise ToolExecutionError(
                            f"the caller did not approve {call.name!r} and the model asked "
                            "for it again",
                            tool_name=call.name,
                            denied=True,
                        )
                    self.denied.add(call.name)
                    held[call.call_id] = ToolOutcome(
                        error=nudges.approval_denied(call.name, decision.reason),
                        error_kind=ToolErrorKind.RESOLUTION,
                    )
        return held

    async def until_cancelled(self, work: Coroutine[Any, Any, T]) -> T:
        """Await `work` unless the run is cancelled first."""
        if self.cancel.is_set():
            work.close()
            raise self.cancelled()
        if isinstance(self.cancel, CancelSignal):
            return await self._interruptible(work, self.cancel)
        task = asyncio.ensure_future(work)
        stopper = asyncio.ensure_future(self.cancel.wait())
        try:
            await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stopper.cancel()
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        if task.cancelled() or not task.done():
            raise self.cancelled()
        return task.result()

    async def _interruptible(self, work: Coroutine[Any, Any, T], signal: CancelSignal) -> T:
        """`work` awaited in this task, which the signal cancels when set."""
        task = asyncio.current_task()
        assert task is not None
        fired = False

        def interrupt() -> None:
            nonlocal fired
            # Set by this task itself: nothing to interrupt (the next
            # until_cancelled sees it), and a cancel requested of the running
            # task would land on whatever it awaits next.
            if asyncio.current_task() is not task:
                fired = True
                task.cancel()

        signal.add_callback(interrupt)
        try:
            result = await work
            if fired and task.cancelling():
                # The work took the interruption and finished anyway: the
                # request is withdrawn; the next step sees the signal set.
                task.uncancel()
            return result
        except asyncio.CancelledError:
            # Only this signal's cancellation becomes the run's outcome; one
            # from outside (the task itself was cancelled) goes on up.
            if fired and task.cancelling() == 1:
                task.uncancel()
                raise self.cancelled() from None
            raise
        finally:
            signal.remove_callback(interrupt)

    def cancelled(self) -> WorkflowCancelledError:
        return WorkflowCancelledError(
            f"run cancelled at iteration {self.iteration}",
            iteration=self.iteration,
            completed_steps=self.steps.completed_names(),
        )


def _distinct(calls: list[ToolCall]) -> list[ToolCall]:
    """A batch without exact duplicates: the same call twice in one turn is a
    model stuttering (a parallel array it did not know how to end)."""
    seen: set[str] = set()
    out = []
    for call in calls:
        sig = call_signature(call.name, call.args)
        if sig not in seen:
            seen.add(sig)
            out.append(call)
    return out
