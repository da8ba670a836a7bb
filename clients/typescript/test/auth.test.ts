/**
 * Authentication against the real forge-server (scripted backend) started with
 * --auth-token-file (or an unreachable --auth-url): run() and serverInfo() need
 * the `token` option, refusals are RequestRejectedError with the server's
 * ErrorInfo reason, and a token's max_runs caps its open runs. Also how
 * UNAVAILABLE/CANCELLED statuses map: with an ErrorInfo reason a refusal, without
 * one a lost connection.
 */

import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { type Http2Server, createServer as createHttp2Server } from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import {
  ConnectionLostError,
  type ForgeClient,
  type ForgeClientOptions,
  RequestRejectedError,
  createForgeClient,
  workflow,
} from "@forge-sidecar/client";
import { z } from "zod";
import { type RunningServer, freePort, startForgeServer } from "./helpers.js";

const call = (name: string, args: Record<string, unknown>) => ({ tool_calls: [{ name, args }] });
const weatherRun = [call("get_weather", { city: "Paris" }), call("report", { city: "Paris", weather: "sunny" })];

/** The model's turns per workflow name, replayed by the scripted backend. */
const SCRIPTS: Record<string, unknown[]> = {
  ts_auth: weatherRun,
  ts_auth_limit: weatherRun,
  ts_auth_unavailable: weatherRun,
};

const TOKENS = "s3cret name=ci\none max_runs=1\n";

const weatherArgs = z.object({ city: z.string().describe("City name") });
const reportArgs = z.object({ city: z.string(), weather: z.string() });

/** get_weather (required) + report (terminal); get_weather records its calls in `cities`. */
function weatherWorkflow(name: string, cities: string[], wait: () => Promise<void> = async () => {}) {
  return workflow(name, "Look up the weather, then report it.")
    .tool("get_weather", "Get the current weather for a city", weatherArgs, async ({ city }) => {
      cities.push(city);
      await wait();
      return `sunny in ${city}`;
    })
    .tool("report", "Report the weather. Ends the task.", reportArgs, async (a) => ({
      text: `${a.city}: ${a.weather}`,
    }))
    .require("get_weather")
    .terminal("report");
}

const QUESTION = "What's the weather in Paris?";

let dir: string;
let server: RunningServer;
const clients: ForgeClient[] = [];

/** A client of `server` (closed after the tests) with these options. */
function clientWith(options: Omit<ForgeClientOptions, "address"> = {}, address = server.address): ForgeClient {
  const c = createForgeClient({ address, ...options });
  clients.push(c);
  return c;
}

/** The error `promise` rejects with; fails when it resolves. */
async function failure(promise: Promise<unknown>): Promise<unknown> {
  return await promise.then(
    (value) => assert.fail(`should be refused, got ${JSON.stringify(value)}`),
    (e: unknown) => e,
  );
}

function assertRejected(err: unknown, code: string, reason: string, log = ""): void {
  assert.ok(err instanceof RequestRejectedError, `${String(err)}\n${log}`);
  assert.equal(err.code, code, String(err));
  assert.equal(err.reason, reason, String(err));
  assert.ok(!(err instanceof ConnectionLostError));
}

/** Runs `name` with the immediate get_weather and checks the scripted result. */
async function assertRunCompletes(c: ForgeClient, name: string): Promise<void> {
  const cities: string[] = [];
  const result = await c.run(weatherWorkflow(name, cities), QUESTION).catch((err: unknown) => {
    throw new Error(`run ${name}: ${String(err)}\nserver log:\n${server.log()}`);
  });
  assert.equal(result.terminalTool, "report");
  assert.deepEqual(result.value, { text: "Paris: sunny" });
  assert.ok(result.runId.length > 0, "no run id");
  assert.deepEqual(cities, ["Paris"]);
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "forge-ts-auth-"));
  writeFileSync(join(dir, "script.json"), JSON.stringify(SCRIPTS));
  writeFileSync(join(dir, "tokens"), TOKENS);
  server = await startForgeServer(
    ["--backend", "scripted", "--script", join(dir, "script.json"), "--auth-token-file", join(dir, "tokens")],
    60_000,
  );
});

after(async () => {
  for (const c of clients) c.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("authentication", () => {
  test("a run with the right token completes", async () => {
    await assertRunCompletes(clientWith({ token: "s3cret" }), "ts_auth");
  });

  test("a run without a token or with a wrong one is rejected UNAUTHENTICATED", async () => {
    for (const options of [{}, { token: "wrong" }, { token: async () => "wrong" }]) {
      const cities: string[] = [];
      const err = await failure(clientWith(options).run(weatherWorkflow("ts_auth", cities), QUESTION));
      assertRejected(err, "UNAUTHENTICATED", "UNAUTHENTICATED", server.log());
      assert.deepEqual(cities, [], "a tool ran in a rejected run");
    }
  });

  test("serverInfo() is rejected UNAUTHENTICATED without the token and answers with it", async () => {
    assertRejected(await failure(clientWith().serverInfo()), "UNAUTHENTICATED", "UNAUTHENTICATED");
    const wrong = await failure(clientWith({ token: "wrong" }).serverInfo());
    assertRejected(wrong, "UNAUTHENTICATED", "UNAUTHENTICATED");
    // A refusal is an answer: waitForReady() does not keep polling.
    const started = Date.now();
    const waited = await failure(clientWith().waitForReady({ timeoutMs: 20_000 }));
    assertRejected(waited, "UNAUTHENTICATED", "UNAUTHENTICATED");
    assert.ok(Date.now() - started < 10_000, "waitForReady() kept retrying a refusal");

    const info = await clientWith({ token: "s3cret" }).serverInfo();
    assert.equal(info.backend, "scripted");
    assert.ok(info.version.length > 0, "no server version");
  });

  test("a token at its max_runs is rejected TOKEN_RUN_LIMIT until its open run ends", async () => {
    const one = clientWith({ token: "one" });
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let entered!: () => void;
    const blocked = new Promise<void>((resolve) => {
      entered = resolve;
    });
    const firstCities: string[] = [];
    const first = one.run(
      weatherWorkflow("ts_auth_limit", firstCities, async () => {
        entered();
        await released;
      }),
      QUESTION,
    );
    try {
      const settled = first.then(
        () => "ended",
        (e: unknown) => `failed: ${String(e)}`,
      );
      const state = await Promise.race([
        blocked.then(() => "blocked"),
        settled,
        sleep(30_000, "timed out", { ref: false }),
      ]);
      assert.equal(state, "blocked", `the first run never blocked in get_weather\n${server.log()}`);

      // The first run is open: a second with the same token is refused before
      // its tools run (its get_weather would return at once).
      const secondCities: string[] = [];
      const err = await failure(one.run(weatherWorkflow("ts_auth_limit", secondCities), QUESTION));
      assertRejected(err, "RESOURCE_EXHAUSTED", "TOKEN_RUN_LIMIT", server.log());
      assert.deepEqual(secondCities, [], "a tool ran in the rejected run");

      // The limit is the token's: another token still runs.
      await assertRunCompletes(clientWith({ token: "s3cret" }), "ts_auth");
    } finally {
      release();
    }
    const result = await first;
    assert.equal(result.terminalTool, "report");
    assert.deepEqual(result.value, { text: "Paris: sunny" });
    assert.deepEqual(firstCities, ["Paris"]);

    // Once the first run has ended the token runs again. The server releases
    // the run when its stream closes, just after run_completed.
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        await assertRunCompletes(one, "ts_auth_limit");
        break;
      } catch (err) {
        if (!String(err).includes("TOKEN_RUN_LIMIT") || Date.now() > deadline) throw err;
        await sleep(100);
      }
    }
  });

  test("an unreachable verifier: RequestRejectedError UNAVAILABLE AUTH_UNAVAILABLE, not ConnectionLost", async () => {
    // --auth-url at a port nothing listens on.
    const port = await freePort();
    const own = await startForgeServer(
      [
        "--backend",
        "scripted",
        "--script",
        join(dir, "script.json"),
        "--auth-url",
        `http://127.0.0.1:${port}/verify`,
      ],
      60_000,
    );
    try {
      const c = clientWith({ token: "s3cret" }, own.address);
      assertRejected(await failure(c.serverInfo()), "UNAVAILABLE", "AUTH_UNAVAILABLE", own.log());
      const cities: string[] = [];
      const err = await failure(c.run(weatherWorkflow("ts_auth_unavailable", cities), QUESTION));
      assertRejected(err, "UNAVAILABLE", "AUTH_UNAVAILABLE", own.log());
      assert.deepEqual(cities, [], "a tool ran in a rejected run");
    } finally {
      await own.stop();
    }
  });
});

// ── UNAVAILABLE / CANCELLED with and without an ErrorInfo reason ────────────

/** Protobuf wire encoding, enough for a google.rpc.Status. */
function varint(n: number): Buffer {
  const bytes: number[] = [];
  while (n > 0x7f) {
    bytes.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  bytes.push(n);
  return Buffer.from(bytes);
}

function lengthDelimited(field: number, value: Buffer | string): Buffer {
  const bytes = typeof value === "string" ? Buffer.from(value) : value;
  return Buffer.concat([varint((field << 3) | 2), varint(bytes.length), bytes]);
}

/** google.protobuf.Any of `type` ("google.rpc.ErrorInfo") holding `value`. */
function any(type: string, value: Buffer): Buffer {
  return Buffer.concat([lengthDelimited(1, `type.googleapis.com/${type}`), lengthDelimited(2, value)]);
}

/** google.rpc.Status{code, message, details}. */
function statusBin(code: number, message: string, details: Buffer[]): string {
  const parts = [varint(1 << 3), varint(code), lengthDelimited(2, message)];
  for (const d of details) parts.push(lengthDelimited(3, d));
  return Buffer.concat(parts).toString("base64");
}

/** google.rpc.ErrorInfo{reason, domain: "forge.v1"}. */
const errorInfo = (reason: string) =>
  any("google.rpc.ErrorInfo", Buffer.concat([lengthDelimited(1, reason), lengthDelimited(2, "forge.v1")]));

describe("authentication: UNAVAILABLE and CANCELLED with and without a reason", () => {
  /** A gRPC server answering every call with `grpc-status: code` and `details` (trailers-only). */
  async function refusing(code: number, details: Buffer[] | undefined) {
    const h2: Http2Server = createHttp2Server((_req, res) => {
      const headers: Record<string, string> = {
        "content-type": "application/grpc",
        "grpc-status": String(code),
        "grpc-message": "refused",
      };
      if (details !== undefined) {
        headers["grpc-status-details-bin"] = statusBin(code, "refused", details);
      }
      res.writeHead(200, headers);
      res.end();
    });
    await new Promise<void>((resolve) => h2.listen(0, "127.0.0.1", resolve));
    const { port } = h2.address() as { port: number };
    return { address: `127.0.0.1:${port}`, close: () => new Promise((resolve) => h2.close(resolve)) };
  }

  const UNAVAILABLE = 14;
  const CANCELLED = 1;
  const retryInfo = any("google.rpc.RetryInfo", Buffer.alloc(0));
  // [name, grpc-status, details (undefined: no grpc-status-details-bin), reason ("": ConnectionLostError)]
  const cases: [string, number, Buffer[] | undefined, string][] = [
    ["UNAVAILABLE AUTH_UNAVAILABLE", UNAVAILABLE, [errorInfo("AUTH_UNAVAILABLE")], "AUTH_UNAVAILABLE"],
    ["UNAVAILABLE SHUTTING_DOWN", UNAVAILABLE, [errorInfo("SHUTTING_DOWN")], "SHUTTING_DOWN"],
    ["CANCELLED SHUTTING_DOWN", CANCELLED, [errorInfo("SHUTTING_DOWN")], "SHUTTING_DOWN"],
    ["UNAVAILABLE without details", UNAVAILABLE, undefined, ""],
    ["CANCELLED without details", CANCELLED, undefined, ""],
    ["UNAVAILABLE without an ErrorInfo", UNAVAILABLE, [retryInfo], ""],
    ["UNAVAILABLE with an ErrorInfo without a reason", UNAVAILABLE, [errorInfo("")], ""],
  ];
  for (const [name, code, details, reason] of cases) {
    const want = reason === "" ? "ConnectionLostError" : `RequestRejectedError ${reason}`;
    test(`${name}: ${want}`, async () => {
      const fake = await refusing(code, details);
      // A run that breaks before run_started without a reason is retried
      // (reattach by the client's run id); a short deadline keeps this quick,
      // and the error the SDK gives up with must map the same way.
      const c = createForgeClient({ address: fake.address, token: "t", reattachDeadlineMs: 300 });
      try {
        const cities: string[] = [];
        for (const err of [
          await failure(c.serverInfo()),
          await failure(c.run(weatherWorkflow("ts_auth_mapping", cities), QUESTION)),
        ]) {
          const codeName = code === UNAVAILABLE ? "UNAVAILABLE" : "CANCELLED";
          if (reason === "") {
            assert.ok(err instanceof ConnectionLostError, String(err));
            assert.equal(err.code, codeName);
            assert.ok(!(err instanceof RequestRejectedError));
          } else {
            assertRejected(err, codeName, reason);
          }
        }
      } finally {
        c.close();
        await fake.close();
      }
    });
  }
});
