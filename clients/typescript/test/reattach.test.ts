/**
 * Automatic reattach against real forge-server processes (scripted backend,
 * SQLite journal): a TCP proxy written here (real sockets) is cut mid-run, a
 * server is SIGKILLed and restarted on its port with the same journal and
 * replica id, and a server without a journal still ends the run with
 * ConnectionLostError. Each tool must run exactly once per call id and no
 * event may reach the consumer twice. A stream that breaks before
 * run_started is made with a proxy that withholds one direction's HTTP/2
 * stream frames on a connection before the cut: the start reached the server
 * (the SDK reattaches by the run id it chose) or it never did (the reattach
 * finds no run, the SDK starts it again). And StartRun.session_id carries a
 * conversation to the next run.
 */

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { type Server, type Socket, connect, createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import {
  ConnectionLostError,
  type ForgeClient,
  type ForgeEvent,
  RequestRejectedError,
  type RunResult,
  type RunStream,
  WorkflowCancelledError,
  createForgeClient,
  workflow,
} from "@forge-sidecar/client";
import { z } from "zod";
import { type RunningServer, freePort, startForgeServer } from "./helpers.js";

const call = (name: string, args: Record<string, unknown>) => ({ tool_calls: [{ name, args }] });
const paris = call("get_weather", { city: "Paris" });
const oslo = call("get_weather", { city: "Oslo" });
const report = call("report", { city: "Paris", weather: "sunny" });

const NAMES = [
  "ts_reattach_proxy",
  "ts_reattach_restart",
  "ts_reattach_no_journal",
  "ts_reattach_off",
  "ts_reattach_deadline",
  "ts_reattach_not_found",
  "ts_reattach_leave",
  "ts_reattach_close",
  "ts_reattach_prestart",
  "ts_reattach_lost_start",
  "ts_reattach_cancel",
  "ts_session",
];
const SCRIPTS: Record<string, unknown[]> = Object.fromEntries(NAMES.map((n) => [n, [paris, oslo, report]]));

const weatherArgs = z.object({ city: z.string().describe("City name") });
const reportArgs = z.object({ city: z.string(), weather: z.string() });

/** How each handler call went: by call id, how often it ran and whether its signal was aborted when it returned. */
interface Calls {
  runs: Map<string, number>;
  aborted: Map<string, boolean>;
}

type Hook = (city: string, signal: AbortSignal) => Promise<void> | void;

/** get_weather (required) + report (terminal); `hook` runs inside get_weather before it answers. */
function weatherWorkflow(name: string, calls: Calls, hook: Hook = () => undefined) {
  const count = (callId: string, signal: AbortSignal): void => {
    calls.runs.set(callId, (calls.runs.get(callId) ?? 0) + 1);
    calls.aborted.set(callId, signal.aborted);
  };
  return workflow(name, "Look up the weather in Paris and Oslo, then report it.")
    .tool("get_weather", "Get the current weather for a city", weatherArgs, async ({ city }, { signal, callId }) => {
      calls.runs.set(callId, (calls.runs.get(callId) ?? 0) + 1);
      await hook(city, signal);
      calls.aborted.set(callId, signal.aborted);
      return `sunny in ${city}`;
    })
    .tool("report", "Report the weather. Ends the task.", reportArgs, async (a, { signal, callId }) => {
      count(callId, signal);
      return { text: `${a.city}: ${a.weather}` };
    })
    .require("get_weather")
    .terminal("report");
}

function newCalls(): Calls {
  return { runs: new Map(), aborted: new Map() };
}

/** Settles when `signal` aborts (at once if it has). */
function abortedSignal(signal: AbortSignal): Promise<void> {
  if (signal.aborted) {
    return Promise.resolve();
  }
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(), { once: true }));
}

/** `promise` (undefined: nothing to wait for), or a failure naming `what` after `timeoutMs`. */
async function within(promise: Promise<void> | undefined, what: string, timeoutMs = 30_000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), timeoutMs);
  });
  try {
    await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Poll `check` until it holds; fail with `what` after `timeoutMs`. */
async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) {
      assert.fail(`timed out waiting for ${what}`);
    }
    await sleep(50);
  }
}

/** How many runs of `workflowName` the server's log says it started. */
function startsLogged(server: RunningServer, workflowName: string): number {
  return server.log().split(`started: workflow='${workflowName}'`).length - 1;
}

/**
 * A TCP proxy to a forge-server: cut() destroys every connection; refuse
 * drops new ones at once; withhold makes the next connection forward only the
 * HTTP/2 frames of stream 0 in one direction (the connection is set up, no
 * RPC message gets through that way).
 */
interface Proxy {
  address: string;
  /** Where new connections go. */
  target: string;
  refuse: boolean;
  /** "replies": server to client, "requests": client to server; for the next connection only. */
  withhold: "replies" | "requests" | undefined;
  /** Connections accepted so far. */
  accepted: number;
  cut(): void;
  close(): Promise<void>;
}

async function startProxy(target: string): Promise<Proxy> {
  const sockets = new Set<Socket>();
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  };
  const proxy: Proxy = {
    address: "",
    target,
    refuse: false,
    withhold: undefined,
    accepted: 0,
    cut: () => {
      for (const socket of sockets) socket.destroy();
      sockets.clear();
    },
    close: async () => {
      proxy.cut();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server: Server = createServer((downstream) => {
    proxy.accepted += 1;
    track(downstream);
    if (proxy.refuse) {
      downstream.destroy();
      return;
    }
    const [host, port] = proxy.target.split(":");
    const upstream = connect(Number(port), host);
    track(upstream);
    downstream.once("close", () => upstream.destroy());
    upstream.once("close", () => downstream.destroy());
    const withhold = proxy.withhold;
    proxy.withhold = undefined;
    if (withhold === "requests") {
      stream0Only(downstream, upstream, true);
    } else {
      downstream.pipe(upstream);
    }
    if (withhold === "replies") {
      stream0Only(upstream, downstream, false);
    } else {
      upstream.pipe(downstream);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  assert.ok(address !== null && typeof address === "object");
  proxy.address = `127.0.0.1:${address.port}`;
  return proxy;
}

/**
 * Forward from `from` to `to` only the HTTP/2 frames of stream 0 (SETTINGS,
 * PING, WINDOW_UPDATE, GOAWAY of the connection): every frame of a stream
 * (HEADERS, DATA...) is dropped. `preface`: `from` is the client, whose
 * 24-byte connection preface ("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") comes
 * first. A frame: 3-byte length, 1 type, 1 flags, 4-byte stream id (high bit
 * reserved), then the payload.
 */
function stream0Only(from: Socket, to: Socket, preface: boolean): void {
  let buffered = Buffer.alloc(0);
  let prefaceLeft = preface ? 24 : 0;
  from.on("data", (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    if (prefaceLeft > 0) {
      const n = Math.min(prefaceLeft, buffered.length);
      to.write(buffered.subarray(0, n));
      buffered = buffered.subarray(n);
      prefaceLeft -= n;
    }
    while (prefaceLeft === 0 && buffered.length >= 9) {
      const size = 9 + buffered.readUIntBE(0, 3);
      if (buffered.length < size) {
        break;
      }
      if ((buffered.readUInt32BE(5) & 0x7fffffff) === 0) {
        to.write(buffered.subarray(0, size));
      }
      buffered = buffered.subarray(size);
    }
  });
}

/** Iterate the run, keeping every event (`onEvent` sees each first); the result or the error. */
async function drain<V>(
  stream: RunStream<V>,
  events: ForgeEvent<V>[],
  onEvent: (e: ForgeEvent<V>) => void = () => undefined,
): Promise<unknown> {
  try {
    for await (const event of stream) {
      events.push(event);
      onEvent(event);
    }
    return await stream.result;
  } catch (err) {
    return err;
  }
}

/** The run's result (drain() gave no error), else fail with the error and the server's log. */
function completed(outcome: unknown, server: RunningServer): RunResult {
  if (outcome instanceof Error || outcome === null || typeof outcome !== "object" || !("terminalTool" in outcome)) {
    assert.fail(`the run did not complete: ${String(outcome)}\n${server.log()}`);
  }
  return outcome as RunResult;
}

/** Each event reached the consumer once: one run_started (first), each call id started and finished once, the transcript in order. */
function assertNoDuplicates(events: ForgeEvent[]): void {
  const types = events.map((e) => e.type);
  assert.equal(types.filter((t) => t === "run_started").length, 1, `run_started twice: ${types.join(" ")}`);
  assert.equal(types[0], "run_started", `the first event: ${types.join(" ")}`);
  for (const type of ["tool_call_started", "tool_call_finished"] as const) {
    const ids = events.flatMap((e) => (e.type === type ? [e.callId] : []));
    assert.equal(new Set(ids).size, ids.length, `${type} twice for a call: ${ids.join(" ")}`);
  }
  const indices = events.flatMap((e) => (e.type === "message_appended" ? [e.index] : []));
  assert.deepEqual(
    indices,
    indices.map((_, i) => (indices[0] ?? 0) + i),
    `message_appended indices not once each, in order: ${indices.join(" ")}`,
  );
}

/** Every handler ran exactly once per call id: get_weather twice (Paris, Oslo), report once. */
function assertRanOnce(calls: Calls, events: ForgeEvent[]): void {
  const started = events.flatMap((e) => (e.type === "tool_call_started" ? [e.callId] : []));
  assert.equal(started.length, 3, `calls started: ${started.join(" ")}`);
  assert.deepEqual([...calls.runs.keys()].sort(), [...started].sort());
  for (const [callId, runs] of calls.runs) {
    assert.equal(runs, 1, `call ${callId} ran ${runs} times`);
    assert.equal(calls.aborted.get(callId), false, `call ${callId}'s signal was aborted by the break`);
  }
}

let dir: string;
let script: string;
let journaled: RunningServer;
let unjournaled: RunningServer;

const scripted = (): string[] => ["--backend", "scripted", "--script", script, "--shutdown-grace", "0"];

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "forge-ts-reattach-"));
  script = join(dir, "script.json");
  writeFileSync(script, JSON.stringify(SCRIPTS));
  [journaled, unjournaled] = await Promise.all([
    startForgeServer(
      [...scripted(), "--journal", `sqlite:///${join(dir, "journal.db")}`, "--reattach-grace", "30"],
      60_000,
    ),
    startForgeServer([...scripted(), "--journal", "none"], 60_000),
  ]);
});

after(async () => {
  await Promise.all([journaled?.stop(), unjournaled?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

describe("dropping a reattachable run", () => {
  test("leaving the event loop early cancels the run on the server (it does not wait for a reattach)", async () => {
    const client = createForgeClient({ address: journaled.address });
    try {
      const before = (await client.serverInfo()).activeRuns;
      let handlerAbort: Promise<void> | undefined;
      const wf = weatherWorkflow("ts_reattach_leave", newCalls(), async (_city, signal) => {
        // The handler may start after the break (its signal aborted already).
        handlerAbort = abortedSignal(signal);
        await sleep(10_000, undefined, { signal }).catch(() => undefined);
      });
      const stream = client.start(wf, "Weather?");
      for await (const event of stream) {
        if (event.type === "tool_call_started") break;
      }
      await assert.rejects(stream.result, WorkflowCancelledError);
      await within(handlerAbort, "the handler's signal to abort");
      const deadline = Date.now() + 5_000;
      let active = (await client.serverInfo()).activeRuns;
      while (active > before && Date.now() < deadline) {
        await sleep(50);
        active = (await client.serverInfo()).activeRuns;
      }
      assert.equal(active, before, `the run is still active on the server\n${journaled.log()}`);
    } finally {
      client.close();
    }
  });
});

describe("closing the client during a reattachable run", () => {
  test("close() cancels the run on the server (it does not wait for a reattach)", async () => {
    const observer = createForgeClient({ address: journaled.address });
    const client = createForgeClient({ address: journaled.address });
    try {
      const before = (await observer.serverInfo()).activeRuns;
      const wf = weatherWorkflow("ts_reattach_close", newCalls(), async (_city, signal) => {
        await sleep(10_000, undefined, { signal }).catch(() => undefined);
      });
      const stream = client.start(wf, "Weather?");
      // Read by hand: leaving a for-await loop would cancel the run itself.
      const events = stream[Symbol.asyncIterator]();
      for (let next = await events.next(); !next.done; next = await events.next()) {
        if (next.value.type === "tool_call_started") break;
      }
      await client.close();
      await assert.rejects(stream.result, ConnectionLostError);
      // The server holds a run whose stream merely broke for its reattach
      // grace (30 s here); a cancelled one ends now.
      const deadline = Date.now() + 5_000;
      let active = (await observer.serverInfo()).activeRuns;
      while (active > before && Date.now() < deadline) {
        await sleep(50);
        active = (await observer.serverInfo()).activeRuns;
      }
      assert.equal(active, before, `the run is still active on the server\n${journaled.log()}`);
    } finally {
      await client.close();
      await observer.close();
    }
  });
});

describe("reattach through a proxy that is cut", () => {
  let proxy: Proxy;
  let client: ForgeClient;

  before(async () => {
    proxy = await startProxy(journaled.address);
    client = createForgeClient({ address: proxy.address });
  });

  after(async () => {
    client?.close();
    await proxy?.close();
  });

  test("cut while a call runs and after a result was sent: the run completes, each call runs once, no event twice", async () => {
    const calls = newCalls();
    let cut = false;
    const wf = weatherWorkflow("ts_reattach_proxy", calls, async (city) => {
      if (city === "Paris" && !cut) {
        // The call is in flight: the connection goes, the handler goes on.
        cut = true;
        proxy.cut();
        await sleep(300);
      }
    });
    // A result that never arrives fails the test after the tool timeout instead of hanging it.
    const stream = client.start(wf, "Weather in Paris and Oslo?", { options: { toolTimeoutMs: 20_000 } });
    const events: ForgeEvent[] = [];
    let cutAgain = false;
    const outcome = await drain(stream, events, (e) => {
      // Oslo's result is on its way: cut again.
      if (e.type === "tool_call_finished" && e.output === "sunny in Oslo" && !cutAgain) {
        cutAgain = true;
        proxy.cut();
      }
    });
    const result = completed(outcome, journaled);
    assert.equal(result.terminalTool, "report");
    assertNoDuplicates(events);
    assertRanOnce(calls, events);
    const start = events[0];
    assert.ok(start?.type === "run_started" && start.reattachGraceS === 30, JSON.stringify(start));
    assert.ok(stream.reattaches >= 2, `reattached ${stream.reattaches} times`);
    assert.ok(proxy.accepted >= 3, `${proxy.accepted} connections`);
    // Each reattach is one `reattached` event, after the events handled before the break.
    const reattached = events.flatMap((e) => (e.type === "reattached" ? [e] : []));
    assert.equal(reattached.length, stream.reattaches);
    for (const e of reattached) {
      assert.equal(e.runId, result.runId);
      assert.ok(e.afterSeq > 0 && e.attempts >= 1, JSON.stringify(e));
    }
    // The server took each result once.
    const contents = result.transcript.map((m) => m.content);
    assert.equal(contents.filter((c) => c === "sunny in Paris").length, 1, JSON.stringify(contents));
    assert.equal(contents.filter((c) => c === "sunny in Oslo").length, 1, JSON.stringify(contents));
  });

  test("with reattach: false a cut raises ConnectionLostError and aborts the handler", async () => {
    const calls = newCalls();
    let signalAborted: Promise<void> | undefined;
    const wf = weatherWorkflow("ts_reattach_off", calls, async (_city, signal) => {
      signalAborted = abortedSignal(signal);
      proxy.cut();
      await sleep(10_000, undefined, { signal }).catch(() => undefined);
    });
    const started = Date.now();
    const err = await client.run(wf, "Weather?", { reattach: false }).then(
      () => assert.fail("the run should fail"),
      (e: unknown) => e,
    );
    assert.ok(err instanceof ConnectionLostError, String(err));
    assert.equal(err.streamBreak, undefined, "the SDK tried to reattach");
    await within(signalAborted, "the handler's signal to abort");
    assert.ok(Date.now() - started < 5_000, "reattach: false must not retry");
  });

  test("no server to reattach to within reattachDeadlineMs: ConnectionLostError, handlers aborted", async () => {
    const calls = newCalls();
    let signalAborted: Promise<void> | undefined;
    const wf = weatherWorkflow("ts_reattach_deadline", calls, async (_city, signal) => {
      signalAborted = abortedSignal(signal);
      proxy.refuse = true;
      proxy.cut();
      await sleep(10_000, undefined, { signal }).catch(() => undefined);
    });
    const accepted = proxy.accepted;
    const started = Date.now();
    try {
      const err = await client.run(wf, "Weather?", { reattachDeadlineMs: 800 }).then(
        () => assert.fail("the run should fail"),
        (e: unknown) => e,
      );
      const took = Date.now() - started;
      assert.ok(err instanceof ConnectionLostError, String(err));
      assert.match(err.message, /could not be reattached/);
      await within(signalAborted, "the handler's signal to abort");
      assert.ok(took >= 800 && took < 5_000, `gave up after ${took} ms`);
      // Backoff: several tries, not a busy loop.
      const tries = proxy.accepted - accepted - 1;
      assert.ok(tries >= 3 && tries <= 20, `${tries} reattach tries in 800 ms`);
    } finally {
      proxy.refuse = false;
    }
  });

  test("a server that does not know the run (RUN_NOT_FOUND): ConnectionLostError at once", async () => {
    const calls = newCalls();
    const wf = weatherWorkflow("ts_reattach_not_found", calls, async (_city, signal) => {
      // The reattach reaches a server without the run (no journal).
      proxy.target = unjournaled.address;
      proxy.cut();
      await sleep(10_000, undefined, { signal }).catch(() => undefined);
    });
    const started = Date.now();
    try {
      const err = await client.run(wf, "Weather?").then(
        () => assert.fail("the run should fail"),
        (e: unknown) => e,
      );
      assert.ok(err instanceof ConnectionLostError, String(err));
      assert.ok(err.cause instanceof RequestRejectedError, String(err.cause));
      assert.equal(err.cause.reason, "RUN_NOT_FOUND");
      // The break is kept too.
      assert.ok(err.streamBreak instanceof ConnectionLostError, String(err.streamBreak));
      assert.ok(Date.now() - started < 5_000, "RUN_NOT_FOUND must not be retried");
    } finally {
      proxy.target = journaled.address;
    }
  });
});

describe("a break before run_started", () => {
  let proxy: Proxy;
  let direct: ForgeClient;

  before(async () => {
    proxy = await startProxy(journaled.address);
    direct = createForgeClient({ address: journaled.address });
  });

  after(async () => {
    direct?.close();
    await proxy?.close();
  });

  test("the start reached the server, nothing came back: the SDK reattaches by the run id it chose", async () => {
    // A client of its own: the withheld connection is its first.
    const client = createForgeClient({ address: proxy.address });
    try {
      const calls = newCalls();
      const wf = weatherWorkflow("ts_reattach_prestart", calls);
      proxy.withhold = "replies";
      const stream = client.start(wf, "Weather in Paris and Oslo?");
      const events: ForgeEvent[] = [];
      const outcome = drain(stream, events);
      await until("the server to start the run", () => startsLogged(journaled, "ts_reattach_prestart") === 1);
      assert.equal(events.length, 0, "nothing may reach the client before the cut");
      proxy.cut();
      const result = completed(await outcome, journaled);
      assert.equal(result.terminalTool, "report");
      assertNoDuplicates(events);
      assertRanOnce(calls, events);
      assert.match(result.runId, /^[0-9a-f]{32}$/);
      assert.equal(stream.runId, result.runId);
      const types = events.map((e) => e.type);
      // The run's own run_started (sent again by the server), then the reattach.
      assert.deepEqual(types.slice(0, 2), ["run_started", "reattached"], types.join(" "));
      assert.equal(types.filter((t) => t === "reattached").length, 1, types.join(" "));
      assert.equal(stream.reattaches, 1);
      assert.equal(startsLogged(journaled, "ts_reattach_prestart"), 1, "the run was started twice");
    } finally {
      client.close();
    }
  });

  test("the start never reached the server: the reattach finds no run (RUN_NOT_FOUND), the SDK starts it again", async () => {
    const client = createForgeClient({ address: proxy.address });
    try {
      const calls = newCalls();
      const wf = weatherWorkflow("ts_reattach_lost_start", calls);
      proxy.withhold = "requests";
      const stream = client.start(wf, "Weather in Paris and Oslo?");
      const events: ForgeEvent[] = [];
      const outcome = drain(stream, events);
      await until("the client's connection", () => proxy.accepted >= 1);
      await sleep(500);
      assert.equal(startsLogged(journaled, "ts_reattach_lost_start"), 0, "the start got through");
      assert.equal(events.length, 0);
      proxy.cut();
      const result = completed(await outcome, journaled);
      assert.equal(result.terminalTool, "report");
      assertNoDuplicates(events);
      assertRanOnce(calls, events);
      assert.equal(stream.reattaches, 0);
      assert.ok(!events.some((e) => e.type === "reattached"));
      assert.equal(startsLogged(journaled, "ts_reattach_lost_start"), 1);
    } finally {
      client.close();
    }
  });

  test("cancel() while no stream is open: it goes out on the stream that reattaches, the server cancels the run", async () => {
    const client = createForgeClient({ address: proxy.address });
    try {
      let stream: RunStream | undefined;
      let cut = false;
      const wf = weatherWorkflow("ts_reattach_cancel", newCalls(), async (_city, signal) => {
        if (cut) {
          return;
        }
        cut = true;
        proxy.refuse = true;
        proxy.cut();
        await sleep(100);
        stream?.cancel("stop");
        proxy.refuse = false;
        await within(abortedSignal(signal), "the handler's signal to abort");
      });
      stream = client.start(wf, "Weather?");
      const err = await drain(stream, []);
      assert.ok(err instanceof WorkflowCancelledError, String(err));
      // The server's answer, not the SDK dropping a run whose cancel went unconfirmed.
      assert.doesNotMatch(err.message, /did not confirm/);
      assert.equal(stream.reattaches, 1, "the cancel went out on a reattached stream");
      await until("the server to cancel the run", () =>
        journaled.log().includes(`run ${stream?.runId ?? "?"} failed: CANCELLED`),
      );
    } finally {
      proxy.refuse = false;
      client.close();
    }
  });
});

describe("sessions", () => {
  test("runs with one sessionId continue one conversation; a run without it starts afresh", async () => {
    const client = createForgeClient({ address: journaled.address });
    try {
      const wf = weatherWorkflow("ts_session", newCalls());
      const session = `ts-session-${process.pid}-${Date.now()}`;
      await client.run(wf, "Weather in Paris and Oslo?", { sessionId: session });
      const second = await client.run(wf, "And again?", { sessionId: session });
      const alone = await client.run(wf, "Once more?");
      const users = (r: RunResult): string[] => r.transcript.flatMap((m) => (m.role === "user" ? [m.content] : []));
      assert.deepEqual(users(second), ["Weather in Paris and Oslo?", "And again?"]);
      assert.deepEqual(users(alone), ["Once more?"]);
    } finally {
      client.close();
    }
  });
});

describe("reattach after a server restart", () => {
  test("SIGKILL mid-run, restart on the same port with the same journal and replica id: the run completes", async () => {
    const port = await freePort();
    const args = [
      ...scripted(),
      "--journal",
      `sqlite:///${join(dir, "restart.db")}`,
      "--reattach-grace",
      "30",
      "--replica-id",
      "ts-reattach-replica",
    ];
    let server = await startForgeServer(args, 60_000, {}, port);
    let restarted: Promise<RunningServer> | undefined;
    const client = createForgeClient({ address: server.address });
    try {
      const calls = newCalls();
      const wf = weatherWorkflow("ts_reattach_restart", calls, (city) => {
        if (city === "Paris" && restarted === undefined) {
          const killed = server;
          const exited = new Promise((resolve) => killed.process.once("exit", resolve));
          killed.kill();
          restarted = exited.then(() => startForgeServer(args, 60_000, {}, port));
          restarted.catch(() => undefined);
          // Returns at once: the result waits for a stream that reattached.
        }
      });
      const stream = client.start(wf, "Weather in Paris and Oslo?");
      const events: ForgeEvent[] = [];
      const outcome = await drain(stream, events);
      if (restarted !== undefined) server = await restarted;
      const result = completed(outcome, server);
      assert.equal(result.terminalTool, "report");
      assert.ok(restarted !== undefined, "the server was not restarted");
      assert.ok(stream.reattaches >= 1, `reattached ${stream.reattaches} times`);
      assertNoDuplicates(events);
      assertRanOnce(calls, events);
      const contents = result.transcript.map((m) => m.content);
      assert.equal(contents.filter((c) => c === "sunny in Paris").length, 1, JSON.stringify(contents));
    } finally {
      client.close();
      if (restarted !== undefined) server = await restarted.catch(() => server);
      await server.stop();
    }
  });
});

describe("without a journal", () => {
  test("a broken stream raises ConnectionLostError (no reattach) and aborts the handler", async () => {
    const proxy = await startProxy(unjournaled.address);
    const client = createForgeClient({ address: proxy.address });
    try {
      const calls = newCalls();
      let signalAborted: Promise<void> | undefined;
      const wf = weatherWorkflow("ts_reattach_no_journal", calls, async (_city, signal) => {
        signalAborted = abortedSignal(signal);
        proxy.cut();
        await sleep(10_000, undefined, { signal }).catch(() => undefined);
      });
      const events: ForgeEvent[] = [];
      const err = await drain(client.start(wf, "Weather?"), events);
      assert.ok(err instanceof ConnectionLostError, String(err));
      assert.equal(err.streamBreak, undefined, "the SDK tried to reattach");
      await within(signalAborted, "the handler's signal to abort");
      const start = events[0];
      assert.ok(start?.type === "run_started" && start.reattachGraceS === 0, JSON.stringify(start));
      assert.equal(proxy.accepted, 1, "no reattach was tried");
    } finally {
      client.close();
      await proxy.close();
    }
  });
});
