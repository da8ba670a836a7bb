/** One run in progress: its gRPC stream, the tool calls and approvals it runs here, its events. */

import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  type ApprovalRequest as PbApprovalRequest,
  type RunRequestSchema,
  type RunResponse,
  type StartRun,
  type ToolCallRequest,
  ToolErrorKind,
} from "./gen/forge/v1/forge_service_pb.js";
import {
  ConnectionLostError,
  type ForgeError,
  ToolResolutionError,
  WorkflowCancelledError,
  fromTransportError,
  runFailedFromPb,
} from "./errors.js";
import {
  type ApprovalRequest,
  type ApprovalRequestedEvent,
  type ForgeEvent,
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
import { type Message, messageFromPb, usageFromPb } from "./messages.js";
import { AsyncQueue } from "./queue.js";
import { ToolArgumentsError } from "./schema.js";
import type { Coercion, Workflow } from "./workflow.js";

/**
 * The server says when it stops waiting for a call (tool_call_cancelled); should
 * that never arrive, handlers are aborted this long after the tool timeout.
 */
const TOOL_TIMEOUT_FALLBACK_GRACE_MS = 1_000;
/** The denial sent for an approval request when the run has no `approve` callback. */
const NO_APPROVER_REASON = "no approver is configured in this client";
/** How long a cancelled run may take to report run_failed(CANCELLED) before the stream is dropped. */
const CANCEL_GRACE_MS = 5_000;

// ── Approvals ──────────────────────────────────────────────────────────────

/** An approver's answer; `reason` is shown to the model with a denial. */
export interface Approval {
  approved: boolean;
  reason?: string | undefined;
}

/** What an approver gets besides the request. */
export interface ApprovalContext {
  /**
   * Aborts when the run is cancelled or over, the stream is lost, or the
   * server stops waiting for the decision (after the tool timeout); a decision
   * made after that is not sent.
   */
  signal: AbortSignal;
  runId: string;
}

/**
 * Decides whether a destructive call may run: `true`/`false`, or an Approval
 * with a reason for the model, directly or as a promise.
 */
export type Approver = (
  request: ApprovalRequest,
  ctx: ApprovalContext,
) => boolean | Approval | Promise<boolean | Approval>;

// ── One run ────────────────────────────────────────────────────────────────

export type RunRequestInit = MessageInitShape<typeof RunRequestSchema>;

/** The slice of the generated Connect client a run uses (kept structural so the
 * published declarations do not depend on Connect's DOM-typed ones). */
export interface Rpc {
  run(
    requests: AsyncIterable<RunRequestInit>,
    options: { signal: AbortSignal; headers: Record<string, string>; timeoutMs: number },
  ): AsyncIterable<RunResponse>;
}

export interface RunStreamInit {
  rpc: Rpc;
  headers: Record<string, string>;
  workflow: Workflow<any, any>;
  start: StartRun;
  toolTimeoutMs: number;
  signal: AbortSignal | undefined;
  approve: Approver | undefined;
  onDone: (stream: RunStream<any>) => void;
}

interface PendingCall {
  toolName: string;
  controller: AbortController;
  timer: NodeJS.Timeout;
  /** The server stopped waiting (tool timeout): the result must not be sent. */
  expired: boolean;
}

function abortError(message: string): DOMException {
  return new DOMException(message, "AbortError");
}

/** A run this client cancelled (or dropped) before the server reported it: nothing ran to report. */
function cancelledError(message: string, cause?: unknown): WorkflowCancelledError {
  return new WorkflowCancelledError(message, {
    reason: "CANCELLED",
    details: {},
    iterations: 0,
    transcript: [],
    usage: usageFromPb(undefined),
    cause,
  });
}

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
  private readonly requests = new AsyncQueue<RunRequestInit>();
  private readonly call = new AbortController();
  private readonly pending = new Map<string, PendingCall>();
  /** Approval requests whose decision is still being made. */
  private readonly approvals = new Map<string, PendingCall>();
  private readonly values = new Map<string, unknown>();
  /** The prior messages, then those received as message_appended: they stand in for a transcript the server omitted. */
  private readonly streamed: Message[];
  private iterated = false;
  private cancelRequested = false;
  private finished = false;
  private abandonError: ForgeError | undefined;
  private cancelTimer: NodeJS.Timeout | undefined;
  private readonly onAbort = (): void => {
    const reason: unknown = this.init.signal?.reason;
    this.cancel(reason instanceof Error ? reason.message : "aborted by the caller");
  };

  constructor(init: RunStreamInit) {
    this.init = init;
    // The server sends prior messages back only in a full transcript.
    this.streamed = init.start.priorMessages.map(messageFromPb);
    this.result = this.drive();
    // The result is also delivered through iteration; never report it as unhandled.
    this.result.catch(() => undefined);
  }

  /**
   * Ask the server to stop the run. Running handlers' signals abort at once
   * (their results are not sent); the run then fails with WorkflowCancelledError.
   */
  cancel(reason = ""): void {
    if (this.finished || this.cancelRequested) {
      return;
    }
    this.cancelRequested = true;
    this.requests.push({ kind: { case: "cancel", value: { reason } } });
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
    this.call.abort(error);
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

  private async drive(): Promise<RunResult<V>> {
    const signal = this.init.signal;
    let outcome: { result: RunResult<V> } | { error: ForgeError } | undefined;
    try {
      if (signal?.aborted) {
        throw cancelledError("aborted before the run started", signal.reason);
      }
      signal?.addEventListener("abort", this.onAbort, { once: true });
      this.requests.push({ kind: { case: "start", value: this.init.start } });
      const responses = this.init.rpc.run(generate(this.requests), {
        signal: this.call.signal,
        headers: this.init.headers,
        timeoutMs: 0,
      });
      for await (const response of responses) {
        // After the terminal event the server closes the stream; read to its end.
        if (outcome === undefined) {
          outcome = this.handle(response);
        }
      }
      if (outcome === undefined) {
        outcome = { error: new ConnectionLostError("the server closed the stream before the run ended") };
      }
    } catch (err) {
      if (outcome === undefined) {
        outcome = { error: this.abandonError ?? fromTransportError(err) };
      }
    } finally {
      this.finished = true;
      signal?.removeEventListener("abort", this.onAbort);
      clearTimeout(this.cancelTimer);
      this.abortHandlers("the run is over");
      this.requests.close();
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

  /** Handle one server message; returns the run's outcome on its terminal event. */
  private handle(response: RunResponse): { result: RunResult<V> } | { error: ForgeError } | undefined {
    const kind = response.kind;
    switch (kind.case) {
      case "runStarted":
        this.runId = kind.value.runId;
        this.events.push(runStartedFromPb(kind.value));
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
      case "messageAppended": {
        const event = messageAppendedFromPb(kind.value);
        this.streamed.push(event.message);
        this.events.push(event);
        return undefined;
      }
      case "runCompleted": {
        const done = kind.value;
        return {
          result: {
            runId: this.runId,
            terminalTool: done.terminalTool,
            value: (this.values.has(done.terminalCallId)
              ? this.values.get(done.terminalCallId)
              : done.result) as V,
            output: done.result,
            iterations: done.iterations,
            usage: usageFromPb(done.usage),
            transcript: done.transcriptOmitted
              ? [...this.streamed]
              : withResult(done.transcript.map(messageFromPb), done.terminalCallId, done.result),
          },
        };
      }
      case "runFailed":
        return { error: runFailedFromPb(kind.value, this.streamed) };
      case "toolCallCancelled": {
        const { callId, reason } = kind.value;
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
        return undefined;
      }
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

  private askApproval(request: PbApprovalRequest): void {
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
    const controller = new AbortController();
    const pending: PendingCall = {
      toolName: request.toolName,
      controller,
      expired: false,
      // The server waits for a decision as long as for a tool result.
      timer: setTimeout(() => {
        pending.expired = true;
        controller.abort(abortError(`the server stopped waiting for approval of ${request.toolName} (tool timeout)`));
      }, this.init.toolTimeoutMs + TOOL_TIMEOUT_FALLBACK_GRACE_MS),
    };
    pending.timer.unref();
    this.approvals.set(request.callId, pending);
    void this.decide(event, pending);
  }

  /** Ask the approver, send its decision unless the server no longer waits for it, and report it. */
  private async decide(event: ApprovalRequestedEvent, pending: PendingCall): Promise<void> {
    let decision: { approved: boolean; reason: string };
    let error: Error | undefined;
    try {
      const approve = this.init.approve;
      if (approve === undefined) {
        decision = { approved: false, reason: NO_APPROVER_REASON };
      } else {
        const { type: _type, ...request } = event;
        const answer = await approve(request, { signal: pending.controller.signal, runId: this.runId });
        decision =
          typeof answer === "object" && answer !== null
            ? { approved: answer.approved === true, reason: answer.reason ?? "" }
            : { approved: answer === true, reason: "" };
      }
    } catch (err) {
      error = err instanceof Error ? err : new Error(String(err));
      decision = { approved: false, reason: err instanceof Error ? err.message || err.name : String(err) };
    } finally {
      clearTimeout(pending.timer);
      this.approvals.delete(event.callId);
    }
    const sent = !(this.finished || this.cancelRequested || pending.expired || this.abandonError !== undefined);
    if (sent) {
      this.requests.push({
        kind: { case: "approval", value: { callId: event.callId, ...decision } },
      });
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
    const event = toolCallStartedFromPb(call);
    this.events.push(event);
    const controller = new AbortController();
    const pending: PendingCall = {
      toolName: call.toolName,
      controller,
      expired: false,
      // Normally tool_call_cancelled arrives first; this covers a server that
      // does not send it.
      timer: setTimeout(() => {
        pending.expired = true;
        controller.abort(abortError(`the server stopped waiting for ${call.toolName} (tool timeout)`));
      }, this.init.toolTimeoutMs + TOOL_TIMEOUT_FALLBACK_GRACE_MS),
    };
    pending.timer.unref();
    this.pending.set(call.callId, pending);
    if (this.cancelRequested || this.finished) {
      controller.abort(abortError("the run was cancelled"));
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
      const value = await tool.invoke(args, {
        signal: pending.controller.signal,
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
      this.requests.push({
        kind: {
          case: "toolResult",
          value: {
            callId: call.callId,
            outcome:
              error === undefined
                ? { case: "output", value: output }
                : {
                    case: "error",
                    value: {
                      message: error.message,
                      type: error.type,
                      kind: error.kind === "resolution" ? ToolErrorKind.RESOLUTION : ToolErrorKind.HARD,
                    },
                  },
          },
        },
      });
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
      if (!pending.controller.signal.aborted) {
        pending.controller.abort(abortError(why));
      }
    }
  }
}

/** Connect needs a full async generator (with throw()) as the request stream. */
async function* generate<T>(source: AsyncIterable<T>): AsyncGenerator<T> {
  yield* source;
}

function toolFailure(err: unknown): ToolFailure {
  if (err instanceof ToolResolutionError) {
    return { message: err.message, kind: "resolution", type: err.name };
  }
  if (err instanceof Error) {
    return { message: err.message || err.name, kind: "hard", type: err.name || err.constructor.name };
  }
  return { message: String(err), kind: "hard", type: typeof err };
}

/** What goes over the wire for a handler's return value. */
export function encodeOutput(value: unknown): string {
  if (typeof value === "string") {
    return value;
  }
  if (value === undefined || value === null) {
    return "";
  }
  const json = JSON.stringify(value, (_key, v: unknown) => (typeof v === "bigint" ? v.toString() : v));
  return json === undefined ? String(value) : json;
}

/**
 * The final transcript with the terminal result put back in its message: the
 * server sends that content once, as RunCompleted.result.
 */
function withResult(transcript: Message[], terminalCallId: string, result: string): Message[] {
  for (let i = transcript.length - 1; i >= 0; i--) {
    const message = transcript[i];
    if (message === undefined || message.role !== "tool" || message.toolCallId !== terminalCallId) {
      continue;
    }
    if (message.content === "") {
      transcript[i] = { ...message, content: result };
    }
    break;
  }
  return transcript;
}
