/**
 * Event-level conformance (`expect.events` in tests/conformance/cases): the
 * SDK's events in the canonical vocabulary shared by every SDK's runner, and
 * the ordered-subsequence match of a case's expected events against them.
 */

import { isDeepStrictEqual } from "node:util";
import type { ForgeEvent } from "@forge-sidecar/client";

/** An event as every runner records it: canonical kind, canonical (snake_case) fields. */
export interface CanonicalEvent {
  kind: string;
  fields: Record<string, unknown>;
}

/**
 * The canonical fields of each kind the TypeScript SDK surfaces. A kind
 * without listed fields can be expected by kind only.
 */
export const CANONICAL_FIELDS: Readonly<Record<ForgeEvent["type"], readonly string[]>> = {
  run_started: ["run_id"],
  reattached: [],
  chunk: [],
  tool_call_started: ["call_id", "tool_name", "arguments"],
  tool_call_finished: ["call_id", "tool_name", "error"],
  tool_call_cancelled: ["call_id", "reason"],
  approval_requested: ["call_id", "tool_name", "arguments"],
  approval_decided: ["call_id", "tool_name", "approved"],
  tool_output_screened: [],
  message_appended: ["index", "type"],
  compacted: ["messages_before", "messages_after"],
  queued: [],
  run_completed: ["terminal_tool"],
};

export function canonicalEvent(event: ForgeEvent): CanonicalEvent {
  const kind = event.type;
  switch (event.type) {
    case "run_started":
      return { kind, fields: { run_id: event.runId } };
    case "tool_call_started":
      return { kind, fields: { call_id: event.callId, tool_name: event.toolName, arguments: event.arguments } };
    case "tool_call_finished":
      // `error` is set exactly when the handler failed.
      return { kind, fields: { call_id: event.callId, tool_name: event.toolName, error: event.error !== undefined } };
    case "tool_call_cancelled":
      return { kind, fields: { call_id: event.callId, reason: event.reason } };
    case "approval_requested":
      return { kind, fields: { call_id: event.callId, tool_name: event.toolName, arguments: event.arguments } };
    case "approval_decided":
      return { kind, fields: { call_id: event.callId, tool_name: event.toolName, approved: event.approved } };
    case "message_appended":
      return { kind, fields: { index: event.index, type: event.message.type } };
    case "compacted":
      return { kind, fields: { messages_before: event.messagesBefore, messages_after: event.messagesAfter } };
    case "run_completed":
      return { kind, fields: { terminal_tool: event.result.terminalTool } };
    case "reattached":
    case "chunk":
    case "tool_output_screened":
    case "queued":
      return { kind, fields: {} };
  }
}

/** One line per surfaced event, for failure messages. */
export function describeEvents(events: readonly CanonicalEvent[]): string {
  return events.map((e, i) => `  #${i} ${e.kind} ${JSON.stringify(e.fields)}`).join("\n");
}

/**
 * Check that `expected` (a case's `expect.events`) is an ordered subsequence
 * of `surfaced`: each entry matches a later surfaced event whose kind is equal
 * and whose fields deep-equal every expected field. Returns what is wrong, or
 * undefined when it matches. An expected kind or field this SDK does not
 * surface is an error, never a silent pass.
 */
export function matchEvents(expected: unknown, surfaced: readonly CanonicalEvent[]): string | undefined {
  if (!Array.isArray(expected)) {
    return `expect.events must be a list, got ${JSON.stringify(expected)}`;
  }
  let next = 0;
  for (const [i, entry] of expected.entries()) {
    const problem = checkEntry(entry);
    if (problem !== undefined) {
      return `expect.events[${i}]: ${problem}`;
    }
    const { kind, fields = {} } = entry as { kind: string; fields?: Record<string, unknown> };
    // Greedy earliest match: if any ordered match exists, this one finds it.
    let found = -1;
    for (let j = next; j < surfaced.length; j++) {
      const event = surfaced[j] as CanonicalEvent;
      if (event.kind === kind && Object.entries(fields).every(([k, v]) => isDeepStrictEqual(event.fields[k], v))) {
        found = j;
        break;
      }
    }
    if (found < 0) {
      return (
        `expect.events[${i}] ${JSON.stringify(entry)} matches no surfaced event from #${next} on;` +
        ` surfaced events:\n${describeEvents(surfaced)}`
      );
    }
    next = found + 1;
  }
  return undefined;
}

function checkEntry(entry: unknown): string | undefined {
  if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
    return `not an object: ${JSON.stringify(entry)}`;
  }
  const unknownKeys = Object.keys(entry).filter((k) => k !== "kind" && k !== "fields");
  if (unknownKeys.length > 0) {
    return `keys the TypeScript runner does not handle: ${unknownKeys.join(", ")}`;
  }
  const { kind, fields } = entry as { kind?: unknown; fields?: unknown };
  if (typeof kind !== "string" || !Object.hasOwn(CANONICAL_FIELDS, kind)) {
    return `kind ${JSON.stringify(kind)} is not one the TypeScript SDK surfaces (${Object.keys(CANONICAL_FIELDS).join(", ")})`;
  }
  if (fields === undefined) {
    return undefined;
  }
  if (typeof fields !== "object" || fields === null || Array.isArray(fields)) {
    return `fields must be an object, got ${JSON.stringify(fields)}`;
  }
  const known = CANONICAL_FIELDS[kind as ForgeEvent["type"]];
  const missing = Object.keys(fields).filter((k) => !known.includes(k));
  if (missing.length > 0) {
    return `${kind} has no canonical field ${missing.join(", ")} in the TypeScript SDK (it has: ${known.join(", ") || "none"})`;
  }
  return undefined;
}
