/**
 * A run's events, as the SDK surfaces them (the `type` strings are the
 * vocabulary shared with the Python and Go SDKs), and their conversion from
 * the contract's server messages.
 */

import { create } from "@bufbuild/protobuf";
import {
  type ApprovalRequest as PbApprovalRequest,
  ChunkType,
  type Compacted as PbCompacted,
  type MessageAppended as PbMessageAppended,
  type Queued as PbQueued,
  type RunStarted as PbRunStarted,
  type StreamChunk as PbStreamChunk,
  type ToolCallRequest as PbToolCallRequest,
  type ToolOutputScreened as PbToolOutputScreened,
} from "./gen/forge/v1/forge_service_pb.js";
import { MessageSchema } from "./gen/forge/v1/messages_pb.js";
import { ToolOutputPolicy } from "./gen/forge/v1/workflow_pb.js";
import { type Message, type Usage, enumName, messageFromPb } from "./messages.js";
import type { Coercion } from "./workflow.js";

// ── Events ─────────────────────────────────────────────────────────────────

/** The first event of a run: the server accepted it. */
export interface RunStartedEvent {
  type: "run_started";
  runId: string;
  backend: string;
  model: string;
  contextBudgetTokens: number;
  /** "native", "constrained", "prompt" or "scripted". */
  toolCallMode: string;
  /** The server's fallback chain in order (`backend` first); empty with one backend. */
  backendChain: string[];
  /**
   * How long (seconds) the server keeps the run when its stream breaks; the
   * SDK reattaches within that time (0: a broken stream ends the run).
   */
  reattachGraceS: number;
}

/**
 * The run's stream broke and the SDK continued the run on a new stream (the
 * same server, or a replica sharing its journal; see `StreamOptions.reattach`).
 * The events the old stream missed follow; none is delivered twice.
 */
export interface ReattachedEvent {
  type: "reattached";
  runId: string;
  /** The last event (RunResponse.seq) handled before the break. */
  afterSeq: number;
  /** Reattach attempts this break took (1: the first one succeeded). */
  attempts: number;
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
export interface ToolCallStartedEvent {
  type: "tool_call_started";
  callId: string;
  toolName: string;
  arguments: Record<string, unknown>;
  argumentsJson: string;
  iteration: number;
  coercions: readonly Coercion[];
}

/** How a handler failed. */
export interface ToolFailure {
  message: string;
  /**
   * "resolution": a ToolResolutionError; "unreachable": a ToolUnreachableError
   * (the server may make the call once more); "hard": any other error.
   */
  kind: "hard" | "resolution" | "unreachable";
  /** The error's class name, e.g. "ValidationError". */
  type: string;
}

/**
 * A handler finished (and its result went to the server unless the run had
 * moved on). `error` is set exactly when the handler failed: its presence is
 * the `error: bool` of the shared event vocabulary.
 */
export interface ToolCallFinishedEvent {
  type: "tool_call_finished";
  callId: string;
  toolName: string;
  /** The result as sent to the server; empty on error. */
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

/** A destructive call awaiting the client's decision (see `RunOptions.approveDestructiveCalls`). */
export interface ApprovalRequest {
  /** The call's id; an approved call arrives as a `tool_call_started` with the same id. */
  callId: string;
  toolName: string;
  /** The validated (and coerced) arguments, parsed. */
  arguments: Record<string, unknown>;
  argumentsJson: string;
  /** The loop iteration that produced the call. */
  iteration: number;
}

/** The server asks whether a destructive call may run; the run's `approve` callback starts now. */
export interface ApprovalRequestedEvent extends ApprovalRequest {
  type: "approval_requested";
}

/**
 * The decision on an `approval_requested`, as sent to the server (the
 * approver's answer; a denial when there is no approver or it failed).
 */
export interface ApprovalDecidedEvent {
  type: "approval_decided";
  callId: string;
  toolName: string;
  approved: boolean;
  /** The denial's reason as sent. */
  reason: string;
  /** What the approver threw, if it did (the call was then denied). */
  error?: Error | undefined;
  /** False when no decision was sent: the run was cancelled or over, or the server had given up waiting. */
  sent: boolean;
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

/** The last event of a successful run. */
export interface RunCompletedEvent<V = unknown> {
  type: "run_completed";
  result: RunResult<V>;
}

export type ForgeEvent<V = unknown> =
  | RunStartedEvent
  | ReattachedEvent
  | ChunkEvent
  | ToolCallStartedEvent
  | ApprovalRequestedEvent
  | ApprovalDecidedEvent
  | ToolCallFinishedEvent
  | ToolCallCancelledEvent
  | ToolOutputScreenedEvent
  | MessageAppendedEvent
  | CompactedEvent
  | QueuedEvent
  | RunCompletedEvent<V>;

/** @deprecated Renamed ToolCallStartedEvent (its `type` is now "tool_call_started"). */
export type ToolCallEvent = ToolCallStartedEvent;
/** @deprecated Renamed ToolCallFinishedEvent (its `type` is now "tool_call_finished"). */
export type ToolResultEvent = ToolCallFinishedEvent;

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

// ── Conversion from the contract ───────────────────────────────────────────

export function runStartedFromPb(s: PbRunStarted): RunStartedEvent {
  return {
    type: "run_started",
    runId: s.runId,
    backend: s.backend,
    model: s.model,
    contextBudgetTokens: s.contextBudgetTokens,
    toolCallMode: s.toolCallMode,
    backendChain: [...s.backendChain],
    reattachGraceS: s.reattachGraceS,
  };
}

export function chunkFromPb(c: PbStreamChunk): ChunkEvent {
  return {
    type: "chunk",
    chunkType: enumName(ChunkType, c.type) as ChunkKind,
    content: c.content,
    iteration: c.iteration,
  };
}

export function toolCallStartedFromPb(call: PbToolCallRequest): ToolCallStartedEvent {
  return {
    type: "tool_call_started",
    callId: call.callId,
    toolName: call.toolName,
    arguments: argumentsObject(parseJson(call.argumentsJson)),
    argumentsJson: call.argumentsJson,
    iteration: call.iteration,
    coercions: call.coercions.map((c) => ({
      path: c.path,
      originalJson: c.originalJson,
      coercedJson: c.coercedJson,
    })),
  };
}

export function approvalRequestedFromPb(request: PbApprovalRequest): ApprovalRequestedEvent {
  return {
    type: "approval_requested",
    callId: request.callId,
    toolName: request.toolName,
    arguments: argumentsObject(parseJson(request.argumentsJson)),
    argumentsJson: request.argumentsJson,
    iteration: request.iteration,
  };
}

export function messageAppendedFromPb(m: PbMessageAppended): MessageAppendedEvent {
  return { type: "message_appended", message: messageFromPb(m.message ?? create(MessageSchema)), index: m.index };
}

export function compactedFromPb(c: PbCompacted): CompactedEvent {
  return {
    type: "compacted",
    iteration: c.iteration,
    phase: c.phase,
    tokensBefore: c.tokensBefore,
    tokensAfter: c.tokensAfter,
    messagesBefore: c.messagesBefore,
    messagesAfter: c.messagesAfter,
    strategy: c.strategy,
  };
}

export function toolOutputScreenedFromPb(v: PbToolOutputScreened): ToolOutputScreenedEvent {
  return {
    type: "tool_output_screened",
    callId: v.callId,
    toolName: v.toolName,
    action: v.action === ToolOutputPolicy.BLOCK ? "block" : "redact",
    secretTypes: [...v.secretTypes],
    secrets: v.secrets,
    iteration: v.iteration,
  };
}

export function queuedFromPb(q: PbQueued): QueuedEvent {
  return { type: "queued", position: q.position, iteration: q.iteration, preempted: q.preempted };
}

/** The arguments JSON parsed; undefined when it is not valid JSON. */
export function parseJson(json: string): unknown {
  try {
    return JSON.parse(json || "{}") as unknown;
  } catch {
    return undefined;
  }
}

function argumentsObject(args: unknown): Record<string, unknown> {
  return typeof args === "object" && args !== null && !Array.isArray(args) ? (args as Record<string, unknown>) : {};
}
