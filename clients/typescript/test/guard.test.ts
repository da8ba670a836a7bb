/**
 * client.guard() against the real forge-server (scripted backend, which Guard
 * never asks for a model reply): a caller's own loop gets a run's decisions
 * as typed verdicts, a run's failures as RunFailedError subclasses and bad
 * input as RequestRejectedError naming the field.
 */

import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import {
  type ForgeClient,
  type MessageInput,
  RequestRejectedError,
  TOOL_ERROR_PREFIX,
  ToolCallError,
  createForgeClient,
  toolResultMessage,
  workflow,
} from "@forge-sidecar/client";
import { z } from "zod";
import { CASES_DIR, type RunningServer, startForgeServer } from "./helpers.js";

let server: RunningServer;
let client: ForgeClient;
let ran: string[] = [];

before(async () => {
  server = await startForgeServer(["--backend", "scripted", "--script", CASES_DIR], 60_000);
  client = createForgeClient({ address: server.address });
});

after(async () => {
  client?.close();
  await server?.stop();
});

const wf = workflow("ts_guard_weather", "Look up the weather, then report it.")
  .tool(
    "get_weather",
    "Get current weather for a city",
    z.object({ city: z.string() }),
    async ({ city }) => {
      ran.push(city);
      return `72F in ${city}`;
    },
    { required: true },
  )
  .tool("report_weather", "Report the weather", z.object({ city: z.string(), weather: z.string() }), async () => "sent", {
    terminal: true,
  });

const USER: MessageInput = { role: "user", content: "Weather in Paris?" };

test("guard: a step correction, then calls with coercions, then done", async () => {
  ran = [];
  const history: MessageInput[] = [USER];
  const early = await client.guard(wf, history, {
    replyText: '{"tool": "report_weather", "args": {"city": "Paris", "weather": "?"}}',
  });
  assert.equal(early.kind, "retry");
  if (early.kind !== "retry") return;
  assert.equal(early.attempt, 1);
  assert.match(early.reason, /get_weather/);
  assert.equal(early.messages.at(-1)?.type, "step_nudge");
  assert.ok(early.messages.every((m) => m.transient));
  history.push(...early.messages);

  // A native-API reply keeps its id; 7 is coerced to "7".
  const calls = await client.guard(wf, history, {
    replyToolCalls: [{ id: "x1", name: "get_weather", argumentsJson: '{"city": 7}' }],
  });
  assert.equal(calls.kind, "calls");
  if (calls.kind !== "calls") return;
  const [call] = calls.calls;
  assert.ok(call !== undefined);
  assert.deepEqual([call.callId, call.toolName, call.arguments], ["x1", "get_weather", { city: "7" }]);
  assert.deepEqual(
    call.coercions.map((c) => c.path),
    ["/city"],
  );
  assert.equal(calls.message.role, "assistant");
  assert.deepEqual(calls.message.toolCalls, [{ id: "x1", name: "get_weather", argumentsJson: call.argumentsJson }]);
  history.push(calls.message, toolResultMessage(call, "72F in 7"));

  const final = await client.guard(wf, history, {
    replyToolCalls: [{ id: "x2", name: "report_weather", arguments: { city: "7", weather: "72F in 7" } }],
  });
  assert.equal(final.kind, "calls");
  if (final.kind !== "calls") return;
  history.push(final.message, toolResultMessage(final.calls[0]!, "sent"));

  const done = await client.guard(wf, history);
  assert.deepEqual(done, { kind: "done", terminalTool: "report_weather", result: "sent", terminalCallId: "x2" });
  assert.deepEqual(ran, [], "guard never calls the workflow's handlers");
});

test("guard: a failed call recorded as a tool error leaves the step pending", async () => {
  const calls = await client.guard(wf, [USER], {
    replyToolCalls: [{ id: "a", name: "get_weather", arguments: { city: "Paris" } }],
  });
  assert.equal(calls.kind, "calls");
  if (calls.kind !== "calls") return;
  const failed = toolResultMessage(calls.calls[0]!, "", { error: "weather service down" });
  assert.equal(failed.content, `${TOOL_ERROR_PREFIX}weather service down`);
  const early = await client.guard(wf, [USER, calls.message, failed], {
    replyToolCalls: [{ id: "b", name: "report_weather", arguments: { city: "Paris", weather: "x" } }],
  });
  assert.equal(early.kind, "retry");
  assert.equal(early.kind === "retry" && early.messages.at(-1)?.type, "step_nudge");
});

test("guard: the retry budget ends in the run's typed error", async () => {
  const history: MessageInput[] = [USER];
  const first = await client.guard(wf, history, { replyText: "It is probably sunny.", options: { maxRetries: 1 } });
  assert.equal(first.kind, "retry");
  if (first.kind !== "retry") return;
  history.push(...first.messages);
  await assert.rejects(
    client.guard(wf, history, { replyText: "Still sunny.", options: { maxRetries: 1 } }),
    (err: unknown) => {
      assert.ok(err instanceof ToolCallError, String(err));
      assert.equal(err.reason, "TOOL_CALL");
      assert.equal(err.transcript.length, history.length);
      assert.equal(err.transcript[0]?.content, "Weather in Paris?");
      return true;
    },
  );
});

test("guard: bad input is a rejection naming the field", async () => {
  const cases: Array<[MessageInput[], Parameters<ForgeClient["guard"]>[2], string]> = [
    [[USER, { role: "tool", content: "out", toolCallId: "nope" }], {}, "messages[1].tool_call_id"],
    [[USER], {}, "reply_text"],
    [[USER], { replyText: "x", replyToolCalls: [{ id: "a", name: "get_weather" }] }, "reply_tool_calls"],
    [[USER], { replyToolCalls: [{ id: "a", name: "" }] }, "reply_tool_calls[0].name"],
  ];
  for (const [messages, options, field] of cases) {
    await assert.rejects(client.guard(wf, messages, options), (err: unknown) => {
      assert.ok(err instanceof RequestRejectedError, String(err));
      assert.equal(err.code, "INVALID_ARGUMENT");
      assert.equal(err.field, field);
      return true;
    });
  }
});
