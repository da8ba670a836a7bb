/** Errors the SDK throws: one class per way a run can end badly (all instanceof-checkable). */

import { Code, ConnectError } from "@connectrpc/connect";
import { FailureReason, type RunFailed } from "./gen/forge/v1/forge_service_pb.js";
import { BadRequestSchema, ErrorInfoSchema } from "./gen/google/rpc/error_details_pb.js";
import { type Message, type Usage, messageFromPb, usageFromPb } from "./messages.js";

/** FailureReason without its prefix, e.g. "STEP_ENFORCEMENT". */
export type FailureReasonName =
  | "UNSPECIFIED"
  | "TOOL_CALL"
  | "TOOL_EXECUTION"
  | "STEP_ENFORCEMENT"
  | "PREREQUISITE"
  | "MAX_ITERATIONS"
  | "CANCELLED"
  | "BACKEND"
  | "CONTEXT_BUDGET_EXCEEDED"
  | "INTERNAL"
  | "SHUTTING_DOWN";

/** Base class of every error the SDK throws. */
export class ForgeError extends Error {
  override name = "ForgeError";
}

/**
 * Throw from a tool handler when the arguments were fine but found nothing
 * ("no such city"). The model sees the message and can try other arguments;
 * unlike other errors it neither counts toward `maxToolErrors` nor completes a step.
 */
export class ToolResolutionError extends Error {
  override name = "ToolResolutionError";
}

/**
 * Throw from a tool handler when what it calls could not be reached or its
 * answer never came back (a lost connection, a timeout in transit): whether
 * the call took effect is unknown. The server makes the call once more (a new
 * call id, `<id>.retry`) when the tool is read-only or idempotent (`{ readOnly:
 * true }`, `{ idempotent: true }` at registration); otherwise, and when that
 * fails too, the model sees the message, told that the effect is unknown.
 * Counts toward `maxToolErrors`.
 */
export class ToolUnreachableError extends Error {
  override name = "ToolUnreachableError";
}

export interface RunFailedInit {
  reason: FailureReasonName;
  details: Record<string, string>;
  iterations: number;
  transcript: Message[];
  usage: Usage;
  cause?: unknown;
}

/** The server ended the run unsuccessfully; `transcript` shows what happened. */
export class RunFailedError extends ForgeError {
  override name = "RunFailedError";
  /** The server's explanation (the error's `message` is prefixed with the reason). */
  readonly serverMessage: string;
  readonly reason: FailureReasonName;
  /** Reason-specific facts, e.g. `pending_steps`, `tool_name`. */
  readonly details: Readonly<Record<string, string>>;
  readonly iterations: number;
  /**
   * The conversation so far, prior messages included. When the server omitted
   * it for size (RunFailed.transcript_omitted), rebuilt as for
   * `RunResult.transcript`.
   */
  readonly transcript: readonly Message[];
  readonly usage: Usage;

  constructor(message: string, init: RunFailedInit) {
    super(`${init.reason}: ${message}`, init.cause === undefined ? {} : { cause: init.cause });
    this.serverMessage = message;
    this.reason = init.reason;
    this.details = init.details;
    this.iterations = init.iterations;
    this.transcript = init.transcript;
    this.usage = init.usage;
  }
}

/** The model kept answering without a valid tool call. */
export class ToolCallError extends RunFailedError {
  override name = "ToolCallError";
}
/** Tools kept failing and the model did not recover. */
export class ToolExecutionError extends RunFailedError {
  override name = "ToolExecutionError";
}
/** The model kept calling a terminal tool before the required steps. */
export class StepEnforcementError extends RunFailedError {
  override name = "StepEnforcementError";
}
/** The model kept calling tools whose prerequisites were not met. */
export class PrerequisiteError extends RunFailedError {
  override name = "PrerequisiteError";
}
/** No terminal tool within the run's iteration limit. */
export class MaxIterationsError extends RunFailedError {
  override name = "MaxIterationsError";
}
/** The run was cancelled (stream.cancel(), or the caller's AbortSignal). */
export class WorkflowCancelledError extends RunFailedError {
  override name = "WorkflowCancelledError";
}
/** The model server failed or could not be reached. */
export class BackendError extends RunFailedError {
  override name = "BackendError";
}
/** The conversation no longer fits the model's context. */
export class ContextBudgetExceededError extends RunFailedError {
  override name = "ContextBudgetExceededError";
}
/** A bug in the server. */
export class InternalServerError extends RunFailedError {
  override name = "InternalServerError";
}
/** The server shut down before the run ended; retrying on another server is safe. */
export class ShuttingDownError extends RunFailedError {
  override name = "ShuttingDownError";
}

const BY_REASON: Record<FailureReasonName, typeof RunFailedError> = {
  UNSPECIFIED: RunFailedError,
  TOOL_CALL: ToolCallError,
  TOOL_EXECUTION: ToolExecutionError,
  STEP_ENFORCEMENT: StepEnforcementError,
  PREREQUISITE: PrerequisiteError,
  MAX_ITERATIONS: MaxIterationsError,
  CANCELLED: WorkflowCancelledError,
  BACKEND: BackendError,
  CONTEXT_BUDGET_EXCEEDED: ContextBudgetExceededError,
  INTERNAL: InternalServerError,
  SHUTTING_DOWN: ShuttingDownError,
};

/**
 * The typed error of a run_failed message. `streamed` (the messages received
 * as message_appended) stands in for a transcript the server omitted for size.
 */
export function runFailedFromPb(msg: RunFailed, streamed: readonly Message[] = []): RunFailedError {
  const name = (FailureReason[msg.reason] ?? "UNSPECIFIED") as FailureReasonName;
  const cls = BY_REASON[name] ?? RunFailedError;
  return new cls(msg.message, {
    reason: name,
    details: { ...msg.details },
    iterations: msg.iterations,
    transcript: msg.transcriptOmitted ? [...streamed] : msg.transcript.map(messageFromPb),
    usage: usageFromPb(msg.usage),
  });
}

/** A field problem named in a rejection's google.rpc.BadRequest. */
export interface FieldViolation {
  field: string;
  description: string;
}

/**
 * The server refused the request (bad workflow, protocol misuse, busy, missing
 * or unknown token). `reason` is the stable ErrorInfo reason (INVALID_WORKFLOW,
 * SERVER_BUSY, UNKNOWN_CALL_ID, UNAUTHENTICATED, TOKEN_RUN_LIMIT,
 * AUTH_UNAVAILABLE...) and `field` the offending field (e.g.
 * `workflow.terminal_tools[0]`).
 */
export class RequestRejectedError extends ForgeError {
  override name = "RequestRejectedError";
  /** gRPC status code name, e.g. "INVALID_ARGUMENT". */
  readonly code: string;
  readonly reason: string;
  readonly field: string;
  readonly serverMessage: string;
  readonly violations: readonly FieldViolation[];

  constructor(
    code: string,
    reason: string,
    field: string,
    message: string,
    violations: readonly FieldViolation[] = [],
    options?: { cause?: unknown },
  ) {
    // UNAUTHENTICATED's reason is its code: said once.
    super(`${reason === "" || reason === code ? code : `${code} ${reason}`}: ${message}`, options);
    this.code = code;
    this.reason = reason;
    this.field = field;
    this.serverMessage = message;
    this.violations = violations;
  }
}

/**
 * The connection or stream to the server broke before the run ended (and the
 * run could not be reattached: see `StreamOptions.reattach`).
 */
export class ConnectionLostError extends ForgeError {
  override name = "ConnectionLostError";
  /** gRPC status code name when the transport reported one, e.g. "UNAVAILABLE". */
  readonly code: string;
  /**
   * Set when the SDK tried to reattach the run and gave up: what broke the
   * stream. `cause` is then the last reattach attempt's error (e.g. a
   * RequestRejectedError with reason RUN_NOT_FOUND or NOT_RUN_OWNER), or the
   * break itself when the deadline passed before another attempt.
   */
  readonly streamBreak: ForgeError | undefined;

  constructor(
    message: string,
    code = "UNAVAILABLE",
    options?: { cause?: unknown; streamBreak?: ForgeError | undefined },
  ) {
    super(message, options?.cause === undefined ? {} : { cause: options.cause });
    this.code = code;
    this.streamBreak = options?.streamBreak;
  }
}

/** "InvalidArgument" -> "INVALID_ARGUMENT"; the gRPC names, so Canceled -> "CANCELLED". */
export function codeName(code: Code): string {
  if (code === Code.Canceled) {
    return "CANCELLED";
  }
  return (Code[code] ?? "Unknown").replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
}

const TRANSPORT_CODES = new Set([
  Code.Unavailable,
  Code.Canceled,
  Code.Aborted,
  Code.DeadlineExceeded,
  Code.Unknown,
  Code.Internal,
]);

/** Map a transport error to RequestRejectedError (the server said no) or ConnectionLostError. */
export function fromTransportError(err: unknown): ForgeError {
  if (err instanceof ForgeError) {
    return err;
  }
  const ce = ConnectError.from(err);
  const info = ce.findDetails(ErrorInfoSchema)[0];
  const violations = ce
    .findDetails(BadRequestSchema)
    .flatMap((b) => b.fieldViolations.map((v) => ({ field: v.field, description: v.description })));
  // A typed reason means the server refused (e.g. UNAVAILABLE AUTH_UNAVAILABLE,
  // SHUTTING_DOWN); the same codes without one mean the transport failed.
  if (!info?.reason && TRANSPORT_CODES.has(ce.code)) {
    return new ConnectionLostError(`${codeName(ce.code)}: ${ce.rawMessage}`, codeName(ce.code), {
      cause: err,
    });
  }
  return new RequestRejectedError(
    codeName(ce.code),
    info?.reason ?? "",
    info?.metadata["field"] ?? violations[0]?.field ?? "",
    ce.rawMessage,
    violations,
    { cause: err },
  );
}
