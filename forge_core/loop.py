"""The guarded agentic loop: the scheduler of the guardrails' phases.

One iteration is one model call. Whatever the model answers is checked before
anything runs: it must be a tool call, of a known tool, with arguments that
satisfy the tool's schema, that does not skip required steps or
prerequisites. Every failed check appends the failed attempt plus a
correction to the conversation (marked transient) and costs a retry. Calls
that pass go to the executor as one batch; their results go back to the
model. A successful terminal call ends the run.

The checks themselves are the guardrails (forge_core/guardrails/, one module
each, one interface: guardrails/protocol.py). `GuardedRun` runs their
phases, in guardrails/engine_set.py's orders, over one `RunState`
(run_state.py): shape the turn, filter and check the reply's calls, react
to each result, note what compaction must keep.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Coroutine
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

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
from forge_core.context import Compactor, estimate_tokens
from forge_core.errors import (
    ContextBudgetExceededError,
    ForgeError,
    MaxIterationsError,
    ToolExecutionError,
    WorkflowCancelledError,
)
from forge_core.guardrails import engine_set, nudges
from forge_core.guardrails.destructive_policy import hold_destructive
from forge_core.guardrails.protocol import Refusal
from forge_core.guardrails.screening import screen
from forge_core.hooks import NO_HOOKS, RunHooks
from forge_core.hooks import CompactionSink as CompactionSink
from forge_core.hooks import IterationChunkSink as IterationChunkSink
from forge_core.hooks import MessageSink as MessageSink
from forge_core.hooks import QueueSink as QueueSink
from forge_core.hooks import ScreenSink as ScreenSink
from forge_core.messages import Message, MessageRole, MessageType, ToolCallInfo
from forge_core.observe import MODEL_CALLS, observed
from forge_core.parsing import parse_response
from forge_core.run_state import RunState
from forge_core.tool_execution import Approval as Approval
from forge_core.tool_execution import Approver as Approver
from forge_core.tool_execution import ToolErrorKind as ToolErrorKind
from forge_core.tool_execution import ToolExecutor as ToolExecutor
from forge_core.tool_execution import ToolOutcome as ToolOutcome
from forge_core.workflow import RESPOND_TOOL, RunOptions, Workflow

T = TypeVar("T")


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
    hooks: RunHooks = NO_HOOKS,
    cancel: asyncio.Event | None = None,
    run_id: str | None = None,
    compactor: type[Compactor] = Compactor,
) -> RunResult:
    """Run `workflow` to its terminal tool; raise a ForgeError subclass otherwise.

    Every error raised carries the transcript, the iteration count and usage.
    `hooks` are told what the run does as it goes (forge_core/hooks.py).
    Setting `cancel` ends the run with WorkflowCancelledError at the next
    await point (model call or tool batch included). `compactor` is the class
    that keeps the conversation inside the budget: a subclass lets a caller
    compare another policy (bench/compaction_cache.py).
    """
    state = RunState(workflow, options or RunOptions(), run_id or uuid.uuid4().hex)
    run = GuardedRun(
        state,
        backend=backend,
        executor=executor,
        on_message=hooks.on_message,
        on_chunk=hooks.on_chunk,
        on_compact=hooks.on_compact,
        on_queue=hooks.on_queue,
        cancel=cancel or CancelSignal(),
        approver=hooks.approver,
        on_screen=hooks.on_screen,
        compactor=compactor,
    )
    try:
        return await run.execute(user_message, prior_messages or [])
    except ForgeError as exc:
        state.stamp(exc)
        raise
    finally:
        if isinstance(backend, RunTracking):
            backend.forget_run(state.run_id)


class GuardedRun:
    """One run: asks the model, runs the guardrails' phases over `state`,
    hands the calls that pass to `executor`."""

    # Slots: a server holds one per open run (the state holds the rest).
    __slots__ = (
        "_estimated",
        "approver",
        "backend",
        "cancel",
        "compactor",
        "executor",
        "on_chunk",
        "on_compact",
        "on_message",
        "on_queue",
        "on_screen",
        "state",
        "token_counting",
    )

    def __init__(
        self,
        state: RunState,
        *,
        backend: Backend,
        executor: ToolExecutor,
        on_message: MessageSink | None = None,
        on_chunk: IterationChunkSink | None = None,
        on_compact: CompactionSink | None = None,
        on_queue: QueueSink | None = None,
        cancel: asyncio.Event | None = None,
        approver: Approver | None = None,
        on_screen: ScreenSink | None = None,
        compactor: type[Compactor] = Compactor,
    ) -> None:
        self.state = state
        self.backend = backend
        self.executor = executor
        self.on_message = on_message
        self.on_chunk = on_chunk
        self.on_compact = on_compact
        self.on_queue = on_queue
        self.on_screen = on_screen
        self.approver = approver
        self.cancel = cancel or CancelSignal()
        # Asked once: a runtime-checkable Protocol's isinstance is slow.
        self.token_counting = isinstance(backend, TokenCounting)
        # (list, length, tokens, last message) of the last estimate.
        self._estimated: tuple[list[Message], int, int, Message | None] | None = None
        options = state.opts
        self.compactor = compactor(
            options.compaction_strategy if options.compaction else "none",
            self.budget_tokens(),
            self.count_tokens,
        )

    def budget_tokens(self) -> int:
        budget = self.backend.info().context_budget_tokens
        wanted = self.state.opts.context_budget_tokens
        return min(wanted, budget) if wanted and budget else (wanted or budget)

    def request(self, messages: list[Message]) -> ChatRequest:
        opts = self.state.opts
        return ChatRequest(
            run_id=self.state.run_id,
            workflow_name=self.state.wf.name,
            messages=messages,
            tools=self.state.wf.tools,
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
        """The shape phase: what the next call's grammar admits. Only the
        model call needs it, not the token counts compaction asks for."""
        for guardrail in engine_set.SHAPE:
            guardrail.shape(self.state, request)

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
        state = self.state
        notes = (g.compaction_note(state) for g in engine_set.COMPACTION)
        summary = " ".join(n for n in notes if n)
        state.context, result, tokens = await self.compactor.maybe_compact(state.context, summary)
        if result is not None and self.on_compact is not None:
            await self.on_compact(result, state.iteration)
        budget = self.compactor.budget
        if budget and tokens > budget:
            raise ContextBudgetExceededError(
                f"the conversation needs {tokens} tokens after compaction; the budget is {budget}",
                estimated_tokens=tokens,
                budget_tokens=budget,
            )

    async def append(self, message: Message) -> None:
        self.state.context.append(message)
        self.state.transcript.append(message)
        if self.on_message is not None:
            await self.on_message(message, len(self.state.transcript) - 1)

    async def execute(self, user_message: str, prior: list[Message]) -> RunResult:
        state = self.state
        if prior and prior[0].role is MessageRole.SYSTEM:
            state.transcript.extend(prior)
            state.context.extend(prior)
        else:
            prompt = state.wf.system_prompt or state.wf.default_system_prompt()
            await self.append(Message(MessageRole.SYSTEM, prompt, MessageType.SYSTEM_PROMPT))
            state.transcript.extend(prior)
            state.context.extend(prior)
        state.call_seq = sum(len(m.tool_calls) for m in prior)
        await self.append(Message(MessageRole.USER, user_message, MessageType.USER_INPUT))

        while state.iteration < state.opts.max_iterations:
            state.iteration += 1
            result = await self.iterate()
            if result is not None:
                return result
        raise MaxIterationsError(
            f"no terminal tool after {state.iteration} iterations",
            iterations=state.iteration,
            completed_steps=state.steps.completed_names(),
            pending_steps=state.steps.pending(),
        )

    async def iterate(self) -> RunResult | None:
        state = self.state
        calls = await self.next_calls()
        if calls is None:
            return None
        if state.replaying:
            # Its tools already ran: record it as it was, like a batch that
            # passed (it ends a streak of refused ones).
            infos = [ToolCallInfo(state.call_id(c), c.name, c.args) for c in calls]
            state.retries = state.premature = state.prereq_violations = 0
            return await self.run_tools(infos)
        for guardrail in engine_set.FILTER:
            calls = guardrail.filter_calls(state, calls)
        infos = [ToolCallInfo(state.call_id(c), c.name, c.args) for c in calls]
        for guardrail in engine_set.CHECK:
            refusal = guardrail.check(state, infos)
            if refusal is not None:
                await self.refuse(infos, refusal)
                return None
        # Only a batch that passed every check ends a streak of invalid ones.
        state.retries = 0
        state.premature = 0
        state.prereq_violations = 0
        return await self.run_tools(infos)

    async def next_calls(self) -> list[ToolCall] | None:
        """Ask the model; a text answer without a tool call costs a retry."""
        state = self.state
        opts = state.opts
        await self.fit_context()
        request = self.request(list(state.context))
        self.constrain(request)
        if self.on_queue is not None:
            sink, iteration = self.on_queue, state.iteration

            async def queued(position: int, preempted: bool) -> None:
                await sink(position, preempted, iteration)

            request.on_queue = queued
        work = self.until_cancelled(self.backend.complete(request, self.chunk_sink()))
        observer = MODEL_CALLS.get()
        reply = await (
            work if observer is None else observed(observer, state.iteration, request, work)
        )
        state.replaying = reply.replayed
        if not reply.replayed:
            state.usage.record(state.iteration, reply.usage)
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
            nudge = nudges.retry_nudge(state.tool_names)
            why = (
                "the model answered with text instead of a tool call"
                if text
                else "the model returned an empty response"
            )
        await self.append(Message(MessageRole.USER, nudge, MessageType.RETRY_NUDGE))
        state.record_retry(why)
        return None

    def chunk_sink(self) -> ChunkSink | None:
        if not self.state.opts.stream_chunks or self.on_chunk is None:
            return None
        sink = self.on_chunk
        iteration = self.state.iteration

        async def forward(chunk: StreamChunk) -> None:
            await sink(chunk, iteration)

        return forward

    async def refuse(self, infos: list[ToolCallInfo], refusal: Refusal) -> None:
        """Record a refused batch; count it against the retry budget, or
        end the run where the guardrail's own budget is spent."""
        if not refusal.counts_as_retry:
            self.state.last_rejection = refusal.why
        await self.reject_batch(infos, refusal.texts, refusal.nudge_type)
        if refusal.then is not None:
            raise refusal.then
        if refusal.counts_as_retry:
            self.state.record_retry(refusal.why)

    async def reject_batch(
        self, infos: list[ToolCallInfo], texts: dict[int, str], nudge_type: MessageType
    ) -> None:
        """Record a blocked batch with one tool message per call.

        Every call keeps its answering tool message, so the history stays valid
        for APIs that reject unpaired tool calls.
        """
        await self.append(self.tool_call_message(infos, transient=True))
        for i, call in enumerate(infos):
            await self.append(self.tool_message(call, texts[i], nudge_type))

    def tool_message(
        self, call: ToolCallInfo, content: str, kind: MessageType = MessageType.TOOL_RESULT
    ) -> Message:
        return Message(
            MessageRole.TOOL,
            content,
            kind,
            step_index=self.state.iteration,
            tool_call_id=call.call_id,
            tool_name=call.name,
        )

    async def screened(self, call: ToolCallInfo, outcome: ToolOutcome) -> ToolOutcome:
        """`outcome` as the model may see it under the workflow's secrets
        policy (screening.py); reported through on_screen when changed."""
        policy = self.state.wf.tool_output_secrets
        text = outcome.output if outcome.ok else (outcome.error or "")
        if policy == "allow" or not text:
            return outcome
        # Off the event loop: a long output takes a while to scan.
        screening = await asyncio.to_thread(screen, text, policy)
        if screening is None:
            return outcome
        if self.on_screen is not None:
            await self.on_screen(call, screening, self.state.iteration)
        if outcome.ok:
            return replace(outcome, output=screening.content)
        return replace(outcome, error=screening.content)

    def tool_call_message(self, infos: list[ToolCallInfo], transient: bool = False) -> Message:
        return Message(
            MessageRole.ASSISTANT,
            "",
            MessageType.TOOL_CALL,
            step_index=self.state.iteration,
            tool_calls=list(infos),
            transient=transient,
        )

    async def run_tools(self, infos: list[ToolCallInfo]) -> RunResult | None:
        state = self.state
        await self.append(self.tool_call_message(infos))
        try:
            outcomes = await self.until_cancelled(self.execute_batch(infos))
        except WorkflowCancelledError:
            # Answer every call so the transcript stays valid if it is reused.
            for call in infos:
                await self.append(
                    self.tool_message(
                        call, "[Cancelled] the run was cancelled before this tool returned."
                    )
                )
            raise
        terminal_result: tuple[ToolCallInfo, str] | None = None
        hard_errors: list[str] = []
        for call, outcome in zip(infos, outcomes, strict=True):
            finished = await self.take_result(call, outcome, hard_errors)
            if finished is not None and terminal_result is None:
                terminal_result = finished
        if terminal_result is not None:
            return RunResult(
                terminal_tool=terminal_result[0].name,
                result=terminal_result[1],
                iterations=state.iteration,
                terminal_call_id=terminal_result[0].call_id,
                usage=state.usage,
                transcript=list(state.transcript),
            )
        for guardrail in engine_set.BATCH:
            guardrail.on_batch(state, infos, outcomes)
        self.count_tool_errors(hard_errors, outcomes)
        return None

    async def take_result(
        self, call: ToolCallInfo, outcome: ToolOutcome, hard_errors: list[str]
    ) -> tuple[ToolCallInfo, str] | None:
        """Append one call's result and let the guardrails react to it; a
        terminal tool's success returns (call, its unscreened output)."""
        state = self.state
        # The terminal result goes back to its own client unscreened.
        raw_output = outcome.output
        if outcome.deferred:
            await self.append(self.tool_message(call, outcome.output))
            return None
        outcome = await self.screened(call, outcome)
        content = outcome.output if outcome.ok else nudges.tool_error(outcome.error or "")
        await self.append(self.tool_message(call, content))
        if outcome.ok:
            state.results.append((call.name, content))
            state.outcomes.append((call.name, call.args, content))
        elif outcome.error_kind is ToolErrorKind.HARD:
            hard_errors.append(f"{call.name}: {outcome.error}")
        for guardrail in engine_set.REACT:
            guardrail.on_result(state, call, outcome, content)
        if outcome.ok and call.name in state.wf.terminal_set:
            return call, raw_output
        return None

    def count_tool_errors(self, hard_errors: list[str], outcomes: list[ToolOutcome]) -> None:
        """Consecutive batches with a hard error end the run past the budget."""
        state = self.state
        if hard_errors:
            state.tool_errors += 1
            if state.tool_errors > state.opts.tool_error_budget:
                raise ToolExecutionError(
                    f"tool errors did not stop after {state.tool_errors} consecutive "
                    f"attempts; last: {hard_errors[-1]}",
                    tool_name=hard_errors[-1].split(":", 1)[0],
                    consecutive_errors=state.tool_errors,
                )
        elif any(o.ok and not o.deferred for o in outcomes):
            state.tool_errors = 0

    async def execute_batch(self, infos: list[ToolCallInfo]) -> list[ToolOutcome]:
        """Built-in tools run here; the rest go to the executor as one batch.
        Destructive calls may be deferred (run alone) or denied first."""
        results = await hold_destructive(self.state, infos, self.approver)
        respond_here = self.state.wf.respond_tool
        remote = [
            c
            for c in infos
            if c.call_id not in results and (c.name != RESPOND_TOOL or not respond_here)
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
        outcomes = await self.executor.execute(calls, self.state.iteration) if calls else []
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
        again = [i for i in lost if calls[i].name in self.state.repeatable]
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
            f"run cancelled at iteration {self.state.iteration}",
            iteration=self.state.iteration,
            completed_steps=self.state.steps.completed_names(),
        )
