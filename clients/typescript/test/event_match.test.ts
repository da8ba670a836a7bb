/**
 * The `expect.events` matcher of the conformance runner, without a server:
 * SDK events in canonical form, and the ordered-subsequence rule on an
 * inline case.
 */

import assert from "node:assert/strict";
import { test } from "node:test";
import type { ForgeEvent, Message } from "@forge-sidecar/client";
import { canonicalEvent, matchEvents } from "./event_match.js";

const message = (type: Message["type"]): Message => ({
  role: "tool",
  type,
  content: "",
  toolCalls: [],
  toolCallId: "",
  toolName: "",
  transient: false,
});

/** What an approved destructive call and a report look like to the SDK. */
const EVENTS: ForgeEvent[] = [
  { type: "run_started", runId: "r1", backend: "scripted", model: "m", contextBudgetTokens: 4096, toolCallMode: "scripted", backendChain: [], reattachGraceS: 0 },
  { type: "message_appended", message: message("system_prompt"), index: 0 },
  {
    type: "approval_requested",
    callId: "c1",
    toolName: "delete_service",
    arguments: { service: "staging", force: false },
    argumentsJson: '{"service":"staging","force":false}',
    iteration: 1,
  },
  { type: "approval_decided", callId: "c1", toolName: "delete_service", approved: true, reason: "", sent: true },
  {
    type: "tool_call_started",
    callId: "c1",
    toolName: "delete_service",
    arguments: { service: "staging", force: false },
    argumentsJson: '{"service":"staging","force":false}',
    iteration: 1,
    coercions: [],
  },
  {
    type: "tool_call_finished",
    callId: "c1",
    toolName: "delete_service",
    output: "",
    error: { message: "database down", kind: "hard", type: "Error" },
    sent: true,
  },
  { type: "message_appended", message: message("tool_result"), index: 3 },
  {
    type: "tool_call_finished",
    callId: "c2",
    toolName: "report",
    output: "done",
    sent: true,
  },
];

const surfaced = EVENTS.map(canonicalEvent);

test("SDK events map to canonical kinds and snake_case fields", () => {
  assert.deepEqual(surfaced[0], { kind: "run_started", fields: { run_id: "r1" } });
  assert.deepEqual(surfaced[1], { kind: "message_appended", fields: { index: 0, type: "system_prompt" } });
  assert.deepEqual(surfaced[3], {
    kind: "approval_decided",
    fields: { call_id: "c1", tool_name: "delete_service", approved: true },
  });
  assert.deepEqual(surfaced[5]?.fields["error"], true);
  assert.deepEqual(surfaced[7]?.fields["error"], false);
});

test("an inline case's expect.events: ordered subsequence, fields deep-equal", () => {
  const inlineCase = {
    expect: {
      events: [
        { kind: "approval_requested", fields: { tool_name: "delete_service", arguments: { force: false, service: "staging" } } },
        { kind: "approval_decided", fields: { call_id: "c1", approved: true } },
        { kind: "tool_call_started", fields: { tool_name: "delete_service" } },
        { kind: "tool_call_finished", fields: { tool_name: "delete_service", error: true } },
        { kind: "message_appended", fields: { type: "tool_result" } },
        { kind: "tool_call_finished" },
      ],
    },
  };
  assert.equal(matchEvents(inlineCase.expect.events, surfaced), undefined);
  assert.equal(matchEvents([], surfaced), undefined);
});

test("order, field values and nested arguments all count", () => {
  // Out of order: the decision comes after the request.
  assert.match(
    matchEvents([{ kind: "approval_decided" }, { kind: "approval_requested" }], surfaced) ?? "",
    /expect\.events\[1\].*matches no surfaced event from #4 on;[^]*#2 approval_requested/,
  );
  // A field value that differs.
  assert.notEqual(matchEvents([{ kind: "approval_decided", fields: { approved: false } }], surfaced), undefined);
  // Arguments deep-equal: a missing or extra key fails.
  assert.notEqual(
    matchEvents([{ kind: "tool_call_started", fields: { arguments: { service: "staging" } } }], surfaced),
    undefined,
  );
  // One surfaced event cannot match two expected entries.
  assert.notEqual(matchEvents([{ kind: "run_started" }, { kind: "run_started" }], surfaced), undefined);
});

test("a kind or field the SDK does not surface fails, never passes silently", () => {
  assert.match(matchEvents([{ kind: "tool_call" }], surfaced) ?? "", /kind "tool_call" is not one/);
  assert.match(
    matchEvents([{ kind: "tool_call_finished", fields: { output: "done" } }], surfaced) ?? "",
    /no canonical field output/,
  );
  assert.match(matchEvents([{ kind: "run_started", why: 1 }], surfaced) ?? "", /keys the TypeScript runner/);
  assert.match(matchEvents({ kind: "run_started" }, surfaced) ?? "", /must be a list/);
});
