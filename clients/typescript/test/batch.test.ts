/**
 * Event batches and left-out event kinds (StartRun.events) against the real
 * forge-server (scripted backend). The client reaches the server through a
 * TCP proxy written here that reads the server's HTTP/2 DATA frames, so each
 * test sees what came over the wire (which messages were EventBatches, which
 * event kinds, their seqs) next to what the SDK delivered: with batches every
 * event must reach the consumer once and in seq order, and every tool call,
 * batched or not, must run; with `omitEvents: ["message_appended"]` none is
 * sent or delivered and the run still ends with its whole transcript.
 */

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { type Server, type Socket, connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
  type ForgeClient,
  type ForgeEvent,
  type OmittableEvent,
  createForgeClient,
  workflow,
} from "@forge-sidecar/client";
import { type RunningServer, startForgeServer } from "./helpers.js";

/** Tool round trips per run: steps 1..STEPS-1, then the terminal `finish`. */
const STEPS = 30;
const steps = (): unknown[] => [
  ...Array.from({ length: STEPS - 1 }, (_, i) => ({ tool_calls: [{ name: "step", args: { i: i + 1 } }] })),
  { tool_calls: [{ name: "finish", args: {} }] },
];
const bigSteps = (): unknown[] => [
  { tool_calls: [{ name: "step", args: { i: 1 } }] },
  { tool_calls: [{ name: "step", args: { i: 2 } }] },
  { tool_calls: [{ name: "finish", args: {} }] },
];
const SCRIPTS: Record<string, unknown[]> = {
  ts_batch: steps(),
  ts_batch_omit: steps(),
  ts_batch_big_events: bigSteps(),
  ts_batch_big_quiet: bigSteps(),
};

/** `step` records each i it gets (and answers `output(i)`); `finish` ends the run. */
function stepsWorkflow(name: string, ran: number[], output: (i: number) => string = (i) => `ok ${i}`) {
  return workflow(name, "Call step until done, then finish.")
    .tool(
      "step",
      "One step.",
      { type: "object", properties: { i: { type: "integer" } }, required: ["i"] },
      async (args: unknown) => {
        const { i } = args as { i: number };
        ran.push(i);
        return output(i);
      },
    )
    .tool("finish", "Finish.", { type: "object", properties: {} }, async () => "done")
    .terminal("finish");
}

// ── What the server sent, read off the wire ────────────────────────────────

/** RunResponse's oneof fields by number (proto/forge/v1/forge_service.proto), as the SDK's event types. */
const KINDS: Record<number, string> = {
  1: "run_started",
  2: "chunk",
  3: "tool_call_started",
  4: "message_appended",
  5: "run_completed",
  6: "run_failed",
  7: "compacted",
  8: "queued",
  9: "tool_call_cancelled",
  10: "approval_requested",
  11: "tool_output_screened",
};
const BATCH_FIELD = 12;
const SEQ_FIELD = 20;

/** One server event as it came: its kind, its seq, and a message_appended's index. */
interface WireEvent {
  kind: string;
  seq: number;
  index?: number;
}

/** The server's messages on a Run stream: each a list of events (several for an EventBatch). */
interface Wire {
  messages: Array<{ batch: boolean; events: WireEvent[] }>;
}

/** Protobuf wire format, just enough for RunResponse: the fields of one message. */
function fields(buf: Buffer): Array<{ field: number; varint?: number; bytes?: Buffer }> {
  const out: Array<{ field: number; varint?: number; bytes?: Buffer }> = [];
  let pos = 0;
  const varint = (): number => {
    let value = 0;
    let shift = 0;
    for (;;) {
      const byte = buf[pos++];
      assert.ok(byte !== undefined, "truncated varint");
      value += (byte & 0x7f) * 2 ** shift;
      if ((byte & 0x80) === 0) return value;
      shift += 7;
    }
  };
  while (pos < buf.length) {
    const tag = varint();
    const field = Math.floor(tag / 8);
    const wireType = tag & 7;
    if (wireType === 0) {
      out.push({ field, varint: varint() });
    } else if (wireType === 2) {
      const size = varint();
      out.push({ field, bytes: buf.subarray(pos, pos + size) });
      pos += size;
    } else if (wireType === 1) {
      pos += 8;
    } else if (wireType === 5) {
      pos += 4;
    } else {
      assert.fail(`unexpected wire type ${wireType}`);
    }
  }
  return out;
}

/** One RunResponse's events: itself, or an EventBatch's (each with its own seq). */
function wireEvents(payload: Buffer): { batch: boolean; events: WireEvent[] } {
  const top = fields(payload);
  const batch = top.find((f) => f.field === BATCH_FIELD);
  if (batch?.bytes !== undefined) {
    const events = fields(batch.bytes)
      .filter((f) => f.field === 1 && f.bytes !== undefined)
      .map((f) => wireEvents(f.bytes as Buffer).events[0] as WireEvent);
    return { batch: true, events };
  }
  const seq = top.find((f) => f.field === SEQ_FIELD)?.varint ?? 0;
  const kind = top.find((f) => KINDS[f.field] !== undefined);
  assert.ok(kind !== undefined, "a RunResponse with no known kind");
  const event: WireEvent = { kind: KINDS[kind.field] as string, seq };
  if (kind.field === 4 && kind.bytes !== undefined) {
    event.index = fields(kind.bytes).find((f) => f.field === 2)?.varint ?? 0;
  }
  return { batch: false, events: [event] };
}

/**
 * A TCP proxy to the server that reads the server-to-client bytes as HTTP/2
 * frames (3-byte length, type, flags, 4-byte stream id, payload) and each
 * stream's DATA as gRPC messages (1-byte flag, 4-byte length, the message).
 * Every stream that carries messages is a Run stream here (the tests make no
 * other call through it).
 */
interface TapProxy {
  address: string;
  /** The Run streams seen so far, by HTTP/2 stream id. */
  streams: Map<number, Wire>;
  close(): Promise<void>;
}

async function startTapProxy(target: string): Promise<TapProxy> {
  const sockets = new Set<Socket>();
  const streams = new Map<number, Wire>();
  const server: Server = createServer((downstream) => {
    const [host, port] = target.split(":");
    const upstream = connect(Number(port), host);
    for (const socket of [downstream, upstream]) {
      sockets.add(socket);
      socket.once("close", () => sockets.delete(socket));
      socket.on("error", () => socket.destroy());
    }
    downstream.once("close", () => upstream.destroy());
    upstream.once("close", () => downstream.destroy());
    downstream.pipe(upstream);
    // Connection ids are per connection; a proxy connection's streams get their own range.
    const base = streams.size * 1_000_000;
    let frames = Buffer.alloc(0);
    const grpc = new Map<number, Buffer>();
    upstream.on("data", (chunk: Buffer) => {
      downstream.write(chunk);
      frames = Buffer.concat([frames, chunk]);
      while (frames.length >= 9) {
        const size = 9 + frames.readUIntBE(0, 3);
        if (frames.length < size) break;
        const type = frames[3];
        const flags = frames[4] ?? 0;
        const id = frames.readUInt32BE(5) & 0x7fffffff;
        if (type === 0 && id !== 0) {
          let data = frames.subarray(9, size);
          if ((flags & 0x8) !== 0) {
            // PADDED: a pad-length byte first, that many bytes of padding last.
            data = data.subarray(1, data.length - (data[0] ?? 0));
          }
          let pending = Buffer.concat([grpc.get(id) ?? Buffer.alloc(0), data]);
          while (pending.length >= 5 && pending.length >= 5 + pending.readUInt32BE(1)) {
            const end = 5 + pending.readUInt32BE(1);
            let wire = streams.get(base + id);
            if (wire === undefined) {
              wire = { messages: [] };
              streams.set(base + id, wire);
            }
            wire.messages.push(wireEvents(pending.subarray(5, end)));
            pending = pending.subarray(end);
          }
          grpc.set(id, pending);
        }
        frames = frames.subarray(size);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  assert.ok(address !== null && typeof address === "object");
  return {
    address: `127.0.0.1:${address.port}`,
    streams,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// ── The tests ──────────────────────────────────────────────────────────────

let scriptDir: string;
let server: RunningServer;
let proxy: TapProxy;
let client: ForgeClient;

before(async () => {
  scriptDir = mkdtempSync(join(tmpdir(), "forge-ts-batch-"));
  const script = join(scriptDir, "script.json");
  writeFileSync(script, JSON.stringify(SCRIPTS));
  server = await startForgeServer(["--backend", "scripted", "--script", script], 60_000);
  proxy = await startTapProxy(server.address);
  client = createForgeClient({ address: proxy.address });
});

after(async () => {
  client?.close();
  await proxy?.close();
  await server?.stop();
  rmSync(scriptDir, { recursive: true, force: true });
});

/** Run `name` through the proxy: what the SDK delivered, what the tools got, and the stream's wire messages. */
async function runThroughTap(name: string, omitEvents?: OmittableEvent[]) {
  const before = new Set(proxy.streams.keys());
  const ran: number[] = [];
  const events: ForgeEvent[] = [];
  const result = await client.run(stepsWorkflow(name, ran), "go", {
    options: { maxIterations: STEPS + 5, toolTimeoutMs: 10_000 },
    omitEvents,
    onEvent: (event) => {
      events.push(event);
    },
  });
  const opened = [...proxy.streams.entries()].filter(([id]) => !before.has(id));
  assert.equal(opened.length, 1, "one Run stream per run");
  const wire = (opened[0] as [number, Wire])[1];
  return { result, ran, events, wire };
}

/** The delivered events the server sends (not those the SDK makes itself), as their types. */
function serverKinds(events: readonly ForgeEvent[]): string[] {
  return events.map((e) => e.type).filter((t) => t !== "tool_call_finished");
}

describe("event batches (StartRun.events.batch)", () => {
  test("the SDK asks for batches and delivers every batched event once, in seq order; every tool runs", async () => {
    const { result, ran, events, wire } = await runThroughTap("ts_batch");
    const batches = wire.messages.filter((m) => m.batch);
    assert.ok(
      batches.length > 0 && batches.some((b) => b.events.length > 1),
      `no EventBatch came over the wire (${wire.messages.length} messages): the SDK did not ask for batches`,
    );
    const sent = wire.messages.flatMap((m) => m.events);
    // The server's side: seqs 1, 2, 3... with no gaps, a batch's events among them.
    assert.deepEqual(
      sent.map((e) => e.seq),
      sent.map((_, i) => i + 1),
    );
    // The SDK's side: exactly those events, in that order, none twice.
    assert.deepEqual(serverKinds(events), [...sent.map((e) => e.kind)]);
    const appended = events.filter((e) => e.type === "message_appended");
    assert.deepEqual(
      appended.map((e) => e.index),
      appended.map((_, i) => i),
      "message_appended indices 0..n-1 without gaps",
    );
    assert.deepEqual(
      appended.map((e) => e.index),
      sent.filter((e) => e.kind === "message_appended").map((e) => e.index),
    );
    // Every call ran once, in order, batched or not, and the run completed.
    assert.deepEqual(
      ran,
      Array.from({ length: STEPS - 1 }, (_, i) => i + 1),
    );
    assert.equal(events.filter((e) => e.type === "tool_call_started").length, STEPS);
    assert.equal(events.filter((e) => e.type === "tool_call_finished").length, STEPS);
    assert.equal(result.terminalTool, "finish");
    assert.equal(result.value, "done");
    assert.equal(result.iterations, STEPS);
    assert.equal(events.at(-1)?.type, "run_completed");
    // The transcript the SDK returns holds every message appended.
    assert.equal(result.transcript.length, appended.length);
  });
});

describe("leaving out event kinds (StartRun.events.omit)", () => {
  test('omitEvents: ["message_appended"]: none is sent or delivered; the run completes with its transcript', async () => {
    const { result, ran, events, wire } = await runThroughTap("ts_batch_omit", ["message_appended"]);
    const sent = wire.messages.flatMap((m) => m.events);
    assert.ok(sent.length > 0);
    assert.deepEqual(
      sent.filter((e) => e.kind === "message_appended"),
      [],
      "the server sent message_appended: the SDK did not ask to leave them out",
    );
    assert.deepEqual(
      events.filter((e) => e.type === "message_appended"),
      [],
    );
    assert.deepEqual(serverKinds(events), [...sent.map((e) => e.kind)]);
    assert.deepEqual(
      ran,
      Array.from({ length: STEPS - 1 }, (_, i) => i + 1),
    );
    assert.equal(result.value, "done");
    assert.equal(result.iterations, STEPS);
    // The transcript comes from run_completed: the user's request, then per
    // round trip the model's call and the tool's result.
    const tools = result.transcript.filter((m) => m.role === "tool");
    assert.equal(tools.length, STEPS);
    assert.deepEqual(
      tools.map((m) => m.content),
      [...Array.from({ length: STEPS - 1 }, (_, i) => `ok ${i + 1}`), "done"],
    );
    assert.ok(result.transcript.some((m) => m.role === "user" && m.content === "go"));
  });

  test("an event kind that cannot be left out is refused before anything is sent", () => {
    assert.throws(
      () =>
        client.start(stepsWorkflow("ts_batch_omit", []), "go", {
          omitEvents: ["tool_call_started" as OmittableEvent],
        }),
      (err: unknown) => err instanceof TypeError && /tool_call_started/.test(err.message),
    );
  });
});

describe("client.run() without onEvent", () => {
  test("a final transcript the server omits for size is still rebuilt from the message_appended it sent", async () => {
    // Two 160,000-character tool results: each message fits the 300,000-byte
    // limit, run_completed with the whole transcript does not
    // (transcript_omitted). Without onEvent the SDK queues no events, but
    // must still keep the messages for the transcript.
    const own = await startForgeServer(
      ["--backend", "scripted", "--script", join(scriptDir, "script.json"), "--max-message-bytes", "300000"],
      60_000,
    );
    const limited = createForgeClient({ address: own.address });
    try {
      const big = (i: number): string => `${i}: ${"sunny and mild, ".repeat(10_000)}`;
      const prior = [{ role: "user" as const, content: "Earlier: hello" }];
      const appended: string[] = [];
      const seen = await limited.run(stepsWorkflow("ts_batch_big_events", [], big), "go", {
        priorMessages: prior,
        onEvent: (e) => {
          if (e.type === "message_appended") appended.push(`${e.message.type}|${e.message.content}`);
        },
      });
      const ran: number[] = [];
      const quiet = await limited.run(stepsWorkflow("ts_batch_big_quiet", ran, big), "go", { priorMessages: prior });
      assert.deepEqual(ran, [1, 2]);
      assert.equal(quiet.value, "done");
      assert.ok(
        appended.reduce((n, m) => n + m.length, 0) > 300_000,
        "the messages fit the limit: the transcript was not omitted",
      );
      const view = (r: typeof quiet): string[] => r.transcript.map((m) => `${m.type}|${m.content}`);
      // Rebuilt from the prior message and the messages appended, as with onEvent.
      assert.deepEqual(view(seen), [`unspecified|Earlier: hello`, ...appended]);
      assert.deepEqual(
        view(quiet).map((m) => m.replace("ts_batch_big_quiet", "ts_batch_big_events")),
        view(seen),
      );
      assert.ok(view(quiet).some((m) => m.includes(big(2))));
    } finally {
      limited.close();
      await own.stop();
    }
  });
});
