/** The Forge client: one HTTP/2 connection, one bidirectional gRPC stream per run (see run_stream.ts). */

import { create } from "@bufbuild/protobuf";
import { type Interceptor, createClient } from "@connectrpc/connect";
import { Http2SessionManager, createGrpcTransport } from "@connectrpc/connect-node";
import { randomUUID } from "node:crypto";
import type * as http2 from "node:http2";
import { connect as connectSocket } from "node:net";
import { ConnectionLostError, fromTransportError } from "./errors.js";
import type { ForgeEvent, RunResult } from "./events.js";
import { EventKind, ForgeService, GuardRequestSchema, StartRunSchema } from "./gen/forge/v1/forge_service_pb.js";
import { ToolCallSchema } from "./gen/forge/v1/messages_pb.js";
import { type GuardVerdict, verdictFromPb } from "./guard.js";
import {
  CompactionStrategy,
  EnforcementMode,
  ReasoningReplay,
  type RunOptions as PbRunOptions,
  RunOptionsSchema,
} from "./gen/forge/v1/workflow_pb.js";
import { type MessageInput, messageFromPb, messageToPb } from "./messages.js";
import { type Approver, RunStream } from "./run_stream.js";
import type { RunValue, Workflow } from "./workflow.js";
import { withTraceHeaders } from "./tracing.js";

export const DEFAULT_ADDRESS = "127.0.0.1:50051";
/** The server's tool timeout when RunOptions.toolTimeoutMs is unset. */
const SERVER_DEFAULT_TOOL_TIMEOUT_MS = 300_000;

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
  /**
   * Bearer token sent as `authorization: Bearer <token>` on every call (or a
   * function returning one). Default: `$FORGE_TOKEN` when set; `""` sends none.
   */
  token?: string | (() => string | Promise<string>) | undefined;
  /** HTTP/2 PING interval while calls are open (default 30 000 ms); false disables keepalive. */
  keepaliveMs?: number | false | undefined;
  /** How long a keepalive PING may go unanswered before the connection counts as dead (default 15 000 ms). */
  keepaliveTimeoutMs?: number | undefined;
  /** Largest message sent or received (default 16 MiB). */
  maxMessageBytes?: number | undefined;
  /** Extra headers (gRPC metadata) on every call. */
  headers?: Record<string, string> | undefined;
  /** The default of every run's `reattach` (default true). */
  reattach?: boolean | undefined;
  /** The default of every run's `reattachDeadlineMs`. */
  reattachDeadlineMs?: number | undefined;
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
   * Limit a terminal tool's parameter to what a successful tool result gave
   * for it (the result labels it, or the parameter is what a tool looks up),
   * under a grammar (default on).
   */
  resultBinding?: boolean | undefined;
  /**
   * Give integers at most one digit more than the longest number in the
   * conversation (at least 3), under a grammar (default on).
   */
  numberBounds?: boolean | undefined;
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

/** The events a run's stream may leave out (`StreamOptions.omitEvents`), by their `type`. */
export type OmittableEvent = "chunk" | "message_appended" | "compacted" | "queued" | "tool_output_screened";

const OMITTABLE: Readonly<Record<OmittableEvent, EventKind>> = {
  chunk: EventKind.CHUNK,
  message_appended: EventKind.MESSAGE_APPENDED,
  compacted: EventKind.COMPACTED,
  queued: EventKind.QUEUED,
  tool_output_screened: EventKind.TOOL_OUTPUT_SCREENED,
};

export interface StreamOptions {
  options?: RunOptions | undefined;
  /** Earlier conversation to continue (e.g. the non-transient messages of a previous transcript). */
  priorMessages?: readonly MessageInput[] | undefined;
  /** Free-form labels echoed in the server's logs. */
  labels?: Record<string, string> | undefined;
  /**
   * Carry the conversation across runs on the server (StartRun.session_id):
   * when a run of this session completes, the server keeps its conversation,
   * and the next run with the same id and no `priorMessages` continues it
   * (its transcript starts with the earlier runs' messages). Needs a server
   * with a journal; a session belongs to the caller that started it. Unset:
   * each run starts afresh (or from `priorMessages`).
   */
  sessionId?: string | undefined;
  /**
   * Event kinds the server need not send on this run's stream
   * (StartRun.events.omit), e.g. `["message_appended"]` for a caller that
   * only wants the result: fewer messages per tool round trip. The run, the
   * server's journal and the final transcript (`RunResult.transcript`) are
   * the same either way, with one exception: when the server leaves the
   * final transcript out for size (RunCompleted.transcript_omitted) the SDK
   * rebuilds it from the `message_appended` events, so without them that
   * transcript holds only the prior messages. An unknown kind throws a
   * TypeError.
   */
  omitEvents?: readonly OmittableEvent[] | undefined;
  /** Aborting cancels the run: handlers' signals abort and the run fails with WorkflowCancelledError. */
  signal?: AbortSignal | undefined;
  /**
   * Decides on destructive calls when `options.approveDestructiveCalls` is set.
   * It runs concurrently with the run's events; without it every such call is
   * denied ("no approver is configured in this client"), and a throw or
   * rejection denies with the error's message as the reason.
   */
  approve?: Approver | undefined;
  /**
   * When the run's stream breaks (connection lost, server restarting or
   * draining) and the server keeps the run (`run_started.reattachGraceS > 0`,
   * i.e. it has a journal), open a new stream and continue the run on it,
   * retrying with backoff; events are not delivered twice (a `reattached`
   * event marks the new stream) and handlers are neither aborted nor run
   * twice. The SDK names the run itself (StartRun.run_id, 32 hex digits), so
   * a stream that breaks before `run_started` arrived reattaches by that id,
   * or sends the start again when the server never got it. Default true (the
   * client's `reattach`); false: a broken stream raises ConnectionLostError
   * at once.
   */
  reattach?: boolean | undefined;
  /**
   * The longest time (ms) spent reattaching after one break before the run
   * fails with ConnectionLostError. Default, and upper bound: the server's
   * reattach grace (`reattachGraceS`), or 30 s for a break before
   * `run_started` (the grace is not known yet).
   */
  reattachDeadlineMs?: number | undefined;
}

export interface RunCallOptions<V = unknown> extends StreamOptions {
  /** Called for every event, in order; a returned promise is awaited before the next event. */
  onEvent?: ((event: ForgeEvent<V>) => void | Promise<void>) | undefined;
}

/** What `client.guard()` takes besides the workflow and the conversation. */
export interface GuardOptions {
  /** The model's raw reply text (read the way a run reads a model's text, rescue included). */
  replyText?: string | undefined;
  /** Or the tool calls a native tool-calling API returned. */
  replyToolCalls?:
    | ReadonlyArray<{
        id: string;
        name: string;
        argumentsJson?: string | undefined;
        arguments?: Record<string, unknown> | undefined;
      }>
    | undefined;
  /** Run options, as for a run (limits and guardrails). */
  options?: RunOptions | undefined;
  signal?: AbortSignal | undefined;
  /** Default 30 000 ms. */
  timeoutMs?: number | undefined;
}

// ── Server info ────────────────────────────────────────────────────────────

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
  /** The backends in fallback order with their health (one entry without a chain). */
  backends: BackendHealth[];
  /**
   * The device llama-server runs the model on: "CPU", "Vulkan0", "unknown"
   * (an external server); "" for other backends.
   */
  llamaDevice: string;
  /** The GPU devices llama-server can see (`llama-server --list-devices`). */
  llamaDevices: Array<{
    name: string;
    description: string;
    memoryTotalMib: number;
    memoryFreeMib: number;
  }>;
}

/** One backend of the server's fallback chain. */
export interface BackendHealth {
  /** Its kind: "llama-server", "openai", "ollama", "anthropic", "scripted". */
  name: string;
  model: string;
  url: string;
  /** False while it cools down after repeated retriable failures. */
  available: boolean;
  cooldownRemainingS: number;
  consecutiveFailures: number;
  calls: number;
  failures: number;
  /** The last failure, in words ("" when none). */
  lastError: string;
}

// ── Client ─────────────────────────────────────────────────────────────────

/** A connection to a Forge server (one HTTP/2 connection, shared by all runs). */
export class ForgeClient {
  readonly address: string;
  private readonly rpc: ReturnType<typeof createClient<typeof ForgeService>>;
  private readonly session: Http2SessionManager;
  private readonly headers: Record<string, string>;
  private readonly reattach: boolean;
  private readonly reattachDeadlineMs: number | undefined;
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
    const token = options.token ?? process.env.FORGE_TOKEN;
    if (token !== undefined && token !== "") {
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
    this.reattach = options.reattach ?? true;
    this.reattachDeadlineMs = checkDeadline(options.reattachDeadlineMs);
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
        backends: r.backends.map((b) => ({
          name: b.name,
          model: b.model,
          url: b.url,
          available: b.available,
          cooldownRemainingS: b.cooldownRemainingS,
          consecutiveFailures: b.consecutiveFailures,
          calls: Number(b.calls),
          failures: Number(b.failures),
          lastError: b.lastError,
        })),
        llamaDevice: r.llamaDevice,
        llamaDevices: r.llamaDevices.map((d) => ({
          name: d.name,
          description: d.description,
          memoryTotalMib: Number(d.memoryTotalMib),
          memoryFreeMib: Number(d.memoryFreeMib),
        })),
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
  start<W extends Workflow<any, any>>(
    workflow: W,
    userMessage: string,
    options: StreamOptions = {},
  ): RunStream<RunValue<W>> {
    return this.open(workflow, userMessage, options, false);
  }

  /** start(); `discardEvents`: nobody reads the stream's events (run() without onEvent), so none is queued. */
  private open<W extends Workflow<any, any>>(
    workflow: W,
    userMessage: string,
    options: StreamOptions,
    discardEvents: boolean,
  ): RunStream<RunValue<W>> {
    if (this.closed) {
      throw new ConnectionLostError("the client is closed", "CANCELLED");
    }
    const opts = options.options ?? {};
    const reattach = options.reattach ?? this.reattach;
    const start = create(StartRunSchema, {
      workflow: workflow.toProto(),
      userMessage,
      priorMessages: (options.priorMessages ?? []).map(messageToPb),
      options: runOptionsToPb(opts),
      labels: { ...options.labels },
      sessionId: options.sessionId ?? "",
      // The client names the run, so a stream that breaks before run_started
      // can still reattach to it (or start it again if it never arrived).
      runId: reattach ? randomUUID().replaceAll("-", "") : "",
      // Several events per message where the server has them ready (the
      // stream takes each as if it came alone), less what the caller left out.
      events: { batch: true, omit: omittedKinds(options.omitEvents) },
    });
    const stream = new RunStream<RunValue<W>>({
      rpc: this.rpc,
      // The caller's trace context now, for every stream of the run.
      headers: withTraceHeaders(this.headers),
      workflow,
      start,
      toolTimeoutMs: opts.toolTimeoutMs || SERVER_DEFAULT_TOOL_TIMEOUT_MS,
      signal: options.signal,
      approve: options.approve,
      reattach,
      reattachDeadlineMs: checkDeadline(options.reattachDeadlineMs) ?? this.reattachDeadlineMs,
      onDone: (s) => this.active.delete(s as RunStream<unknown>),
      discardEvents,
    });
    this.active.add(stream as RunStream<unknown>);
    return stream;
  }

  /** @deprecated Renamed start() (the name every Forge SDK uses); stream() goes away in the next release. */
  stream<W extends Workflow<any, any>>(
    workflow: W,
    userMessage: string,
    options: StreamOptions = {},
  ): RunStream<RunValue<W>> {
    return this.start(workflow, userMessage, options);
  }

  /**
   * Run the workflow to its terminal tool and return the result. Throws a
   * RunFailedError subclass (StepEnforcementError, WorkflowCancelledError...)
   * when the run fails, RequestRejectedError when the server refuses it,
   * ConnectionLostError when the stream breaks and the run cannot be
   * reattached (see StreamOptions.reattach).
   */
  async run<W extends Workflow<any, any>>(
    workflow: W,
    userMessage: string,
    options: RunCallOptions<RunValue<W>> = {},
  ): Promise<RunResult<RunValue<W>>> {
    const onEvent = options.onEvent;
    if (onEvent === undefined) {
      // Nobody reads the events: the run's result is all there is to wait for.
      return await this.open(workflow, userMessage, options, true).result;
    }
    const stream = this.start(workflow, userMessage, options);
    for await (const event of stream) {
      await onEvent(event);
    }
    return await stream.result;
  }

  /**
   * One guard decision for a loop that makes its own model calls. `messages`
   * is the conversation so far (the user's request, each model turn's
   * assistant message and its tool results, corrections from earlier
   * retries); the model's reply to it is `replyText` or `replyToolCalls`.
   * Neither, with the terminal tool's result last in `messages`, asks whether
   * the run is done. The workflow's handlers are not called here.
   *
   * Resolves to `{kind: "calls"}` (run them; append `message` and each
   * call's `toolResultMessage()`), `{kind: "retry"}` (append `messages`, ask
   * the model again) or `{kind: "done"}`. Throws a RunFailedError subclass
   * when the guard gives up (its `transcript` is `messages`),
   * RequestRejectedError naming the field for input the server cannot read.
   */
  async guard(
    workflow: Workflow<any, any>,
    messages: readonly MessageInput[],
    options: GuardOptions = {},
  ): Promise<GuardVerdict> {
    if (this.closed) {
      throw new ConnectionLostError("the client is closed", "CANCELLED");
    }
    const sent = messages.map(messageToPb);
    const request = create(GuardRequestSchema, {
      workflow: workflow.toProto(),
      options: runOptionsToPb(options.options ?? {}),
      messages: sent,
      replyText: options.replyText ?? "",
      replyToolCalls: (options.replyToolCalls ?? []).map((c) =>
        create(ToolCallSchema, {
          id: c.id,
          name: c.name,
          argumentsJson: c.argumentsJson ?? (c.arguments === undefined ? "" : JSON.stringify(c.arguments)),
        }),
      ),
    });
    let response;
    try {
      response = await this.rpc.guard(request, {
        headers: this.headers,
        timeoutMs: options.timeoutMs ?? 30_000,
        ...(options.signal ? { signal: options.signal } : {}),
      });
    } catch (err) {
      throw fromTransportError(err);
    }
    return verdictFromPb(response, sent.map(messageFromPb));
  }

  /**
   * Drop every open run and close the connection. A run the server keeps
   * across a broken stream (it has a journal) is cancelled first: the
   * connection closes once each run's stream has ended (the server answered
   * the cancel, or ~250 ms passed), so the cancel is not lost with it and
   * the server does not hold the run for its reattach grace. Await the
   * promise to know that the connection is closed.
   */
  async close(): Promise<void> {
    this.closed = true;
    const open = [...this.active];
    for (const stream of open) {
      stream.abandon(new ConnectionLostError("the client was closed", "CANCELLED"));
    }
    await Promise.allSettled(open.map((stream) => stream.result));
    this.session.abort();
  }
}

/** Connect to a Forge server. */
export function createForgeClient(options: ForgeClientOptions = {}): ForgeClient {
  return new ForgeClient(options);
}

/** StartRun.events.omit for `omitEvents` (each kind once). */
function omittedKinds(names: readonly OmittableEvent[] | undefined): EventKind[] {
  const kinds = new Set<EventKind>();
  for (const name of names ?? []) {
    const kind = Object.hasOwn(OMITTABLE, name) ? OMITTABLE[name] : undefined;
    if (kind === undefined) {
      throw new TypeError(
        `forge: omitEvents: ${JSON.stringify(name)} cannot be left out (one of ${Object.keys(OMITTABLE).join(", ")})`,
      );
    }
    kinds.add(kind);
  }
  return [...kinds];
}

function checkDeadline(ms: number | undefined): number | undefined {
  if (ms !== undefined && !(ms >= 0)) {
    throw new RangeError(`forge: reattachDeadlineMs must be >= 0, got ${ms}`);
  }
  return ms;
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

// ── Run options on the wire ────────────────────────────────────────────────

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
      disableResultBinding: o.resultBinding === false,
      disableNumberBounds: o.numberBounds === false,
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
