"""What the inspector's pages show of a run, decoded from its journal events.

Each RunResponse becomes a timeline `Entry`; every guardrail intervention
the engine reports is an entry of its own with its reason: a nudge (step,
prerequisite, retry) with the correction the model was sent, a rejected
free-text reply, a coerced argument, a destructive call held for approval
and the caller's decision, a screened tool output, a compaction with its
tokens before and after, a tool call the server stopped waiting for.

Payloads (the user's message, model text, tool arguments and results, nudge
and failure texts, which quote argument values) are left out of the page
when the server runs without --log-payloads and the run's workflow asks for
tool outputs to be redacted or blocked: such a workflow handles credentials.
Tool results are always the screened ones the model saw (message_appended),
never the raw outputs the client sent.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from forge.v1 import forge_service_pb2 as pb
from forge.v1 import messages_pb2 as mpb
from forge.v1 import workflow_pb2 as wpb
from forge_server.answer_keys import AnswerKey
from forge_server.inspector.store import RunRow

# Longest payload shown inline; the JSON export has the whole event.
MAX_SHOWN = 4000

_NUDGES = {
    mpb.MESSAGE_TYPE_STEP_NUDGE: ("step-nudge", "Step nudge: required steps first"),
    mpb.MESSAGE_TYPE_PREREQUISITE_NUDGE: ("prerequisite-nudge", "Prerequisite nudge"),
    mpb.MESSAGE_TYPE_RETRY_NUDGE: ("retry-nudge", "Retry nudge: a valid tool call was expected"),
}
_SECRET_POLICIES = {
    wpb.TOOL_OUTPUT_POLICY_ALLOW: "allow",
    wpb.TOOL_OUTPUT_POLICY_REDACT: "redact",
    wpb.TOOL_OUTPUT_POLICY_BLOCK: "block",
}


@dataclass(frozen=True)
class Payload:
    text: str
    hidden: bool = False

    @property
    def shown(self) -> str:
        if self.hidden:
            return f"hidden ({len(self.text)} characters; --log-payloads shows them)"
        if len(self.text) > MAX_SHOWN:
            return self.text[:MAX_SHOWN] + f"… ({len(self.text) - MAX_SHOWN} more characters)"
        return self.text


@dataclass
class Entry:
    seq: int
    # CSS class and test hook: model-call, tool-call, tool-result, guardrail,
    # outcome, input, info.
    kind: str
    title: str
    facts: list[tuple[str, str]] = field(default_factory=list)
    payload: Payload | None = None
    # For guardrail entries: which one (retry-nudge, compaction, ...).
    guardrail: str = ""
    reason: str = ""
    iteration: int | None = None
    call_id: str = ""


@dataclass
class StartInfo:
    workflow: str = ""
    session_id: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    # The workflow's tool_output_secrets, "" when it leaves it to the server.
    secrets_policy: str = ""
    user_message: str = ""
    parallel_calls: bool = False


def start_info(start: bytes) -> StartInfo:
    if not start:
        return StartInfo()
    msg = pb.StartRun.FromString(start)
    return StartInfo(
        msg.workflow.name,
        msg.session_id,
        dict(msg.labels),
        _SECRET_POLICIES.get(msg.workflow.tool_output_secrets, ""),
        msg.user_message,
        msg.options.parallel_tool_calls,
    )


def hides_payloads(info: StartInfo, server_policy: str, log_payloads: bool) -> bool:
    """No payloads on the page: no --log-payloads, and the workflow (or the
    server's default for one that does not say) redacts or blocks secrets."""
    return not log_payloads and (info.secrets_policy or server_policy) in ("redact", "block")


@dataclass
class RunSummary:
    run_id: str
    workflow: str
    status: str
    owner: str
    session_id: str
    labels: dict[str, str]
    created: float
    duration_s: float
    iterations: int | None = None
    tokens: int | None = None
    model_s: float | None = None
    outcome: str = ""
    # A failed run's message (it may quote argument values: a payload).
    error_message: str = ""


def _status(row: RunRow, now: float) -> str:
    if row.status == "running" and row.lease_until and row.lease_until < now:
        # Its server died and no client reattached yet.
        return "detached"
    return row.status


def summarize(row: RunRow, now: float | None = None) -> RunSummary:
    now = time.time() if now is None else now
    info = start_info(row.start)
    end = row.updated if row.status != "running" else now
    summary = RunSummary(
        row.run_id, info.workflow, _status(row, now), row.owner, info.session_id,
        info.labels, row.created, max(0.0, end - row.created),
    )  # fmt: skip
    if row.last_event:
        _outcome(summary, pb.RunResponse.FromString(row.last_event))
    return summary


def _outcome(summary: RunSummary, event: pb.RunResponse) -> None:
    kind = event.WhichOneof("kind")
    if kind == "run_completed":
        done = event.run_completed
        summary.outcome = f"completed by {done.terminal_tool}"
        summary.iterations, usage = done.iterations, done.usage
    elif kind == "run_failed":
        failed = event.run_failed
        summary.outcome = pb.FailureReason.Name(failed.reason).removeprefix("FAILURE_REASON_")
        summary.error_message = failed.message
        summary.iterations, usage = failed.iterations, failed.usage
    else:
        return
    summary.tokens = usage.prompt_tokens + usage.completion_tokens
    summary.model_s = (usage.prompt_ms + usage.generation_ms) / 1000


class Timeline:
    """Entries of one run, built event by event (the live page sends each
    new one as it comes)."""

    def __init__(self, hide: bool, pieces: bool = False) -> None:
        self.hide = hide
        # The server makes a constrained call or batch in pieces (--call-pieces).
        self.pieces = pieces
        self.mode = ""

    def constraint(self, calls: int) -> str:
        """How a model call was constrained, from the run's mode."""
        if self.mode == "constrained":
            if self.pieces:
                return "grammar, in pieces"
            return "whole-call grammar"
        return {
            "prompt": "none (tools in the prompt, reply parsed)",
            "native": "the backend's native tool calling",
        }.get(self.mode, self.mode or "?")

    def payload(self, text: str) -> Payload:
        return Payload(text, self.hide)

    def entries(self, seq: int, event: pb.RunResponse) -> list[Entry]:
        kind = event.WhichOneof("kind")
        if kind == "batch":
            return [e for inner in event.batch.events for e in self.entries(inner.seq, inner)]
        build = getattr(self, f"_{kind}", None) if kind else None
        if build is None or kind is None:  # chunks: the model's tokens as they came
            return []
        built: list[Entry] = build(seq, getattr(event, kind))
        return built

    def _run_started(self, seq: int, e: pb.RunStarted) -> list[Entry]:
        self.mode = e.tool_call_mode
        facts = [("backend", e.backend), ("model", e.model), ("constraint", e.tool_call_mode)]
        facts.append(("context budget", f"{e.context_budget_tokens} tokens"))
        if e.backend_chain:
            facts.append(("chain", " → ".join(e.backend_chain)))
        return [Entry(seq, "info", "Run started", facts)]

    def _queued(self, seq: int, e: pb.Queued) -> list[Entry]:
        what = "preempted, waiting" if e.preempted else f"position {e.position}"
        return [Entry(seq, "info", f"Queued for a model slot: {what}", iteration=e.iteration)]

    def _compacted(self, seq: int, e: pb.Compacted) -> list[Entry]:
        reason = (
            f"{e.strategy} phase {e.phase}: {e.tokens_before} → {e.tokens_after} tokens, "
            f"{e.messages_before} → {e.messages_after} messages"
        )
        return [guard(seq, "compaction", "Compaction", reason, e.iteration)]

    def _tool_output_screened(self, seq: int, e: pb.ToolOutputScreened) -> list[Entry]:
        action = _SECRET_POLICIES.get(e.action, "?")
        reason = f"{e.tool_name} ({e.call_id}): {e.secrets} secret(s) {action}ed: " + ", ".join(
            e.secret_types
        )
        return [guard(seq, "screened", "Tool output screened", reason, e.iteration)]

    def _tool_call_cancelled(self, seq: int, e: pb.ToolCallCancelled) -> list[Entry]:
        return [
            guard(seq, "call-cancelled", "Stopped waiting for a tool", f"{e.call_id}: {e.reason}")
        ]

    def _approval_request(self, seq: int, e: pb.ApprovalRequest) -> list[Entry]:
        entry = guard(
            seq, "destructive-hold", "Destructive call held for approval",
            f"{e.tool_name} ({e.call_id}) waits for the caller's approval", e.iteration,
        )  # fmt: skip
        entry.payload = self.payload(e.arguments_json)
        entry.call_id = e.call_id
        return [entry]

    def _tool_call(self, seq: int, e: pb.ToolCallRequest) -> list[Entry]:
        out = [
            Entry(
                seq, "tool-call", f"Tool call {e.tool_name}", [("call id", e.call_id)],
                self.payload(e.arguments_json), iteration=e.iteration,
            )
        ]  # fmt: skip
        for c in e.coercions:
            reason = f"{e.tool_name} {c.path}: {c.original_json} → {c.coerced_json}"
            if self.hide:
                reason = f"{e.tool_name} {c.path}: value coerced to the schema's type"
            out.append(guard(seq, "coercion", "Argument coerced", reason, e.iteration))
        return out

    def _message_appended(self, seq: int, e: pb.MessageAppended) -> list[Entry]:
        m = e.message
        step = m.step_index if m.HasField("step_index") else None
        if m.type in _NUDGES:
            name, title = _NUDGES[m.type]
            reason = m.content if not self.hide else f"{len(m.content)} characters hidden"
            return [guard(seq, name, title, reason, step)]
        if m.type == mpb.MESSAGE_TYPE_TEXT_RESPONSE:
            entry = guard(
                seq, "rejected-reply", "Reply rejected: free text where a tool call was expected",
                "the model answered without a valid tool call", step,
            )  # fmt: skip
            entry.payload = self.payload(m.content)
            return [entry]
        if m.type == mpb.MESSAGE_TYPE_TOOL_CALL:
            calls = "\n".join(f"{c.name}({c.arguments_json})" for c in m.tool_calls)
            names = ", ".join(c.name for c in m.tool_calls)
            return [
                Entry(
                    seq, "model-call", f"Model call → {names}",
                    [("constraint", self.constraint(len(m.tool_calls)))], self.payload(calls),
                    iteration=step,
                )
            ]  # fmt: skip
        if m.type == mpb.MESSAGE_TYPE_TOOL_RESULT:
            title = f"Tool result {m.tool_name}"
            return [
                Entry(seq, "tool-result", title, [("call id", m.tool_call_id)],
                      self.payload(m.content), iteration=step)
            ]  # fmt: skip
        if m.type == mpb.MESSAGE_TYPE_SUMMARY:
            return [
                guard(
                    seq, "compaction-summary", "Compaction summary", "older rounds summarised", step
                )
            ]
        titles = {
            mpb.MESSAGE_TYPE_SYSTEM_PROMPT: "System prompt",
            mpb.MESSAGE_TYPE_USER_INPUT: "User message",
            mpb.MESSAGE_TYPE_REASONING: "Model reasoning",
        }
        title = titles.get(m.type, mpb.Role.Name(m.role).removeprefix("ROLE_").lower())
        return [Entry(seq, "input", title, [], self.payload(m.content), iteration=step)]

    def _run_completed(self, seq: int, e: pb.RunCompleted) -> list[Entry]:
        facts = [("terminal tool", e.terminal_tool), ("iterations", str(e.iterations))]
        facts += _usage_facts(e.usage)
        return [Entry(seq, "outcome completed", "Completed", facts, self.payload(e.result))]

    def _run_failed(self, seq: int, e: pb.RunFailed) -> list[Entry]:
        reason = pb.FailureReason.Name(e.reason).removeprefix("FAILURE_REASON_")
        facts = [("error", reason), ("iterations", str(e.iterations))]
        facts += [(k, v) for k, v in sorted(e.details.items())] if not self.hide else []
        facts += _usage_facts(e.usage)
        return [Entry(seq, "outcome failed", f"Failed: {reason}", facts, self.payload(e.message))]


def guard(seq: int, name: str, title: str, reason: str, iteration: int | None = None) -> Entry:
    return Entry(seq, "guardrail", title, guardrail=name, reason=reason, iteration=iteration)


def _usage_facts(u: pb.Usage) -> list[tuple[str, str]]:
    return [
        ("model calls", str(u.model_calls)),
        ("tokens", f"{u.prompt_tokens} prompt ({u.cached_prompt_tokens} cached) + "
                   f"{u.completion_tokens} completion"),
        ("model time", f"{(u.prompt_ms + u.generation_ms) / 1000:.2f} s"),
    ]  # fmt: skip


def iteration_usage(events: list[pb.RunResponse]) -> dict[int, pb.IterationUsage]:
    """Each model call's accounting, from the run's outcome (none before)."""
    for event in reversed(events):
        kind = event.WhichOneof("kind")
        if kind in ("run_completed", "run_failed"):
            usage: pb.Usage = getattr(event, kind).usage
            return {it.iteration: it for it in usage.iterations}
    return {}


def timeline(
    events: list[tuple[int, bytes]],
    hide: bool,
    approvals: dict[str, bytes] | None = None,
    pieces: bool = False,
) -> list[Entry]:
    """The whole run's entries, each model call with its prompt size and time
    and each held destructive call with the caller's decision."""
    decoded = [(seq, pb.RunResponse.FromString(data)) for seq, data in events]
    per_call = iteration_usage([e for _, e in decoded])
    builder = Timeline(hide, pieces)
    out: list[Entry] = []
    for seq, event in decoded:
        for entry in builder.entries(seq, event):
            it = per_call.get(entry.iteration) if entry.iteration is not None else None
            if entry.kind == "model-call" and it is not None:
                entry.facts += [
                    ("prompt", f"{it.prompt_tokens} tokens ({it.cached_prompt_tokens} cached)"),
                    ("time", f"{it.prompt_ms + it.generation_ms:.0f} ms"),
                ]
                if it.backend:
                    entry.facts.append(("backend", it.backend))
            if entry.guardrail == "destructive-hold":
                entry.facts.append(_decision(entry, approvals or {}, hide))
            out.append(entry)
    return out


def _decision(entry: Entry, approvals: dict[str, bytes], hide: bool) -> tuple[str, str]:
    data = approvals.get(AnswerKey.decision(entry.call_id).stored())
    if data is None:
        return ("decision", "none yet")
    decision = pb.ApprovalDecision.FromString(data)
    said = "approved" if decision.approved else "denied"
    if decision.reason and not hide:
        said += f": {decision.reason}"
    return ("decision", said)


def export(row: RunRow, events: list[tuple[int, bytes]], hide: bool) -> dict[str, Any]:
    """The run's journal events as JSON (protobuf's JSON mapping); payload
    fields are blanked where the page would hide them."""
    from google.protobuf import json_format

    out: list[dict[str, Any]] = []
    for _, data in events:
        event = pb.RunResponse.FromString(data)
        if hide:
            _blank(event)
        out.append(json_format.MessageToDict(event, preserving_proto_field_name=True))
    info = start_info(row.start)
    return {
        "run_id": row.run_id,
        "workflow": info.workflow,
        "status": row.status,
        "owner": row.owner,
        "session_id": info.session_id,
        "labels": info.labels,
        "created": row.created,
        "updated": row.updated,
        "payloads_hidden": hide,
        "events": out,
    }


def _blank(event: pb.RunResponse) -> None:
    """Clear the payload fields of `event` (in place)."""
    kind = event.WhichOneof("kind")
    if kind == "batch":
        for inner in event.batch.events:
            _blank(inner)
    elif kind == "chunk":
        event.chunk.content = ""
    elif kind == "tool_call":
        event.tool_call.arguments_json = ""
        for c in event.tool_call.coercions:
            c.original_json = c.coerced_json = ""
    elif kind == "approval_request":
        event.approval_request.arguments_json = ""
    elif kind == "message_appended":
        _blank_message(event.message_appended.message)
    elif kind in ("run_completed", "run_failed"):
        outcome = getattr(event, kind)
        if kind == "run_completed":
            outcome.result = ""
        else:
            outcome.message = ""
            outcome.details.clear()
        for m in outcome.transcript:
            _blank_message(m)


def _blank_message(m: mpb.Message) -> None:
    m.content = ""
    for c in m.tool_calls:
        c.arguments_json = ""
