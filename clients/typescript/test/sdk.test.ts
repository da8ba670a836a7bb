/**
 * SDK behaviour over the real forge-server (scripted backend, this file's own
 * scripts): abort, throwing handlers, schema parse failures, concurrency,
 * server give-up, rejected requests, stream loss, the event iterator,
 * approval of destructive calls, the server's message size limit and shutdown.
 */

import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import {
  type Http2SecureServer,
  type Http2Server,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type IncomingHttpHeaders,
  createServer as createHttp2Server,
  createSecureServer,
} from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import {
  type ApprovalDecidedEvent,
  type ApprovalRequest,
  type ApprovalRequestedEvent,
  ConnectionLostError,
  type ForgeClient,
  type ForgeEvent,
  type Message,
  type MessageInput,
  RequestRejectedError,
  RunFailedError,
  ShuttingDownError,
  ToolExecutionError,
  ToolResolutionError,
  type ToolCallFinishedEvent,
  WorkflowCancelledError,
  createForgeClient,
  encodeOutput,
  workflow,
} from "@forge-sidecar/client";
import { z } from "zod";
import { REPO_ROOT, type RunningServer, startForgeServer } from "./helpers.js";

const call = (name: string, args: Record<string, unknown>) => ({ tool_calls: [{ name, args }] });
const paris = call("get_weather", { city: "Paris" });
const report = call("report", { city: "Paris", weather: "sunny" });

/** The model's turns per workflow name, replayed by the scripted backend. */
const SCRIPTS: Record<string, unknown[]> = {
  ts_abort: [paris, report],
  ts_throwing_handler: [paris, paris, report],
  ts_throwing_budget: [paris, paris, paris],
  ts_parse_failure: [call("get_weather", { city: "Atlantis" }), paris, report],
  ts_parallel: [
    { tool_calls: [{ name: "get_weather", args: { city: "Paris" } }, { name: "get_time", args: { city: "Paris" } }] },
    report,
  ],
  ts_give_up: [paris, paris, report],
  ts_events: [paris, report],
  ts_resolution: [call("get_weather", { city: "Pariss" }), paris, report],
  ts_stream_loss: [paris, report],
  ts_break: [paris, report],
  ts_long_tool: [paris, report],
  ts_approval: [
    call("delete_file", { path: "/var/log/old.log" }),
    call("respond", { message: "The file was not deleted." }),
  ],
  ts_big_transcript: [paris, call("get_weather", { city: "Oslo" }), report],
  ts_shutdown: [paris, report],
};

const weatherArgs = z.object({ city: z.string().describe("City name") });
const reportArgs = z.object({ city: z.string(), weather: z.string() });

/** get_weather (required) + report (terminal) with the given get_weather handler. */
function weatherWorkflow(
  name: string,
  getWeather: (args: { city: string }, ctx: { signal: AbortSignal }) => Promise<string>,
) {
  return workflow(name, "Look up the weather, then report it.")
    .tool("get_weather", "Get the current weather for a city", weatherArgs, getWeather)
    .tool("report", "Report the weather. Ends the task.", reportArgs, async (a) => ({
      text: `${a.city}: ${a.weather}`,
    }))
    .require("get_weather")
    .terminal("report");
}

let scriptDir: string;
let server: RunningServer;
let client: ForgeClient;

before(async () => {
  scriptDir = mkdtempSync(join(tmpdir(), "forge-ts-"));
  const script = join(scriptDir, "script.json");
  writeFileSync(script, JSON.stringify(SCRIPTS));
  server = await startForgeServer(["--backend", "scripted", "--script", script], 60_000);
  client = createForgeClient({ address: server.address });
});

after(async () => {
  client?.close();
  await server?.stop();
  rmSync(scriptDir, { recursive: true, force: true });
});

/** Resolves with the signal's reason once it aborts. */
function aborted(signal: AbortSignal): Promise<unknown> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve(signal.reason);
    signal.addEventListener("abort", () => resolve(signal.reason), { once: true });
  });
}

describe("abort", () => {
  test("the caller's AbortSignal cancels the run and aborts the running handler", async () => {
    const controller = new AbortController();
    let handlerAbort: Promise<unknown> | undefined;
    const wf = weatherWorkflow("ts_abort", async (_args, { signal }) => {
      handlerAbort = aborted(signal);
      controller.abort(new Error("user navigated away"));
      await sleep(30_000, undefined, { signal });
      return "late";
    });
    const started = Date.now();
    const err = await client.run(wf, "What's the weather in Paris?", { signal: controller.signal }).then(
      () => assert.fail("the run should have been cancelled"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof WorkflowCancelledError, String(err));
    assert.ok(err instanceof RunFailedError);
    assert.equal(err.reason, "CANCELLED");
    assert.ok(err.transcript.some((m) => m.content.includes("[Cancelled]")), "transcript shows the cancel");
    assert.ok(Date.now() - started < 5_000, "cancel must not wait for the handler");
    const reason = await handlerAbort;
    assert.ok(reason instanceof DOMException && reason.name === "AbortError", String(reason));
  });

  test("an already-aborted signal never starts the run", async () => {
    let ran = false;
    const wf = weatherWorkflow("ts_abort", async () => {
      ran = true;
      return "x";
    });
    await assert.rejects(
      client.run(wf, "What's the weather in Paris?", { signal: AbortSignal.abort() }),
      WorkflowCancelledError,
    );
    assert.equal(ran, false);
  });

  test("leaving the event loop early drops the run and aborts handlers", async () => {
    let handlerAbort: Promise<unknown> | undefined;
    const wf = weatherWorkflow("ts_break", async (_args, { signal }) => {
      handlerAbort = aborted(signal);
      await sleep(30_000, undefined, { signal });
      return "late";
    });
    // stream() is the deprecated alias of start(); it must keep working for one release.
    const stream = client.stream(wf, "What's the weather in Paris?");
    for await (const event of stream) {
      if (event.type === "tool_call_started") break;
    }
    await assert.rejects(stream.result, WorkflowCancelledError);
    assert.ok((await handlerAbort) instanceof DOMException);
  });
});

describe("handler errors", () => {
  test("a throwing handler is reported to the model as a hard tool error and the run recovers", async () => {
    let calls = 0;
    const wf = weatherWorkflow("ts_throwing_handler", async () => {
      calls += 1;
      if (calls === 1) throw new TypeError("weather service down");
      return "sunny";
    });
    const results: ToolCallFinishedEvent[] = [];
    const result = await client.run(wf, "What's the weather in Paris?", {
      onEvent: (e) => {
        if (e.type === "tool_call_finished") results.push(e);
      },
    });
    assert.equal(result.terminalTool, "report");
    assert.deepEqual(result.value, { text: "Paris: sunny" });
    assert.equal(result.output, '{"text":"Paris: sunny"}');
    assert.deepEqual(results[0]?.error, { message: "weather service down", kind: "hard", type: "TypeError" });
    assert.equal(results[0]?.sent, true);
    const toolMessages = result.transcript.filter((m) => m.type === "tool_result").map((m) => m.content);
    assert.ok(toolMessages[0]?.includes("TypeError: weather service down"), toolMessages[0]);
  });

  test("a handler that keeps throwing fails the run with ToolExecutionError", async () => {
    const wf = weatherWorkflow("ts_throwing_budget", async () => {
      throw new Error("database down");
    });
    const err = await client.run(wf, "What's the weather in Paris?", { options: { maxToolErrors: 1 } }).then(
      () => assert.fail("should fail"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof ToolExecutionError, String(err));
    assert.equal(err.reason, "TOOL_EXECUTION");
    assert.equal(err.details["tool_name"], "get_weather");
    assert.ok(err.transcript.some((m) => m.content.includes("database down")));
  });

  test("ToolResolutionError is a soft (resolution) error", async () => {
    const wf = weatherWorkflow("ts_resolution", async ({ city }) => {
      if (city !== "Paris") throw new ToolResolutionError(`no city named ${city}`);
      return "sunny";
    });
    const kinds: string[] = [];
    const result = await client.run(wf, "What's the weather in Paris?", {
      options: { maxToolErrors: 0 },
      onEvent: (e) => {
        if (e.type === "tool_call_finished") kinds.push(e.error?.kind ?? "ok");
      },
    });
    assert.equal(result.terminalTool, "report");
    assert.deepEqual(kinds, ["resolution", "ok", "ok"]);
  });

  test("arguments failing the zod schema never reach the handler and come back as a tool error", async () => {
    const seen: string[] = [];
    const wf = workflow("ts_parse_failure", "Look up the weather, then report it.")
      .tool(
        "get_weather",
        "Get the current weather for a city",
        // The refinement is not expressible in JSON Schema: the server lets "Atlantis" through.
        z.object({ city: z.string().refine((c) => c !== "Atlantis", "Atlantis is not a real city") }),
        async ({ city }) => {
          seen.push(city);
          return "sunny";
        },
      )
      .tool("report", "Report the weather", reportArgs, async (a) => `${a.city}: ${a.weather}`)
      .require("get_weather")
      .terminal("report");
    const errors: Array<ToolCallFinishedEvent["error"]> = [];
    const result = await client.run(wf, "What's the weather in Paris?", {
      onEvent: (e) => {
        if (e.type === "tool_call_finished") errors.push(e.error);
      },
    });
    assert.deepEqual(seen, ["Paris"]);
    assert.equal(errors[0]?.type, "ValidationError");
    assert.equal(errors[0]?.kind, "hard");
    assert.match(errors[0]?.message ?? "", /city: Atlantis is not a real city/);
    assert.equal(result.value, "Paris: sunny");
  });
});

describe("concurrency and timeouts", () => {
  test("parallel calls of one turn run concurrently", async () => {
    // Each handler waits for the other to start: sequential execution would hang.
    let release!: () => void;
    const bothStarted = new Promise<void>((r) => (release = r));
    let started = 0;
    const arrive = async () => {
      started += 1;
      if (started === 2) release();
      await Promise.race([bothStarted, sleep(5_000).then(() => assert.fail("handlers ran sequentially"))]);
    };
    const wf = workflow("ts_parallel", "Look up the weather and time, then report.")
      .tool("get_weather", "Weather", weatherArgs, async () => {
        await arrive();
        return "sunny";
      })
      .tool("get_time", "Time", weatherArgs, async () => {
        await arrive();
        return "noon";
      })
      .tool("report", "Report", reportArgs, async (a) => a.weather)
      .require("get_weather", "get_time")
      .terminal("report");
    const result = await client.run(wf, "Weather and time in Paris?", { options: { parallelToolCalls: true } });
    assert.equal(result.value, "sunny");
    assert.equal(started, 2);
  });

  test("when the server stops waiting (tool timeout) the handler's signal aborts and its result is dropped", async () => {
    let calls = 0;
    let firstAbort: Promise<unknown> | undefined;
    let lateDone: Promise<unknown> | undefined;
    const wf = weatherWorkflow("ts_give_up", async (_args, { signal }) => {
      calls += 1;
      if (calls === 1) {
        firstAbort = aborted(signal);
        // Ignores the signal on purpose: its late result must not be sent.
        lateDone = sleep(700);
        await lateDone;
        return "late";
      }
      await lateDone; // so the late result comes back while the run goes on
      return "sunny";
    });
    const events: ToolCallFinishedEvent[] = [];
    const cancelled: string[] = [];
    const result = await client.run(wf, "What's the weather in Paris?", {
      options: { toolTimeoutMs: 500 },
      onEvent: (e) => {
        if (e.type === "tool_call_finished") events.push(e);
        if (e.type === "tool_call_cancelled") cancelled.push(`${e.toolName}: ${e.reason}`);
      },
    });
    assert.equal(result.terminalTool, "report");
    const reason = await firstAbort;
    assert.ok(reason instanceof DOMException && reason.name === "AbortError", String(reason));
    assert.match(reason.message, /stopped waiting for get_weather/);
    assert.deepEqual(cancelled, ["get_weather: no result within 0.5s"]);
    assert.ok(result.transcript.some((m) => m.content.includes("sent no result for 'get_weather'")));
    // The first call's late result came back during the run and was not sent.
    const late = events.find((e) => e.output === "late");
    assert.equal(late?.sent, false);
    assert.deepEqual(
      events.map((e) => e.sent),
      [false, true, true],
    );
  });
});

describe("approval of destructive calls", () => {
  test("approval_requested carries parsed arguments; a denial's reason (or the approver's error) reaches the model and approval_decided reports it", async () => {
    let deleted = 0;
    const wf = workflow("ts_approval", "Manage log files.")
      .tool(
        "delete_file",
        "Delete a file permanently. Ends the task.",
        z.object({ path: z.string() }),
        async () => {
          deleted += 1;
          return "deleted";
        },
        { destructive: true },
      )
      .terminal("delete_file")
      .withRespondTool();
    assert.equal(wf.tools.get("delete_file")?.destructive, true);
    assert.equal(wf.toProto().tools[0]?.destructive, true);
    const asked: Array<{ request: ApprovalRequest; runId: string }> = [];
    const events: ApprovalRequestedEvent[] = [];
    const decided: ApprovalDecidedEvent[] = [];
    const result = await client.run(wf, "Delete the file /var/log/old.log", {
      options: { approveDestructiveCalls: true },
      approve: async (request, { runId, signal }) => {
        asked.push({ request, runId });
        await sleep(10, undefined, { signal }); // decided asynchronously, off the stream's read loop
        return { approved: false, reason: "the log volume is read-only" };
      },
      onEvent: (e) => {
        if (e.type === "approval_requested") events.push(e);
        if (e.type === "approval_decided") decided.push(e);
      },
    });
    assert.equal(result.terminalTool, "respond");
    assert.equal(deleted, 0, "a denied call never reaches the handler");
    assert.equal(events.length, 1);
    assert.deepEqual(events[0]?.arguments, { path: "/var/log/old.log" });
    assert.equal(events[0]?.toolName, "delete_file");
    assert.deepEqual(asked[0]?.request, {
      callId: events[0]?.callId,
      toolName: "delete_file",
      arguments: { path: "/var/log/old.log" },
      argumentsJson: events[0]?.argumentsJson,
      iteration: events[0]?.iteration,
    });
    assert.equal(asked[0]?.runId, result.runId);
    assert.deepEqual(decided, [
      {
        type: "approval_decided",
        callId: events[0]?.callId,
        toolName: "delete_file",
        approved: false,
        reason: "the log volume is read-only",
        error: undefined,
        sent: true,
      },
    ]);
    const transcript = result.transcript.map((m) => m.content).join("\n");
    assert.ok(transcript.includes("the log volume is read-only"), transcript);

    // An approver that throws denies with the error's message.
    const failedDecisions: ApprovalDecidedEvent[] = [];
    const failing = await client.run(wf, "Delete the file /var/log/old.log", {
      options: { approveDestructiveCalls: true },
      approve: () => {
        throw new Error("approval service unreachable");
      },
      onEvent: (e) => {
        if (e.type === "approval_decided") failedDecisions.push(e);
      },
    });
    assert.equal(deleted, 0);
    assert.equal(failedDecisions.length, 1);
    assert.equal(failedDecisions[0]?.approved, false);
    assert.equal(failedDecisions[0]?.reason, "approval service unreachable");
    assert.equal(failedDecisions[0]?.error?.message, "approval service unreachable");
    assert.equal(failedDecisions[0]?.sent, true);
    assert.ok(failing.transcript.some((m) => m.content.includes("approval service unreachable")));
  });
});

describe("keepalive", () => {
  test("a tool outlasting several keepalive pings does not kill the run", async () => {
    // The client pings every 5 s while the stream is silent; the server must
    // accept that rather than answer GOAWAY too_many_pings.
    const pinging = createForgeClient({ address: server.address, keepaliveMs: 5_000 });
    try {
      const wf = weatherWorkflow("ts_long_tool", async (_args, { signal }) => {
        await sleep(11_000, undefined, { signal });
        return "sunny";
      });
      const result = await pinging.run(wf, "What's the weather in Paris?");
      assert.deepEqual(result.value, { text: "Paris: sunny" });
    } finally {
      pinging.close();
    }
  });
});

describe("events and errors", () => {
  test("for await over client.start() yields typed events in order, ending with run_completed", async () => {
    const wf = weatherWorkflow("ts_events", async ({ city }) => `sunny in ${city}`);
    const stream = client.start(wf, "What's the weather in Paris?", {
      options: { streamChunks: true },
      labels: { request_id: "ts-1" },
    });
    const events: ForgeEvent<{ text: string }>[] = [];
    for await (const event of stream) {
      events.push(event);
    }
    const types = events.map((e) => e.type);
    assert.equal(types[0], "run_started");
    assert.equal(types.at(-1), "run_completed");
    assert.ok(types.includes("chunk"));
    assert.ok(types.indexOf("tool_call_started") < types.indexOf("tool_call_finished"));
    const last = events.at(-1);
    assert.ok(last?.type === "run_completed");
    const text: string = last.result.value.text; // typed from report's handler
    assert.equal(text, "Paris: sunny");
    const result = await stream.result;
    assert.equal(result.runId, stream.runId);
    assert.ok(stream.runId.length > 0);
    assert.equal(result.iterations, 2);
    assert.equal(result.usage.modelCalls, 2);
    const tool = events.find((e) => e.type === "tool_call_started");
    assert.deepEqual(tool?.type === "tool_call_started" ? tool.arguments : undefined, { city: "Paris" });
    // A transcript continues a conversation as priorMessages.
    const prior: MessageInput[] = result.transcript.filter((m) => !m.transient);
    assert.equal(prior[0]?.type, "system_prompt");
    const again = await client.run(wf, "And in Oslo?", { priorMessages: prior });
    assert.deepEqual(
      again.transcript.slice(0, prior.length).map((m) => [m.type, m.content]),
      prior.map((m) => [m.type, m.content]),
    );
    assert.equal(again.transcript[prior.length]?.content, "And in Oslo?");
    assert.throws(() => stream[Symbol.asyncIterator](), /only once/);
  });

  test("a workflow the server refuses raises RequestRejectedError with reason and field", async () => {
    // A terminal tool cannot also be a required step.
    const wf = workflow("ts_rejected", "bad")
      .tool("get_weather", "Weather", weatherArgs, async () => "x")
      .require("get_weather")
      .terminal("get_weather");
    const err = await client.run(wf, "What's the weather in Paris?").then(
      () => assert.fail("should be rejected"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof RequestRejectedError, String(err));
    assert.equal(err.code, "INVALID_ARGUMENT");
    assert.equal(err.reason, "INVALID_WORKFLOW");
    assert.equal(err.field, "workflow.terminal_tools[0]");
    assert.match(err.serverMessage, /required step/);
  });

  test("serverInfo() reports the scripted backend", async () => {
    const info = await client.serverInfo();
    assert.equal(info.backend, "scripted");
    assert.ok(info.version.length > 0);
    // No chain: the one backend, always available.
    assert.deepEqual(
      info.backends.map((b) => [b.name, b.available]),
      [["scripted", true]],
    );
  });

  test("an unreachable server raises ConnectionLostError", async () => {
    const dead = createForgeClient({ address: "127.0.0.1:9" });
    try {
      await assert.rejects(dead.serverInfo({ timeoutMs: 2_000 }), ConnectionLostError);
      const wf = weatherWorkflow("ts_events", async () => "x");
      await assert.rejects(dead.run(wf, "hi"), ConnectionLostError);
    } finally {
      dead.close();
    }
  });

  /** A bare HTTP/2 server that refuses every call the way an auth proxy would. */
  async function refusingServer(
    make: (handler: (req: Http2ServerRequest, res: Http2ServerResponse) => void) => Http2Server | Http2SecureServer,
  ): Promise<{ port: number; seen: IncomingHttpHeaders[]; close: () => Promise<unknown> }> {
    const seen: IncomingHttpHeaders[] = [];
    const h2 = make((req, res) => {
      seen.push(req.headers);
      res.writeHead(200, { "content-type": "application/grpc", "grpc-status": "16", "grpc-message": "bad token" });
      res.end();
    });
    await new Promise<void>((resolve) => h2.listen(0, "127.0.0.1", resolve));
    const { port } = h2.address() as { port: number };
    return { port, seen, close: () => new Promise((resolve) => h2.close(resolve)) };
  }

  test("the bearer token and extra headers go out as gRPC metadata", async () => {
    const h2 = await refusingServer((handler) => createHttp2Server(handler));
    const authed = createForgeClient({
      address: `127.0.0.1:${h2.port}`,
      token: async () => "t0k",
      headers: { "x-request-id": "abc" },
    });
    try {
      const err = await authed.serverInfo().then(
        () => assert.fail("should be refused"),
        (e: unknown) => e,
      );
      assert.ok(err instanceof RequestRejectedError, String(err));
      assert.equal(err.code, "UNAUTHENTICATED");
      assert.equal(err.serverMessage, "bad token");
      assert.equal(h2.seen[0]?.["authorization"], "Bearer t0k");
      assert.equal(h2.seen[0]?.["x-request-id"], "abc");
      assert.equal(h2.seen[0]?.[":path"], "/forge.v1.ForgeService/GetServerInfo");
    } finally {
      authed.close();
      await h2.close();
    }
  });

  test("TLS: the server certificate is checked against the given CA", async () => {
    const fixtures = join(REPO_ROOT, "clients", "typescript", "test", "fixtures");
    const cert = readFileSync(join(fixtures, "localhost.crt"));
    const key = readFileSync(join(fixtures, "localhost.key"));
    const h2 = await refusingServer((handler) => createSecureServer({ cert, key }, handler));
    const trusted = createForgeClient({ address: `127.0.0.1:${h2.port}`, tls: { ca: cert }, token: "t" });
    const untrusted = createForgeClient({ address: `https://127.0.0.1:${h2.port}` });
    try {
      await assert.rejects(trusted.serverInfo(), (e: unknown) => e instanceof RequestRejectedError);
      assert.equal(h2.seen[0]?.[":scheme"], "https");
      assert.equal(h2.seen[0]?.["authorization"], "Bearer t");
      await assert.rejects(untrusted.serverInfo(), (e: unknown) => {
        assert.ok(e instanceof ConnectionLostError, String(e));
        assert.match(e.message, /self.signed|certificate/i);
        return true;
      });
      assert.equal(h2.seen.length, 1);
    } finally {
      trusted.close();
      untrusted.close();
      await h2.close();
    }
  });

  test("output encoding: strings as is, other values as JSON", () => {
    assert.equal(encodeOutput("x"), "x");
    assert.equal(encodeOutput(undefined), "");
    assert.equal(encodeOutput({ a: 1, b: [true] }), '{"a":1,"b":[true]}');
    assert.equal(encodeOutput(12n), '"12"');
  });
});

describe("stream loss", () => {
  test("losing the server aborts handlers and raises ConnectionLostError", async () => {
    // Without a journal the run cannot be reattached (reattach.test.ts covers the journaled case).
    const own = await startForgeServer(
      ["--backend", "scripted", "--script", join(scriptDir, "script.json"), "--shutdown-grace", "0", "--journal", "none"],
      60_000,
    );
    const lossClient = createForgeClient({ address: own.address });
    try {
      let handlerAbort: Promise<unknown> | undefined;
      const wf = weatherWorkflow("ts_stream_loss", async (_args, { signal }) => {
        handlerAbort = aborted(signal);
        own.kill();
        await sleep(30_000, undefined, { signal });
        return "late";
      });
      const err = await lossClient.run(wf, "What's the weather in Paris?").then(
        () => assert.fail("should fail"),
        (e: unknown) => e,
      );
      assert.ok(err instanceof ConnectionLostError, String(err));
      assert.ok((await handlerAbort) instanceof DOMException);
    } finally {
      lossClient.close();
      await own.stop();
    }
  });
});

describe("server limits", () => {
  test("a final transcript the server omits for its message size limit is rebuilt from message_appended", async () => {
    // Two 160,000-character tool results: each message fits the 300,000-byte
    // limit, the final run_completed with the whole transcript does not, so
    // the server sends it without the transcript (transcript_omitted).
    const own = await startForgeServer(
      ["--backend", "scripted", "--script", join(scriptDir, "script.json"), "--max-message-bytes", "300000"],
      60_000,
    );
    const limitClient = createForgeClient({ address: own.address });
    try {
      const big = "sunny and mild, ".repeat(10_000);
      const wf = weatherWorkflow("ts_big_transcript", async ({ city }) => `${city}: ${big}`);
      const appended: Message[] = [];
      const result = await limitClient.run(wf, "What's the weather in Paris and Oslo?", {
        priorMessages: [{ role: "user", content: "Earlier: hello" }],
        onEvent: (e) => {
          if (e.type === "message_appended") appended.push(e.message);
        },
      });
      assert.equal(result.terminalTool, "report");
      const bytes = appended.reduce((n, m) => n + Buffer.byteLength(m.content), 0);
      assert.ok(bytes > 300_000, `the messages hold ${bytes} bytes: the transcript would fit the limit`);
      // Rebuilt from the prior message the client sent and the events.
      assert.equal(result.transcript.length, 1 + appended.length);
      assert.equal(result.transcript[0]?.content, "Earlier: hello");
      assert.deepEqual(
        result.transcript.slice(1).map((m) => [m.type, m.content]),
        appended.map((m) => [m.type, m.content]),
      );
      assert.ok(
        result.transcript.some((m) => m.content.includes(`Oslo: ${big}`)),
        "the transcript lacks the large tool result",
      );
    } finally {
      limitClient.close();
      await own.stop();
    }
  });

  test("a server shutting down ends the run in-band with ShuttingDownError and the transcript", async () => {
    const own = await startForgeServer(
      ["--backend", "scripted", "--script", join(scriptDir, "script.json"), "--shutdown-grace", "0.5", "--journal", "none"],
      60_000,
    );
    const shutdownClient = createForgeClient({ address: own.address });
    try {
      let handlerAbort: Promise<unknown> | undefined;
      const wf = weatherWorkflow("ts_shutdown", async (_args, { signal }) => {
        handlerAbort = aborted(signal);
        // The server drains for 0.5 s, then ends the run still waiting on this call.
        own.process.kill("SIGTERM");
        await sleep(20_000, undefined, { signal });
        return "late";
      });
      const err = await shutdownClient.run(wf, "What's the weather in Paris?").then(
        () => assert.fail("the run should have failed"),
        (e: unknown) => e,
      );
      assert.ok(err instanceof ShuttingDownError, `${String(err)}\n${own.log()}`);
      assert.ok(err instanceof RunFailedError);
      assert.equal(err.reason, "SHUTTING_DOWN");
      assert.ok(err.transcript.length > 0, "the error carries no transcript");
      assert.ok((await handlerAbort) instanceof DOMException);
    } finally {
      shutdownClient.close();
      await own.stop();
    }
  });
});
