/** The Forge client: one bidirectional gRPC stream per run; tools run in this process. */

import { type MessageInitShape, create } from "@bufbuild/protobuf";
import { type Interceptor, createClient } from "@connectrpc/connect";
import { Http2SessionManager, createGrpcTransport } from "@connectrpc/connect-node";
import type * as http2 from "node:http2";
import { connect as connectSocket } from "node:net";
import {
  type ApprovalRequest as PbApprovalRequest,
  ChunkType,
  ForgeService,
  type RunRequestSchema,
  type RunResponse,
  type StartRun,
  StartRunSchema,
  type ToolCallRequest,
  ToolErrorKind,
} from "./gen/forge/v1/forge_service_pb.js";
import {
  CompactionStrategy,
  EnforcementMode,
  ReasoningReplay,
  type RunOptions as PbRunOptions,
  ToolOutputPolicy,
  RunOptionsSchema,
} from "./gen/forge/v1/workflow_pb.js";
import {
  ConnectionLostError,
  ForgeError,
  ToolResolutionError,
  WorkflowCancelledError,
  fromTransportError,
  runFailedFromPb,
} from "./errors.js";
import {
  type Message,
  type MessageInput,
  type Usage,
  enumName,
  messageFromPb,
  messageToPb,
  usageFromPb,
} from "./messages.js";
import { MessageSchema } from "./gen/forge/v1/messages_pb.js";
import { AsyncQueue } from "./queue.js";
import { ToolArgumentsError } from "./schema.js";
import type { Coercion, RunValue, Workflow } from "./workflow.js";

export const DEFAULT_ADDRESS = "127.0.0.1:50051";
/** The server's tool timeout when RunOptions.toolTimeoutMs is unset. */
const SERVER_DEFAULT_TOOL_TIMEOUT_MS = 300_000;
/**
 * The server says when it stops waiting for a call (tool_call_cancelled); should
 * that never arrive, handlers are aborted this long after the tool timeout.
 */
const TOOL_TIMEOUT_FALLBACK_GRACE_MS = 1_000;
/** The denial sent for an approval request when the run has no `approve` callback. */
const NO_APPROVER_REASON = "no approver is configured in this client";
/** How long a cancelled run may take to report run_failed(CANCELLED) before the stream is dropped. */
const CANCEL_GRACE_MS = 5_000;

// ── Options ────────────────────────────────────────────────────────────────

export interface TlsOptions {
  /** PEM CA certificate(s) to trust instead of the system's. */
  ca?: string | Buffer | undefined;
  /** PEM client certificate and key for mutual TLS. */
  cert?: string | Buffer | undefined;
  key?: string | Buffer | undefined;
  /** TLS server name (SNI) when it differs from the address's host. */
  servername?: string | undefined;
  /** Default true. */
  rejectUnauthorized?: boolean | undefined;
}

export interface ForgeClientOptions {
  /**
   * "host:port" (plaintext unless `tls`), a URL ("https://forge:50051"), or a
   * Unix domain socket as "unix:///abs/path/forge.sock" (also "unix:/abs/path"
   * or "unix:relative/path"; plaintext only, `tls` must be unset). Default
   * 127.0.0.1:50051.
   */
  address?: string | undefined;
  /** TLS: true for the system's CAs, or explicit certificates. */
  tls?: boolean | TlsOptions | undefined;
  /** Bearer token sent as `authorization: Bearer <token>` on every call (or a function returning one). */
  token?: string | (() => string | Promise<string>) | undefined;
  /** HTTP/2 PING interval while calls are open (default 30 000 ms); false disables keepalive. */
  keepaliveMs?: number | false | undefined;
  /** How long a keepalive PING may go unanswered before the connection counts as dead (default 15 000 ms). */
  keepaliveTimeoutMs?: number | undefined;
  /** Largest message sent or received (default 16 MiB). */
  maxMessageBytes?: number | undefined;
  /** Extra headers (gRPC metadata) on every call. */
  headers?: Record<string, string> | undefined;
}

/** Per-run limits and switches; unset leaves the server's default. */
export interface RunOptions {
  /** Hard ceiling on model calls (server default 10). */
  maxIterations?: number | undefined;
  /** Consecutive invalid responses answered with a correction (server default 3). */
  maxRetries?: number | undefined;
  /** Consecutive hard tool errors fed back to the model (server default 2). */
  maxToolErrors?: number | undefined;
  temperature?: number | undefined;
  /** Cap on generated tokens per model call (server default 512). */
  maxTokens?: number | undefined;
  /** How long the server waits for a tool result (default 300 000 ms); handlers' signals abort then. */
  toolTimeoutMs?: number | undefined;
  /** Send the model's output as `chunk` events while it generates. */
  streamChunks?: boolean | undefined;
  /** Let the model call several tools in one turn (they run concurrently here). */
  parallelToolCalls?: boolean | undefined;
  // Guardrails, all on by default; turn one off to measure what it does.
  constrainedDecoding?: boolean | undefined;
  rescue?: boolean | undefined;
  retryNudges?: boolean | undefined;
  stepEnforcement?: boolean | undefined;
  errorRecovery?: boolean | undefined;
  compaction?: boolean | undefined;
  coercion?: boolean | undefined;
  /** Reject an unchanged repeat of the previous successful call with a nudge (default on). */
  repeatGuard?: boolean | undefined;
  /** Refuse a call identical to one that already failed in this run (default on). */
  loopBreaking?: boolean | undefined;
  /** Describe each parameter's enum values, required flag, default and description in the prompt (default on). */
  parameterDocs?: boolean | undefined;
  /** Limit identifier-like parameters to values seen in the conversation, under a grammar (default on). */
  grounding?: boolean | undefined;
  /** With many tools, offer only those most relevant to the request (default on). */
  toolRelevance?: boolean | undefined;
  /**
   * Offer a destructive tool (`ToolOptions.destructive`) only when the user's
   * words ask for it, and make such a call alone, never in a batch (default on).
   */
  destructivePolicy?: boolean | undefined;
  /**
   * Ask before each destructive tool's call: the server sends an approval
   * request, the run's `approve` callback decides (no callback: denied), and
   * only an approved call is sent as a tool call. A denial reaches the model
   * as the tool's result, with its reason. Default false.
   */
  approveDestructiveCalls?: boolean | undefined;
  enforcement?: "both" | "constraint" | "nudge" | undefined;
  reasoningReplay?: "none" | "keep_last" | "full" | undefined;
  /** How the conversation is shortened near the context budget (server default "tiered"). */
  compactionStrategy?: "none" | "sliding_window" | "tiered" | undefined;
  /** Context budget for this run in tokens (capped to the server's); unset: the server's budget. */
  contextBudgetTokens?: number | undefined;
  /** Scheduling priority on the model server's slots: lower runs first (default 0). */
  priority?: number | undefined;
  /** When preempted by higher-priority work, fail with CANCELLED instead of waiting. */
  cancelOnPreempt?: boolean | undefined;
}

export interface StreamOptions {
  options?: RunOptions | undefined;
  /** Earlier conversation to continue (e.g. the non-transient messages of a previous transcript). */
  priorMessages?: readonly MessageInput[] | undefined;
  /** Free-form labels echoed in the server's logs. */
  labels?: Record<string, string> | undefined;
  /** Aborting cancels the run: handlers' signals abort and the run fails with WorkflowCancelledError. */
  signal?: AbortSignal | undefined;
  /**
   * Decides on destructive calls when `options.approveDestructiveCalls` is set.
   * It runs concurrently with the run's events; without it every such call is
   * denied ("no approver is configured in this client"), and a throw or
   * rejection denies with the error's message as the reason.
   */
  approve?: Approver | undefined;
}

export interface RunCallOptions<V = unknown> extends StreamOptions {
  /** Called for every event, in order; a returned promise is awaited before the next event. */
  onEvent?: ((event: ForgeEvent<V>) => void | Promise<void>) | undefined;
}

// ── Events and results ─────────────────────────────────────────────────────

export interface RunStartedEvent {
  type: "run_started";
  runId: string;
  backend: string;
  model: string;
  contextBudgetTokens: number;
  /** "native", "constrained", "prompt" or "scripted". */
  toolCallMode: string;
}

export type ChunkKind = "unspecified" | "text_delta" | "tool_call_delta" | "final" | "retry";

/** Model output while it generates (with `streamChunks: true`). */
export interface ChunkEvent {
  type: "chunk";
  chunkType: ChunkKind;
  content: string;
  iteration: number;
}

/** The server asked for a tool call; the handler starts now. */
export interface ToolCallEvent {
  type: "tool_call";
  callId: string;
  toolName: string;
  arguments: Record<string, unknown>;
  argumentsJson: string;
  iteration: number;
  coercions: readonly Coercion[];
}

export interface ToolFailure {
  message: string;
  kind: "hard" | "resolution";
  /** The error's class name, e.g. "ValidationError". */
  type: string;
}

/** A destructive call awaiting the client's decision (see `RunOptions.approveDestructiveCalls`). */
export interface ApprovalRequest {
  /** The call's id; an approved call arrives as a `tool_call` with the same id. */
  callId: string;
  toolName: string;
  /** The validated (and coerced) arguments, parsed. */
  arguments: Record<string, unknown>;
  argumentsJson: string;
  /** The loop iteration that produced the call. */
  iteration: number;
}

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

/** The server asks whether a destructive call may run; the run's `approve` callback starts now. */
export interface ApprovalRequestedEvent extends ApprovalRequest {
  type: "approval_requested";
}

/** A handler finished (and its result went to the server unless the run had moved on). */
export interface ToolResultEvent {
  type: "tool_result";
  callId: string;
  toolName: string;
  output: string;
  error?: ToolFailure | undefined;
  /** False when the result was dropped: the run was cancelled or over, or the server had given up. */
  sent: boolean;
}

/**
 * The server stopped waiting for a call (its tool timeout passed, or the run
 * was cancelled or ended) and recorded an error result for it: the handler's
 * signal has been aborted and a later result is not sent.
 */
export interface ToolCallCancelledEvent {
  type: "tool_call_cancelled";
  callId: string;
  toolName: string;
  reason: string;
}

/**
 * A tool's output held secrets, and the model saw it redacted ("redact") or
 * not at all ("block"). The secrets themselves never come back.
 */
export interface ToolOutputScreenedEvent {
  type: "tool_output_screened";
  callId: string;
  toolName: string;
  action: "redact" | "block";
  /** detect-secrets' names, e.g. "AWS Access Key", "Secret Keyword". */
  secretTypes: string[];
  secrets: number;
  iteration: number;
}

/** A message the run added to the conversation. */
export interface MessageAppendedEvent {
  type: "message_appended";
  message: Message;
  /** Position in the transcript (prior messages included). */
  index: number;
}

/** The conversation sent to the model was compacted before this iteration (the transcript is not). */
export interface CompactedEvent {
  type: "compacted";
  iteration: number;
  /** 1-3 for the tiered strategy; 0 for the sliding window. */
  phase: number;
  tokensBefore: number;
  tokensAfter: number;
  messagesBefore: number;
  messagesAfter: number;
  strategy: string;
}

/** The run waits for a model server slot; position 0 means it got one. */
export interface QueuedEvent {
  type: "queued";
  position: number;
  iteration: number;
  /** The run's inference was preempted by higher-priority work and resumes later. */
  preempted: boolean;
}

export interface RunCompletedEvent<V = unknown> {
  type: "run_completed";
  result: RunResult<V>;
}

export type ForgeEvent<V = unknown> =
  | RunStartedEvent
  | ChunkEvent
  | ToolCallEvent
  | ApprovalRequestedEvent
  | ToolResultEvent
  | ToolCallCancelledEvent
  | ToolOutputScreenedEvent
  | MessageAppendedEvent
  | CompactedEvent
  | QueuedEvent
  | RunCompletedEvent<V>;

export interface RunResult<V = unknown> {
  runId: string;
  terminalTool: string;
  /** What the terminal tool's handler returned (the text result for the server's respond tool). */
  value: V;
  /** The result as sent to the server (text). */
  output: string;
  iterations: number;
  usage: Usage;
  /**
   * The whole conversation, prior messages included. When the server omitted
   * it for size (RunCompleted.transcript_omitted), the SDK rebuilds it from
   * the prior messages it sent and the `message_appended` events, in order.
   */
  transcript: Message[];
}

export interface ServerInfo {
  version: string;
  backend: string;
  model: string;
  contextBudgetTokens: number;
  budgetMode: string;
  slots: number;
  backendMode: string;
  backendUrl: string;
  toolCallMode: string;
  activeRuns: number;
  /** Runs waiting for a slot right now. */
  queuedRuns: number;
  /** KV cache quantisation of a managed llama-server. */
  kvCacheType: string;
  /** How the context budget was resolved, in words. */
  budgetSource: string;
  gpus: Array<{ name: string; vramTotalBytes: number; vramFreeBytes: number }>;
  /** Why no GPU is listed, when none is. */
  gpuStatus: string;
}

// ── Client ─────────────────────────────────────────────────────────────────

type RunRequestInit = MessageInitShape<typeof RunRequestSchema>;

/** The slice of the generated Connect client a run uses (kept structural so the
 * published declarations do not depend on Connect's DOM-typed ones). */
interface Rpc {
  run(
    requests: AsyncIterable<RunRequestInit>,
    options: { signal: AbortSignal; headers: Record<string, string>; timeoutMs: number },
  ): AsyncIterable<RunResponse>;
}

/** A connection to a Forge server (one HTTP/2 connection, shared by all runs). */
export class ForgeClient {
  readonly address: string;
  private readonly rpc: ReturnType<typeof createClient<typeof ForgeService>>;
  private readonly session: Http2SessionManager;
  private readonly headers: Record<string, string>;
  private readonly active = new Set<RunStream<unknown>>();
  private closed = false;

  constructor(options: ForgeClientOptions = {}) {
    const address = options.address ?? DEFAULT_ADDRESS;
    const tls = options.tls ?? false;
    const socketPath = unixSocketPath(address);
    if (socketPath !== undefined && tls !== false) {
      throw new TypeError(`forge: TLS is not supported over a Unix socket (${address})`);
    }
    const hasScheme = /^https?:\/\//.test(address);
    const secure = hasScheme ? address.startsWith("https://") : tls !== false;
    const baseUrl =
      socketPath !== undefined
        ? "http://localhost"
        : hasScheme
          ? address
          : `${secure ? "https" : "http"}://${address}`;
    this.address = address;
    const nodeOptions: http2.SecureClientSessionOptions = {};
    if (socketPath !== undefined) {
      // HTTP/2 over the socket; "localhost" is only the :authority sent.
      nodeOptions.createConnection = () => connectSocket({ path: socketPath });
    }
    if (typeof tls === "object") {
      for (const key of ["ca", "cert", "key", "servername", "rejectUnauthorized"] as const) {
        if (tls[key] !== undefined) {
          Object.assign(nodeOptions, { [key]: tls[key] });
        }
      }
    }
    const keepalive = options.keepaliveMs ?? 30_000;
    this.session = new Http2SessionManager(
      baseUrl,
      keepalive === false
        ? {}
        : {
            pingIntervalMs: keepalive,
            pingTimeoutMs: options.keepaliveTimeoutMs ?? 15_000,
            pingIdleConnection: false,
          },
      nodeOptions,
    );
    const interceptors: Interceptor[] = [];
    const token = options.token;
    if (token !== undefined) {
      interceptors.push((next) => async (req) => {
        const value = typeof token === "function" ? await token() : token;
        req.header.set("authorization", `Bearer ${value}`);
        return await next(req);
      });
    }
    const maxBytes = options.maxMessageBytes ?? 16 * 1024 * 1024;
    const transport = createGrpcTransport({
      baseUrl,
      sessionManager: this.session,
      interceptors,
      readMaxBytes: maxBytes,
      writeMaxBytes: maxBytes,
    });
    this.rpc = createClient(ForgeService, transport);
    this.headers = { ...options.headers };
  }

  /** What the server runs on; cheap, safe to poll. */
  async serverInfo(
    options: { signal?: AbortSignal | undefined; timeoutMs?: number | undefined } = {},
  ): Promise<ServerInfo> {
    try {
      const r = await this.rpc.getServerInfo(
        {},
        {
          headers: this.headers,
          timeoutMs: options.timeoutMs ?? 10_000,
          ...(options.signal ? { signal: options.signal } : {}),
        },
      );
      return {
        version: r.version,
        backend: r.backend,
        model: r.model,
        contextBudgetTokens: r.contextBudgetTokens,
        budgetMode: r.budgetMode,
        slots: r.slots,
        backendMode: r.backendMode,
        backendUrl: r.backendUrl,
        toolCallMode: r.toolCallMode,
        activeRuns: r.activeRuns,
        queuedRuns: r.queuedRuns,
        kvCacheType: r.kvCacheType,
        budgetSource: r.budgetSource,
        gpus: r.gpus.map((g) => ({
          name: g.name,
          vramTotalBytes: Number(g.vramTotalBytes),
          vramFreeBytes: Number(g.vramFreeBytes),
        })),
        gpuStatus: r.gpuStatus,
      };
    } catch (err) {
      throw fromTransportError(err);
    }
  }

  /** Poll serverInfo() until the server answers (e.g. a sidecar that is still starting). */
  async waitForReady(
    options: { timeoutMs?: number | undefined; signal?: AbortSignal | undefined } = {},
  ): Promise<ServerInfo> {
    const deadline = Date.now() + (options.timeoutMs ?? 30_000);
    for (;;) {
      try {
        return await this.serverInfo({ timeoutMs: 2_000, ...(options.signal ? { signal: options.signal } : {}) });
      } catch (err) {
        if (!(err instanceof ConnectionLostError) || Date.now() > deadline || options.signal?.aborted) {
          throw err;
        }
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }

  /**
   * Start a run and return its stream: iterate it for events (`for await`);
   * iteration ends after the `run_completed` event or throws the run's typed
   * error. `stream.result` settles the same way.
   */
  stream<W extends Workflow<any, any>>(
    workflow: W,
    userMessage: string,
    options: StreamOptions = {},
  ): RunStream<RunValue<W>> {
    if (this.closed) {
      throw new ConnectionLostError("the client is closed", "CANCELLED");
    }
    const opts = options.options ?? {};
    const start = create(StartRunSchema, {
      workflow: workflow.toProto(),
      userMessage,
      priorMessages: (options.priorMessages ?? []).map(messageToPb),
      options: runOptionsToPb(opts),
      labels: { ...options.labels },
    });
    const stream = new RunStream<RunValue<W>>({
      rpc: this.rpc,
      headers: this.headers,
      workflow,
      start,
      toolTimeoutMs: opts.toolTimeoutMs || SERVER_DEFAULT_TOOL_TIMEOUT_MS,
      signal: options.signal,
      approve: options.approve,
      onDone: (s) => this.active.delete(s as RunStream<unknown>),
    });
    this.active.add(stream as RunStream<unknown>);
    return stream;
  }

  /**
   * Run the workflow to its terminal tool and return the result. Throws a
   * RunFailedError subclass (StepEnforcementError, WorkflowCancelledError...)
   * when the run fails, RequestRejectedError when the server refuses it,
   * ConnectionLostError when the stream breaks.
   */
  async run<W extends Workflow<any, any>>(
    workflow: W,
    userMessage: string,
    options: RunCallOptions<RunValue<W>> = {},
  ): Promise<RunResult<RunValue<W>>> {
    const stream = this.stream(workflow, userMessage, options);
    for await (const event of stream) {
      if (options.onEvent !== undefined) {
        await options.onEvent(event);
      }
    }
    return await stream.result;
  }

  /** Drop every open run and close the connection. */
  close(): void {
    this.closed = true;
    for (const stream of this.active) {
      stream.abandon(new ConnectionLostError("the client was closed", "CANCELLED"));
    }
    this.session.abort();
  }
}

/** Connect to a Forge server. */
export function createForgeClient(options: ForgeClientOptions = {}): ForgeClient {
  return new ForgeClient(options);
}

/** The socket path of a "unix:///abs/path" or "unix:path" address; undefined for any other address. */
function unixSocketPath(address: string): string | undefined {
  if (!address.startsWith("unix:")) {
    return undefined;
  }
  const path = address.slice("unix:".length).replace(/^\/\/(?=\/)/, "");
  if (path === "" || path.startsWith("//")) {
    throw new TypeError(`forge: ${address} names no socket path (want unix:///abs/path or unix:path)`);
  }
  return path;
}

// ── One run ────────────────────────────────────────────────────────────────

interface RunStreamInit {
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
      this.abandon(
        new WorkflowCancelledError("the server did not confirm the cancellation in time; stream dropped", {
          reason: "CANCELLED",
          details: {},
          iterations: 0,
          transcript: [],
          usage: usageFromPb(undefined),
        }),
      );
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
          this.abandon(
            new WorkflowCancelledError("the client stopped reading the run's events", {
              reason: "CANCELLED",
              details: {},
              iterations: 0,
              transcript: [],
              usage: usageFromPb(undefined),
            }),
          );
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
        throw new WorkflowCancelledError("aborted before the run started", {
          reason: "CANCELLED",
          details: {},
          iterations: 0,
          transcript: [],
          usage: usageFromPb(undefined),
          cause: signal.reason,
        });
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
      case "runStarted": {
        const s = kind.value;
        this.runId = s.runId;
        this.events.push({
          type: "run_started",
          runId: s.runId,
          backend: s.backend,
          model: s.model,
          contextBudgetTokens: s.contextBudgetTokens,
          toolCallMode: s.toolCallMode,
        });
        return undefined;
      }
      case "chunk":
        this.events.push({
          type: "chunk",
          chunkType: enumName(ChunkType, kind.value.type) as ChunkKind,
          content: kind.value.content,
          iteration: kind.value.iteration,
        });
        return undefined;
      case "toolCall":
        this.dispatch(kind.value);
        return undefined;
      case "approvalRequest":
        this.askApproval(kind.value);
        return undefined;
      case "messageAppended": {
        const message = messageFromPb(kind.value.message ?? create(MessageSchema));
        this.streamed.push(message);
        this.events.push({ type: "message_appended", message, index: kind.value.index });
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
      case "compacted": {
        const c = kind.value;
        this.events.push({
          type: "compacted",
          iteration: c.iteration,
          phase: c.phase,
          tokensBefore: c.tokensBefore,
          tokensAfter: c.tokensAfter,
          messagesBefore: c.messagesBefore,
          messagesAfter: c.messagesAfter,
          strategy: c.strategy,
        });
        return undefined;
      }
      case "toolOutputScreened": {
        const v = kind.value;
        this.events.push({
          type: "tool_output_screened",
          callId: v.callId,
          toolName: v.toolName,
          action: v.action === ToolOutputPolicy.BLOCK ? "block" : "redact",
          secretTypes: [...v.secretTypes],
          secrets: v.secrets,
          iteration: v.iteration,
        });
        return undefined;
      }
      case "queued":
        this.events.push({
          type: "queued",
          position: kind.value.position,
          iteration: kind.value.iteration,
          preempted: kind.value.preempted,
        });
        return undefined;
      default:
        return undefined;
    }
  }

  private askApproval(request: PbApprovalRequest): void {
    const event: ApprovalRequestedEvent = {
      type: "approval_requested",
      callId: request.callId,
      toolName: request.toolName,
      arguments: argumentsObject(parseJson(request.argumentsJson)),
      argumentsJson: request.argumentsJson,
      iteration: request.iteration,
    };
    this.events.push(event);
    if (this.cancelRequested || this.finished) {
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

  private async decide(event: ApprovalRequestedEvent, pending: PendingCall): Promise<void> {
    let decision: { approved: boolean; reason: string };
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
      decision = { approved: false, reason: err instanceof Error ? err.message || err.name : String(err) };
    } finally {
      clearTimeout(pending.timer);
      this.approvals.delete(event.callId);
    }
    if (this.finished || this.cancelRequested || pending.expired || this.abandonError !== undefined) {
      return;
    }
    this.requests.push({
      kind: { case: "approval", value: { callId: event.callId, ...decision } },
    });
  }

  private dispatch(call: ToolCallRequest): void {
    const args = parseJson(call.argumentsJson);
    const coercions = call.coercions.map((c) => ({
      path: c.path,
      originalJson: c.originalJson,
      coercedJson: c.coercedJson,
    }));
    this.events.push({
      type: "tool_call",
      callId: call.callId,
      toolName: call.toolName,
      arguments: argumentsObject(args),
      argumentsJson: call.argumentsJson,
      iteration: call.iteration,
      coercions,
    });
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
    void this.runTool(call, args, coercions, pending);
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
    this.events.push({ type: "tool_result", callId: call.callId, toolName: call.toolName, output, error, sent });
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

/** The arguments JSON parsed; undefined when it is not valid JSON. */
function parseJson(json: string): unknown {
  try {
    return JSON.parse(json || "{}") as unknown;
  } catch {
    return undefined;
  }
}

function argumentsObject(args: unknown): Record<string, unknown> {
  return typeof args === "object" && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
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

function enumFrom(table: Record<string, string | number>, name: string, what: string): number {
  const value = table[name.toUpperCase()];
  if (typeof value !== "number" || value === 0) {
    throw new TypeError(`unknown ${what} ${JSON.stringify(name)}`);
  }
  return value;
}

function runOptionsToPb(o: RunOptions): PbRunOptions {
  const msg = create(RunOptionsSchema, {
    maxIterations: o.maxIterations ?? 0,
    maxTokens: o.maxTokens ?? 0,
    toolTimeoutMs: o.toolTimeoutMs ?? 0,
    streamChunks: o.streamChunks ?? false,
    parallelToolCalls: o.parallelToolCalls ?? false,
    guardrails: {
      disableConstrainedDecoding: o.constrainedDecoding === false,
      disableRescue: o.rescue === false,
      disableRetryNudges: o.retryNudges === false,
      disableStepEnforcement: o.stepEnforcement === false,
      disableErrorRecovery: o.errorRecovery === false,
      disableCompaction: o.compaction === false,
      disableCoercion: o.coercion === false,
      disableRepeatGuard: o.repeatGuard === false,
      disableLoopBreaking: o.loopBreaking === false,
      disableParameterDocs: o.parameterDocs === false,
      disableGrounding: o.grounding === false,
      disableToolRelevance: o.toolRelevance === false,
      disableDestructivePolicy: o.destructivePolicy === false,
      enforcement:
        o.enforcement === undefined ? EnforcementMode.UNSPECIFIED : enumFrom(EnforcementMode, o.enforcement, "enforcement"),
    },
    reasoningReplay:
      o.reasoningReplay === undefined
        ? ReasoningReplay.UNSPECIFIED
        : enumFrom(ReasoningReplay, o.reasoningReplay, "reasoningReplay"),
    compaction:
      o.compactionStrategy === undefined
        ? CompactionStrategy.UNSPECIFIED
        : enumFrom(CompactionStrategy, o.compactionStrategy, "compactionStrategy"),
    contextBudgetTokens: o.contextBudgetTokens ?? 0,
    priority: o.priority ?? 0,
    cancelOnPreempt: o.cancelOnPreempt ?? false,
    approveDestructiveCalls: o.approveDestructiveCalls ?? false,
  });
  if (o.maxRetries !== undefined) msg.maxRetries = o.maxRetries;
  if (o.maxToolErrors !== undefined) msg.maxToolErrors = o.maxToolErrors;
  if (o.temperature !== undefined) msg.temperature = o.temperature;
  return msg;
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
