/** One run in progress: its gRPC stream, the tool calls and approvals it runs here, its events. */

import { create } from "@bufbuild/protobuf";
import {
  type ApprovalRequest as PbApprovalRequest,
  type MessageAppended,
  type RunResponse,
  type RunStarted,
  type StartRun,
  type ToolCallCancelled,
  type ToolCallRequest,
} from "./gen/forge/v1/forge_service_pb.js";
import {
  ConnectionLostError,
  type ForgeError,
  WorkflowCancelledError,
  fromTransportError,
  runFailedFromPb,
} from "./errors.js";
import {
  type ApprovalRequestedEvent,
  type ForgeEvent,
  type ReattachedEvent,
  type RunResult,
  type ToolFailure,
  approvalRequestedFromPb,
  chunkFromPb,
  compactedFromPb,
  messageAppendedFromPb,
  parseJson,
  queuedFromPb,
  runStartedFromPb,
  toolCallStartedFromPb,
  toolOutputScreenedFromPb,
} from "./events.js";
import { type Message as PbMessage, MessageSchema } from "./gen/forge/v1/messages_pb.js";
import { type Message, messageFromPb } from "./messages.js";
import { AsyncQueue } from "./queue.js";
import { ToolArgumentsError } from "./schema.js";
import {
  ABANDON_FLUSH_MS, CANCEL_GRACE_MS, PRESTART_REATTACH_MS, type ApproverAnswer, type Outage, type Outcome,
  type PendingCall, type RunRequestInit, type RunStreamInit, abortError, askApprover, backoff, cancelledError,
  encodeOutput, generate, isPbMessage, isRejection, isTerminal, mayRetry, neverConnected, pendingCall,
  reattachFailed, runResultFromPb, toolFailure, toolResultRequest,
} from "./stream_support.js";
import type { Coercion } from "./workflow.js";
import { invokeInToolSpan } from "./tracing.js";

export type { Approval, ApprovalContext, Approver, RunRequestInit, Rpc, RunStreamInit } from "./stream_support.js";
export { encodeOutput } from "./stream_support.js";

/**
 * One run in progress. The run starts when the stream is created; iterate it
 * for events (once), await `result`, or `cancel()` it.
 */
export class RunStream<V = unknown> implements AsyncIterable<ForgeEvent<V>> {
  /** Set once the server has accepted the run. */
  runId = "";
  /** Settles when the run ends: the result, or the run's typed error. */
  readonly result: Promise<RunResult<V>>;

  private readonly init: RunStreamInit;
  private readonly events = new AsyncQueue<ForgeEvent<V>>();
  /** The current stream's requests; undefined between a break and the next stream. */
  private requests: AsyncQueue<RunRequestInit> | undefined;
  private readonly call = new AbortController();
  private readonly pending = new Map<string, PendingCall>();
  /** Approval requests whose decision is still being made. */
  private readonly approvals = new Map<string, PendingCall>();
  private readonly values = new Map<string, unknown>();
  /** The prior messages, then those received as message_appended: they stand in for a transcript the server omitted. */
  private readonly streamed: Array<Message | PbMessage>;
  private iterated = false;
  private cancelRequested = false;
  private cancelReason = "";
  private finished = false;
  private abandonError: ForgeError | undefined;
  private cancelTimer: NodeJS.Timeout | undefined;
  private abandonTimer: NodeJS.Timeout | undefined;
  // Reattach state (see drive()).
  /** RunStarted.reattach_grace_s: > 0 when the server keeps the run across a broken stream. */
  private reattachGraceS = 0;
  /** The highest RunResponse.seq handled: events at or below it are not delivered again. */
  private lastSeq = 0;
  /** A run_started (reattached or not) was read: the server has the run. */
  private started = false;
  /** The current stream has opened the run (run_started arrived on it). */
  private attached = false;
  private reattachCount = 0;
  /** Set from a break until a stream reattaches. */
  private outage: Outage | undefined;
  /** A reattached event read before the run's run_started (which the server sends next). */
  private heldReattached: ReattachedEvent | undefined;
  /** Call ids of the tool calls and approval requests received: each is run (asked) once. */
  private readonly callsSeen = new Set<string>();
  private readonly approvalsSeen = new Set<string>();
  /**
   * Every finished call's result and every decision, by call id ("approval:"
   * before a decision's), sent again when the server asks again.
   */
  private readonly answers = new Map<string, RunRequestInit>();
  /**
   * What the current stream asked for (same keys): an answer goes only on a
   * stream that asked for it. A server that resumed the run from its journal
   * sends every unanswered call again on a new stream.
   */
  private asked = new Set<string>();
  private readonly onAbort = (): void => {
    const reason: unknown = this.init.signal?.reason;
    this.cancel(reason instanceof Error ? reason.message : "aborted by the caller");
  };

  constructor(init: RunStreamInit) {
    this.init = init;
    if (init.discardEvents === true) {
      // A closed queue drops what is pushed.
      this.events.close();
    }
    // The server sends prior messages back only in a full transcript.
    this.streamed = init.start.priorMessages.map(messageFromPb);
    this.result = this.drive();
    // The result is also delivered through iteration; never report it as unhandled.
    this.result.catch(() => undefined);
  }

  /** How many times this run's stream broke and a new one reattached to the run. */
  get reattaches(): number {
    return this.reattachCount;
  }

  /**
   * Ask the server to stop the run. Running handlers' signals abort at once
   * (their results are not sent); the run then fails with WorkflowCancelledError.
   * While the run reattaches, the cancel goes out on the stream that reattaches.
   */
  cancel(reason = ""): void {
    if (this.finished || this.cancelRequested) {
      return;
    }
    this.cancelRequested = true;
    this.cancelReason = reason;
    this.send({ kind: { case: "cancel", value: { reason } } });
    this.abortHandlers("the run was cancelled");
    this.cancelTimer = setTimeout(() => {
      this.abandon(cancelledError("the server did not confirm the cancellation in time; stream dropped"));
    }, CANCEL_GRACE_MS);
    this.cancelTimer.unref();
  }

  /** Drop the stream without waiting for the server (it cancels the run); `result` rejects with `error`. */
  abandon(error: ForgeError): void {
    if (this.finished || this.abandonError !== undefined) {
      return;
    }
    this.abandonError = error;
    this.abortHandlers(error.message);
    const requests = this.requests;
    if (requests !== undefined && this.reattachable) {
      // The server keeps a run whose stream merely breaks: tell it to stop
      // (cancel, half-close), then cut the stream shortly after.
      requests.push({ kind: { case: "cancel", value: { reason: error.message } } });
      requests.close();
      this.abandonTimer = setTimeout(() => this.call.abort(error), ABANDON_FLUSH_MS);
      this.abandonTimer.unref();
    } else {
      this.call.abort(error);
    }
  }

  /**
   * This client reattaches, and the server keeps the run across a broken
   * stream; before run_started that is not known yet: the client's own run
   * id is tried.
   */
  private get reattachable(): boolean {
    if (!this.init.reattach || this.id === "") {
      return false;
    }
    return !this.started || this.reattachGraceS > 0;
  }

  /** The run's id: the server's, or before run_started the one this client chose (StartRun.run_id). */
  private get id(): string {
    return this.runId || this.init.start.runId;
  }

  /** Send on the current stream; false (kept for later, or dropped) while there is none. */
  private send(request: RunRequestInit): boolean {
    return this.requests?.push(request) ?? false;
  }

  [Symbol.asyncIterator](): AsyncIterator<ForgeEvent<V>> {
    if (this.iterated) {
      throw new Error("a RunStream can be iterated only once");
    }
    this.iterated = true;
    const inner = this.events[Symbol.asyncIterator]();
    return {
      next: () => inner.next(),
      return: async () => {
        // The consumer stopped early (break, or an error in its loop body): drop the run.
        if (!this.finished) {
          this.abandon(cancelledError("the client stopped reading the run's events"));
        }
        return { value: undefined, done: true };
      },
    };
  }

  /**
   * Run the streams of the run: the first sends `start`. When one breaks
   * before the run ends and the server keeps the run (reattach_grace_s > 0;
   * before run_started: the run may be there, under the id this client
   * chose), open another after a backoff and send `reattach` with the last
   * seq handled, until one takes, the server refuses for good (RUN_NOT_FOUND
   * after run_started, NOT_RUN_OWNER...) or the deadline passes. A reattach
   * answered RUN_NOT_FOUND before run_started means the start never arrived:
   * it is sent again (no tool ran: none is sent before run_started).
   */
  private async drive(): Promise<RunResult<V>> {
    const signal = this.init.signal;
    const start: RunRequestInit = { kind: { case: "start", value: this.init.start } };
    let outcome: Outcome<V> | undefined;
    try {
      if (signal?.aborted) {
        throw cancelledError("aborted before the run started", signal.reason);
      }
      signal?.addEventListener("abort", this.onAbort, { once: true });
      let first: RunRequestInit = start;
      for (;;) {
        const attempt = await this.attempt(first);
        if (!("broke" in attempt)) {
          outcome = attempt;
          break;
        }
        const next = await this.afterBreak(attempt.broke, start);
        if ("error" in next) {
          outcome = next;
          break;
        }
        first = next.first;
      }
    } catch (err) {
      outcome ??= { error: this.abandonError ?? fromTransportError(err) };
    } finally {
      this.finished = true;
      signal?.removeEventListener("abort", this.onAbort);
      clearTimeout(this.cancelTimer);
      clearTimeout(this.abandonTimer);
      this.abortHandlers("the run is over");
      this.init.onDone(this);
    }
    if ("error" in outcome) {
      this.events.close(outcome.error);
      throw outcome.error;
    }
    this.events.push({ type: "run_completed", result: outcome.result });
    this.events.close();
    return outcome.result;
  }

  /** After a stream broke: the run's error, or (after a backoff) the next stream's first message. */
  private async afterBreak(error: ForgeError, start: RunRequestInit): Promise<{ error: ForgeError } | { first: RunRequestInit }> {
    if (this.abandonError !== undefined) {
      return { error: this.abandonError };
    }
    const outage = this.outage;
    // Without an outage the error is the run's, as without reattach.
    const fail = (): { error: ForgeError } => ({ error: outage === undefined ? error : reattachFailed(this.id, outage, error) });
    let restart = false;
    if (!this.reattachable) {
      return fail();
    }
    if (outage === undefined && !this.started) {
      // The first stream, before run_started: the server refused the
      // start (no run), or no connection was made (nothing was sent).
      if (!(error instanceof ConnectionLostError) || neverConnected(error)) {
        return { error };
      }
    } else if (!this.started && isRejection(error, "RUN_NOT_FOUND")) {
      if (this.cancelRequested) {
        return { error: cancelledError("the run was cancelled before it started") };
      }
      restart = true;
    } else if (!this.started && isRejection(error, "RUN_EXISTS")) {
      // The start sent again met the first one, which did arrive: reattach to it.
    } else if (!mayRetry(error)) {
      return fail();
    }
    const current = (this.outage ??= {
      error,
      deadline: Date.now() + this.reattachLimitMs(),
      attempts: 0,
      afterSeq: this.lastSeq,
    });
    if (Date.now() >= current.deadline) {
      return { error: reattachFailed(this.id, current, error) };
    }
    await this.sleep(Math.min(backoff(current.attempts), current.deadline - Date.now()));
    if (this.abandonError !== undefined) {
      return { error: this.abandonError };
    }
    if (Date.now() >= current.deadline) {
      return { error: reattachFailed(this.id, current, error) };
    }
    current.attempts += 1;
    current.afterSeq = this.lastSeq;
    return {
      first: restart ? start : { kind: { case: "reattach", value: { runId: this.id, afterSeq: BigInt(this.lastSeq) } } },
    };
  }

  /** The longest time spent reattaching after one break: the run's grace (30 s before run_started), or less. */
  private reattachLimitMs(): number {
    const limit = this.started ? this.reattachGraceS * 1000 : PRESTART_REATTACH_MS;
    return Math.min(limit, this.init.reattachDeadlineMs ?? Infinity);
  }

  /** One stream of the run, opened with `first`: the run's outcome, or what broke the stream. */
  private async attempt(first: RunRequestInit): Promise<Outcome<V> | { broke: ForgeError }> {
    const requests = new AsyncQueue<RunRequestInit>();
    requests.push(first);
    if (this.cancelRequested) {
      // Cancelled while no stream was open.
      requests.push({ kind: { case: "cancel", value: { reason: this.cancelReason } } });
    }
    this.requests = requests;
    this.asked = new Set();
    this.attached = false;
    // Aborting the run aborts its current stream; a stream that broke is aborted alone.
    const stream = new AbortController();
    const relay = (): void => stream.abort(this.call.signal.reason);
    this.call.signal.addEventListener("abort", relay, { once: true });
    // A reattach still unanswered (no run_started) at the outage's deadline is dropped.
    let unanswered: ConnectionLostError | undefined;
    let answerTimer: NodeJS.Timeout | undefined;
    const outage = this.outage;
    if (first.kind?.case === "reattach" && outage !== undefined) {
      answerTimer = setTimeout(
        () => {
          if (!this.attached) {
            unanswered = new ConnectionLostError("the reattach was not answered in time");
            stream.abort(unanswered);
          }
        },
        Math.max(outage.deadline - Date.now(), 0),
      );
      answerTimer.unref();
    }
    let outcome: Outcome<V> | undefined;
    try {
      if (this.call.signal.aborted) {
        throw this.call.signal.reason;
      }
      const responses = this.init.rpc.run(generate(requests), {
        signal: stream.signal,
        headers: this.init.headers,
        timeoutMs: 0,
      });
      for await (const response of responses) {
        // After the terminal event the server closes the stream; read to its end.
        if (outcome !== undefined) {
          continue;
        }
        if (this.abandonError !== undefined) {
          // Dropped: the cancel is on its way; handle nothing more.
          if (isTerminal(response)) {
            outcome = { error: this.abandonError };
          }
          continue;
        }
        outcome = this.handle(response);
      }
      return outcome ?? { broke: new ConnectionLostError("the server closed the stream before the run ended") };
    } catch (err) {
      return outcome ?? { broke: this.abandonError ?? unanswered ?? fromTransportError(err) };
    } finally {
      clearTimeout(answerTimer);
      this.call.signal.removeEventListener("abort", relay);
      if (this.requests === requests) {
        this.requests = undefined;
      }
      // Cut (not half-close) a stream that broke: a half-close would cancel the run.
      stream.abort();
      requests.close();
    }
  }

  /** Wait `ms` (the run's abort ends the wait early). */
  private async sleep(ms: number): Promise<void> {
    const signal = this.call.signal;
    if (signal.aborted) {
      return;
    }
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal.addEventListener("abort", done, { once: true });
    });
  }

  /** Handle one server message; returns the run's outcome on its terminal event. */
  private handle(response: RunResponse): Outcome<V> | undefined {
    const kind = response.kind;
    if (kind.case === "batch") {
      // Each event as if it had come alone, in order (its own seq); the
      // batch's seq is its last event's and is not a separate event.
      for (const event of kind.value.events) {
        const outcome = this.handle(event);
        if (outcome !== undefined) {
          return outcome;
        }
      }
      return undefined;
    }
    const seq = Number(response.seq);
    if (kind.case === "toolCall" || kind.case === "approvalRequest") {
      // Sent again on a reattach while unanswered: deduplicated by call id instead.
      this.lastSeq = Math.max(this.lastSeq, seq);
    } else if (seq > 0) {
      if (seq <= this.lastSeq) {
        return undefined;
      }
      this.lastSeq = seq;
    }
    if (this.heldReattached !== undefined && kind.case !== "runStarted") {
      this.events.push(this.heldReattached);
      this.heldReattached = undefined;
    }
    switch (kind.case) {
      case "runStarted":
        this.onRunStarted(kind.value);
        return undefined;
      case "chunk":
        this.events.push(chunkFromPb(kind.value));
        return undefined;
      case "toolCall":
        this.dispatch(kind.value);
        return undefined;
      case "approvalRequest":
        this.askApproval(kind.value);
        return undefined;
      case "messageAppended":
        this.onMessageAppended(kind.value);
        return undefined;
      case "runCompleted": {
        return { result: runResultFromPb<V>(kind.value, this.runId, this.values, () => this.streamedMessages()) };
      }
      case "runFailed":
        return { error: runFailedFromPb(kind.value, this.streamedMessages()) };
      case "toolCallCancelled":
        this.onToolCallCancelled(kind.value);
        return undefined;
      case "compacted":
        this.events.push(compactedFromPb(kind.value));
        return undefined;
      case "toolOutputScreened":
        this.events.push(toolOutputScreenedFromPb(kind.value));
        return undefined;
      case "queued":
        this.events.push(queuedFromPb(kind.value));
        return undefined;
      default:
        return undefined;
    }
  }

  /** A message of the transcript: kept for the result, and an event unless events are discarded. */
  private onMessageAppended(appended: MessageAppended): void {
    if (this.init.discardEvents === true) {
      // Nobody sees the event: convert the message only if the transcript needs it.
      this.streamed.push(appended.message ?? create(MessageSchema));
      return;
    }
    const event = messageAppendedFromPb(appended);
    this.streamed.push(event.message);
    this.events.push(event);
  }

  /** The server stopped waiting for a call: its tool's signal is aborted, marked expired, and the event pushed. */
  private onToolCallCancelled(cancelled: ToolCallCancelled): void {
    const { callId, reason } = cancelled;
    const pending = this.pending.get(callId);
    if (pending !== undefined) {
      pending.expired = true;
      pending.controller.abort(abortError(`the server stopped waiting for ${pending.toolName}: ${reason}`));
    }
    this.events.push({
      type: "tool_call_cancelled",
      callId,
      toolName: pending?.toolName ?? "",
      reason,
    });
  }

  /** The run's own run_started (its event), or one that opens a reattached stream (a reattached event). */
  private onRunStarted(started: RunStarted): void {
    this.attached = true;
    if (started.reattached) {
      // Not a second run_started: the stream took the run over.
      this.reattachCount += 1;
      this.reattachGraceS = started.reattachGraceS || this.reattachGraceS;
      const event: ReattachedEvent = {
        type: "reattached",
        runId: started.runId || this.id,
        afterSeq: this.outage?.afterSeq ?? this.lastSeq,
        attempts: this.outage?.attempts ?? 0,
      };
      this.outage = undefined;
      if (this.runId === "") {
        // Broken before the run's run_started was read: it comes next, then this.
        this.heldReattached = event;
      } else {
        this.events.push(event);
      }
      this.started = true;
      return;
    }
    this.started = true;
    this.outage = undefined;
    this.runId = started.runId;
    this.reattachGraceS = started.reattachGraceS;
    this.events.push(runStartedFromPb(started));
    if (this.heldReattached !== undefined) {
      this.events.push(this.heldReattached);
      this.heldReattached = undefined;
    }
  }

  /** The prior messages and those received as message_appended, as a transcript. */
  private streamedMessages(): Message[] {
    return this.streamed.map((m) => (isPbMessage(m) ? messageFromPb(m) : m));
  }

  private askApproval(request: PbApprovalRequest): void {
    const key = `approval:${request.callId}`;
    this.asked.add(key);
    if (this.approvalsSeen.has(request.callId)) {
      // Asked again after a reattach: the decision made, or nothing while it
      // is being made (it goes on the stream that is current then).
      const decision = this.answers.get(key);
      if (decision !== undefined) {
        this.send(decision);
      }
      return;
    }
    this.approvalsSeen.add(request.callId);
    const event = approvalRequestedFromPb(request);
    this.events.push(event);
    if (this.cancelRequested || this.finished) {
      // The server is already cancelling; it will not wait for a decision.
      this.events.push({
        type: "approval_decided",
        callId: event.callId,
        toolName: event.toolName,
        approved: false,
        reason: "",
        error: abortError("the run was cancelled"),
        sent: false,
      });
      return;
    }
    // The server waits for a decision as long as for a tool result.
    const what = `approval of ${request.toolName} (tool timeout)`;
    const pending = pendingCall(request.toolName, this.init.toolTimeoutMs, what);
    this.approvals.set(request.callId, pending);
    void this.decide(event, pending);
  }

  /** Ask the approver, send its decision unless the server no longer waits for it, and report it. */
  private async decide(event: ApprovalRequestedEvent, pending: PendingCall): Promise<void> {
    let asked: ApproverAnswer;
    try {
      asked = await askApprover(this.init.approve, event, pending.controller, this.runId);
    } finally {
      clearTimeout(pending.timer);
      this.approvals.delete(event.callId);
    }
    const { decision, error } = asked;
    const sent = !(this.finished || this.cancelRequested || pending.expired || this.abandonError !== undefined);
    if (sent) {
      // Sent on the current stream if it asked; else kept until the server asks again.
      const key = `approval:${event.callId}`;
      const message: RunRequestInit = { kind: { case: "approval", value: { callId: event.callId, ...decision } } };
      this.answers.set(key, message);
      if (this.asked.has(key)) {
        this.send(message);
      }
    }
    this.events.push({
      type: "approval_decided",
      callId: event.callId,
      toolName: event.toolName,
      ...decision,
      error,
      sent,
    });
  }

  private dispatch(call: ToolCallRequest): void {
    this.asked.add(call.callId);
    if (this.callsSeen.has(call.callId)) {
      // Sent again after a reattach (or by a server that resumed the run):
      // the kept result, or nothing while the handler still runs (its result
      // goes on the stream that is current when it finishes).
      const answer = this.answers.get(call.callId);
      if (answer !== undefined) {
        this.send(answer);
      }
      return;
    }
    this.callsSeen.add(call.callId);
    const event = toolCallStartedFromPb(call);
    this.events.push(event);
    // Normally tool_call_cancelled arrives first; the timer covers a server that does not send it.
    const pending = pendingCall(call.toolName, this.init.toolTimeoutMs, `${call.toolName} (tool timeout)`);
    this.pending.set(call.callId, pending);
    if (this.cancelRequested || this.finished || this.abandonError !== undefined) {
      pending.controller.abort(abortError("the run was cancelled"));
    }
    // The handler gets its own parse: undefined (invalid JSON) must fail it, not become {}.
    void this.runTool(call, parseJson(call.argumentsJson), event.coercions, pending);
  }

  private async runTool(
    call: ToolCallRequest,
    args: unknown,
    coercions: readonly Coercion[],
    pending: PendingCall,
  ): Promise<void> {
    let output = "";
    let error: ToolFailure | undefined;
    try {
      const tool = this.init.workflow.tools.get(call.toolName);
      if (tool === undefined) {
        throw new ReferenceError(`no tool ${JSON.stringify(call.toolName)} is registered in this client`);
      }
      if (args === undefined) {
        throw new ToolArgumentsError("invalid arguments: not valid JSON");
      }
      const lazy = pending.controller;
      const value = await invokeInToolSpan(call, tool, args, {
        get signal() {
          return lazy.signal;
        },
        callId: call.callId,
        toolName: call.toolName,
        iteration: call.iteration,
        runId: this.runId,
        coercions,
      });
      this.values.set(call.callId, value);
      output = encodeOutput(value);
    } catch (err) {
      error = toolFailure(err);
    } finally {
      clearTimeout(pending.timer);
      this.pending.delete(call.callId);
    }
    const sent = !(this.finished || this.cancelRequested || pending.expired || this.abandonError !== undefined);
    if (sent) {
      const message = toolResultRequest(call.callId, output, error);
      // Sent on the current stream if it asked; else kept until the server asks again.
      this.answers.set(call.callId, message);
      if (this.asked.has(call.callId)) {
        this.send(message);
      }
    }
    this.events.push({
      type: "tool_call_finished",
      callId: call.callId,
      toolName: call.toolName,
      output,
      error,
      sent,
    });
  }

  private abortHandlers(why: string): void {
    for (const pending of [...this.pending.values(), ...this.approvals.values()]) {
      if (!pending.controller.aborted) {
        pending.controller.abort(abortError(why));
      }
    }
  }
}

