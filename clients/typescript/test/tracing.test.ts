/**
 * One trace from the caller through the server into the TypeScript SDK's tool
 * functions (issue 35, docs/tracing.md). This test process is the caller,
 * with an OpenTelemetry SDK tracer provider, the AsyncLocalStorage context
 * manager and an in-memory exporter; the real forge-server (scripted backend)
 * runs with tracing on (OTEL_* variables) and exports OTLP/gRPC to a real
 * receiver, tests/otlp_receiver.py, run by test/fixtures/otlp_dump.py, which
 * prints each span it receives as a JSON line. A second server without
 * tracing checks the fallback: tool spans under the caller's span.
 */

import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { type SpanContext, SpanKind, SpanStatusCode, context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { createForgeClient, workflow } from "@forge-sidecar/client";
import { z } from "zod";
import { PYTHON, REPO_ROOT, type RunningServer, startForgeServer } from "./helpers.js";

const SCRIPTS = {
  ts_traced: [
    { tool_calls: [{ name: "find_shelf", args: { aisle: 7 } }] },
    { tool_calls: [{ name: "label_shelf", args: { shelf: "7-B" } }] },
    { tool_calls: [{ name: "finish", args: { summary: "shelf 7-B found, not labelled" } }] },
  ],
};

class ShelfError extends Error {
  override name = "ShelfError";
}

const shelving = workflow("ts_traced", "Find a shelf, label it, then finish.")
  .tool("find_shelf", "Find a free shelf in an aisle.", z.object({ aisle: z.number() }), async (a) => `shelf ${a.aisle}-B`)
  .tool("label_shelf", "Label a shelf.", z.object({ shelf: z.string() }), async () => {
    throw new ShelfError("the label printer is out of tape");
  })
  .tool("finish", "Finish.", z.object({ summary: z.string() }), async (a) => a.summary)
  .require("find_shelf")
  .terminal("finish");

/** A span as tests/otlp_receiver.py flattens it (hex ids). */
interface ReceivedSpan {
  name: string;
  trace_id: string;
  span_id: string;
  parent_span_id: string;
  kind: number;
  attributes: Record<string, unknown>;
}

const OTLP_KIND_INTERNAL = 1;

const exporter = new InMemorySpanExporter();
let scriptDir: string;
let receiver: ChildProcess;
const received: ReceivedSpan[] = [];
let traced: RunningServer;
let untraced: RunningServer;

/** Starts the receiver and resolves with its endpoint. */
async function startReceiver(): Promise<string> {
  receiver = spawn(PYTHON, [join(REPO_ROOT, "clients", "typescript", "test", "fixtures", "otlp_dump.py")], {
    cwd: REPO_ROOT,
    env: { ...process.env, PYTHONPATH: REPO_ROOT },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const lines = createInterface({ input: receiver.stdout! });
  return await new Promise((resolve, reject) => {
    receiver.once("exit", (code) => reject(new Error(`the OTLP receiver exited (${code})`)));
    let endpoint: string | undefined;
    lines.on("line", (line) => {
      if (endpoint === undefined) {
        endpoint = line;
        resolve(line);
      } else {
        received.push(JSON.parse(line) as ReceivedSpan);
      }
    });
  });
}

before(async () => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }));
  scriptDir = mkdtempSync(join(tmpdir(), "forge-ts-trace-"));
  const script = join(scriptDir, "script.json");
  writeFileSync(script, JSON.stringify(SCRIPTS));
  untraced = await startForgeServer(["--backend", "scripted", "--script", script], 60_000);
  const endpoint = await startReceiver();
  // The child inherits these (startForgeServer passes the environment on).
  process.env["OTEL_EXPORTER_OTLP_ENDPOINT"] = endpoint;
  process.env["OTEL_SERVICE_NAME"] = "forge-under-ts-test";
  process.env["OTEL_BSP_SCHEDULE_DELAY"] = "100";
  try {
    traced = await startForgeServer(["--backend", "scripted", "--script", script], 60_000);
  } finally {
    delete process.env["OTEL_EXPORTER_OTLP_ENDPOINT"];
    delete process.env["OTEL_SERVICE_NAME"];
    delete process.env["OTEL_BSP_SCHEDULE_DELAY"];
  }
});

after(async () => {
  await untraced?.stop();
  await traced?.stop();
  receiver?.stdin?.end();
  rmSync(scriptDir, { recursive: true, force: true });
});

/** Runs ts_traced on `address` inside the caller's span; returns that span's context. */
async function runShelving(address: string): Promise<SpanContext> {
  const client = createForgeClient({ address });
  try {
    return await trace.getTracer("caller").startActiveSpan("caller", async (caller) => {
      try {
        const result = await client.run(shelving, "Shelve the crate in aisle 7.");
        assert.equal(result.value, "shelf 7-B found, not labelled");
      } finally {
        caller.end();
      }
      return caller.spanContext();
    });
  } finally {
    client.close();
  }
}

/** The SDK's tool spans in the caller's trace, by call id, checked for name, kind and attributes. */
function toolSpans(caller: SpanContext): Map<string, ReadableSpan> {
  const byCall = new Map<string, ReadableSpan>();
  for (const span of exporter.getFinishedSpans()) {
    if (span.spanContext().traceId !== caller.traceId || span.name === "caller") continue;
    const a = span.attributes;
    assert.equal(span.instrumentationScope.name, "forge_client");
    assert.equal(span.kind, SpanKind.INTERNAL);
    assert.equal(a["gen_ai.operation.name"], "execute_tool");
    assert.equal(a["gen_ai.tool.type"], "function");
    assert.equal(span.name, `execute_tool ${String(a["gen_ai.tool.name"])}`);
    byCall.set(String(a["gen_ai.tool.call.id"]), span);
  }
  assert.deepEqual(
    [...byCall.values()].map((s) => s.attributes["gen_ai.tool.name"]).sort(),
    ["find_shelf", "finish", "label_shelf"],
  );
  return byCall;
}

/** The failing tool's span is an error named by the error's type; the others are unset. */
function checkOutcome(span: ReadableSpan): void {
  if (span.attributes["gen_ai.tool.name"] === "label_shelf") {
    assert.equal(span.status.code, SpanStatusCode.ERROR);
    assert.equal(span.attributes["error.type"], "ShelfError");
    assert.ok(span.events.some((e) => e.name === "exception"));
  } else {
    assert.equal(span.status.code, SpanStatusCode.UNSET);
    assert.equal(span.attributes["error.type"], undefined);
  }
}

describe("tracing", () => {
  test("without server tracing the tool spans nest under the caller's span", async () => {
    exporter.reset();
    const caller = await runShelving(untraced.address);
    for (const span of toolSpans(caller).values()) {
      assert.equal(span.parentSpanContext?.spanId, caller.spanId, span.name);
      checkOutcome(span);
    }
  });

  test("one trace runs from the caller through the server's run and tool spans into each tool", async () => {
    exporter.reset();
    const caller = await runShelving(traced.address);
    const sdkSpans = toolSpans(caller);
    const findRun = () => received.find((s) => s.name === "invoke_agent ts_traced" && s.trace_id === caller.traceId);
    // The run span ends last: once it is in, so are the others.
    for (let i = 0; i < 600 && findRun() === undefined; i++) await sleep(50);
    const run = findRun();
    assert.ok(run, `no run span in the caller's trace; received ${JSON.stringify(received.map((s) => s.name))}`);
    assert.equal(run.parent_span_id, caller.spanId, "the caller's span is the run span's parent");
    const serverSpans = received.filter((s) => s.trace_id === caller.traceId && s !== run);
    assert.equal(serverSpans.filter((s) => s.name.startsWith("chat ")).length, 3, "one chat span per model call");
    for (const s of serverSpans) {
      assert.equal(s.parent_span_id, run.span_id, `${s.name} is a child of the run span`);
    }
    for (const [callId, span] of sdkSpans) {
      const parent = serverSpans.find(
        (s) => s.kind === OTLP_KIND_INTERNAL && s.attributes["gen_ai.tool.call.id"] === callId,
      );
      assert.ok(parent, `a server execute_tool span for ${callId}`);
      assert.equal(parent.name, span.name);
      assert.equal(span.parentSpanContext?.spanId, parent.span_id, `${span.name}: the server's span is the parent`);
      checkOutcome(span);
    }
  });
});
