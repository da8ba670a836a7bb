/** Plain, typed views of the contract's messages (and the conversions to/from the wire). */

import { create } from "@bufbuild/protobuf";
import {
  type Message as PbMessage,
  MessageSchema,
  MessageType as PbMessageType,
  Role as PbRole,
  ToolCallSchema,
} from "./gen/forge/v1/messages_pb.js";
import type { Usage as PbUsage } from "./gen/forge/v1/forge_service_pb.js";

export type Role = "unspecified" | "system" | "user" | "assistant" | "tool";

/** What created a message (MESSAGE_TYPE_* lower-case without the prefix). */
export type MessageType =
  | "unspecified"
  | "system_prompt"
  | "user_input"
  | "tool_call"
  | "tool_result"
  | "reasoning"
  | "text_response"
  | "step_nudge"
  | "prerequisite_nudge"
  | "retry_nudge"
  | "summary";

/** One tool invocation inside an assistant message. */
export interface ToolCallRecord {
  id: string;
  name: string;
  /** The arguments as JSON text (exact integers). */
  argumentsJson: string;
}

/** One message of a run's conversation, as the server keeps it. */
export interface Message {
  role: Role;
  type: MessageType;
  content: string;
  /** Loop iteration that created the message; undefined for client-provided ones. */
  stepIndex?: number | undefined;
  toolCalls: ToolCallRecord[];
  /** TOOL messages: the call this result answers. */
  toolCallId: string;
  toolName: string;
  /** Retry artefacts (failed attempts, nudges): drop them when persisting a conversation. */
  transient: boolean;
}

/** A message passed back as `priorMessages` (a `Message` from a transcript works as is). */
export interface MessageInput {
  role: Role;
  type?: MessageType | undefined;
  content?: string | undefined;
  stepIndex?: number | undefined;
  toolCalls?:
    | ReadonlyArray<{
        id: string;
        name: string;
        argumentsJson?: string | undefined;
        arguments?: Record<string, unknown> | undefined;
      }>
    | undefined;
  toolCallId?: string | undefined;
  toolName?: string | undefined;
  transient?: boolean | undefined;
}

/** Token and time accounting of a run, from the backend's own reports. */
export interface Usage {
  modelCalls: number;
  promptTokens: number;
  completionTokens: number;
  cachedPromptTokens: number;
  promptMs: number;
  generationMs: number;
  /** cachedPromptTokens / promptTokens over the run. */
  cacheHitRatio: number;
  /** One entry per model call. */
  iterations: IterationUsage[];
}

/** One model call's accounting. */
export interface IterationUsage {
  iteration: number;
  promptTokens: number;
  cachedPromptTokens: number;
  cacheHitRatio: number;
  promptMs: number;
  generationMs: number;
  /** The model server slot the request ran on; -1 if unknown. */
  slot: number;
  /** Which backend of the server's fallback chain served it ("" without one). */
  backend: string;
}

/** Lower-case name of a proto enum value without its prefix. */
/** Lower-cased enum value names by table, made once (every message of a run is converted). */
const ENUM_NAMES = new WeakMap<Record<number, string>, Map<number, string>>();

export function enumName(table: Record<number, string>, value: number): string {
  let names = ENUM_NAMES.get(table);
  if (names === undefined) {
    names = new Map();
    ENUM_NAMES.set(table, names);
  }
  let name = names.get(value);
  if (name === undefined) {
    name = (table[value] ?? "UNSPECIFIED").toLowerCase();
    names.set(value, name);
  }
  return name;
}

function enumValue<E extends Record<string, string | number>>(
  table: E,
  name: string,
  what: string,
): number {
  const value = table[name.toUpperCase() as keyof E];
  if (typeof value !== "number") {
    throw new TypeError(`unknown ${what} ${JSON.stringify(name)}`);
  }
  return value;
}

export function messageFromPb(m: PbMessage): Message {
  return {
    role: enumName(PbRole, m.role) as Role,
    type: enumName(PbMessageType, m.type) as MessageType,
    content: m.content,
    ...(m.stepIndex !== undefined ? { stepIndex: m.stepIndex } : {}),
    toolCalls: m.toolCalls.map((c) => ({
      id: c.id,
      name: c.name,
      argumentsJson: c.argumentsJson,
    })),
    toolCallId: m.toolCallId,
    toolName: m.toolName,
    transient: m.transient,
  };
}

export function messageToPb(m: MessageInput): PbMessage {
  const msg = create(MessageSchema, {
    role: enumValue(PbRole, m.role, "role"),
    type: enumValue(PbMessageType, m.type ?? "unspecified", "message type"),
    content: m.content ?? "",
    toolCalls: (m.toolCalls ?? []).map((c) =>
      create(ToolCallSchema, {
        id: c.id,
        name: c.name,
        argumentsJson: c.argumentsJson ?? JSON.stringify(c.arguments ?? {}),
      }),
    ),
    toolCallId: m.toolCallId ?? "",
    toolName: m.toolName ?? "",
    transient: m.transient ?? false,
  });
  if (m.stepIndex !== undefined) {
    msg.stepIndex = m.stepIndex;
  }
  return msg;
}

export function usageFromPb(u: PbUsage | undefined): Usage {
  return {
    modelCalls: u?.modelCalls ?? 0,
    promptTokens: Number(u?.promptTokens ?? 0n),
    completionTokens: Number(u?.completionTokens ?? 0n),
    cachedPromptTokens: Number(u?.cachedPromptTokens ?? 0n),
    promptMs: u?.promptMs ?? 0,
    generationMs: u?.generationMs ?? 0,
    cacheHitRatio: u?.cacheHitRatio ?? 0,
    iterations: (u?.iterations ?? []).map((i) => ({
      iteration: i.iteration,
      promptTokens: i.promptTokens,
      cachedPromptTokens: i.cachedPromptTokens,
      cacheHitRatio: i.cacheHitRatio,
      promptMs: i.promptMs,
      generationMs: i.generationMs,
      slot: i.slot,
      backend: i.backend,
    })),
  };
}
