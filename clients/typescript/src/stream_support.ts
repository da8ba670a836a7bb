/** The parts of a run stream that hold no stream state: its options and
 * approval types, pending-call timers, the tool_result and result a call and a
 * run end with, and how a broken stream's error is classified. */

import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  type RunCompleted,
  type RunRequestSchema,
  type RunResponse,
  type StartRun,
  ToolErrorKind,
} from "./gen/forge/v1/forge_service_pb.js";
import {
  ConnectionLostError,
  type ForgeError,
  RequestRejectedError,
  ToolResolutionError,
  ToolUnreachableError,
  WorkflowCancelledError,
} from "./errors.js";
import type { ApprovalRequest, ApprovalRequestedEvent, RunResult, ToolFailure } from "./events.js";
import type { Message as PbMessage } from "./gen/forge/v1/messages_pb.js";
import { type Message, messageFromPb, usageFromPb } from "./messages.js";
import type { RunStream } from "./run_stream.js";
import type { Workflow } from "./workflow.js";

/**
 * The server says when it stops waiting for a call (tool_call_cancelled); should
 * that never arrive, handlers are aborted this long after the tool timeout.
 */
export const TOOL_TIMEOUT_FALLBACK_GRACE_MS = 1_000;
/** The denial sent for an approval request when the run has no `approve` callback. */
export const NO_APPROVER_REASON = "no approver is configured in this client";
/** How long a cancelled run may take to report run_failed(CANCELLED) before the stream is dropped. */
export const CANCEL_GRACE_MS = 5_000;
/** How long a dropped reattachable run's stream gets to deliver its `cancel` before it is cut. */
export const ABANDON_FLUSH_MS = 250;
/** Reattach backoff: the first wait, doubling up to the last (each with jitter). */
export const REATTACH_FIRST_WAIT_MS = 50;
export const REATTACH_MAX_WAIT_MS = 2_000;
/** How long a stream that broke before run_started keeps reattaching (the server's grace is not known yet). */
export const PRESTART_REATTACH_MS = 30_000;
/** Error codes of a connection that was never made: nothing of the run was sent. */
export const NEVER_CONNECTED = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH", "ENOENT"]);

// ── Approvals ──────────────────────────────────────────────────────────────

/** An approver's answer; `reason` is shown to the model with a denial. */
export interface Approval {
  approved: boolean;
  reason?: string | undefined;
}

/** What an approver gets besides the request. */
export interface ApprovalContext {
  /**
   * Aborts when the run is cancelled or over, the stream is lost for good
   * (not while the SDK reattaches the run), or the server stops waiting for
   * the decision (after the tool timeout); a decision made after that is
   * not sent.
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
  /** Reattach after a stream break when the server keeps the run (RunStarted.reattach_grace_s > 0). */
  reattach: boolean;
  /** Cap on the time spent reattaching after one break (the run's grace is the other cap). */
  reattachDeadlineMs: number | undefined;
  onDone: (stream: RunStream<any>) => void;
  /** Nobody iterates the stream (client.run() without onEvent): its events are dropped, not queued. */
  discardEvents?: boolean | undefined;
}

export type Outcome<V> = { result: RunResult<V> } | { error: ForgeError };

/** An outage: the stream broke and no new one has reattached yet. */
export interface Outage {
  /** What broke the stream. */
  error: ForgeError;
  /** When the SDK gives up (Date.now() time). */
  deadline: number;
  /** Reattach attempts made so far. */
  attempts: number;
  /** The after_seq of the latest attempt. */
  afterSeq: number;
}

/**
 * The error of a run that could not be reattached: a ConnectionLostError,
 * as without reattach, holding the break (`streamBreak`) and the last
 * attempt's error (`cause`).
 */
export function reattachFailed(runId: string, outage: Outage, last: ForgeError): ConnectionLostError {
  const code = outage.error instanceof ConnectionLostError ? outage.error.code : "UNAVAILABLE";
  const why =
    Date.now() >= outage.deadline
      ? `not reattached in time (${outage.attempts} attempts; last: ${last.message})`
      : last.message;
  return new ConnectionLostError(
    `the stream of run ${runId} broke (${outage.error.message}) and the run could not be reattached: ${why}`,
    code,
    { cause: last, streamBreak: outage.error },
  );
}

/**
 * A handler's abort signal, made only when the handler (or approver) reads
 * it: an AbortSignal costs Node some 10 us to make, on every tool call, and
 * most handlers never look at theirs. An abort before that is kept and the
 * signal starts out aborted, with the first reason.
 */
export class LazyAbort {
  private controller: AbortController | undefined;
  private early: { reason: unknown } | undefined;

  get signal(): AbortSignal {
    if (this.controller === undefined) {
      this.controller = new AbortController();
      if (this.early !== undefined) {
        this.controller.abort(this.early.reason);
      }
    }
    return this.controller.signal;
  }

  get aborted(): boolean {
    return this.controller === undefined ? this.early !== undefined : this.controller.signal.aborted;
  }

  abort(reason: unknown): void {
    if (this.controller !== undefined) {
      this.controller.abort(reason);
    } else {
      this.early ??= { reason };
    }
  }
}

export interface PendingCall {
  toolName: string;
  controller: LazyAbort;
  timer: NodeJS.Timeout;
  /** The server stopped waiting (tool timeout): the result must not be sent. */
  expired: boolean;
}

export function abortError(message: string): DOMException {
  return new DOMException(message, "AbortError");
}

/** A run this client cancelled (or dropped) before the server reported it: nothing ran to report. */
export function cancelledError(message: string, cause?: unknown): WorkflowCancelledError {
  return new WorkflowCancelledError(message, {
    reason: "CANCELLED",
    details: {},
    iterations: 0,
    transcript: [],
    usage: usageFromPb(undefined),
    cause,
  });
}

export function isPbMessage(m: Message | PbMessage): m is PbMessage {
  return "$typeName" in m;
}

/** The run's last event (run_completed or run_failed), alone or in a batch. */
export function isTerminal(response: RunResponse): boolean {
  const kind = response.kind;
  if (kind.case === "batch") {
    return kind.value.events.some(isTerminal);
  }
  return kind.case === "runCompleted" || kind.case === "runFailed";
}

/** A stream break worth reattaching after: the transport failed, or the server is unavailable for now. */
export function mayRetry(error: ForgeError): boolean {
  if (error instanceof ConnectionLostError) {
    return true;
  }
  if (error instanceof RequestRejectedError) {
    // SHUTTING_DOWN (a draining server handing the run over), RUN_BUSY (another
    // replica still holds it), or an open-stream limit reached.
    return error.code === "UNAVAILABLE" || (error.code === "RESOURCE_EXHAUSTED" && error.reason === "SERVER_BUSY");
  }
  return false;
}

/** A refusal from the server with this ErrorInfo reason. */
export function isRejection(error: ForgeError, reason: string): boolean {
  return error instanceof RequestRejectedError && error.reason === reason;
}

/** The connection was never made (refused, no such host or socket): nothing of the run was sent. */
export function neverConnected(error: ForgeError): boolean {
  const seen = new Set<unknown>();
  for (let e: unknown = error; e instanceof Error && !seen.has(e); e = e.cause) {
    seen.add(e);
    const { code, syscall } = e as NodeJS.ErrnoException;
    if (syscall === "connect" || syscall === "getaddrinfo" || (code !== undefined && NEVER_CONNECTED.has(code))) {
      return true;
    }
  }
  return false;
}

/** The wait before reattach try `tries` (0, 1, ...): doubling from 50 ms to 2 s, with jitter (half to all of it). */
export function backoff(tries: number): number {
  const full = Math.min(REATTACH_MAX_WAIT_MS, REATTACH_FIRST_WAIT_MS * 2 ** Math.min(tries, 16));
  return full / 2 + Math.random() * (full / 2);
}

/** Connect needs a full async generator (with throw()) as the request stream. */
export async function* generate<T>(source: AsyncIterable<T>): AsyncGenerator<T> {
  yield* source;
}

export const ERROR_KIND: Record<ToolFailure["kind"], ToolErrorKind> = {
  hard: ToolErrorKind.HARD,
  resolution: ToolErrorKind.RESOLUTION,
  unreachable: ToolErrorKind.UNREACHABLE,
};

export function toolFailure(err: unknown): ToolFailure {
  if (err instanceof ToolResolutionError) {
    return { message: err.message, kind: "resolution", type: err.name };
  }
  if (err instanceof ToolUnreachableError) {
    return { message: err.message || err.name, kind: "unreachable", type: err.name };
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
export function withResult(transcript: Message[], terminalCallId: string, result: string): Message[] {
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

/** A call (or approval) in progress, aborted with `the server stopped waiting
 * for <what>` a grace period after the tool timeout. */
export function pendingCall(toolName: string, toolTimeoutMs: number, what: string): PendingCall {
  const controller = new LazyAbort();
  const pending: PendingCall = {
    toolName,
    controller,
    expired: false,
    timer: setTimeout(() => {
      pending.expired = true;
      controller.abort(abortError(`the server stopped waiting for ${what}`));
    }, toolTimeoutMs + TOOL_TIMEOUT_FALLBACK_GRACE_MS),
  };
  pending.timer.unref();
  return pending;
}

/** The tool_result a call's output or failure is sent as. */
export function toolResultRequest(callId: string, output: string, error: ToolFailure | undefined): RunRequestInit {
  return {
    kind: {
      case: "toolResult",
      value: {
        callId,
        outcome:
          error === undefined
            ? { case: "output", value: output }
            : { case: "error", value: { message: error.message, type: error.type, kind: ERROR_KIND[error.kind] } },
      },
    },
  };
}

/** A run_completed as the run's result: the terminal tool's own value where
 * this client ran it, the streamed transcript where the server left it out. */
export function runResultFromPb<V>(
  done: RunCompleted,
  runId: string,
  values: ReadonlyMap<string, unknown>,
  streamed: () => Message[],
): RunResult<V> {
  return {
    runId,
    terminalTool: done.terminalTool,
    value: (values.has(done.terminalCallId) ? values.get(done.terminalCallId) : done.result) as V,
    output: done.result,
    iterations: done.iterations,
    usage: usageFromPb(done.usage),
    transcript: done.transcriptOmitted
      ? streamed()
      : withResult(done.transcript.map(messageFromPb), done.terminalCallId, done.result),
  };
}

/** An approver's decision as sent, and its exception if it threw (then a denial). */
export interface ApproverAnswer {
  decision: { approved: boolean; reason: string };
  error: Error | undefined;
}

/** Ask the approver (none: deny, saying so); a throw is a denial with its message. */
export async function askApprover(
  approve: Approver | undefined,
  event: ApprovalRequestedEvent,
  lazy: LazyAbort,
  runId: string,
): Promise<ApproverAnswer> {
  if (approve === undefined) {
    return { decision: { approved: false, reason: NO_APPROVER_REASON }, error: undefined };
  }
  try {
    const { type: _type, ...request } = event;
    const answer = await approve(request, {
      get signal() {
        return lazy.signal;
      },
      runId,
    });
    const decision =
      typeof answer === "object" && answer !== null
        ? { approved: answer.approved === true, reason: answer.reason ?? "" }
        : { approved: answer === true, reason: "" };
    return { decision, error: undefined };
  } catch (err) {
    const error = err instanceof Error ? err : new Error(String(err));
    return { decision: { approved: false, reason: err instanceof Error ? err.message || err.name : String(err) }, error };
  }
}
