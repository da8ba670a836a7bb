"""One turn of a run whose loop lives elsewhere, decided by the same engine.

A caller with its own loop (the Guard RPC) or a stateless API (the
OpenAI-compatible endpoint) sends the whole conversation every time. The run
is rebuilt from it: each recorded model turn is fed back to the loop as a
reply it already made (BackendReply.replayed: recorded, not checked again),
with the tool results the conversation holds as that turn's outcomes. Steps,
prerequisites, failed calls and grounding pools thus come out exactly as in a
`Run` that had made those turns. Then the new reply goes through the loop's
checks like any model reply:

- accepted: the loop hands its calls to the executor, which stops the run
  there and returns them (`TurnCalls`), validated and coerced;
- refused: the loop appends its correction and asks the model again; with no
  live model behind the turn, that ends it with the correction (`TurnRetry`);
  with one (the OpenAI endpoint) the loop retries as it always does;
- the conversation (or the reply, via the built-in respond tool) reaches a
  terminal result: `TurnDone`.

Corrections a caller kept from earlier turns (transient messages) are fed
back as the attempts they answered, so the consecutive-retry counts, and the
budgets that end a run, carry across requests too.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from dataclasses import dataclass, field, replace
from typing import Any

from forge_core.backends.base import (
    Backend,
    BackendInfo,
    BackendReply,
    ChatRequest,
    ChunkSink,
    LLMResponse,
    RunTracking,
    TextResponse,
    TokenCounting,
    ToolCall,
    Usage,
)
from forge_core.cancel import CancelSignal
from forge_core.context import estimate_tokens
from forge_core.errors import ForgeError
from forge_core.loop import (
    Approver,
    CompactionSink,
    GuardedRun,
    IterationChunkSink,
    MessageSink,
    QueueSink,
    RunResult,
    ScreenSink,
    ToolErrorKind,
    ToolExecutor,
    ToolOutcome,
)
from forge_core.messages import Message, MessageRole, MessageType, ToolCallInfo
from forge_core.run_state import RunState
from forge_core.workflow import RunOptions, Workflow

# How a tool error reads in the conversation (nudges.tool_error): a caller's
# recorded result in this form was a failure, not an output.
TOOL_ERROR_PREFIX = "[ToolError] "
# A failure whose arguments were valid but found no data (ToolErrorKind.
# RESOLUTION: fed back, not counted against max_tool_errors), as a Guard
# caller records it. It still starts with TOOL_ERROR_PREFIX, so a server that
# does not know the mark counts it as the plain tool error it was before.
TOOL_RESOLUTION_PREFIX = TOOL_ERROR_PREFIX + "[resolution] "
NO_RESULT = "[No result] the conversation holds no result for this call."

_NO_RESULT = ToolOutcome(output=NO_RESULT, deferred=True)

_NUDGE_TYPES = frozenset(
    {MessageType.STEP_NUDGE, MessageType.PREREQUISITE_NUDGE, MessageType.RETRY_NUDGE}
)


class ConversationError(ValueError):
    """The conversation cannot be read as a run (names the offending field)."""

    def __init__(self, field_path: str, message: str) -> None:
        super().__init__(f"{field_path}: {message}")
        self.field_path = field_path
        self.message = message


@dataclass
class TurnCalls:
    """Run these: validated, coerced, with their ids."""

    calls: list[ToolCallInfo]
    usage: Usage = field(default_factory=Usage)
    # The loop iteration that made them (recorded turns count).
    iteration: int = 0


@dataclass
class TurnRetry:
    """Append `messages` and ask the model again."""

    messages: list[Message]
    reason: str
    attempt: int


@dataclass
class TurnDone:
    result: RunResult


Verdict = TurnCalls | TurnRetry | TurnDone


@dataclass
class _Turn:
    response: LLMResponse
    # Recorded: its tools ran (or were sent to run), their outcomes by call
    # id, None where the conversation holds no result yet. None: an attempt
    # the engine refused earlier (a transient message).
    outcomes: dict[str, ToolOutcome | None] | None
    # The model's reasoning recorded before it, given back with the reply so
    # the rebuilt transcript holds it where the first one did.
    reasoning: str = ""


@dataclass
class Conversation:
    """A recorded conversation split the way a run sees it."""

    prior: list[Message]
    user_message: str
    turns: list[_Turn]


def split_conversation(messages: list[Message], field_path: str = "messages") -> Conversation:
    """The history before the last user request, that request, and the turns
    after it. Corrections (nudges) are dropped: the loop writes them anew."""
    last_user = max(
        (i for i, m in enumerate(messages) if m.type is MessageType.USER_INPUT), default=-1
    )
    if last_user < 0:
        raise ConversationError(field_path, "holds no user message (the request to work on)")
    prior = [m for m in messages[:last_user] if not m.transient]
    results: dict[str, Message] = {
        m.tool_call_id: m
        for m in messages[last_user + 1 :]
        if m.role is MessageRole.TOOL and m.type not in _NUDGE_TYPES and m.tool_call_id
    }
    turns: list[_Turn] = []
    reasoning = ""
    for i, msg in enumerate(messages[last_user + 1 :], start=last_user + 1):
        if msg.role is not MessageRole.ASSISTANT:
            continue
        if msg.type is MessageType.REASONING:
            reasoning = msg.content
            continue
        if not msg.tool_calls:
            if msg.content:
                turns.append(_Turn(TextResponse(msg.content), None, reasoning))
            reasoning = ""
            continue
        calls = [ToolCall(c.name, c.args, id=c.call_id) for c in msg.tool_calls]
        if msg.transient:
            turns.append(_Turn(calls, None, reasoning))
            reasoning = ""
            continue
        outcomes: dict[str, ToolOutcome | None] = {}
        for j, call in enumerate(msg.tool_calls):
            if not call.call_id:
                raise ConversationError(
                    f"{field_path}[{i}].tool_calls[{j}].id", "a recorded tool call needs its id"
                )
            result = results.get(call.call_id)
            outcomes[call.call_id] = _outcome(result) if result is not None else None
        turns.append(_Turn(calls, outcomes, reasoning))
        reasoning = ""
    return Conversation(prior, messages[last_user].content, turns)


def _outcome(result: Message) -> ToolOutcome:
    if result.content.startswith(TOOL_RESOLUTION_PREFIX):
        return ToolOutcome(
            error=result.content[len(TOOL_RESOLUTION_PREFIX) :],
            error_kind=ToolErrorKind.RESOLUTION,
        )
    if result.content.startswith(TOOL_ERROR_PREFIX):
        return ToolOutcome(
            error=result.content[len(TOOL_ERROR_PREFIX) :], error_kind=ToolErrorKind.HARD
        )
    return ToolOutcome(output=result.content)


class _Suspended(Exception):
    """The loop accepted the new reply's calls: they run in the caller."""

    def __init__(self, calls: list[ToolCallInfo]) -> None:
        self.calls = calls


class _NoMoreReplies(Exception):
    """The loop asked for another reply where there is no model to ask."""


class _State:
    def __init__(self) -> None:
        self.outcomes: dict[str, ToolOutcome | None] | None = None
        # The new reply (or the live model) has been asked for.
        self.live = False
        # len(transcript) when it was: what the loop wrote since is its answer.
        self.mark = 0
        # A resumed run sent a call again: what follows is new.
        self.fresh = False


class _ReplayBackend:
    """Serves the recorded turns, then the new reply or the live backend."""

    def __init__(
        self,
        turns: list[_Turn],
        reply: BackendReply | None,
        live: Backend | None,
        state: _State,
        run: RunState,
    ) -> None:
        self.turns = list(turns)
        self.reply = reply
        self.live = live
        self.state = state
        # The run it serves: where the new reply starts in its transcript.
        self.run = run

    def info(self) -> BackendInfo:
        if self.live is not None:
            return self.live.info()
        return BackendInfo(name="guard", model="", context_budget_tokens=0)

    async def count_tokens(self, request: ChatRequest) -> int:
        # Replayed turns need no exact count; the live model's prompt does.
        if self.state.live and isinstance(self.live, TokenCounting):
            return await self.live.count_tokens(request)
        return estimate_tokens(request.messages)

    async def complete(self, request: ChatRequest, on_chunk: ChunkSink | None) -> BackendReply:
        if self.turns:
            turn = self.turns.pop(0)
            self.state.outcomes = turn.outcomes
            return BackendReply(
                response=turn.response,
                replayed=turn.outcomes is not None,
                reasoning=turn.reasoning,
            )
        self.state.outcomes = None
        if not self.state.live:
            self.state.live = True
            self.state.mark = len(self.run.transcript)
            if self.reply is not None:
                return self.reply
        if self.live is None:
            raise _NoMoreReplies
        return await self.live.complete(request, on_chunk)

    async def aclose(self) -> None:
        return None


class _ReplayExecutor:
    def __init__(self, state: _State) -> None:
        self.state = state

    async def execute(self, calls: list[ToolCallInfo], iteration: int) -> list[ToolOutcome]:
        outcomes = self.state.outcomes
        if outcomes is not None:
            return [outcomes.get(c.call_id) or _NO_RESULT for c in calls]
        if not self.state.live:
            # A correction kept from an earlier turn whose attempt the loop
            # would accept now: the caller never ran it, so it did not run.
            return [_NO_RESULT for _ in calls]
        raise _Suspended(calls)


async def next_turn(
    workflow: Workflow,
    messages: list[Message],
    *,
    options: RunOptions | None = None,
    reply: BackendReply | None = None,
    backend: Backend | None = None,
    on_chunk: IterationChunkSink | None = None,
    on_message: MessageSink | None = None,
    run_id: str | None = None,
    field_path: str = "messages",
) -> Verdict:
    """Decide the next turn of the run `messages` records.

    With `reply` (a model reply the caller got itself) and no `backend`, a
    refused reply ends the turn with the correction (TurnRetry). With
    `backend`, the loop asks it (after `reply`, when both are given) until a
    reply passes. ForgeError subclasses end the run as in run_workflow
    (budgets spent, steps skipped too often, the backend failing).
    """
    opts = options or RunOptions()
    if backend is None:
        # Nothing here calls a model: no prompt to fit, no one to approve.
        opts = replace(opts, compaction=False, approve_destructive_calls=False)
    conversation = split_conversation(messages, field_path)
    state = _State()
    run = RunState(workflow, opts, run_id or uuid.uuid4().hex)
    replay = _ReplayBackend(conversation.turns, reply, backend, state, run)
    engine = GuardedRun(
        run,
        backend=replay,
        executor=_ReplayExecutor(state),
        on_message=on_message,
        on_chunk=on_chunk,
        cancel=CancelSignal(),
    )
    try:
        result = await engine.execute(conversation.user_message, conversation.prior)
    except _Suspended as suspended:
        return TurnCalls(suspended.calls, run.usage, run.iteration)
    except _NoMoreReplies:
        if reply is None:
            raise ConversationError(
                "reply", "the conversation does not end with a terminal result: send the reply"
            ) from None
        appended = run.transcript[state.mark :]
        attempt = max(run.retries, run.premature, run.prereq_violations)
        return TurnRetry(
            [m for m in appended if m.type is not MessageType.REASONING],
            run.last_rejection,
            attempt,
        )
    except ForgeError as exc:
        run.stamp(exc)
        raise
    finally:
        # Per-run state the live backend keeps (slot affinity): each turn
        # is a run of its own.
        if isinstance(backend, RunTracking):
            backend.forget_run(run.run_id)
    return TurnDone(result)


class _ResumeExecutor:
    """Recorded turns' outcomes from the conversation or the results the
    server kept; calls with neither go to the client again; live calls too."""

    def __init__(
        self, state: _State, executor: ToolExecutor, known: dict[str, ToolOutcome]
    ) -> None:
        self.state = state
        self.executor = executor
        self.known = known

    async def execute(self, calls: list[ToolCallInfo], iteration: int) -> list[ToolOutcome]:
        recorded = self.state.outcomes
        if recorded is None:
            return await self.executor.execute(calls, iteration)
        found = {c.call_id: self.known.get(c.call_id) or recorded.get(c.call_id) for c in calls}
        missing = [c for c in calls if found[c.call_id] is None]
        if missing:
            # Sent before the server stopped, never answered: send again.
            self.state.fresh = True
            for call, outcome in zip(
                missing, await self.executor.execute(missing, iteration), strict=True
            ):
                found[call.call_id] = outcome
        return [found[c.call_id] or _NO_RESULT for c in calls]


async def resume_run(
    workflow: Workflow,
    transcript: list[Message],
    *,
    backend: Backend,
    executor: ToolExecutor,
    options: RunOptions | None = None,
    # Read when each recorded call is reached, so results added meanwhile
    # (a client answering before the call was sent again) count too.
    known_results: dict[str, ToolOutcome] | None = None,
    on_message: MessageSink | None = None,
    on_chunk: IterationChunkSink | None = None,
    on_compact: CompactionSink | None = None,
    on_queue: QueueSink | None = None,
    on_screen: ScreenSink | None = None,
    approver: Approver | None = None,
    cancel: asyncio.Event | None = None,
    run_id: str | None = None,
) -> RunResult:
    """Continue the run `transcript` records (a journal's, after a restart)
    to its end, as run_workflow would have.

    Recorded model turns are not asked again and recorded tool results are
    not asked for again (`known_results`: results the client sent that the
    transcript does not show yet). Calls that were sent and never answered
    go to `executor` again. The callbacks hear only what is new: the
    transcript's own messages are rebuilt silently.
    """
    conversation = split_conversation(transcript, "transcript")
    state = _State()
    run = RunState(workflow, options or RunOptions(), run_id or uuid.uuid4().hex)
    replay = _ReplayBackend(conversation.turns, None, backend, state, run)

    def new(sink: Any) -> Any:
        if sink is None:
            return None

        async def forward(*args: Any) -> None:
            if state.live or state.fresh:
                await sink(*args)

        return forward

    engine = GuardedRun(
        run,
        backend=replay,
        executor=_ResumeExecutor(
            state, executor, known_results if known_results is not None else {}
        ),
        on_message=new(on_message),
        on_chunk=on_chunk,
        on_compact=new(on_compact),
        on_queue=on_queue,
        cancel=cancel or CancelSignal(),
        approver=approver,
        on_screen=new(on_screen),
    )
    try:
        return await engine.execute(conversation.user_message, conversation.prior)
    except ForgeError as exc:
        run.stamp(exc)
        raise
    finally:
        if isinstance(backend, RunTracking):
            backend.forget_run(run.run_id)


def calls_reply(calls: list[tuple[str, str, str]]) -> BackendReply:
    """A native tool-calling reply: (id, name, arguments JSON) per call.
    Arguments that are not a JSON object go to the loop as the rescue
    parser's input would (the checks refuse them with a correction)."""
    parsed: list[ToolCall] = []
    for call_id, name, arguments in calls:
        try:
            args = json.loads(arguments) if arguments.strip() else {}
        except json.JSONDecodeError:
            args = {"__unparsed__": arguments}
        if not isinstance(args, dict):
            args = {"__unparsed__": arguments}
        parsed.append(ToolCall(name, args, id=call_id))
    return BackendReply(response=parsed)


def text_reply(text: str) -> BackendReply:
    return BackendReply(response=TextResponse(text))
